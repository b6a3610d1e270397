"""What one run works with, as values: the options from the command line and
the run's context (streams, environment, warnings, randomness, clock), so
each play mode takes one argument instead of seven, and tests build their own."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any, Callable, Mapping, Optional, Tuple

from ..game.keys import Action
from ..records.recording import Recorder

if TYPE_CHECKING:
    from ..render.cast import CastWriter

__all__ = ["Context", "Options"]


@dataclass(frozen=True)
class Options:
    """The command line, parsed; None where the user said nothing. The
    config file fills in what it left unsaid (``config.apply_config``)."""

    rows: Optional[int] = None
    cols: Optional[int] = None
    goal: Optional[int] = None
    seed: Optional[int] = None
    record: Optional[str] = None
    json: bool = False
    delay: Optional[float] = None  # seconds between piped keys; None: not given
    color: str = "auto"
    new: bool = False
    theme: Optional[str] = None  # a name in render.themes.THEMES; None: classic
    cast: Optional[str] = None
    animation: bool = True
    # Extra keys for the keyboard game, from the config file: (byte, action).
    bindings: Tuple[Tuple[bytes, Action], ...] = ()
    stats: bool = False  # print your records instead of playing
    replay_best: Optional[int] = None  # replay the Nth of the board's top 10
    daily: bool = False  # today's game, the same for everyone
    no_undo: bool = False  # hard mode: undo is off
    autoplay: bool = False  # the AI plays: on screen, or headless (not a terminal, --json)
    ai_time: Optional[float] = None  # seconds per AI move (a deeper search); None: the default


@dataclass(frozen=True)
class Context:
    """The edge of one run: where keys come from and frames go, the
    environment, where warnings go, where new seeds come from, and the
    clocks. ``recorder`` writes ``--record`` (a no-op without it).
    ``clock`` measures intervals; ``now`` is the wall clock (seconds since
    the epoch), for the history's dates and the daily game's day."""

    options: Options
    stdin: IO[Any]
    stdout: IO[str]
    env: Mapping[str, str]
    warn: Callable[[str], None]
    random_seed: Callable[[], int]
    recorder: Recorder = field(default_factory=lambda: Recorder(None, lambda message: None))
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep
    cast: Optional[CastWriter] = None  # writes --cast; None without it
    now: Callable[[], float] = time.time
    stderr: Optional[IO[str]] = None  # for headless autoplay's progress line (a terminal only)
    # The command that starts ansi2048 as the player started it, to be typed
    # again from where they are (the quit line names it): ``ansi2048`` when
    # that is the one on the PATH, else the path they typed (.venv/bin/ansi2048).
    program: str = "ansi2048"
