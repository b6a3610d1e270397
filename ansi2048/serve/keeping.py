"""Where a player's game is kept (:class:`Keeping`): a player's in the
store, under the claim their session holds (:class:`StoreKeeping`); a
guest's nowhere (:class:`GuestKeeping`); and the game a session opens from
it (:func:`open_game`), resumed as the local game resumes its save.

A player's game resumes from the snapshot kept with its recording
(:mod:`.snapshot`) when that is of this recording, or of its beginning
(then only the keys after it are replayed): a load, not a replay of every
key (a 10x10 game of 100,000 moves took a second of steps on the event
loop). Otherwise the recording is replayed whole, in steps.
The keeping carries the game's snapshot on as its keys are appended, and
keeps it when the session lets the game go.

Opening a game only reads: the writes it needs (a new game's recording
begun, an old one compacted, a game over's record if it never landed, the
game ``--new`` ended kept) are given to the
game's driver, which does them before the first frame and pauses while the
store cannot take them, as it does for every write of play
(:meth:`~.saving.SavePolicy.saved`)."""

from __future__ import annotations

import asyncio
import time
from contextlib import suppress
from functools import partial
from typing import Callable, List, Optional, Protocol, Tuple, TypeVar

from .. import __version__
from ..game.engine import Game
from ..game.keys import Action
from ..game.session import Played, Session
from ..play.keyboard import resumed_note
from ..records.history import Record, config_key, unaided_key
from ..records.recording import Item, format_header
from ..storage.history_file import utc_timestamp
from ..storage.save_file import Loaded, SaveFile, Steps, saved_bytes
from .pauses import Write
from .snapshot import Snapshot, Tracked, digest, encoded, resumed
from .store.base import ClaimLost, SavedGame, Store, StoreUnavailable

__all__ = ["CLAIM_SECONDS", "GuestKeeping", "Keeping", "Pending", "StoreKeeping", "load_recording", "open_game"]

# A session's claim on its game lasts this long unless renewed (a crashed
# server's games are free again after it), and is renewed at a third of it.
CLAIM_SECONDS = 30.0
# A replay of a recording with no snapshot to start from runs on the event
# loop a step at a time, each step this many cells moved (a move of a 10x10
# board moves 100): a few tenths of a millisecond. Another player's key
# waits behind a step at each turn of the loop it needs (its read, its
# commit, its frame): at 20,000 cells (about a millisecond) a key beside a
# replay of 100,000 moves took up to 37 ms, at 5,000 up to 15 ms, the replay
# a sixth longer (benchmarks/stalls.py). Snapshots are decoded and encoded
# in steps of as many boards.
_REPLAY_STEP_CELLS = 5_000

T = TypeVar("T")

# The player's latest history records a record is looked for before it is
# kept (kept once: see StoreKeeping.add_to_history).
_RECENT_RECORDS = 20


class Keeping(Protocol):
    """Where a game goes: a player's, in the store; a guest's, nowhere."""

    async def load(self) -> Optional[bytes]: ...

    async def load_saved(self) -> Optional[SavedGame]: ...

    def track(self, tracked: Tracked) -> None:
        """Carry ``tracked`` on with what is appended from now, and keep its
        snapshot when the game is let go (:meth:`release`)."""

    async def rewrite(self, recording: bytes) -> None: ...

    async def append(self, items: bytes) -> None: ...

    async def best(self, key: str) -> int: ...

    async def record_best(self, key: str, score: int) -> int: ...

    async def add_to_history(self, record: Record) -> None: ...

    async def renew(self) -> bool:
        """Renew the claim on the game; False if another session has it now."""

    async def release(self) -> None: ...


class GuestKeeping:
    """A guest's game: played, never kept."""

    async def load(self) -> Optional[bytes]:
        return None

    async def load_saved(self) -> Optional[SavedGame]:
        recording = await self.load()
        return None if recording is None else SavedGame(recording)

    def track(self, tracked: Tracked) -> None:
        pass

    async def rewrite(self, recording: bytes) -> None:
        pass

    async def append(self, items: bytes) -> None:
        pass

    async def best(self, key: str) -> int:
        return 0

    async def record_best(self, key: str, score: int) -> int:
        return score

    async def add_to_history(self, record: Record) -> None:
        pass

    async def renew(self) -> bool:
        return True

    async def release(self) -> None:
        pass


class StoreKeeping:
    """A player's game on one board, in the store, under the claim of
    ``holder`` (taken before this is made)."""

    def __init__(self, store: Store, player: int, board: str, holder: str) -> None:
        self._store = store
        self._player = player
        self._board = board
        self._holder = holder
        self._tracked: Optional[Tracked] = None

    async def load(self) -> Optional[bytes]:
        return await self._store.load(self._player, self._board)

    async def load_saved(self) -> Optional[SavedGame]:
        return await self._store.load_saved(self._player, self._board)

    def track(self, tracked: Tracked) -> None:
        self._tracked = tracked

    async def rewrite(self, recording: bytes) -> None:
        await self._store.rewrite(self._player, self._board, self._holder, recording)

    async def append(self, items: bytes) -> None:
        await self._store.append(self._player, self._board, self._holder, items)
        if self._tracked is not None:
            self._tracked.appended(items)

    async def best(self, key: str) -> int:
        return await self._store.best(self._player, key)

    async def record_best(self, key: str, score: int) -> int:
        return await self._store.record_best(self._player, key, score)

    async def add_to_history(self, record: Record) -> None:
        """``record`` into the history, once: the same game (its seed and
        keys) among the latest is not kept again. Its write may be tried
        again by the server after its session ended (pauses.py), and a game
        over is kept on opening in case the server went before it was."""
        latest = await self._store.history(self._player, _RECENT_RECORDS)
        if not any((kept.record.seed, kept.record.keys) == (record.seed, record.keys) for kept in latest):
            await self._store.add_to_history(self._player, record)

    async def renew(self) -> bool:
        return await self._store.renew(self._player, self._board, self._holder, CLAIM_SECONDS)

    async def release(self) -> None:
        """The game's snapshot kept (if it is tracked, and still ours), then the claim let go."""
        tracked, self._tracked = self._tracked, None
        if tracked is not None:
            # Only a shortcut for the next resume: without it, that replays the recording.
            with suppress(ValueError, ClaimLost, StoreUnavailable):
                snapshot = await stepped(tracked.snapshot())
                if snapshot is not None:
                    await self._store.keep_snapshot(self._player, self._board, self._holder, snapshot)
        await self._store.release(self._player, self._board, self._holder)


class Pending:
    """The :class:`~ansi2048.play.performer.PlayStore` the performer writes to:
    it holds what one step gave (the keys, the games that ended, the bests)
    until the driver writes it to the store, asynchronously (:meth:`~.saving.SavePolicy.flush`)."""

    saving = True

    def __init__(self, now: Callable[[], float]) -> None:
        self._now = now
        self.items = bytearray()
        self.records: List[Record] = []
        self.bests: List[int] = []
        self.unaided: List[int] = []
        self._last: Optional[Played] = None

    def append(self, item: Item) -> None:
        self.items += saved_bytes(item)

    def add_to_history(self, played: Played) -> None:
        # A game can end more than once (game over, then r): kept once, as locally.
        if played != self._last:
            self._last = played
            self.records.append(Record.of(played, utc_timestamp(self._now())))

    def record_best(self, score: int) -> Optional[int]:
        self.bests.append(score)
        return None  # the store answers later: the driver feeds BestStored

    def record_unaided(self, score: int) -> None:
        self.unaided.append(score)

    def drop(self) -> None:
        """Forget what is held (the game went to another session: none of it is this one's to write)."""
        self.items.clear()
        self.records, self.bests, self.unaided = [], [], []


async def stepped(steps: Steps[T]) -> T:
    """What ``steps`` gives, the event loop free to run other sessions' work between its steps."""
    while True:
        try:
            next(steps)
        except StopIteration as done:
            result: T = done.value
            return result
        # The interpreter's lock let go for a moment: the store's threads
        # (the commit another player's frame waits for) run now, not only at
        # the interpreter's forced switches (5 ms apart, at every statement).
        time.sleep(0)
        await asyncio.sleep(0)


def replay_step(rows: int, cols: int) -> int:
    """The items a step of a resume replays on this board (:data:`_REPLAY_STEP_CELLS`)."""
    return max(1, _REPLAY_STEP_CELLS // (rows * cols))


async def load_recording(save: SaveFile) -> Optional[Loaded]:
    """``save`` replayed a step at a time (:func:`stepped`); ValueError as :meth:`SaveFile.load`."""
    return await stepped(save.load_steps(replay_step(save.rows, save.cols)))


async def open_game(
    keeping: Keeping, rows: int, cols: int, goal: int, new: bool, random_seed: Callable[[], int], now: float
) -> Tuple[Session, str, List[Write]]:
    """The player's game on this board, resumed from its snapshot or its
    recording (a game over starts a new one, as locally), or new; the note
    that greets it; and the writes that opening it needs, in order, for the
    driver to do before the game's first frame. ``new`` starts a new game as
    the ``r`` key does (``u`` brings the old one back)."""
    key = config_key(rows, cols, goal)
    saved = await keeping.load_saved()
    step = replay_step(rows, cols)
    greeting = ""
    game: Optional[Game] = None
    runs = None
    writes: List[Write] = []
    best_seen = 0
    if saved is not None:
        save = SaveFile("", rows, cols, goal, saved.recording)
        try:
            from_snapshot = await stepped(resumed(saved.recording, saved.snapshot, rows, cols, goal, step))
            # The snapshot of this recording, to carry on; else (none, or of
            # its beginning, or of another recording) one is made of it.
            loaded, whole = from_snapshot if from_snapshot is not None else (None, False)
            snapshot = saved.snapshot if whole else None
            if loaded is None:
                loaded = await load_recording(save)
        except ValueError as error:
            # Not this version's, or damaged: it stays in the store until a
            # new game replaces it, which is said.
            greeting = f"your saved game is unusable ({error}): a new game"
        else:
            assert loaded is not None
            # The best it reached may be in no other place (the server was killed).
            best_seen = loaded.best_seen
            writes.append(partial(keeping.record_best, key, best_seen))
            if loaded.game.over:
                # Its record, in case the server went (stopped with the store
                # away, killed) between its last keys and its record: kept once.
                over = Session(loaded.game, best_seen, loaded.runs).played()
                writes.append(partial(keeping.add_to_history, Record.of(over, utc_timestamp(now))))
                if over.unaided:
                    writes.append(partial(keeping.record_best, unaided_key(key), over.score))
            else:
                recording = saved.recording
                shorter = await stepped(save.compacted_steps(loaded, step)) if loaded.restarts_end else None
                if shorter is not None:
                    # The games before the last restart go, as locally: the
                    # recording does not grow with every game played. (Its
                    # best_seen stays the best those games reached, which
                    # its snapshots carry on: no lower than its replay's.)
                    loaded, recording, snapshot = shorter[0], b"".join(shorter[1]), None
                    writes.append(partial(keeping.rewrite, recording))
                await _track(keeping, recording, loaded, snapshot, (rows, cols, goal))  # before it is played on
                game, runs = loaded.game, loaded.runs
    best = max(best_seen, await keeping.best(key))
    if game is None:
        game = Game(rows, cols, goal, random_seed())
        header = format_header(game.seed, rows, cols, goal, __version__).encode("ascii")
        writes.append(partial(keeping.rewrite, header))
        begun = SaveFile("", rows, cols, goal, header).load()
        assert begun is not None
        await _track(keeping, header, begun, None, (rows, cols, goal))
        return Session(game, best), greeting, writes
    session = Session(game, best, runs)
    if not new:
        return session, resumed_note(game.moves), writes
    ended = session.restart(None).ended
    if ended is not None:
        writes.append(partial(keeping.add_to_history, Record.of(ended, utc_timestamp(now))))
    writes.append(partial(keeping.append, saved_bytes(Action.RESTART)))
    return session, "", writes


async def _track(
    keeping: Keeping, recording: bytes, loaded: Loaded, snapshot: Optional[bytes], board: Tuple[int, int, int]
) -> None:
    """Have ``keeping`` carry the game's snapshot on from ``recording``,
    what it holds once the opening's writes are done: ``loaded`` is its
    state (not played on yet), ``snapshot`` that state encoded if the
    store gave it (else it is encoded here)."""
    rows, cols, goal = board
    step = replay_step(rows, cols)
    kept = snapshot is not None
    if snapshot is None:
        now = Snapshot(rows, cols, goal, len(recording), digest(recording), loaded)
        try:
            snapshot = await stepped(encoded(now, step))
        except ValueError:
            return  # it has none (it ends inside a '#' line): the next resume replays it
    keeping.track(Tracked(snapshot, recording, step, kept))
