"""A recording replayed through the engine, the pure part: its header
checked (:func:`checked_header`, the one rule the saved game and the
verification share), its body read (:func:`body_decoder`, one reading
for the verification and every local replay: ``ansi2048 --json <
game.keys`` ends where the verification did) and replayed to the game it
gives (:func:`replay_steps`), and whether that game is the one claimed
(:func:`verdict_steps`: the one definition of "the replay matches", which
ranks a served daily game and which ``ansi2048 serve --verify`` checks
again). Everything may run in steps (:data:`Steps`: a caller with other
work, a server's event loop, runs it between them; :func:`finish` runs it
through at once)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generator, Iterator, List, Optional, Sequence, Tuple, TypeVar, cast

from .. import __version__
from ..game.engine import Game
from ..game.keys import Action
from ..game.session import Session
from .recording import BodyDecoder, Header, Item, apply_item, split_header

__all__ = [
    "MAX_HEADER",
    "OTHER_RULES",
    "NewerRules",
    "Replayed",
    "Result",
    "Setup",
    "Steps",
    "body_decoder",
    "checked_header",
    "finish",
    "in_parts",
    "newer_rules",
    "replay",
    "replay_steps",
    "verdict",
    "verdict_steps",
]

# A replay in steps: it yields between parts of its items (so a caller can
# run other work between them), and returns what it replayed.
T = TypeVar("T")
Steps = Generator[None, None, T]

MAX_HEADER = 4096  # a header with the longest seed is about 1100 bytes
OTHER_RULES = "recorded under other rules"  # why a recording of another version is never ranked by this one


def finish(steps: Steps[T]) -> T:
    """What ``steps`` gives, run through at once."""
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return cast(T, done.value)


def in_parts(items: List[Item], every: int) -> Iterator[List[Item]]:
    """``items`` in parts of ``every`` (0: whole)."""
    if not every or len(items) <= every:
        yield items
        return
    for start in range(0, len(items), every):
        yield items[start : start + every]


def _version_tuple(version: str) -> Tuple[int, ...]:
    parts = []
    for part in version.split("."):
        digits = "".join(ch for ch in part if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


class NewerRules(ValueError):
    """A recording of a newer version than this one: its rules may be other ones."""


def checked_header(data: bytes, board: Optional[Tuple[int, int, int]] = None) -> Tuple[Header, bytes]:
    """The header at the start of ``data`` (a recording, or its first bytes)
    if this version can replay what follows it, and the bytes after it;
    ValueError (the reason, one line) if not. ``board``: the rows, columns
    and goal it must be for."""
    header, rest = split_header(data)
    # A header line not yet ended by its newline was cut short.
    if header is None or b"\n" not in data[:MAX_HEADER]:
        raise ValueError("no valid header")
    _check(header, board)
    return header, rest


def _check(header: Header, board: Optional[Tuple[int, int, int]] = None) -> None:
    """:func:`checked_header`'s rule on a header already parsed."""
    if header.seed is None:
        raise ValueError("no valid header")
    if board is not None and (header.rows, header.cols, header.goal) != board:
        raise ValueError("header is for another board")
    if header.rows is None or header.cols is None or header.goal is None:
        raise ValueError("no valid header")
    if header.version is None:
        raise ValueError("the header has no version")
    if _version_tuple(header.version) > _version_tuple(__version__):
        raise NewerRules(f"written by ansi2048 {header.version}, newer than this {__version__}")


def body_decoder(header: Optional[Header]) -> BodyDecoder:
    """How the body after ``header`` is read, by the verification and by
    every local replay alike (``ansi2048 --json < game.keys``, a cast, a
    replay). A game's recording (a header with the version, seed, size and
    goal the game writes) is read as the verification reads it: only the
    keys the game writes to a recording count (``q``, which ends it, among
    them), so the local replay of a downloaded ranked game ends on the board
    that ranked it, whatever else was added to the file (an arrow's escape
    sequence, ``W``, ^C are keys to a keyboard's reading). Anything else is
    keys typed or piped by hand, read as a keyboard's."""
    if header is None:
        return BodyDecoder()
    try:
        _check(header)
    except NewerRules:
        pass  # a game's recording all the same (verdict then says: other rules)
    except ValueError:
        return BodyDecoder()
    return BodyDecoder(saved=True, quits=True)


def newer_rules(header: Header) -> str:
    """Why a game's recording (``header``'s) may replay here to another game
    than it recorded: it was written by a newer version, whose rules may be
    other ones (what :func:`verdict` calls :data:`OTHER_RULES`); "" if not."""
    try:
        _check(header)
    except NewerRules as newer:
        return str(newer)
    except ValueError:
        pass  # no game's recording: keys piped by hand
    return ""


@dataclass(frozen=True)
class Setup:
    """The game a recording must be of: its seed, board and goal (its first line's)."""

    seed: int
    rows: int
    cols: int
    goal: int

    @classmethod
    def of(cls, game: Game) -> Setup:
        return cls(game.seed, game.rows, game.cols, game.goal)


def cells_text(cells: Sequence[int]) -> str:
    """A board as the store keeps it: row by row, space-separated."""
    return " ".join(str(cell) for cell in cells)


@dataclass(frozen=True)
class Result:
    """What a game came to, as a replay must reproduce it: the numbers a
    leaderboard shows (the score, the moves; the biggest tile is the
    board's) and the board itself, which the local replay
    (``ansi2048 --json < game.keys``) shows too."""

    score: int
    moves: int
    cells: str  # row by row, space-separated

    @classmethod
    def of(cls, game: Game) -> Result:
        return cls(game.score, game.moves, cells_text(game.cells))


@dataclass(frozen=True)
class Replayed:
    """What a recording's replay gives."""

    score: int
    biggest: int
    moves: int
    over: bool
    cells: str  # row by row, space-separated

    @property
    def result(self) -> Result:
        return Result(self.score, self.moves, self.cells)


def replay(recording: bytes) -> Replayed:
    """``recording`` replayed from its header's seed through the engine, as
    a saved game is (strictly); ValueError (the reason) if it cannot be."""
    return finish(replay_steps(recording))


def replay_steps(recording: bytes, every: int = 0) -> Steps[Replayed]:
    """:func:`replay` in steps of ``every`` items (0: one step)."""
    header, body = checked_header(recording)
    return (yield from _played(header, body, every))


def _played(header: Header, body: bytes, every: int) -> Steps[Replayed]:
    assert header.seed is not None and header.rows is not None and header.cols is not None
    assert header.goal is not None  # (checked_header)
    session = Session(Game(header.rows, header.cols, header.goal, header.seed))
    decoder = body_decoder(header)  # (strict: what the game writes, and nothing else, counts)
    items = decoder.feed(body) + decoder.finish()
    if Action.QUIT in items:  # the recording ends there, as its local replay does
        items = items[: items.index(Action.QUIT)]
    for part in in_parts(items, every):
        for item in part:
            apply_item(session, item)
        yield
    game = session.game
    return Replayed(game.score, game.biggest, game.moves, game.over, cells_text(game.cells))


def verdict(recording: bytes, setup: Setup, claimed: Result) -> Tuple[Optional[Replayed], str]:
    """Whether ``recording`` is a game of ``setup`` that came to ``claimed``,
    under this version's rules: its replay, and why not ("" when it is).
    The replay matches when the header names this version and ``setup``, and
    the replay gives ``claimed``'s score, moves and board."""
    return finish(verdict_steps(recording, setup, claimed))


def verdict_steps(
    recording: bytes, setup: Setup, claimed: Result, every: int = 0
) -> Steps[Tuple[Optional[Replayed], str]]:
    """:func:`verdict` in steps of ``every`` items of the replay, for the event loop to run between."""
    try:
        header, body = checked_header(recording)
        replayed = yield from _played(header, body, every)
    except NewerRules:
        return None, OTHER_RULES
    except ValueError as error:
        return None, str(error)
    if header.version != __version__:
        return replayed, OTHER_RULES
    if Setup(header.seed or 0, header.rows or 0, header.cols or 0, header.goal or 0) != setup:
        return replayed, "recorded from another seed or board than the game's"
    if replayed.score != claimed.score:
        return replayed, f"the replay gives {replayed.score}, the game showed {claimed.score}"
    if replayed.moves != claimed.moves:
        return replayed, f"the replay gives {replayed.moves} moves, the game showed {claimed.moves}"
    if replayed.cells != claimed.cells:
        return replayed, "the replay gives another board"
    return replayed, ""
