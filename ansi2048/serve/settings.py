"""``ansi2048 serve``'s settings (:class:`ServeOptions`): the one source of
each option's default, read by the command line's parser (:mod:`.cli`) and
by the parts that have defaults of their own (:class:`~.server.GameServer`,
:class:`~.live.LiveGames`); the limits' are :class:`~.limits.Limits`'.
Light and low: any module of the server may read it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Tuple

from .limits import DEFAULT_LIMITS, Limits

__all__ = ["DEFAULT_LISTEN", "ServeOptions"]

DEFAULT_LISTEN = ("127.0.0.1", 2048)  # an operator opens it to the world on purpose


@dataclass(frozen=True)
class ServeOptions:
    """``ansi2048 serve``'s settings; each default here is the option's
    default (the parser reads it here) and the server's."""

    host: str
    port: int
    data_dir: str
    db: str  # --db: a database URL (store.open_store); "" is the SQLite file in data_dir
    daily_per_address: int = 3  # --daily-per-address: new identities one address may enter in one day's ranking
    verify: Optional[str] = None  # --verify [DAY]: "" every day; None: serve
    backup: str = ""  # --backup FILE: copy the SQLite store there, and do not serve
    ban: str = ""  # --ban FINGERPRINT: ban the key on the store's servers, and do not serve
    unban: str = ""  # --unban FINGERPRINT
    remove_entry: Optional[int] = None  # --remove-entry ID: take a ranked game off its board (None: none)
    reason: str = ""  # --reason TEXT: the ban's, the removal's (serve/moderation.py)
    watchers_per_game: int = 20  # --max-watchers-per-game
    watchers: int = 200  # --max-watchers: watchers and replays in all
    watcher_stall: float = 10.0  # --watcher-stalled-seconds: a watcher's channel full this long is dropped
    log: str = ""  # --log: the file the connections' lines are appended to ("": standard error)
    log_format: str = "text"  # --log-format: text or json (serve/log.py's LogFormat)
    reuse_port: bool = False  # --reuse-port: other servers may listen on the same port (SO_REUSEPORT)
    workers: int = 1  # --workers: server processes on the port, kept by a parent (serve/workers.py)
    take_over: bool = False  # --take-over: replace the server running on this data directory and address
    drain_seconds: float = 300.0  # --drain-seconds: how long a server that was taken over waits for its sessions
    ready_fd: int = -1  # --ready-fd (a worker's, from its parent): where the listening line goes
    parent_pid: int = 0  # --parent-pid (a worker's): the parent it stops without
    http: Optional[Tuple[str, int]] = None  # --http HOST:PORT: the browser door (serve/web); None: none
    behind_https: bool = False  # --behind-https: a TLS proxy serves the door (its cookie is Secure)
    metrics: Optional[Tuple[str, int]] = None  # --metrics HOST:PORT: the numbers' page (serve/metrics.py); None: none
    relay: Tuple[str, int] = (
        "127.0.0.1",
        0,
    )  # --relay HOST:PORT: where the store's other servers bring racers (serve/relay.py)
    limits: Limits = field(default=DEFAULT_LIMITS)
