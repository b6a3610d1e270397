"""What the game needs of a terminal, the same on every platform."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, List, Optional, Tuple

from ..keys import Action, KeyDecoder

__all__ = ["Console", "ScreenHooks"]


@dataclass
class Console:
    """An interactive terminal session: keys in, frames out, size.

    ``key_ready(seconds)`` waits up to ``seconds`` for a key (or anything
    else ``read_actions`` must see, such as a resize) and says whether one
    came: it times animation frames and cuts them short. A console without
    it gets no animation."""

    read_actions: Callable[[KeyDecoder], List[Action]]
    write: Callable[[str], None]
    size: Callable[[], Tuple[int, int]]
    legacy: bool  # colorama wraps stdout (old Windows console): 16 colours, no private modes
    key_ready: Optional[Callable[[float], bool]] = None


@dataclass(frozen=True)
class ScreenHooks:
    """What the console asks of the screen, from its read loop (never from a
    signal handler): ``redraw`` after a resize or on coming back from a
    suspend; ``leave`` before the terminal is handed back (Ctrl-Z)."""

    redraw: Callable[[], None]
    leave: Callable[[], None]
