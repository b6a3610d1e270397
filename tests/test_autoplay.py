"""The AI at play, outside the keyboard loop: headless autoplay (its JSON is
the protocol's, its recordings replay), the hint and autoplay on the note
line, assisted games and the best score, and the AI's option checks."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any, List, Optional, Sequence, Tuple

import pytest

from ansi2048.ai import best_move
from ansi2048.game.engine import Direction, Game
from ansi2048.game.keys import Action
from ansi2048.game.session import Session
from ansi2048.loop.events import AIMoved, AskAI, Keys, Purpose, Tick
from ansi2048.loop.state import Play, Settings
from ansi2048.loop.step import next_due, step
from ansi2048.options.context import Context, Options
from ansi2048.play.advisor import DEFAULT_PACE, PACES, Advisor
from ansi2048.play.headless import play_headless
from ansi2048.play.keyboard import play_terminal
from ansi2048.records.recording import ASSISTED, Recorder, encode_item, recorded_actions, split_header
from ansi2048.render.frame import LARGE, View, frame_lines
from ansi2048.render.style import ColorDepth
from ansi2048.storage.data_dir import DataDir

from .conftest import json_lines, run_cli
from .console import HEIGHT, WIDTH, FakeClock, PlayConsole
from .ptys import GameInShell, job_control_shell
from .screen import FRAME_END_PATTERN, dump, emulate, read_board
from .test_interactive import context, played, saved_keys

# The line a save gets where the AI began to help.
ASSISTED_MARK = encode_item(ASSISTED).encode()
NAMES = {"up": "w", "left": "a", "down": "s", "right": "d"}


class NoInput:
    """A stdin that fails the test if anything reads it."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"stdin.{name} was used: headless autoplay must not read input")


def headless(tmp_path: Path, **options: Any) -> str:
    out = io.StringIO()
    ctx = Context(Options(**options), NoInput(), out, {"TERM": "dumb"}, pytest.fail, lambda: 1)  # type: ignore[arg-type]
    assert play_headless(ctx) == 0
    return out.getvalue()


def test_headless_json_is_the_protocols_and_replays_to_the_same_boards() -> None:
    result = run_cli(["--autoplay", "--seed", "11", "--size", "2x3", "--json"])
    assert result.returncode == 0, result.stderr
    objects = json_lines(result.stdout)
    start, moves = objects[0], objects[1:]
    assert start["action"] == "start" and (start["rows"], start["cols"], start["seed"]) == (2, 3, 11)
    assert moves and all(o["action"] in NAMES and o["moved"] for o in moves)
    assert moves[-1]["over"] and not any(o["over"] for o in moves[:-1])
    # The same moves typed to a piped game of the same seed: the same objects.
    keys = "".join(NAMES[o["action"]] for o in moves).encode()
    replayed = run_cli(["--json", "--seed", "11", "--size", "2x3"], keys)
    assert json_lines(replayed.stdout) == objects


def test_headless_reads_no_input_and_ends_at_game_over() -> None:
    # A pipe kept open: reading it would block until the timeout.
    read_end, write_end = os.pipe()
    try:
        os.write(write_end, b"q")
        result = subprocess.run(
            [sys.executable, "-m", "ansi2048", "--autoplay", "--seed", "2", "--size", "2x2"],
            stdin=read_end,
            capture_output=True,
            timeout=60,
            check=False,
        )
    finally:
        os.close(read_end)
        os.close(write_end)
    assert result.returncode == 0, result.stderr
    last = result.stdout.decode().splitlines()[-1]
    assert last.startswith("score ") and "seed 2" in last and last.endswith("game over")


def test_a_headless_recording_replays_identically(tmp_path: Path) -> None:
    record = tmp_path / "ai.keys"
    played = run_cli(["--autoplay", "--seed", "9", "--size", "2x2", "--record", str(record)])
    assert played.returncode == 0, played.stderr
    replayed = run_cli([], record.read_bytes())
    assert replayed.stdout == played.stdout
    assert b"game over" in played.stdout


def test_headless_in_process_summary_names_the_game(tmp_path: Path) -> None:
    out = headless(tmp_path, rows=2, cols=2, seed=4)
    assert out.splitlines()[-1].startswith("score ") and "seed 4" in out and "game over" in out


@pytest.mark.parametrize(
    "args, option",
    [
        (["--ai-time", "0"], "--ai-time"),
        (["--ai-time", "-1"], "--ai-time"),
        (["--ai-time", "61"], "--ai-time"),
        (["--ai-time", "nan"], "--ai-time"),
        (["--ai-time", "soon"], "--ai-time"),
        (["--autoplay", "--stats"], "--autoplay"),
        (["--autoplay", "--replay-best", "1"], "--autoplay"),
    ],
)
def test_bad_ai_options_get_one_line_and_status_2(args: List[str], option: str) -> None:
    result = run_cli(args)
    err = result.stderr.decode()
    assert result.returncode == 2
    assert len(err.strip().splitlines()) == 1 and option in err and "Traceback" not in err


def test_ai_time_gives_the_player_its_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    import ansi2048.ai

    made: List[Any] = []

    class Spy(ansi2048.ai.Player):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            made.append(self)

    monkeypatch.setattr(ansi2048.ai, "Player", Spy)
    game = Game(3, 3, 256, 1)
    Advisor(Options(ai_time=0.05), pytest.fail).move(game)
    Advisor(Options(), pytest.fail).move(game)
    assert [(p.level, p.time_budget) for p in made] == [(2, 0.05), (1, None)]


def test_damaged_weights_warn_once_and_the_heuristic_plays(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import ansi2048.ai

    damaged = tmp_path / "damaged.bin"
    damaged.write_bytes(b"not weights")
    monkeypatch.setattr(ansi2048.ai, "DEFAULT_WEIGHTS", str(damaged))
    warnings: List[str] = []
    advisor = Advisor(Options(), warnings.append)
    game = Game(4, 4, 2048, 3)
    for _ in range(3):
        direction = advisor.move(game)
        assert direction is not None and game.move(direction)
    assert len(warnings) == 1 and "damaged.bin" in warnings[0]


# -- on the note line -----------------------------------------------------------


def view(**fields: Any) -> View:
    return replace(View.of(Session(Game(4, 4, 2048, 1))), **fields)


def text(v: View, depth: ColorDepth = ColorDepth.NONE, ascii_only: bool = False) -> List[str]:
    return frame_lines(v, depth, 80, 30, ascii_only=ascii_only)


def test_the_hint_shows_arrow_and_word_and_the_ascii_word() -> None:
    assert "hint: ← left" in text(view(hint=Direction.LEFT))
    lines = text(view(hint=Direction.UP), ascii_only=True)
    assert "hint: up" in lines and all(ch.isascii() for line in lines for ch in line)
    # With a warning the hint comes first, on the one note line.
    both = text(view(hint=Direction.DOWN, note="a warning"))
    assert "hint: ↓ down · a warning" in both
    assert len(both) == len(text(view(hint=Direction.DOWN)))


def test_no_move_left_is_said_and_autoplay_shows_its_pace() -> None:
    assert "hint: no move changes the board" in text(view(stuck=True))
    assert "autoplay 8/s · p or any move takes over" in text(view(autoplay=8))
    assert not any("autoplay" in line or "hint" in line for line in text(view())[:-1])  # the keys line offers them


def test_an_assisted_game_says_so_in_the_header() -> None:
    session = Session(Game(4, 4, 2048, 1))
    assert "assisted" not in text(View.of(session))[0]
    session.assisted = True
    assert "assisted" in text(View.of(session))[0]
    # On a narrow terminal the header still fits, the marker kept.
    narrow = frame_lines(View.of(session), ColorDepth.NONE, 40, 30)
    assert len(narrow[0]) < 40 and "Score" in narrow[0] and "assisted" in narrow[0]


@pytest.mark.parametrize("day", ["", "2026-11-28"])
def test_the_header_drops_the_seed_the_moves_and_the_best_before_assisted(day: str) -> None:
    """``assisted`` says the best is not counted (issue 40, item 15): a
    header that must drop something keeps it over the seed (or the day),
    the moves and the best, at every width."""
    session = Session(Game(4, 4, 2048, 4_294_967_295), best=123_456)
    session.assisted = True
    view = replace(View.of(session), day=day, score=98_765, moves=4_321)
    dropped_seed = 0
    for width in range(16, 141):
        header = frame_lines(view, ColorDepth.NONE, width, 40)[0]
        if any(word in header for word in ("Seed", "Daily", "Moves", "Best")):
            assert "assisted" in header, (width, header)
        dropped_seed += "assisted" in header and "Seed" not in header and "Daily" not in header
    assert dropped_seed > 20  # the widths where something had to go


# -- the save remembers the AI's help -----------------------------------------


def test_a_resumed_assisted_game_stays_assisted_and_its_score_is_no_best(tmp_path: Path) -> None:
    store = DataDir(str(tmp_path))
    save = store.save_file(4, 4, 2048)
    session = Session(Game(seed=21))
    save.begin(session.game)

    def play(keys: str) -> None:
        for key in keys:
            action = Action(key)
            if session.apply(action).moved:
                save.append(action)

    play("wasd")
    before = session.game.score
    session.assisted = True
    save.append(ASSISTED)
    play("wasdwasdwasdwasd")
    assert session.game.score > before
    save.close()
    resumed = store.save_file(4, 4, 2048).load()
    assert resumed is not None and resumed.runs is not None
    assert resumed.game.board == session.game.board
    assert resumed.runs[0].assisted
    assert resumed.best_seen == before  # the AI's points are not recovered as a best


def test_a_compacted_save_keeps_the_mark(tmp_path: Path) -> None:
    store = DataDir(str(tmp_path))
    save = store.save_file(4, 4, 2048)
    session = Session(Game(seed=3))
    save.begin(session.game)
    for key in "wasdr":
        action = Action(key)
        if session.apply(action).moved:
            save.append(action)
    save.append(ASSISTED)
    save.append(Action.LEFT)
    save.close()
    first = store.save_file(4, 4, 2048).load()
    assert first is not None and first.runs is not None and first.runs[0].assisted
    compacted = store.save_file(4, 4, 2048).compact(first)
    assert compacted is not None and compacted.runs is not None and compacted.runs[0].assisted
    assert ASSISTED_MARK in (tmp_path / "game-4x4-2048.keys").read_bytes()
    again = store.save_file(4, 4, 2048).load()  # from the compacted file
    assert again is not None and again.runs is not None and again.runs[0].assisted
    assert again.game.board == first.game.board


def test_piped_play_ignores_the_ais_keys_and_never_records_them(tmp_path: Path) -> None:
    record = tmp_path / "game.keys"
    result = run_cli(["--json", "--seed", "3", "--record", str(record)], b"tp+-=w")
    objects = json_lines(result.stdout)
    assert [o["action"] for o in objects] == ["start", "up"]
    assert record.read_bytes().splitlines()[1:] == [b"w"]


def test_the_pace_steps_through_the_paces_and_a_stall_brings_no_burst() -> None:
    session = Session(Game(seed=8))
    settings = Settings(animate=False, can_wait=True)
    play = Play(session, settings, (80, 30))
    assert play.pace == DEFAULT_PACE == 4
    play, effects = step(play, Keys((Action.AUTOPLAY,), 100.0))
    assert play.pilot is not None and next_due(play) == 100.0  # the first move at once
    play, effects = step(play, Tick(100.0))
    assert AskAI(Purpose.AUTOPLAY) in effects and next_due(play) is None  # nothing is due while it thinks
    play, _ = step(play, AIMoved(Purpose.AUTOPLAY, Direction.LEFT, 100.0))
    assert next_due(play) == pytest.approx(100.25)
    play, _ = step(play, Tick(100.25))
    play, _ = step(play, AIMoved(Purpose.AUTOPLAY, Direction.RIGHT, 105.0))  # a long stall
    due = next_due(play)
    assert due is not None and 105.0 < due < 105.25  # the next soon, not a burst to catch up
    for _ in range(6):
        play, _ = step(play, Keys((Action.FASTER,), 105.0))
    assert play.pace == PACES[-1] == 16 and play.pilot is not None and play.pilot.pace == 16
    for _ in range(6):
        play, _ = step(play, Keys((Action.SLOWER,), 105.0))
    assert play.pace == PACES[0] == 1
    play, _ = step(play, Keys((Action.AUTOPLAY,), 105.0))
    assert play.pilot is None and next_due(play) is None


def test_a_resumed_assisted_game_shows_the_best_it_did_not_make() -> None:
    game = Game(4, 4, 2048, 8)
    for direction in (Direction.LEFT, Direction.UP, Direction.RIGHT, Direction.DOWN) * 4:
        game.move(direction)
    assert game.score > 0
    helped = Session(Game(4, 4, 2048, 8))
    helped.assisted = True
    assert Session(game, best=0, runs=helped.runs()).best == 0
    assert Session(game, best=0).best == game.score


# -- in the keyboard game's loop ------------------------------------------------


def timed(script: Sequence[Tuple[float, bytes]], clock: FakeClock) -> PlayConsole:
    """Keys typed at their times (seconds from the start) on ``clock``;
    autoplay moves in the waits between them."""
    return PlayConsole(script, clock)


def loop_context(data: Path, clock: FakeClock, record: Optional[io.StringIO] = None, **options: Any) -> Context:
    ctx = context(data, clock, animation=False, **options)
    if record is not None:
        ctx = replace(ctx, recorder=Recorder(record, pytest.fail))
    return ctx


def test_autoplay_plays_saves_and_records_its_moves_like_typed_ones(data_home: Path) -> None:
    clock = FakeClock()
    record = io.StringIO()
    record.close = lambda: None  # type: ignore[method-assign]  # read after the game
    console = timed([(0, b"p"), (1.3, b"q")], clock)
    assert play_terminal(loop_context(data_home, clock, record, seed=8), console.open) == 0
    _, keys = split_header((data_home / "game-4x4-2048.keys").read_bytes())
    assert keys.startswith(ASSISTED_MARK)
    moves = keys[len(ASSISTED_MARK) :]
    assert len(moves) == 6 and set(moves) <= set(b"wasd")
    # The --record file holds the same moves, and replays to the board on screen.
    rec_header, rec_keys = split_header(record.getvalue().encode())
    assert rec_header is not None and rec_header.seed == 8
    assert recorded_actions(rec_keys) == recorded_actions(moves)
    session = played(8, rec_keys)
    assert read_board(console.display, LARGE, 4, 4) == [list(row) for row in session.game.board]
    # The first move at once, then one every quarter of a second (4/s).
    assert console.timed_out[0] == 0 and console.timed_out[1:] == [pytest.approx(0.25)] * 5
    assert not (data_home / "best.json").exists() or "4x4-2048" not in json.loads(
        (data_home / "best.json").read_text(encoding="utf-8")
    )


def test_a_typed_move_takes_over_and_the_pace_changes(data_home: Path) -> None:
    clock = FakeClock()
    # p: the AI plays 2 moves (at 0 and 0.25 s); + (8/s): 2 more (the one
    # waited for comes 1/8 s after the last, at 0.375 s; then 0.5 s); w: the
    # player's; then no more AI.
    console = timed([(0, b"p"), (0.3, b"+"), (0.55, b"w"), (0.55, b"q")], clock)
    play_terminal(loop_context(data_home, clock, seed=8), console.open)
    keys = saved_keys(data_home)
    assert keys.startswith(ASSISTED_MARK) and len(keys) == len(ASSISTED_MARK) + 5
    assert console.timed_out == [0, pytest.approx(0.25), pytest.approx(0.075), pytest.approx(0.125)]
    assert not any("takes over" in line for line in console.display)


def test_autoplay_shows_its_pace_and_p_stops_it(data_home: Path) -> None:
    clock = FakeClock()
    console = timed([(0, b"p"), (0.1, b"-"), (0.6, b"p"), (0.6, b"q")], clock)
    seen: List[str] = []
    console.on_write = lambda text: seen.append(text)
    play_terminal(loop_context(data_home, clock, seed=8), console.open)
    # What the screen showed after each write (a repaint writes only what changed).
    shown = "\n".join(dump(emulate("".join(seen[: i + 1]).encode(), WIDTH, HEIGHT).display) for i in range(len(seen)))
    assert "autoplay 4/s - p or any move takes over" in shown  # ASCII: stdout is no terminal here
    assert "autoplay 2/s" in shown
    assert len(saved_keys(data_home)) == len(ASSISTED_MARK) + 2  # p stopped it after 2 moves
    assert not any("takes over" in line for line in console.display)


def test_the_hint_shows_the_ais_move_without_moving_and_goes_at_the_next_key(
    data_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The AI not loaded ahead (as if the first t came before it was): it
    # loads on that t.
    monkeypatch.setattr(Advisor, "warm_up", lambda self, board: None)
    clock = FakeClock()
    console = timed([(0, b"w"), (0, b"t"), (0, b"q")], clock)
    boards: List[Any] = []

    def after_hint(text: str) -> None:
        if len(boards) == 0 and "hint: " in "".join(console.output):
            boards.append(console.display)

    console.on_write = after_hint
    play_terminal(loop_context(data_home, clock, seed=8), console.open)
    shown = boards[0]
    expected = best_move(played(8, b"w").game)
    assert expected is not None
    assert any(f"hint: {expected.value}" in line for line in shown)  # ASCII: no arrow
    assert read_board(shown, LARGE, 4, 4) == [list(row) for row in played(8, b"w").game.board]
    assert not any("hint: " in line for line in console.display)  # q took it away
    assert saved_keys(data_home) == b"w" + ASSISTED_MARK
    # The AI loads on that first t: the screen said so at once, before the hint.
    output = "".join(console.output)
    assert output.count("loading the AI...") == 1
    assert output.index("loading the AI...") < output.index("hint: ")
    assert "assisted" in console.display[0]


def test_a_hint_with_no_move_left_says_so(data_home: Path) -> None:
    clock = FakeClock()
    # 2x2, goal 8: the AI plays to the end, stops by itself; t then finds nothing.
    console = timed([(0, b"p"), (1000, b"t"), (1000, b"q")], clock)
    play_terminal(loop_context(data_home, clock, rows=2, cols=2, seed=3), console.open)
    output = "".join(console.output)
    assert "Game over" in output and "hint: no move changes the board" in output
    assert output.index("Game over") < output.index("hint: no move")
    # The finished game is kept as the AI's: no best without undo or AI from it.
    (line,) = (data_home / "history.jsonl").read_text(encoding="utf-8").splitlines()
    assert json.loads(line)["ai"] is True and json.loads(line)["over"] is True
    assert not (data_home / "best.json").exists()  # nor any best at all


def test_autoplay_from_the_start_with_the_option(data_home: Path) -> None:
    clock = FakeClock()
    console = timed([(0.6, b"q")], clock)
    play_terminal(loop_context(data_home, clock, seed=8, autoplay=True), console.open)
    assert len(saved_keys(data_home)) == len(ASSISTED_MARK) + 3


def test_importing_the_game_loads_no_ai() -> None:
    code = (
        "import sys, ansi2048.cli, ansi2048.play.keyboard, ansi2048.play.advisor\nprint('ansi2048.ai' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True).stdout
    assert out.strip() == b"False"


def ai_threads() -> List[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name == "ansi2048-ai"]


def test_the_ai_loads_in_the_background_once_the_first_frame_is_out(
    data_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 14 item 17: the first hint as quick as later ones. The loading
    starts after the first frame (which must not wait for it); a hint after
    it is done shows no "loading the AI..."."""
    made: List[Any] = []
    real = Advisor._made

    def spy(self: Advisor, board: Any = None) -> Any:
        made.append(threading.current_thread().name)
        return real(self, board)

    monkeypatch.setattr(Advisor, "_made", spy)
    clock = FakeClock()
    first_frame: List[List[threading.Thread]] = []

    def loaded() -> None:
        for thread in ai_threads():
            thread.join(timeout=30)  # the player looks at the board a moment

    loaded()  # (another test's loading, if any, is over)
    console = timed([(1.0, b"t"), (2.0, b"q")], clock)
    console.on_write = lambda text: first_frame.append(ai_threads()) if not first_frame else None
    console.on_read = loaded
    assert play_terminal(loop_context(data_home, clock, seed=8), console.open) == 0
    assert first_frame == [[]]  # nothing was loading while the first frame was written
    assert made[0] == "ansi2048-ai"  # the player was made on the loading thread
    output = "".join(console.output)
    assert "loading the AI" not in output and "hint: " in output


@pytest.mark.posix("a pty")
def test_hint_and_autoplay_keys_in_a_pty(tmp_path: Path, data_home: Path) -> None:

    record = tmp_path / "ai.keys"
    run = GameInShell(tmp_path, ["--seed", "7", "--new", "--record", str(record)], data_home)
    run.frame()
    run.child.send("t")
    run.child.expect(rb"hint: \S+ (left|right|up|down)")
    run.output += run.child.before + run.child.after
    run.child.send("p")
    run.child.expect("autoplay 4/s")
    run.output += run.child.before + run.child.after
    save = data_home / "game-4x4-2048.keys"
    while len(split_header(save.read_bytes())[1].replace(ASSISTED_MARK, b"")) < 3:
        run.child.expect(FRAME_END_PATTERN)  # each move draws frames; the pexpect timeout bounds the wait
        run.output += run.child.before + run.child.after
    run.child.send("w")  # takes over: the AI stops
    run.frame()
    run.child.send("q")
    status, output = run.finish()
    assert status == 0 and run.stty_unchanged()
    # The screen as the game left it: the frame fills the window (its note
    # line is kept even when empty), so the shell's lines after it would
    # scroll its header away.
    display = emulate(output.split(b"EXIT=")[0], 80, 30).display
    assert "assisted" in display[0] or any("assisted" in line for line in display)
    # The recording (the AI's moves and the player's) replays to the board on screen.
    replayed = json_lines(run_cli(["--json"], record.read_bytes()).stdout)
    assert replayed[-1]["board"] == read_board(display, LARGE, 4, 4)
    assert replayed[-1]["moves"] >= 4


def test_a_headless_game_can_be_cast(tmp_path: Path) -> None:
    cast = tmp_path / "ai.cast"
    result = run_cli(["--autoplay", "--seed", "3", "--size", "2x2", "--cast", str(cast)])
    assert result.returncode == 0, result.stderr
    moves = int(result.stdout.decode().split("moves ")[1].split()[0])
    header, *events = [json.loads(line) for line in cast.read_text(encoding="utf-8").splitlines()]
    assert header["title"] == "ansi2048 --autoplay 2x2 seed 3"
    frames = [e for e in events if "\x1b[?25h" not in e[2]]
    assert len(frames) == 1 + moves  # the start, then one frame per move
    # At autoplay's pace at least (a slow machine may add to it, never take away).
    assert all(b[0] - a[0] >= 0.25 - 1e-6 for a, b in zip(frames, frames[1:]))
    assert "Game over" in frames[-1][2]


@pytest.mark.posix("a pty")
def test_autoplay_goes_on_after_a_key_that_is_no_action_and_a_resize(tmp_path: Path, data_home: Path) -> None:

    run = GameInShell(tmp_path, ["--seed", "7", "--new", "--autoplay"], data_home)
    run.frame()  # the game is up, its save begun
    save = data_home / "game-4x4-2048.keys"

    def moves() -> int:
        return len(split_header(save.read_bytes())[1].replace(ASSISTED_MARK, b""))

    def wait_for(count: int) -> None:
        while moves() < count:
            run.child.expect(FRAME_END_PATTERN)  # the pexpect timeout fails a game that stopped

    wait_for(2)
    run.child.send("x\x1b")  # no action, then a lone ESC: the AI plays on
    wait_for(moves() + 3)
    run.child.setwinsize(32, 90)  # a resize: it plays on too
    wait_for(moves() + 3)
    run.child.send("q")
    status, _ = run.finish()
    assert status == 0 and run.stty_unchanged()


def test_the_keys_line_offers_the_hint_and_autoplay_where_it_has_room() -> None:
    for ascii_only in (False, True):
        keys = text(view(), ascii_only=ascii_only)[-1]
        assert "t hint" in keys and "p autoplay" in keys and "q quit" in keys
    narrow = frame_lines(view(), ColorDepth.NONE, 60, 30)[-1]
    assert "q quit" in narrow and len(narrow) < 60
    assert "t hint" not in text(view(replay=True))[-1]


def test_a_save_reads_its_ai_line_and_never_the_ais_keys() -> None:
    from ansi2048.records.recording import BodyDecoder

    body = b"wt+p-=" + ASSISTED_MARK + b"d"
    assert BodyDecoder(saved=True).feed(body) == [Action.UP, ASSISTED, Action.RIGHT]
    # To a replay the line is a comment (and the AI's keys nothing).
    assert BodyDecoder().feed(body) == [Action.UP, Action.RIGHT]


@pytest.mark.posix("a pty and job control")
def test_autoplay_goes_on_after_ctrl_z_and_fg_without_a_key(tmp_path: Path, data_home: Path) -> None:
    """Issue 20: after Ctrl-Z and fg the screen said "autoplay 4/s" but
    nothing moved until a key (the wake-up of SIGCONT was taken for nothing
    to do, and the read blocked)."""
    import pexpect

    shell = job_control_shell(data_home)
    save = data_home / "game-4x4-2048.keys"

    def moves() -> int:
        if not save.exists():
            return 0
        return len(split_header(save.read_bytes())[1].replace(ASSISTED_MARK, b""))

    def wait_for(count: int) -> None:
        while moves() < count:
            shell.expect(FRAME_END_PATTERN)  # the pexpect timeout fails a game that stalled

    shell.sendline(f"set -b; {sys.executable} -m ansi2048 --seed 7 --new --autoplay")
    wait_for(2)
    shell.send("\x1a")
    shell.expect("Stopped")
    shell.expect_exact("$ ")
    stopped_at = moves()
    shell.sendline("fg")
    wait_for(stopped_at + 3)  # no key typed: it plays on by itself
    shell.send("q")
    shell.expect_exact("$ ")
    shell.sendline("echo EXIT=$?; exit")
    shell.expect(pexpect.EOF)
    assert b"EXIT=0" in shell.before


@pytest.mark.posix("a pty and job control")
def test_help_stays_up_across_ctrl_z_and_fg(tmp_path: Path, data_home: Path) -> None:
    """Coming back from a suspend is no key: the help is drawn again, not closed."""
    import pexpect

    shell = job_control_shell(data_home)
    shell.sendline(f"set -b; {sys.executable} -m ansi2048 --seed 7 --new")
    shell.expect(FRAME_END_PATTERN)
    shell.send("?")
    shell.expect("any key closes this help")
    shell.send("\x1a")
    shell.expect("Stopped")
    shell.expect_exact("$ ")
    shell.sendline("fg")
    shell.expect(FRAME_END_PATTERN)  # drawn again
    with pytest.raises(pexpect.TIMEOUT):
        shell.expect(FRAME_END_PATTERN, timeout=1)  # and nothing after it: the help stays
    shell.send("q")  # closes the help
    shell.expect(FRAME_END_PATTERN)
    shell.send("q")
    shell.expect_exact("$ ")
    shell.sendline("exit")
    shell.expect(pexpect.EOF)
