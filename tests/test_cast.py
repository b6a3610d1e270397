"""--cast: asciicast v2 files, parsed back and replayed into an emulator,
and played by the real asciinema when it is installed."""

from __future__ import annotations

import io
import json
import random
import shutil
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import pyte
import pytest
from hypothesis import given, strategies as st

from ansi2048.game.engine import Game
from ansi2048.game.keys import Action, KeyDecoder
from ansi2048.game.session import Session
from ansi2048.options.context import Context, Options
from ansi2048.play.keyboard import play_terminal
from ansi2048.records.recording import format_header, replay
from ansi2048.render.cast import HEADLESS_SIZE, REPLAY_STEP, CastWriter, as_received, cast_theme, is_ours
from ansi2048.render.frame import View, layout_for
from ansi2048.terminal.console import Console, ScreenHooks

from .conftest import run_cli
from .screen import dump, read_board, terminal
from .test_history import fill, real_game

ENV = {"ANSI2048_CONFIG": "/nonexistent/config.toml", "TERM": "xterm-256color", "SHELL": "/bin/sh"}
Size = Tuple[int, int]
KEYS = b"wasdwasdwwaassddsdsdaw"


class Clock:
    def __init__(self) -> None:
        self.now = 50.0

    def __call__(self) -> float:
        return self.now


def parse(text: str) -> Tuple[Dict[str, Any], List[List[Any]]]:
    lines = text.splitlines()
    return json.loads(lines[0]), [json.loads(line) for line in lines[1:]]


def play_cast(header: Dict[str, Any], events: List[List[Any]], newline_mode: bool = False) -> pyte.Screen:
    """The screen after the cast's events, as a player shows it: a player
    (asciinema play and cat, the web player) passes the text on as it is,
    with no ONLCR to add a CR to an LF; so the emulator runs without newline
    mode, unless ``newline_mode`` asks for a terminal's own view."""
    screen = pyte.Screen(header["width"], header["height"])
    if newline_mode:
        screen.set_mode(pyte.modes.LNM)
    stream = pyte.Stream(screen)
    for _time, kind, data in events:
        if kind == "r":
            width, height = (int(n) for n in data.split("x"))
            screen.resize(height, width)
        elif kind == "o":
            stream.feed(data)
    return screen


def final_board(header: Dict[str, Any], events: List[List[Any]], rows: int = 4, cols: int = 4) -> List[List[int]]:
    """Plays the cast's events into an emulated player; the board at the end."""
    screen = play_cast(header, events)
    view = View(((0,) * cols,) * rows, None, 0, 0, 0, 2048, 0, Session(Game()).status)
    layout = layout_for(view, screen.columns, screen.lines)
    assert layout is not None
    return read_board(screen.display, layout, rows, cols)


def assert_plays_as_shown(
    header: Dict[str, Any], events: List[List[Any]], shown: Optional[Sequence[str]] = None
) -> None:
    """A player shows exactly what the game's own terminal showed: ``shown``
    (what the game wrote, one string per "o" event; by default the events'
    own text) through a terminal's ONLCR, against the cast's events in a
    player, which has none. A bare LF in the cast fails this: each line would
    start where the one above ended."""
    if shown is None:
        shown = [data for _time, kind, data in events if kind == "o"]
    assert len(shown) == sum(1 for event in events if event[1] == "o")
    written = iter(shown)
    as_written = [[time, kind, next(written) if kind == "o" else data] for time, kind, data in events]
    game_screen = play_cast(header, as_written, newline_mode=True)
    assert dump(play_cast(header, events).display) == dump(game_screen.display)


def played(seed: int, keys: bytes) -> List[List[int]]:
    session = Session(Game(seed=seed))
    replay(session, keys)
    return [list(row) for row in session.game.board]


def test_the_writer_times_frames_from_0_rising_and_at_least_step_apart() -> None:
    clock, out, screen = Clock(), io.StringIO(), []
    writer = CastWriter(out, clock, lambda message: None, timestamp=1234, env=ENV, theme="dark")
    writer.step = 0.5
    size = [80, 24]
    write = writer.tee(screen.append, lambda: (size[0], size[1]), "a title")
    write("one")
    clock.now += 0.1  # faster than the step: the step wins
    write("two")
    clock.now += 3  # slower: the clock wins
    write("three")
    size[:] = [100, 40]
    write("four")  # pushed a step past "three"
    clock.now += 0.7  # ahead of "four" by less than a step
    size[:] = [80, 24]
    write("five")  # a step after the last frame, not after the resize before it
    header, events = parse(out.getvalue())
    assert screen == ["one", "two", "three", "four", "five"]  # the terminal still gets every frame
    assert header == {
        "version": 2,
        "width": 80,
        "height": 24,
        "timestamp": 1234,
        "idle_time_limit": 2.0,
        "title": "a title",
        "env": {"TERM": "xterm-256color", "SHELL": "/bin/sh"},
        "theme": cast_theme("dark"),
    }
    assert events == [
        [0.0, "o", "one"],
        [0.5, "o", "two"],
        [3.1, "o", "three"],
        [3.1, "r", "100x40"],
        [3.6, "o", "four"],
        [3.8, "r", "80x24"],
        [4.1, "o", "five"],
    ]


def test_as_received_adds_a_cr_to_each_bare_lf_only() -> None:
    assert as_received("") == ""
    assert as_received("a\nb") == "a\r\nb"
    assert as_received("\n\n") == "\r\n\r\n"
    assert as_received("a\r\nb\r\n") == "a\r\nb\r\n"  # already CR LF: left as it is
    assert as_received("\r\n\n\r") == "\r\n\r\n\r"


def test_the_header_theme_has_16_colours_and_the_themes_terminal() -> None:
    theme = cast_theme("high-contrast")
    assert (theme["fg"], theme["bg"]) == ("#ffffff", "#000000")
    colours = theme["palette"].split(":")
    assert len(colours) == 16 and all(len(c) == 7 and c.startswith("#") for c in colours)
    assert cast_theme("classic") != cast_theme("dark")


def test_a_failing_write_stops_the_cast_with_one_warning() -> None:
    class Full(io.StringIO):
        def write(self, text: str) -> int:
            raise OSError(28, "No space left on device")

    warnings: List[str] = []
    writer = CastWriter(Full(), Clock(), warnings.append, timestamp=0, env={})
    shown: List[str] = []
    write = writer.tee(shown.append, lambda: (80, 24))
    assert not writer.stopped
    write("a")
    assert writer.stopped  # frames drawn for the cast alone need not be drawn now
    write("b")
    assert shown == ["a", "b"]
    assert len(warnings) == 1 and "No space left" in warnings[0]


@pytest.mark.parametrize(
    ("head", "ours"),
    [
        (b"", True),
        (b"  \n", True),
        (b'{"version": 2, "width": 80, "height": 24}\n[0.1, "o", "x"]\n', True),
        (format_header(7, 4, 4, 2048, "0.1.0").encode() + b"wasd", True),
        (b"my thesis, chapter 1\n", False),
        (b'{"name": "package.json"}\n', False),
        (b"\xff\xfe binary", False),
    ],
)
def test_only_empty_files_casts_and_recordings_count_as_ours(head: bytes, ours: bool) -> None:
    assert is_ours(head) is ours


def test_a_replay_into_a_pipe_writes_a_watchable_cast(tmp_path: Path) -> None:
    cast = tmp_path / "game.cast"
    keys = format_header(7, 4, 4, 2048, "0.1.0").encode() + KEYS
    result = run_cli(["--cast", str(cast)], keys, env=ENV)
    assert result.returncode == 0, result.stderr
    assert b"score" in result.stdout  # stdout still gets the summary
    header, events = parse(cast.read_text(encoding="utf-8"))
    assert (header["width"], header["height"]) == HEADLESS_SIZE
    times = [event[0] for event in events]
    assert times[0] == 0
    # A replay read in a blink still plays at REPLAY_STEP a frame.
    assert all(later - earlier >= REPLAY_STEP - 1e-6 for earlier, later in zip(times, times[1:]))
    assert {event[1] for event in events} == {"o"}
    # The first frame, one per key, the last frame (as a terminal shows
    # it: no key offered), the cursor restored.
    assert len(events) == 1 + len(KEYS) + 1 + 1
    assert "end of replay" in events[-2][2]
    assert final_board(header, events) == played(7, KEYS)
    assert_plays_as_shown(header, events)


def test_delay_paces_the_cast(tmp_path: Path) -> None:
    cast = tmp_path / "game.cast"
    keys = format_header(7, 4, 4, 2048, "0.1.0").encode() + b"wasd"
    result = run_cli(["--cast", str(cast), "--delay", "0.01"], keys, env=ENV)
    assert result.returncode == 0, result.stderr
    _header, events = parse(cast.read_text(encoding="utf-8"))
    times = [event[0] for event in events]
    assert all(later - earlier >= 0.01 - 1e-6 for earlier, later in zip(times, times[1:]))
    assert times[-1] < len(times) * REPLAY_STEP  # the delay, not the default step


def test_delay_zero_is_no_pace_at_all(tmp_path: Path) -> None:
    """--delay 0 asks for no pause between keys: the cast keeps the time the
    replay really took (a blink), its frames closer than a viewer sees
    coalesced, instead of the default 0.15 s a key."""
    cast = tmp_path / "game.cast"
    keys = format_header(7, 4, 4, 2048, "0.1.0").encode() + b"wasd" * 50
    result = run_cli(["--cast", str(cast), "--delay", "0"], keys, env=ENV)
    assert result.returncode == 0, result.stderr
    _header, events = parse(cast.read_text(encoding="utf-8"))
    assert events[-1][0] < 200 * REPLAY_STEP / 4  # 30 s at the default step
    assert len(events) < 200  # coalesced: fewer frames than keys
    assert "end of replay" in events[-2][2]


def test_an_existing_file_that_is_not_a_cast_is_not_overwritten(tmp_path: Path) -> None:
    precious = tmp_path / "notes.txt"
    precious.write_text("do not lose me\n", encoding="utf-8")
    result = run_cli(["--cast", str(precious)], b"wasd", env=ENV)
    assert result.returncode == 2
    assert len(result.stderr.splitlines()) == 1
    assert b"--cast" in result.stderr and b"not overwriting" in result.stderr
    assert precious.read_text(encoding="utf-8") == "do not lose me\n"
    assert result.stdout == b""


def test_an_old_cast_or_an_empty_file_is_overwritten(tmp_path: Path) -> None:
    cast = tmp_path / "game.cast"
    cast.write_text('{"version": 2, "width": 10, "height": 5}\n[0.5, "o", "old"]\n', encoding="utf-8")
    assert run_cli(["--seed", "1", "--cast", str(cast)], b"w", env=ENV).returncode == 0
    assert parse(cast.read_text(encoding="utf-8"))[0]["width"] == HEADLESS_SIZE[0]
    cast.write_text("", encoding="utf-8")
    assert run_cli(["--seed", "1", "--cast", str(cast)], b"w", env=ENV).returncode == 0
    assert cast.read_text(encoding="utf-8").startswith('{"version": 2')


def test_the_cast_cannot_be_the_record_file(tmp_path: Path) -> None:
    path = tmp_path / "same"
    result = run_cli(["--cast", str(path), "--record", str(path)], b"w", env=ENV)
    assert result.returncode == 2 and b"--record" in result.stderr


def test_interactive_play_is_cast_with_real_time_and_resizes(tmp_path: Path) -> None:
    clock, out = Clock(), io.StringIO()
    writer = CastWriter(out, clock, lambda message: None, timestamp=0, env=ENV)
    size = [80, 30]
    batches = [b"w", b"a", b"s", b"d", b"q"]
    shown: List[str] = []

    def read_actions(decoder: KeyDecoder) -> List[Action]:
        clock.now += 0.01  # quick fingers: real time is kept, no synthetic step
        if len(batches) == 2:
            size[:] = [90, 32]  # the window grows before the last move
        return decoder.feed(batches.pop(0))

    def console(stdin: Any, stdout: Any, hooks: ScreenHooks) -> Any:
        from contextlib import nullcontext

        return nullcontext(Console(read_actions, shown.append, lambda: (size[0], size[1]), legacy=False))

    ctx = Context(
        options=Options(seed=5),
        stdin=io.StringIO(),
        stdout=io.StringIO(),
        env={**ENV, "ANSI2048_DATA_DIR": str(tmp_path)},
        warn=lambda message: None,
        random_seed=lambda: 0,
        clock=clock,
        cast=writer,
    )
    assert play_terminal(ctx, console) == 0
    header, events = parse(out.getvalue())
    assert header["title"] == "ansi2048 4x4 seed 5"
    # Exactly what the screen got, as the terminal received it (CR LF).
    assert [event[2] for event in events if event[1] == "o"] == [as_received(text) for text in shown]
    assert_plays_as_shown(header, events, shown)
    assert ["r", "90x32"] in [event[1:] for event in events]
    times = [event[0] for event in events]
    assert times == sorted(times) and times[0] == 0
    assert times[1] == pytest.approx(0.01)
    assert final_board(header, events) == played(5, b"wasd")


def test_replay_best_writes_a_cast_that_plays_as_the_game_showed(data_home: Path) -> None:
    game = real_game(3, KEYS)
    fill(data_home, [game])
    cast = data_home.parent / "best.cast"
    result = run_cli(["--replay-best", "1", "--cast", str(cast)], env={**ENV, "ANSI2048_DATA_DIR": str(data_home)})
    assert result.returncode == 0, result.stderr
    header, events = parse(cast.read_text(encoding="utf-8"))
    assert final_board(header, events) == played(3, KEYS)
    assert_plays_as_shown(header, events)


@pytest.mark.parametrize("term", ["xterm-256color", "dumb"])
def test_a_piped_game_cast_plays_as_shown_whatever_the_term(tmp_path: Path, term: str) -> None:
    cast = tmp_path / "game.cast"
    result = run_cli(["--seed", "4", "--cast", str(cast)], KEYS, env={**ENV, "TERM": term})
    assert result.returncode == 0, result.stderr
    header, events = parse(cast.read_text(encoding="utf-8"))
    assert_plays_as_shown(header, events)
    if term != "dumb":  # frames follow each other down the screen there
        assert final_board(header, events) == played(4, KEYS)


@pytest.mark.posix("a pty")
@pytest.mark.skipif(shutil.which("asciinema") is None, reason="asciinema is not installed")
def test_asciinema_cat_reproduces_the_final_board(tmp_path: Path) -> None:
    from .ptys import spawn

    cast = tmp_path / "game.cast"
    keys = format_header(9, 4, 4, 2048, "0.1.0").encode() + KEYS
    assert run_cli(["--cast", str(cast)], keys, env=ENV).returncode == 0
    header, _events = parse(cast.read_text(encoding="utf-8"))
    # asciinema cat wants a terminal (it reads /dev/tty): give it a pty.
    child = spawn("asciinema", ["cat", str(cast)], dimensions=(header["height"], header["width"]))
    output = child.read()
    child.close()
    assert child.exitstatus == 0, output
    screen, _stream = terminal(header["width"], header["height"])
    import pyte

    pyte.ByteStream(screen).feed(output)
    layout = layout_for(View(((0,) * 4,) * 4, None, 0, 0, 0, 2048, 0, Session(Game()).status), *HEADLESS_SIZE)
    assert layout is not None
    assert read_board(screen.display, layout, 4, 4) == played(9, KEYS)


@given(
    step=st.sampled_from([0.0, 0.05, 0.5]),
    script=st.lists(
        st.tuples(st.floats(0, 1), st.sampled_from([(80, 24), (100, 40), (20, 5), (1, 1)])), min_size=1, max_size=30
    ),
)
def test_event_times_never_go_back_whatever_the_resizes(step: float, script: List[Tuple[float, Size]]) -> None:
    """Frames pushed ahead of the clock by ``step`` (a replay) with resizes in
    between: every event, "r" included, is at or after the one before, and a
    frame is ``step`` after the last frame (the mutation check's survivor:
    a resize event timed by the clock alone went back in time)."""
    clock, out = Clock(), io.StringIO()
    writer = CastWriter(out, clock, lambda message: None, timestamp=0, env={})
    writer.step = step
    size = [80, 24]
    write = writer.tee(lambda text: None, lambda: (size[0], size[1]))
    for advance, new_size in script:
        clock.now += advance
        size[:] = new_size
        write("frame")
    _header, events = parse(out.getvalue())
    times = [event[0] for event in events]
    assert times == sorted(times), events
    frames = [event[0] for event in events if event[1] == "o"]
    assert all(later - earlier >= step - 1e-6 for earlier, later in zip(frames, frames[1:]))
    # Each resize comes just before its frame.
    for index, event in enumerate(events):
        if event[1] == "r":
            assert events[index + 1][1] == "o" and events[index + 1][0] >= event[0]


def test_once_the_cast_a_replay_draws_for_stops_no_frame_is_drawn_and_the_game_is_the_same() -> None:
    from ansi2048.loop.state import Play, Settings
    from ansi2048.play.performer import BestWriter, NoStore, Performer
    from ansi2048.play.piped import PipedDriver
    from ansi2048.play.screen import Screen
    from ansi2048.records.recording import Recorder
    from ansi2048.render.style import ColorDepth

    keys = KeyDecoder().feed(b"wasd" * 50)

    def played(stop_after: Optional[int]) -> Tuple[Session, int]:
        frames: List[str] = []
        session = Session(Game(seed=3), keep_keys=False)
        screen = Screen(frames.append, lambda: HEADLESS_SIZE, ColorDepth.NONE, {})
        store = NoStore()
        performer = Performer(screen, store, Recorder(None, pytest.fail), BestWriter(store.record_best, lambda: 0.0, 0))
        play = Play(session, Settings(animate=False, can_wait=False, replay=True), HEADLESS_SIZE, saving=False)

        def unwatched() -> bool:  # as CastWriter.stopped once its reader stalled
            return stop_after is not None and len(frames) >= stop_after

        driver = PipedDriver(play, performer, lambda: 0.0, lambda seconds: None, 0.0, unwatched)
        driver.start()
        driver.keys(keys, True)
        driver.end()
        return driver.play.session, len(frames)

    watched, all_frames = played(None)
    assert all_frames > 150  # a frame a key while the cast is written
    stopped, frames = played(10)
    assert frames == 10  # not one frame after the cast stopped
    assert (stopped.game.score, stopped.game.moves, stopped.game.cells) == (
        watched.game.score,
        watched.game.moves,
        watched.game.cells,
    )


def test_frames_closer_together_than_a_viewer_sees_are_coalesced_and_their_time_still_passes() -> None:
    clock, out = Clock(), io.StringIO()
    writer = CastWriter(out, clock, lambda message: None, timestamp=0, env={})
    writer.step = 0.01  # --delay 0.01: a hundred frames a second, three in four never seen at 30
    write = writer.tee(lambda text: None, lambda: (80, 24))
    assert writer.coalesced(clock.now, 5) == 0  # nothing before the first frame
    write("first")
    # Frames at 0.01, 0.02 and 0.03 would be on screen less than 1/30 s after
    # the one at 0; the one at 0.04 is the first a viewer sees.
    assert writer.coalesced(clock.now, 10) == 3
    write("at 0.04")
    assert writer.coalesced(clock.now, 2) == 2  # 0.05, 0.06: all asked about, all unseen
    assert writer.coalesced(clock.now, 10) == 1  # 0.07 (0.0733 is the next seen)
    write("at 0.08")
    clock.now += 5.0  # the input paused: the clock is past any pace
    assert writer.coalesced(clock.now, 10) == 0
    write("at 5")
    writer.step = REPLAY_STEP  # frames 0.15 s apart are all seen
    assert writer.coalesced(clock.now, 10) == 0
    _header, events = parse(out.getvalue())
    assert events == [[0.0, "o", "first"], [0.04, "o", "at 0.04"], [0.08, "o", "at 0.08"], [5.0, "o", "at 5"]]


def _cast_of_replay(keys: bytes, coalesce: bool) -> Tuple[Dict[str, Any], List[List[Any]], Session]:
    """A piped replay of ``keys`` on seed 3 at --delay 0.01, drawn for its cast
    alone, as play_piped drives it, on a clock that never moves (the keys
    come in one read, faster than any pace); its frames coalesced or not."""
    from ansi2048.loop.state import Play, Settings
    from ansi2048.play.performer import BestWriter, NoStore, Performer
    from ansi2048.play.piped import PipedDriver
    from ansi2048.play.screen import Screen
    from ansi2048.records.recording import Recorder
    from ansi2048.render.style import ColorDepth

    clock, out = Clock(), io.StringIO()
    writer = CastWriter(out, clock, pytest.fail, timestamp=0, env={})
    writer.step = 0.01
    session = Session(Game(seed=3), keep_keys=False)
    screen = Screen(
        writer.tee(lambda text: None, lambda: HEADLESS_SIZE), lambda: HEADLESS_SIZE, ColorDepth.EXTENDED, {}
    )
    store = NoStore()
    performer = Performer(screen, store, Recorder(None, pytest.fail), BestWriter(store.record_best, clock, 0))
    play = Play(session, Settings(animate=False, can_wait=False, replay=True), HEADLESS_SIZE, saving=False)
    unseen = writer.coalesced if coalesce else (lambda now, count: 0)
    driver = PipedDriver(play, performer, clock, lambda seconds: None, 0.0, unseen=unseen)
    driver.start()
    driver.keys(KeyDecoder().feed(keys), True)
    driver.end()
    screen.close()
    header, events = parse(out.getvalue())
    return header, events, driver.play.session


def test_a_replay_cast_paced_faster_than_a_viewer_sees_keeps_the_frames_seen_each_as_it_was() -> None:
    header, every, whole = _cast_of_replay(KEYS, coalesce=False)
    header, kept, session = _cast_of_replay(KEYS, coalesce=True)
    # The first frame at 0, then 22 keys at 0.01 s each: a frame every fourth
    # key (1/30 s after the last one written), the last key's (the end of
    # what was read, drawn whatever the pace), the last frame ("end of
    # replay") and the cursor put back, each still 0.01 s after the frame before.
    assert [event[0] for event in kept] == [0.0, 0.04, 0.08, 0.12, 0.16, 0.2, 0.22, 0.23, 0.24]
    assert [event[0] for event in every] == [round(0.01 * n, 6) for n in range(25)]
    assert {event[1] for event in kept} == {"o"}
    # Each kept frame leaves the viewer's screen as the uncoalesced cast does at that moment.
    for at in [event[0] for event in kept]:
        assert dump(play_cast(header, [e for e in kept if e[0] <= at]).display) == dump(
            play_cast(header, [e for e in every if e[0] <= at]).display
        ), at
    assert "end of replay" in kept[-2][2]
    assert final_board(header, kept) == played(3, KEYS) == [list(row) for row in session.game.board]
    assert (session.game.score, session.game.moves) == (whole.game.score, whole.game.moves)


def test_a_q_among_the_keys_no_viewer_sees_still_ends_the_cast_on_its_last_frame() -> None:
    header, kept, session = _cast_of_replay(KEYS[:10] + b"q" + KEYS, coalesce=True)
    # 0, 0.04, 0.08, then q, the 11th key, 0.11 s in, among keys no viewer
    # sees: its frame, the last, is drawn at its time, and the cursor put back.
    assert [event[0] for event in kept] == [0.0, 0.04, 0.08, 0.11, 0.12]
    assert "end of replay" in kept[-2][2]
    assert final_board(header, kept) == played(3, KEYS[:10]) == [list(row) for row in session.game.board]


def test_a_replay_cast_at_a_millisecond_a_key_plays_to_the_final_board(tmp_path: Path) -> None:
    cast = tmp_path / "game.cast"
    keys = bytes(random.Random(5).choice(b"wasd") for _ in range(2000))
    result = run_cli(
        ["--cast", str(cast), "--delay", "0.001"], format_header(7, 4, 4, 2048, "0.1.0").encode() + keys, env=ENV
    )
    assert result.returncode == 0, result.stderr
    header, events = parse(cast.read_text(encoding="utf-8"))
    assert header["version"] == 2 and (header["width"], header["height"]) == HEADLESS_SIZE
    times = [event[0] for event in events]
    assert times == sorted(times)
    # 2 s of cast at 1/30 s a frame seen: some 60 frames, not 2,000 (the pipe
    # may cut the keys into a few reads, each read's last key drawn).
    assert 55 <= len(events) <= 120
    assert times[-1] >= 2.0
    assert "end of replay" in events[-2][2]
    assert final_board(header, events) == played(7, keys)
    assert_plays_as_shown(header, events)
