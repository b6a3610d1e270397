"""One SSH session channel (:class:`SessionChannel`): asyncssh's callbacks
(the pty, the window's size, the keys, within the input budget), and the
command the session runs: the game with a terminal (:mod:`.session_games`),
or one of the commands (:mod:`.commands`; run by :mod:`.session_commands`),
and nothing else. What the session's tasks see of it is :mod:`.channel`'s.

Every channel is under its rules (:class:`~.limits.ChannelRules`: idle,
unsent output, a stalled reader) from the moment it opens, whatever runs on
it, or if nothing ever does: they are applied here, to the channel, not by
each command, so a new command cannot forget them."""

from __future__ import annotations

import asyncio
from contextlib import suppress
from typing import TYPE_CHECKING, Callable, Dict, Mapping, Optional, Set, Tuple

import asyncssh

from ..loop.events import Resized
from ..options.parser import EXIT_ERROR, EXIT_OK, EXIT_USAGE
from ..render.style import ColorDepth, choose_depth
from . import session_commands, session_games
from .channel import BREACH_SAID, Ended, Incoming, Typed
from .commands import (
    COLOR_DEPTHS,
    NEEDS_TERMINAL,
    NO_TERMINAL,
    Command,
    CommandError,
    Daily,
    Help,
    KeysRequest,
    Leaderboard,
    LinkRequest,
    PlayRequest,
    Replay,
    Stats,
    Watch,
    help_text,
    parse_command,
    printable,
)
from .game import SAID_STOPPING
from .limits import HELD_POLL_SECONDS, Breach, ChannelRules, InputBudget
from .store.base import Player, StoreError

if TYPE_CHECKING:
    from .connection import ClientConnection, Identity  # which imports this module, to open sessions
    from .server import GameServer  # likewise, through the connection

__all__ = ["DEFAULT_WINDOW", "SessionChannel", "clamp_window"]

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


class _Link:
    """What runs on the session writes to (see :class:`.channel.Link`):
    each write is looked at by the channel's rules (``written``)."""

    def __init__(
        self, chan: asyncssh.SSHServerChannel[bytes], written: Callable[[int], None], rested: Callable[[], None]
    ) -> None:
        self._chan = chan
        self._written = written
        self.rested = rested
        self.gone = False

    def write(self, data: bytes) -> None:
        if self.gone:
            return
        before = self.unsent()
        try:
            self._chan.write(data)
        except (OSError, asyncssh.Error):
            self.gone = True
            return
        self._written(before)

    def unsent(self) -> int:
        return int(self._chan.get_write_buffer_size())

    def drop(self) -> None:
        if not self.gone:
            self.gone = True
            self._chan.get_extra_info("connection").abort()


class SessionChannel(asyncssh.SSHServerSession[bytes]):
    """One session channel: a game with a terminal, or a command without."""

    def __init__(
        self, server: GameServer, identity: Identity, connection: ClientConnection, counted: Tuple[str, str]
    ) -> None:
        self.server = server
        self.identity = identity
        self.connection = connection
        self._counted: Optional[Tuple[str, str]] = counted  # the admission's (address, identity), until it ends
        self._input = InputBudget(server.limits.input_burst, server.limits.input_rate, server.clock())
        self._too_long = False  # the command line was longer than the limit
        self._resize_due = False  # a window change waits to be applied
        self.chan: Optional[asyncssh.SSHServerChannel[bytes]] = None
        self.link: Optional[_Link] = None
        self._command: Optional[str] = None
        self._term: Optional[str] = None
        self.window = DEFAULT_WINDOW
        self.incoming: asyncio.Queue[Incoming] = asyncio.Queue()
        self._task: Optional[asyncio.Task[None]] = None
        self._ending_said = False  # how the session ended is in its connection's line
        # How the session ends if its client goes now (a cast: "client left"):
        # said at once, as the connection's line is written when it closes.
        self.if_lost: Optional[str] = None
        self.holders: Set[str] = set()  # the claims it took (server.taken_over finds it by them)
        # Idle, unsent and stalled-reader rules of this channel, from its opening (_look).
        self.rules = ChannelRules(server.limits, server.clock())
        self._look_timer: Optional[asyncio.TimerHandle] = None
        self._breached = False

    # -- asyncssh's callbacks ---------------------------------------------------

    def connection_made(self, chan: asyncssh.SSHServerChannel[bytes]) -> None:
        self.chan = chan
        self.link = _Link(chan, self._written, lambda: self.rules.rested(self.server.clock()))
        self._look()  # the channel's rules apply from now, whatever it asks for (or never does)

    def pty_requested(
        self, term_type: str, term_size: Tuple[int, int, int, int], term_modes: Mapping[int, int]
    ) -> bool:
        self._term = printable(term_type[:64]) or "dumb"
        self.window = clamp_window(term_size[0], term_size[1])
        self.connection.term, self.connection.window = self._term, self.window
        return True

    def shell_requested(self) -> bool:
        return True  # no shell: the game

    def exec_requested(self, command: str) -> bool:
        if len(command) > self.server.limits.command_chars:
            self._too_long, command = True, ""
        self._command = command
        return True

    def subsystem_requested(self, subsystem: str) -> bool:
        return False  # SFTP and any other

    def break_received(self, msec: int) -> bool:
        return False

    def session_started(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._serve())
        self.server.sessions.add(self)
        self.connection.running += 1

    def data_received(self, data: bytes, datatype: Optional[int]) -> None:
        now = self.server.clock()
        self.rules.typed(now)
        played = self._input.admit(data, now)
        if played:
            self.incoming.put_nowait(Typed(played, now))

    def terminal_size_changed(self, width: int, height: int, pixwidth: int, pixheight: int) -> None:
        # A flood of window changes is one redraw every RESIZE_SECONDS, at the last size.
        self.window = clamp_window(width, height)
        self.connection.window = self.window
        if not self._resize_due:
            self._resize_due = True
            asyncio.get_running_loop().call_later(RESIZE_SECONDS, self._resize)

    def _resize(self) -> None:
        self._resize_due = False
        self.incoming.put_nowait(Resized(self.window))

    def eof_received(self) -> bool:
        # The client's input ended (``printf q | ssh -tt``): what came before
        # is played, then play ends as if the connection had dropped. True:
        # the channel stays open for the last frame (asyncssh would close it,
        # and the next write would fail).
        self.incoming.put_nowait(Ended())
        return True

    def connection_lost(self, exc: Optional[Exception]) -> None:
        if self._look_timer is not None:
            self._look_timer.cancel()
            self._look_timer = None
        if self.link is not None:
            self.link.gone = True
        if self.if_lost is not None and not self._ending_said:
            self.ended(self.if_lost)
        self.incoming.put_nowait(Ended())
        if self._task is None:
            self._uncount()

    # -- the channel's rules (limits.ChannelRules), on every channel -----------------

    def _look(self) -> None:
        """The rules looked at now; then again when they next may break."""
        self._look_timer = None
        if self.link is None or self.link.gone or self._breached:
            return
        now, unsent = self.server.clock(), self.link.unsent()
        breach = self.rules.breach(now, unsent)
        if breach is not None:
            self._breach(breach)
            return
        delay = max(0.0, self.rules.next_look(now, unsent) - now)
        self._look_timer = asyncio.get_running_loop().call_later(delay, self._look)

    def _written(self, before: int) -> None:
        """Output went out (``before``: bytes unsent until then): over the
        unsent limit, the reader is dropped at once; else held output is
        looked at soon (it may stall)."""
        assert self.link is not None
        unsent = self.link.unsent()
        self.rules.wrote(self.server.clock(), before, unsent)
        if unsent > self.rules.unsent_bytes:
            self._breach(Breach.SLOW)
        elif unsent and self._look_timer is not None and self._look_timer.when() > self._soon():
            self._look_timer.cancel()
            self._look()

    def _soon(self) -> float:
        return asyncio.get_running_loop().time() + HELD_POLL_SECONDS

    def _breach(self, breach: Breach) -> None:
        """The channel broke a rule: what runs on it ends, saying why (a
        reader that stopped is disconnected at once: what it holds unsent
        goes); a channel running nothing is closed. Either way its slots
        are given back as it closes."""
        if self._breached or self.link is None or self.chan is None:
            return
        self._breached = True
        if self._look_timer is not None:
            self._look_timer.cancel()
            self._look_timer = None
        if breach is Breach.SLOW:
            self.link.drop()
        if self._task is None or self._task.done():
            self.connection.endings.append(f"{'channel' if self._task is None else 'session'}: {breach.value}")
            with suppress(OSError, asyncssh.Error):
                self.chan.close()
        else:
            self.incoming.put_nowait(Ended(BREACH_SAID[breach], breach=breach))

    def _uncount(self) -> None:
        if self._counted is not None:
            self.server.admission.end_session(*self._counted)
            self._counted = None

    # -- the session --------------------------------------------------------------

    @property
    def task(self) -> Optional[asyncio.Task[None]]:
        """What the session runs, once started (it ends after the client has gone: saving)."""
        return self._task

    def stopping(self) -> Optional[asyncio.Task[None]]:
        """The server is stopping: end the game, saying so; its task."""
        self.incoming.put_nowait(Ended(SAID_STOPPING))
        return self._task

    async def _serve(self) -> None:
        assert self.chan is not None
        chan = self.chan
        status = EXIT_OK
        try:
            status = await self._command_or_game()
        except StoreError as error:
            self.say(f"ansi2048: error: {error}")
            self.server.log(f"store error: {error}")
            self.ended("store error")
            status = EXIT_ERROR
        except Exception as error:  # a bug must end this session only, said in one line each side
            self.say("ansi2048: error: the server failed; your game is kept up to what you saw")
            self.server.log(f"session failed: {type(error).__name__}: {error}")
            self.ended("failed")
            status = EXIT_ERROR
        finally:
            if not self._ending_said:  # whatever ended it, the connection's line says how
                self.ended("disconnected" if self.link is None or self.link.gone else "ended")
            self.server.sessions.discard(self)
            self._uncount()
            self.connection.session_done()
            if self.link is not None and not self.link.gone:
                with suppress(OSError, asyncssh.Error):
                    chan.exit(status)

    def ended(self, how: str) -> None:
        """How the session ended, for its connection's line in the log."""
        what = "play" if self._command is None else printable(self._command.split(" ", 1)[0][:16])
        self.connection.endings.append(f"{what}: {how}")
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
        data = (line + ("\r\n" if self._term is not None else "\n")).encode("utf-8", "replace")
        with suppress(OSError, asyncssh.Error):
            if stderr:
                self.chan.write_stderr(data)
            else:
                self.chan.write(data)

    async def _command_or_game(self) -> int:
        if self._too_long:
            self.say(f"ansi2048: the command is too long (at most {self.server.limits.command_chars} characters)")
            self.ended("command too long")
            return EXIT_USAGE
        try:
            command = parse_command(self._command)
        except CommandError as error:
            self.say(f"ansi2048: {error}")
            self.ended("bad command")
            return EXIT_USAGE
        if isinstance(command, (PlayRequest, Daily)) and self._term is not None:
            if isinstance(command, Daily):
                await session_games.play_daily(self)
            else:
                await session_games.play(self, command)
            return EXIT_OK  # a game says how it ended itself (session_games.run_game)
        # The log says how a command ended once it has: a refused id is
        # "refused", not "done" (each command refuses by session.refuse).
        status = await self._run_command(command)
        if not self._ending_said:
            self.ended("done" if status == EXIT_OK else "failed")
        return status

    async def _run_command(self, command: Command) -> int:
        """A command other than a game on a terminal; its exit status. What
        a command names (an id, a player) is checked first, and refused with
        EXIT_USAGE, before whether it needs a terminal
        (:mod:`.session_commands`)."""
        if isinstance(command, Help):
            for line in help_text(self.server.port).splitlines():
                self.say(line, stderr=False)
            return EXIT_OK
        if isinstance(command, Stats):
            return await session_commands.stats_command(self, command.json)
        if isinstance(command, (Leaderboard, KeysRequest)):
            return await session_commands.daily_command(self, command)
        if isinstance(command, Replay):
            return await session_commands.replay_command(self, command)
        if isinstance(command, Watch):
            return await session_commands.watch_command(self, command)
        if isinstance(command, LinkRequest):
            from .web.link_commands import link_command  # the browser door's (no aiohttp in it)

            return await link_command(self, command)
        return self.refuse(NEEDS_TERMINAL, NO_TERMINAL)  # play and daily

    @property
    def command(self) -> Optional[str]:
        """The command the client asked for (None: a shell, the game)."""
        return self._command

    @property
    def has_terminal(self) -> bool:
        """The client asked for a pty (``ssh -t``)."""
        return self._term is not None

    async def player(self) -> Optional[Player]:
        """The player the session's key names; None for a guest."""
        identity = self.identity
        if identity.fingerprint is None:
            return None
        return await self.server.store.player(identity.fingerprint, identity.name)

    def color_depth(self, chosen: Optional[str], env: Dict[str, str]) -> ColorDepth:
        """The colour depth frames are drawn in: the player's choice
        (``chosen``), else what the client's terminal (``env``) says."""
        return COLOR_DEPTHS[chosen] if chosen in COLOR_DEPTHS else choose_depth("auto", True, env)

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
