"""Every mode's loop as a pure state machine: ``step(play, event)`` gives
the next :class:`~.state.Play` and the effects the shell performs, in
order (:mod:`.events` has both). The keyboard game, piped replays, bots
and the AI playing headless all go through it: their drivers differ only in
where events come from. No I/O, no clock, no environment: the time comes
in the events, the window's size too, and the AI's answers come back as
events. :func:`next_due` says when the next timer is due, so a driver
waits for a key until then; :mod:`.performer` does the effects.

The rules of order, each in one place:

- the save gets a move before the frame that shows it, and a game goes
  into the history after the keys that ended it (:func:`_play_keys`);
- the save is marked assisted before the AI's first move is saved
  (:func:`_ask_ai`);
- the best shown is the higher of the game's and the storage's: the
  storage's comes back as an event (``BestStored``), never written into
  the state by the shell; it is written urgently when nothing else would
  recover it (:func:`_best`);
- the AI's note wins over every other note (:func:`_note`);
- a key or a resize first cuts a motion in progress short (autoplay's next
  move waits for it) (:func:`_cut_motion_short`);
- quitting draws the farewell instead of the move's frames (:func:`_finish`).

The game itself (the :class:`~.session.Session` in the state) is changed in
place by its own rules, as :mod:`.engine` does: copying a game with its undo
history at every key would cost more than the loop. Everything else the
loop knows is a frozen value.
"""

from __future__ import annotations

from dataclasses import replace
from typing import List, Optional, Sequence, Tuple, Union

from ..game.keys import Action, move_action
from ..records.recording import ASSISTED
from ..render.motion import FRAME_SECONDS, GAIN_SECONDS, SETTLE_SECONDS, SHAKE_SECONDS, motion_frames
from .events import (
    AddToHistory,
    AIMoved,
    AIReady,
    Append,
    AskAI,
    BestStored,
    Draw,
    Effect,
    Effects,
    Event,
    Keys,
    KeysEnded,
    Leave,
    Purpose,
    Quit,
    RecordUnaided,
    ReplayPaused,
    Resized,
    Tick,
    Warned,
    WriteBest,
)
from .state import Autopilot, Moving, Play, Settings, Turn, draw, playable, view, with_moving
from .turns import play_keys, toggle_autoplay

__all__ = [
    "AI_BUSY_NOTE",
    "LATE_SECONDS",
    "LOADING_NOTE",
    "closing_effects",
    "next_due",
    "start",
    "step",
]

# On the note line while the AI loads (the first hint takes ~0.2 s on 4x4).
LOADING_NOTE = "loading the AI..."
# Said the first time the AI helps in a game: from then on it sets no best.
ASSISTED_NOTE = "assisted: this game sets no best"
# Said once, in place of the AI's long warning (its file and reason go to
# standard error at the end): short enough to sit beside autoplay's pace
# at 80 columns.
WEAK_AI_NOTE = "AI weights unusable: heuristic play"
# Said when the AI is too busy to answer (a server's AI serves every player):
# no hint this time, and autoplay stops.
AI_BUSY_NOTE = "the AI is busy: try again in a moment"
# A frame of motion whose tick comes later than this after its time (a
# loaded server, a terminal that stalled the last write) is not drawn: the
# move settles at once: a slide behind the clock shows the player an old
# board for longer than the move takes. On a loaded server the frames it
# skips are work saved (300 players with motion on 2 cores, more than the
# cores can serve: 2.4-3.3 frames a key sent instead of 3.7).
LATE_SECONDS = FRAME_SECONDS


def start(play: Play, now: float, autoplay: bool) -> Tuple[Play, Effects]:
    """The first frame (and autoplay started, with ``--autoplay``)."""
    if autoplay:
        play = toggle_autoplay(play, now)
    if play.ai_note:
        play = replace(play, note=play.ai_note)
    return play, [draw(play)]


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


def closing_effects(play: Play) -> List[Union[WriteBest, AddToHistory, RecordUnaided]]:
    """What the end of play writes, whatever ended it (q, a signal): the best
    reached, and the game where it belongs. Quitting a finished game (won,
    or over) ends it: into the history. An unfinished one stays in its save,
    to be resumed; its score may still be the best without undo or AI."""
    session = play.session
    game = session.game
    effects: List[Union[WriteBest, AddToHistory, RecordUnaided]] = [WriteBest(session.best, final=True)]
    if session.quit and (game.over or game.won):
        effects.append(AddToHistory(session.played()))
    elif game.moves and not (session.used_undo or session.assisted):
        effects.append(RecordUnaided(game.score))
    return effects


# -- the step -------------------------------------------------------------------


def step(play: Play, event: Event) -> Tuple[Play, Effects]:
    """The next state and what to do, for ``event``."""
    if isinstance(event, Keys):
        return _keys(play, event)
    if isinstance(event, KeysEnded):
        play, effects = _cut_motion_short(play)
        play = replace(play, over=True, pilot=None, gained=0)
        return play, [*effects, Draw(view(play, ending=_farewell(play))), Quit()]
    if isinstance(event, Tick):
        return _tick(play, event.now)
    if isinstance(event, AIMoved):
        return _ai_moved(play, event)
    if isinstance(event, Resized):
        play, effects = _cut_motion_short(replace(play, size=event.size))
        return play, [*effects, draw(play)]
    if isinstance(event, ReplayPaused):  # said at once: a motion under way ends first
        play, effects = _cut_motion_short(replace(play, replay_keys=event.keys))
        return play, effects or [draw(play)]
    if isinstance(event, AIReady):
        return replace(play, ai_loaded=True), []
    if isinstance(event, Warned):
        play = replace(play, warning=event.message, saving=event.saving, note=event.message)
        if play.moving is not None:
            return _seen_moving(play), []
        return play, [] if play.over else [draw(play)]
    if isinstance(event, BestStored):
        # Shown from the next frame on (no frame of its own: it comes back
        # right after a frame, and the next key's frame is soon enough).
        if event.best > play.session.best:
            play.session.best = event.best
            if play.moving is not None:
                play = _seen_moving(play)
        return play, []
    return play, [Leave()]  # Suspended


def _keys(play: Play, event: Keys) -> Tuple[Play, Effects]:
    play, effects = _cut_motion_short(play)
    if play.over:
        return play, effects
    if play.helping:
        # Any key closes the help and is used up doing so.
        play = replace(play, helping=False, gained=0)
        return play, [*effects, draw(play)]
    if not event.actions:
        # A key that is no key here (x, F1, a lone Esc): nothing is played,
        # and the note says where the keys are listed, until the next key.
        help_key = _help_key(play.settings)
        if help_key is None or play.settings.replay or play.over:
            return play, effects
        play = replace(play, note=f"{help_key} lists the keys")
        return play, [*effects, draw(play)]
    # A key came: the hint and the AI's one-frame note go (a state is
    # rebuilt only if one is there: a replayed key costs ~8 us a rebuild).
    if play.hint is not None or play.hint_stuck or play.ai_note or play.fade_at is not None:
        play = replace(play, hint=None, hint_stuck=False, ai_note="", fade_at=None)
    # One move read alone is shown moving; typed-ahead keys are all played
    # and the screen catches up in a single frame.
    shown = playable(play)
    animate = play.settings.animate and len(event.actions) == 1 and shown
    play, turn, played, want_hint = play_keys(play, event.actions, event.now, animate, typed=True, blind=not shown)
    effects += played
    if want_hint and not play.session.quit:
        play, asked = _ask_ai(replace(play, thinking=turn), Purpose.HINT)
        return play, effects + asked
    return _finish(play, turn, effects)


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
    play, turn, effects, _ = play_keys(play, (move_action(event.direction),), event.now, animate, typed=False)
    return _finish(play, turn, effects)


def _help_key(settings: Settings) -> Optional[str]:
    """The key that opens the help: ``?``, unless the config gave ``?`` to
    another action (then a key it gave the help, if any)."""
    bound = dict(settings.bindings)
    if bound.get(Action.HELP.value, Action.HELP) is Action.HELP:
        return Action.HELP.value
    return next((key for key, action in settings.bindings if action is Action.HELP), None)


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
    note = _note(play, turn)
    if note != play.note or turn.gained != play.gained:
        play = replace(play, note=note, gained=turn.gained)
    if play.session.quit:
        ending = Draw(view(play, ending=_farewell(play)))
        return replace(play, over=True, pilot=None), [*effects, ending, Quit()]
    if play.helping:
        return replace(play, gained=0), [*effects, draw(play)]
    if turn.slides is None or not (turn.slides or turn.stuck):
        play, settled = _settled_frame(play, turn.now)
        return play, effects + settled
    if turn.stuck:
        # A move that changes nothing: the board nudges right and back.
        shown = view(play)
        moving = Moving(turn.now, (), SHAKE_SECONDS, shown)
        return with_moving(play, moving), [*effects, Draw(shown, shake=1)]
    game = play.session.game
    spawn = game.spawned
    value = game.board[spawn[0]][spawn[1]] if spawn is not None else 0
    frames = motion_frames(turn.slides, game.cols, spawn, value)
    play = with_moving(play, Moving(turn.now, frames, SETTLE_SECONDS, view(play)))
    return _tick(play, turn.now, effects)


def _seen_moving(play: Play) -> Play:
    """``play`` in motion, its frames showing what changed in ``play`` (a
    warning, a best) since its view was built."""
    assert play.moving is not None
    return with_moving(play, replace(play.moving, view=view(play)))


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


def _settled_frame(play: Play, start: float) -> Tuple[Play, Effects]:
    """The settled frame, the best offered, and the "+N" set to fade (unless
    the AI plays: its next move comes first)."""
    fade = play.gained and play.settings.animate and play.pilot is None
    fade_at = start + GAIN_SECONDS if fade else None
    # After a motion, its view is the settled frame's (kept up to date meanwhile).
    shown = play.moving.view if play.moving is not None and not play.helping else None
    if play.moving is not None or play.fade_at != fade_at:
        play = replace(play, moving=None, fade_at=fade_at)
    return play, [draw(play) if shown is None else Draw(shown), _best(play)]


def _best(play: Play) -> WriteBest:
    """The best is written at once when no later key will come to write it
    (the game is over) or no save holds it meanwhile; else at the writer's
    pace (a write costs up to ~10 ms, which the next key should not wait for)."""
    session = play.session
    return WriteBest(session.best, urgent=session.game.over or not play.saving)


def _cut_motion_short(play: Play) -> Tuple[Play, Effects]:
    """A key or a resize ends a motion at once: its
    settled frame first (so motion never costs a key or a millisecond)."""
    if play.moving is None:
        return play, []
    play = replace(play, moving=None, fade_at=None)
    return play, [draw(play), _best(play)]


def _tick(play: Play, now: float, before: Sequence[Effect] = ()) -> Tuple[Play, Effects]:
    """After ``before``, the frame of motion that is due, the "+N" fading,
    or autoplay's move. A frame of motion more than :data:`LATE_SECONDS`
    late is not drawn: the move settles at once."""
    effects = list(before)
    due = next_due(play)
    if due is None or now < due:
        return play, effects
    moving = play.moving
    if moving is not None:
        if not moving.frames or now - due > LATE_SECONDS:
            play, settled = _settled_frame(play, moving.start)
            return play, effects + settled
        (_, sprites), rest = moving.frames[0], moving.frames[1:]
        play = with_moving(play, Moving(moving.start, rest, moving.settle, moving.view))
        return play, [*effects, Draw(moving.view, sprites=sprites)]
    if play.fade_at is not None:
        play = replace(play, fade_at=None, gained=0)
        return play, [*effects, draw(play)]
    play, asked = _ask_ai(play, Purpose.AUTOPLAY)
    return play, effects + asked
