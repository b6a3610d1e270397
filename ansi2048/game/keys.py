"""Keys to actions: one pure, incremental decoder for the terminal and for pipes.

Feed it bytes as they arrive, in chunks of any size (an escape sequence may be
split across chunks); it returns the actions completed so far. Anything that
is not an action key is ignored one key at a time: unknown or broken escape
sequences, NUL, control bytes, invalid UTF-8 (bytes >= 0x80).

The AI's keys (hint, autoplay and its pace) are the keyboard's alone: they are
decoded only when asked for (``assist=True``), so a pipe, a recording or a save
reads them as nothing, and :class:`~ansi2048.game.session.Session` never sees them.
"""

from __future__ import annotations

from enum import Enum
from typing import Iterable, List, Optional, Tuple

from .engine import Direction

__all__ = ["ACTION_BYTES", "ASSIST_BYTES", "Action", "KeyDecoder", "move_action"]


class Action(Enum):
    """An action key; the value is its canonical character in recordings.

    The game's own actions change the game and are recorded; the others
    (``HELP``) only change what the keyboard game shows: never recorded,
    never read from a pipe."""

    UP = "w"
    LEFT = "a"
    DOWN = "s"
    RIGHT = "d"
    UNDO = "u"
    RESTART = "r"
    QUIT = "q"
    # The keyboard's own keys: help and the AI's. Never applied to a game,
    # recorded, saved or reported (see ``game``).
    HELP = "?"
    HINT = "t"
    AUTOPLAY = "p"
    FASTER = "+"
    SLOWER = "-"

    # Identity, in C: members are singletons, and Enum's own ``__hash__`` is
    # Python code, paid on every table lookup of every key replayed.
    __hash__ = object.__hash__

    @property
    def direction(self) -> Optional[Direction]:
        return _DIRECTIONS.get(self)

    @property
    def game(self) -> bool:
        """A key of the game itself (moves, undo, new game, quit), which
        ``Session.apply`` takes and recordings keep; the AI's keys are not."""
        return self not in _ASSIST


def move_action(direction: Direction) -> Action:
    """The key that makes ``direction``'s move (the AI's moves are played as keys)."""
    return _MOVES[direction]


_ASSIST = frozenset((Action.HELP, Action.HINT, Action.AUTOPLAY, Action.FASTER, Action.SLOWER))


_DIRECTIONS = {
    Action.UP: Direction.UP,
    Action.LEFT: Direction.LEFT,
    Action.DOWN: Direction.DOWN,
    Action.RIGHT: Direction.RIGHT,
}

_MOVES = {direction: action for action, direction in _DIRECTIONS.items()}

# Plain keys: WASD, vim hjkl, u r q, in either case (caps lock on), Ctrl-C.
ACTION_BYTES = {
    b"w": Action.UP, b"k": Action.UP,
    b"a": Action.LEFT, b"h": Action.LEFT,
    b"s": Action.DOWN, b"j": Action.DOWN,
    b"d": Action.RIGHT, b"l": Action.RIGHT,
    b"u": Action.UNDO, b"r": Action.RESTART, b"q": Action.QUIT,
}  # fmt: skip
_BY_BYTE: List[Optional[Action]] = [None] * 256
for _key, _action in ACTION_BYTES.items():
    _BY_BYTE[_key[0]] = _action
    _BY_BYTE[_key.upper()[0]] = _action
_BY_BYTE[0x03] = Action.QUIT  # Ctrl-C arrives as a byte: the terminal runs with ISIG off

# The keyboard's own keys (``assist``): ? help, t hint, p autoplay, + and
# - its pace ('=' too: '+' without shift on most layouts).
ASSIST_BYTES = {
    b"?": Action.HELP,
    b"t": Action.HINT,
    b"p": Action.AUTOPLAY,
    b"+": Action.FASTER,
    b"=": Action.FASTER,
    b"-": Action.SLOWER,
}
_WITH_ASSIST = list(_BY_BYTE)
for _key, _action in ASSIST_BYTES.items():
    _WITH_ASSIST[_key[0]] = _action
    _WITH_ASSIST[_key.upper()[0]] = _action
del _key, _action


def _no_action(table: List[Optional[Action]]) -> bytes:
    """The bytes ``table`` maps to no action: deleted in one C call
    (``bytes.translate``) from a run of plain keys before it is looked up."""
    return bytes(byte for byte in range(256) if table[byte] is None)


_NO_ACTION = {id(_BY_BYTE): _no_action(_BY_BYTE), id(_WITH_ASSIST): _no_action(_WITH_ASSIST)}

# Final byte of an arrow key, in both CSI (ESC [ A) and SS3 (ESC O A) form.
_ARROWS = {ord("A"): Action.UP, ord("B"): Action.DOWN, ord("C"): Action.RIGHT, ord("D"): Action.LEFT}

_ESC = 0x1B
# A CSI sequence longer than this is garbage, not a key: give up on it.
_MAX_CSI = 16


class _State(Enum):
    GROUND = 0
    ESCAPE = 1  # after ESC
    CSI = 2  # after ESC [
    SS3 = 3  # after ESC O
    COMMENT = 4  # after '#', until the end of the line


class KeyDecoder:
    """Incremental bytes -> actions.

    ``comments``: '#' starts a comment that runs to the end of the line (for
    recordings and bot scripts). The terminal turns it off, so a stray '#'
    typed during play does not swallow the keys after it.

    ``extra``: more (byte, action) keys (the config file's); a byte that
    already meant another action means the new one instead.

    ``assist``: decode the AI's keys too (the keyboard game); otherwise they
    are ignored like any other key that is not an action.
    """

    def __init__(self, comments: bool = True, extra: Iterable[Tuple[bytes, Action]] = (), assist: bool = False) -> None:
        self._comments = comments
        self._by_byte = _WITH_ASSIST if assist else _BY_BYTE
        extra = tuple(extra)
        if extra:
            self._by_byte = list(self._by_byte)
            for key, action in extra:
                self._by_byte[key[0]] = action
        no_action = _NO_ACTION.get(id(self._by_byte))
        self._no_action = _no_action(self._by_byte) if no_action is None else no_action
        # Where the byte-by-byte state machine takes over from the fast path
        # (unless a binding made the byte a key).
        starts = (b"\x1b", b"#") if comments else (b"\x1b",)
        self._special = tuple(start for start in starts if self._by_byte[start[0]] is None)
        self._state = _State.GROUND
        self._csi_length = 0

    @property
    def pending(self) -> bool:
        """True while an escape sequence has started but not ended: the caller
        decides, after a short wait, that a lone ESC was just ESC (``flush``)."""
        return self._state in (_State.ESCAPE, _State.CSI, _State.SS3)

    def flush(self) -> None:
        """Give up on a pending escape sequence (timeout or end of input)."""
        if self.pending:
            self._state = _State.GROUND

    def feed(self, data: bytes) -> List[Action]:
        actions: List[Action] = []
        by_byte = self._by_byte
        state = self._state
        i = 0
        end = len(data)
        while i < end:
            if state is _State.GROUND:
                # The common case, a run of plain keys, in C: up to the next
                # ESC (or '#' with comments), the bytes that are no action
                # deleted, each of the others looked up.
                stop = end
                for special in self._special:
                    found = data.find(special, i, stop)
                    if found >= 0:
                        stop = found
                if stop > i:
                    actions += [by_byte[byte] for byte in data[i:stop].translate(None, self._no_action)]  # type: ignore[misc]
                    i = stop
                    continue
                # ESC, or '#' with comments: any other byte was taken above.
                state = _State.ESCAPE if data[i] == _ESC else _State.COMMENT
                i += 1
            elif state is _State.COMMENT:
                newline = data.find(b"\n", i)
                if newline < 0:
                    i = end
                else:
                    i = newline + 1
                    state = _State.GROUND
            elif state is _State.ESCAPE:
                byte = data[i]
                if byte == ord("["):
                    state = _State.CSI
                    self._csi_length = 0
                    i += 1
                elif byte == ord("O"):
                    state = _State.SS3
                    i += 1
                elif byte == _ESC:
                    i += 1  # ESC ESC: the first was a lone ESC (or Alt+ prefix)
                else:
                    state = _State.GROUND  # Alt+key or a lone ESC: the key counts
            elif state is _State.CSI:
                byte = data[i]
                if 0x40 <= byte <= 0x7E:  # final byte: the sequence is complete
                    i += 1
                    state = _State.GROUND
                    arrow = _ARROWS.get(byte)
                    if arrow is not None:  # modifiers (ESC [1;5A) still mean the arrow
                        actions.append(arrow)
                elif 0x20 <= byte <= 0x3F and self._csi_length < _MAX_CSI:
                    i += 1  # parameter or intermediate byte
                    self._csi_length += 1
                else:
                    state = _State.GROUND  # broken: drop it, read this byte afresh
            else:  # SS3: exactly one more byte
                byte = data[i]
                state = _State.GROUND
                if 0x40 <= byte <= 0x7E:
                    i += 1
                    arrow = _ARROWS.get(byte)
                    if arrow is not None:
                        actions.append(arrow)
        self._state = state
        return actions
