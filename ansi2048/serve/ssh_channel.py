"""One SSH session channel (:class:`SshChannel`): asyncssh's callbacks
(the pty, the window's size, the keys), and the command it runs, found in
the one table (:mod:`.commands`), given the server's context and this
channel as its :class:`~.link.Client`, and nothing else.

The limits are layers every channel goes through, whatever it runs, or if
nothing ever does; applied here, to the channel, not by each command, so a
new command cannot forget one: the admission counted it before it opened
(:meth:`.connection.ClientConnection.open_session`); its input and output
go through its :class:`~.guard.ChannelGuard` (the input budget; idle,
unsent output, a stalled reader) from the moment it opens; the command
line's length is checked before it is read; and how it ended goes on its
connection's line (:class:`~.accounting.ConnectionLine`)."""

from __future__ import annotations

import asyncio
from contextlib import suppress
from typing import Dict, Mapping, Optional, Set, Tuple

import asyncssh

from ..loop.events import Resized
from ..options.parser import EXIT_ERROR, EXIT_OK, EXIT_USAGE
from .accounting import ConnectionLine
from .commands import read_command
from .context import ServeContext
from .game import SAID_STOPPING
from .guard import ChannelGuard, GuardedLink
from .limits import Breach
from .link import BREACH_SAID, Ended, Identity, Incoming, Link, Typed, for_terminal
from .names import printable
from .requests import CommandError
from .store.base import StoreError

__all__ = ["DEFAULT_WINDOW", "SshChannel", "clamp_window"]

# A window's size as a client says it is unbounded: a frame is never drawn
# larger than this (the board is at most 10x10 cells).
MAX_COLUMNS, MAX_LINES = 500, 200
DEFAULT_WINDOW = (80, 24)  # a pty request that gives no size
# The terminal a cast asked for without one is drawn for (see cast_env).
CAST_TERM = "xterm-256color"
# Window changes are applied at most this often (a flood of them is one redraw).
RESIZE_SECONDS = 0.05


def clamp_window(width: int, height: int) -> Tuple[int, int]:
    """A client's window size, as drawn: 0 (unknown) is the default, the
    rest bounded."""
    if width <= 0 or height <= 0:
        return DEFAULT_WINDOW
    return min(width, MAX_COLUMNS), min(height, MAX_LINES)


class SshChannel(asyncssh.SSHServerSession[bytes]):
    """One session channel (an SSH client's, or a browser's through
    :mod:`.web.socket`): its rules, and the command it runs, which is given
    the context and this channel as its :class:`~.link.Client`."""

    def __init__(
        self, context: ServeContext, identity: Identity, line: ConnectionLine, counted: Tuple[str, str]
    ) -> None:
        self._context = context
        self._identity = identity
        self._line = line  # the connection's line in the log, which its sessions fill in
        self._counted: Optional[Tuple[str, str]] = counted  # the admission's (address, identity), until it ends
        self._too_long = False  # the command line was longer than the limit
        self._resize_due = False  # a window change waits to be applied
        self.chan: Optional[asyncssh.SSHServerChannel[bytes]] = None
        self._link: Optional[GuardedLink] = None
        self._command: Optional[str] = None
        self._term: Optional[str] = None
        self._window = DEFAULT_WINDOW
        self._incoming: asyncio.Queue[Incoming] = asyncio.Queue()
        self._task: Optional[asyncio.Task[None]] = None
        self._ending_said = False  # how the session ended is in its connection's line
        # How the session ends if its client goes now (a cast: "client left"):
        # said at once, as the connection's line is written when it closes.
        self._if_lost: Optional[str] = None
        self._holders: Set[str] = set()  # the claims it took (Sessions.taken_over finds it by them)
        # The limits this channel goes through, from its opening, whatever it runs (serve/guard.py).
        self._guard = ChannelGuard(context.limits, context.clock, self._breach)

    # -- asyncssh's callbacks ---------------------------------------------------

    def connection_made(self, chan: asyncssh.SSHServerChannel[bytes]) -> None:
        self.chan = chan
        self._link = self._guard.attach(chan)

    def pty_requested(
        self, term_type: str, term_size: Tuple[int, int, int, int], term_modes: Mapping[int, int]
    ) -> bool:
        self._term = printable(term_type[:64]) or "dumb"
        self._window = clamp_window(term_size[0], term_size[1])
        self._line.term, self._line.window = self._term, self._window
        return True

    def shell_requested(self) -> bool:
        return True  # no shell: the game

    def exec_requested(self, command: str) -> bool:
        if len(command) > self._context.limits.command_chars:
            self._too_long, command = True, ""
        self._command = command
        return True

    def subsystem_requested(self, subsystem: str) -> bool:
        return False  # SFTP and any other

    def break_received(self, msec: int) -> bool:
        return False

    def session_started(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._serve())
        self._context.sessions.started(self)
        self._line.session_started()

    def data_received(self, data: bytes, datatype: Optional[int]) -> None:
        played = self._guard.typed(data)
        if played:
            self._incoming.put_nowait(Typed(played, self._context.clock()))  # when: the key-to-frame latency's start

    def terminal_size_changed(self, width: int, height: int, pixwidth: int, pixheight: int) -> None:
        # A flood of window changes is one redraw every RESIZE_SECONDS, at the last size.
        self._window = clamp_window(width, height)
        self._line.window = self._window
        if not self._resize_due:
            self._resize_due = True
            asyncio.get_running_loop().call_later(RESIZE_SECONDS, self._resize)

    def _resize(self) -> None:
        self._resize_due = False
        self._incoming.put_nowait(Resized(self._window))

    def eof_received(self) -> bool:
        # The client's input ended (``printf q | ssh -tt``): what came before
        # is played, then play ends as if the connection had dropped. True:
        # the channel stays open for the last frame (asyncssh would close it,
        # and the next write would fail).
        self._incoming.put_nowait(Ended())
        return True

    def connection_lost(self, exc: Optional[Exception]) -> None:
        self._guard.close()
        if self._if_lost is not None and not self._ending_said:
            self.ended(self._if_lost)
        self._incoming.put_nowait(Ended())
        if self._task is None:
            self._uncount()

    def _breach(self, breach: Breach) -> None:
        """The channel broke a rule (its guard said, once; a reader that
        stopped is disconnected already): what runs on it ends, saying why;
        a channel running nothing is closed. Either way its slots are given
        back as it closes."""
        if self.chan is None:
            return
        if self._task is None or self._task.done():
            self._line.endings.append(f"{'channel' if self._task is None else 'session'}: {breach.value}")
            with suppress(OSError, asyncssh.Error):
                self.chan.close()
        else:
            self._incoming.put_nowait(Ended(BREACH_SAID[breach], breach=breach))

    def _uncount(self) -> None:
        if self._counted is not None:
            self._context.admission.end_session(*self._counted)
            self._counted = None

    # -- the session --------------------------------------------------------------

    @property
    def task(self) -> Optional[asyncio.Task[None]]:
        """What the session runs, once started (it ends after the client has gone: saving)."""
        return self._task

    def stopping(self) -> Optional[asyncio.Task[None]]:
        """The server is stopping: end the game, saying so; its task."""
        self._incoming.put_nowait(Ended(SAID_STOPPING))
        return self._task

    async def _serve(self) -> None:
        assert self.chan is not None
        chan = self.chan
        status = EXIT_OK
        try:
            status = await self._command_or_game()
        except StoreError as error:
            self.say(f"ansi2048: error: {error}")
            self._context.log(f"store error: {error}")
            self.ended("store error")
            status = EXIT_ERROR
        except Exception as error:  # a bug must end this session only, said in one line each side
            self.say("ansi2048: error: the server failed; your game is kept up to what you saw")
            self._context.log(f"session failed: {type(error).__name__}: {error}")
            self.ended("failed")
            status = EXIT_ERROR
        finally:
            if not self._ending_said:  # whatever ended it, the connection's line says how
                self.ended("disconnected" if self.gone() else "ended")
            self._context.sessions.ended(self)
            self._uncount()
            self._line.session_done()
            if self._link is not None and not self._link.gone:
                with suppress(OSError, asyncssh.Error):
                    chan.exit(status)

    def ended(self, how: str) -> None:
        """How the session ended, for its connection's line in the log."""
        what = "play" if self._command is None else printable(self._command.split(" ", 1)[0][:16])
        self._line.endings.append(f"{what}: {how}")
        self._ending_said = True

    def refuse(self, line: str, how: str, status: int = EXIT_USAGE) -> int:
        """The command refused: ``line`` said to the client, ``how`` in the
        log; its exit status."""
        self.say(f"ansi2048: {line}")
        self.ended(how)
        return status

    def say(self, line: str, stderr: bool = True) -> None:
        """One line to the client (CR LF on a terminal, whose client is raw)."""
        assert self.chan is not None
        text = for_terminal(line + "\n") if self._term is not None else line + "\n"
        data = text.encode("utf-8", "replace")
        with suppress(OSError, asyncssh.Error):
            if stderr:
                self.chan.write_stderr(data)
            else:
                self.chan.write(data)

    async def _command_or_game(self) -> int:
        if self._too_long:
            self.say(f"ansi2048: the command is too long (at most {self._context.limits.command_chars} characters)")
            self.ended("command too long")
            return EXIT_USAGE
        try:
            command, request = read_command(self._command)
        except CommandError as error:
            self.say(f"ansi2048: {error}")
            self.ended("bad command")
            return EXIT_USAGE
        # The log says how a command ended once it has: a refused id is
        # "refused", not "done" (each command refuses by refuse), a game
        # says how it ended itself.
        status = await command.run(self._context, self, request)
        if not self._ending_said:
            self.ended("done" if status == EXIT_OK else "failed")
        return status

    # -- the Client a command is given (link.Client) --------------------------------------

    @property
    def identity(self) -> Identity:
        return self._identity

    @property
    def source(self) -> str:
        return self._line.source

    @property
    def link(self) -> Link:
        assert self._link is not None
        return self._link

    @property
    def incoming(self) -> asyncio.Queue[Incoming]:
        return self._incoming

    @property
    def window(self) -> Tuple[int, int]:
        return self._window

    @property
    def holders(self) -> Set[str]:
        """The claims it took (Sessions.taken_over finds it by them)."""
        return self._holders

    def gone(self) -> bool:
        return self._link is None or self._link.gone

    def if_lost(self, how: Optional[str]) -> None:
        self._if_lost = how

    def claimed(self, holder: str) -> None:
        self._holders.add(holder)

    def played(self, keys: int) -> None:
        self._line.keys += keys

    def stalls_after(self, seconds: float) -> None:
        self._guard.stalls_after(seconds)

    def connection(self) -> object:
        return self.chan.get_extra_info("connection") if self.chan is not None else None

    @property
    def has_terminal(self) -> bool:
        """The client asked for a pty (``ssh -t``)."""
        return self._term is not None

    @property
    def command(self) -> Optional[str]:
        """The command the client asked for (None: a shell, the game)."""
        return self._command

    def client_env(self) -> Dict[str, str]:
        """What the client's environment says of its terminal: TERM (from the
        pty request), and COLORTERM and NO_COLOR when it sends them."""
        assert self.chan is not None
        sent: Mapping[str, str] = self.chan.get_environment()  # ALLOWED_ENV's only
        env = {name: printable(str(sent[name])) for name in ("COLORTERM", "NO_COLOR") if name in sent}
        env["TERM"] = self._term or "dumb"
        return env

    def cast_env(self) -> Dict[str, str]:
        """The terminal a cast (``cast [ID]``) is drawn for: the client's
        when it has one (``ssh -t``), else CAST_TERM. Without a pty, "dumb"
        says what this channel can show, not what the file will be played
        in later (asciinema, agg: a terminal): it drew the frames without
        colour, each under the last, for ``ssh HOST cast > game.cast`` as
        the help and the README give it."""
        env = self.client_env()
        if self._term is None:
            env["TERM"] = CAST_TERM
        return env
