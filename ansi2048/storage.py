"""Saved games and best scores, in the user data directory (the shell).

A saved game *is* a recording: the header line, then one character per
action key, appended and flushed before the frame that shows the key is
drawn. Resuming is replaying it, so a resumed game has the same future spawns
and its whole undo history. An append of one byte either happened or not, so
SIGKILL at any instant leaves the previous state or the new one; the header
is written by temp file + ``os.replace``, so it is whole or absent.

Finished games go to the history (:mod:`.history`), one line each.

Best scores live in one small JSON file, merged under a lock (re-read, keep
the higher, replace atomically) so two games running at once never lower or
lose each other's best. Play writes it at most once a second and at the end
(see ``interactive.BestWriter``); a best reached but not yet written is
recovered from the saved game on the next start.
"""

from __future__ import annotations

import json
import os
import sys
import time
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import IO, Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

from . import __version__
from .engine import Game
from .history import HISTORY_FILE, History
from .keys import Action
from .recording import format_header, recorded_actions, split_header
from .records import Record, config_key, daily_key, unaided_key
from .session import Run, Session

__all__ = ["DataDir", "Keeper", "Resumed", "SaveFile", "config_key", "data_dir"]

# In a save, between the keys: the AI played or hinted from here on in the
# game then on the board, whose score must then not raise the best when the
# save is resumed. A comment to a recording: replays read it as nothing.
ASSISTED_MARK = b"#ai\n"

_BEST_FILE = "best.json"
_LOCK_FILE = "best.lock"


def data_dir(env: Mapping[str, str]) -> str:
    """Where ansi2048 keeps its files: ``ANSI2048_DATA_DIR`` if set, else the
    platform's user data directory (``$XDG_DATA_HOME/ansi2048`` or
    ``~/.local/share/ansi2048`` on Linux)."""
    override = env.get("ANSI2048_DATA_DIR")
    if override:
        return override
    import platformdirs

    return platformdirs.user_data_dir("ansi2048", appauthor=False)


@dataclass(frozen=True)
class Resumed:
    game: Game
    seed: int  # the seed in the save's header: with ``keys`` it recreates ``game``
    keys: bytes  # the saved keys, for --record to write the whole game
    best_seen: int = 0  # the highest score the saved keys reached, in any game
    # The game on the board from its start, and the games r left (undo brings
    # them back): see ``Session.runs``. None: the game starts here.
    runs: Optional[Tuple[Run, List[Run]]] = None


def _version_tuple(version: str) -> Tuple[int, ...]:
    parts = []
    for part in version.split("."):
        digits = "".join(ch for ch in part if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


class SaveFile:
    """The saved game for one board configuration."""

    def __init__(self, path: str, rows: int, cols: int, goal: int) -> None:
        self.path = path
        self.rows = rows
        self.cols = cols
        self.goal = goal
        self._stream: Optional[IO[bytes]] = None

    def load(self) -> Optional[Resumed]:
        """The saved game if there is one to resume; None if there is none or
        it is over. Raises ValueError (with the reason) if the file is corrupt."""
        try:
            with open(self.path, "rb") as stream:
                data = stream.read()
        except FileNotFoundError:
            return None
        header, keys = split_header(data)
        # A header line not yet ended by its newline was cut short.
        if header is None or header.seed is None or b"\n" not in data:
            raise ValueError("no valid header")
        if (header.rows, header.cols, header.goal) != (self.rows, self.cols, self.goal):
            raise ValueError("header is for another board")
        if header.version is None:
            raise ValueError("the header has no version")
        if _version_tuple(header.version) > _version_tuple(__version__):
            raise ValueError(f"written by ansi2048 {header.version}, newer than this {__version__}")
        actions = _saved_actions(keys)
        session = Session(Game(self.rows, self.cols, self.goal, header.seed))
        last_restart, seed_after_restart = -1, header.seed
        for index, action in enumerate(actions):
            _apply(session, action)
            if action is Action.RESTART:
                last_restart, seed_after_restart = index, session.game.seed
        if session.game.over:
            return None
        # The log holds every score it reached: a best that a killed game had
        # not written yet is recovered here.
        resumed = Resumed(session.game, header.seed, keys, session.best, session.runs())
        if last_restart >= 0:
            return self._compacted(resumed, seed_after_restart, actions[last_restart + 1 :])
        return resumed

    def _compacted(self, resumed: Resumed, seed: int, since: Sequence[Optional[Action]]) -> Resumed:
        """Drop the games before the last restart from the save, if the game
        on the board is the one that restart began (an undo can have brought
        an earlier game back: then nothing is dropped). Keeps the save from
        growing with every restart; what goes is undoing past that restart,
        in this run too, so the screen and the save always agree."""
        after = Session(Game(self.rows, self.cols, self.goal, seed))
        for action in since:
            _apply(after, action)
        if _state(after.game) != _state(resumed.game):
            return resumed
        keys = b"".join(ASSISTED_MARK if a is None else a.value.encode("ascii") for a in since)
        _atomic_write(self.path, _header(after.game, seed) + keys)
        return Resumed(after.game, seed, keys, resumed.best_seen, after.runs())

    def quarantine(self) -> str:
        """Move a bad save aside (never delete it); returns the new name."""
        return _set_aside(self.path, "bad")

    def begin(self, game: Game, keys: bytes = b"") -> None:
        """Start the save for ``game`` (header + keys so far), atomically, and
        keep it open for appending one key at a time."""
        self.close()
        _atomic_write(self.path, _header(game, game.seed) + keys)
        self.open_for_append()

    def open_for_append(self) -> None:
        """Keep the save open to append one key at a time (unbuffered: each
        key reaches the file before the frame that shows it is drawn)."""
        self.close()
        self._stream = open(self.path, "ab", buffering=0)  # noqa: SIM115

    def append(self, action: Action) -> None:
        if self._stream is not None and action is not Action.QUIT and action.game:
            self._stream.write(action.value.encode("ascii"))

    def mark_assisted(self) -> None:
        """From here on the AI helped in the game on the board (one write:
        the mark is whole or absent)."""
        if self._stream is not None:
            self._stream.write(ASSISTED_MARK)

    def close(self) -> None:
        if self._stream is not None:
            with suppress(OSError):
                self._stream.close()
            self._stream = None


def _saved_actions(keys: bytes) -> List[Optional[Action]]:
    """The actions of a save's keys, with None where the AI began to help
    (``ASSISTED_MARK``) in the game being played at that point."""
    chunks = keys.split(ASSISTED_MARK)
    actions: List[Optional[Action]] = []
    for index, chunk in enumerate(chunks):
        actions.extend(recorded_actions(chunk))
        if index < len(chunks) - 1:
            actions.append(None)
    return actions


def _apply(session: Session, action: Optional[Action]) -> None:
    if action is None:
        session.assisted = True
    else:
        session.apply(action)


def _set_aside(path: str, why: str) -> str:
    """Rename ``path`` to ``path.<why>-<time>`` (with a counter if that is
    taken: two in one second must not overwrite each other); the new name."""
    stem = f"{path}.{why}-{int(time.time())}"
    aside, counter = stem, 1
    while os.path.exists(aside):
        counter += 1
        aside = f"{stem}-{counter}"
    os.replace(path, aside)
    return aside


def _header(game: Game, seed: int) -> bytes:
    return format_header(seed, game.rows, game.cols, game.goal, __version__).encode("ascii")


def _state(game: Game) -> Tuple[object, ...]:
    """Everything a resumed game must match, the generator included."""
    return (game.cells, game.score, game.moves, game.won, game.rng_state, game.seed, game.spawned)


def _atomic_write(path: str, data: bytes, durable: bool = True) -> None:
    """Temp file in the same directory, then ``os.replace``: readers see the
    old file or the new one, whatever kills the process. ``durable`` also
    fsyncs, against power loss; the best scores skip it: a sync can take
    milliseconds, and a best lost to power loss is recovered from the
    saved game, which holds every score it reached."""
    temp = f"{path}.{os.getpid()}.tmp"
    try:
        with open(temp, "wb") as stream:
            stream.write(data)
            stream.flush()
            if durable:
                os.fsync(stream.fileno())
        os.replace(temp, path)
    finally:
        with suppress(FileNotFoundError):
            os.unlink(temp)


@contextmanager
def _locked(path: str) -> Iterator[None]:
    """An exclusive advisory lock on ``path`` for the duration (the platform's
    own primitive, chosen here: flock on POSIX, msvcrt.locking on Windows)."""
    fd = _lock_fd(path, blocking=True)
    try:
        yield
    finally:
        os.close(fd)  # closing releases the lock on both platforms


def _lock_fd(path: str, blocking: bool) -> int:
    """Open ``path`` and lock it; raises BlockingIOError when ``blocking`` is
    False and another process holds the lock."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        if sys.platform == "win32":
            import msvcrt

            mode = msvcrt.LK_LOCK if blocking else msvcrt.LK_NBLCK  # type: ignore[attr-defined,unused-ignore]
            try:
                msvcrt.locking(fd, mode, 1)  # type: ignore[attr-defined,unused-ignore]
            except PermissionError as error:
                raise BlockingIOError(str(error)) from None
        else:
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_EX if blocking else fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BaseException:
        os.close(fd)
        raise
    return fd


class DataDir:
    """The data directory: save files and best scores."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.warnings: List[str] = []

    def ensure(self) -> None:
        os.makedirs(self.path, exist_ok=True)

    @property
    def history(self) -> History:
        return History(os.path.join(self.path, HISTORY_FILE))

    def save_file(self, rows: int, cols: int, goal: int, slot: str = "") -> SaveFile:
        """The save for a board; ``slot`` names another one for the same
        board (``daily-``: the daily game does not take the regular one's place)."""
        name = f"game-{slot}{config_key(rows, cols, goal)}.keys"
        return SaveFile(os.path.join(self.path, name), rows, cols, goal)

    def _read_best(self) -> Dict[str, int]:
        """Best scores. A file that is not what this version writes is moved
        aside (never deleted) and counts as empty; ``self.warnings`` says so."""
        path = os.path.join(self.path, _BEST_FILE)
        try:
            with open(path, encoding="utf-8") as stream:
                data: Any = json.load(stream)
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as error:
            return self._quarantine_best(path, f"unreadable ({error.__class__.__name__})")
        if not isinstance(data, dict) or not all(
            isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in data.values()
        ):
            return self._quarantine_best(path, "not a table of scores")
        return dict(data)

    def _quarantine_best(self, path: str, why: str) -> Dict[str, int]:
        try:
            aside = _set_aside(path, "bad")
        except OSError:
            self.warnings.append(f"best scores {path} {why}; ignoring it")
        else:
            self.warnings.append(f"best scores {path} {why}; kept as {aside}")
        return {}

    def best(self, key: str) -> int:
        with _locked(os.path.join(self.path, _LOCK_FILE)):
            return self._read_best().get(key, 0)

    def claim(self, save: SaveFile) -> Optional[int]:
        """Lock ``save`` for this process (held until ``release``); None if
        another running game holds it: two games appending to one save would
        interleave their keys."""
        try:
            return _lock_fd(save.path + ".lock", blocking=False)
        except BlockingIOError:
            return None

    @staticmethod
    def release(lock: int) -> None:
        with suppress(OSError):
            os.close(lock)

    def record_best(self, key: str, score: int) -> int:
        """Raise the best for ``key`` to ``score`` if higher; returns the best
        now stored (which another game may have raised further)."""
        with _locked(os.path.join(self.path, _LOCK_FILE)):
            scores = self._read_best()
            if score <= scores.get(key, 0):
                return scores.get(key, 0)
            scores[key] = score
            _atomic_write(
                os.path.join(self.path, _BEST_FILE),
                json.dumps(scores, indent=1, sort_keys=True).encode("utf-8") + b"\n",
                durable=False,
            )
            return score


class Keeper:
    """What interactive play keeps between runs: the saved game and the best
    score for this board. Every failure here becomes a warning, never an end
    to the game: without a data directory the game is simply not kept.

    ``daily`` (a date) keeps the daily game: its own save, and the day's best."""

    def __init__(
        self,
        env: Mapping[str, str],
        rows: int,
        cols: int,
        goal: int,
        warn: Callable[[str], None],
        daily: Optional[str] = None,
    ):
        self.warn = warn
        self._key = config_key(rows, cols, goal) if daily is None else daily_key(daily, rows, cols, goal)
        self._store: Optional[DataDir] = None
        self._save: Optional[SaveFile] = None
        self._lock: Optional[int] = None
        self._history_broken = False
        store = DataDir(data_dir(env))
        try:
            store.ensure()
            save = store.save_file(rows, cols, goal, "" if daily is None else "daily-")
            self._lock = store.claim(save)
        except OSError as error:
            warn(f"cannot use {store.path} ({error.strerror or error}); this game will not be saved")
            return
        self._store = store
        if self._lock is None:
            warn("another ansi2048 is playing this board; this one will not be saved")
        else:
            self._save = save

    def resume(self) -> Optional[Resumed]:
        """The saved game, if there is one to resume; the save then goes on
        from where it stopped. A save that cannot be read or written is left
        as it is and this game is not saved: it must never be overwritten."""
        if self._save is None:
            return None
        save = self._save
        try:
            resumed = save.load()
        except ValueError as error:
            try:
                aside = f"kept as {save.quarantine()}"
            except OSError:
                aside = "left where it is"
            self.warn(f"saved game {save.path} is unusable ({error}); {aside}, starting a new game")
            return None
        except OSError as error:
            self._stop_saving(f"cannot read saved game {save.path} ({error.strerror or error})")
            return None
        if resumed is not None:
            self.record_best(resumed.best_seen)
            try:
                save.open_for_append()
            except OSError as error:
                self._stop_saving(f"cannot write saved game {save.path} ({error.strerror or error})")
        return resumed

    def set_aside(self) -> None:
        """Keep the resumed game's save under another name (``--seed`` asks for
        a different game; the unfinished one must not be lost)."""
        if self._save is None:
            return
        self._save.close()
        try:
            aside = _set_aside(self._save.path, "unfinished")
        except OSError as error:
            self._stop_saving(f"cannot move the saved game aside ({error.strerror or error})")
        else:
            self.warn(f"your unfinished game was kept as {aside}")

    def begin(self, game: Game, keys: bytes = b"") -> None:
        if self._save is not None:
            try:
                self._save.begin(game, keys)
            except OSError as error:
                self._stop_saving(f"cannot write the saved game ({error.strerror or error})")

    def append(self, action: Action) -> None:
        if self._save is not None:
            try:
                self._save.append(action)
            except OSError as error:
                self._stop_saving(f"cannot write the saved game ({error.strerror or error})")

    def mark_assisted(self) -> None:
        """The AI helps in the game on the board: kept in the save, so that
        resuming it does not count its score as a best."""
        if self._save is not None:
            try:
                self._save.mark_assisted()
            except OSError as error:
                self._stop_saving(f"cannot write the saved game ({error.strerror or error})")

    def _stop_saving(self, why: str) -> None:
        self.warn(f"{why}; this game will not be saved")
        if self._save is not None:
            self._save.close()
            self._save = None

    def best(self) -> int:
        if self._store is None:
            return 0
        try:
            return self._store.best(self._key)
        except OSError:
            return 0

    def record_best(self, score: int) -> int:
        """Raise the stored best to ``score``; the best now stored."""
        if self._store is None:
            return score
        try:
            best = self._store.record_best(self._key, score)
        except OSError as error:
            self.warn(f"cannot write best scores ({error.strerror or error})")
            self._store = None
            return score
        for warning in self.drain_warnings():  # e.g. a best.json broken meanwhile
            self.warn(warning)
        return best

    def keep(self, record: Record) -> None:
        """Add a finished game to the history (and raise the best without
        undo or AI if it qualifies)."""
        if self._store is None:
            return
        if not self._history_broken:
            try:
                self._store.history.append(record)
            except OSError as error:
                self.warn(f"cannot write the history ({error.strerror or error}); games are not kept there")
                self._history_broken = True
        if record.unaided:
            self.record_unaided(record.score)

    def record_unaided(self, score: int) -> None:
        """Raise the best of the games played without undo or the AI."""
        if self._store is None:
            return
        try:
            self._store.record_best(unaided_key(self._key), score)
        except OSError as error:
            self.warn(f"cannot write best scores ({error.strerror or error})")
            self._store = None

    def drain_warnings(self) -> List[str]:
        if self._store is None:
            return []
        warnings, self._store.warnings = self._store.warnings, []
        return warnings

    def close(self) -> None:
        if self._save is not None:
            self._save.close()
        if self._lock is not None:
            DataDir.release(self._lock)
            self._lock = None

    @property
    def saving(self) -> bool:
        """Whether this game is being kept for the next run."""
        return self._save is not None
