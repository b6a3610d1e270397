"""Saved games and best scores, in the user data directory (the shell).

A saved game *is* a recording: the header line, then one character per
action key, appended and flushed before the frame that shows the key is
drawn. Resuming is replaying it, so a resumed game has the same future spawns
and its whole undo history. An append of one byte either happened or not, so
SIGKILL at any instant leaves the previous state or the new one; the header
is written by temp file + ``os.replace``, so it is whole or absent. A save
is replayed in chunks (memory does not grow with it), and decoded strictly
(:class:`~.recording.BodyDecoder`): a stray byte never hides later keys.

Every file here is opened only if it is a regular file of its own: never
through a symlink (``O_NOFOLLOW``, an ``lstat`` on Windows), never blocking
on a FIFO (``O_NONBLOCK``, then ``fstat``). Anything else is set aside as
``.bad-<time>`` with one warning, like a file that cannot be parsed.

Best scores live in one small JSON file, merged under a lock (re-read, keep
the higher, replace atomically) so two games running at once never lower or
lose each other's best. Play writes it at most once a second, at once when
the game is over or not saved, and at the end (see
``interactive.BestWriter``); a best reached but not yet written is
recovered from the saved game on the next start, before anything else is
done with it.
"""

from __future__ import annotations

import json
import os
import stat
import sys
import time
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import IO, Any, Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Tuple

from . import __version__
from .engine import Game
from .history import HISTORY_FILE, History
from .keys import Action
from .recording import BodyDecoder, Header, Item, Reseed, apply_item, encode_item, format_header, split_header
from .records import Record, config_key, daily_key, unaided_key
from .session import Run, Session

__all__ = ["DataDir", "Keeper", "NotAFile", "Progress", "Resumed", "SaveFile", "data_dir"]

_BEST_FILE = "best.json"
_LOCK_FILE = "best.lock"
# Saves are read in chunks of this size, so resuming takes the same memory
# whatever the save's size (the game keeps a bounded undo history).
_CHUNK = 1 << 16
_MAX_HEADER = 4096  # a header with the longest seed is about 1100 bytes
_MAX_BEST_FILE = 1 << 20  # best.json is a few lines; anything bigger is not ours
# Never follow a link out of the data directory, never block on a FIFO.
# Windows has neither flag: there an lstat before the open does the first.
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_BINARY = getattr(os, "O_BINARY", 0)

# Told (bytes read, bytes in all) as a long resume goes; the caller decides
# whether and how to show it.
Progress = Callable[[int, int], None]


def data_dir(env: Mapping[str, str]) -> str:
    """Where ansi2048 keeps its files: ``ANSI2048_DATA_DIR`` if set, else the
    platform's user data directory (``$XDG_DATA_HOME/ansi2048`` or
    ``~/.local/share/ansi2048`` on Linux)."""
    override = env.get("ANSI2048_DATA_DIR")
    if override:
        return override
    import platformdirs

    return platformdirs.user_data_dir("ansi2048", appauthor=False)


class NotAFile(ValueError):
    """A symlink, FIFO, device or directory where the game keeps a file: it is
    set aside, never opened through (a FIFO would hang the game, a link would
    write outside the data directory)."""


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISDIR(mode):
        return "a directory"
    return "not a regular file"


def _open_regular(path: str, flags: int, mode: int = 0o644) -> int:
    """Open ``path`` if it is a regular file of its own; NotAFile if it is
    anything else (the name itself, not what a link points to)."""
    if not _NOFOLLOW:
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            if not flags & os.O_CREAT:
                raise
        else:
            if not stat.S_ISREG(info.st_mode):
                raise NotAFile(_kind(info.st_mode))
    try:
        fd = os.open(path, flags | _NOFOLLOW | _NONBLOCK | _BINARY, mode)
    except OSError as error:
        # ELOOP (EMLINK on BSD) for a link, ENXIO for a FIFO with no reader...
        try:
            info = os.lstat(path)
        except OSError:
            raise error from None
        if not stat.S_ISREG(info.st_mode):
            raise NotAFile(_kind(info.st_mode)) from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotAFile(_kind(info.st_mode))
        if _NONBLOCK:
            os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


@dataclass(frozen=True)
class Resumed:
    game: Game
    seed: int  # the seed in the save's header: with ``items`` it recreates ``game``
    items: Callable[[], Iterator[Item]]  # the saved items, read afresh, for --record
    best_seen: int = 0  # the highest score the saved keys reached, in any game
    # The game on the board from its start, and the games r left (undo brings
    # them back): see ``Session.runs``. None: the game starts here.
    runs: Optional[Tuple[Run, List[Run]]] = None


@dataclass(frozen=True)
class _Loaded:
    """A save replayed: the game on the board and what compaction needs."""

    game: Game
    seed: int  # the header's
    best_seen: int
    restarts_end: int  # items up to and including the last restart; 0: none
    seed_after_restart: int
    open_line: bool  # the save ends inside a '#' line (a directive cut short)
    runs: Optional[Tuple[Run, List[Run]]] = None  # see Resumed.runs


def _version_tuple(version: str) -> Tuple[int, ...]:
    parts = []
    for part in version.split("."):
        digits = "".join(ch for ch in part if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


def _is_restart(item: Item) -> bool:
    return item is Action.RESTART or isinstance(item, Reseed)


class SaveFile:
    """The saved game for one board configuration."""

    def __init__(self, path: str, rows: int, cols: int, goal: int) -> None:
        self.path = path
        self.rows = rows
        self.cols = cols
        self.goal = goal
        self._stream: Optional[IO[bytes]] = None

    def _header(self, stream: IO[bytes]) -> Tuple[Header, bytes]:
        """The save's header, checked, and the body bytes read past it."""
        data = b""
        while b"\n" not in data and len(data) < _MAX_HEADER:
            more = stream.read(_CHUNK)
            if not more:
                break
            data += more
        header, rest = split_header(data)
        # A header line not yet ended by its newline was cut short.
        if header is None or header.seed is None or b"\n" not in data:
            raise ValueError("no valid header")
        if (header.rows, header.cols, header.goal) != (self.rows, self.cols, self.goal):
            raise ValueError("header is for another board")
        if header.version is None:
            raise ValueError("the header has no version")
        if _version_tuple(header.version) > _version_tuple(__version__):
            raise ValueError(f"written by ansi2048 {header.version}, newer than this {__version__}")
        return header, rest

    def _open_body(self) -> Tuple[IO[bytes], Header, bytes]:
        """The save open for reading, its checked header, and the body bytes
        read past the header line; FileNotFoundError if there is no save."""
        stream = os.fdopen(_open_regular(self.path, os.O_RDONLY), "rb")
        try:
            header, first = self._header(stream)
        except BaseException:
            stream.close()
            raise
        return stream, header, first

    def load(self, progress: Optional[Progress] = None) -> Optional[_Loaded]:
        """The saved game replayed (finished or not); None if there is none.
        Raises ValueError (with the reason) if the file is corrupt or is not
        a regular file. Streams: memory stays flat whatever the save's size."""
        try:
            stream, header, first = self._open_body()
        except FileNotFoundError:
            return None
        assert header.seed is not None
        session = Session(Game(self.rows, self.cols, self.goal, header.seed))
        count, restarts_end, seed_after = 0, 0, header.seed

        def play(items: List[Item]) -> None:
            nonlocal count, restarts_end, seed_after
            for item in items:
                apply_item(session, item)
                count += 1
                if _is_restart(item):
                    restarts_end, seed_after = count, session.game.seed

        with stream:
            decoder = BodyDecoder(saved=True)
            for items in _chunks(stream, first, decoder, progress):
                play(items)
            open_line = decoder.open_line
            play(decoder.finish())
        # The log holds every score it reached: a best that a killed game had
        # not written yet is recovered from it.
        return _Loaded(session.game, header.seed, session.best, restarts_end, seed_after, open_line, session.runs())

    def items(self, skip: int = 0) -> Iterator[List[Item]]:
        """The saved items after the first ``skip``, a chunk's worth at a time
        (decoding only: no game is played)."""
        stream, _header, first = self._open_body()
        with stream:
            decoder = BodyDecoder(saved=True)
            for items in _chain_finish(_chunks(stream, first, decoder, None), decoder):
                if skip >= len(items):
                    skip -= len(items)
                    continue
                yield items[skip:]
                skip = 0

    def compact(self, loaded: _Loaded, progress: Optional[Progress] = None) -> Optional[_Loaded]:
        """Drop the games before the last restart from the save, if the game
        on the board is the one that restart began (an undo can have brought
        an earlier game back: then nothing is dropped, and None is returned).
        Keeps the save from growing with every restart; what goes is undoing
        past that restart, in this run too, so the screen and the save always
        agree. Raises OSError if the shorter save cannot be written (the
        save is then as it was)."""
        seed = loaded.seed_after_restart
        after = Session(Game(self.rows, self.cols, self.goal, seed))
        for items in self.items(loaded.restarts_end):
            for item in items:
                apply_item(after, item)
        if _state(after.game) != _state(loaded.game):
            return None

        def compacted() -> Iterator[bytes]:
            yield _header(after.game, seed)
            for items in self.items(loaded.restarts_end):
                yield "".join(encode_item(item) for item in items).encode("ascii")

        _atomic_write(self.path, compacted())
        return _Loaded(after.game, seed, loaded.best_seen, 0, seed, False, after.runs())

    def quarantine(self) -> str:
        """Move a bad save aside (never delete it); returns the new name."""
        return _set_aside(self.path, "bad")

    def begin(self, game: Game) -> None:
        """Start the save for ``game``, atomically, and keep it open for
        appending one key at a time."""
        self.close()
        _atomic_write(self.path, [_header(game, game.seed)])
        self.open_for_append()

    def open_for_append(self, end_line: bool = False) -> None:
        """Keep the save open to append one key at a time (unbuffered: each
        key reaches the file before the frame that shows it is drawn).
        ``end_line``: the save ends inside a '#' line, which must be ended
        first or the keys appended would land in it."""
        self.close()
        self._stream = os.fdopen(_open_regular(self.path, os.O_WRONLY | os.O_APPEND), "ab", buffering=0)
        if end_line:
            self._stream.write(b"\n")

    def append(self, item: Item) -> None:
        """One item, in one write (whole or absent); never quit, nor the AI's keys."""
        if self._stream is not None and item is not Action.QUIT and (not isinstance(item, Action) or item.game):
            self._stream.write(encode_item(item).encode("ascii"))

    def close(self) -> None:
        if self._stream is not None:
            with suppress(OSError):
                self._stream.close()
            self._stream = None


def _chunks(
    stream: IO[bytes], first: bytes, decoder: BodyDecoder, progress: Optional[Progress]
) -> Iterator[List[Item]]:
    """``first``, then the rest of ``stream``, decoded a chunk at a time."""
    total = os.fstat(stream.fileno()).st_size
    done = stream.tell() - len(first)
    data = first
    while True:
        if data:
            done += len(data)
            yield decoder.feed(data)
            if progress is not None:
                progress(done, total)
        data = stream.read(_CHUNK)
        if not data:
            return


def _chain_finish(chunks: Iterator[List[Item]], decoder: BodyDecoder) -> Iterator[List[Item]]:
    yield from chunks
    yield decoder.finish()


def _set_aside(path: str, why: str) -> str:
    """Rename ``path`` to ``path.<why>-<time>`` (with a counter if that is
    taken: two in one second must not overwrite each other); the new name.
    A link is renamed itself, never what it points to."""
    stem = f"{path}.{why}-{int(time.time())}"
    aside, counter = stem, 1
    while os.path.lexists(aside):
        counter += 1
        aside = f"{stem}-{counter}"
    os.replace(path, aside)
    return aside


def _header(game: Game, seed: int) -> bytes:
    return format_header(seed, game.rows, game.cols, game.goal, __version__).encode("ascii")


def _state(game: Game) -> Tuple[object, ...]:
    """Everything a resumed game must match, the generator included."""
    return (game.cells, game.score, game.moves, game.won, game.rng_state, game.seed, game.spawned)


def _atomic_write(path: str, chunks: Iterable[bytes], durable: bool = True) -> None:
    """Temp file in the same directory, then ``os.replace``: readers see the
    old file or the new one, whatever kills the process. ``durable`` also
    fsyncs, against power loss; the best scores skip it: a sync can take
    milliseconds, and a best lost to power loss is recovered from the
    saved game, which holds every score it reached."""
    temp = f"{path}.{os.getpid()}.tmp"
    with suppress(FileNotFoundError):
        os.unlink(temp)  # a stale one, or a link planted there: never written through
    try:
        with os.fdopen(_open_regular(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL), "wb") as stream:
            for chunk in chunks:
                stream.write(chunk)
            stream.flush()
            if durable:
                os.fsync(stream.fileno())
        os.replace(temp, path)
    finally:
        with suppress(FileNotFoundError):
            os.unlink(temp)


@contextmanager
def _locked(path: str, warnings: List[str]) -> Iterator[None]:
    """An exclusive advisory lock on ``path`` for the duration (the platform's
    own primitive, chosen here: flock on POSIX, msvcrt.locking on Windows)."""
    fd = _lock_fd(path, True, warnings)
    try:
        yield
    finally:
        os.close(fd)  # closing releases the lock on both platforms


def _lock_fd(path: str, blocking: bool, warnings: List[str]) -> int:
    """Open ``path`` and lock it; raises BlockingIOError when ``blocking`` is
    False and another process holds the lock. A lock file that is a link or
    a FIFO is set aside (``warnings`` says so) and a plain one made."""
    try:
        fd = _open_regular(path, os.O_RDWR | os.O_CREAT)
    except NotAFile as error:
        warnings.append(f"lock file {path} was {error}; kept as {_set_aside(path, 'bad')}")
        fd = _open_regular(path, os.O_RDWR | os.O_CREAT)
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
            with os.fdopen(_open_regular(path, os.O_RDONLY), "rb") as stream:
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
            aside = _set_aside(path, "bad")
        except OSError:
            self.warnings.append(f"best scores {path} {why}; ignoring it")
        else:
            self.warnings.append(f"best scores {path} {why}; kept as {aside}")
        return {}

    def best(self, key: str) -> int:
        with _locked(os.path.join(self.path, _LOCK_FILE), self.warnings):
            return self._read_best().get(key, 0)

    def claim(self, save: SaveFile) -> Optional[int]:
        """Lock ``save`` for this process (held until ``release``); None if
        another running game holds it: two games appending to one save would
        interleave their keys."""
        try:
            return _lock_fd(save.path + ".lock", False, self.warnings)
        except BlockingIOError:
            return None

    @staticmethod
    def release(lock: int) -> None:
        with suppress(OSError):
            os.close(lock)

    def record_best(self, key: str, score: int) -> int:
        """Raise the best for ``key`` to ``score`` if higher; returns the best
        now stored (which another game may have raised further)."""
        with _locked(os.path.join(self.path, _LOCK_FILE), self.warnings):
            scores = self._read_best()
            if score <= scores.get(key, 0):
                return scores.get(key, 0)
            scores[key] = score
            _atomic_write(
                os.path.join(self.path, _BEST_FILE),
                [json.dumps(scores, indent=1, sort_keys=True).encode("utf-8") + b"\n"],
                durable=False,
            )
            return score


def _why(error: Exception) -> object:
    return error.strerror if isinstance(error, OSError) and error.strerror else error


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
        except (OSError, NotAFile) as error:
            why = _why(error)
            warn(f"cannot use {store.path} ({why}); this game will not be saved")
            return
        self._store = store
        if self._lock is None:
            warn("another ansi2048 is playing this board; this one will not be saved")
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
                aside = f"kept as {save.quarantine()}"
            except OSError:
                aside = "left where it is"
            self.warn(f"saved game {save.path} is unusable ({error}); {aside}, starting a new game")
            return None
        except OSError as error:
            self._stop_saving(f"cannot read saved game {save.path} ({error.strerror or error})")
            return None
        if loaded is None:
            return None
        # First of all, and for a finished game too: the best it reached may
        # be on no other disk (the game was killed before writing it).
        self.record_best(loaded.best_seen)
        if loaded.game.over:
            return None
        if loaded.restarts_end:
            try:
                loaded = save.compact(loaded, progress) or loaded
            except (OSError, ValueError) as error:
                # A full disk, say: the save is whole as it was, and is played
                # from without being written to, lest the two disagree.
                why = _why(error)
                self._stop_saving(f"cannot shorten saved game {save.path} ({why})")
        if self._save is not None:
            try:
                save.open_for_append(end_line=loaded.open_line)
            except (OSError, ValueError) as error:
                why = _why(error)
                self._stop_saving(f"cannot write saved game {save.path} ({why})")
        return Resumed(loaded.game, loaded.seed, self._items(save), loaded.best_seen, loaded.runs)

    def _items(self, save: SaveFile) -> Callable[[], Iterator[Item]]:
        def items() -> Iterator[Item]:
            try:
                for chunk in save.items():
                    yield from chunk
            except (OSError, ValueError) as error:
                self.warn(f"cannot read saved game {save.path} ({error}); the recording is cut short")

        return items

    def begin(self, game: Game) -> None:
        if self._save is not None:
            try:
                self._save.begin(game)
            except (OSError, ValueError) as error:
                why = _why(error)
                self._stop_saving(f"cannot write the saved game ({why})")

    def append(self, item: Item) -> None:
        if self._save is not None:
            try:
                self._save.append(item)
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
        except (OSError, ValueError):
            return 0

    def record_best(self, score: int) -> int:
        """Raise the stored best to ``score``; the best now stored."""
        if self._store is None:
            return score
        try:
            best = self._store.record_best(self._key, score)
        except (OSError, ValueError) as error:
            why = _why(error)
            self.warn(f"cannot write best scores ({why})")
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
        except (OSError, ValueError) as error:
            self.warn(f"cannot write best scores ({_why(error)})")
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
