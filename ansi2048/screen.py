"""The game on a terminal: frames built from the session and repainted in
place through a ``write`` function, sized by a ``size`` function (both given,
so the same screen draws on a real terminal, the Windows console or a test)."""

from __future__ import annotations

from dataclasses import replace
from typing import IO, Any, Callable, Mapping, Optional, Sequence, Tuple

from .context import Options
from .engine import Direction, Slide
from .keys import Action
from .render.frame import View, build_frame, layout_for
from .render.help import help_frame
from .render.motion import GAIN_SECONDS, SETTLE_SECONDS, SHAKE_SECONDS, Sprite, motion_frames
from .render.palette import Palette
from .render.repaint import Repainter
from .render.style import ColorDepth, choose_depth
from .render.themes import THEMES
from .session import Session
from .terminal.streams import isatty

__all__ = ["Motion", "Screen", "color_depth", "palette_for", "wants_motion"]


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
        bindings: Tuple[Tuple[str, Action], ...] = (),
    ) -> None:
        self._write = write
        self._bindings = bindings  # the config's keys, for the key line and the help
        self._palette = palette
        self._size = size
        self._depth = depth
        self._replay = replay
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
        (see ``build_frame``)."""
        view = replace(
            View.of(session, self.note, self._replay),
            ending=ending,
            gained=gained,
            hint=self.hint,
            stuck=self.stuck,
            autoplay=self.autoplay,
            bindings=self._bindings,
        )
        self.paint(view, sprites, shake)

    def paint(self, view: View, sprites: Optional[Sequence[Sprite]] = None, shake: int = 0) -> None:
        """Draw ``view`` at the window's size now (a frame of motion with
        ``sprites`` or ``shake``)."""
        width, height = self._size()
        self.fits = layout_for(view, width, height) is not None
        frame = build_frame(view, self._depth, width, height, palette=self._palette, sprites=sprites, shake=shake)
        self._write(self._repainter.frame(frame, width, height))

    def paint_help(self, view: View) -> None:
        """The help screen in the board's place, for the game of ``view``
        (its keys, its layout's mark); any key brings the board back."""
        width, height = self._size()
        self._write(self._repainter.frame(help_frame(view, self._depth, width, height), width, height))

    def close(self) -> None:
        """Leave the final frame on screen, the cursor shown, below it."""
        self._write(self._repainter.close())


def wants_motion(options: Options, env: Mapping[str, str]) -> bool:
    """Moves are shown moving unless asked not to (``--no-animation``,
    ``animation = false`` in the config, ``ANSI2048_NO_ANIMATION``) or the
    terminal cannot move its cursor (``TERM=dumb``)."""
    return options.animation and not env.get("ANSI2048_NO_ANIMATION") and env.get("TERM") != "dumb"


class Motion:
    """Plays the frames of a move at their times (:mod:`.render.motion`),
    and stops the moment a key is typed: the caller then draws the settled
    frame and plays the key at once, so motion never costs a key or a
    millisecond of response."""

    def __init__(self, key_ready: Optional[Callable[[float], bool]], clock: Callable[[], float]) -> None:
        assert key_ready is not None
        self._key_ready = key_ready
        self._clock = clock

    def _wait_until(self, moment: float) -> bool:
        """Wait until ``moment``; False if a key came first."""
        left = moment - self._clock()
        return left <= 0 or not self._key_ready(left)

    def play(
        self, screen: Screen, session: Session, slides: Sequence[Slide], start: float, gained: int, shake: bool
    ) -> None:
        """The frames before the settled one, each at its time from ``start``."""
        if shake:
            # A move that changes nothing: the board nudges right and back.
            screen.show(session, shake=1)
            self._wait_until(start + SHAKE_SECONDS)
            return
        if not slides:
            return
        game = session.game
        spawn = game.spawned
        spawn_value = game.board[spawn[0]][spawn[1]] if spawn is not None else 0
        for time, sprites in motion_frames(slides, game.cols, spawn, spawn_value):
            if not self._wait_until(start + time):
                return
            screen.show(session, gained=gained, sprites=sprites)
        self._wait_until(start + SETTLE_SECONDS)

    def fade_gain(self, screen: Screen, session: Session, start: float) -> None:
        """Take the "+N" away once it has shown for GAIN_SECONDS, unless a key comes first."""
        if self._wait_until(start + GAIN_SECONDS):
            screen.show(session)
