"""Work that would stall every player's frames is kept off the event loop
or cut into short steps (issue 34): a long game's resume, the leaderboard,
``stats`` and the SQLite reads. Speed itself is shown by
benchmarks/stalls.py; these tests check the structure that bounds it."""

from __future__ import annotations

import asyncio
import random
from typing import List, Optional

from ansi2048 import __version__
from ansi2048.game.engine import Direction, Game
from ansi2048.records.recording import format_header
from ansi2048.serve.keeping import GuestKeeping, open_game, replay_step
from ansi2048.storage.save_file import SaveFile

from .databases import run

_KEYS = {Direction.UP: "w", Direction.LEFT: "a", Direction.DOWN: "s", Direction.RIGHT: "d"}


def played(rows: int, cols: int, moves: int, restarts: bool = False) -> bytes:
    """A recording of ``moves`` real moves (and ``r`` now and then with ``restarts``)."""
    rng = random.Random(1)
    game = Game(rows, cols, 2048, seed=5)
    keys: List[str] = []
    while len(keys) < moves:
        if restarts and len(keys) % 997 == 996:
            game.restart()
            keys.append("r")
            continue
        direction = rng.choice(list(_KEYS))
        if game.move(direction):
            keys.append(_KEYS[direction])
    header = format_header(5, rows, cols, 2048, __version__)
    return (header + "".join(keys)).encode("ascii")


class _Recorded(GuestKeeping):
    """A keeping that holds one recording (a player's game, as the store gives it)."""

    def __init__(self, recording: bytes) -> None:
        self.recording = recording

    async def load(self) -> Optional[bytes]:
        return self.recording


def test_a_long_resume_is_replayed_in_steps_and_equals_the_whole_replay() -> None:
    recording = played(10, 10, 3000)
    whole = SaveFile("", 10, 10, 2048, recording).load()
    steps = SaveFile("", 10, 10, 2048, recording).load_steps(every=100)
    count = 0
    while True:
        try:
            next(steps)
            count += 1
        except StopIteration as done:
            stepped = done.value
            break
    assert count >= 30  # 3,000 moves in steps of 100
    assert whole is not None and stepped is not None
    assert (stepped.game.cells, stepped.game.score, stepped.game.moves) == (
        whole.game.cells,
        whole.game.score,
        whole.game.moves,
    )
    assert stepped.runs == whole.runs and stepped.best_seen == whole.best_seen


def test_resuming_a_long_game_lets_other_sessions_run_between_its_steps() -> None:
    rows = cols = 10
    moves = replay_step(rows, cols) * 20
    recording = played(rows, cols, moves, restarts=True)
    whole = SaveFile("", rows, cols, 2048, recording).load()
    assert whole is not None and whole.restarts_end  # compaction replays the last game again, in steps too

    async def resume_beside_a_bystander() -> int:
        turns = 0
        done = asyncio.Event()

        async def bystander() -> None:
            nonlocal turns
            while not done.is_set():
                turns += 1
                await asyncio.sleep(0)

        other = asyncio.ensure_future(bystander())
        await asyncio.sleep(0)
        started = turns
        session, _, _ = await open_game(_Recorded(recording), rows, cols, 2048, False, lambda: 1, 0.0)
        done.set()
        await other
        assert (session.game.cells, session.game.score) == (whole.game.cells, whole.game.score)
        return turns - started

    # The replay yielded at least once a step (its 20 steps, and the compaction's).
    assert run(resume_beside_a_bystander()) >= 20
