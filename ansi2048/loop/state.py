"""The loop's state as values: :class:`Play` (the game, and everything on
and about the screen), its :class:`Settings`, and :func:`view`, the one
builder of what a screen shows: a function of the state alone, so screens
of any size and colour depth draw the same game (pure: no I/O)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple

from ..game.engine import Direction, Slide
from ..game.keys import Action
from ..game.session import Session
from ..render.frame import View, layout_for
from ..render.keymap import ReplayKeys
from ..render.motion import Sprite
from .events import Draw

__all__ = [
    "DEFAULT_PACE",
    "PACES",
    "Autopilot",
    "Moving",
    "Play",
    "Settings",
    "Turn",
    "draw",
    "playable",
    "view",
    "with_moving",
]

# Autoplay's paces, moves a second: + and - step through them. 4 is
# watchable (a move's slide and spawn can be followed); 16 is a blur.
PACES = (1, 2, 4, 8, 16)
DEFAULT_PACE = 4


@dataclass(frozen=True)
class Settings:
    """What stays the same for the whole session."""

    animate: bool  # moves are shown moving (the console can time frames)
    can_wait: bool  # the console waits for a key with a timeout: autoplay can run
    command: str = "ansi2048"  # the command that plays this board again
    day: str = ""  # the daily game's date (--daily), "" otherwise
    day_seed: Optional[int] = None  # the daily game's seed: r starts it again
    ranked: bool = False  # a ranked daily game (over SSH): its driver makes r end it, and the keys say so
    record_from: int = 0  # runs behind the game on the board when --record began
    # Keys come from a pipe, not from whoever watches (a replay, a bot, the
    # AI playing headless): they play whether the board shows or not, a
    # move that changes nothing is not nudged, and no key is offered.
    replay: bool = False
    report: bool = False  # each key's outcome is reported (--json)
    # The config's keys, (character, action): the key line and the help name
    # the keys that really work.
    bindings: Tuple[Tuple[str, Action], ...] = ()
    guest: bool = False  # nothing is kept (a server's player without a key)
    suspends: bool = False  # Ctrl-Z hands the terminal back to the shell (the help offers it)
    # What else the server offers, and who the player is there, as rows of
    # the help (``?``): (command or "you", what it is); none off a server.
    offers: Tuple[Tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Autopilot:
    """Autoplay is on: its pace and when its next move is due."""

    pace: int
    due: float


@dataclass(frozen=True)
class Moving:
    """A move being shown moving: the frames still to draw, as (time from
    ``start``, sprites), then the settled frame at ``settle``; ``view``, what
    every frame of the motion shows around its sprites (built once a key: a
    view costs more than a tick's other work; rebuilt only by what changes
    it meanwhile, a warning or a best stored)."""

    start: float
    frames: Tuple[Tuple[float, Tuple[Sprite, ...]], ...]
    settle: float
    view: View


@dataclass(frozen=True)
class Turn:
    """What one read's keys (or the AI's move) did, to be shown."""

    now: float
    gained: int = 0  # points the last move made
    stuck: str = ""  # a move that changed nothing: "can't move left"
    refused: str = ""  # why an undo did nothing: undo is off, or nothing to undo
    slides: Optional[Tuple[Slide, ...]] = None  # the move to show moving; None: not animated


@dataclass(frozen=True)
class Play:
    """The loop's state: the game and everything on and about the screen."""

    session: Session
    settings: Settings
    size: Tuple[int, int]
    note: str = ""  # the note line of the frame on screen
    warning: str = ""  # the latest warning: the note when nothing else is said
    ai_note: str = ""  # the AI's, for one frame: its warning, or why autoplay cannot run
    hint: Optional[Direction] = None
    hint_stuck: bool = False  # a hint found no move that changes the board
    pace: int = DEFAULT_PACE
    pilot: Optional[Autopilot] = None  # autoplay is on
    helping: bool = False  # the help screen is up
    moving: Optional[Moving] = None
    gained: int = 0  # the "+N" on screen
    fade_at: Optional[float] = None  # when the "+N" goes
    thinking: Optional[Turn] = None  # a hint was asked for: the turn waits for it
    ai_loaded: bool = False
    saving: bool = True  # the save works: a kill loses nothing it holds
    recording: bool = True  # --record follows the game (or there is none)
    over: bool = False  # quit: no key is read any more
    replay_keys: ReplayKeys = ReplayKeys.PIPED  # a replay's: what its watcher's keys do (its key line)


def with_moving(play: Play, moving: Optional[Moving]) -> Play:
    """``play`` with ``moving``: what each frame of a motion changes. Its
    fields copied as they are (``dataclasses.replace`` checks each of Play's
    twenty first: a quarter of what the loop spent on a key with motion,
    benchmarks/render.py); the same value, as Play has nothing computed at
    construction (no ``__post_init__``, every field an ``__init__`` one)."""
    moved = object.__new__(Play)
    moved.__dict__.update(play.__dict__, moving=moving)
    return moved


def view(play: Play, ending: str = "") -> View:
    """The frame of ``play`` as it stands."""
    settings = play.settings
    daily = settings.day_seed is not None and play.session.run.seed == settings.day_seed
    # Autoplay's pace is offered to whoever can change it: not in a replay.
    pace = play.pilot.pace if play.pilot is not None and not settings.replay else 0
    return View.of(
        play.session,
        play.note,
        settings.replay,
        day=settings.day if daily else "",
        ranked=settings.ranked,
        ending=ending,
        gained=play.gained,
        hint=play.hint,
        stuck=play.hint_stuck,
        autoplay=pace,
        bindings=settings.bindings,
        suspends=settings.suspends,
        guest=settings.guest,
        replay_keys=play.replay_keys,
        offers=settings.offers,
    )


def playable(play: Play) -> bool:
    """Keys other than q, and autoplay, play: the window shows the board
    (not "too small"), or the keys are not typed by whoever watches (a
    replay plays on). No playing blind."""
    return play.settings.replay or layout_for(view(play), *play.size) is not None


def draw(play: Play) -> Draw:
    """The frame of ``play`` to draw: the help screen while it is up."""
    if play.helping:
        return Draw(view(play), help=True)
    return Draw(view(play))
