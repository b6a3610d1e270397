"""What the keyboard game keeps in the user data directory (the shell):
the saved game (:mod:`.saves`), the best scores and the history.

Every file here is opened only if it is a regular file of its own
(:mod:`.files`); anything else is set aside as ``.bad-<time>`` with one
warning, like a file that cannot be parsed.

Best scores live in one small JSON file, merged under a lock (re-read, keep
the higher, replace atomically) so two games running at once never lower or
lose each other's best. Play writes it at most once a second, at once when
the game is over or not saved, and at the end (see
``performer.BestWriter``); a best reached but not yet written is
recovered from the saved game on the next start, before anything else is
done with it.
"""

from __future__ import annotations

import json
import os
import time
from contextlib import suppress
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional

from ..game.engine import Game
from ..game.session import Played, Session
from ..records.history import Record, config_key, daily_date, daily_key, unaided_key
from ..records.recording import Item
from .files import NotAFile, atomic_write, lock_fd, locked, open_regular, reason, set_aside
from .history_file import HISTORY_FILE, History, utc_timestamp
from .save_file import Progress, Resumed, SaveFile

__all__ = ["BoardStore", "DataDir", "PutAside", "data_dir", "lock_path"]

_BEST_FILE = "best.json"
_LOCK_FILE = "best.lock"
_MAX_BEST_FILE = 1 << 20  # best.json is a few lines; anything bigger is not ours
# Claims tried while other games let go of the same save (each removes its lock file).
_CLAIM_TRIES = 8


def lock_path(save: SaveFile) -> str:
    """The lock file that says a running game holds ``save``."""
    return save.path + ".lock"


def data_dir(env: Mapping[str, str]) -> str:
    """Where ansi2048 keeps its files: ``ANSI2048_DATA_DIR`` if set, else the
    platform's user data directory (``$XDG_DATA_HOME/ansi2048`` or
    ``~/.local/share/ansi2048`` on Linux)."""
    override = env.get("ANSI2048_DATA_DIR")
    if override:
        return override
    from .userdirs import user_dir

    return user_dir("data", env)


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
            with os.fdopen(open_regular(path, os.O_RDONLY), "rb") as stream:
                raw = stream.read(_MAX_BEST_FILE + 1)
        except FileNotFoundError:
            return {}
        except NotAFile as error:
            return self._quarantine_best(path, str(error))
        except OSError as error:
            return self._quarantine_best(path, f"unreadable ({error.__class__.__name__})")
        if len(raw) > _MAX_BEST_FILE:
            return self._quarantine_best(path, "too big")
        try:
            data: Any = json.loads(raw.decode("utf-8"))
        except (ValueError, RecursionError) as error:  # RecursionError: nested too deep
            return self._quarantine_best(path, f"unreadable ({error.__class__.__name__})")
        if not isinstance(data, dict) or not all(
            isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in data.values()
        ):
            return self._quarantine_best(path, "not a table of scores")
        return dict(data)

    def _quarantine_best(self, path: str, why: str) -> Dict[str, int]:
        try:
            aside = set_aside(path, "bad")
        except OSError:
            self.warnings.append(f"best scores {why}; ignoring the file\n{path}")
        else:
            self.warnings.append(f"best scores {why}; the file is set aside as\n{aside}")
        return {}

    def best(self, key: str) -> int:
        with locked(os.path.join(self.path, _LOCK_FILE), self.warnings):
            return self._read_best().get(key, 0)

    def claim(self, save: SaveFile) -> Optional[int]:
        """Lock ``save`` for this process (held until ``release``); None if
        another running game holds it: two games appending to one save would
        interleave their keys."""
        path = lock_path(save)
        for _ in range(_CLAIM_TRIES):
            try:
                fd = lock_fd(path, False, self.warnings)
            except BlockingIOError:
                return None
            # A game letting go removes its lock file (``release``): a lock
            # taken on the file it removed is no claim, the file now at the
            # path is the one to lock.
            try:
                if os.path.samestat(os.fstat(fd), os.stat(path)):
                    return fd
            except OSError:
                pass
            os.close(fd)
        return lock_fd(path, False, self.warnings)  # (a file system that cannot say: as before)

    @staticmethod
    def release(lock: int, path: str) -> None:
        """Let go of a claim, and remove its lock file first, while it is
        still held, so no empty lock file is left behind (and no other game
        can hold a lock on it: see ``claim``). Where an open file cannot be
        removed (Windows), it stays."""
        with suppress(OSError):
            os.unlink(path)
        with suppress(OSError):
            os.close(lock)

    def record_best(self, key: str, score: int) -> int:
        """Raise the best for ``key`` to ``score`` if higher; returns the best
        now stored (which another game may have raised further)."""
        with locked(os.path.join(self.path, _LOCK_FILE), self.warnings):
            scores = self._read_best()
            if score <= scores.get(key, 0):
                return scores.get(key, 0)
            scores[key] = score
            atomic_write(
                os.path.join(self.path, _BEST_FILE),
                [json.dumps(scores, indent=1, sort_keys=True).encode("utf-8") + b"\n"],
                durable=False,
            )
            return score


@dataclass(frozen=True)
class PutAside:
    """A daily game from an earlier day, left unfinished: its save was moved
    to ``path``, and the game goes into the history as ended that day."""

    game: Played
    day: str
    path: str

    @property
    def note(self) -> str:
        """What the board says: its new name's end, as the save's name and the
        data directory are known (the whole path does not fit 80 columns)."""
        return f"daily game of {self.day} set aside as ...{self.path.rpartition('.')[2]}"


class BoardStore:
    """One board's part of the data directory: the saved game, the best
    scores and the history; the keyboard game's
    :class:`~.performer.PlayStore`. Every failure here becomes a warning,
    never an end to the game: without a data directory the game is simply
    not saved.

    ``daily`` (a date) is the daily game's: its own save, and the day's
    best. A daily save holding an unfinished game of an earlier day is not
    resumed: it is put aside (``put_aside`` says where) and today's starts.
    Finished games go into the history dated by ``now``."""

    def __init__(
        self,
        env: Mapping[str, str],
        rows: int,
        cols: int,
        goal: int,
        warn: Callable[[str], None],
        daily: Optional[str] = None,
        now: Callable[[], float] = time.time,
    ):
        self.warn = warn
        self._now = now
        self._last_added: Optional[Played] = None
        self._board = (rows, cols, goal)
        self._daily = daily
        self.put_aside: Optional[PutAside] = None
        self._key = config_key(rows, cols, goal) if daily is None else daily_key(daily, rows, cols, goal)
        self._store: Optional[DataDir] = None
        self._save: Optional[SaveFile] = None
        self._lock: Optional[int] = None
        self._lock_path = ""
        self._history_broken = False
        store = DataDir(data_dir(env))
        try:
            store.ensure()
            save = store.save_file(rows, cols, goal, "" if daily is None else "daily-")
            self._lock = store.claim(save)
            self._lock_path = lock_path(save)
        except (OSError, NotAFile) as error:
            why = reason(error)
            warn(f"cannot use the data folder ({why}); not saving this game\n{store.path}")
            return
        self._store = store
        if self._lock is None:
            warn("another ansi2048 is playing this board; not saving this game")
        else:
            self._save = save

    @property
    def saving(self) -> bool:
        """True while the keys played reach the saved game (which then holds
        every score reached, so a best not yet written is never lost)."""
        return self._save is not None

    def resume(self, progress: Optional[Progress] = None) -> Optional[Resumed]:
        """The saved game, if there is one to resume; the save then goes on
        from where it stopped. A save that cannot be read or written is left
        as it is and this game is not saved: it must never be overwritten.
        ``progress`` is told how far the replay is, for a long save."""
        if self._save is None:
            return None
        save = self._save
        try:
            loaded = save.load(progress)
        except ValueError as error:  # NotAFile too: a link, a FIFO, a directory
            try:
                kept = f"the old one is set aside as\n{save.quarantine()}"
            except OSError:
                kept = f"the old one is left as it is\n{save.path}"
            self.warn(f"saved game unusable ({error}); starting a new game; {kept}")
            return None
        except OSError as error:
            self._stop_saving(f"cannot read the saved game ({error.strerror or error})", save.path)
            return None
        if loaded is None:
            return None
        session = Session(loaded.game, runs=loaded.runs)
        today = self._daily
        day = daily_date(session.run.seed) if today is not None else None
        earlier = day if day is not None and today is not None and day < today else None
        # First of all, and for a finished game too: the best it reached may
        # be on no other disk (the game was killed before writing it). An
        # earlier day's game raises that day's best, not today's.
        if earlier is None:
            self.record_best(loaded.best_seen)
        elif self._store is not None:
            with suppress(OSError, ValueError):
                self._store.record_best(daily_key(earlier, *self._board), loaded.best_seen)
        if loaded.game.over:
            return None
        if earlier is not None:
            self._put_aside(save, session, earlier)
            return None
        if loaded.restarts_end:
            try:
                loaded = save.compact(loaded, progress) or loaded
            except (OSError, ValueError) as error:
                # A full disk, say: the save is whole as it was, and is played
                # from without being written to, lest the two disagree.
                why = reason(error)
                self._stop_saving(f"cannot shorten the saved game ({why})", save.path)
        if self._save is not None:
            try:
                save.open_for_append(end_line=loaded.open_line)
            except (OSError, ValueError) as error:
                why = reason(error)
                self._stop_saving(f"cannot write the saved game ({why})", save.path)
        return Resumed(loaded.game, loaded.seed, self._items(save), loaded.best_seen, loaded.runs)

    def _put_aside(self, save: SaveFile, session: Session, day: str) -> None:
        """The daily game of ``day`` (passed) is not resumed: its save is kept
        aside, whole, and the game it holds ends here (into the history)."""
        try:
            path = save.put_aside()
        except OSError as error:
            self._stop_saving(f"cannot put aside the daily game of {day} ({reason(error)})", save.path)
            return
        self.put_aside = PutAside(session.played(), day, path)

    def _items(self, save: SaveFile) -> Callable[[], Iterator[Item]]:
        def items() -> Iterator[Item]:
            try:
                for chunk in save.items():
                    yield from chunk
            except (OSError, ValueError) as error:
                self.warn(f"cannot read the saved game ({error}); the recording is cut short\n{save.path}")

        return items

    def begin(self, game: Game) -> None:
        if self._save is not None:
            try:
                self._save.begin(game)
            except (OSError, ValueError) as error:
                why = reason(error)
                self._stop_saving(f"cannot write the saved game ({why})")

    def append(self, item: Item) -> None:
        if self._save is not None:
            try:
                self._save.append(item)
            except OSError as error:
                self._stop_saving(f"cannot write the saved game ({error.strerror or error})")

    def _stop_saving(self, why: str, path: str = "") -> None:
        """Say ``why`` (the file it is about: ``path``), and save no more."""
        self.warn(f"{why}; not saving this game" + (f"\n{path}" if path else ""))
        if self._save is not None:
            self._save.close()
            self._save = None

    def best(self) -> int:
        if self._store is None:
            return 0
        try:
            return self._store.best(self._key)
        except (OSError, ValueError):
            return 0

    def record_best(self, score: int) -> int:
        """Raise the stored best to ``score``; the best now stored."""
        if self._store is None:
            return score
        try:
            best = self._store.record_best(self._key, score)
        except (OSError, ValueError) as error:
            why = reason(error)
            self.warn(f"cannot write best scores ({why})")
            self._store = None
            return score
        for warning in self.drain_warnings():  # e.g. a best.json broken meanwhile
            self.warn(warning)
        return best

    def add_to_history(self, played: Optional[Played]) -> None:
        """Add a finished (or left) game to the history. A game can end
        more than once (game over, then r): the same game with the same keys
        goes in once. In a daily session, a game on a day's seed is marked
        as that day's game (an earlier day's, put aside unfinished, too)."""
        if played is None or played == self._last_added:
            return
        self._last_added = played
        daily = daily_date(played.seed) if self._daily is not None else None
        self.add_record(Record.of(played, utc_timestamp(self._now()), daily))

    def add_record(self, record: Record) -> None:
        """Add a finished game's record to the history (and raise the best
        without undo or AI if it qualifies)."""
        if self._store is None:
            return
        if not self._history_broken:
            try:
                note = self._store.history.append(record)
                if note:
                    self.warn(note)
            except (OSError, NotAFile) as error:  # NotAFile: made meanwhile (a link is never written through)
                self.warn(f"cannot write the history ({reason(error)}); games are not kept there")
                self._history_broken = True
        if record.unaided:
            self.record_unaided(record.score)

    def record_unaided(self, score: int) -> None:
        """Raise the best of the games played without undo or the AI."""
        if self._store is None:
            return
        try:
            self._store.record_best(unaided_key(self._key), score)
        except (OSError, ValueError) as error:
            self.warn(f"cannot write best scores ({reason(error)})")
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
            DataDir.release(self._lock, self._lock_path)
            self._lock = None
