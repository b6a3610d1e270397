"""Claims (issue 34, issue 40 item 22): a session that lost its game to
another session never gets it back by renewing, writes nothing more and is
told; a take-over on the same server ends the old session at once. Two
:class:`ServerThread` on one database are two servers (a session of one
learns of a take-over on the other at its next write or renewal), on each
database (tests/databases.py)."""

from __future__ import annotations

import asyncio
import sys
from contextlib import suppress
from dataclasses import replace
from pathlib import Path
from typing import Any, Iterator, Tuple

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the server is for POSIX hosts (asyncssh, signals)")
asyncssh = pytest.importorskip("asyncssh", reason="the server's tests need ansi2048[serve]", exc_type=ImportError)

from ansi2048.records.recording import split_header  # noqa: E402
from ansi2048.serve.daily import daily_board  # noqa: E402
from ansi2048.serve.game_parts import Timings  # noqa: E402
from ansi2048.serve.play_commands import take_over_prompt  # noqa: E402
from ansi2048.serve.saving import SAID_TAKEN_OVER  # noqa: E402

from .serve_support import ServerThread, Terminal  # noqa: E402
from .test_serve import BOARD, client_key, connect, kept_keys, on_server, open_terminal, player_of, run  # noqa: E402
from .test_serve_daily import DAY, NOON, SECRET, Clock, expected  # noqa: E402
from .test_store import opened  # noqa: E402

# A renewal every 0.1 s: a stale session would re-take a released claim at once.
RENEW_OFTEN = 0.1


@pytest.fixture
def two_servers(
    tmp_path: Path, store_url: str, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Tuple[ServerThread, ServerThread]]:
    """Two servers on one database, the day's secret and clock set on both,
    renewing claims every RENEW_OFTEN seconds."""
    monkeypatch.setattr("ansi2048.serve.game.DEFAULT_TIMINGS", Timings(renew=RENEW_OFTEN))
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    clock = Clock(NOON)
    with ServerThread(tmp_path / "a", store_url) as first, ServerThread(tmp_path / "b", store_url) as second:
        for server in (first, second):
            server.server.context = replace(server.server.context, daily_secret=SECRET, now=clock)
        yield first, second


# -- the store ------------------------------------------------------------------------


def test_renewal_extends_only_a_claim_still_held(store_url: str, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with opened(store_url, tmp_path) as store:
            player = (await store.player("SHA256:r", "rae")).id
            assert await store.claim(player, BOARD, "a", ttl=60) is None
            assert await store.renew(player, BOARD, "a", ttl=60)
            assert await store.claim(player, BOARD, "b", ttl=60, take_over=True) is None
            assert not await store.renew(player, BOARD, "a", ttl=60)  # taken over: not taken back
            claim = await store.claim(player, BOARD, "c", ttl=60)
            assert claim is not None and claim.holder == "b"
            await store.release(player, BOARD, "b")
            assert not await store.renew(player, BOARD, "a", ttl=60)  # free: still not a's
            assert not await store.renew(player, BOARD, "b", ttl=60)  # released: not b's either
            assert not await store.renew(player, "5x5-2048", "a", ttl=60)  # no game at all
            assert await store.claim(player, BOARD, "c", ttl=60) is None  # nobody re-took it
            # A claim past its time that nobody took is still its holder's.
            assert await store.claim(player, "6x6-2048", "d", ttl=0.05) is None
            await asyncio.sleep(0.1)
            assert await store.renew(player, "6x6-2048", "d", ttl=60)
            held = await store.claim(player, "6x6-2048", "e", ttl=60)
            assert held is not None and held.holder == "d"

    run(scenario())


# -- over SSH --------------------------------------------------------------------------


async def taking_over(conn: Any, command: str, shown: str) -> Tuple[Any, Terminal]:
    """``command`` opened on ``conn``, its game taken over if the server asks
    (two servers in one process: one may take the other's holder for a
    killed server's, and then not ask), until ``shown`` is."""
    chan, terminal = await open_terminal(conn, command)
    await terminal.wait_for(lambda screen: shown in screen.text() or "any other key" in screen.text())
    if "any other key" in terminal.text():
        chan.write(b"y")
        await terminal.shows(shown)
    return chan, terminal


def test_a_stale_ranked_session_never_re_takes_the_game_and_the_entry_stays_verified(
    two_servers: Tuple[ServerThread, ServerThread],
) -> None:
    # The scenario: A plays daily; B (the same key) takes it over on
    # another server, plays and ends it with r r; A's renewals must not
    # re-take the released claim, A's next key is not kept, and the entry
    # stays finished with B's score (not mismatch).
    first, second = two_servers
    key = client_key()

    async def scenario() -> None:
        async with await connect(first.server.port, key) as a_conn, await connect(second.server.port, key) as b_conn:
            a, a_terminal = await open_terminal(a_conn, "daily")
            await a_terminal.shows("Score")
            a.write(b"w")
            await a_terminal.shows("Moves 1")
            b, b_terminal = await taking_over(b_conn, "daily", "Moves 1")
            b.write(b"a")
            await b_terminal.shows("Moves 2")
            b.write(b"r")
            await b_terminal.shows("r again ends it")
            b.write(b"r")
            await b_terminal.closed.wait()
            assert "your ranked game is over" in b_terminal.text()
            await asyncio.sleep(RENEW_OFTEN * 5)  # several renewals of A's
            with suppress(BrokenPipeError):  # A may be gone already (it should be)
                a.write(b"s")  # played on A's screen (old code) or not at all: never kept
            await a_terminal.closed.wait()
            assert SAID_TAKEN_OVER in a_terminal.text()
        player = await player_of(second, key)
        entry = await on_server(second, second.store.daily_entry(DAY, player.id))  # type: ignore[attr-defined]
        score, moves, _ = expected("wa")
        assert (entry.status, entry.score, entry.moves) == ("finished", score, moves)
        assert split_header(entry.recording)[1] == b"wa"
        board = daily_board(DAY)
        recording = await on_server(second, second.store.load(player.id, board))  # type: ignore[attr-defined]
        assert split_header(recording)[1] == b"wa"

    run(scenario())


def test_a_stale_sessions_keys_never_land_on_the_new_sessions_game(
    two_servers: Tuple[ServerThread, ServerThread],
) -> None:
    first, second = two_servers
    key = client_key()

    async def scenario() -> None:
        async with await connect(first.server.port, key) as a_conn:
            a, a_terminal = await open_terminal(a_conn, "play --no-animation")
            await a_terminal.shows("Score")
            async with await connect(second.server.port, key) as b_conn:
                b, b_terminal = await taking_over(b_conn, "play --no-animation", "Score")
                b.write(b"q")  # B leaves: the claim is free
                await b_terminal.closed.wait()
            await asyncio.sleep(RENEW_OFTEN * 5)  # several renewals of A's
            with suppress(BrokenPipeError):  # A may be gone already (it should be)
                for typed in b"wasd":
                    a.write(bytes([typed]))
            await a_terminal.closed.wait()
            assert SAID_TAKEN_OVER in a_terminal.text()
        assert await kept_keys(second, key) == b""

    run(scenario())


def test_a_take_over_ends_the_other_session_on_the_same_server_at_once(
    tmp_path: Path, store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No renewal comes during the test, and A types nothing: only the take-over can end A.
    monkeypatch.setattr("ansi2048.serve.game.DEFAULT_TIMINGS", Timings(renew=3600.0))
    key = client_key()
    with ServerThread(tmp_path, store_url) as served:

        async def scenario() -> None:
            async with await connect(served.port, key) as a_conn, await connect(served.port, key) as b_conn:
                a, a_terminal = await open_terminal(a_conn, "play --no-animation")
                await a_terminal.shows("Score")
                a.write(b"w")
                await a_terminal.wait_for(lambda shown: "Moves 1" in shown.text() or "can't move" in shown.text())
                kept = await kept_keys(served, key)
                b, b_terminal = await open_terminal(b_conn, "play --no-animation")
                await b_terminal.shows(take_over_prompt(80)[0])
                b.write(b"y")
                await a_terminal.closed.wait()
                assert SAID_TAKEN_OVER in a_terminal.text()
                await b_terminal.shows("Score")
                b.write(b"q")
                await b_terminal.closed.wait()
            assert await kept_keys(served, key) == kept

        run(scenario())


def test_a_player_back_at_once_after_a_dropped_connection_resumes_without_being_asked(
    tmp_path: Path, store_url: str
) -> None:
    # The session the dropped connection leaves still writes as the player
    # comes back (its last write slowed here to a second): that is no
    # "other session" to take the game from. The player waits for it and
    # resumes every move they saw (a CI run asked them instead).
    key = client_key()
    with ServerThread(tmp_path, store_url) as served:
        store = served.store
        release = store.release  # type: ignore[attr-defined]

        async def slow_release(*args: Any) -> None:
            await asyncio.sleep(1.0)
            await release(*args)

        store.release = slow_release  # type: ignore[attr-defined]

        async def scenario() -> None:
            a_conn = await connect(served.port, key)
            a, a_terminal = await open_terminal(a_conn, "play --no-animation")
            await a_terminal.shows("Score")
            a.write(b"wasd")
            await a_terminal.wait_for(lambda shown: "Moves 4" in shown.text() or "can't move" in shown.text())
            kept = await kept_keys(served, key)
            a_conn.abort()  # no goodbye
            async with await connect(served.port, key) as b_conn:
                b, b_terminal = await open_terminal(b_conn, "play --no-animation")
                await b_terminal.wait_for(
                    lambda shown: "resumed your game" in shown.text() or "any other key" in shown.text()
                )
                assert "resumed your game" in b_terminal.text()
                b.write(b"q")
                await b_terminal.closed.wait()
            assert await kept_keys(served, key) == kept

        run(scenario())


def test_a_take_over_ends_only_the_session_holding_that_claim() -> None:
    # The registry of running sessions (serve/context.py): who holds which
    # claim, told apart from another server's and a killed one's.
    from ansi2048.serve.context import Sessions
    from ansi2048.serve.link import Ended

    class Running:
        def __init__(self) -> None:
            self.holders: set = set()  # type: ignore[type-arg]
            self.incoming: asyncio.Queue[Any] = asyncio.Queue()

    async def scenario() -> None:
        sessions = Sessions()
        first, second = Running(), Running()
        for session in (first, second):
            sessions.started(session)  # type: ignore[arg-type]
            session.holders.add(sessions.holder())
        assert len(first.holders | second.holders) == 2  # each claim its own name
        [held] = first.holders
        sessions.taken_over(held, SAID_TAKEN_OVER)
        assert first.incoming.get_nowait() == Ended(SAID_TAKEN_OVER, lost=True)
        assert second.incoming.empty()
        sessions.ended(first)  # type: ignore[arg-type]
        assert sessions.all == {second}
        assert not sessions.gone(held)  # this server's own, running
        assert sessions.gone(held.rsplit(":", 2)[0] + ":1:1")  # this pid's earlier life
        assert not sessions.gone("another-host:1:1:1")  # another machine's: its claim expires by itself

    asyncio.run(scenario())


# -- the take-over question -------------------------------------------------------------


# Every wording a line of the question may take, whole (tests/ and the code
# each keep their own copy: a wording changed changes both).
TAKEN = {
    "Your game on this board is open in another session.",
    "Your game is open in another session.",
    "Your game is open elsewhere.",
    "Open elsewhere.",
    "In use.",
}
ANSWERS = {
    "y: play it here (the other session ends); any other key: leave.",
    "y: play it here (the other session ends)",
    "y: play it here",
    "y: here",
    "any other key: leave.",
    "other keys: leave.",
    "else: leave.",
    "n: leave",
    "n: no",
}


def test_the_take_over_question_is_said_in_whole_wordings_that_fit_down_to_a_few_columns() -> None:
    assert take_over_prompt(80) == [
        "Your game on this board is open in another session.",
        "y: play it here (the other session ends); any other key: leave.",
    ]
    assert take_over_prompt(20) == ["Open elsewhere.", "y: play it here", "other keys: leave."]
    for width in range(8, 100):
        taken, *answers = take_over_prompt(width)
        assert taken in TAKEN and set(answers) <= ANSWERS, width
        assert all(len(line) < width for line in (taken, *answers)), width  # the last column left free
        assert len(answers) == 1 or any(answer.startswith("y") for answer in answers)
    words = {word for wording in TAKEN | ANSWERS for word in wording.split()}
    for width in range(1, 8):  # nothing whole fits: whole words, or nothing
        assert all(set(line.split()) <= words and len(line) < max(2, width) for line in take_over_prompt(width))


def test_the_take_over_question_at_20_columns_is_not_wrapped_mid_word(tmp_path: Path, store_url: str) -> None:
    key = client_key()
    with ServerThread(tmp_path, store_url) as served:

        async def scenario() -> None:
            async with await connect(served.port, key) as a_conn, await connect(served.port, key) as b_conn:
                a, a_terminal = await open_terminal(a_conn, "play --no-animation")
                await a_terminal.shows("Score")
                b, b_terminal = await open_terminal(b_conn, "play --no-animation", size=(20, 10))
                await b_terminal.shows("leave")
                shown = [line.rstrip() for line in b_terminal.display() if line.strip()]
                assert shown == ["Open elsewhere.", "y: play it here", "other keys: leave."]
                b.write(b"n")
                await b_terminal.closed.wait()
                a.write(b"q")
                await a_terminal.closed.wait()

        run(scenario())
