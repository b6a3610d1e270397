"""The keyboard game's loop as a pure state machine: ``step(play, event)``
gives the next :class:`Play` and the :data:`Effect` s the shell performs, in
order. No I/O, no clock, no environment: the time comes in the events, the
window's size too, and the AI's answers come back as events.

Events: the keys of one read (:class:`Keys`), a timer that came due
(:class:`Tick`: a frame of motion, the "+N" fading, autoplay's next move),
a new window size or the terminal back from a suspend (:class:`Resized`), a
suspend (:class:`Suspended`), the AI's move (:class:`AIMoved`), a warning
from the files (:class:`Warned`), the best score the storage now holds
(:class:`BestStored`). :func:`next_due` says when the next timer is due, so
the shell waits for a key until then. Effects are done by the shell's
performer (:mod:`.performer`), which says how a driver uses it.

The rules of order, each in one place:

- the save gets a move before the frame that shows it (:func:`_apply`);
- the save is marked assisted before the AI's first move is saved
  (:func:`_ask_ai`);
- the best shown is the higher of the game's and the storage's: the
  storage's comes back as an event (:class:`BestStored`), never written
  into the state by the shell;
- the best is written urgently when nothing else would recover it
  (:func:`_best`);
- the AI's note wins over every other note (:func:`_note`);
- a key or a resize first settles a motion in progress (autoplay's next
  move waits for it)
  (:func:`_settle`);
- quitting draws the farewell instead of the move's frames (:func:`_finish`).

The game itself (the :class:`~.session.Session` in the state) is changed in
place by its own rules, as :mod:`.engine` does: copying a game with its undo
history at every key would cost more than the loop. Everything else the
loop knows is a frozen value.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from . import protocol
from .engine import Direction, Slide, trace_move
from .keys import Action, move_action
from .recording import ASSISTED, Item, Reseed
from .render.frame import View, layout_for
from .render.motion import GAIN_SECONDS, SETTLE_SECONDS, SHAKE_SECONDS, Sprite, motion_frames
from .session import Played, Session

__all__ = [
    "AI_BUSY_NOTE",
    "DEFAULT_PACE",
    "LOADING_NOTE",
    "NO_UNDO_NOTE",
    "PACES",
    "AIMoved",
    "AIReady",
    "Append",
    "AskAI",
    "BestStored",
    "Draw",
    "Effect",
    "Event",
    "Keep",
    "KeepUnaided",
    "Key",
    "Keys",
    "KeysEnded",
    "Leave",
    "Play",
    "Purpose",
    "Quit",
    "RecordKeys",
    "Report",
    "Resized",
    "Settings",
    "StopRecording",
    "Suspended",
    "Tick",
    "Warned",
    "WriteBest",
    "closing",
    "next_due",
    "playable",
    "start",
    "step",
]

# Autoplay's paces, moves a second: + and - step through them. 4 is
# watchable (a move's slide and spawn can be followed); 16 is a blur.
PACES = (1, 2, 4, 8, 16)
DEFAULT_PACE = 4
# On the note line while the AI loads (the first hint takes ~0.2 s on 4x4).
LOADING_NOTE = "loading the AI..."
# Shown for one frame when u is pressed in a game without undo.
NO_UNDO_NOTE = "undo is off (--no-undo)"
# Said when autoplay is asked of a console that cannot time its moves.
NO_TIMER_NOTE = "autoplay needs a console that can wait for keys"
# Said when u finds nothing to undo (like "can't move left").
NOTHING_TO_UNDO = "nothing to undo"
# Said the first time the AI helps in a game: from then on it sets no best.
ASSISTED_NOTE = "assisted: this game sets no best"
# Said once, in place of the AI's long warning (its file and reason go to
# standard error at the end): short enough to sit beside autoplay's pace
# at 80 columns.
WEAK_AI_NOTE = "AI weights unusable: heuristic play"
# Said when the AI is too busy to answer (a server's AI serves every player):
# no hint this time, and autoplay stops.
AI_BUSY_NOTE = "the AI is busy: try again in a moment"

# Looked up per key on the hot path of a piped replay (the properties cost
# more): each move key's direction, and the keys that are no key of the game.
_DIRECTION_OF: Dict[Key, Direction] = {action: action.direction for action in Action if action.direction is not None}
_ASSIST_KEYS = frozenset(action for action in Action if not action.game)


# -- events ---------------------------------------------------------------------


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


Event = Union[Keys, KeysEnded, Tick, Resized, Suspended, AIMoved, AIReady, Warned, BestStored]


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
class Keep:
    """Put a finished (or left) game in the history."""

    played: Played


@dataclass(frozen=True)
class KeepUnaided:
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


Effect = Union[Append, RecordKeys, Report, StopRecording, Keep, KeepUnaided, WriteBest, Draw, AskAI, Leave, Quit]
Effects = List[Effect]


# -- the state ------------------------------------------------------------------


@dataclass(frozen=True)
class Settings:
    """What stays the same for the whole session."""

    animate: bool  # moves are shown moving (the console can time frames)
    can_wait: bool  # the console waits for a key with a timeout: autoplay can run
    command: str = "ansi2048"  # the command that plays this board again
    day: str = ""  # the daily game's date (--daily), "" otherwise
    day_seed: Optional[int] = None  # the daily game's seed: r starts it again
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


@dataclass(frozen=True)
class Autopilot:
    """Autoplay is on: its pace and when its next move is due."""

    pace: int
    due: float


@dataclass(frozen=True)
class Moving:
    """A move being shown moving: the frames still to draw, as (time from
    ``start``, sprites), then the settled frame at ``settle``."""

    start: float
    frames: Tuple[Tuple[float, Tuple[Sprite, ...]], ...]
    settle: float


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


# -- the view -------------------------------------------------------------------


def view(play: Play, ending: str = "") -> View:
    """The frame of ``play`` as it stands."""
    settings = play.settings
    daily = settings.day_seed is not None and play.session.run.seed == settings.day_seed
    # Autoplay's pace is offered to whoever can change it: not in a replay.
    pace = play.pilot.pace if play.pilot is not None and not settings.replay else 0
    return replace(
        View.of(play.session, play.note, settings.replay),
        day=settings.day if daily else "",
        ending=ending,
        gained=play.gained,
        hint=play.hint,
        stuck=play.hint_stuck,
        autoplay=pace,
        bindings=settings.bindings,
    )


def playable(play: Play) -> bool:
    """Keys other than q, and autoplay, play: the window shows the board
    (not "too small"), or the keys are not typed by whoever watches (a
    replay plays on). No playing blind."""
    return play.settings.replay or layout_for(view(play), *play.size) is not None


def _draw(play: Play) -> Draw:
    if play.helping:
        return Draw(view(play), help=True)
    return Draw(view(play))


def start(play: Play, now: float, autoplay: bool) -> Tuple[Play, Effects]:
    """The first frame (and autoplay started, with ``--autoplay``)."""
    if autoplay:
        play = _toggle_autoplay(play, now)
    if play.ai_note:
        play = replace(play, note=play.ai_note)
    return play, [_draw(play)]


def next_due(play: Play) -> Optional[float]:
    """When the next :class:`Tick` is due; None: only keys wake the loop."""
    if play.over or play.thinking is not None:
        return None
    if play.moving is not None:
        moving = play.moving
        return moving.start + (moving.frames[0][0] if moving.frames else moving.settle)
    if play.fade_at is not None:
        return play.fade_at
    if play.pilot is not None and not play.helping and playable(play):
        return play.pilot.due
    return None


def closing(play: Play) -> List[Union[WriteBest, Keep, KeepUnaided]]:
    """What the end of play writes, whatever ended it (q, a signal): the best
    reached, and the game where it belongs. Quitting a finished game (won,
    or over) ends it: into the history. An unfinished one stays in its save,
    to be resumed; its score may still be the best without undo or AI."""
    session = play.session
    game = session.game
    effects: List[Union[WriteBest, Keep, KeepUnaided]] = [WriteBest(session.best, final=True)]
    if session.quit and (game.over or game.won):
        effects.append(Keep(session.played()))
    elif game.moves and not (session.used_undo or session.assisted):
        effects.append(KeepUnaided(game.score))
    return effects


# -- the step -------------------------------------------------------------------


def step(play: Play, event: Event) -> Tuple[Play, Effects]:
    """The next state and what to do, for ``event``."""
    if isinstance(event, Keys):
        return _keys(play, event)
    if isinstance(event, KeysEnded):
        play, effects = _settle(play)
        play = replace(play, over=True, pilot=None, gained=0)
        return play, [*effects, Draw(view(play, ending=_farewell(play))), Quit()]
    if isinstance(event, Tick):
        return _tick(play, event.now)
    if isinstance(event, AIMoved):
        return _ai_moved(play, event)
    if isinstance(event, Resized):
        play, effects = _settle(replace(play, size=event.size))
        return play, [*effects, _draw(play)]
    if isinstance(event, AIReady):
        return replace(play, ai_loaded=True), []
    if isinstance(event, Warned):
        play = replace(play, warning=event.message, saving=event.saving, note=event.message)
        return play, [] if play.moving is not None or play.over else [_draw(play)]
    if isinstance(event, BestStored):
        # Shown from the next frame on (no frame of its own: it comes back
        # right after a frame, and the next key's frame is soon enough).
        if event.best > play.session.best:
            play.session.best = event.best
        return play, []
    return play, [Leave()]  # Suspended


def _keys(play: Play, event: Keys) -> Tuple[Play, Effects]:
    play, effects = _settle(play)
    if play.over:
        return play, effects
    if play.helping:
        # Any key closes the help and is used up doing so.
        play = replace(play, helping=False, gained=0)
        return play, [*effects, _draw(play)]
    if not event.actions:
        return play, effects  # a key that is no action: nothing to show
    # A key came: the hint and the AI's one-frame note go.
    play = replace(play, hint=None, hint_stuck=False, ai_note="", fade_at=None)
    # One move read alone is shown moving; typed-ahead keys are all played
    # and the screen catches up in a single frame.
    shown = playable(play)
    animate = play.settings.animate and len(event.actions) == 1 and shown
    play, turn, played, want_hint = _play_keys(play, event.actions, event.now, animate, typed=True, blind=not shown)
    effects += played
    if want_hint and not play.session.quit:
        play, asked = _ask_ai(replace(play, thinking=turn), Purpose.HINT)
        return play, effects + asked
    return _finish(play, turn, effects)


def _assist_key(play: Play, action: Action, now: float) -> Play:
    """One of the keyboard's own keys that is no key of the game (not t)."""
    if action is Action.HELP:
        return replace(play, helping=True)
    if action is Action.AUTOPLAY:
        return _toggle_autoplay(play, now)
    index = PACES.index(play.pace)
    pace = PACES[min(index + 1, len(PACES) - 1)] if action is Action.FASTER else PACES[max(index - 1, 0)]
    pilot = play.pilot
    if pilot is not None:
        # The move already waited for comes at the new pace too.
        pilot = Autopilot(pace, pilot.due + 1.0 / pace - 1.0 / play.pace)
    return replace(play, pace=pace, pilot=pilot)


def _toggle_autoplay(play: Play, now: float) -> Play:
    if play.pilot is not None:
        return replace(play, pilot=None)
    if not play.settings.can_wait:
        return replace(play, ai_note=NO_TIMER_NOTE)
    return replace(play, pilot=Autopilot(play.pace, now))  # the first move at once


def _play_keys(
    play: Play, keys: Sequence[Key], now: float, animate: bool, typed: bool, blind: bool = False
) -> Tuple[Play, Turn, Effects, bool]:
    """Play ``keys``: typed ones (the keyboard's own keys among them), or
    the AI's move. The turn they make, what they ask of the shell, and
    whether a hint is wanted. The save gets a move before the frame that
    shows it (a kill between the two loses nothing the player saw).

    The hot path of a piped replay (a chunk of thousands of keys in one
    call): per key, only what that key needs; the keys to save and record
    go out in one effect each, cut where a game ends (it goes into the
    history after the keys that ended it)."""
    session, settings = play.session, play.settings
    game = session.game
    apply = session.apply
    saving, recording, report, replay = play.saving, play.recording, settings.report, settings.replay
    day_seed = settings.day_seed
    effects: Effects = []
    saved: List[Item] = []
    recorded: List[Item] = []

    def flush() -> None:
        if saved:
            effects.append(Append(tuple(saved)))
            saved.clear()
        if recorded:
            effects.append(RecordKeys(tuple(recorded)))
            recorded.clear()

    gained, stuck, refused, slides = 0, "", "", None
    want_hint = False
    quit_key, undo_key = Action.QUIT, Action.UNDO
    directions, assist = _DIRECTION_OF, _ASSIST_KEYS
    for key in keys:
        if blind and key is not quit_key:
            continue  # no playing blind while the board cannot be shown
        if key in assist:
            if key is Action.HINT:
                want_hint = True
            else:
                play = _assist_key(play, key, now)
            continue
        if typed:
            # Any typed key of the game takes control back, and the hint goes.
            want_hint = False
            if play.pilot is not None:
                play = replace(play, pilot=None)
        score = game.score
        item: Item = key
        direction = directions.get(key)
        if direction is not None:
            before = game.cells if animate else ()
            outcome = apply(key)  # type: ignore[arg-type]  # (a move: an Action)
        elif isinstance(key, Reseed):
            outcome = session.restart(key.seed)
        elif key is Action.RESTART and day_seed is not None:
            # In the daily game, r starts the day's game again (saved as the
            # seed it starts from, so the save replays it).
            item = Reseed(day_seed)
            outcome = session.restart(day_seed)
        else:
            outcome = apply(key)
        _, moved, spawn, ended, refusal = outcome
        if refusal:
            # Not recorded: replayed where undo is on, it would undo.
            refused = NO_UNDO_NOTE
            continue
        if saving and moved:
            saved.append(item)
        if recording:
            if key is undo_key and len(session.runs()[1]) < settings.record_from:
                # The undo went back into a game from before the recording
                # began: its keys are not in it, so the recording could not
                # follow; it stops there (what it holds still replays).
                flush()
                effects.append(StopRecording("undo went back to a game from before the recording began"))
                recording = False
                play = replace(play, recording=False)
            else:
                recorded.append(item)
        if report:
            flush()
            name = protocol.ACTION_NAMES[outcome.action]
            effects.append(Report(protocol.event(game, name, moved, spawn)))
        if ended is not None:
            flush()
            effects.append(Keep(ended))
        if direction is not None:
            gained = game.score - score
            stuck = "" if moved or replay else f"can't move {direction.value}"
            if not animate:
                slides = None
            elif moved:
                slides = trace_move(before, game.rows, game.cols, direction)
            else:
                slides = None if replay else ()  # () is shown by a nudge of the board
        elif key is undo_key and not moved:
            refused = NOTHING_TO_UNDO
        if session.quit:
            break
    flush()
    return play, Turn(now, gained, stuck, refused, slides), effects, want_hint


def _ask_ai(play: Play, purpose: Purpose) -> Tuple[Play, Effects]:
    """Ask the AI. The first time in a game, the save is marked assisted
    before any move of the AI is saved (resumed, the game stays assisted);
    the first time at all, the screen says the AI is loading (it takes a
    moment the player would otherwise take for a hang)."""
    session = play.session
    effects: Effects = []
    if not session.assisted:
        # The mark is a rule of the game's state, changed here as a key's
        # move is (``Session.apply``), not an effect: from this step on the
        # game raises no best, whatever the shell does. Were it an effect,
        # the best could rise between the asking and the shell's doing, and
        # a shell that failed to do it would leave the state and the save
        # telling different stories. What the shell does is keep the mark
        # (``Append(ASSISTED)``), before any move the AI makes is kept.
        session.assist()
        effects.append(Append((ASSISTED,)))
        play = replace(play, ai_note=ASSISTED_NOTE)  # said the first time: its best is frozen
    if not play.ai_loaded:
        effects.append(Draw(replace(view(play), note=LOADING_NOTE)))
    if play.thinking is None:
        play = replace(play, thinking=Turn(0.0))  # autoplay's: nothing is due until the answer
    return play, [*effects, AskAI(purpose)]


def _ai_moved(play: Play, event: AIMoved) -> Tuple[Play, Effects]:
    turn = play.thinking or Turn(event.now)
    if event.busy:
        return _finish(replace(play, thinking=None, ai_note=AI_BUSY_NOTE, pilot=None), turn, [])
    note = WEAK_AI_NOTE if event.warning else play.ai_note
    play = replace(play, thinking=None, ai_loaded=True, ai_note=note)
    if event.purpose is Purpose.HINT:
        play = replace(play, hint=event.direction, hint_stuck=event.direction is None)
        return _finish(play, turn, [])
    # Autoplay: its move is played as its key. A hint goes.
    play = replace(play, hint=None, hint_stuck=False)
    turn = Turn(event.now)
    pilot = play.pilot
    if event.direction is None or pilot is None:
        return _finish(replace(play, pilot=None), turn, [])  # no move left: autoplay stops
    # The next move is due a step of the pace after this one was due, or
    # after now if that is already past (no burst to catch up after a stall).
    step_ = 1.0 / pilot.pace
    play = replace(play, pilot=Autopilot(pilot.pace, max(pilot.due + step_, event.now + step_ / 2)))
    # Its moves are shown moving too, when its pace leaves them the time.
    animate = play.settings.animate and step_ >= SETTLE_SECONDS and playable(play)
    play, turn, effects, _ = _play_keys(play, (move_action(event.direction),), event.now, animate, typed=False)
    return _finish(play, turn, effects)


def _note(play: Play, turn: Turn) -> str:
    """The note line after a turn: why a key did nothing, else the latest
    warning; the AI's note (its warning, or why autoplay cannot run) wins
    over all of them, for the frame after it is said."""
    if play.ai_note:
        return play.ai_note
    return turn.refused or turn.stuck or play.warning


def _finish(play: Play, turn: Turn, effects: Effects) -> Tuple[Play, Effects]:
    """After the turn's ``effects``, show the turn: the farewell after q (the last frame says where the
    game went, not keys that no longer work), else the move moving, or its
    settled frame at once."""
    play = replace(play, note=_note(play, turn), gained=turn.gained)
    if play.session.quit:
        ending = Draw(view(play, ending=_farewell(play)))
        return replace(play, over=True, pilot=None), [*effects, ending, Quit()]
    if play.helping:
        return replace(play, gained=0), [*effects, _draw(play)]
    if turn.slides is None or not (turn.slides or turn.stuck):
        play, settled = _settled(play, turn.now)
        return play, effects + settled
    if turn.stuck:
        # A move that changes nothing: the board nudges right and back.
        moving = Moving(turn.now, (), SHAKE_SECONDS)
        return replace(play, moving=moving), [*effects, Draw(view(play), shake=1)]
    game = play.session.game
    spawn = game.spawned
    value = game.board[spawn[0]][spawn[1]] if spawn is not None else 0
    frames = motion_frames(turn.slides, game.cols, spawn, value)
    play = replace(play, moving=Moving(turn.now, frames, SETTLE_SECONDS))
    return _tick(play, turn.now, effects)


def _farewell(play: Play) -> str:
    """The last frame's line instead of the keys: where the game went, and
    what the command that brought it does next time (a game over is not
    resumed: it is in the history, and the next game starts afresh)."""
    command = play.settings.command
    if play.settings.replay:
        return "end of replay"
    if play.settings.guest:
        return "a guest's game is not kept: connect with an SSH key to keep yours"
    if not play.saving:
        return "this game could not be saved (see the warning above)"
    if play.session.game.over:
        again = "plays today's game again" if play.settings.day else "starts a new game"
        return f"game over, kept in your history; {command} {again}"
    return f"game kept for next time: {command} resumes it"


def _settled(play: Play, start: float) -> Tuple[Play, Effects]:
    """The settled frame, the best offered, and the "+N" set to fade (unless
    the AI plays: its next move comes first)."""
    fade = play.gained and play.settings.animate and play.pilot is None
    play = replace(play, moving=None, fade_at=start + GAIN_SECONDS if fade else None)
    return play, [_draw(play), _best(play)]


def _best(play: Play) -> WriteBest:
    """The best is written at once when no later key will come to write it
    (the game is over) or no save holds it meanwhile; else at the writer's
    pace (a write costs up to ~10 ms, which the next key should not wait for)."""
    session = play.session
    return WriteBest(session.best, urgent=session.game.over or not play.saving)


def _settle(play: Play) -> Tuple[Play, Effects]:
    """A key or a resize ends a motion at once: its
    settled frame first (so motion never costs a key or a millisecond)."""
    if play.moving is None:
        return play, []
    play = replace(play, moving=None, fade_at=None)
    return play, [_draw(play), _best(play)]


def _tick(play: Play, now: float, before: Sequence[Effect] = ()) -> Tuple[Play, Effects]:
    """After ``before``, the frame of motion that is due, the "+N" fading,
    or autoplay's move."""
    effects = list(before)
    due = next_due(play)
    if due is None or now < due:
        return play, effects
    moving = play.moving
    if moving is not None:
        if not moving.frames:
            play, settled = _settled(play, moving.start)
            return play, effects + settled
        (_, sprites), rest = moving.frames[0], moving.frames[1:]
        play = replace(play, moving=replace(moving, frames=rest))
        return play, [*effects, Draw(view(play), sprites=sprites)]
    if play.fade_at is not None:
        play = replace(play, fade_at=None, gained=0)
        return play, [*effects, _draw(play)]
    play, asked = _ask_ai(play, Purpose.AUTOPLAY)
    return play, effects + asked
