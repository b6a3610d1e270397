"""The recording format (pure): a header line, then one character per action.

    # ansi2048 version=0.1.0 seed=7 size=4x4 goal=2048
    wasdwwu...

Any further line starting with '#' is a comment, except a line that is itself
a header with a seed (``# ansi2048 seed=N``): that restarts into seed N, as
``r`` restarts into a drawn seed (``--seed N`` over an unfinished saved game
writes one, so ``u`` still brings the old game back). The header is what
makes a bare ``ansi2048 < game.keys`` replay the recorded game exactly. Saved
games use the same format, so splitting off the header and replaying the keys
live here for both the command line and storage.

A saved game is decoded strictly (``BodyDecoder(saved=True)``): only the
characters the game writes are keys, and only whole ``# `` lines are
directives, so no stray byte in a save (a '#', an ESC) can hide the keys
after it. A game's recording is read the same way, with ``q`` (the key a
recording may end with, never saved) as its end: ``BodyDecoder(saved=True,
quits=True)``. A save also has the line ``# ai`` where the AI began to help in the
game then on the board (:data:`ASSISTED`), so a resumed game stays assisted;
a recording has no such line (to a replay it would be a comment).
"""

from __future__ import annotations

import re
from contextlib import suppress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Iterable, List, Optional, Protocol, Tuple, Union

from .. import __version__
from ..game.keys import Action, KeyDecoder
from ..game.limits import MAX_SEED_DIGITS

if TYPE_CHECKING:
    from ..game.session import Outcome, Session

__all__ = [
    "ASSISTED",
    "BOM",
    "MAGIC",
    "Assisted",
    "BodyDecoder",
    "FirstLine",
    "Header",
    "Item",
    "Output",
    "Recorder",
    "Reseed",
    "apply_item",
    "encode_item",
    "format_header",
    "parse_header",
    "recorded_actions",
    "replay",
    "split_header",
    "strip_bom",
]

MAGIC = "# ansi2048"
BOM = b"\xef\xbb\xbf"  # a UTF-8 byte order mark, as Notepad writes; skipped before a header
_FIELD = re.compile(r"(\w+)=(\S+)")
# ASCII digits only: str.isdigit() also accepts '²', which int() rejects.
_NUMBER = re.compile(f"[0-9]{{1,{MAX_SEED_DIGITS}}}")
_SIZE = re.compile(r"([0-9]{1,3})x([0-9]{1,3})")


@dataclass(frozen=True)
class Header:
    """What a recording's first line fixes; None where it says nothing.
    ``bad`` names the fields that were there but malformed (left None), so
    the user can be told; it takes no part in comparisons."""

    seed: Optional[int] = None
    rows: Optional[int] = None
    cols: Optional[int] = None
    goal: Optional[int] = None
    version: Optional[str] = None
    bad: Tuple[str, ...] = field(default=(), compare=False)


def format_header(seed: int, rows: int, cols: int, goal: int, version: str) -> str:
    return f"{MAGIC} version={version} seed={seed} size={rows}x{cols} goal={goal}\n"


def _number(text: str) -> Optional[int]:
    return int(text) if _NUMBER.fullmatch(text) else None


def parse_header(line: str) -> Optional[Header]:
    """The header in ``line``, or None if it is not one. Fields that are
    malformed are left out (the game then uses its defaults for them) and
    named in ``Header.bad``."""
    if not line.startswith(MAGIC + " ") and line.rstrip("\r\n") != MAGIC:
        return None
    fields = dict(_FIELD.findall(line[len(MAGIC) :]))
    seed = _number(fields.get("seed", ""))
    size = _SIZE.fullmatch(fields.get("size", ""))
    goal = _number(fields.get("goal", ""))
    parsed = {"seed": seed, "size": size, "goal": goal}
    return Header(
        seed=seed,
        rows=int(size.group(1)) if size else None,
        cols=int(size.group(2)) if size else None,
        goal=goal,
        version=fields.get("version"),
        bad=tuple(name for name, value in parsed.items() if name in fields and value is None),
    )


def strip_bom(data: bytes) -> bytes:
    """``data`` without a leading UTF-8 byte order mark (as Notepad saves)."""
    return data[len(BOM) :] if data.startswith(BOM) else data


def split_header(data: bytes) -> Tuple[Optional[Header], bytes]:
    """The header on the first line of ``data`` (after a BOM) and the bytes
    after that line; (None, ``data`` without its BOM) when there is none."""
    data = strip_bom(data)
    first, _newline, rest = data.partition(b"\n")
    header = parse_header(first.decode("utf-8", "replace"))
    if header is None:
        return None, data
    return header, rest


# A header is parsed from its first words, each kept up to this many bytes:
# enough for the longest valid field (a seed of MAX_SEED_DIGITS digits), so a
# longer one is kept cut, and is then malformed.
_KEEP_WORD = MAX_SEED_DIGITS + 64
_KEEP_WORDS = 32
_BLANKS = re.compile(rb"[ \t\r\v\f]+")
_MAGIC_BYTES = MAGIC.encode("ascii")


class FirstLine:
    """The first line of an input that arrives in chunks of any size: is it
    a recording header, and what comes after it.

    Bounded memory whatever the line's length: the header's first
    ``_KEEP_WORDS`` words are kept, each cut at ``_KEEP_WORD`` bytes, and the
    rest of the line is dropped as the comment it is, however it is split
    across chunks (none of it can ever be taken for keys). Runs of blanks
    count as one, so padding between the fields costs nothing."""

    def __init__(self) -> None:
        self._start = b""  # the line's first bytes, until they tell whether it is a header
        self._in_header = False
        self._words: List[bytes] = []
        self._word = b""
        self.header: Optional[Header] = None

    def feed(self, data: bytes) -> Optional[bytes]:
        """None while the first line goes on; then the bytes after it (all
        of the input so far, without a BOM, when it is not a header)."""
        if not self._in_header:
            self._start += data
            start = strip_bom(self._start)
            if BOM.startswith(self._start) or (_MAGIC_BYTES + b" ").startswith(start):
                return None  # too short to tell yet
            if not (start.startswith(_MAGIC_BYTES) and start[len(_MAGIC_BYTES) :][:1] in (b" ", b"\r", b"\n")):
                return start
            self._in_header = True
            data, self._start = start[len(_MAGIC_BYTES) :], b""
        line, newline, rest = data.partition(b"\n")
        parts = _BLANKS.split(line)
        for index, part in enumerate(parts):
            self._word += part[: _KEEP_WORD - len(self._word)]
            if index < len(parts) - 1:  # a blank follows: the word is complete
                self._end_word()
        if not newline:
            return None
        return self.finish() + rest

    def finish(self) -> bytes:
        """At the end of the input: the header if the line was one; the bytes
        not handed over yet."""
        if not self._in_header:  # a few bytes that could still have been a header
            start = strip_bom(self._start)
            self.header = parse_header(start.decode("utf-8", "replace"))
            return b"" if self.header is not None else start
        self._end_word()
        self.header = parse_header(" ".join([MAGIC, *(word.decode("utf-8", "replace") for word in self._words)]))
        return b""

    def _end_word(self) -> None:
        if self._word and len(self._words) < _KEEP_WORDS:
            self._words.append(self._word)
        self._word = b""


@dataclass(frozen=True)
class Reseed:
    """A restart into ``seed`` (undoable): a header line inside the body."""

    seed: int


@dataclass(frozen=True)
class Assisted:
    """In a save: from here on the AI played or hinted in the game on the board."""


ASSISTED = Assisted()
_ASSISTED_LINE = b"# ai"

# What a recording's body holds: action keys and restarts into a given seed
# (and, in a save, where the AI began to help).
Item = Union[Action, Reseed, Assisted]

_NEWLINE = ord("\n")
_SPACE = ord(" ")
# A '#' line longer than this is no directive (a header with the longest seed
# is about 1100 bytes): it is dropped as it streams, never held in memory.
_MAX_DIRECTIVE = 2048
# The characters the game writes to a save, one per action (quit is never saved).
_SAVED: List[Optional[Action]] = [None] * 256
for _action in Action:
    if _action is not Action.QUIT and _action.game:  # the keyboard's own keys are never saved
        _SAVED[ord(_action.value)] = _action
del _action
_NOT_SAVED = bytes(b for b in range(256) if _SAVED[b] is None)
# The characters the game writes to a recording: a save's, and q.
_RECORDED = list(_SAVED)
_RECORDED[ord(Action.QUIT.value)] = Action.QUIT
_NOT_RECORDED = bytes(b for b in range(256) if _RECORDED[b] is None)


def encode_item(item: Item) -> str:
    """How ``item`` is written in a recording or save."""
    if isinstance(item, Reseed):
        return f"\n{MAGIC} seed={item.seed}\n"
    if isinstance(item, Assisted):
        return "\n" + _ASSISTED_LINE.decode("ascii") + "\n"
    return item.value


def apply_item(session: Session, item: Item) -> Outcome:
    """Apply one recorded item to ``session``; its :class:`~.session.Outcome`."""
    if isinstance(item, Reseed):
        return session.restart(item.seed)
    if isinstance(item, Assisted):
        return session.assist()
    return session.apply(item)


class BodyDecoder:
    """Incremental bytes -> items for a recording's body (what follows the
    header line, so it starts at the beginning of a line).

    ``saved=False`` (replays, bots): keys as :class:`~.keys.KeyDecoder` reads
    them, '#' starts a comment. ``saved=True`` (the saved game): only the
    characters the game writes count, and a '#' that does not start a
    ``# `` line is a stray byte, so what was appended after it still counts.
    In both, a line that is a header with a seed is a :class:`Reseed`.
    ``quits`` (with ``saved``, a game's recording): ``q`` counts too.
    """

    def __init__(self, saved: bool = False, quits: bool = False) -> None:
        self._saved = saved
        self._table, self._others = (_RECORDED, _NOT_RECORDED) if quits else (_SAVED, _NOT_SAVED)
        self._keys = KeyDecoder(comments=False)
        self._line: Optional[bytearray] = None  # a line that began with '#', so far
        self._skipping = False  # inside a comment: drop bytes up to the newline
        self._line_start = True

    @property
    def open_line(self) -> bool:
        """True if the input so far ends inside a '#' line (a directive cut
        short, say): a writer must end that line before appending keys."""
        return self._line is not None or self._skipping

    def _decode(self, data: bytes) -> List[Action]:
        if not data:
            return []
        self._line_start = data[-1] == _NEWLINE
        if self._saved:
            table = self._table
            return [table[b] for b in data.translate(None, self._others)]  # type: ignore[misc]
        return self._keys.feed(data)

    def _end_line(self, line: bytes) -> List[Item]:
        """A whole line that began with '#': a directive, a comment, or (in a
        save, '#' not followed by a space) a stray '#' before keys."""
        header = parse_header(line.decode("utf-8", "replace")) if len(line) <= _MAX_DIRECTIVE else None
        if header is not None and header.seed is not None:
            return [Reseed(header.seed)]
        if self._saved and line.rstrip(b"\r") == _ASSISTED_LINE:
            return [ASSISTED]
        if self._saved and line[1:2] != b" ":
            return list(self._decode(line[1:]))
        return []

    def feed(self, data: bytes) -> List[Item]:
        items: List[Item] = []
        i, end = 0, len(data)
        while i < end:
            if self._skipping:
                newline = data.find(b"\n", i)
                if newline < 0:
                    break
                i, self._skipping, self._line_start = newline + 1, False, True
            elif self._line is not None:
                newline = data.find(b"\n", i)
                stop = end if newline < 0 else newline
                self._line += data[i:stop]
                i = stop
                if len(self._line) > _MAX_DIRECTIVE:
                    line, self._line = bytes(self._line), None
                    if self._saved and line[1:2] != b" ":
                        items += self._decode(line[1:])
                    else:
                        self._skipping = True
                elif newline >= 0:
                    line, self._line = bytes(self._line), None
                    items += self._end_line(line)
                    i, self._line_start = newline + 1, True
            else:
                hash_at = data.find(b"#", i)
                stop = end if hash_at < 0 else hash_at
                items += self._decode(data[i:stop])
                if hash_at < 0:
                    break
                i = hash_at + 1
                if self._keys.pending:
                    items += self._decode(b"#")  # inside an escape sequence
                elif self._line_start:
                    self._line = bytearray(b"#")
                elif not self._saved:
                    self._skipping = True
                self._line_start = False
        return items

    def finish(self) -> List[Item]:
        """The end of the input: a '#' line cut short gives what it holds."""
        line, self._line, self._skipping = self._line, None, False
        if line is None:
            return []
        if self._saved and line[1:2] != b" ":
            return list(self._decode(bytes(line[1:])))
        return []


def recorded_actions(keys: bytes) -> List[Item]:
    """The items that recorded ``keys`` replay: comments skipped, and quit
    dropped, because quitting is not part of a game."""
    decoder = BodyDecoder()
    items = decoder.feed(keys) + decoder.finish()
    return [item for item in items if item is not Action.QUIT]


def replay(session: Session, keys: bytes) -> None:
    """Apply recorded ``keys`` to ``session``."""
    for item in recorded_actions(keys):
        apply_item(session, item)


# -- writing a recording ------------------------------------------------------


class Output(Protocol):
    """Where the recording and the cast write: text, flushed as it goes. The
    shell's ``files.OutputSink`` (or any text stream); a write or flush that
    fails raises OSError, and the writer stops that output, once."""

    @property
    def name(self) -> str: ...

    def write(self, text: str, /) -> object: ...

    def flush(self) -> None: ...

    def close(self) -> None: ...


class Recorder:
    """Writes the header and one character per action key, flushed as it goes,
    so a killed game still leaves a usable recording. A write that fails,
    the header's as any other (a full disk, a reader that left or falls
    behind), stops the recording with one warning; the game goes on, as it
    does when a cast cannot be written."""

    def __init__(self, stream: Optional[Output], warn: Callable[[str], None]) -> None:
        self._stream = stream
        self.warn = warn

    def start(self, seed: int, rows: int, cols: int, goal: int, items: Iterable[Item] = ()) -> None:
        """The header, and the items already played (a resumed game is recorded whole)."""
        if self._stream is not None:
            self._put(format_header(seed, rows, cols, goal, __version__) + "".join(map(encode_item, items)))

    def action(self, action: Item) -> None:
        if self._stream is not None:
            self._put(encode_item(action))

    def _put(self, text: str) -> None:
        assert self._stream is not None
        try:
            self._stream.write(text)
            self._stream.flush()
        except OSError as error:
            self.warn(f"recording stopped ({error.strerror or error})")
            self._drop()

    def close(self) -> None:
        if self._stream is not None:
            with suppress(OSError):
                self._stream.write("\n")
            self._drop()

    def _drop(self) -> None:
        assert self._stream is not None
        with suppress(OSError):
            self._stream.close()
        self._stream = None
