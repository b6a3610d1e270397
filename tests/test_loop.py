"""The keyboard game's loop: the pure state machine's rules of order, and
whole games played by its driver over byte streams that are no terminal
(memory, a pipe), on a fake clock."""

from __future__ import annotations

import io
import os
import select
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar, List, Optional, Tuple

import pytest

from ansi2048.game.engine import Direction, Game
from ansi2048.game.keys import Action
from ansi2048.game.session import Session
from ansi2048.loop.events import (
    AddToHistory,
    AIMoved,
    Append,
    AskAI,
    Draw,
    Effect,
    Keys,
    KeysEnded,
    Purpose,
    Quit,
    RecordKeys,
    Report,
    Resized,
    Tick,
    Warned,
    WriteBest,
)
from ansi2048.loop.state import Play, Settings
from ansi2048.loop.step import closing_effects, next_due, start, step
from ansi2048.loop.turns import NO_UNDO_NOTE
from ansi2048.options.context import Context, Options
from ansi2048.play.keyboard import play_terminal
from ansi2048.records.recording import ASSISTED, encode_item, split_header
from ansi2048.render.frame import LARGE
from ansi2048.render.motion import SETTLE_SECONDS as SETTLE
from ansi2048.render.repaint import SHOW_CURSOR
from ansi2048.terminal.console import ScreenHooks, stream_console

from .console import FakeClock, PlayConsole, Resize, screens
from .screen import dump, emulate, read_board
from .test_interactive import played

SETTINGS = Settings(animate=True, can_wait=True)


def fresh(seed: int = 8, size: Tuple[int, int] = (80, 30), **fields: Any) -> Play:
    return replace(Play(Session(Game(seed=seed)), SETTINGS, size), **fields)


def kinds(effects: List[Effect]) -> List[str]:
    return [type(effect).__name__ for effect in effects]


# -- the rules of order, on the pure machine -------------------------------------------


def test_the_save_gets_a_move_before_any_frame_shows_it() -> None:
    _, effects = step(fresh(settings=replace(SETTINGS, animate=False)), Keys((Action.LEFT,), 0.0))
    assert kinds(effects)[:3] == ["Append", "RecordKeys", "Draw"]
    assert effects[0] == Append((Action.LEFT,))
    _, effects = step(fresh(), Keys((Action.LEFT,), 0.0))
    assert kinds(effects)[:3] == ["Append", "RecordKeys", "Draw"]  # the first frame of motion comes after too


def test_the_best_is_written_urgently_only_when_nothing_else_would_recover_it() -> None:
    quiet = replace(SETTINGS, animate=False)
    _, effects = step(fresh(settings=quiet), Keys((Action.LEFT,), 0.0))
    assert [e for e in effects if isinstance(e, WriteBest)] == [WriteBest(effects_best(effects), urgent=False)]
    _, effects = step(fresh(settings=quiet, saving=False), Keys((Action.LEFT,), 0.0))
    assert [e.urgent for e in effects if isinstance(e, WriteBest)] == [True]
    # A game over: urgent, and the game goes to the history before the frame.
    session = Session(Game(2, 2, 8, 3))
    play = Play(session, quiet, (80, 30))
    effects: List[Effect] = []
    for _ in range(100):
        for action in (Action.LEFT, Action.UP, Action.RIGHT, Action.DOWN):
            if not session.game.over:
                play, effects = step(play, Keys((action,), 0.0))
    assert session.game.over
    assert [e.urgent for e in effects if isinstance(e, WriteBest)] == [True]
    assert kinds(effects).index("AddToHistory") < kinds(effects).index("Draw")


def effects_best(effects: List[Effect]) -> int:
    return next(e.best for e in effects if isinstance(e, WriteBest))


def test_the_ais_note_wins_over_a_warning_and_why_a_key_did_nothing() -> None:
    play = fresh(settings=replace(SETTINGS, animate=False, can_wait=False), warning="disk full")
    play, effects = step(play, Keys((Action.AUTOPLAY,), 0.0))  # cannot run here: says why
    draws = [e for e in effects if isinstance(e, Draw)]
    assert draws[-1].view.note.startswith("autoplay needs")
    play, effects = step(play, Keys((Action.UP,), 0.0))  # the next key: the warning is back
    assert [e for e in effects if isinstance(e, Draw)][-1].view.note in ("disk full", "can't move up")
    refused = fresh(settings=replace(SETTINGS, animate=False))
    refused.session.undo = False
    _, effects = step(refused, Keys((Action.UNDO,), 0.0))
    assert [e for e in effects if isinstance(e, Draw)][-1].view.note == NO_UNDO_NOTE
    assert not any(isinstance(e, (RecordKeys, Append)) for e in effects)  # a refused key is not kept


def test_quitting_draws_the_farewell_instead_of_the_move_and_stops() -> None:
    play, effects = step(fresh(), Keys((Action.LEFT, Action.QUIT), 0.0))
    assert kinds(effects)[-2:] == ["Draw", "Quit"]
    last = effects[-2]
    assert isinstance(last, Draw) and last.sprites is None
    assert last.view.ending == "game kept for next time: ansi2048 resumes it"
    assert play.over and next_due(play) is None
    _, effects = step(step(fresh(), Warned("disk full", saving=False))[0], Keys((Action.QUIT,), 0.0))
    assert isinstance(effects[-2], Draw) and "could not be saved" in effects[-2].view.ending


def test_a_key_during_the_motion_settles_it_first() -> None:
    play, effects = step(fresh(), Keys((Action.LEFT,), 0.0))
    assert isinstance(effects[-1], Draw) and effects[-1].sprites is not None  # moving
    due = next_due(play)
    assert due is not None and 0 < due < 0.2
    play, effects = step(play, Keys((Action.RIGHT,), 0.01))
    settled = effects[kinds(effects).index("Draw")]
    assert isinstance(settled, Draw) and settled.sprites is None  # the settled frame first
    assert kinds(effects).index("WriteBest") < kinds(effects).index("Append")


def test_a_motion_ticked_on_time_draws_every_frame_then_settles() -> None:
    play, effects = step(fresh(), Keys((Action.LEFT,), 0.0))
    drawn = [effects[-1]]
    while (due := next_due(play)) is not None and play.moving is not None:
        play, effects = step(play, Tick(due))  # each tick exactly when it is due
        drawn += [effect for effect in effects if isinstance(effect, Draw)]
    assert [draw.sprites is not None for draw in drawn] == [True, True, True, False]  # 3 frames of motion, settled


def test_a_motion_frame_more_than_a_frame_late_is_not_drawn_the_move_settles_at_once() -> None:
    """A loaded server or a stalled terminal ticks late: the player sees the
    move's end, not a slide that runs behind the clock."""
    play, effects = step(fresh(), Keys((Action.LEFT,), 0.0))
    due = next_due(play)
    assert due is not None and play.moving is not None
    play, effects = step(play, Tick(due + 0.02))  # late by less than a frame (1/30 s): drawn
    assert [draw.sprites is not None for draw in effects if isinstance(draw, Draw)] == [True]
    due = next_due(play)
    assert due is not None and play.moving is not None and play.moving.frames  # a frame of motion left
    play, effects = step(play, Tick(due + 0.05))  # later than a frame: the settled frame instead
    draws = [effect for effect in effects if isinstance(effect, Draw)]
    assert len(draws) == 1 and draws[0].sprites is None
    assert play.moving is None
    assert kinds(effects) == ["Draw", "WriteBest"]


def test_the_hint_waits_for_the_ai_and_marks_the_game_assisted_first() -> None:
    play, effects = step(fresh(), Keys((Action.HINT,), 0.0))
    assert kinds(effects) == ["Append", "Draw", "AskAI"]  # assisted, "loading the AI...", then ask
    assert effects[0] == Append((ASSISTED,)) and isinstance(effects[1], Draw) and "loading" in effects[1].view.note
    assert next_due(play) is None  # nothing else happens until it answers
    play, effects = step(play, AIMoved(Purpose.HINT, Direction.UP, 0.1))
    assert isinstance(effects[0], Draw) and effects[0].view.hint is Direction.UP
    _, effects = step(play, Keys((Action.HINT,), 0.2))
    assert kinds(effects) == ["AskAI"]  # loaded, and already assisted


def test_closing_keeps_what_the_end_of_play_must() -> None:
    play = fresh()
    play.session.apply(Action.LEFT)
    assert kinds(closing_effects(play)) == ["WriteBest", "RecordUnaided"]
    play.session.quit = True
    assert not any(isinstance(e, AddToHistory) for e in closing_effects(play))  # unfinished: it stays in its save
    assert all(isinstance(e, WriteBest) and e.final for e in closing_effects(fresh()))


def test_no_key_plays_and_autoplay_waits_while_the_board_does_not_fit() -> None:
    play, _ = start(fresh(), 0.0, autoplay=True)
    assert next_due(play) == 0.0
    play, _ = step(play, Resized((10, 4)))
    assert next_due(play) is None  # autoplay paused
    before = play.session.game.board
    play, effects = step(play, Keys((Action.LEFT, Action.HINT, Action.HELP), 1.0))
    assert play.session.game.board == before and not any(isinstance(e, (Append, AskAI)) for e in effects)
    assert not play.helping
    play, _ = step(play, Resized((80, 30)))
    assert next_due(play) == 0.0  # due since: at once
    _, effects = step(play, Tick(2.0))
    assert AskAI(Purpose.AUTOPLAY) in effects
    _, effects = step(play, Keys((Action.QUIT,), 2.0))
    assert isinstance(effects[-1], Quit)


# -- whole games over streams ------------------------------------------------------------


def context(data: Path, clock: FakeClock, **options: Any) -> Context:
    return Context(
        options=Options(**options),
        stdin=io.StringIO(),
        stdout=io.StringIO(),
        env={"ANSI2048_DATA_DIR": str(data), "TERM": "xterm-256color"},
        warn=pytest.fail,
        random_seed=lambda: 1,
        clock=clock,
    )


def saved(data: Path) -> bytes:
    _, keys = split_header((data / "game-4x4-2048.keys").read_bytes())
    return keys


def test_a_whole_game_over_in_memory_streams(tmp_path: Path) -> None:
    """Motion, help, a hint, autoplay at two paces, resizes (one too small
    for any board, with keys typed meanwhile) and quitting, all through the
    stream console on a fake clock."""
    clock = FakeClock()
    script = [
        (1.0, b"a"),  # a move, shown moving
        (1.05, b"d"),  # cuts its motion short
        (2.0, b"?"),  # help
        (3.0, b"x"),  # closes it, unplayed
        (4.0, b"t"),  # a hint
        (5.0, b"p"),  # autoplay at 4/s
        (5.6, Resize(100, 40)),  # while it plays
        (6.1, b"+"),
        (6.5, Resize(12, 5)),  # too small for any board: it pauses
        (7.0, b"wasd"),  # keys wait: not played blind
        (9.0, Resize(90, 32)),  # fits again: it plays on
        (9.6, b"w"),  # takes over
        (10.0, b"q"),
    ]
    console = PlayConsole(script, clock)
    assert play_terminal(context(tmp_path, clock, seed=8, new=True), console.open) == 0
    keys = saved(tmp_path)
    mark = encode_item(ASSISTED).encode()
    assert keys.startswith(b"ad" + mark)
    ai_moves = keys[len(b"ad" + mark) : -1]
    # The AI's moves: at 4/s from 5.0 s (5.0 to 6.0), at 8/s from 6.1 s (the
    # move waited for then due at 6.125 s) until the window got too small at
    # 6.5 s: 8; none while it was (the keys typed then would have taken over);
    # from 9.0 s, when it fits again, 6 more at 8/s until the w at 9.6 s.
    assert keys.endswith(b"w") and len(ai_moves) == 8 + 6 and set(ai_moves) <= set(b"wasd")
    # The small window was drawn (and nothing played in it: the keys above).
    small = [text for time, text in console.frames if 1006.5 <= time < 1009.0]
    assert small and not any("Score" in text for text in small)
    text = "\n".join(dump(display) for _, display in screens(console, 100, 40))
    assert "any key closes this help" in text and "hint: " in text and "autoplay 8/s" in text
    assert "need " in text  # the too-small message
    # The last screen, at the last size: the board the save replays to, and the farewell.
    display = emulate(console.screen_bytes, 90, 32).display
    session = played(8, keys.replace(mark, b""))
    assert read_board(display, LARGE, 4, 4) == [list(row) for row in session.game.board]
    assert "resumes it" in dump(display)
    # The cursor shown again, then taken from the frame's top row (where it
    # waits between frames) to below the frame, for the shell's prompt.
    screen = emulate(console.screen_bytes, 90, 32)
    last = console.output[-1]
    assert SHOW_CURSOR in last and last.endswith("\n") and console.restored
    assert screen.cursor.y > max(row for row, line in enumerate(screen.display) if line.strip())


def test_moves_made_while_too_small_were_never_played(tmp_path: Path) -> None:
    clock = FakeClock()
    console = PlayConsole([(1.0, Resize(8, 3)), (2.0, b"wasd"), (3.0, Resize(80, 30)), (4.0, b"q")], clock)
    assert play_terminal(context(tmp_path, clock, seed=8, new=True), console.open) == 0
    assert not (tmp_path / "game-4x4-2048.keys").exists() or saved(tmp_path) == b""


@pytest.mark.posix("select() on a pipe")
def test_a_game_over_a_pipe_and_a_byte_sink(tmp_path: Path) -> None:
    """The console needs no terminal: keys from a pipe (read with select,
    in real time), frames into a byte buffer, a fixed window size."""
    read_fd, write_fd = os.pipe()
    sink = io.BytesIO()

    def read(timeout: Optional[float]) -> Optional[bytes]:
        ready, _, _ = select.select([read_fd], [], [], timeout)
        return os.read(read_fd, 4096) if ready else None

    def typist() -> None:
        for key in (b"a", b"w", b"\x1b[C", b"t", b"q"):
            os.write(write_fd, key)

    def console(stdin: Any, stdout: Any, hooks: ScreenHooks) -> Any:
        from contextlib import nullcontext

        return nullcontext(stream_console(read, sink.write, lambda: (80, 30), hooks))

    thread = threading.Thread(target=typist)
    thread.start()
    try:
        ctx = replace(context(tmp_path, FakeClock(), seed=8, new=True), clock=__import__("time").monotonic)
        assert play_terminal(ctx, console) == 0
    finally:
        thread.join()
        os.close(read_fd)
        os.close(write_fd)
    display = emulate(sink.getvalue(), 80, 30).display
    keys = saved(tmp_path)
    assert keys.startswith(b"awd")
    assert read_board(display, LARGE, 4, 4) == [list(row) for row in played(8, b"awd").game.board]


def test_the_end_of_the_input_ends_the_game_like_a_closed_terminal(tmp_path: Path) -> None:
    from ansi2048.terminal.signals import Hangup

    chunks = [b"a", b""]

    def console(stdin: Any, stdout: Any, hooks: ScreenHooks) -> Any:
        from contextlib import nullcontext

        return nullcontext(stream_console(lambda timeout: chunks.pop(0), lambda data: None, lambda: (80, 30), hooks))

    with pytest.raises(Hangup):
        play_terminal(context(tmp_path, FakeClock(), seed=8, new=True), console)
    assert saved(tmp_path) == b"a"  # kept


# -- any window ----------------------------------------------------------------------------

STORM_KEYS = [b"a", b"d", b"w", b"s", b"?", b"x", b"t", b"p", b"+", b"-", b"u", b"r", b"\x1b[A", b"\x1b"]


def storm(rng: Any, start: float, count: int, sizes: Any) -> List[Tuple[float, Any]]:
    """``count`` resizes at random moments a few ms to a few hundred ms
    apart, random keys in between (moves, help, the AI's keys, a lone ESC)."""
    script: List[Tuple[float, Any]] = []
    now = start
    for _ in range(count):
        now += rng.choice((0.001, 0.005, 0.02, 0.05, 0.2, 0.4))
        if rng.random() < 0.3:
            script.append((now, rng.choice(STORM_KEYS)))
        else:
            script.append((now, Resize(*sizes(rng))))
    return script


def guard_moves(monkeypatch: pytest.MonkeyPatch, console: PlayConsole) -> List[Action]:
    """Fail if a key of the game other than q is played while the window
    cannot show the board; the keys played."""
    from ansi2048.render.frame import View, layout_for

    played_keys: List[Action] = []
    real = Session.apply

    def apply(self: Session, action: Action) -> Any:
        if action is not Action.QUIT:
            assert layout_for(View.of(self), *console.size) is not None, (action, console.size)
        played_keys.append(action)
        return real(self, action)

    monkeypatch.setattr(Session, "apply", apply)
    return played_keys


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_resize_storms_during_motion_autoplay_and_help_never_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    import random

    rng = random.Random(seed)
    clock = FakeClock()

    def sizes(rng: Any) -> Tuple[int, int]:
        # From 2 columns and 2 lines (a 1-line or 1-column window is the renderer's:
        # see the stub-frame test below for the loop at every size).
        return rng.choice((rng.randint(2, 30), rng.randint(30, 130))), rng.randint(2, 45)

    script = [(0.5, b"p"), *storm(rng, 0.5, 300, sizes), (200.0, Resize(80, 30)), (201.0, b"q")]
    console = PlayConsole(script, clock)
    moves = guard_moves(monkeypatch, console)
    assert play_terminal(context(tmp_path, clock, seed=seed, new=True), console.open) == 0
    assert moves and moves[-1] is Action.QUIT
    display = emulate(console.screen_bytes, 80, 30).display
    session = played(seed, saved(tmp_path).replace(encode_item(ASSISTED).encode(), b""))
    assert read_board(display, LARGE, 4, 4) == [list(row) for row in session.game.board]


class StubScreen:
    """Stands in for the renderer (whose frames at 1 line are its own
    business): takes every frame at the window's size, checks nothing."""

    frames: ClassVar[List[Tuple[int, int]]] = []

    def __init__(self, write: Any, size: Any, *args: Any, **kwargs: Any) -> None:
        self._size = size
        self.fits = True

    def paint(self, view: Any, sprites: Any = None, shake: int = 0) -> None:
        StubScreen.frames.append(self._size())

    def paint_help(self, view: Any) -> None:
        StubScreen.frames.append(self._size())

    def close(self) -> None:
        pass


def test_the_loop_is_total_at_every_window_size_from_nothing_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import random

    import ansi2048.play.keyboard

    monkeypatch.setattr(ansi2048.play.keyboard, "Screen", StubScreen)
    StubScreen.frames = []
    rng = random.Random(7)
    clock = FakeClock()
    every = [Resize(width, height) for width in range(0, 50) for height in range(0, 25)]
    script: List[Tuple[float, Any]] = [(0.5, b"p")]
    for index, resize in enumerate(every):
        script.append((1.0 + index * 0.01, resize))
        if index % 7 == 0:
            script.append((1.0 + index * 0.01 + 0.005, rng.choice(STORM_KEYS)))
    script += storm(rng, 20.0, 500, lambda rng: (rng.randint(0, 120), rng.randint(0, 45)))
    script += [(300.0, Resize(80, 30)), (301.0, b"q")]
    console = PlayConsole(script, clock)
    moves = guard_moves(monkeypatch, console)
    assert play_terminal(context(tmp_path, clock, seed=4, new=True), console.open) == 0
    assert moves[-1] is Action.QUIT
    assert {(0, 0), (1, 1), (49, 24)} <= set(StubScreen.frames)  # every size was drawn at


def test_a_window_that_changes_size_silently_is_followed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A console with no word of resizes (its hooks are never called): the
    driver looks at the size itself, so autoplay still pauses while the
    board does not fit, and plays on when it does."""
    clock = FakeClock()
    console = PlayConsole([(0.5, b"p"), (1.1, Resize(10, 4)), (3.0, Resize(80, 30)), (3.6, b"q")], clock)
    moves = guard_moves(monkeypatch, console)
    real_open = console.open

    def deaf(stdin: Any, stdout: Any, hooks: ScreenHooks) -> Any:
        return real_open(stdin, stdout, ScreenHooks(redraw=lambda: None, leave=lambda: None))

    assert play_terminal(context(tmp_path, clock, seed=8, new=True), deaf) == 0
    # At 4/s: 0.5, 0.75, 1.0; none from 1.1 to 3.0; then 3.0, 3.25, 3.5.
    assert len([m for m in moves if m is not Action.QUIT]) == 6


# -- keys from a pipe: replays, bots and the AI headless go through the same step -------


REPLAY = Settings(animate=False, can_wait=False, replay=True)


def test_a_chunk_of_piped_keys_is_kept_in_one_effect_each_cut_where_a_game_ends() -> None:
    session = Session(Game(2, 2, 8, 3))
    keys: List[Action] = []
    while not session.game.over:  # play a 2x2 game to its end, then r and a move
        for action in (Action.LEFT, Action.UP, Action.RIGHT, Action.DOWN):
            if not session.game.over:
                session.apply(action)
                keys.append(action)
    keys += [Action.RESTART, Action.LEFT]
    play = Play(Session(Game(2, 2, 8, 3)), REPLAY, (80, 30))
    play, effects = step(play, Keys(tuple(keys), 0.0))
    # The game over ends the first game, and r ends it again (the store
    # keeps it once): the keys before each end go out before it.
    kept = ["Append", "RecordKeys", "AddToHistory"]
    assert kinds(effects) == [*kept, *kept, "Append", "RecordKeys", "Draw", "WriteBest"]
    first, recorded = effects[0], effects[1]
    assert isinstance(first, Append) and isinstance(recorded, RecordKeys)
    assert recorded.items == tuple(keys[:-2])  # every key of the first game, moved or not
    assert len(first.items) == session.game.moves  # the save: only the keys that moved
    assert effects[3] == Append((Action.RESTART,)) and effects[6] == Append((Action.LEFT,))
    assert effects[2] == AddToHistory(session.played())


def test_a_replays_keys_play_unseen_and_its_last_frame_says_it_ended() -> None:
    play = Play(Session(Game(seed=8)), REPLAY, (10, 4), note="replay · seed 8", warning="replay · seed 8")
    play, effects = step(play, Keys((Action.LEFT, Action.UP), 0.0))
    assert play.session.game.moves > 0  # the window is too small, but no one is typing
    draw = [e for e in effects if isinstance(e, Draw)][-1]
    assert draw.view.replay and draw.view.note == "replay · seed 8"
    play, effects = step(play, KeysEnded())
    assert kinds(effects) == ["Draw", "Quit"] and play.over
    assert isinstance(effects[0], Draw) and effects[0].view.ending == "end of replay"


def test_a_bot_is_told_each_key_in_order() -> None:
    play = Play(Session(Game(seed=8)), replace(REPLAY, report=True), (80, 30))
    _, effects = step(play, Keys((Action.LEFT, Action.RIGHT, Action.QUIT), 0.0))
    reports = [e.event for e in effects if isinstance(e, Report)]
    assert [r["action"] for r in reports] == ["left", "right", "quit"]
    game = Game(seed=8)
    game.move(Direction.LEFT)
    game.move(Direction.RIGHT)
    assert reports[1]["board"] == [list(row) for row in game.board] and reports[1]["moves"] == game.moves


def test_the_piped_driver_plays_a_slow_replays_motion_between_its_keys() -> None:
    """--delay 1 with motion: each key a second apart, its frames of motion
    and its "+N" fading in between, on the clock the driver is given."""
    from ansi2048.play.performer import BestWriter, NoStore, Performer
    from ansi2048.play.piped import PipedDriver
    from ansi2048.records.recording import Recorder

    clock = FakeClock(0.0)
    slept: List[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        clock.now += seconds

    drawn: List[Draw] = []

    class Recording(Performer):
        def perform(self, effect: Any) -> List[Any]:
            if isinstance(effect, Draw):
                drawn.append(effect)
            return super().perform(effect)

    store = NoStore()
    performer = Recording(None, store, Recorder(None, print), BestWriter(store.record_best, clock, 0))
    play = Play(Session(Game(seed=8)), replace(REPLAY, animate=True), (80, 30), saving=False)
    driver = PipedDriver(play, performer, clock, sleep, 1.0)
    driver.start()
    driver.keys([Action.LEFT, Action.RIGHT], one_by_one=True)
    driver.end()
    assert clock.now == pytest.approx(2.0 + SETTLE)  # keys at 1 s and 2 s, the last motion played out
    moving = [d for d in drawn if d.sprites is not None]
    assert len(moving) >= 2  # frames of motion, for each key that moved tiles
    assert drawn[-1].view.ending == "end of replay"
    assert driver.over


def test_a_key_that_is_no_key_here_says_where_the_keys_are_listed() -> None:
    """Issue 30 item 9: x (or F1, a lone Esc) did nothing and said nothing."""
    play, effects = step(fresh(), Keys((), 0.0))
    assert kinds(effects) == ["Draw"]
    assert isinstance(effects[0], Draw) and effects[0].view.note == "? lists the keys"
    before = play.session.game.board
    play, effects = step(play, Keys((Action.LEFT,), 0.1))  # the next key: the note goes
    assert play.session.game.board != before or "can't" in play.note
    assert "lists the keys" not in play.note
    # ? given to another action by the config: the key the help has instead.
    rebound = replace(SETTINGS, bindings=(("?", Action.UP), ("h", Action.HELP)))
    _, effects = step(fresh(settings=rebound), Keys((), 0.0))
    assert isinstance(effects[0], Draw) and effects[0].view.note == "h lists the keys"
    # A replay says nothing: no one is typing.
    _, effects = step(fresh(settings=replace(SETTINGS, replay=True)), Keys((), 0.0))
    assert effects == []
