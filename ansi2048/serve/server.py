"""The SSH server (asyncssh): who connects, what they may ask, and their games.

Identity is the public key a client authenticates with (its SHA256
fingerprint): every key is accepted, the first one the client offers is the
one it signs with and the one that names the player. A client without a key
gets in through keyboard-interactive with no prompt, as a guest whose game is
not kept. The display name is the SSH user name reduced (:mod:`.names`).

A session runs the game or one of the commands without a terminal
(:mod:`.commands`), and nothing else: shells run the game, and subsystems
(SFTP, ...), SCP, port forwarding either way, agent and X11 forwarding are
refused. asyncssh's defaults that a game must not keep are turned off: the
line editor (keys would come a line at a time) and agent forwarding.

SIGTERM or SIGINT: every game ends as if its player had left (saved, its
best and history written), each player is told on one line that the server
is stopping and their game is kept, and the server exits 0."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import time
from contextlib import suppress
from dataclasses import dataclass, replace
from itertools import count
from typing import IO, TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Set, Tuple, Union

import asyncssh

from ..game.engine import default_goal
from ..game.limits import DEFAULT_SIZE
from ..loop.events import Resized, Warned
from ..loop.state import Play, Settings
from ..options.context import Options
from ..options.parser import EXIT_ERROR, EXIT_OK, EXIT_USAGE
from ..play.screen import Screen, wants_motion
from ..records.history import board_stats, config_key, stats_document
from ..render.stats import stats_lines
from ..render.style import ColorDepth, choose_depth
from ..render.themes import THEMES
from .commands import (
    COLOR_DEPTHS,
    NEEDS_TERMINAL,
    CommandError,
    Daily,
    Help,
    KeysRequest,
    Leaderboard,
    PlayRequest,
    Replay,
    Stats,
    Watch,
    help_text,
    parse_command,
    printable,
)
from .daily import DAILY
from .game import (
    CLAIM_SECONDS,
    SAID_IDLE,
    SAID_STOPPING,
    SAID_TAKEN_OVER,
    SAID_TOO_SLOW,
    SAID_UNSAVED,
    Ended,
    GuestKeeping,
    Incoming,
    Keeping,
    PlayerGame,
    StoreKeeping,
    Typed,
    open_game,
)
from .limits import (
    ALLOWED_ENV,
    DEFAULT_LIMITS,
    Admission,
    InputBudget,
    Limits,
    Refusal,
    capped_by_files,
    short_fingerprint,
)
from .names import display_name
from .pool import AIPool
from .ranked import (
    DEFAULT_PER_ADDRESS,
    KeysRefused,
    OpenedDaily,
    daily_secret,
    keys_for,
    leaderboard_output,
    open_daily,
)
from .store import open_store
from .store.base import Player, Prefs, Store, StoreError
from .watch import DEFAULT_STALL_SECONDS, GUEST_NAME, LiveGames, PublishingScreen, Viewer, WatchFull, watchers_note

if TYPE_CHECKING:
    from .cli import ServeOptions  # which imports this module, when it runs the server

__all__ = ["HOST_KEY_FILE", "GameServer", "host_key", "run"]

HOST_KEY_FILE = "ssh_host_ed25519_key"
# A window's size as a client says it is unbounded: a frame is never drawn
# larger than this (the board is at most 10x10 cells).
MAX_COLUMNS, MAX_LINES = 500, 200
DEFAULT_WINDOW = (80, 24)  # a pty request that gives no size
# Connections the kernel queues before they are accepted (asyncssh's default
# is 100; the kernel caps it at net.core.somaxconn): a burst of connections
# must not have players' SYNs dropped before the server sees them.
BACKLOG = 1024
# The ciphers offered. The client's order picks among them (RFC 4253 7.1),
# and OpenSSH's and asyncssh's clients put chacha20-poly1305 first, which
# costs 46 us a 1.5 KB packet here against 9 us for AES-GCM: it is not
# offered, so they use AES-GCM (in OpenSSH since 6.2, 2013). Measured with
# benchmarks/serve.py: 100 players' p99 key-to-first-frame about halved.
CIPHERS = ("aes128-gcm@openssh.com", "aes256-gcm@openssh.com", "aes128-ctr", "aes192-ctr", "aes256-ctr")
# Unanswered keepalives before a silent client is disconnected.
KEEPALIVES_MISSED = 3
# Window changes are applied at most this often (a flood of them is one redraw).
RESIZE_SECONDS = 0.05
# How each session ended, as the log says it (from what the player was told).
ENDINGS = {
    SAID_STOPPING: "server stopping",
    SAID_TAKEN_OVER: "taken over",
    SAID_TOO_SLOW: "client not reading",
    SAID_UNSAVED: "store unavailable",
    SAID_IDLE: "idle",
}
# Seconds the games get to save and say goodbye when the server stops, then
# the clients to leave by themselves (it must be gone within 5).
STOP_SECONDS = 3.0
LEAVE_SECONDS = 0.5
# The note on a guest's first frame.
GUEST_NOTE = "guest: nothing is kept (connect with an SSH key)"
# Said when the player's game is open in another session.
TAKE_OVER_PROMPT = (
    "Your game on this board is open in another session.\r\n"
    "y: play it here (the other session ends); any other key: leave.\r\n"
)
# Seconds the take-over question waits for its answer.
ANSWER_SECONDS = 120
# What the game says it takes to play it again (its farewell).
AGAIN = "connecting again"


def host_key(data_dir: str) -> asyncssh.SSHKey:
    """The server's ed25519 host key in ``data_dir``, made on first start
    (readable by its owner only) and reused after."""
    path = os.path.join(data_dir, HOST_KEY_FILE)
    try:
        return asyncssh.read_private_key(path)
    except FileNotFoundError:
        pass
    key = asyncssh.generate_private_key("ssh-ed25519")
    # O_EXCL: a key another server made meanwhile is not overwritten.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as stream:
        stream.write(key.export_private_key())
        stream.flush()
        os.fsync(stream.fileno())
    return key


def clamp_window(width: int, height: int) -> Tuple[int, int]:
    """A client's window size, as drawn: 0 (unknown) is the default, the
    rest bounded."""
    if width <= 0 or height <= 0:
        return DEFAULT_WINDOW
    return min(width, MAX_COLUMNS), min(height, MAX_LINES)


@dataclass(frozen=True)
class Identity:
    """Who a connection is: a key's fingerprint (None: a guest) and a name."""

    fingerprint: Optional[str]
    name: str


class GameServer:
    """The server's state: the store, the AI's pool, the sessions running."""

    def __init__(
        self,
        store: Store,
        pool: AIPool,
        random_seed: Callable[[], int],
        clock: Callable[[], float] = time.monotonic,
        now: Callable[[], float] = time.time,
        log: Optional[IO[str]] = None,
        daily_secret: bytes = b"",
        daily_per_address: int = DEFAULT_PER_ADDRESS,
        live: Optional[LiveGames] = None,
        watch_stall: float = DEFAULT_STALL_SECONDS,
        limits: Limits = DEFAULT_LIMITS,
    ) -> None:
        self._log = log
        self.limits = limits
        self.admission = Admission(limits)
        self.daily_secret = daily_secret  # the days' seeds derive from it (ranked.daily_secret)
        self.daily_per_address = daily_per_address
        self.live = live if live is not None else LiveGames()  # the games that may be watched
        self.watch_stall = watch_stall  # seconds a watcher may not read before it is dropped
        self.store = store
        self.pool = pool
        self.random_seed = random_seed
        self.clock = clock
        self.now = now
        self.port = 0
        self.sessions: Set[_Session] = set()
        self._holders = count(1)
        self._host = socket.gethostname().replace(":", "_")
        self._id = f"{self._host}:{os.getpid()}:{time.time_ns()}"
        self._listener: Optional[asyncssh.SSHAcceptor] = None
        self.connections: Set[asyncssh.SSHServerConnection] = set()

    def holder(self) -> str:
        """A claim holder's name: this server's, and a session's number."""
        return f"{self._id}:{next(self._holders)}"

    def gone(self, holder: str) -> bool:
        """``holder`` was a session of a server on this machine that is no
        longer running (it was killed): its claim need not be waited out,
        nor its player asked to take the game over."""
        host, _, rest = holder.partition(":")
        pid = rest.partition(":")[0]
        if host != self._host or not pid.isdigit():
            return False  # another machine's server: its claim expires by itself
        if int(pid) == os.getpid():
            return not holder.startswith(self._id + ":")  # this pid's earlier life
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            return True
        except OSError:
            return False  # running, as another user
        return False

    async def listen(self, host: str, port: int, key: asyncssh.SSHKey) -> Tuple[str, int]:
        """Listen on ``host``:``port`` (0: a free one); where it listens."""
        self._listener = await asyncssh.listen(
            host,
            port,
            server_factory=lambda: _Connection(self),
            server_host_keys=[key],
            encoding=None,  # keys are bytes, decoded by the game's own decoder
            line_editor=False,  # asyncssh's is on by default: keys would come a line at a time
            agent_forwarding=False,  # on by default too
            x11_forwarding=False,
            allow_scp=False,
            sftp_factory=None,
            allow_pty=True,
            login_timeout=self.limits.login_seconds,
            keepalive_interval=self.limits.keepalive_seconds,
            keepalive_count_max=KEEPALIVES_MISSED,
            backlog=BACKLOG,
            encryption_algs=list(CIPHERS),
            password_auth=False,
            server_version="ansi2048",
        )
        address = self._listener.sockets[0].getsockname()
        self.port = int(address[1])
        return str(address[0]), self.port

    async def stop(self) -> None:
        """Stop listening; every game saved and its player told; then close."""
        if self._listener is not None:
            self._listener.close()
        tasks = [session.stopping() for session in list(self.sessions)]
        running = [task for task in tasks if task is not None]
        if running:
            await asyncio.wait(running, timeout=STOP_SECONDS)
        # The clients leave once their sessions have closed; the rest are
        # disconnected (their client then says so, in a line of its own).
        loop = asyncio.get_running_loop()
        end = loop.time() + LEAVE_SECONDS
        while self.connections and loop.time() < end:
            await asyncio.sleep(0.02)
        for conn in list(self.connections):
            conn.close()
        # Each closed connection's line is written to the log once it is gone.
        end = loop.time() + LEAVE_SECONDS
        while self.connections and loop.time() < end:
            await asyncio.sleep(0.02)
        self.pool.close()

    def log(self, line: str) -> None:
        """One line on the server's log (standard error, or --log's file)."""
        if self._log is not None:
            with suppress(OSError, ValueError):
                self._log.write(line + "\n")
                self._log.flush()


class _Connection(asyncssh.SSHServer):
    """One client connection: its authentication, and what it may open."""

    def __init__(self, server: GameServer) -> None:
        self._server = server
        self._conn: Optional[asyncssh.SSHServerConnection] = None
        self._key: Optional[asyncssh.SSHKey] = None
        self._guest = False
        self._address = "?"
        self._started = server.clock()
        self._logging_in = False  # counted among the handshakes
        self.fingerprint: Optional[str] = None
        self.name = "-"
        # What the connection's line in the log says, filled in by its sessions.
        self.term = ""
        self.window: Optional[Tuple[int, int]] = None
        self.keys = 0
        self.endings: List[str] = []

    def connection_made(self, conn: asyncssh.SSHServerConnection) -> None:
        self._conn = conn
        self._server.connections.add(conn)
        peer = conn.get_extra_info("peername")
        self._address = str(peer[0]) if peer else "?"
        try:
            self._server.admission.start_handshake(self._address)
        except Refusal as refusal:
            # Closed before its handshake costs anything: asyncssh sends its
            # version line first, then the connection goes.
            self.endings.append(f"refused: {refusal}")
            asyncio.get_running_loop().call_soon(conn.abort)
            return
        self._logging_in = True

    def auth_completed(self) -> None:
        self._end_handshake()
        if not self._guest and self._key is not None:
            self.fingerprint = str(self._key.get_fingerprint("sha256"))

    def _end_handshake(self) -> None:
        if self._logging_in:
            self._logging_in = False
            self._server.admission.end_handshake(self._address)

    def connection_lost(self, exc: Optional[Exception]) -> None:
        if self._logging_in:
            self.endings.append("left before logging in" if exc is None else "not logged in in time, or failed")
        self._end_handshake()
        if self._conn is not None:
            self._server.connections.discard(self._conn)
        self._server.log(self._line())

    def _line(self) -> str:
        """The connection's line in the log: when, from where, who (a short
        fingerprint), in which terminal, how long, how many keys, how it
        ended. Nothing the client sent is in it as it came (TERM is made
        printable and bounded), and no key."""
        when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self._server.now()))
        window = f"{self.window[0]}x{self.window[1]}" if self.window else "-"
        seconds = self._server.clock() - self._started
        ended = "; ".join(self.endings) or "closed"
        return (
            f"{when} {self._address} {short_fingerprint(self.fingerprint)} {self.name} TERM={self.term or '-'} {window}"
            f" {seconds:.1f} s, {self.keys} keys, {ended}"
        )

    def begin_auth(self, username: str) -> bool:
        return True  # authentication is asked for: a keyless client still gets in (kbdint)

    def public_key_auth_supported(self) -> bool:
        return True

    def validate_public_key(self, username: str, key: asyncssh.SSHKey) -> bool:
        # Called for the client's query, then for its signature: the first
        # key offered is accepted, and only that one names the player.
        if self._key is None:
            self._key = key
        return bool(key.public_data == self._key.public_data)

    def kbdint_auth_supported(self) -> bool:
        return True

    def get_kbdint_challenge(self, username: str, lang: str, submethods: str) -> bool:
        self._key, self._guest = None, True  # no key: a guest, let in without a prompt
        return True

    def password_auth_supported(self) -> bool:
        return False

    def session_requested(self) -> Tuple[asyncssh.SSHServerChannel[bytes], _Session]:
        assert self._conn is not None
        user = self._conn.get_extra_info("username") or ""
        self.name = display_name(user)
        fingerprint = self.fingerprint
        counted = fingerprint or f"guest@{self._address}"
        try:
            self._server.admission.start_session(self._address, counted)
        except Refusal as refusal:
            self.endings.append(f"session refused: {refusal}")
            raise asyncssh.ChannelOpenError(asyncssh.OPEN_RESOURCE_SHORTAGE, str(refusal)) from None
        chan = self._conn.create_server_channel()
        _keep_allowed_env(chan)
        session = _Session(self._server, Identity(fingerprint, self.name), self, (self._address, counted))
        return chan, session

    # Refused, always: this server runs the game and nothing else.
    def connection_requested(self, dest_host: str, dest_port: int, orig_host: str, orig_port: int) -> bool:
        return False  # ssh -L

    def server_requested(self, listen_host: str, listen_port: int) -> bool:
        return False  # ssh -R

    def unix_connection_requested(self, dest_path: str) -> bool:
        return False

    def unix_server_requested(self, listen_path: str) -> bool:
        return False

    def tun_requested(self, unit: Optional[int]) -> bool:
        return False

    def tap_requested(self, unit: Optional[int]) -> bool:
        return False


def _keep_allowed_env(chan: asyncssh.SSHServerChannel[bytes]) -> None:
    """Environment variables other than :data:`.limits.ALLOWED_ENV` dropped
    as they arrive: asyncssh keeps every one a client sends (any number, any
    size) and has no option to refuse them, so its handler of the ``env``
    request is wrapped on this channel (a request it looks up by name)."""
    process = chan._process_env_request  # asyncssh's handler: no public hook

    def allowed_only(packet: Any) -> bool:
        name = bytes(packet.get_string())
        value = bytes(packet.get_string())
        packet.check_end()
        if name.decode("ascii", "replace") in ALLOWED_ENV and len(value) <= 256:
            return bool(process(_Replayed(name, value)))  # type: ignore[arg-type]
        return True  # said to be set, and dropped: the client need not know

    chan._process_env_request = allowed_only  # type: ignore[method-assign]


class _Replayed:
    """An ``env`` request's packet as asyncssh's handler reads it."""

    def __init__(self, name: bytes, value: bytes) -> None:
        self._strings = [name, value]

    def get_string(self) -> bytes:
        return self._strings.pop(0)

    def check_end(self) -> None:
        pass


class _Link:
    """The game's side of the SSH channel (see :class:`.game.Link`)."""

    def __init__(self, chan: asyncssh.SSHServerChannel[bytes]) -> None:
        self._chan = chan
        self.gone = False

    def write(self, data: bytes) -> None:
        if self.gone:
            return
        try:
            self._chan.write(data)
        except (OSError, asyncssh.Error):
            self.gone = True

    def unsent(self) -> int:
        return int(self._chan.get_write_buffer_size())

    def drop(self) -> None:
        self.gone = True
        self._chan.get_extra_info("connection").abort()


class _Session(asyncssh.SSHServerSession[bytes]):
    """One session channel: a game with a terminal, or a command without."""

    def __init__(
        self, server: GameServer, identity: Identity, connection: _Connection, counted: Tuple[str, str]
    ) -> None:
        self._server = server
        self._identity = identity
        self._connection = connection
        self._counted: Optional[Tuple[str, str]] = counted  # the admission's (address, identity), until it ends
        self._input = InputBudget(server.limits.input_burst, server.limits.input_rate, server.clock())
        self._too_long = False  # the command line was longer than the limit
        self._resize_due = False  # a window change waits to be applied
        self._chan: Optional[asyncssh.SSHServerChannel[bytes]] = None
        self._link: Optional[_Link] = None
        self._command: Optional[str] = None
        self._term: Optional[str] = None
        self._window = DEFAULT_WINDOW
        self._incoming: asyncio.Queue[Incoming] = asyncio.Queue()
        self._task: Optional[asyncio.Task[None]] = None

    # -- asyncssh's callbacks ---------------------------------------------------

    def connection_made(self, chan: asyncssh.SSHServerChannel[bytes]) -> None:
        self._chan = chan
        self._link = _Link(chan)

    def pty_requested(
        self, term_type: str, term_size: Tuple[int, int, int, int], term_modes: Mapping[int, int]
    ) -> bool:
        self._term = printable(term_type[:64]) or "dumb"
        self._window = clamp_window(term_size[0], term_size[1])
        self._connection.term, self._connection.window = self._term, self._window
        return True

    def shell_requested(self) -> bool:
        return True  # no shell: the game

    def exec_requested(self, command: str) -> bool:
        if len(command) > self._server.limits.command_chars:
            self._too_long, command = True, ""
        self._command = command
        return True

    def subsystem_requested(self, subsystem: str) -> bool:
        return False  # SFTP and any other

    def break_received(self, msec: int) -> bool:
        return False

    def session_started(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._serve())
        self._server.sessions.add(self)

    def data_received(self, data: bytes, datatype: Optional[int]) -> None:
        played = self._input.admit(data, self._server.clock())
        if played:
            self._incoming.put_nowait(Typed(played))

    def terminal_size_changed(self, width: int, height: int, pixwidth: int, pixheight: int) -> None:
        # A flood of window changes is one redraw every RESIZE_SECONDS, at the last size.
        self._window = clamp_window(width, height)
        self._connection.window = self._window
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
        if self._link is not None:
            self._link.gone = True
        self._incoming.put_nowait(Ended())
        if self._task is None:
            self._uncount()

    def _uncount(self) -> None:
        if self._counted is not None:
            self._server.admission.end_session(*self._counted)
            self._counted = None

    # -- the session --------------------------------------------------------------

    def stopping(self) -> Optional[asyncio.Task[None]]:
        """The server is stopping: end the game, saying so; its task."""
        self._incoming.put_nowait(Ended(SAID_STOPPING))
        return self._task

    async def _serve(self) -> None:
        assert self._chan is not None
        chan = self._chan
        status = EXIT_OK
        try:
            status = await self._command_or_game()
        except StoreError as error:
            self._say(f"ansi2048: error: {error}")
            self._server.log(f"store error: {error}")
            self._ended("store error")
            status = EXIT_ERROR
        except Exception as error:  # a bug must end this session only, said in one line each side
            self._say("ansi2048: error: the server failed; your game is kept up to what you saw")
            self._server.log(f"session failed: {type(error).__name__}: {error}")
            self._ended("failed")
            status = EXIT_ERROR
        finally:
            self._server.sessions.discard(self)
            self._uncount()
            if self._link is not None and not self._link.gone:
                with suppress(OSError, asyncssh.Error):
                    chan.exit(status)

    def _ended(self, how: str) -> None:
        """How the session ended, for its connection's line in the log."""
        what = "play" if self._command is None else printable(self._command.split(" ", 1)[0][:16])
        self._connection.endings.append(f"{what}: {how}")

    def _say(self, line: str, stderr: bool = True) -> None:
        """One line to the client (CR LF on a terminal, whose client is raw)."""
        assert self._chan is not None
        data = (line + ("\r\n" if self._term is not None else "\n")).encode("utf-8", "replace")
        with suppress(OSError, asyncssh.Error):
            if stderr:
                self._chan.write_stderr(data)
            else:
                self._chan.write(data)

    async def _command_or_game(self) -> int:
        if self._too_long:
            self._say(f"ansi2048: the command is too long (at most {self._server.limits.command_chars} characters)")
            self._ended("command too long")
            return EXIT_USAGE
        try:
            command = parse_command(self._command)
        except CommandError as error:
            self._say(f"ansi2048: {error}")
            self._ended("bad command")
            return EXIT_USAGE
        if not isinstance(command, (PlayRequest, Daily)) or self._term is None:
            self._ended("done")  # a game says how it ended itself (_run_game)
        if isinstance(command, Help):
            for line in help_text(self._server.port).splitlines():
                self._say(line, stderr=False)
            return EXIT_OK
        if isinstance(command, Stats):
            return await self._stats(command.json)
        if isinstance(command, (Leaderboard, KeysRequest)):
            return await self._daily_command(command)
        if isinstance(command, Replay) and command.cast:
            return await self._replay(command)
        if self._term is None:
            self._say(f"ansi2048: {NEEDS_TERMINAL}")
            return EXIT_USAGE
        if isinstance(command, Watch):
            return await self._watch(command)
        if isinstance(command, Replay):
            return await self._replay(command)
        if isinstance(command, Daily):
            await self._play_daily()
        else:
            await self._play(command)
        return EXIT_OK

    def _viewer(self, prefs: Prefs) -> Viewer:
        """This session as a watcher's or a replay's: its channel, keys and
        window; screens drawn for its size and colour depth."""
        assert self._link is not None
        env = self._client_env()
        depth = COLOR_DEPTHS[prefs.color] if prefs.color in COLOR_DEPTHS else choose_depth("auto", True, env)
        palette = THEMES[prefs.theme or "classic"]

        def screen(write: Callable[[str], None], size: Callable[[], Tuple[int, int]]) -> Screen:
            return Screen(write, size, depth, env, palette=palette())

        chan = self._chan
        assert chan is not None
        look = (depth, prefs.theme, env["TERM"] == "dumb")
        viewer = Viewer(self._link, self._incoming, lambda: self._window, screen, look, self._server.watch_stall)
        viewer.drop = chan.abort
        return viewer

    async def _watch(self, request: Watch) -> int:
        from .watch import watch_session

        player = await self._player()
        said = await watch_session(self._viewer(player.prefs if player else Prefs()), self._server.live, request.name)
        if said:
            self._say(said, stderr=False)
        return EXIT_OK

    async def _replay(self, request: Replay) -> int:
        """``replay N`` / ``cast N``: the player's Nth latest finished game."""
        from ..game.engine import Game
        from .watch import cast_text, play_replay

        player = await self._player()
        records = await self._server.store.history(player.id, request.number) if player is not None else []
        if len(records) < request.number:
            kept = f"you have {len(records)} finished game{'s' if len(records) != 1 else ''}"
            self._say(f"ansi2048: no such game: {kept if player else 'a guest has none (connect with an SSH key)'}")
            return EXIT_USAGE
        record = records[0]  # the newest ``number``, oldest first: the Nth latest
        game = Game(record.rows, record.cols, record.goal, record.seed)
        prefs = player.prefs if player is not None else Prefs()
        if request.cast:
            assert self._chan is not None
            env = self._client_env()
            text = await asyncio.get_running_loop().run_in_executor(
                None, cast_text, game, record.keys, env, prefs.theme or "classic", int(self._server.now())
            )
            self._chan.write(text.encode("utf-8"))
            return EXIT_OK
        live = self._server.live
        try:
            live.take()
        except WatchFull as full:
            self._say(f"ansi2048: {full}")
            return EXIT_ERROR
        try:
            caption = f"replay · {record.date} · + - speed, space pauses, q leaves"
            animate = wants_motion(Options(animation=prefs.animation is not False), self._client_env())
            said = await play_replay(self._viewer(prefs), game, record.keys, caption, animate)
        finally:
            live.give_back()
        if said:
            self._say(said, stderr=False)
        return EXIT_OK

    async def _player(self) -> Optional[Player]:
        identity = self._identity
        if identity.fingerprint is None:
            return None
        return await self._server.store.player(identity.fingerprint, identity.name)

    async def _stats(self, as_json: bool) -> int:
        player = await self._player()
        records = await self._server.store.history(player.id) if player is not None else []
        stats = board_stats(records)
        if as_json:
            import json

            from .. import __version__

            for line in json.dumps(stats_document(stats, __version__), indent=1).splitlines():
                self._say(line, stderr=False)
        elif not stats:
            guest = " (as a guest, nothing is kept: connect with an SSH key)" if player is None else ""
            self._say(f"No finished games yet.{guest}", stderr=False)
        else:
            for line in stats_lines(stats, ColorDepth.NONE, self._window[0]):
                self._say(line, stderr=False)
        return EXIT_OK

    async def _play(self, request: PlayRequest) -> None:
        store = self._server.store
        player = await self._player()
        prefs = player.prefs if player is not None else Prefs()
        chosen = replace(
            prefs,
            theme=request.theme or prefs.theme,
            color=request.color or prefs.color,
            animation=request.animation if request.animation is not None else prefs.animation,
        )
        if request.private is not None:
            chosen = replace(chosen, private=request.private)
        if player is not None and chosen != prefs:
            await store.set_prefs(player.id, chosen)
        rows, cols = request.rows or DEFAULT_SIZE, request.cols or DEFAULT_SIZE
        goal = request.goal or default_goal(rows, cols)
        keeping: Keeping = GuestKeeping()
        if player is not None:
            board = config_key(rows, cols, goal)
            holder = await self._claim(player, board)
            if holder is None:
                return
            keeping = StoreKeeping(store, player.id, board, holder)
        # Watchers know a player by the store's name (unique: another key's
        # "alice" is "alice-2"), a guest as "guest".
        name = player.name if player is not None else GUEST_NAME
        await self._run_game(keeping, request, chosen, name, player is None, (rows, cols, goal))

    async def _claim(self, player: Player, board: str) -> Optional[str]:
        """The claim on the player's game on ``board``: its holder's name;
        None if another session has it and the player chose to leave."""
        server, store = self._server, self._server.store
        holder = server.holder()
        held = await store.claim(player.id, board, holder, CLAIM_SECONDS)
        if held is not None:
            if not server.gone(held.holder) and not await self._take_over():
                return None
            await store.claim(player.id, board, holder, CLAIM_SECONDS, take_over=True)
        return holder

    async def _play_daily(self) -> None:
        """``daily``: the day's game, ranked or practice (:mod:`.ranked`)."""
        player = await self._player()
        peer = self._chan.get_extra_info("peername") if self._chan is not None else None
        address = str(peer[0]) if peer else "?"
        opened = await open_daily(self._server, player, address, self._claim)
        if opened is None:
            return
        name = player.name if player is not None else GUEST_NAME
        prefs = player.prefs if player is not None else Prefs()
        await self._run_game(opened.keeping, PlayRequest(), prefs, name, player is None, DAILY, opened)

    async def _daily_command(self, command: Union[Leaderboard, KeysRequest]) -> int:
        """``leaderboard`` and ``keys``: no terminal needed."""
        server = self._server
        if isinstance(command, KeysRequest):
            entry = await server.store.daily_by_id(command.entry)
            try:
                recording = keys_for(entry, command.entry, server.now())
            except KeysRefused as refused:
                self._say(f"ansi2048: {refused}")
                return EXIT_USAGE
            assert self._chan is not None
            with suppress(OSError, asyncssh.Error):
                self._chan.write(recording)
            return EXIT_OK
        player = await self._player()
        me = player.id if player is not None else None
        lines = await leaderboard_output(server.store, server.now(), command.day, command.json, me)
        for line in lines:
            self._say(line, stderr=False)
        return EXIT_OK

    async def _take_over(self) -> bool:
        """Ask whether to take the game over from the session that has it."""
        assert self._link is not None
        self._link.write(TAKE_OVER_PROMPT.encode())
        while True:
            try:
                answer = await asyncio.wait_for(self._incoming.get(), ANSWER_SECONDS)
            except asyncio.TimeoutError:
                return False
            if not isinstance(answer, Resized):  # a key (or the end): the answer
                return isinstance(answer, Typed) and answer.data[:1] in (b"y", b"Y")

    async def _run_game(
        self,
        keeping: Keeping,
        request: PlayRequest,
        prefs: Prefs,
        name: str,
        guest: bool,
        board: Tuple[int, int, int],
        daily: Optional[OpenedDaily] = None,
    ) -> None:
        assert self._chan is not None and self._link is not None
        server = self._server
        rows, cols, goal = board
        if daily is None:
            session, greeting = await open_game(
                keeping, rows, cols, goal, request.new, server.random_seed, server.now()
            )
        else:
            session, greeting = daily.session, daily.note
        env = self._client_env()
        animate = wants_motion(Options(animation=prefs.animation is not False), env)
        settings = Settings(animate=animate, can_wait=True, command=AGAIN, guest=guest)
        if daily is not None:
            settings = replace(
                settings, command=f"{AGAIN} (daily)", day=daily.day, day_seed=daily.day_seed, guest=daily.guest
            )
        play = Play(session, settings, self._window, note=GUEST_NOTE if guest and daily is None else greeting)
        depth = COLOR_DEPTHS[prefs.color] if prefs.color in COLOR_DEPTHS else choose_depth("auto", True, env)
        frames: List[str] = []

        def write(text: str) -> None:
            # Frames end lines with LF for a terminal whose output processing
            # (ONLCR) makes it CR LF; here there is no such pty in between,
            # and the client's terminal is raw: done here, as a pty would.
            frames.append(text.replace("\n", "\r\n"))

        screen = PublishingScreen(write, lambda: game.play.size, depth, env, palette=THEMES[prefs.theme or "classic"]())
        args = (
            play,
            screen,
            frames,
            self._link,
            keeping,
            server.pool,
            self._incoming,
            server.clock,
            server.now,
            screen.sent,
            server.limits,
        )
        game = PlayerGame(*args) if daily is None else daily.driver(*args)
        if not prefs.private:  # watchable (play --private: not)
            screen.live = server.live.start(name, rows, cols)
            screen.live.on_watchers = lambda count: self._incoming.put_nowait(Warned(watchers_note(count), True))
        try:
            await game.run()
        finally:
            if screen.live is not None:
                screen.live.end()
            self._connection.keys += game.keys
            self._ended(ENDINGS.get(game.said, "quit" if game.play.over else "disconnected"))

    def _client_env(self) -> Dict[str, str]:
        """What the client's environment says of its terminal: TERM (from the
        pty request), and COLORTERM and NO_COLOR when it sends them."""
        assert self._chan is not None
        sent: Mapping[str, str] = self._chan.get_environment()  # ALLOWED_ENV's only
        env = {name: printable(str(sent[name])) for name in ("COLORTERM", "NO_COLOR") if name in sent}
        env["TERM"] = self._term or "dumb"
        return env


async def run(options: ServeOptions, stderr: IO[str]) -> int:
    """``ansi2048 serve``: listen until SIGTERM or SIGINT; the exit status.
    What stops it from starting (the data directory, the database, the
    address) is said in one line, status 1."""
    log: IO[str] = stderr
    try:
        if options.log:
            log = open(options.log, "a", encoding="utf-8")  # noqa: SIM115 (open while the server runs)
        os.makedirs(options.data_dir, mode=0o700, exist_ok=True)
        key = host_key(options.data_dir)
        store = open_store(options.db, options.data_dir)
        await store.open()
    except (OSError, ValueError, StoreError, asyncssh.Error) as error:
        stderr.write(f"ansi2048 serve: error: {_why(error)}\n")
        return EXIT_ERROR
    try:
        secret = daily_secret(options.data_dir)
    except (OSError, ValueError) as error:
        await store.close()
        stderr.write(f"ansi2048 serve: error: {_why(error)}\n")
        return EXIT_ERROR
    limits, capped = capped_by_files(options.limits, raise_open_files())
    if capped:
        stderr.write(f"ansi2048 serve: {capped}\n")
    server = GameServer(
        store,
        AIPool(min(4, os.cpu_count() or 1)),
        lambda: int.from_bytes(os.urandom(4), "big"),
        log=log,
        daily_secret=secret,
        daily_per_address=options.daily_per_address,
        live=LiveGames(options.watchers_per_game, options.watchers),
        limits=limits,
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    try:
        try:
            host, port = await server.listen(options.host, options.port, key)
        except OSError as error:
            stderr.write(f"ansi2048 serve: error: cannot listen on {options.host}:{options.port}: {_why(error)}\n")
            return EXIT_ERROR
        shown = f"[{host}]" if ":" in host else host
        stderr.write(f"listening on {shown}:{port} (host key {key.get_fingerprint('sha256')})\n")
        stderr.flush()
        await stop.wait()
        await server.stop()
    finally:
        await store.close()
        if log is not stderr:
            log.close()
    return EXIT_OK


def raise_open_files() -> int:
    """The process's open-file limit raised to its hard limit (each
    connection holds a socket); the limit now."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard > soft:
        wanted = hard if hard != resource.RLIM_INFINITY else 1 << 20
        for limit in (wanted, 65536, 1 << 14):  # macOS refuses more than OPEN_MAX, however high hard is
            try:
                resource.setrlimit(resource.RLIMIT_NOFILE, (min(limit, wanted), hard))
                break
            except (ValueError, OSError):
                continue
    return int(resource.getrlimit(resource.RLIMIT_NOFILE)[0])


def _why(error: BaseException) -> str:
    if isinstance(error, OSError) and error.strerror:
        return f"{error.filename}: {error.strerror}" if error.filename else error.strerror
    return str(error) or type(error).__name__
