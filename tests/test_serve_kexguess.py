"""A client's wrongly guessed key-exchange packet is ignored (RFC 4253
section 7, serve/kexguess.py): the rule on KEXINIT payloads, an asyncssh
client that guesses wrong as Dropbear does, and the adaptation stepping
aside where asyncssh lacks what it rests on."""

from __future__ import annotations

import io
import os
import struct
import sys
from pathlib import Path
from typing import Any, ClassVar, Dict, Iterator, List, Sequence

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the server is for POSIX hosts")

asyncssh = pytest.importorskip("asyncssh", reason="the server's tests need ansi2048[serve]", exc_type=ImportError)

from ansi2048.serve import kexguess  # noqa: E402

from .serve_support import MemoryStore, ServerThread  # noqa: E402
from .test_serve import client_key, connect, open_terminal, run  # noqa: E402

MSG_KEX_ECDH_INIT = 30  # RFC 5656: the client's first packet of curve25519 and ECDH


def name_list(names: Sequence[str]) -> bytes:
    data = ",".join(names).encode()
    return struct.pack(">I", len(data)) + data


def kexinit(kex: Sequence[str], host_keys: Sequence[str], guess: bool) -> bytes:
    """A KEXINIT payload as RFC 4253 section 7.1 lays it out."""
    lists = [
        kex,
        host_keys,
        ["aes128-ctr"],
        ["aes128-ctr"],
        ["hmac-sha2-256"],
        ["hmac-sha2-256"],
        ["none"],
        ["none"],
        [],
        [],
    ]
    return bytes([20]) + bytes(16) + b"".join(name_list(names) for names in lists) + bytes([guess]) + bytes(4)


SERVER = kexinit(["mlkem768x25519-sha256", "curve25519-sha256", "ext-info-s"], ["ssh-ed25519"], False)


@pytest.mark.parametrize(
    ("client", "wrong"),
    [
        # Dropbear 2022.83's: curve25519 first, a guess; the server prefers mlkem768x25519.
        (
            kexinit(["curve25519-sha256", "ecdh-sha2-nistp256", "kexguess2@matt.ucc.asn.au"], ["ssh-ed25519"], True),
            True,
        ),
        (kexinit(["mlkem768x25519-sha256", "curve25519-sha256"], ["ssh-ed25519"], True), False),  # both prefer the same
        (kexinit(["mlkem768x25519-sha256"], ["ecdsa-sha2-nistp256", "ssh-ed25519"], True), True),  # host keys differ
        (kexinit(["curve25519-sha256"], ["ssh-ed25519"], False), False),  # no guess, nothing to ignore
    ],
)
def test_a_guess_is_wrong_when_the_sides_prefer_different_algorithms(client: bytes, wrong: bool) -> None:
    assert kexguess.guess_is_wrong(SERVER, client) is wrong


@pytest.mark.parametrize("payload", [b"", bytes([21]) + bytes(40), SERVER[:30], SERVER[:-5]])
def test_what_is_not_a_whole_kexinit_is_refused(payload: bytes) -> None:
    with pytest.raises(ValueError):
        kexguess.preferences(payload)


def guessing_client() -> Any:
    """An asyncssh client that, as Dropbear does, says a guessed packet
    follows its KEXINIT and sends one: curve25519's first packet, with a
    public value of its own that is never used (a wrong guess's packet must
    be ignored, so the exchange goes on without it)."""

    class Guessing(asyncssh.SSHClient):  # type: ignore[misc]
        def connection_made(self, conn: Any) -> None:
            send = conn.send_packet

            def send_packet(pkttype: int, *args: bytes, **kwargs: Any) -> None:
                if pkttype != 20 or getattr(conn, "_guessed", False):
                    send(pkttype, *args, **kwargs)
                    return
                conn._guessed = True
                payload = bytearray(b"".join(args))
                payload[-5] = 1  # first_kex_packet_follows, before the reserved uint32
                conn._client_kexinit = bytes([20]) + bytes(payload)  # what the exchange hash covers
                send(pkttype, bytes(payload), **kwargs)
                send(MSG_KEX_ECDH_INIT, asyncssh.packet.String(os.urandom(32)))

            conn.send_packet = send_packet

    return Guessing


@pytest.fixture
def served(tmp_path: Path) -> Iterator[ServerThread]:
    with ServerThread(tmp_path, MemoryStore(), seeds=[7]) as server:
        yield server


async def stats_with_a_wrong_guess(port: int) -> str:
    # curve25519 first, as Dropbear's list: the server's first is mlkem768x25519.
    kex = ["curve25519-sha256", "ecdh-sha2-nistp256"]
    async with await connect(port, client_key(), client_factory=guessing_client(), kex_algs=kex) as conn:
        assert conn._guessed
        _, terminal = await open_terminal(conn, "stats", pty=False)
        await terminal.closed.wait()
        assert terminal.exit_status == 0
        return terminal.output.decode()


def test_a_client_guessing_wrong_connects_and_runs_a_command(served: ServerThread) -> None:
    assert "No finished games yet" in run(stats_with_a_wrong_guess(served.port))


def test_without_the_adaptation_asyncssh_drops_a_wrong_guess(served: ServerThread, monkeypatch: Any) -> None:
    # What the test above proves, seen failing: asyncssh 2.24.1 alone takes
    # the guessed packet as right. Should a later asyncssh follow the RFC,
    # this fails: the adaptation (serve/kexguess.py) may then go.
    monkeypatch.setattr("ansi2048.serve.connection.follow_rfc_guess", lambda conn: False)
    with pytest.raises((asyncssh.Error, ConnectionError)):
        run(stats_with_a_wrong_guess(served.port))


class _Internals:
    """A server connection's class as asyncssh might make it later."""

    _recv_packet = asyncssh.SSHServerConnection._recv_packet
    _send_kexinit = asyncssh.SSHServerConnection._send_kexinit

    def __init__(self) -> None:
        self.handled: List[Any] = []


def test_without_asyncssh_s_internals_connections_are_left_as_they_are() -> None:
    assert kexguess.supported()  # this asyncssh (the pinned one) has them

    class NoTable(_Internals):
        pass

    class NoFlag(_Internals):  # the receive path no longer reads the flag
        _packet_handlers: ClassVar[Dict[int, Any]] = {20: lambda self, *args: None}
        _recv_packet = _Internals.__init__

    for connection_class in (NoTable, NoFlag):
        conn = connection_class()
        assert not kexguess.supported(connection_class)
        assert kexguess.follow_rfc_guess(conn) is False  # type: ignore[arg-type]
        assert "_packet_handlers" not in vars(conn)


def test_the_adaptation_only_adds_the_case_asyncssh_misses() -> None:
    """Run on a connection whose KEXINIT handler is asyncssh's: where
    asyncssh already ignores the guess (as a fixed asyncssh would), it stays
    ignored; where both rules call it right, it is not ignored."""

    def handler(flag: bool) -> Any:
        async def process_kexinit(self: Any, pkttype: int, pktid: int, packet: Any) -> None:
            self._ignore_first_kex = flag  # what asyncssh's handler sets
            self._server_kexinit = SERVER

        return process_kexinit

    right = kexinit(["mlkem768x25519-sha256"], ["ssh-ed25519"], True)
    wrong = kexinit(["curve25519-sha256"], ["ssh-ed25519"], True)
    for asyncssh_says, client, expected in ((True, wrong, True), (False, wrong, True), (False, right, False)):

        class Connection(_Internals):
            _packet_handlers: ClassVar[Dict[int, Any]] = {20: handler(asyncssh_says)}

        conn = Connection()
        assert kexguess.follow_rfc_guess(conn) is True  # type: ignore[arg-type]
        packet = asyncssh.packet.SSHPacket(client[1:])
        run(conn._packet_handlers[20](conn, 20, 0, packet))  # type: ignore[attr-defined]
        assert conn._ignore_first_kex is expected  # type: ignore[attr-defined]


def test_the_log_says_when_the_adaptation_cannot_be_made(tmp_path: Path, monkeypatch: Any) -> None:
    log = io.StringIO()
    monkeypatch.setattr(kexguess, "supported", lambda: False)
    with ServerThread(tmp_path, MemoryStore(), log=log) as server:
        port = server.port
    said = f"asyncssh {asyncssh.__version__}: a client's wrong key-exchange guess ends its connection"
    assert port and said in log.getvalue()
    quiet = io.StringIO()
    monkeypatch.undo()
    with ServerThread(tmp_path, MemoryStore(), log=quiet):
        pass
    assert "key exchange" not in quiet.getvalue()
