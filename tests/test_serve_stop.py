"""The server's stop, in its shape (issue 29): every session is told before
any is waited for, so they save and say goodbye concurrently; and the stop's
bound is the code path's, not the clients' nor the store's: a session that
never ends and a client that never leaves are cut at the bound, read from
the server's clock (here a fake one that runs ahead), never waited out.

The sessions and connections are stand-ins with only what
:meth:`ansi2048.serve.server.GameServer.stop` uses of them; the stop over
real SSH is in test_serve.py."""

from __future__ import annotations

import asyncio
import sys
from typing import Any, List, Optional, Set

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the server is for POSIX hosts (asyncssh, signals)")

pytest.importorskip("asyncssh", reason="the server's tests need ansi2048[serve]", exc_type=ImportError)

from ansi2048.serve.pool import AIPool  # noqa: E402
from ansi2048.serve.server import LEAVE_SECONDS, STOP_SECONDS, GameServer  # noqa: E402

from .serve_support import MemoryStore  # noqa: E402


class Clock:
    """The server's clock, advancing ``step`` seconds each time it is read:
    the stop's bound comes after a bounded number of readings, however long
    (or short) the real waits between them are."""

    def __init__(self, step: float = 0.0) -> None:
        self.now = 1000.0
        self.step = step
        self.readings = 0

    def __call__(self) -> float:
        self.readings += 1
        self.now += self.step
        return self.now


class Conn:
    """A client's connection, as the stop sees it. ``leaves``: the client
    goes once its sessions have ended (as ssh does)."""

    def __init__(self, connections: Set[Any], leaves: bool = True) -> None:
        self._connections = connections
        self.leaves = leaves
        self.closed = self.aborted = False
        connections.add(self)

    def gone(self) -> None:
        self._connections.discard(self)

    def close(self) -> None:
        self.closed = True
        self.gone()

    def abort(self) -> None:
        self.aborted = True
        self.gone()

    def get_extra_info(self, name: str) -> Any:
        return self if name == "connection" else None


class Session:
    """A session: on being told that the server stops, it runs ``ending``
    (its game saving and saying goodbye), then its client leaves if it does."""

    def __init__(self, server: GameServer, conn: Conn, ending: Any) -> None:
        self.chan = conn
        self.told = asyncio.Event()
        self.task: asyncio.Task[None] = asyncio.get_running_loop().create_task(self._serve(conn, ending))
        server.sessions.add(self)  # type: ignore[arg-type]

    async def _serve(self, conn: Conn, ending: Any) -> None:
        await self.told.wait()
        await ending()
        if conn.leaves:
            conn.gone()

    def stopping(self) -> Optional[asyncio.Task[None]]:
        self.told.set()
        return self.task

    def connection(self) -> Conn:
        return self.chan


def game_server(clock: Clock) -> GameServer:
    return GameServer(MemoryStore(), AIPool(1), lambda: 7, clock=clock)  # type: ignore[arg-type]


def test_every_session_is_told_before_any_is_waited_for_so_they_save_together() -> None:
    # Each game's save waits for all of them to be saving, as the store's
    # grouped commit would take them: a stop that told one session and
    # waited for it before telling the next would never see one saved.
    count = 5
    saved: List[int] = []
    told_when_saving: List[int] = []  # how many sessions were told when each began to save

    async def scenario() -> None:
        server = game_server(Clock())
        all_saving = asyncio.Event()
        saving = 0

        async def save() -> None:
            nonlocal saving
            told_when_saving.append(sum(session.told.is_set() for session in sessions))
            saving += 1
            if saving == count:
                all_saving.set()
            await all_saving.wait()
            saved.append(saving)

        conns = [Conn(server.connections) for _ in range(count)]
        sessions = [Session(server, conn, save) for conn in conns]
        await asyncio.wait_for(server.stop(), 30)  # a guard against a hang, not a measure
        assert not server.connections
        assert not any(conn.closed or conn.aborted for conn in conns)  # each client left by itself

    asyncio.run(scenario())
    assert told_when_saving == [count] * count
    assert saved == [count] * count


def test_a_session_that_never_ends_and_clients_that_never_leave_are_cut_at_the_bound() -> None:
    # The clock runs a tenth of a second ahead at each reading: the bound
    # (STOP_SECONDS) is reached after a bounded number of readings, while
    # the stalled session would never end and its client never leave.
    clock = Clock(step=0.1)
    stalled_forever = asyncio.Event()

    async def scenario() -> None:
        server = game_server(clock)

        async def nothing() -> None:
            pass

        stalled = Session(server, Conn(server.connections, leaves=False), stalled_forever.wait)
        stays = Conn(server.connections, leaves=False)
        Session(server, stays, nothing)  # told and ended, and its client stays
        leaves = Conn(server.connections)
        Session(server, leaves, nothing)
        logging_in = Conn(server.connections)  # no session: nobody to tell
        started = clock.now
        await asyncio.wait_for(server.stop(), 30)  # a guard against a hang, not a measure
        assert clock.now - started <= STOP_SECONDS + 2 * clock.step  # stopped by the bound, as the clock says
        assert not server.connections
        assert not stalled.task.done()  # never waited for past the bound
        assert stalled.chan.aborted
        assert stays.aborted and not leaves.aborted and not leaves.closed
        assert logging_in.closed  # at once: SSH's disconnect says why
        stalled.task.cancel()

    asyncio.run(scenario())
    assert clock.readings < 200  # the stop's loops are bounded


def test_a_client_that_stays_after_its_session_ended_is_given_leave_seconds_then_cut() -> None:
    clock = Clock(step=0.05)
    aborted_at: List[float] = []

    async def scenario() -> None:
        server = game_server(clock)

        async def nothing() -> None:
            pass

        stays = Conn(server.connections, leaves=False)
        abort = stays.abort

        def noted() -> None:
            aborted_at.append(clock.now)
            abort()

        stays.abort = noted  # type: ignore[method-assign]
        Session(server, stays, nothing)
        started = clock.now
        await asyncio.wait_for(server.stop(), 30)
        assert aborted_at and LEAVE_SECONDS <= aborted_at[0] - started < STOP_SECONDS

    asyncio.run(scenario())


def test_a_game_still_saving_when_its_client_has_left_is_waited_for() -> None:
    saved: List[bool] = []

    async def scenario() -> None:
        server = game_server(Clock())

        async def save() -> None:
            await asyncio.sleep(0.2)  # a slow commit
            saved.append(True)

        conn = Conn(server.connections)
        Session(server, conn, save)
        conn.gone()  # the client dropped before the stop; its session is still running
        await asyncio.wait_for(server.stop(), 30)
        assert saved == [True]  # stop returned only once the save was done

    asyncio.run(scenario())
