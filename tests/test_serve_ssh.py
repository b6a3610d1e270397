"""``ansi2048 serve`` played through the real OpenSSH client: ``ssh`` on a
pty of its own (tests/ptys.py), its screen read through pyte. No
configuration or key of the developer's is read (``-F /dev/null``,
``IdentitiesOnly``, keys made here by ssh-keygen)."""

from __future__ import annotations

import codecs
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

import pytest

pytestmark = [
    pytest.mark.skipif(sys.platform == "win32", reason="the server is for POSIX hosts (asyncssh, signals, ptys)"),
    pytest.mark.skipif(shutil.which("ssh") is None, reason="needs the OpenSSH client (ssh)"),
]

pytest.importorskip("asyncssh", reason="the server's tests need ansi2048[serve]", exc_type=ImportError)

from ansi2048.serve.play_commands import GUEST_NOTE  # noqa: E402

from .conftest import child_env  # noqa: E402
from .ptys import PtyChild, spawn  # noqa: E402
from .screen import terminal  # noqa: E402
from .serve_support import MemoryStore, ServeProcess, ServerThread, make_key, ssh_command  # noqa: E402

WIDTH, HEIGHT = 80, 24


@pytest.fixture
def served(tmp_path: Path, store_url: str) -> Iterator[ServerThread]:
    """A server in-process, keeping its games in a real database (each of tests/databases.py's)."""
    with ServerThread(tmp_path, store_url, seeds=[11, 12, 13, 14, 15]) as server:
        yield server


@pytest.fixture
def served_in_memory(tmp_path: Path) -> Iterator[ServerThread]:
    """A server whose store the test can look through (test_serve.py's MemoryStore)."""
    with ServerThread(tmp_path, MemoryStore(), seeds=[11]) as server:
        yield server


class SshPlayer:
    """``ssh`` on a pty playing the server, what it shows read through pyte;
    ``arrivals``: when each piece of output came (monotonic time, and the
    length of ``output`` with it). ``prefix`` runs ``ssh`` through another
    program (``ip netns exec NAME``: tests/slow_link.py), to ``host``.
    ``command``: another client's whole command line instead of ``ssh``'s
    (tests/test_serve_clients.py: PuTTY's plink, Dropbear's dbclient)."""

    def __init__(
        self,
        port: int,
        key: Optional[Path],
        *args: str,
        user: str = "player",
        size: Tuple[int, int] = (WIDTH, HEIGHT),
        term: str = "xterm-256color",
        host: str = "127.0.0.1",
        prefix: Sequence[str] = (),
        command: Sequence[str] = (),
        env: Optional[Dict[str, str]] = None,
    ) -> None:
        command = [*prefix, *(command or ssh_command(port, key, *args, user=user, host=host))]
        self.child: PtyChild = spawn(
            command[0],
            command[1:],
            env=child_env({"TERM": term, **(env or {})}),
            dimensions=(size[1], size[0]),
        )
        self.child.delaybeforesend = None
        self.width, self.height = size
        self.screen, self._stream = terminal(*size)
        self.output = b""
        self.arrivals: List[Tuple[float, int]] = []
        # A character's bytes may come in two reads: decoded as they complete
        # (a read decoded alone put a replacement character on the screen).
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def _pump(self, timeout: float) -> bool:
        import pexpect

        try:
            data = self.child.read_nonblocking(65536, timeout)
        except pexpect.TIMEOUT:
            return True
        except pexpect.EOF:
            return False
        self.output += data
        self.arrivals.append((time.monotonic(), len(self.output)))
        self._stream.feed(self._decoder.decode(data))
        return True

    def text(self) -> str:
        return "\n".join(line.rstrip() for line in self.screen.display)

    def shows(self, wanted: str, timeout: float = 15) -> str:
        end = time.monotonic() + timeout
        while wanted not in self.text():
            if time.monotonic() > end or (not self._pump(0.1) and wanted not in self.text()):
                raise AssertionError(f"{wanted!r} not seen; on screen:\n{self.text()}")
        return self.text()

    def type(self, keys: bytes, pause: float = 0.05) -> None:
        for key in keys:
            self.child.send(bytes([key]))
            time.sleep(pause)
            self._pump(0.0)

    def ended(self, timeout: float = 15) -> int:
        end = time.monotonic() + timeout
        while self._pump(0.1) and time.monotonic() < end:
            pass
        self.child.process.wait(timeout)
        self.child.close()
        return self.child.process.returncode

    def settle(self, seconds: float = 0.6, quiet: float = 0.3, most: float = 5.0) -> None:
        """Read on until the motion and the "+N" are over: ``seconds`` at
        least, then until nothing has come for ``quiet`` (a loaded machine
        draws a motion's frames late; bounded by ``most``)."""
        start = time.monotonic()
        while self._pump(0.05):
            now = time.monotonic()
            last = self.arrivals[-1][0] if self.arrivals else start
            if now - start >= most or (now - start >= seconds and now - last >= quiet):
                return

    def board(self) -> List[str]:
        """The board's lines: between the header (scores) and the notes."""
        self.settle()
        lines = self.text().split("\n")
        header = next(i for i, line in enumerate(lines) if "Score" in line)
        end = next(i for i, line in enumerate(lines) if "wasd" in line or "Join the tiles" in line)
        return lines[header + 1 : end]


def moves(text: str) -> int:
    found = re.search(r"Moves (\d+)", text)
    assert found, text
    return int(found.group(1))


def test_two_players_play_at_once_and_each_resumes_their_own_game(served: ServerThread, tmp_path: Path) -> None:
    alice_key, bob_key = make_key(tmp_path / "alice"), make_key(tmp_path / "bob")
    alice = SshPlayer(served.port, alice_key, user="alice")
    bob = SshPlayer(served.port, bob_key, user="bob")
    alice.shows("Score")
    bob.shows("Score")
    for _ in range(3):  # turn about, both connected
        alice.type(b"ad")
        bob.type(b"ws")
    alice.shows("Moves")
    alice.type(b"u")  # undo, over SSH too
    alice_board, bob_board = alice.board(), bob.board()
    alice_moves, bob_moves = moves(alice.text()), moves(bob.text())
    alice.type(b"q")
    bob.type(b"\x03")  # Ctrl-C quits too, the game kept
    assert alice.ended() == 0 and bob.ended() == 0
    assert "game kept for next time" in alice.text() and "game kept for next time" in bob.text()

    bob = SshPlayer(served.port, bob_key, user="bob")
    alice = SshPlayer(served.port, alice_key, user="alice")
    assert moves(bob.shows(f"resumed your game: {bob_moves} move")) == bob_moves
    assert moves(alice.shows(f"resumed your game: {alice_moves} move")) == alice_moves
    assert alice.board() == alice_board and bob.board() == bob_board
    alice.type(b"q")
    bob.type(b"q")
    assert alice.ended() == 0 and bob.ended() == 0


def test_a_dropped_connection_keeps_every_move_shown(served: ServerThread, tmp_path: Path) -> None:
    key = make_key(tmp_path / "key")
    player = SshPlayer(served.port, key, "play", "--no-animation")
    player.shows("Score")
    player.type(b"adwsadws")
    time.sleep(0.3)
    player._pump(0.2)
    board, shown = player.board(), moves(player.text())
    player.child.process.send_signal(signal.SIGKILL)  # the client is gone, no goodbye
    player.child.close()

    again = SshPlayer(served.port, key)
    assert moves(again.shows("resumed your game")) == shown
    assert again.board() == board
    again.type(b"q")
    assert again.ended() == 0


def test_a_guest_without_a_key_plays_and_nothing_is_kept(served_in_memory: ServerThread) -> None:
    served = served_in_memory
    guest = SshPlayer(served.port, None, user="guest.1")
    guest.shows(GUEST_NOTE)
    guest.type(b"adws")
    guest.type(b"q")
    assert guest.ended() == 0
    assert "a guest's game is not kept" in guest.text()
    store: MemoryStore = served.store  # type: ignore[assignment]
    assert not store.players and not store.games and not store.bests


def test_commands_without_a_terminal(served: ServerThread, tmp_path: Path) -> None:
    key = make_key(tmp_path / "key")

    def ssh(*args: str, tty: bool = False) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ssh_command(served.port, key, *args, tty=tty),
            capture_output=True,
            text=True,
            timeout=30,
            stdin=subprocess.DEVNULL,
            env=child_env(),
        )

    done = ssh("help")
    assert done.returncode == 0 and "stats [--json]" in done.stdout
    done = ssh()
    assert done.returncode == 2 and "ssh -t" in done.stderr and done.stderr.count("\n") == 1
    done = ssh("stats", "--json")
    assert done.returncode == 0 and '"boards": []' in done.stdout
    done = ssh("rm", "-rf", "/")
    assert done.returncode == 2 and "unknown command 'rm'" in done.stderr
    done = ssh("play", "--size", "1")
    assert done.returncode == 2 and "argument --size" in done.stderr


def test_forwarding_sftp_and_scp_are_refused_to_the_real_client(served: ServerThread, tmp_path: Path) -> None:
    key = make_key(tmp_path / "key")
    base = ssh_command(served.port, key, tty=False)[:-1]  # without the host
    env = child_env()
    remote = subprocess.run(
        [*base, "-N", "-o", "ExitOnForwardFailure=yes", "-R", "0:127.0.0.1:9", "127.0.0.1"],
        capture_output=True,
        text=True,
        timeout=30,
        stdin=subprocess.DEVNULL,
        env=env,
    )
    assert remote.returncode == 255 and "forwarding failed" in remote.stderr.lower()
    if shutil.which("sftp"):
        options = [opt for opt in base[1:-2] if opt not in ("-p", str(served.port), "-T")]
        sftp = subprocess.run(
            ["sftp", "-P", str(served.port), *options, "-b", "-", "127.0.0.1"],
            input="ls\n",
            capture_output=True,
            text=True,
            timeout=30,
            env=env,
        )
        assert sftp.returncode != 0
    (tmp_path / "file").write_text("x")
    if shutil.which("scp"):
        options = [opt for opt in base[1:-2] if opt not in ("-p", str(served.port), "-T")]
        for legacy in ([], ["-O"]):  # the SFTP protocol, and the old exec of scp -t
            scp = subprocess.run(
                ["scp", *legacy, "-P", str(served.port), *options, str(tmp_path / "file"), "127.0.0.1:/tmp/x"],
                capture_output=True,
                text=True,
                timeout=30,
                stdin=subprocess.DEVNULL,
                env=env,
            )
            assert scp.returncode != 0


# -- the server as a process: killed, stopped, started again --------------------------


def resumes(port: int, key: Path, board: List[str], count: int) -> None:
    """``key``'s player connects and finds ``board`` after ``count`` moves, resumed; then quits."""
    player = SshPlayer(port, key)
    assert moves(player.shows("resumed your game")) == count
    assert player.board() == board
    player.type(b"q")
    assert player.ended() == 0


def test_a_sigkilled_server_loses_nothing_a_player_was_shown(tmp_path: Path, store_url: str) -> None:
    keys = [make_key(tmp_path / "one"), make_key(tmp_path / "two")]
    data = tmp_path / "server"
    server = ServeProcess(data, store_url)
    try:
        players = [SshPlayer(server.port, key, "play", "--no-animation", user=f"p{i}") for i, key in enumerate(keys)]
        for player in players:
            player.shows("Score")
        for _ in range(3):  # both at once
            for player in players:
                player.type(b"adws")
        for player in players:
            player.settle()
        shown = [(player.board(), moves(player.text())) for player in players]
        assert all(count > 0 for _, count in shown)
        assert server.kill(signal.SIGKILL) == -signal.SIGKILL
        for player in players:
            player.ended()
    finally:
        server.kill()
    again = ServeProcess(data, store_url)
    try:
        assert again.fingerprint == server.fingerprint  # the host key is kept
        for key, (board, count) in zip(keys, shown):
            resumes(again.port, key, board, count)
    finally:
        again.kill()


CONNECTION_LINE = (
    # The name the server knows the player by (issue 40 item 8): the second key asking for "player" is player2.
    r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ 127\.0\.0\.1 SHA256:\S{12} (?P<name>player2?) TERM=xterm-256color 80x24"
    r" \d+\.\d s, (?P<keys>\d+) keys, (?P<ended>.*)"
)


def test_sigterm_saves_every_game_tells_every_player_and_exits_0(tmp_path: Path, store_url: str) -> None:
    keys = [make_key(tmp_path / "one"), make_key(tmp_path / "two")]
    data = tmp_path / "server"
    server = ServeProcess(data, store_url)
    try:
        players = [SshPlayer(server.port, key, "play", "--no-animation") for key in keys]
        for player in players:
            player.shows("Score")
            player.type(b"adws")
            player.settle()
        shown = [(player.board(), moves(player.text())) for player in players]
        started = time.monotonic()
        server.process.send_signal(signal.SIGTERM)
        assert server.process.wait(10) == 0
        assert time.monotonic() - started < 5
        for player in players:
            player.shows("the server is stopping; your game is kept")
            player.ended()
        assert server.process.stderr is not None
        log = server.process.stderr.read().decode().splitlines()
        # A line a connection: when, where from, who (key, name), the terminal, how long, keys, how it ended.
        found = [re.fullmatch(CONNECTION_LINE, line) for line in log]
        sessions = [line for line in found if line is not None]
        assert len(sessions) == 2, log
        assert sorted(line["name"] for line in sessions) == ["player", "player2"], log
        assert all(line["keys"] == "4" and line["ended"] == "play: server stopping" for line in sessions)
    finally:
        server.kill()
    again = ServeProcess(data, store_url)
    try:
        for key, (board, count) in zip(keys, shown):
            resumes(again.port, key, board, count)
    finally:
        again.kill()
