"""``ansi2048 serve``: its command line, and the server started from it.

Light to import (argparse only): asyncssh is imported once the options are
good, and its absence is said in one line with the command that installs it."""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys
from dataclasses import fields
from typing import IO, Callable, Mapping, NoReturn, Optional, Sequence, Tuple

from ..options.parser import EXIT_ERROR, EXIT_OK, EXIT_USAGE
from .limits import DEFAULT_LIMITS, Limits
from .requests import day_argument, entry_argument
from .settings import DEFAULT_LISTEN, ServeOptions

__all__ = ["DEFAULT_LISTEN", "ServeOptions", "main", "parse_listen", "parse_serve_options"]

INSTALL = 'pip install ".[serve]" from a clone (or "ansi2048[serve]")'


# Each limit's option: (the Limits field, the option, its metavar, what it is).
LIMIT_OPTIONS = (
    ("sessions", "--max-sessions", "N", "sessions in all"),
    ("sessions_per_address", "--max-sessions-per-address", "N", "sessions from one source address"),
    ("sessions_per_identity", "--max-sessions-per-key", "N", "sessions with one SSH key (guests: per address)"),
    ("handshakes", "--max-logins", "N", "connections not yet logged in, in all"),
    ("handshakes_per_address", "--max-logins-per-address", "N", "connections not yet logged in, from one address"),
    ("login_seconds", "--login-seconds", "S", "from connecting to logged in"),
    ("idle_seconds", "--idle-seconds", "S", "a session without a key this long is saved and closed"),
    ("keepalive_seconds", "--keepalive-seconds", "S", "SSH keepalives (3 unanswered end the connection); 0: none"),
    ("input_burst", "--input-burst", "BYTES", "input a session may send at once (more is dropped)"),
    ("input_rate", "--input-rate", "BYTES", "input a session may send a second, after the burst"),
    ("unsent_bytes", "--max-unsent", "BYTES", "output held for a client that does not read it"),
    ("stalled_seconds", "--stalled-seconds", "S", "a client that reads nothing this long is disconnected"),
    ("command_chars", "--max-command", "CHARS", "the longest command line"),
)


def _positive(kind: Callable[[str], float], zero: bool) -> Callable[[str], float]:
    """A limit's parser: a number above 0 (or 0 too, when it means none)."""

    def parse(text: str) -> float:
        try:
            value = kind(text)
        except ValueError:
            value = -1
        if not (0 <= value < float("inf")) or (value == 0 and not zero):  # NaN fails too
            least = "0 or more" if zero else "above 0"
            raise argparse.ArgumentTypeError(f"expected a number {least}, got {text[:60]!r}")
        return value

    return parse


def parse_listen(text: str) -> Tuple[str, int]:
    """``HOST:PORT``, ``[IPv6]:PORT``; port 0 picks a free one."""
    host, colon, port = text.rpartition(":")
    if not colon or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT (port 0 to 65535), got {text[:60]!r}")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host, int(port)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="ansi2048 serve",
        description="Serve the game over SSH: ssh -p PORT HOST plays it, each player's game kept under their SSH key.",
    )
    parser.add_argument(
        "--listen",
        type=parse_listen,
        default=DEFAULT_LISTEN,
        metavar="HOST:PORT",
        help="where to listen (default 127.0.0.1:2048: this machine only; 0.0.0.0:2048 for everyone)",
    )
    parser.add_argument(
        "--reuse-port",
        action="store_true",
        help="let other ansi2048 serve processes listen on the same port; the system spreads connections among"
        " them (SO_REUSEPORT: Linux, BSD, macOS). Give them one --data-dir or the same host key, and one --db",
    )
    parser.add_argument(
        "--workers",
        type=_workers,
        default=ServeOptions.workers,
        metavar="N",
        help="server processes on the port, each on a core of its own, kept by one parent that starts another in"
        " place of one that dies (default %(default)s; auto: one per core)",
    )
    parser.add_argument(
        "--take-over",
        action="store_true",
        help="replace the server running on this data directory and address (an upgrade): listen, then tell it to"
        " drain (docs/serving.md)",
    )
    parser.add_argument(
        "--drain-seconds",
        type=_positive(float, zero=True),
        default=ServeOptions.drain_seconds,
        metavar="S",
        help="once a new server on the same data directory and address takes over, the old one lets its sessions end"
        " by themselves for this long, then stops the rest (default %(default)g)",
    )
    parser.add_argument(
        "--ready-fd", type=int, default=ServeOptions.ready_fd, help=argparse.SUPPRESS
    )  # a worker's: serve/workers.py
    parser.add_argument("--parent-pid", type=int, default=ServeOptions.parent_pid, help=argparse.SUPPRESS)  # likewise
    parser.add_argument(
        "--http",
        type=parse_listen,
        metavar="HOST:PORT",
        help="also serve the game to browsers (a page and a WebSocket) on HOST:PORT; off unless given."
        " Put a TLS proxy in front for the world (docs/serving.md)",
    )
    parser.add_argument(
        "--behind-https",
        action="store_true",
        help="the --http page reaches browsers over HTTPS (a TLS proxy in front): its cookie is marked Secure",
    )
    parser.add_argument(
        "--metrics",
        type=parse_listen,
        metavar="HOST:PORT",
        help="serve the server's numbers on HOST:PORT (Prometheus's text format at /metrics; /health: 200 while the"
        " store is reachable, 503 when not); off unless given (docs/serving.md)",
    )
    parser.add_argument(
        "--relay",
        type=parse_listen,
        metavar="HOST:PORT",
        default=ServeOptions.relay,
        help="where the other servers on the same --db bring a player whose race this server holds (default:"
        " 127.0.0.1 and a free port: the servers of this machine); for servers on several machines, an address"
        " they reach (docs/serving.md)",
    )
    parser.add_argument(
        "--data-dir", metavar="DIR", help="the host key and the database (default: 'server' in the data directory)"
    )
    parser.add_argument(
        "--db",
        metavar="URL",
        default="",
        help="the database: sqlite:///PATH or postgresql://USER@HOST/DB (default: an SQLite file in --data-dir)",
    )
    parser.add_argument(
        "--daily-per-address",
        type=_count,
        default=ServeOptions.daily_per_address,
        metavar="N",
        help="players one address may enter in one day's ranking (default %(default)s)",
    )
    parser.add_argument(
        "--verify",
        nargs="?",
        # Not a string: argparse passes a string const through `type` too,
        # and day_argument("") is no date.
        const=EVERY_DAY,
        type=day_argument,  # as leaderboard DAY reads it
        metavar="DAY",
        help="replay every stored ranked daily game (of DAY, YYYY-MM-DD) and report any whose result changed",
    )
    parser.add_argument(
        "--backup",
        metavar="FILE",
        default="",
        help="do not serve: write a consistent copy of the SQLite database to FILE, while servers run (PostgreSQL:"
        " pg_dump)",
    )
    moderation = parser.add_argument_group("moderation (do not serve: act on the store, and exit)")
    moderation.add_argument(
        "--ban",
        type=_fingerprint,
        metavar="FINGERPRINT",
        help="refuse the key of FINGERPRINT (SHA256:..., as the log gives it) on every server of the store, from its"
        " next connection on",
    )
    moderation.add_argument("--unban", type=_fingerprint, metavar="FINGERPRINT", help="lift a --ban")
    moderation.add_argument(
        "--remove-entry",
        type=entry_argument,  # as keys ID reads it
        metavar="ID",
        help="take the ranked game ID off its day's board; the board lists it as removed, with --reason",
    )
    moderation.add_argument(
        "--reason", type=_reason, metavar="TEXT", help="why (--ban: told to the key; --remove-entry: shown)"
    )
    parser.add_argument(
        "--max-watchers-per-game",
        type=_count,
        default=ServeOptions.watchers_per_game,
        metavar="N",
        help="watchers one game may have (default %(default)s; 0: games cannot be watched)",
    )
    parser.add_argument(
        "--max-watchers",
        type=_count,
        default=ServeOptions.watchers,
        metavar="N",
        help="watchers and replays on the server in all (default %(default)s)",
    )
    parser.add_argument(
        "--watcher-stalled-seconds",
        type=_positive(float, zero=False),
        default=ServeOptions.watcher_stall,
        metavar="S",
        help="a watcher or replay whose connection takes no frame this long is dropped (default %(default)g)",
    )
    parser.add_argument(
        "--log", metavar="FILE", default="", help="append a line per connection to FILE (default: standard error)"
    )
    parser.add_argument(
        "--log-format",
        choices=("text", "json"),
        default=ServeOptions.log_format,
        help="the log's lines: dated text (default), or json: one object a line, its time, event and fields"
        " (docs/serving.md)",
    )
    limits = parser.add_argument_group("limits (each connection and session; see docs/serving.md)")
    kinds = {item.name: type(getattr(DEFAULT_LIMITS, item.name)) for item in fields(Limits)}
    for name, option, metavar, what in LIMIT_OPTIONS:
        default = getattr(DEFAULT_LIMITS, name)
        limits.add_argument(
            option,
            dest=name,
            type=_positive(kinds[name], name == "keepalive_seconds"),
            default=default,
            metavar=metavar,
            help=f"{what} (default {default:g})",
        )
    return parser


def _count(text: str) -> int:
    if not text.isdigit() or not 0 <= int(text) <= 10**6:
        raise argparse.ArgumentTypeError(f"expected a count (0 or more), got {text[:20]!r}")
    return int(text)


def _fingerprint(text: str) -> str:
    """A key's SHA256 fingerprint as OpenSSH and the log write it."""
    if not re.fullmatch(r"SHA256:[A-Za-z0-9+/]{43}", text):
        raise argparse.ArgumentTypeError(f"expected a key's fingerprint, SHA256: and 43 characters, got {text[:60]!r}")
    return text


def _reason(text: str) -> str:
    from .moderation import REASON_CHARS

    reason = " ".join(text.split())
    if not reason or len(reason) > REASON_CHARS or not reason.isprintable():
        raise argparse.ArgumentTypeError(f"expected printable text of 1 to {REASON_CHARS} characters")
    return reason


def _workers(text: str) -> int:
    if text == "auto":
        return max(1, os.cpu_count() or 1)
    if not text.isdigit() or not 1 <= int(text) <= 256:
        raise argparse.ArgumentTypeError(f"expected a number from 1 to 256, or auto, got {text[:20]!r}")
    return int(text)


class _EveryDay:
    """``--verify`` with no day: every day (``ServeOptions.verify == ""``)."""


EVERY_DAY = _EveryDay()


def parse_serve_options(argv: Sequence[str], env: Mapping[str, str]) -> ServeOptions:
    parser = _parser()
    args = parser.parse_args(argv)
    asked = [option for option, value in (("--ban", args.ban), ("--unban", args.unban)) if value]
    asked += ["--remove-entry"] * (args.remove_entry is not None) + ["--backup"] * bool(args.backup)
    asked += ["--verify"] * (args.verify is not None)
    if len(asked) > 1:
        parser.error(f"{asked[0]} and {asked[1]} are two things to do: give one")
    if args.reason and not (args.ban or args.remove_entry is not None):
        parser.error("--reason goes with --ban or --remove-entry")
    if args.remove_entry is not None and not args.reason:
        parser.error("--remove-entry needs --reason TEXT: the board says why the game was taken off")
    if args.relay[1] != 0 and args.workers > 1:
        parser.error("--relay with --workers: give port 0 (each worker listens on a free port of HOST)")
    if args.metrics is not None and args.workers > 1:
        # Each worker would answer for itself, a scrape reaching any one of them.
        parser.error("--metrics counts one process: use it without --workers (or one server per --metrics port)")
    from ..storage.data_dir import data_dir

    where = args.data_dir or os.path.join(data_dir(env), "server")
    host, port = args.listen
    limits = Limits(**{name: getattr(args, name) for name, *_ in LIMIT_OPTIONS})
    return ServeOptions(
        host,
        port,
        os.path.abspath(where),
        args.db,
        daily_per_address=args.daily_per_address,
        verify="" if args.verify is EVERY_DAY else args.verify,
        backup=args.backup,
        ban=args.ban or "",
        unban=args.unban or "",
        remove_entry=args.remove_entry,
        reason=args.reason or "",
        watchers_per_game=args.max_watchers_per_game,
        watchers=args.max_watchers,
        watcher_stall=args.watcher_stalled_seconds,
        log=args.log,
        log_format=args.log_format,
        reuse_port=args.reuse_port,
        workers=args.workers,
        take_over=args.take_over,
        drain_seconds=args.drain_seconds,
        ready_fd=args.ready_fd,
        parent_pid=args.parent_pid,
        http=args.http,
        behind_https=args.behind_https,
        metrics=args.metrics,
        relay=args.relay,
        limits=limits,
    )


def main(argv: Sequence[str], env: Optional[Mapping[str, str]] = None, stderr: Optional[IO[str]] = None) -> int:
    env = os.environ if env is None else env
    stderr = sys.stderr if stderr is None else stderr
    options = parse_serve_options(argv, env)
    if options.backup:  # SQLite's own: asyncssh is not needed for it
        return _backup(options, sys.stdout, stderr)
    if options.ban or options.unban or options.remove_entry is not None:  # the store's rows: no server
        import asyncio

        from .moderation import moderate

        return asyncio.run(moderate(options, sys.stdout, stderr))
    # The serve extra's modules, only whether they are there: asyncssh and
    # prometheus-client for any server, aiohttp for the pages it serves.
    needed = {"asyncssh": "the server", "prometheus_client": "the server"}
    needed.update({"aiohttp": "--http"} if options.http is not None else {})
    needed.update({"aiohttp": "--metrics"} if options.metrics is not None else {})
    for module, needs in needed.items():
        try:
            importlib.import_module(module)
        except ImportError:
            stderr.write(f"ansi2048 serve: error: {needs} needs {module}: {INSTALL}\n")
            return EXIT_ERROR
    import asyncio

    if options.verify is not None:
        from .verify import verify

        return asyncio.run(verify(options.db, options.data_dir, options.verify or None, sys.stdout, stderr))
    if options.workers > 1:
        from .workers import run_workers

        where = (options.host, options.port, options.data_dir)
        return asyncio.run(run_workers(options.workers, *where, argv, stderr, options.take_over))
    from .server import run

    return asyncio.run(run(options, stderr))


def _backup(options: ServeOptions, stdout: IO[str], stderr: IO[str]) -> int:
    """``--backup FILE``: the store's copy, and one line saying what it holds."""
    import sqlite3

    from .backup import backup_sqlite
    from .store import open_store
    from .store.base import StoreError
    from .store.sqlite import SQLiteStore

    try:
        store = open_store(options.db, options.data_dir)
        if not isinstance(store, SQLiteStore):
            raise StoreError("--backup copies a SQLite database; back up PostgreSQL with pg_dump (docs/storage.md)")
        copied = backup_sqlite(store.path, options.backup)
    except (OSError, ValueError, StoreError, sqlite3.Error) as error:
        why = f"{error.filename}: {error.strerror}" if isinstance(error, OSError) and error.strerror else str(error)
        stderr.write(f"ansi2048 serve: error: --backup: {why}\n")
        return EXIT_ERROR
    stdout.write(f"backed up {store.path} to {options.backup}: {copied}\n")
    return EXIT_OK
