"""asciicast v2 files (pure): the frames a screen got, timed, for
``asciinema play``, ``asciinema cat`` and agg (GIFs).

One JSON header line, then one event per line: ``[seconds, "o", text]`` for
output, ``[seconds, "r", "COLSxROWS"]`` when the terminal is resized. The
writer is handed the stream and the clock; :meth:`CastWriter.tee` wraps a
screen's ``write`` so every frame reaches both the terminal and the file.

What is recorded is what the terminal received: the screen writes lines
ending in a bare LF, which a terminal's output processing (ONLCR) turns
into CR LF before it draws them; a player (``asciinema play`` or ``cat``, the
web player) emulates no such processing, so the cast holds the CR LF itself.
Without it, every line would start where the one above ended: a staircase.

Timing: events carry the clock's time since the first frame, but never
less than ``step`` after the frame before. Interactive play passes 0 and
keeps real time; a replay passes its ``--delay`` or :data:`REPLAY_STEP`, so
a replay read from a file in a blink still plays back at a watchable pace.

Frames no viewer sees: a frame that would be on screen for less than
:data:`FRAME_TIME` of the cast's clock (a replay paced at ``--delay 0.001``)
need not be drawn. A driver drawing frames for the cast alone asks
:meth:`CastWriter.coalesced` how many of the frames it is about to draw are
such: their time passes on the cast's clock, nothing is written, and the
next frame drawn shows the state they led to.
"""

from __future__ import annotations

import json
import re
from contextlib import suppress
from typing import TYPE_CHECKING, Callable, Dict, Mapping, Optional, Tuple

from .color import BASIC_RGB
from .palette import hex_rgb
from .style import Rgb
from .themes import TERMINALS

if TYPE_CHECKING:
    from ..records.recording import Output

__all__ = [
    "FRAME_TIME",
    "HEADLESS_SIZE",
    "IDLE_TIME_LIMIT",
    "REPLAY_STEP",
    "CastWriter",
    "as_received",
    "cast_theme",
    "is_ours",
]

# Seconds between frames of a replay that has no --delay.
REPLAY_STEP = 0.15
# The shortest time a frame of a cast is on screen for a viewer: agg, which
# makes the GIFs of casts, keeps at most 30 frames a second (its --fps-cap's
# default), and a frame shorter than that is never in the GIF; a terminal
# at 60 Hz shows it for a refresh at most, if at all.
FRAME_TIME = 1 / 30
# Pauses longer than this play back shortened to it (asciinema's own option):
# a player thinking for a minute should not make the viewer wait a minute.
IDLE_TIME_LIMIT = 2.0
# What every cast this writes begins with (its header's first field).
CAST_START = '{"version": 2'
# The terminal a cast is drawn for when output goes to a pipe, not a terminal.
HEADLESS_SIZE = (80, 30)

# The 16 colours in asciicast order (0-7, then the bright 8-15), as the
# 16-colour palettes were chosen against (xterm's defaults).
_SIXTEEN = (30, 31, 32, 33, 34, 35, 36, 37, 90, 91, 92, 93, 94, 95, 96, 97)


# One encoder for every event: json.dumps with an option builds one a call.
_to_json = json.JSONEncoder(ensure_ascii=False).encode

# A line feed that no carriage return comes before.
_BARE_LF = re.compile(r"(?<!\r)\n")


def as_received(text: str) -> str:
    """``text`` as a terminal's ONLCR passes it on to the screen: every bare
    LF preceded by a CR (an LF after a CR is left as it is)."""
    # A repaint moves down by cursor-down, never a line feed: most frames
    # have none, and the search for one is a tenth of the substitution's cost.
    return _BARE_LF.sub("\r\n", text) if "\n" in text else text


def _hex(rgb: Rgb) -> str:
    return "#{:02x}{:02x}{:02x}".format(*rgb)


def cast_theme(theme: str) -> Dict[str, str]:
    """The asciicast header's ``theme`` for a board theme: its terminal's
    text and background, and the 16 colours."""
    colors = TERMINALS[theme]
    return {
        "fg": _hex(hex_rgb(colors.fg)),
        "bg": _hex(hex_rgb(colors.bg)),
        "palette": ":".join(_hex(BASIC_RGB[code]) for code in _SIXTEEN),
    }


def is_ours(head: bytes) -> bool:
    """Whether a file starting with ``head`` may be overwritten by --cast:
    empty, or an asciicast (a JSON header with a ``version``), or a
    recording; anything else the user would lose."""
    from ..records.recording import MAGIC, strip_bom

    head = strip_bom(head)
    if not head.strip():
        return True
    first = head.partition(b"\n")[0]
    if first.startswith(MAGIC.encode()) or first == CAST_START.encode():  # (that: a cast cut before its first frame)
        return True
    try:
        header = json.loads(first.decode("utf-8"))
    except ValueError:  # also a UnicodeDecodeError
        return False
    return isinstance(header, dict) and header.get("version") in (1, 2) and "width" in header


class CastWriter:
    """Writes an asciicast v2 file to ``stream``: the header with the first
    frame (the size is known then), then one event per write. A write that
    fails (a full disk, a reader that left or falls behind: see
    ``files.OutputSink``) stops the cast with one warning; the game goes on."""

    def __init__(
        self,
        stream: Output,
        clock: Callable[[], float],
        warn: Callable[[str], None],
        *,
        timestamp: int,
        env: Mapping[str, str],
        theme: str = "classic",
    ) -> None:
        self._stream: Optional[Output] = stream
        self._clock = clock
        self.warn = warn
        self._timestamp = timestamp
        self._env = {name: env[name] for name in ("TERM", "SHELL") if env.get(name)}
        self._theme = theme
        self._start: Optional[float] = None  # the clock at the first frame
        self._last = 0.0  # time of the last event
        self._last_frame = 0.0  # and of the last frame, written or coalesced (the pace counts both)
        self._shown = 0.0  # and of the last "o" event written
        self._frames = 0
        self._size: Optional[Tuple[int, int]] = None
        self.step = 0.0
        self.title = "ansi2048"

    def tee(
        self, write: Callable[[str], None], size: Callable[[], Tuple[int, int]], title: str = "ansi2048"
    ) -> Callable[[str], None]:
        """``write``, also writing what it is given into the cast (sized by ``size``)."""
        self.title = title

        def both(text: str) -> None:
            write(text)
            self.output(text, size())

        return both

    def output(self, text: str, size: Tuple[int, int]) -> None:
        """One "o" event, after a resize event if ``size`` changed."""
        if self._stream is None:
            return
        now = self._clock()
        if self._start is None:
            self._start = now
            self._size = size
            self._write(_to_json(self._header(size)) + "\n")
        elif size != self._size:
            self._size = size
            self._event(now, "r", "{}x{}".format(*size))
        self._event(now, "o", as_received(text))

    def _header(self, size: Tuple[int, int]) -> Dict[str, object]:
        return {
            "version": 2,
            "width": size[0],
            "height": size[1],
            "timestamp": self._timestamp,
            "idle_time_limit": IDLE_TIME_LIMIT,
            "title": self.title,
            "env": self._env,
            "theme": cast_theme(self._theme),
        }

    def _frame_time(self, now: float) -> float:
        """The time on the cast's clock of a frame drawn at ``now``: rising,
        and at least ``step`` after the frame before (the first is at 0)."""
        assert self._start is not None
        at = max(now - self._start, self._last)
        return max(at, self._last_frame + self.step) if self._frames else at

    def _event(self, now: float, kind: str, data: str) -> None:
        assert self._start is not None
        if kind == "o":
            at = self._frame_time(now)
            self._frames += 1
            self._last_frame = self._shown = at
        else:
            at = max(now - self._start, self._last)
        self._last = at
        # The list written around the encoded text: the encoder's list path
        # builds a new C encoder a call, a twentieth of a replayed key's cost.
        self._write(f'[{round(at, 6)!r}, "{kind}", {_to_json(data)}]\n')

    def coalesced(self, now: float, count: int) -> int:
        """How many of ``count`` frames about to be drawn one after the other
        at ``now`` (a run of keys read together) no viewer would see: those,
        from the first, that come less than :data:`FRAME_TIME` after the last
        frame written. Their time passes on the cast's clock (the pace stays
        ``step`` a frame); they are not written, and the caller draws none of
        them: the next frame it draws shows the state they led to. None before
        the first frame, nor once the cast has stopped (the caller then draws
        nothing anyway)."""
        if self._stream is None or self._start is None:
            return 0
        skipped = 0
        while skipped < count:
            at = self._frame_time(now)
            if at - self._shown >= FRAME_TIME:
                break
            self._frames += 1
            self._last_frame = self._last = at
            skipped += 1
        return skipped

    def _write(self, line: str) -> None:
        if self._stream is None:
            return  # stopped by a failed write just before
        try:
            self._stream.write(line)
            self._stream.flush()
        except OSError as error:
            self.warn(f"cast stopped ({error.strerror or error})")
            self.close()

    @property
    def stopped(self) -> bool:
        """Closed, or stopped by a failed write: frames drawn for the cast
        alone (a piped replay) need not be drawn any more."""
        return self._stream is None

    def close(self) -> None:
        if self._stream is not None:
            with suppress(OSError):
                self._stream.close()
            self._stream = None
