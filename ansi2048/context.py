"""What one run works with, as values: the options from the command line and
the run's context (streams, environment, warnings, randomness, clock), so
each play mode takes one argument instead of seven, and tests build their own."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import IO, Any, Callable, Mapping, Optional

from .recording import Recorder

__all__ = ["Context", "Options"]


@dataclass(frozen=True)
class Options:
    """The command line, parsed; None where the user said nothing."""

    rows: Optional[int] = None
    cols: Optional[int] = None
    goal: Optional[int] = None
    seed: Optional[int] = None
    record: Optional[str] = None
    json: bool = False
    delay: Optional[float] = None  # seconds between piped keys; None: not given
    color: str = "auto"
    new: bool = False
    stats: bool = False  # print your records instead of playing
    replay_best: Optional[int] = None  # replay the Nth of the board's top 10
    daily: bool = False  # today's game, the same for everyone
    no_undo: bool = False  # hard mode: undo is off


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
    now: Callable[[], float] = time.time
