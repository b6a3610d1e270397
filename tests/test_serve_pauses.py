"""Saving paused (issue 26 item 6), one store write at a time: each write a
served game makes (its keys appended, its recording begun, a best, a
finished game's record, the claim's renewal) is made to fail while the test
says so, on each database (tests/databases.py), and in each the player is
told, nothing shown is lost, the write is tried again until it lands, and
the game goes on. Then the edge: a game's keys kept but not its record when
the player leaves; and the operator's lines in the server's log."""

from __future__ import annotations

import asyncio
import io
import sys
import threading
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator, Callable, List, Tuple

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the server is for POSIX hosts (asyncssh, signals)")

asyncssh = pytest.importorskip("asyncssh", reason="the server's tests need ansi2048[serve]", exc_type=ImportError)

from ansi2048.game.engine import Direction, Game  # noqa: E402
from ansi2048.serve.game_parts import Timings  # noqa: E402
from ansi2048.serve.saving import SAID_PAUSED, SAID_RECORD_LATER  # noqa: E402
from ansi2048.serve.store import open_store  # noqa: E402
from ansi2048.serve.store.base import StoreUnavailable  # noqa: E402

from .serve_support import MemoryStore, ServerThread  # noqa: E402
from .test_serve import client_key, connect, kept_keys, on_server, open_terminal, player_of, run  # noqa: E402

BOARD = "4x4-2048"
# What the failing store says: a database's message may carry anything, a
# client's bytes too (here an escape sequence and a line break).
WHY = "disk full \x1b[2J\r\nwhile writing"
WAIT = 20.0  # seconds any one thing may take, under a loaded machine


class Failing:
    """``store`` whose method ``call`` raises StoreUnavailable while ``down``
    (as a full disk or a stopped PostgreSQL does, as the server sees it),
    counting its failures and the calls that landed; all else goes through.
    ``when``: only the calls whose arguments it says yes to fail."""

    def __init__(self, store: Any, call: str, when: Callable[..., bool] = lambda *args: True) -> None:
        self._store = store
        self._call = call
        self._when = when
        self.down = False
        self.failures = 0
        self.landed = 0
        self._changed = threading.Condition()  # the server's loop runs on a thread of its own

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._store, name)
        if name != self._call:
            return method

        async def failing(*args: Any, **kwargs: Any) -> Any:
            if self.down and self._when(*args, **kwargs):
                with self._changed:
                    self.failures += 1
                    self._changed.notify_all()
                raise StoreUnavailable(WHY)
            result = await method(*args, **kwargs)
            with self._changed:
                self.landed += 1
                self._changed.notify_all()
            return result

        return failing

    async def until(self, wanted: Callable[[Failing], bool]) -> None:
        """Until ``wanted(self)`` (bounded: fails after WAIT seconds)."""

        def wait() -> bool:
            with self._changed:
                return self._changed.wait_for(lambda: wanted(self), WAIT)

        assert await asyncio.to_thread(wait), f"{self._call}: {self.failures} failures, {self.landed} landed"


def serving(
    tmp_path: Path, store_url: str, call: str, log: Any = None, when: Callable[..., bool] = lambda *args: True
) -> Tuple[ServerThread, Failing]:
    store = Failing(open_store(store_url, str(tmp_path)), call, when)
    return ServerThread(tmp_path, store, seeds=[7, 8], log=log), store


@asynccontextmanager
async def playing(served: ServerThread, key: Any, board: bool = True) -> AsyncIterator[Tuple[Any, Any]]:
    """A player's game on ``served``, its terminal, once it shows the board
    (not ``board``: at once); on leaving, q (unless it ended already) and its
    end, with the channel closed."""
    async with await connect(served.port, key) as conn:
        chan, terminal = await open_terminal(conn, "play --no-animation")
        if board:
            await terminal.shows("Score", WAIT)
        yield chan, terminal
        if not terminal.closed.is_set():
            chan.write(b"q")
        await terminal.closed.wait()


def scoring_keys(seed: int) -> bytes:
    """Keys of the game of ``seed`` up to its first move that scores."""
    game, keys = Game(4, 4, 2048, seed), b""
    for key, direction in [(b"a", Direction.LEFT), (b"d", Direction.RIGHT), (b"w", Direction.UP)] * 20:
        if game.move(direction):
            keys += key
            if game.score:
                return keys
    raise AssertionError("no scoring move found")


def paused_then_resumed(store: Failing, terminal: Any) -> Any:
    """The player sees the notice; the write fails again (it is retried);
    the store comes back; the notice goes by itself."""

    async def scenario() -> None:
        await terminal.shows(SAID_PAUSED, WAIT)
        await store.until(lambda failing: failing.failures >= 2)
        store.down = False
        await terminal.wait_for(lambda t: SAID_PAUSED not in t.text(), WAIT)

    return scenario()


async def opening_paused_then_resumed(store: Failing, terminal: Any) -> None:
    """The notice, and no board before the game's recording is kept; the
    write retried; the store back; the board, without the notice."""
    await terminal.shows(SAID_PAUSED, WAIT)
    assert "Score" not in terminal.text()
    await store.until(lambda failing: failing.failures >= 2)
    store.down = False
    await terminal.shows("Score", WAIT)
    assert SAID_PAUSED not in terminal.text()


async def record_paused(chan: Any, terminal: Any, store: Failing) -> None:
    """A move shown; the store down for records; ``r``: a new game, shown
    (its key is kept), and the game left for the history, which pauses."""
    chan.write(b"a")
    await terminal.shows("Moves 1", WAIT)
    store.down = True
    chan.write(b"r")
    await terminal.shows(SAID_PAUSED, WAIT)


# -- each write, on each database ------------------------------------------------


def test_the_keys_appended_pause_and_land(tmp_path: Path, store_url: str) -> None:
    served, store = serving(tmp_path, store_url, "append")
    key = client_key()
    with served:

        async def scenario() -> None:
            async with playing(served, key) as (chan, terminal):
                store.down = True
                chan.write(b"a")  # seed 7: a move that changes the board
                await terminal.shows(SAID_PAUSED, WAIT)
                assert "Moves 1" not in terminal.text()  # not shown before it is kept
                await paused_then_resumed(store, terminal)
                await terminal.shows("Moves 1", WAIT)  # the held frame, once the keys are kept
                chan.write(b"d")  # the game goes on
                await terminal.shows("Moves 2", WAIT)
            assert await kept_keys(served, key) == b"ad"

        run(scenario())


def test_the_recording_begun_pauses_before_the_first_frame_and_lands(tmp_path: Path, store_url: str) -> None:
    served, store = serving(tmp_path, store_url, "rewrite")
    key = client_key()
    store.down = True  # a new player's first game: its recording is begun before its board shows
    with served:

        async def scenario() -> None:
            async with playing(served, key, board=False) as (chan, terminal):
                await opening_paused_then_resumed(store, terminal)
                chan.write(b"a")
                await terminal.shows("Moves 1", WAIT)
            assert await kept_keys(served, key) == b"a"  # the recording begun: header, then the key

        run(scenario())


def test_a_best_paused_lands_and_play_goes_on(tmp_path: Path, store_url: str) -> None:
    served, store = serving(tmp_path, store_url, "record_best")
    key, keys = client_key(), scoring_keys(7)
    expected = Game(4, 4, 2048, 7)
    for typed in keys:
        expected.move({b"a": Direction.LEFT, b"d": Direction.RIGHT, b"w": Direction.UP}[bytes([typed])])
    with served:

        async def scenario() -> None:
            async with playing(served, key) as (chan, terminal):
                # A best is written at most once a second (performer.BEST_WRITE_INTERVAL):
                # past that, the scoring move's best is written with its step.
                await asyncio.sleep(1.1)
                store.down = True
                chan.write(keys)
                await paused_then_resumed(store, terminal)
                await terminal.shows(f"Moves {len(keys)}", WAIT)
            player = await player_of(served, key)
            assert await on_server(served, served.store.best(player.id, BOARD)) == expected.score > 0  # type: ignore[attr-defined]

        run(scenario())


def test_a_finished_games_record_paused_lands_and_play_goes_on(tmp_path: Path, store_url: str) -> None:
    served, store = serving(tmp_path, store_url, "add_to_history")
    key = client_key()
    with served:

        async def scenario() -> None:
            async with playing(served, key) as (chan, terminal):
                await record_paused(chan, terminal, store)
                await paused_then_resumed(store, terminal)
                chan.write(b"d")
                await terminal.shows("Moves 1", WAIT)  # the new game goes on
            player = await player_of(served, key)
            history = await on_server(served, served.store.history(player.id))  # type: ignore[attr-defined]
            assert [(kept.record.seed, kept.record.moves) for kept in history] == [(7, 1)]
            assert await kept_keys(served, key) == b"ard"

        run(scenario())


def test_the_claims_renewal_paused_lands_and_play_goes_on(
    tmp_path: Path, store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Renewed often, so the test need not wait 10 s.
    monkeypatch.setattr("ansi2048.serve.game.DEFAULT_TIMINGS", Timings(renew=0.2))
    served, store = serving(tmp_path, store_url, "renew")
    key = client_key()
    with served:

        async def scenario() -> None:
            async with playing(served, key) as (chan, terminal):
                store.down = True
                await paused_then_resumed(store, terminal)
                chan.write(b"a")
                await terminal.shows("Moves 1", WAIT)
            assert await kept_keys(served, key) == b"a"

        run(scenario())


# -- the edge: the keys kept, the record not, and the player leaves ----------------


def test_leaving_while_a_record_is_paused_keeps_what_was_shown_and_the_record_lands_later(
    tmp_path: Path, store_url: str
) -> None:
    log = io.StringIO()
    served, store = serving(tmp_path, store_url, "add_to_history", log)
    key = client_key()
    with served:

        async def scenario() -> None:
            async with playing(served, key) as (chan, terminal):
                await record_paused(chan, terminal, store)
                # The new game is shown (its key is kept): the notice is on its frame.
                assert "Moves 1" not in terminal.text()
            assert SAID_RECORD_LATER in terminal.text()
            # Stored exactly what was shown: the move and the new game, no more, no less.
            assert await kept_keys(served, key) == b"ar"
            player = await player_of(served, key)
            assert await on_server(served, served.store.history(player.id)) == []  # type: ignore[attr-defined]
            store.down = False  # the store is back: the server lands the record by itself
            await store.until(lambda failing: failing.landed >= 1)
            history = await on_server(served, served.store.history(player.id))  # type: ignore[attr-defined]
            assert [(kept.record.seed, kept.record.moves) for kept in history] == [(7, 1)]

        run(scenario())
    lines = [line for line in log.getvalue().splitlines() if " saving " in line]
    assert len(lines) == 2 and "saving paused" in lines[0] and "(1 game paused)" in lines[1], lines


def test_quitting_while_the_store_is_away_ends_at_once_and_the_games_bests_land_later(
    tmp_path: Path, store_url: str
) -> None:
    served, store = serving(tmp_path, store_url, "record_best")
    key = client_key()
    with served:

        async def scenario() -> None:
            async with playing(served, key) as (chan, terminal):
                chan.write(b"a")
                await terminal.shows("Moves 1", WAIT)
                store.down = True  # q writes the game's best without undo or AI: it fails
            # No pause after q: the player leaves at once, told.
            assert SAID_RECORD_LATER in terminal.text() and SAID_PAUSED not in terminal.text()
            assert store.failures >= 1 and store.landed == 0
            assert await kept_keys(served, key) == b"a"
            store.down = False
            await store.until(lambda failing: failing.landed >= 1)  # the server wrote it by itself

        run(scenario())


def test_a_record_still_paused_when_the_server_stops_is_logged_as_not_kept(tmp_path: Path) -> None:
    log = io.StringIO()
    store = Failing(MemoryStore(), "add_to_history")
    served = ServerThread(tmp_path, store, seeds=[7], log=log)
    key = client_key()

    async def scenario() -> None:
        async with playing(served, key) as (chan, terminal):
            await record_paused(chan, terminal, store)
        await asyncio.to_thread(served.stop)

    run(scenario())
    lines = [line for line in log.getvalue().splitlines() if " saving " in line]
    assert len(lines) == 2 and "saving paused" in lines[0], lines
    assert "saving stopped: 1 writes of finished games not kept" in lines[1], lines


# -- the operator's lines ----------------------------------------------------------


def test_an_outage_is_a_line_when_the_first_game_pauses_and_one_when_the_last_resumes() -> None:
    from ansi2048.serve.pauses import SavingPauses

    lines: List[str] = []
    clock = [100.0]
    pauses = SavingPauses(lambda line, *event, **fields: lines.append(line), lambda: clock[0])
    for _ in range(3):
        pauses.paused_by(StoreUnavailable("the server closed the connection\n\x07unexpectedly"))
    clock[0] += 12.34
    for _ in range(3):
        pauses.resumed()
    pauses.paused_by(StoreUnavailable(""))  # another outage, later
    pauses.resumed()
    assert lines == [
        "saving paused: the store is unavailable: the server closed the connection ?unexpectedly",
        "saving resumed: the store is back after 12.3 s (3 games paused)",
        "saving paused: the store is unavailable: no reason given",
        "saving resumed: the store is back after 0.0 s (1 game paused)",
    ]


def test_writes_handed_over_are_tried_until_they_land_and_one_refused_for_good_is_said() -> None:
    from ansi2048.serve.pauses import SavingPauses
    from ansi2048.serve.store.base import StoreError

    lines: List[str] = []
    landed: List[str] = []
    tries = {"record": 0}

    async def record() -> None:
        tries["record"] += 1
        if tries["record"] < 3:
            raise StoreUnavailable("away")
        landed.append("record")

    async def refused() -> None:
        raise StoreError("value too long for type character varying(40)")

    async def best() -> None:
        landed.append("best")

    async def scenario() -> None:
        pauses = SavingPauses(lambda line, *event, **fields: lines.append(line), asyncio.get_running_loop().time)
        pauses.keep_trying([record, refused, best], StoreUnavailable("away"), game=True)
        while pauses.paused:  # bounded by run()'s timeout
            await asyncio.sleep(0.05)

    run(scenario())
    assert tries["record"] == 3 and landed == ["record", "best"]
    said = lines  # undated: the server's log dates them (GameServer.log)
    assert len(said) == 3, lines
    assert said[0] == "saving paused: the store is unavailable: away"
    assert said[1] == "saving: a finished game's write not kept: value too long for type character varying(40)"
    assert said[2].startswith("saving resumed: the store is back after ") and said[2].endswith("(1 game paused)")


def test_an_outage_under_many_players_is_two_lines_in_the_log_said_printably(tmp_path: Path) -> None:
    log = io.StringIO()
    store = Failing(MemoryStore(), "append")
    players = 5
    with ServerThread(tmp_path, store, seeds=list(range(7, 7 + players)), log=log) as served:

        async def scenario() -> None:
            connections = [await connect(served.port, client_key(), f"p{index}") for index in range(players)]
            try:
                opened: List[Any] = [await open_terminal(conn, "play --no-animation") for conn in connections]
                for _, terminal in opened:
                    await terminal.shows("Score", WAIT)
                store.down = True
                for chan, terminal in opened:
                    chan.write(b"ad")  # one of the two moves, at least
                    await terminal.shows(SAID_PAUSED, WAIT)
                await store.until(lambda failing: failing.failures >= 3 * players)  # each retried, and logged once
                store.down = False
                for chan, terminal in opened:
                    await terminal.wait_for(lambda t: SAID_PAUSED not in t.text(), WAIT)
                    chan.write(b"q")
                    await terminal.closed.wait()
            finally:
                for conn in connections:
                    conn.close()

        run(scenario())
    lines = [line for line in log.getvalue().splitlines() if " saving " in line]
    assert len(lines) == 2, lines
    assert lines[0].endswith("saving paused: the store is unavailable: disk full ?[2J while writing"), lines
    assert "saving resumed: the store is back after " in lines[1] and lines[1].endswith(f"({players} games paused)")
    assert all(" " <= ch <= "~" for line in lines for ch in line)


# -- a game over whose record never landed ---------------------------------------------


def game_over_keys(seed: int) -> bytes:
    """Keys that play the game of ``seed`` to its end (each one moves)."""
    game, keys = Game(4, 4, 2048, seed), b""
    moves = [(b"a", Direction.LEFT), (b"s", Direction.DOWN), (b"d", Direction.RIGHT), (b"w", Direction.UP)]
    while not game.over:
        for key, direction in moves:
            if game.move(direction):
                keys += key
                break
    return keys


def test_a_game_over_whose_record_never_landed_is_kept_when_its_player_comes_back(
    tmp_path: Path, store_url: str
) -> None:
    from ansi2048 import __version__
    from ansi2048.records.recording import format_header

    # What a server killed (or stopped with the store away) between a game's
    # last keys and its record leaves: the keys of a game over, no record.
    keys = game_over_keys(7)
    served, store = serving(tmp_path, store_url, "add_to_history")
    key = client_key()
    with served:

        async def leave_a_game_over() -> int:
            kept = served.store
            player = await kept.player(key.get_fingerprint(), "alice")
            assert await kept.claim(player.id, BOARD, "killed", 30) is None
            await kept.rewrite(player.id, BOARD, "killed", format_header(7, 4, 4, 2048, __version__).encode() + keys)
            await kept.release(player.id, BOARD, "killed")
            return int(player.id)

        async def scenario() -> None:
            player = await on_server(served, leave_a_game_over())
            for _ in range(2):  # the second time, it is not kept again
                async with playing(served, key) as (_, terminal):
                    assert "Moves 0" in terminal.text()  # a new game
                history = await on_server(served, served.store.history(player))  # type: ignore[attr-defined]
                assert [(kept.record.seed, kept.record.keys, kept.record.over) for kept in history] == [
                    (7, keys.decode(), True)
                ]
            assert store.landed == 1

        run(scenario())


def test_a_database_file_moved_away_pauses_saving_until_it_is_back_and_one_replaced_stays_away(
    tmp_path: Path,
) -> None:
    """Issue 39: the server noticed neither a deleted nor a replaced SQLite
    file: it wrote on to the old one and told players their game was kept."""
    log = io.StringIO()
    served = ServerThread(tmp_path, "", seeds=[7], log=log)
    path = tmp_path / "serve.sqlite3"
    key = client_key()
    with served:

        async def scenario() -> None:
            async with playing(served, key) as (chan, terminal):
                chan.write(b"a")
                await terminal.shows("Moves 1", WAIT)
                moved = tmp_path / "elsewhere.sqlite3"
                path.rename(moved)  # deleted, as far as the path is concerned (its -wal, -shm stay: no matter)
                chan.write(b"d")
                await terminal.shows(SAID_PAUSED, WAIT)
                assert "Moves 2" not in terminal.text()
                moved.rename(path)  # back: the same file
                await terminal.wait_for(lambda t: SAID_PAUSED not in t.text(), WAIT)
                await terminal.shows("Moves 2", WAIT)
            assert await kept_keys(served, key) == b"ad"
            copy = tmp_path / "copy.sqlite3"
            copy.write_bytes(path.read_bytes())
            copy.replace(path)  # a restore over it: another file at the path
            with pytest.raises(StoreUnavailable, match="replaced by another file"):
                await on_server(served, served.store.record_best(1, "x", 1))  # type: ignore[attr-defined]

        run(scenario())
    said = [line for line in log.getvalue().splitlines() if " saving " in line]
    assert len(said) == 2 and f"{path} was deleted while the server ran" in said[0], said
