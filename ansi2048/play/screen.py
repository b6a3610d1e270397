"""The game on a terminal: the views the loop builds (:func:`.state.view`),
drawn at the screen's own size and colour depth and repainted in place
through a ``write`` function, sized by a ``size`` function (both given, so
the same screen draws on a real terminal, the Windows console, a test, or
into a buffer a driver sends later). What a frame shows is the loop's;
how it is drawn is the screen's: two screens of different sizes can draw
the same game."""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import IO, Any, Callable, Mapping, Optional, Sequence, Tuple

from ..options.context import Options
from ..render.frame import View, build_frame, layout_for
from ..render.help import help_frame
from ..render.lines import Frame, line_of
from ..render.motion import Sprite
from ..render.palette import Palette
from ..render.repaint import Repainter
from ..render.style import PLAIN, ColorDepth, choose_depth
from ..render.themes import THEMES
from ..terminal.streams import isatty

__all__ = ["Screen", "color_depth", "palette_for", "wants_motion"]


def color_depth(options: Options, stream: IO[Any], env: Mapping[str, str], legacy: bool = False) -> ColorDepth:
    """The colour depth for ``--color`` on ``stream`` (see ``choose_depth``)."""
    return choose_depth(options.color, isatty(stream), env, legacy_console=legacy)


def palette_for(options: Options) -> Palette:
    """The palette of ``--theme`` (or the config's; classic by default)."""
    return THEMES[options.theme or "classic"]()


class Screen:
    """Draws views as frames on a terminal, repainted in place."""

    def __init__(
        self,
        write: Callable[[str], None],
        size: Callable[[], Tuple[int, int]],
        depth: ColorDepth,
        env: Mapping[str, str],
        legacy: bool = False,
        palette: Optional[Palette] = None,
    ) -> None:
        self._write = write
        self._palette = palette
        self._size = size
        self._depth = depth
        # TERM=dumb cannot move the cursor: frames then follow each other.
        in_place = env.get("TERM") != "dumb"
        # Synchronized output (mode 2026) wherever frames are drawn in place,
        # except on the legacy Windows console, whose colorama prints private
        # modes literally. Not asked of the terminal first: a DECRQM query's
        # answer would arrive among the keys (and over SSH a round trip after
        # the first frame), and the terminals that lack the mode ignore it,
        # as ECMA-48 and xterm do every private mode they do not know (tmux,
        # VTE, the Linux console, pyte): sent to all, it costs 16 bytes a
        # frame and helps those that have it.
        self._repainter = Repainter(hide_cursor=in_place and not legacy, in_place=in_place, sync=not legacy)
        self.fits = True  # the last frame showed the board, not "too small"
        self._drawn: Optional[Tuple[object, ...]] = None  # what the last frame built was built from
        self._built: Optional[Frame] = None

    def paint(self, view: View, sprites: Optional[Sequence[Sprite]] = None, shake: int = 0) -> None:
        """Draw ``view`` at the window's size now (a frame of motion with
        ``sprites`` or ``shake``)."""
        width, height = self._size()
        drawn = (view, tuple(sprites) if sprites else (), shake, width, height)
        if drawn == self._drawn and self._built is not None:
            # The same view at the same size is the same frame (views are
            # values): keys that change nothing (refused moves, a board that
            # is over) cost no frame to build, only the diff that finds nothing.
            frame = self._built
        else:
            self.fits = layout_for(view, width, height) is not None
            frame = build_frame(view, self._depth, width, height, palette=self._palette, sprites=sprites, shake=shake)
            self._drawn, self._built = drawn, frame
        self._write(self._repainter.frame(frame, width, height))

    def paint_help(self, view: View) -> None:
        """The help screen in the board's place, for the game of ``view``
        (its keys, its layout's mark); any key brings the board back."""
        width, height = self._size()
        self._write(self._repainter.frame(help_frame(view, self._depth, width, height), width, height))

    def mark(self) -> Repainter:
        """What the terminal shows now, as this screen knows it, to come back
        to with :meth:`rewind` (the SSH server holds back a frame it could not
        save, and draws another in its place: serve/saving.py)."""
        return copy.copy(self._repainter)  # its frame on screen is a value: a shallow copy is a snapshot

    def rewind(self, mark: Repainter) -> None:
        """Take the terminal to show what it showed at ``mark`` (nothing is
        written: the caller sends or withholds the frames drawn since)."""
        self._repainter = copy.copy(mark)

    def notice(self, text: str) -> None:
        """The frame on screen again, its last line ``text`` instead: a word
        from the SSH server that no frame of the game may carry now (saving
        has paused, and the game's state is past what the terminal shows)."""
        width, height = self._size()
        shown = self._repainter.shown
        line = line_of([(text[: max(1, width - 1)], PLAIN)])
        self._write(self._repainter.frame(replace(shown, lines=(*shown.lines[:-1], line)), width, height))

    def redraw(self, mark: Repainter) -> None:
        """The frame on screen at ``mark`` again (a :meth:`notice` undone)."""
        width, height = self._size()
        self._write(self._repainter.frame(mark.shown, width, height))

    def close(self) -> None:
        """Leave the final frame on screen, the cursor shown, below it."""
        self._write(self._repainter.close())


def wants_motion(options: Options, env: Mapping[str, str]) -> bool:
    """Moves are shown moving unless asked not to (``--no-animation``,
    ``animation = false`` in the config, ``ANSI2048_NO_ANIMATION``) or the
    terminal cannot move its cursor (``TERM=dumb``)."""
    return options.animation and not env.get("ANSI2048_NO_ANIMATION") and env.get("TERM") != "dumb"
