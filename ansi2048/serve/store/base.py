"""The storage interface the server's sessions use, and its values.

Every method is a coroutine: a database never blocks the event loop (a
writer thread, or an async driver). A game in progress is kept as what the
local game keeps in its save file, a recording (:mod:`ansi2048.records.recording`):
its header line, then the encoded items, appended key by key. So resuming a
served game is replaying its recording, exactly as the local game resumes.

Durability: :meth:`Store.append` returns only once its bytes are committed
(many sessions' appends may share one commit), and the server draws a frame
only after the key it shows was appended: nothing a player was shown is lost
when the server dies.

Ownership: one session at a time writes a player's game on one board. It
holds a claim (a lease of ``ttl`` seconds, renewed while it plays); another
session, on this server or another one on the same database, may take the
claim over, and from then on the first session's appends raise
:class:`ClaimLost`. A claim whose holder crashed expires by itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Optional, Protocol, Sequence, Tuple

from ...records.history import Record
from ...records.tally import BoardStats
from .links import Statement

# A ranked daily game's entry (its id) and the arrival times of the keys
# appended with it (Store.append).
DailyTimes = Tuple[int, str]

__all__ = [
    "Claim",
    "ClaimLost",
    "DailyBoard",
    "DailyEntry",
    "DailyTimes",
    "Finished",
    "Player",
    "Prefs",
    "Removed",
    "SavedGame",
    "SchemaTooNew",
    "Standing",
    "Store",
    "StoreError",
    "StoreUnavailable",
]


class StoreError(Exception):
    """Something the storage cannot do; the message is one line for a person."""


class StoreUnavailable(StoreError):
    """The database cannot be reached or written now (restarted, disk full):
    saving has paused; the same call may succeed later."""


class SchemaTooNew(StoreError):
    """The database was written by a newer ansi2048: this server refuses it."""


class ClaimLost(StoreError):
    """Another session took this game over: this one must stop writing it."""


@dataclass(frozen=True)
class Prefs:
    """What a player chose once and the server remembers; None: not chosen."""

    theme: Optional[str] = None
    color: Optional[str] = None  # "16", "256" or "24bit"
    animation: Optional[bool] = None
    private: bool = False  # the player's games are not shown to watchers


@dataclass(frozen=True)
class Player:
    """An identity: a public key's SHA256 fingerprint and the display name
    it holds (unique on the server)."""

    id: int
    fingerprint: str  # "SHA256:..." as ssh-keygen -l prints it
    name: str
    prefs: Prefs = Prefs()


@dataclass(frozen=True)
class Claim:
    """Who holds a game (``holder``: a server's and a session's id) and until
    when (seconds since the epoch, the database's clock)."""

    holder: str
    until: float


@dataclass(frozen=True)
class SavedGame:
    """A game in progress as the store keeps it: its recording (header and
    items), and the snapshot last kept with it (:mod:`~ansi2048.serve.snapshot`:
    the state it replays to, or to an older recording of the game; None: none)."""

    recording: bytes
    snapshot: Optional[bytes] = None


@dataclass(frozen=True)
class Finished:
    """A finished game as the store keeps it: the record, and the id the
    player names it by (``replay gID``; unique on the server, in the order
    games were kept)."""

    id: int
    record: Record


@dataclass(frozen=True)
class DailyEntry:
    """A player's ranked daily game (:mod:`ansi2048.serve.daily`): the
    recording as last verified and the result its replay gave.

    ``status``: ``playing`` or ``finished`` (ranked), ``assisted`` (a hint
    or autoplay, confirmed: never ranked), ``mismatch`` (the replay did not
    reproduce the game the player saw: logged, never ranked). ``times``:
    milliseconds from ``started`` to each key's arrival, space-separated, one
    per key of the recording."""

    id: int
    day: str  # YYYY-MM-DD, UTC
    player: int
    name: str
    address: str  # where the player connected from when the game began
    started: float  # seconds since the epoch
    status: str
    recording: bytes
    times: str = ""
    score: int = 0
    biggest: int = 0
    moves: int = 0
    seconds: float = 0.0  # from the start to the last key
    cells: str = ""  # the final board, row by row, space-separated
    # Whether its key timing is no person's (serve/daily.py's rule), found
    # when it was last settled; None: not known (keys came since, or it was
    # stored by a version that did not keep it): found from ``times``.
    machine: Optional[bool] = None


@dataclass(frozen=True)
class Standing:
    """A ranked game's place on its day's board: its rank, its entry (read
    without its recording and times) and whether its key timing is no person's."""

    rank: int
    entry: DailyEntry
    machine: bool


@dataclass(frozen=True)
class Removed:
    """A ranked game taken off its day's board by the operator, and why (store/moderation.py)."""

    id: int
    name: str
    score: int
    reason: str


@dataclass(frozen=True)
class DailyBoard:
    """What a day's leaderboard shows: how many games are ranked, the best
    ones, the asking player's own standing (None: they have none), and the
    games taken off it."""

    ranked: int
    top: Tuple[Standing, ...]
    mine: Optional[Standing]
    removed: Tuple[Removed, ...] = ()


class Store(Protocol):
    """The server's storage. ``board`` is a board's key,
    :func:`ansi2048.records.history.config_key` (``4x4-2048``); best scores use the
    same keys as the local best-scores file (``unaided_key`` for games with
    neither undo nor the AI)."""

    async def open(self) -> List[str]:
        """Create the schema, or upgrade an older one; :class:`SchemaTooNew`
        for a newer one; :class:`StoreUnavailable` if unreachable. What the
        upgrade did that the operator must hear of (a player renamed), one
        line each, for the log."""

    async def close(self) -> None:
        """Commit what is pending and let go of the database."""

    async def shared_secret(self, name: str, proposed: bytes) -> bytes:
        """The secret stored as ``name``: ``proposed`` if none was (stored
        now, so that the first server to ask sets it for every server on
        the database), else the one stored."""

    async def run_script(self, script: Sequence[Statement], read: bool = False) -> List[List[Tuple[Any, ...]]]:
        """``script``'s statements in one transaction, in order; the rows
        each returned ([] for none). For the tables of a part of the server
        that keeps its SQL to itself, the same on both databases
        (store/links.py). ``read``: the script only reads (SQLite runs it
        beside the writer, on its reader's connection)."""

    # -- identities ------------------------------------------------------------

    async def banned(self, fingerprint: str) -> Optional[str]:
        """Why the key of ``fingerprint`` is banned from the store's servers
        (``serve --ban``: store/moderation.py); None: it is not."""

    async def player(self, fingerprint: str, name: str) -> Player:
        """The player of ``fingerprint``, created on first sight with
        ``name`` (already reduced to the allowed characters) or, if another
        key holds that name, ``name`` with a distinct suffix."""

    async def set_prefs(self, player: int, prefs: Prefs) -> None: ...

    # -- the game in progress --------------------------------------------------

    async def claim(self, player: int, board: str, holder: str, ttl: float, take_over: bool = False) -> Optional[Claim]:
        """Take (or renew) the claim on the game; None when it is ours now,
        else the live claim of another holder (unless ``take_over``)."""

    async def renew(self, player: int, board: str, holder: str, ttl: float) -> bool:
        """Extend the claim ``holder`` still holds by ``ttl`` from now; False
        (nothing written) if it holds none: another session took the game
        over, or took it once it was free. Never takes a claim: a session
        that lost its game must not get it back by renewing. A claim past its
        time that no other session took is still ``holder``'s (nothing else
        wrote the game meanwhile), and is extended."""

    async def release(self, player: int, board: str, holder: str) -> None: ...

    async def load(self, player: int, board: str) -> Optional[bytes]:
        """The game's recording, header and items, or None if there is none."""

    async def load_saved(self, player: int, board: str) -> Optional[SavedGame]:
        """The game's recording and its snapshot, read together; None if there is no recording."""

    async def keep_snapshot(self, player: int, board: str, holder: str, snapshot: bytes) -> None:
        """Keep ``snapshot`` with the game, in place of the one before;
        :class:`ClaimLost` if ``holder`` lost the claim. A rewrite or
        discard of the recording drops it (an append does not: the snapshot
        says which recording it is of)."""

    async def rewrite(self, player: int, board: str, holder: str, recording: bytes) -> None:
        """Replace the game's recording whole (a new game, or a compacted
        one): atomic. :class:`ClaimLost` if ``holder`` lost the claim."""

    async def append(
        self, player: int, board: str, holder: str, items: bytes, daily_times: Optional[DailyTimes] = None
    ) -> None:
        """Append encoded items to the game's recording; returns once they
        are committed. :class:`ClaimLost` if ``holder`` lost the claim.
        ``daily_times``: a ranked daily game's entry and its keys' arrival
        times (space-separated, each with a leading space), appended to the
        entry's times in the same transaction: keys are never stored
        without their times, nor times without their keys."""

    async def discard(self, player: int, board: str, holder: str) -> None:
        """Forget the game in progress (it ended and went to the history)."""

    # -- bests and history -----------------------------------------------------

    async def best(self, player: int, key: str) -> int: ...

    async def record_best(self, player: int, key: str, score: int) -> int:
        """Keep ``score`` if it beats the stored best; the best now stored."""

    async def add_to_history(self, player: int, record: Record) -> None:
        """Add a finished game to the player's history."""

    async def history(self, player: int, limit: Optional[int] = None) -> List[Finished]:
        """The player's finished games, oldest first (the newest ``limit``)."""

    async def stats(self, player: int, held_seed: int) -> Tuple[List[BoardStats], int]:
        """The player's statistics per board, aggregated by the database, as
        :func:`~ansi2048.records.history.board_stats` gives them of their
        records but those of ``held_seed``; and how many of those there are."""

    async def finished(self, player: int, game: int) -> Optional[Record]:
        """The player's finished game of id ``game``; None if they have none
        of that id (another player's game is not theirs)."""

    # -- the daily leaderboard ---------------------------------------------------

    async def daily_start(
        self, day: str, player: int, address: str, started: float, recording: bytes, most_per_address: int
    ) -> Optional[DailyEntry]:
        """The player's ranked game of ``day``, begun now unless they have
        one; None if ``address`` already entered ``most_per_address``
        other players in that day's ranking."""

    async def daily_entry(self, day: str, player: int) -> Optional[DailyEntry]: ...

    async def daily_by_id(self, entry: int) -> Optional[DailyEntry]: ...

    async def daily_entries(self, day: Optional[str] = None) -> List[DailyEntry]:
        """The ranked games of ``day`` (None: every day), by id."""

    async def daily_board(self, day: str, me: Optional[int], top: int) -> DailyBoard:
        """``day``'s board: the ``top`` best ranked games (by score, then
        fewer moves, then the earlier start) and ``me``'s own standing, read
        without a recording."""

    async def daily_result(self, entry: DailyEntry) -> None:
        """Store ``entry``'s status, recording and result (found by its id),
        and whether its stored key times are no person's (``entry.machine``
        is not read: the times stored beside its keys decide)."""
