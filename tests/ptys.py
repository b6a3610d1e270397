"""Programs on a pseudo-terminal, for the tests that drive one as a user's
terminal would: the one way the suite starts a program on a pty.

Why not ``pexpect.spawn``: it forks with :func:`pty.fork` and runs Python code
in the child before exec. The suite runs in pytest-xdist workers, which have a
thread of their own (execnet's I/O), and a forked copy of a threaded process
that runs Python code can hang for good on a lock another thread held at the
fork (Python 3.12 warns of it on every such fork). Here no Python code runs
between fork and exec: :class:`subprocess.Popen` forks and execs in C, in a new
session (``start_new_session``), with the pty's slave side as the three
standard streams. What it execs first is a fresh interpreter (a new image, one
thread: nothing inherited to deadlock on) that makes that pty its controlling
terminal and execs the program in its place, same pid. The program is then the
session leader, its process group the terminal's foreground group: Ctrl-C and
Ctrl-Z typed on the pty signal it, a resize sends it SIGWINCH, and closing the
master hangs it up, as a terminal window does.

The test drives the master side with pexpect's ``expect``/``send`` over a file
descriptor (:class:`pexpect.fdpexpect.fdspawn`). :class:`GameInShell` runs the
game that way under ``sh``, which records the terminal's modes before and after.

Imports on every platform (modules collected on Windows import it); starting a
program needs POSIX, and the tests that do are marked ``posix``."""

from __future__ import annotations

import os
import shutil
import signal
import struct
import subprocess
import sys
import time
from contextlib import suppress
from pathlib import Path
from typing import List, Mapping, Optional, Sequence, Tuple, Union

import pexpect
from pexpect.fdpexpect import fdspawn

from .conftest import game_env
from .console import HEIGHT, WIDTH
from .screen import FRAME_END_PATTERN

if sys.platform != "win32":
    import fcntl
    import termios

# Run by a fresh interpreter on the pty (-I -S: nothing from the environment
# or site-packages), argv[1:] being the program. TIOCSCTTY: a session leader
# takes the terminal on its stdin as its controlling terminal, and its group
# becomes the foreground group. Python ignores SIGPIPE and SIGXFSZ for itself,
# and an ignored signal stays ignored across exec: the program gets them back
# at their defaults, as from a shell (and as subprocess does).
_TAKE_THE_TERMINAL_AND_EXEC = """\
import fcntl, os, signal, sys, termios
fcntl.ioctl(0, termios.TIOCSCTTY, 0)
for name in ("SIGPIPE", "SIGXFSZ"):
    if hasattr(signal, name):
        signal.signal(getattr(signal, name), signal.SIG_DFL)
os.execv(sys.argv[1], sys.argv[1:])
"""

# How long close() lets a hung-up program end by itself before it kills it.
_GRACE = 1.0

_running: List[PtyChild] = []  # started and not closed yet: see end_all()


def _winsize(rows: int, cols: int) -> bytes:
    return struct.pack("HHHH", rows, cols, 0, 0)


class PtyChild(fdspawn):  # type: ignore[misc]  # pexpect has no type hints
    """A program on a pty of its own: ``expect``, ``before``, ``after``,
    ``match``, ``read``, ``send``, ``sendline`` (pexpect's, over the master),
    ``sendintr``, ``setwinsize``, ``pid``, ``isalive``, ``close``, and
    ``exitstatus`` and ``signalstatus`` once it has ended."""

    def __init__(
        self,
        master: int,
        process: subprocess.Popen[bytes],
        name: str,
        timeout: Optional[float],
        maxread: int,
        encoding: Optional[str],
    ) -> None:
        super().__init__(master, timeout=timeout, maxread=maxread, encoding=encoding)
        self.process = process
        self.pid = process.pid
        self.name = f"<{name} on a pty, pid {process.pid}>"  # what pexpect's errors name

    def send(self, s: Union[str, bytes]) -> int:
        # As pexpect.spawn does (fdspawn does not): wait delaybeforesend
        # (0.05 s unless a test sets None) before each write.
        if self.delaybeforesend is not None:
            time.sleep(self.delaybeforesend)
        written: int = super().send(s)
        return written

    def sendintr(self) -> None:
        """Types the terminal's interrupt character (Ctrl-C unless stty changed it)."""
        intr = termios.tcgetattr(self.child_fd)[6][termios.VINTR]
        self.send(intr if isinstance(intr, bytes) else bytes([intr]))

    def setwinsize(self, rows: int, cols: int) -> None:
        """Resizes the terminal: the kernel sends SIGWINCH to its foreground group."""
        fcntl.ioctl(self.child_fd, termios.TIOCSWINSZ, _winsize(rows, cols))

    def isalive(self) -> bool:
        """Whether the program runs still; once it has ended, ``exitstatus``
        (it exited) or ``signalstatus`` (a signal ended it) says how."""
        code = self.process.poll()
        if code is not None:
            self.exitstatus: Optional[int] = code if code >= 0 else None
            self.signalstatus: Optional[int] = -code if code < 0 else None
        return code is None

    def close(self, force: bool = True) -> None:
        """Closes the master, which hangs the terminal up as a closed window
        does (the session leader gets SIGHUP), and waits for the program to
        end: ``force`` kills its process group if it has not within
        :data:`_GRACE` seconds; without it, a program that does not end
        within ``timeout`` is an error."""
        if self.child_fd != -1:
            super().close()
        try:
            self.process.wait(_GRACE if force else self.timeout)
        except subprocess.TimeoutExpired:
            if not force:
                raise  # still among the running: end_all() kills it
            # Not reaped yet, so its pid (the group's id) is not anyone else's.
            with suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        if self in _running:
            _running.remove(self)
        self.isalive()


def spawn(
    command: str,
    args: Sequence[str] = (),
    *,
    env: Optional[Mapping[str, str]] = None,
    cwd: Optional[str] = None,
    dimensions: Tuple[int, int] = (24, 80),
    timeout: Optional[float] = 30,
    maxread: int = 2000,
    encoding: Optional[str] = None,
) -> PtyChild:
    """Starts ``command ARGS`` (found on the ``PATH`` of ``env``) on a new
    pty of ``dimensions`` (rows, columns), as its controlling terminal, with
    ``env`` (else this process's environment); ``timeout``, ``maxread`` and
    ``encoding`` are pexpect's. The child is closed at the end of the test
    if the test did not close it (:func:`end_all`)."""
    path = shutil.which(command, path=(env if env is not None else os.environ).get("PATH"))
    if path is None:
        raise FileNotFoundError(f"{command}: not found on the PATH")
    master, slave = os.openpty()
    try:
        fcntl.ioctl(slave, termios.TIOCSWINSZ, _winsize(*dimensions))
        process = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _TAKE_THE_TERMINAL_AND_EXEC, path, *args],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=None if env is None else dict(env),
            cwd=cwd,
            start_new_session=True,
        )
    except BaseException:
        os.close(master)
        raise
    finally:
        # The child has its copies: the master reads EOF once the last of
        # them is closed.
        os.close(slave)
    child = PtyChild(master, process, " ".join([command, *args]), timeout, maxread, encoding)
    _running.append(child)
    return child


def job_control_shell(data: Path) -> PtyChild:
    """An interactive bash (no rc files, prompt "$ ") with job control, the
    game's environment and data in ``data``, at its first prompt: for Ctrl-Z,
    ``fg`` and ``bg`` as a player types them."""
    shell = spawn(
        "/bin/bash",
        ["--norc", "--noprofile", "-i"],
        env=dict(game_env(data), PS1="$ "),
        dimensions=(HEIGHT, WIDTH),
        timeout=20,
    )
    shell.delaybeforesend = None
    shell.expect_exact("$ ")
    return shell


def end_all() -> None:
    """Closes (and ends) every child a test started and left running."""
    while _running:
        _running[-1].close(force=True)


class GameInShell:
    """``ansi2048 ARGS`` under ``sh`` in a pty; sh records ``stty -g`` before
    and after, and the game's exit status."""

    def __init__(self, tmp: Path, args: List[str], data: Path, width: int = WIDTH, height: int = HEIGHT) -> None:
        self.before = tmp / "stty.before"
        self.after = tmp / "stty.after"
        script = f'stty -g > "{self.before}"; "$@"; echo "EXIT=$?"; stty -g > "{self.after}"; echo DONE; sleep 0.2'
        self.child = spawn(
            "/bin/sh",
            ["-c", script, "sh", sys.executable, "-m", "ansi2048", *args],
            env=game_env(data),
            dimensions=(height, width),
            timeout=20,
            maxread=1 << 16,
        )
        self.child.delaybeforesend = None
        self.output = b""
        self.width, self.height = width, height

    def frame(self) -> None:
        """Wait for a complete frame."""
        self.child.expect(FRAME_END_PATTERN)
        self.output += self.child.before + self.child.after

    def game_pid(self) -> int:
        """The python process under sh."""
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            children = (
                Path(f"/proc/{self.child.pid}/task/{self.child.pid}/children").read_text(encoding="utf-8").split()
            )
            if children:
                return int(children[0])
            time.sleep(0.01)
        raise AssertionError("the game process did not start")

    def finish(self) -> Tuple[int, bytes]:
        """Wait for the end; (exit status, everything the screen received)."""
        self.child.expect("DONE")
        self.output += self.child.before
        status = int(self.output.rsplit(b"EXIT=", 1)[1].split()[0])
        self.child.expect(pexpect.EOF)
        return status, self.output

    def stty_unchanged(self) -> bool:
        return self.before.read_text(encoding="utf-8") == self.after.read_text(encoding="utf-8") != ""
