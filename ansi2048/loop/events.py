"""The loop's vocabulary: the events :func:`.loop.step` takes and the
effects it gives back, as small frozen values (pure: no I/O).

Events: the keys of one read (:class:`Keys`; typed, a chunk of a pipe, or
the AI's move), the end of a replay's keys (:class:`KeysEnded`), a timer
that came due (:class:`Tick`: a frame of motion, the "+N" fading,
autoplay's next move), a new window size or the terminal back from a
suspend (:class:`Resized`), a replay's viewer pausing it or going on
(:class:`ReplayPaused`), a suspend (:class:`Suspended`), the AI's move
(:class:`AIMoved`) or that it has loaded (:class:`AIReady`), a warning from
the files (:class:`Warned`), the best score the storage now holds
(:class:`BestStored`).

Effects: the save, ``--record``, a bot's report, the history and the best
scores (:class:`Append`, :class:`RecordKeys`, :class:`Report`,
:class:`StopRecording`, :class:`AddToHistory`, :class:`RecordUnaided`,
:class:`WriteBest`), the screen (:class:`Draw`, :class:`Leave`), the AI
(:class:`AskAI`, which the driver answers), and the end (:class:`Quit`).
:mod:`.performer` does them.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any, Dict, List, Optional, Tuple, Union

from ..game.engine import Direction
from ..game.keys import Action
from ..game.session import Played
from ..records.recording import Item, Reseed
from ..render.frame import View
from ..render.keymap import ReplayKeys
from ..render.motion import Sprite

__all__ = [
    "AIMoved",
    "AIReady",
    "AddToHistory",
    "Append",
    "AskAI",
    "BestStored",
    "Draw",
    "Effect",
    "Effects",
    "Event",
    "Key",
    "Keys",
    "KeysEnded",
    "Leave",
    "Purpose",
    "Quit",
    "RecordKeys",
    "RecordUnaided",
    "ReplayPaused",
    "Report",
    "Resized",
    "StopRecording",
    "Suspended",
    "Tick",
    "Warned",
    "WriteBest",
]


# A key: an action of the keyboard, or a recording's restart into a seed.
Key = Union[Action, Reseed]


@dataclass(frozen=True)
class Keys:
    """The keys of one read (keys typed ahead, or a chunk of a pipe, come
    together), at ``now``."""

    actions: Tuple[Key, ...]
    now: float


@dataclass(frozen=True)
class KeysEnded:
    """No key will come any more (a replay's input has ended): the last
    frame says so, in place of the keys."""


@dataclass(frozen=True)
class Tick:
    """The time :func:`next_due` gave (or later) has come, no key first."""

    now: float


@dataclass(frozen=True)
class Resized:
    """The window is ``size`` (columns, lines): after a resize, or back from
    a suspend; the screen must be drawn again either way."""

    size: Tuple[int, int]


@dataclass(frozen=True)
class ReplayPaused:
    """A replay's viewer paused it (or it goes on): its key line says which."""

    keys: ReplayKeys  # ReplayKeys.PAUSED, or ReplayKeys.VIEWER going on


@dataclass(frozen=True)
class Suspended:
    """The terminal is being handed back (Ctrl-Z): leave the screen tidy."""


class Purpose(Enum):
    HINT = "hint"
    AUTOPLAY = "autoplay"


@dataclass(frozen=True)
class AIMoved:
    """The AI's answer to :class:`AskAI`: its move (None: no move changes the
    board), at ``now``, and its warning if it has one (damaged weights)."""

    purpose: Purpose
    direction: Optional[Direction]
    now: float
    warning: str = ""
    busy: bool = False  # the AI could not take the question (a server's pool is full): no answer


@dataclass(frozen=True)
class AIReady:
    """The AI has loaded (in the background): asking it is quick now."""


@dataclass(frozen=True)
class Warned:
    """A warning from the files; ``saving`` is whether the save still works."""

    message: str
    saving: bool


@dataclass(frozen=True)
class BestStored:
    """The answer to :class:`WriteBest`: the best score now stored for this
    board (another game running at once may have stored a higher one)."""

    best: int


Event = Union[Keys, KeysEnded, Tick, Resized, ReplayPaused, Suspended, AIMoved, AIReady, Warned, BestStored]


# -- effects --------------------------------------------------------------------


@dataclass(frozen=True)
class Append:
    """Append ``items`` to the save, in order. One effect for the keys of a
    step, not one per key: a piped replay plays a chunk of thousands of
    keys in one step, and an effect per key would cost a third of its time."""

    items: Tuple[Item, ...]


@dataclass(frozen=True)
class RecordKeys:
    """Write ``items`` (keys, or the seed a new game starts from) to ``--record``."""

    items: Tuple[Item, ...]


@dataclass(frozen=True)
class Report:
    """Tell a bot (``--json``) what a key did: the protocol's object."""

    event: Dict[str, Any]


@dataclass(frozen=True)
class StopRecording:
    """``--record`` cannot follow the game any more: end it, saying ``why``."""

    why: str


@dataclass(frozen=True)
class AddToHistory:
    """Put a finished (or left) game in the history."""

    played: Played


@dataclass(frozen=True)
class RecordUnaided:
    """The score may be the board's best without undo or AI."""

    score: int


@dataclass(frozen=True)
class WriteBest:
    """Offer the best score to the best-score writer: at once if ``urgent``,
    else at its own pace; ``final`` writes whatever is left (at the end)."""

    best: int
    urgent: bool = False
    final: bool = False


@dataclass(frozen=True)
class Draw:
    """Draw a frame: ``view`` (with ``sprites`` or ``shake``: a frame of
    motion), or the help screen for its goal when ``help``."""

    view: View
    sprites: Optional[Tuple[Sprite, ...]] = None
    shake: int = 0
    help: bool = False


@dataclass(frozen=True)
class AskAI:
    """Ask the AI for its move in the game on the board; the answer comes
    back as :class:`AIMoved`."""

    purpose: Purpose


@dataclass(frozen=True)
class Leave:
    """Leave the screen as it is, the cursor shown below the board."""


@dataclass(frozen=True)
class Quit:
    """Play is over: the shell stops reading keys."""


Effect = Union[
    Append, RecordKeys, Report, StopRecording, AddToHistory, RecordUnaided, WriteBest, Draw, AskAI, Leave, Quit
]
Effects = List[Effect]
