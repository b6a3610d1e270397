"""A public server's limits (issue 29): the accounting itself (pure), then
hostile clients against a server on loopback, each bounded in count and
time: in each, the server keeps serving another player, holds no more than
its limits, and shows nothing a client sent raw."""

from __future__ import annotations

import asyncio
import io
import socket
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Iterator, List

import pytest

from ansi2048.serve.limits import (
    Admission,
    InputBudget,
    Limits,
    Refusal,
    capped_by_files,
    short_fingerprint,
    source_of,
)

# -- the accounting (pure) --------------------------------------------------------


def test_an_ipv6_source_counts_by_its_64_and_a_mapped_ipv4_as_its_ipv4() -> None:
    assert source_of("192.0.2.7") == "192.0.2.7"
    assert source_of("2001:db8:1:2:aaaa:bbbb:cccc:dddd") == "2001:db8:1:2::/64"
    assert source_of("2001:0db8:0001:0002::1") == "2001:db8:1:2::/64"  # however it is spelled
    assert source_of("2001:db8:1:3::1") == "2001:db8:1:3::/64"  # the next /64: another source
    assert source_of("::ffff:192.0.2.7") == "192.0.2.7"
    assert source_of("::1") == "::/64"
    assert source_of("fe80::1%eth0") == "fe80::/64"
    assert source_of("?") == "?"  # no address (a Unix socket): as it is


def test_every_per_address_cap_counts_a_64_as_one_address() -> None:
    # 2^64 addresses of one /64 get the share of one address: logins, sessions, guests.
    limits = Limits(handshakes_per_address=2, sessions_per_address=3, sessions_per_identity=2)
    admission = Admission(limits)
    sources = [source_of(f"2001:db8:1:2::{n:x}") for n in range(1, 10)]
    admission.start_handshake(sources[0])
    admission.start_handshake(sources[1])
    with pytest.raises(Refusal):
        admission.start_handshake(sources[2])
    admission.start_handshake(source_of("2001:db8:1:3::1"))  # another /64
    admission.start_session(sources[3], "SHA256:a")
    admission.start_session(sources[4], f"guest@{sources[4]}", guest=True)
    admission.start_session(sources[5], f"guest@{sources[5]}", guest=True)
    with pytest.raises(Refusal, match="too many sessions from your address"):
        admission.start_session(sources[6], "SHA256:b")
    assert admission.identities[f"guest@{sources[8]}"] == 2  # guests of the /64 are one guest identity
    admission.start_session(source_of("::ffff:192.0.2.1"), "SHA256:c")
    assert admission.sessions["192.0.2.1"] == 1


def test_logins_are_capped_in_all_and_per_address_and_freed_when_they_end() -> None:
    admission = Admission(Limits(handshakes=3, handshakes_per_address=2))
    admission.start_handshake("10.0.0.1")
    admission.start_handshake("10.0.0.1")
    with pytest.raises(Refusal, match="from your address"):
        admission.start_handshake("10.0.0.1")
    admission.start_handshake("10.0.0.2")
    with pytest.raises(Refusal, match="too many connections logging in"):
        admission.start_handshake("10.0.0.3")
    admission.end_handshake("10.0.0.1")
    admission.start_handshake("10.0.0.3")
    for address in ("10.0.0.1", "10.0.0.2", "10.0.0.3"):
        admission.end_handshake(address)
    assert not admission.handshakes  # nothing left behind per address


def test_sessions_are_capped_in_all_per_address_and_per_key() -> None:
    admission = Admission(Limits(sessions=4, sessions_per_address=2, sessions_per_identity=1))
    admission.start_session("10.0.0.1", "SHA256:a")
    with pytest.raises(Refusal, match="with your key"):
        admission.start_session("10.0.0.2", "SHA256:a")
    admission.start_session("10.0.0.1", "SHA256:b")
    with pytest.raises(Refusal, match="from your address"):
        admission.start_session("10.0.0.1", "SHA256:c")
    admission.start_session("10.0.0.2", "SHA256:c")
    admission.start_session("10.0.0.3", "SHA256:d")
    with pytest.raises(Refusal, match="full"):
        admission.start_session("10.0.0.4", "SHA256:e")
    admission.end_session("10.0.0.1", "SHA256:a")
    admission.start_session("10.0.0.4", "SHA256:e")


def test_a_guest_over_its_cap_is_not_told_of_a_key_it_does_not_have() -> None:
    # A guest (no key) is counted per address: before, it was refused with
    # "too many sessions with your key".
    admission = Admission(Limits(sessions=10, sessions_per_address=10, sessions_per_identity=1))
    admission.start_session("10.0.0.1", "guest@10.0.0.1", guest=True)
    with pytest.raises(Refusal) as refused:
        admission.start_session("10.0.0.1", "guest@10.0.0.1", guest=True)
    assert str(refused.value) == "too many guest sessions from your address"


def test_the_input_budget_lets_typing_through_and_cuts_a_paste() -> None:
    budget = InputBudget(burst=100, rate=10, now=0.0)
    assert budget.admit(b"x" * 1000, 0.0) == b"x" * 100
    assert budget.dropped == 900
    assert budget.admit(b"abc", 0.0) == b""
    assert budget.admit(b"abcdef", 0.5) == b"abcde"  # 0.5 s at 10 bytes a second
    assert budget.admit(b"y" * 500, 1000.0) == b"y" * 100  # refilled to the burst, no more
    typist = InputBudget(burst=4096, rate=1024, now=0.0)
    # 30 arrow keys a second (3 bytes each) for a minute: every byte played.
    assert all(typist.admit(b"\x1b[A", step / 30) == b"\x1b[A" for step in range(1800))


def test_the_open_file_limit_caps_the_sessions_and_says_so() -> None:
    limits = Limits(sessions=500, handshakes=100)
    assert capped_by_files(limits, 65536) == (limits, None)
    fitted, said = capped_by_files(limits, 256)
    assert fitted.sessions + fitted.handshakes <= 256 - 64
    assert said is not None and f"caps the server at {fitted.sessions} sessions" in said
    assert "(256)" in said


def test_a_short_fingerprint_tells_keys_apart_and_a_guest_is_said() -> None:
    assert short_fingerprint("SHA256:abcdefghijklmnopqrstuvwxyz") == "SHA256:abcdefghijkl"
    assert short_fingerprint(None) == "guest"


def test_each_limit_is_an_option_of_serve() -> None:
    from ansi2048.serve.cli import parse_serve_options

    options = parse_serve_options(
        ["--max-sessions", "7", "--idle-seconds", "2.5", "--keepalive-seconds", "0", "--log", "x.log"], {"HOME": "/h"}
    )
    assert options.limits == replace(Limits(), sessions=7, idle_seconds=2.5, keepalive_seconds=0.0)
    assert options.log == "x.log"
    assert parse_serve_options([], {"HOME": "/h"}).limits == Limits()


@pytest.mark.parametrize(
    "args",
    [["--max-sessions", "0"], ["--max-sessions", "2.5"], ["--idle-seconds", "nan"], ["--login-seconds", "-1"]],
)
def test_a_bad_limit_is_one_line_and_status_2(args: List[str], capsys: pytest.CaptureFixture[str]) -> None:
    from ansi2048.serve.cli import parse_serve_options

    with pytest.raises(SystemExit) as exited:
        parse_serve_options(args, {"HOME": "/h"})
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"ansi2048 serve: error: argument {args[0]}: expected a number")


# -- hostile clients ----------------------------------------------------------------

if sys.platform == "win32":  # pragma: no cover
    pytest.skip("the server is for POSIX hosts", allow_module_level=True)
asyncssh = pytest.importorskip("asyncssh", reason="the server's tests need ansi2048[serve]", exc_type=ImportError)

from .serve_support import TIGHT, MemoryStore, ServerThread, logged  # noqa: E402
from .test_serve import client_key, connect, kept_keys, open_terminal, run  # noqa: E402

# Another player's address: loopback's other addresses (Linux routes all of 127/8 to lo).
OTHER = ("127.0.0.2", 0)


def loopback_aliases() -> bool:
    try:
        with socket.socket() as probe:
            probe.bind(OTHER)
    except OSError:
        return False
    return True


needs_aliases = pytest.mark.skipif(not loopback_aliases(), reason="127.0.0.2 is not on loopback here (macOS)")


@pytest.fixture
def log() -> io.StringIO:
    return io.StringIO()


@pytest.fixture
def tight(tmp_path: Path, log: io.StringIO) -> Iterator[ServerThread]:
    with ServerThread(tmp_path, MemoryStore(), seeds=[7, 8, 9, 10], limits=TIGHT, log=log) as server:
        yield server


async def plays(port: int, key: Any = None, keys: bytes = b"adws", **options: Any) -> None:
    """A player connects, sees the board, types ``keys``, each shown, and quits."""
    async with await connect(port, key or client_key(), **options) as conn:
        chan, terminal = await open_terminal(conn, "play --no-animation")
        await terminal.shows("Score", 20)
        for typed in keys:
            shown = len(terminal.output)
            chan.write(bytes([typed]))
            await terminal.wait_for(lambda t, shown=shown: len(t.output) > shown, 20)  # type: ignore[misc]
        chan.write(b"q")
        await terminal.closed.wait()
        assert terminal.exit_status == 0


def no_escape_in(text: str) -> None:
    assert "\x1b" not in text and "\x07" not in text and "\x9b" not in text


@needs_aliases
def test_500_half_open_connections_do_not_keep_a_player_out(tight: ServerThread, log: io.StringIO) -> None:
    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        flood: List[socket.socket] = []
        try:
            for _ in range(500):  # TCP connected, then silent: no SSH version, no key exchange
                sock = socket.socket()
                sock.setblocking(False)
                flood.append(sock)
                sock.connect_ex(("127.0.0.1", tight.port))
            await asyncio.sleep(0.5)
            await plays(tight.port, local_addr=OTHER)
            held = tight.call(_counts(tight))
            assert held[0] <= TIGHT.handshakes_per_address  # the flood's address holds no more
            assert held[1] <= TIGHT.handshakes_per_address + 2
        finally:
            for sock in flood:
                sock.close()
        # The login grace ends what the flood still held.
        end = loop.time() + 10
        while tight.call(_counts(tight))[1] and loop.time() < end:
            await asyncio.sleep(0.2)
        assert tight.call(_counts(tight)) == (0, 0)

    run(scenario())
    assert "refused: too many connections logging in from your address" in log.getvalue()


async def _counts(served: ServerThread) -> Any:
    admission = served.server.context.admission
    return admission.handshakes["127.0.0.1"], len(served.server.connections)


@needs_aliases
def test_100_connections_from_one_address_get_its_share_and_another_player_plays(tight: ServerThread) -> None:
    async def scenario() -> None:
        conns: List[Any] = []
        opened, refused = 0, 0
        try:
            for _ in range(100):
                try:
                    conn = await connect(tight.port, client_key())
                except (OSError, asyncssh.Error):
                    refused += 1
                    continue
                conns.append(conn)
                try:
                    await open_terminal(conn, "play --no-animation")
                    opened += 1
                except asyncssh.ChannelOpenError as error:
                    assert "too many sessions from your address" in error.reason
                    refused += 1
            assert opened == TIGHT.sessions_per_address and refused == 100 - opened
            await plays(tight.port, local_addr=OTHER)
        finally:
            for conn in conns:
                conn.close()

    run(scenario())


def test_a_client_that_never_reads_is_disconnected_its_game_kept(tight: ServerThread, log: io.StringIO) -> None:
    key = client_key()

    async def scenario() -> None:
        async with await connect(tight.port, key) as conn:
            # A small window: the server may send this much, then holds the rest.
            chan, terminal = await open_terminal(conn, "play --no-animation", size=(100, 30), window=4096)
            await terminal.shows("Score")
            chan.pause_reading()
            started = time.monotonic()
            while not terminal.closed.is_set() and time.monotonic() - started < 15:
                chan.write(b"adws")
                await asyncio.sleep(0.05)
            assert terminal.closed.is_set()
        assert await kept_keys(tight, key)  # the keys it played are kept
        await plays(tight.port)

    run(scenario())
    assert "play: client not reading" in logged(log, lambda text: "client not reading" in text)


def test_10_mb_pasted_at_once_is_cut_to_the_input_budget(tight: ServerThread) -> None:
    key = client_key()

    async def scenario() -> None:
        async with await connect(tight.port, key) as conn:
            chan, terminal = await open_terminal(conn, "play --no-animation")
            await terminal.shows("Score")
            started = time.monotonic()
            chan.write(b"adws" * (10 * 1024 * 1024 // 4))
            await plays(tight.port)  # meanwhile, another player plays
            while chan.get_write_buffer_size() and time.monotonic() - started < 30:
                await asyncio.sleep(0.1)  # the paste all sent
            await asyncio.sleep(0.1)  # the budget has room for one key again
            elapsed = time.monotonic() - started
            chan.write(b"q")
            await asyncio.wait_for(terminal.closed.wait(), 20)
        kept = await kept_keys(tight, key)
        assert 0 < len(kept) <= TIGHT.input_burst + TIGHT.input_rate * (elapsed + 20)

    run(scenario())


def test_window_change_floods_and_absurd_sizes(tight: ServerThread) -> None:
    async def scenario() -> None:
        async with await connect(tight.port, client_key()) as conn:
            chan, terminal = await open_terminal(conn, "play --no-animation")
            await terminal.shows("Score")
            for size in [(0, 0), (65535, 65535), (1, 1)] * 300 + [(80, 24)]:
                chan.change_terminal_size(*size)
            await asyncio.sleep(0.3)
            [session] = tight.server.sessions
            assert session.window == (80, 24)
            shown = len(terminal.output)
            chan.write(b"a")
            await terminal.wait_for(lambda t: len(t.output) > shown)
            await plays(tight.port)
            chan.write(b"q")
            await terminal.closed.wait()

    run(scenario())


def test_long_and_unknown_commands_are_one_line_each(tight: ServerThread, log: io.StringIO) -> None:
    async def scenario() -> None:
        async with await connect(tight.port, client_key()) as conn:
            _, terminal = await open_terminal(conn, "x" * 2000, pty=False)
            await terminal.closed.wait()
            assert terminal.exit_status == 2
            assert terminal.stderr.decode() == "ansi2048: the command is too long (at most 1024 characters)\n"
        # 1 MB: more than an SSH packet holds; the client's connection ends, the server goes on.
        with pytest.raises((asyncssh.Error, OSError)):
            async with await connect(tight.port, client_key()) as conn:
                _, terminal = await open_terminal(conn, "play " + "y" * 1_000_000, pty=False)
                await asyncio.wait_for(terminal.closed.wait(), 10)
                raise OSError("ended")
        await plays(tight.port)

    run(scenario())
    assert "y" * 100 not in log.getvalue() and "x" * 100 not in log.getvalue()


def test_escape_sequences_in_names_commands_and_env_reach_no_terminal_and_no_log(
    tight: ServerThread, log: io.StringIO
) -> None:
    hostile = "\x1b]0;owned\x07\x1b[2J\x9b31m\r\nforged line"

    async def scenario() -> None:
        # (asyncssh's client refuses to send such a user name: the names' own tests reduce them)
        async with await connect(tight.port, client_key()) as conn:
            _, terminal = await open_terminal(conn, "play " + hostile, pty=False)
            await terminal.closed.wait()
            no_escape_in(terminal.stderr.decode("utf-8", "replace"))
            assert terminal.stderr.count(b"\n") == 1
        async with await connect(tight.port, client_key()) as conn:
            env = {f"X{n}": "v" * 100 for n in range(300)}
            env.update(COLORTERM=hostile, LANG="C.UTF-8")
            # (a TERM beyond ASCII is asyncssh's to refuse: the connection ends)
            term = "\x1b]0;owned\x07\x1b[2J\r\nforged line"
            chan, terminal = await open_terminal(conn, "play --no-animation", term_type=term, env=env)
            await terminal.shows("Score")
            [session] = tight.server.sessions
            assert set(session.chan.get_environment()) == {"COLORTERM", "LANG"}
            chan.write(b"q")
            await terminal.closed.wait()
            # The frames' own escapes only: no OSC (title), no clear-screen the client asked for.
            assert b"\x1b]0;owned" not in terminal.output

    run(scenario())
    lines = logged(log, lambda text: text.count("\n") >= 4).splitlines()
    assert len(lines) == 4  # each connection's: when it is admitted, when it ends
    for line in lines:
        no_escape_in(line)
        assert "forged line" not in line.split("TERM=")[0]


def test_an_idle_session_is_saved_and_closed_with_a_line(tmp_path: Path, log: io.StringIO) -> None:
    key = client_key()
    tight = ServerThread(tmp_path, MemoryStore(), limits=replace(TIGHT, idle_seconds=1.5), log=log)

    async def scenario() -> None:
        async with await connect(tight.port, key) as conn:
            chan, terminal = await open_terminal(conn, "play --no-animation")
            await terminal.shows("Score")
            chan.write(b"a")
            await asyncio.sleep(0.3)
            await asyncio.wait_for(terminal.closed.wait(), 10)
            assert "no key for a while: your game is kept" in terminal.text()
        assert await kept_keys(tight, key) == b"a"

    with tight:
        run(scenario())
    assert ", 1 keys, play: idle" in log.getvalue()


def test_clients_that_prefer_chacha20_get_aes_gcm(tight: ServerThread) -> None:
    async def scenario() -> None:
        async with await connect(tight.port, client_key()) as conn:  # asyncssh's client: chacha20 first
            assert conn.get_extra_info("send_cipher") == "aes256-gcm@openssh.com"
        with pytest.raises(asyncssh.Error):
            await connect(tight.port, client_key(), encryption_algs=["chacha20-poly1305@openssh.com"])

    run(scenario())


class _SlowStore(MemoryStore):
    """A store whose appends take a while: a client can leave in the middle of one."""

    async def append(self, player: int, board: str, holder: str, items: bytes) -> None:
        await asyncio.sleep(0.3)
        await super().append(player, board, holder, items)


def test_a_client_gone_in_the_middle_of_a_save_loses_nothing(tmp_path: Path) -> None:
    key = client_key()

    async def scenario(server: ServerThread) -> None:
        async with await connect(server.port, key) as conn:
            chan, terminal = await open_terminal(conn, "play --no-animation")
            await terminal.shows("Score")
            chan.write(b"a")
            await asyncio.sleep(0.1)  # the append under way
        await asyncio.sleep(0.5)
        assert await kept_keys(server, key) == b"a"  # kept, and the claim released: it resumes at once
        async with await connect(server.port, key) as conn:
            chan, terminal = await open_terminal(conn)
            await terminal.shows("resumed your game")
            chan.write(b"q")
            await terminal.closed.wait()

    with ServerThread(tmp_path, _SlowStore(), limits=TIGHT) as server:
        run(scenario(server))


# -- the guard: the limits as one layer around every channel (issue 35) -----------


class _HeldChannel:
    """A channel whose client reads nothing: what is written stays unsent."""

    def __init__(self) -> None:
        self.held = 0
        self.aborted = False

    def write(self, data: bytes) -> None:
        self.held += len(data)

    def get_write_buffer_size(self) -> int:
        return self.held

    def get_extra_info(self, name: str) -> Any:
        return self if name == "connection" else None

    def abort(self) -> None:
        self.aborted = True


def test_the_guard_cuts_input_and_drops_a_reader_over_the_unsent_limit_whatever_writes() -> None:
    from ansi2048.serve.guard import ChannelGuard
    from ansi2048.serve.limits import Breach

    async def scenario() -> None:
        breaches: List[Breach] = []
        limits = Limits(input_burst=8, input_rate=1, unsent_bytes=100)
        guard = ChannelGuard(limits, lambda: 0.0, breaches.append)
        chan = _HeldChannel()
        link = guard.attach(chan)
        assert guard.typed(b"x" * 20) == b"x" * 8  # the budget's burst, the rest dropped
        link.write(b"y" * 60)
        assert breaches == [] and not chan.aborted
        link.write(b"y" * 60)  # 120 bytes held: over the limit, whoever wrote them
        assert breaches == [Breach.SLOW] and chan.aborted and link.gone
        link.write(b"z")  # nothing more is written to a dropped reader
        assert chan.held == 120
        guard.close()

    asyncio.run(scenario())
