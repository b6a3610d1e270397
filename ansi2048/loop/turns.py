"""A turn: the keys of one step played on the game (typed ones, a chunk of
a pipe, or the AI's move) and what they ask of the shell; and the
keyboard's own keys (help, autoplay and its pace) among them. Pure: part
of :func:`.loop.step`, which shows the turn."""

from __future__ import annotations

from dataclasses import replace
from typing import Dict, List, Sequence, Tuple

from ..game import protocol
from ..game.engine import Direction, trace_move
from ..game.keys import Action
from ..records.recording import Item, Reseed
from .events import AddToHistory, Append, Effects, Key, RecordKeys, Report, StopRecording
from .state import PACES, Autopilot, Play, Turn

__all__ = [
    "NOTHING_TO_UNDO",
    "NO_TIMER_NOTE",
    "NO_UNDO_NOTE",
    "RANKED_NO_UNDO_NOTE",
    "assist_key",
    "play_keys",
    "toggle_autoplay",
]

# Shown for one frame when u is pressed in a game without undo.
NO_UNDO_NOTE = "undo is off (--no-undo)"
# ...and in a ranked daily game over SSH, where no such option was given.
RANKED_NO_UNDO_NOTE = "no undo in the ranked game"
# Said when autoplay is asked of a console that cannot time its moves.
NO_TIMER_NOTE = "autoplay needs a console that can wait for keys"
# Said when u finds nothing to undo (like "can't move left").
NOTHING_TO_UNDO = "nothing to undo"

# Looked up per key on the hot path of a piped replay (the properties cost
# more): each move key's direction, and the keys that are no key of the game.
_DIRECTION_OF: Dict[Key, Direction] = {action: action.direction for action in Action if action.direction is not None}
_ASSIST_KEYS = frozenset(action for action in Action if not action.game)


def assist_key(play: Play, action: Action, now: float) -> Play:
    """One of the keyboard's own keys that is no key of the game (not t)."""
    if action is Action.HELP:
        return replace(play, helping=True)
    if action is Action.AUTOPLAY:
        return toggle_autoplay(play, now)
    index = PACES.index(play.pace)
    pace = PACES[min(index + 1, len(PACES) - 1)] if action is Action.FASTER else PACES[max(index - 1, 0)]
    pilot = play.pilot
    if pilot is not None:
        # The move already waited for comes at the new pace too.
        pilot = Autopilot(pace, pilot.due + 1.0 / pace - 1.0 / play.pace)
    return replace(play, pace=pace, pilot=pilot)


def toggle_autoplay(play: Play, now: float) -> Play:
    if play.pilot is not None:
        return replace(play, pilot=None)
    if not play.settings.can_wait:
        return replace(play, ai_note=NO_TIMER_NOTE)
    return replace(play, pilot=Autopilot(play.pace, now))  # the first move at once


def play_keys(
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
                play = assist_key(play, key, now)
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
            refused = RANKED_NO_UNDO_NOTE if settings.ranked else NO_UNDO_NOTE
            continue
        if saving and moved:
            saved.append(item)
        if recording:
            if key is undo_key and len(session.runs()[1]) < settings.record_from:
                # The undo went back into a game from before the recording
                # began: its keys are not in it, so the recording could not
                # follow; it stops there (what it holds still replays).
                flush()
                effects.append(StopRecording("undo went back before it began"))
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
            effects.append(AddToHistory(ended))
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
