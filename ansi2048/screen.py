"""The game on a terminal: frames built from the session and repainted in
place through a ``write`` function, sized by a ``size`` function (both given,
so the same screen draws on a real terminal, the Windows console or a test)."""

from __future__ import annotations

from dataclasses import replace
from typing import IO, Any, Callable, Mapping, Optional, Sequence, Tuple

from .context import Options
from .engine import Direction
from .render.frame import View, frame_lines, help_lines, layout_for
from .render.motion import Sprite
from .render.palette import Palette
from .render.repaint import Repainter
from .render.style import ColorDepth, choose_depth
from .render.themes import THEMES
from .session import Session
from .terminal.streams import isatty

__all__ = ["Screen", "color_depth", "palette_for"]


def color_depth(options: Options, stream: IO[Any], env: Mapping[str, str], legacy: bool = False) -> ColorDepth:
    """The colour depth for ``--color`` on ``stream`` (see ``choose_depth``)."""
    return choose_depth(options.color, isatty(stream), env, legacy_console=legacy)


def palette_for(options: Options) -> Palette:
    """The palette of ``--theme`` (or the config's; classic by default)."""
    return THEMES[options.theme or "classic"]()


class Screen:
    """Draws the session as frames on a terminal, repainted in place."""

    def __init__(
        self,
        write: Callable[[str], None],
        size: Callable[[], Tuple[int, int]],
        depth: ColorDepth,
        env: Mapping[str, str],
        legacy: bool = False,
        replay: bool = False,
        palette: Optional[Palette] = None,
    ) -> None:
        self._write = write
        self._palette = palette
        self._size = size
        self._depth = depth
        self._replay = replay
        # TERM=dumb cannot move the cursor: frames then follow each other.
        in_place = env.get("TERM") != "dumb"
        self._repainter = Repainter(hide_cursor=in_place and not legacy, in_place=in_place)
        self.note = ""
        # The AI's part of the note line: a hint (or that there is no move), autoplay's pace.
        self.hint: Optional[Direction] = None
        self.stuck = False
        self.autoplay = 0
        self.fits = True  # the last frame showed the board, not "too small"

    def show(
        self,
        session: Session,
        ending: str = "",
        *,
        gained: int = 0,
        sprites: Optional[Sequence[Sprite]] = None,
        shake: int = 0,
    ) -> None:
        """Draw the session; ``ending`` (play is over, no key works any
        more) replaces the line of keys, for the last frame. ``gained`` shows
        "+N" by the score; ``sprites`` and ``shake`` draw a frame of motion
        (see ``frame_lines``)."""
        width, height = self._size()
        view = replace(
            View.of(session, self.note, self._replay),
            ending=ending,
            gained=gained,
            hint=self.hint,
            stuck=self.stuck,
            autoplay=self.autoplay,
        )
        self.fits = layout_for(view, width, height) is not None
        lines = frame_lines(view, self._depth, width, height, palette=self._palette, sprites=sprites, shake=shake)
        self._write(self._repainter.frame(lines, width, height))

    def show_help(self, session: Session) -> None:
        """The help screen in the board's place (any key brings the board back)."""
        width, height = self._size()
        lines = help_lines(session.game.goal, self._depth, width, height)
        self._write(self._repainter.frame(lines, width, height))

    def close(self) -> None:
        """Leave the final frame on screen, the cursor shown, below it."""
        self._write(self._repainter.close())
