"""Every SSH client a player may bring, from Debian's packages, plays the
server: OpenSSH's ``ssh``, PuTTY's ``plink`` (putty-tools) and Dropbear's
``dbclient`` (dropbear-bin), each with a key (made by ssh-keygen, converted
by ``puttygen`` and ``dropbearconvert``) and without one (a guest): it
connects, gets a board, moves, quits with the game kept, and runs
``stats``. And OpenSSH still negotiates the key exchange it did before the
guessed-packet fix (serve/kexguess.py). A missing client skips its tests on
a developer's machine and fails them in CI (CI=true: tests/databases.py).

Nothing of the developer's is read: each client runs with a home of the
test's own (dbclient keeps its known hosts there), OpenSSH with ``-F
/dev/null``, plink with the host key's fingerprint given (``-hostkey``)
and no agent."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Iterator, List, Optional

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the server is for POSIX hosts")

pytest.importorskip("asyncssh", reason="the server's tests need ansi2048[serve]", exc_type=ImportError)

from ansi2048.serve.play_commands import GUEST_NOTE  # noqa: E402

from .conftest import child_env  # noqa: E402
from .databases import skip_outside_ci  # noqa: E402
from .serve_support import MemoryStore, ServerThread, make_key, ssh_command  # noqa: E402
from .test_serve_ssh import SshPlayer, moves  # noqa: E402

# What each client needs, and the Debian package it comes in.
CLIENTS = {
    "openssh": (("ssh", "ssh-keygen"), "openssh-client"),
    "plink": (("plink", "puttygen"), "putty-tools"),
    "dbclient": (("dbclient", "dropbearconvert"), "dropbear-bin"),
}
USER = "player"


@pytest.fixture
def served(tmp_path: Path) -> Iterator[ServerThread]:
    (tmp_path / "server").mkdir()
    with ServerThread(tmp_path / "server", MemoryStore(), seeds=[21]) as server:
        yield server


def needs(request: pytest.FixtureRequest, client: str) -> None:
    programs, package = CLIENTS[client]
    missing = [program for program in ("ssh-keygen", *programs) if shutil.which(program) is None]
    if missing:
        skip_outside_ci(request, f"the {client} client", f"needs {', '.join(missing)} (Debian's {package})")


def client_key(client: str, tmp_path: Path) -> Path:
    """A key made by ssh-keygen, in the form ``client`` reads."""
    key = make_key(tmp_path / "id_ed25519")
    if client == "plink":
        converted = tmp_path / "id_ed25519.ppk"
        subprocess.run(["puttygen", str(key), "-O", "private", "-o", str(converted)], check=True, env=child_env())
        return converted
    if client == "dbclient":
        converted = tmp_path / "id_dropbear"
        subprocess.run(
            ["dropbearconvert", "openssh", "dropbear", str(key), str(converted)],
            check=True,
            capture_output=True,
            env=child_env(),
        )
        return converted
    return key


def command(client: str, served: ServerThread, key: Optional[Path], *args: str, tty: bool) -> List[str]:
    """``client``'s command line to the server as :data:`USER`, with ``key`` or none."""
    port = str(served.port)
    if client == "openssh":
        return ssh_command(served.port, key, *args, user=USER, tty=tty)
    identity = ["-i", str(key)] if key is not None else []
    pty = ["-t"] if tty else ["-T"]
    if client == "plink":
        fingerprint = served.key.get_fingerprint("sha256")
        # -batch: no question is asked (a host key it cannot check ends the connection instead).
        options = ["-ssh", "-batch", "-noagent", "-no-antispoof", "-P", port, "-l", USER, "-hostkey", fingerprint]
        return ["plink", *options, *identity, *pty, "127.0.0.1", *args]
    # -y: accept the host key unseen before, kept in the test's own ~/.ssh/known_hosts.
    return ["dbclient", "-y", "-p", port, "-l", USER, *identity, *pty, "127.0.0.1", *args]


def fingerprint(key: Path) -> str:
    """The key's SHA256 fingerprint, as ssh-keygen reads it."""
    shown = subprocess.run(["ssh-keygen", "-lf", str(key)], capture_output=True, text=True, check=True, env=child_env())
    return shown.stdout.split()[1]


@pytest.mark.parametrize("keyed", [True, False], ids=["keyed", "keyless"])
@pytest.mark.parametrize("client", sorted(CLIENTS))
def test_every_client_plays_quits_with_the_game_kept_and_runs_a_command(
    client: str, keyed: bool, served: ServerThread, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    needs(request, client)
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home)}
    key = client_key(client, tmp_path) if keyed else None

    player = SshPlayer(served.port, None, command=command(client, served, key, tty=True), env=env)
    player.shows("Score")
    if not keyed:
        player.shows(GUEST_NOTE)
    player.type(b"adwsadws")
    player.settle()
    assert moves(player.text()) > 0
    player.type(b"q")
    assert player.ended() == 0
    store: MemoryStore = served.store  # type: ignore[assignment]
    if keyed:
        assert "game kept for next time" in player.text()
        # The player is the key's (ssh-keygen's fingerprint of the key before it was converted).
        (known,) = store.players.values()
        assert known.fingerprint == fingerprint(tmp_path / "id_ed25519")
        assert [player_id for player_id, _ in store.games] == [known.id]
    else:
        assert "a guest's game is not kept" in player.text()
        assert not store.players and not store.games

    done = subprocess.run(
        command(client, served, key, "stats", tty=False),
        capture_output=True,
        text=True,
        timeout=30,
        stdin=subprocess.DEVNULL,
        env=child_env(env),
    )
    assert done.returncode == 0, done.stderr
    assert "No finished games yet." in done.stdout
    assert ("as a guest" in done.stdout) is not keyed


def kex_lines(output: str, marker: str) -> List[str]:
    """The key-exchange algorithms ``ssh -vv`` lists after ``marker`` (its
    own proposal, or the server's)."""
    found = re.search(re.escape(marker) + r".*?\ndebug2: KEX algorithms: (\S+)", output, re.DOTALL)
    assert found, output
    return found.group(1).split(",")


def test_openssh_negotiates_the_key_exchange_it_did_before(
    served: ServerThread, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """The server still prefers the post-quantum hybrid, curve25519 after it
    (the fix for Dropbear changed no order), and OpenSSH gets the first of
    its own preferences that the server offers (RFC 4253 7.1): here, OpenSSH
    9.2 without ML-KEM, curve25519-sha256; 9.9 and later, mlkem768x25519."""
    needs(request, "openssh")
    verbose = [
        "LogLevel=DEBUG2" if option == "LogLevel=ERROR" else option
        for option in ssh_command(served.port, make_key(tmp_path / "key"), "help", tty=False)
    ]
    done = subprocess.run(
        verbose,
        capture_output=True,
        text=True,
        timeout=30,
        stdin=subprocess.DEVNULL,
        env=child_env(),
    )
    assert done.returncode == 0, done.stderr
    ours = kex_lines(done.stderr, "local client KEXINIT proposal")
    offered = kex_lines(done.stderr, "peer server KEXINIT proposal")
    assert offered[0] == "mlkem768x25519-sha256"
    assert "curve25519-sha256" in offered
    negotiated = re.search(r"debug1: kex: algorithm: (\S+)", done.stderr)
    assert negotiated, done.stderr
    expected = next(name for name in ours if name in offered)
    assert negotiated.group(1) == expected
    assert expected in ("mlkem768x25519-sha256", "sntrup761x25519-sha512@openssh.com", "curve25519-sha256")
    if "mlkem768x25519-sha256" not in ours and not any(name.startswith("sntrup") for name in offered):
        assert expected == "curve25519-sha256"
