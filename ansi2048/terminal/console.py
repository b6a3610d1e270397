"""What the game needs of a terminal, the same on every platform, and a
console over any pair of byte streams with a known window size."""

from __future__ import annotations

import signal
from dataclasses import dataclass
from typing import Callable, List, Optional, Tuple

from ..game.keys import Action, KeyDecoder
from .signals import Hangup

__all__ = ["ESC_TIMEOUT", "Console", "ScreenHooks", "stream_console"]

# How long a lone ESC waits for the rest of an arrow key before it counts as
# just ESC. Terminals send a whole sequence in one write; 50 ms is what vim's
# 'ttimeoutlen' defaults to in many setups and feels instant.
ESC_TIMEOUT = 0.05


@dataclass
class Console:
    """An interactive terminal session: keys in, frames out, size.

    ``key_ready(seconds)`` waits up to ``seconds`` for a key (or anything
    else ``read_actions`` must see, such as a resize) and says whether one
    came: it times animation frames and autoplay, and cuts them short. A
    console without it gets neither."""

    read_actions: Callable[[KeyDecoder], List[Action]]
    write: Callable[[str], None]
    size: Callable[[], Tuple[int, int]]
    legacy: bool  # colorama wraps stdout (old Windows console): 16 colours, no private modes
    key_ready: Optional[Callable[[float], bool]] = None
    suspends: bool = False  # Ctrl-Z hands the terminal back to the shell (POSIX job control)


@dataclass(frozen=True)
class ScreenHooks:
    """What the console asks of the screen, from its read loop (never from a
    signal handler): ``redraw`` after a resize or on coming back from a
    suspend; ``leave`` before the terminal is handed back (Ctrl-Z)."""

    redraw: Callable[[], None]
    leave: Callable[[], None]


# Reads what has arrived, waiting up to the timeout (None: as long as it
# takes): the bytes, b"" once the stream has ended, or None when nothing came
# in time (or the reader wants the window's size looked at again).
ByteReader = Callable[[Optional[float]], Optional[bytes]]


def stream_console(
    read: ByteReader,
    write: Callable[[bytes], None],
    size: Callable[[], Tuple[int, int]],
    hooks: ScreenHooks,
) -> Console:
    """A console over any byte streams: a pipe, a pty, a socket, memory.

    Keys are decoded from what ``read`` gives (an escape sequence may come
    split); frames are written to ``write`` as UTF-8. A window that changed
    size (``size()`` looked at after every read that returns) is redrawn
    through ``hooks``. The end of the input ends the game like a closed
    terminal (:class:`~.signals.Hangup`, SIGHUP)."""
    typed: List[bytes] = []  # read while waiting for a key, not decoded yet
    shown = [size()]

    def resized() -> bool:
        now = size()
        if now == shown[0]:
            return False
        shown[0] = now
        return True

    def key_ready(seconds: float) -> bool:
        if typed or size() != shown[0]:
            return True
        data = read(max(0.0, seconds))
        if data is not None:
            typed.append(data)
            return True
        return size() != shown[0]

    def read_actions(decoder: KeyDecoder) -> List[Action]:
        """At least one action, or an empty list once something else was
        dealt with: a resize, keys that are no action, a lone ESC."""
        while True:
            if resized():
                hooks.redraw()
                return []
            data = typed.pop(0) if typed else read(ESC_TIMEOUT if decoder.pending else None)
            if data is None:
                if decoder.pending:
                    decoder.flush()  # the ESC stood alone: no action
                    return []
                continue
            if not data:
                raise Hangup(int(getattr(signal, "SIGHUP", 1)))
            actions = decoder.feed(data)
            if actions or not decoder.pending:
                return actions

    def write_text(text: str) -> None:
        write(text.encode("utf-8", "replace"))

    return Console(read_actions, write_text, size, legacy=False, key_ready=key_ready)
