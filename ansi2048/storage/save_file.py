"""The saved game (the shell): a recording in the data directory, appended
key by key, replayed in chunks to resume, compacted past its last restart.

A saved game *is* a recording: the header line, then one character per
action key, appended and flushed before the frame that shows the key is
drawn. Resuming is replaying it, so a resumed game has the same future spawns
and its whole undo history. An append of one byte either happened or not, so
SIGKILL at any instant leaves the previous state or the new one; the header
is written by temp file + ``os.replace``, so it is whole or absent. A save
is replayed in chunks (memory does not grow with it), and decoded strictly
(:class:`~.recording.BodyDecoder`): a stray byte never hides later keys.
"""

from __future__ import annotations

import io
import os
from contextlib import suppress
from dataclasses import dataclass
from typing import IO, Callable, Iterable, Iterator, List, Optional, Tuple

from .. import __version__
from ..game.engine import Game
from ..game.keys import Action
from ..game.session import Run, Session
from ..records.recording import BodyDecoder, Header, Item, Reseed, apply_item, encode_item, format_header
from ..records.replay import MAX_HEADER, Steps, checked_header, finish, in_parts
from .files import atomic_write, open_regular, set_aside

__all__ = ["Loaded", "Progress", "Resumed", "SaveFile", "Steps", "continued_steps", "finish", "saved_bytes"]

# Saves are read in chunks of this size, so resuming takes the same memory
# whatever the save's size (the game keeps a bounded undo history).
_CHUNK = 1 << 16

# Told (bytes read, bytes in all) as a long resume goes; the caller decides
# whether and how to show it.
Progress = Callable[[int, int], None]


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
class Loaded:
    """A save replayed: the game on the board and what compaction needs."""

    game: Game
    seed: int  # the header's
    best_seen: int
    restarts_end: int  # items up to and including the last restart; 0: none
    seed_after_restart: int
    open_line: bool  # the save ends inside a '#' line (a directive cut short)
    runs: Optional[Tuple[Run, List[Run]]] = None  # see Resumed.runs
    items: int = 0  # the items replayed (restarts_end counts in them)


def _is_restart(item: Item) -> bool:
    return item is Action.RESTART or isinstance(item, Reseed)


class SaveFile:
    """The saved game for one board configuration: the file at ``path``, or
    a ``recording`` held in memory (a served game's, from its database),
    read and replayed by the same code."""

    def __init__(self, path: str, rows: int, cols: int, goal: int, recording: Optional[bytes] = None) -> None:
        self.path = path
        self.recording = recording
        self.rows = rows
        self.cols = cols
        self.goal = goal
        self._stream: Optional[IO[bytes]] = None

    def _header(self, stream: IO[bytes]) -> Tuple[Header, bytes]:
        """The save's header, checked (:func:`~.records.replay.checked_header`), and the body bytes read past it."""
        data = b""
        while b"\n" not in data and len(data) < MAX_HEADER:
            more = stream.read(_CHUNK)
            if not more:
                break
            data += more
        return checked_header(data, (self.rows, self.cols, self.goal))

    def _open_body(self) -> Tuple[IO[bytes], Header, bytes]:
        """The save open for reading, its checked header, and the body bytes
        read past the header line; FileNotFoundError if there is no save."""
        stream: IO[bytes]
        if self.recording is not None:
            stream = io.BytesIO(self.recording)
        else:
            stream = os.fdopen(open_regular(self.path, os.O_RDONLY), "rb")
        try:
            header, first = self._header(stream)
        except BaseException:
            stream.close()
            raise
        return stream, header, first

    def load(self, progress: Optional[Progress] = None) -> Optional[Loaded]:
        """The saved game replayed (finished or not); None if there is none.
        Raises ValueError (with the reason) if the file is corrupt or is not
        a regular file. Streams: memory stays flat whatever the save's size."""
        return finish(self.load_steps(progress=progress))

    def load_steps(self, every: int = 0, progress: Optional[Progress] = None) -> Steps[Optional[Loaded]]:
        """:meth:`load` in steps of ``every`` items (0: one step), for a
        caller that has other work to run between them (a server's event loop)."""
        try:
            stream, header, first = self._open_body()
        except FileNotFoundError:
            return None
        with stream:
            return (yield from self._replay(stream, header, first, self._size(stream), progress, every))

    def _size(self, stream: IO[bytes]) -> int:
        return len(self.recording) if self.recording is not None else os.fstat(stream.fileno()).st_size

    def _replay(
        self, stream: IO[bytes], header: Header, first: bytes, total: int, progress: Optional[Progress], every: int
    ) -> Steps[Loaded]:
        assert header.seed is not None
        session = Session(Game(self.rows, self.cols, self.goal, header.seed))
        decoder = BodyDecoder(saved=True)
        counts = yield from _played(
            session, _chunks(stream, first, total, decoder, progress), every, (0, 0, header.seed)
        )
        open_line = decoder.open_line
        count, restarts_end, seed_after = yield from _played(session, [decoder.finish()], every, counts)
        # The log holds every score it reached: a best that a killed game had
        # not written yet is recovered from it.
        runs = session.runs()
        return Loaded(session.game, header.seed, session.best, restarts_end, seed_after, open_line, runs, count)

    def items(self, skip: int = 0) -> Iterator[List[Item]]:
        """The saved items after the first ``skip``, a chunk's worth at a time
        (decoding only: no game is played)."""
        stream, _header, first = self._open_body()
        with stream:
            decoder = BodyDecoder(saved=True)
            for items in _chain_finish(_chunks(stream, first, self._size(stream), decoder, None), decoder):
                if skip >= len(items):
                    skip -= len(items)
                    continue
                yield items[skip:]
                skip = 0

    def compact(self, loaded: Loaded, progress: Optional[Progress] = None) -> Optional[Loaded]:
        """Drop the games before the last restart from the save, if the game
        on the board is the one that restart began (an undo can have brought
        an earlier game back: then nothing is dropped, and None is returned).
        Keeps the save from growing with every restart; what goes is undoing
        past that restart, in this run too, so the screen and the save always
        agree. Raises OSError if the shorter save cannot be written (the
        save is then as it was)."""
        shorter = self.compacted(loaded)
        if shorter is None:
            return None
        compacted, chunks = shorter
        atomic_write(self.path, chunks)
        return compacted

    def compacted(self, loaded: Loaded) -> Optional[Tuple[Loaded, Iterator[bytes]]]:
        """What :meth:`compact` writes, without writing it: the game as the
        shorter save replays it, and that save's bytes (read lazily from
        this one); None if nothing can be dropped."""
        return finish(self.compacted_steps(loaded))

    def compacted_steps(self, loaded: Loaded, every: int = 0) -> Steps[Optional[Tuple[Loaded, Iterator[bytes]]]]:
        """:meth:`compacted` in steps of ``every`` items (as :meth:`load_steps`)."""
        seed = loaded.seed_after_restart
        after = Session(Game(self.rows, self.cols, self.goal, seed))
        count, _, _ = yield from _played(after, self.items(loaded.restarts_end), every, (0, 0, seed))
        if _state(after.game) != _state(loaded.game):
            return None

        def chunks() -> Iterator[bytes]:
            yield _header(after.game, seed)
            for items in self.items(loaded.restarts_end):
                yield "".join(encode_item(item) for item in items).encode("ascii")

        return Loaded(after.game, seed, loaded.best_seen, 0, seed, False, after.runs(), count), chunks()

    def quarantine(self) -> str:
        """Move a bad save aside (never delete it); returns the new name."""
        return set_aside(self.path, "bad")

    def put_aside(self) -> str:
        """Move a game that will not be resumed here aside, unfinished (a
        daily game whose day has passed); returns the new name."""
        return set_aside(self.path, "unfinished")

    def begin(self, game: Game) -> None:
        """Start the save for ``game``, atomically, and keep it open for
        appending one key at a time."""
        self.close()
        atomic_write(self.path, [_header(game, game.seed)])
        self.open_for_append()

    def open_for_append(self, end_line: bool = False) -> None:
        """Keep the save open to append one key at a time (unbuffered: each
        key reaches the file before the frame that shows it is drawn).
        ``end_line``: the save ends inside a '#' line, which must be ended
        first or the keys appended would land in it."""
        self.close()
        self._stream = os.fdopen(open_regular(self.path, os.O_WRONLY | os.O_APPEND), "ab", buffering=0)
        if end_line:
            self._stream.write(b"\n")

    def append(self, item: Item) -> None:
        """One item, in one write (whole or absent)."""
        encoded = saved_bytes(item)
        if self._stream is not None and encoded:
            self._stream.write(encoded)

    def close(self) -> None:
        if self._stream is not None:
            with suppress(OSError):
                self._stream.close()
            self._stream = None


def continued_steps(loaded: Loaded, body: bytes, every: int = 0) -> Steps[Loaded]:
    """``loaded`` carried on through ``body``, whole items appended to its
    recording (as :func:`saved_bytes` encodes them), in steps of ``every``
    items: what replaying the longer recording gives (its ``seed`` and
    ``open_line`` aside: the header's, and whether ``body`` ends inside a
    '#' line). ``loaded``'s game and runs are played on, not copied."""
    game = loaded.game
    session = Session(game, loaded.best_seen, loaded.runs)
    decoder = BodyDecoder(saved=True)
    counts = (loaded.items, loaded.restarts_end, loaded.seed_after_restart)
    chunks = (decoder.feed(body[start : start + _CHUNK]) for start in range(0, len(body), _CHUNK))
    counts = yield from _played(session, chunks, every, counts)
    open_line = decoder.open_line
    count, restarts_end, seed_after = yield from _played(session, [decoder.finish()], every, counts)
    return Loaded(game, loaded.seed, session.best, restarts_end, seed_after, open_line, session.runs(), count)


def _played(
    session: Session, chunks: Iterable[List[Item]], every: int, counts: Tuple[int, int, int]
) -> Steps[Tuple[int, int, int]]:
    """``chunks``' items applied to ``session``, a step per ``every`` of
    them; ``counts`` carried on: the items applied, those up to and
    including the last restart, and the seed that restart began."""
    count, restarts_end, seed_after = counts
    for items in chunks:
        for part in in_parts(items, every):
            for item in part:
                apply_item(session, item)
                count += 1
                if _is_restart(item):
                    restarts_end, seed_after = count, session.game.seed
            yield
    return count, restarts_end, seed_after


def saved_bytes(item: Item) -> bytes:
    """What a save keeps of ``item``: its encoding; nothing for quit, nor
    for the AI's keys (its moves are saved as the keys they play)."""
    if item is Action.QUIT or (isinstance(item, Action) and not item.game):
        return b""
    return encode_item(item).encode("ascii")


def _chunks(
    stream: IO[bytes], first: bytes, total: int, decoder: BodyDecoder, progress: Optional[Progress]
) -> Iterator[List[Item]]:
    """``first``, then the rest of ``stream`` (``total`` bytes in all), decoded a chunk at a time."""
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


def _header(game: Game, seed: int) -> bytes:
    return format_header(seed, game.rows, game.cols, game.goal, __version__).encode("ascii")


def _state(game: Game) -> Tuple[object, ...]:
    """Everything a resumed game must match, the generator included."""
    return (game.cells, game.score, game.moves, game.won, game.rng_state, game.seed, game.spawned)
