"""The help screen on '?', and the short key line that offers it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ansi2048.game.engine import Game
from ansi2048.game.keys import Action
from ansi2048.game.session import Status
from ansi2048.render.frame import LARGE, View, frame_lines, layout_for
from ansi2048.render.help import help_lines
from ansi2048.render.style import ColorDepth

from .conftest import json_lines, run_cli
from .screen import emulate, read_board
from .test_animation import run, screens

VIEW = View(Game(seed=1).board, None, 0, 0, 0, 2048, 1, Status.PLAYING)


def test_question_mark_shows_help_and_any_key_closes_it_unplayed(tmp_path: Path) -> None:
    console = run(tmp_path, [(1.0, b"?"), (2.0, b"a"), (3.0, b"q")], animation=False)
    shown = screens(console)
    helped = [display for time, display in shown if 101.0 <= time < 102.0]
    assert helped and any("any key closes this help" in line for line in helped[-1])
    assert any("undo" in line for line in helped[-1]) and any("Make the 2048 tile" in line for line in helped[-1])
    # The key that closed it was not played: the board is the starting one.
    after = [display for time, display in shown if 102.0 <= time < 103.0][-1]
    assert not any("closes this help" in line for line in after)
    assert read_board(after, LARGE, 4, 4) == [list(row) for row in Game(seed=21).board]


def test_help_fits_any_terminal_and_always_says_how_to_close() -> None:
    for width, height in [(80, 30), (60, 20), (40, 10), (20, 4), (10, 3)]:
        for depth in ColorDepth:
            lines = help_lines(VIEW, depth, width, height)
            screen = emulate("\n".join(lines).encode(), width, height)
            assert len(lines) <= height - 1
            text = "\n".join(screen.display)
            assert "any key closes" in text or width < 25, (width, height)
            wide = emulate("\n".join(help_lines(VIEW, depth, 200, 60)).encode(), 200, 60)
            words = set(" ".join(wide.display).split())
            assert set(text.split()) <= words, (width, height, text)  # no word cut in two
    assert len(help_lines(VIEW, ColorDepth.NONE, 80, 30)) > 15  # room: every section


def test_the_key_line_offers_help() -> None:
    view = View(Game(seed=1).board, None, 0, 0, 0, 2048, 1, Status.PLAYING)
    for width in (100, 60, 45, 30):
        keys = frame_lines(view, ColorDepth.NONE, width, 40)[-1]
        assert "? help" in keys or width < 30, (width, keys)


def test_piped_keys_never_open_help() -> None:
    events = json_lines(run_cli(["--json", "--seed", "5"], b"?a?").stdout)
    assert [event["action"] for event in events] == ["start", "left"]


def _key_line(view: View, width: int = 120) -> str:
    return frame_lines(view, ColorDepth.NONE, width, 40)[-1]


def _help(view: View, width: int = 100, height: int = 60) -> str:
    return "\n".join(help_lines(view, ColorDepth.NONE, width, height))


def test_help_lists_every_key_the_game_takes() -> None:
    text = _help(replace(VIEW, suspends=True))  # a POSIX terminal's game
    expected = [("t", "hint"), ("p", "autoplay"), ("+ -", "faster (+, =), slower (-)"), ("?", "this help")]
    expected.append(("Ctrl-Z", "suspend"))
    for key, what in expected:
        assert any(line.lstrip().startswith(key) and what in line for line in text.splitlines()), (key, text)
    assert "q, Ctrl-C" in text and "wasd hjkl" in text


def test_help_offers_ctrl_z_only_where_it_suspends_and_says_a_guests_game_is_not_kept() -> None:
    # The Windows console and SSH have no shell to suspend to.
    assert "Ctrl-Z" not in _help(VIEW) and "suspend" not in _help(VIEW)
    assert "quit: the game is kept for next time" in _help(VIEW)
    guest = _help(replace(VIEW, guest=True))
    assert "quit: a guest's game is not kept" in guest and "kept for next time" not in guest


def test_the_marks_are_the_ones_the_board_in_this_window_draws() -> None:
    # Tall tiles (BIG and up) outlines the new tile; one-line layouts bracket it.
    assert "outline" in _help(VIEW, 100, 60) and "[N]" not in _help(VIEW, 100, 60)
    assert "[N]" in _help(VIEW, 40, 60) and "outline" not in _help(VIEW, 40, 60)


def test_whatever_the_key_line_drops_at_60_columns_the_help_lists() -> None:
    full = _key_line(VIEW, 200)
    short = _key_line(VIEW, 60)
    assert "? help" in short
    dropped = [item for item in full.split(" - ") if item not in short]
    assert dropped  # the AI's keys do not fit
    text = _help(VIEW)
    for item in dropped:
        key, _, word = item.partition(" ")
        assert any(line.lstrip().startswith(key) and word in line for line in text.splitlines()), item


def test_no_undo_is_not_offered_and_the_help_says_it_is_off() -> None:
    view = replace(VIEW, undo=False)
    for width in (200, 80, 60, 45, 35):
        assert "undo" not in _key_line(view, width), width
    assert "off in this game (--no-undo)" in _help(view)
    assert "u undo" in _key_line(VIEW, 80)


def test_config_keys_show_and_taken_over_keys_do_not() -> None:
    # up on i (j, k, l keep vim's), undo taken over by 'r' for up too: r is up now.
    view = replace(VIEW, bindings=(("i", Action.UP), ("n", Action.RESTART), ("u", Action.LEFT)))
    line = _key_line(view, 200)
    assert "i up" in line and "u left" in line and "r new game" in line
    assert "u undo" not in line  # u is left's now: nothing undoes
    text = _help(view)
    assert "slide up" in text and "i " in text
    assert any(line.lstrip().startswith("r, n") and "new game" in line for line in text.splitlines()), text
    assert "undo (" not in text


def test_tiny_windows_never_cut_a_word() -> None:
    view = replace(VIEW, note="a rather long warning about the history file that was set aside")
    words = set()
    for width in range(2, 60):
        for height in range(2, 30):
            for line in frame_lines(view, ColorDepth.NONE, width, height):
                words |= set(line.split())
    allowed = {"terminal", "too", "small:", "need", "have"}
    for width in range(30, 300):
        allowed |= set(" ".join(frame_lines(view, ColorDepth.NONE, width, 60)).split())
    strange = {word for word in words if word not in allowed and not any(c.isdigit() for c in word)}
    assert not strange, strange


def test_the_size_asked_for_does_not_change_at_the_first_key() -> None:
    greeted = replace(VIEW, note="resumed your game: 3 moves")
    for width, height in [(29, 20), (40, 12), (30, 9), (12, 5)]:
        asked = frame_lines(VIEW, ColorDepth.NONE, width, height)
        assert frame_lines(greeted, ColorDepth.NONE, width, height) == asked or "Score" in " ".join(asked)
    for height in range(5, 40):
        first = layout_for(greeted, 80, height)
        later = layout_for(VIEW, 80, height)
        assert first == later, height


def test_the_keyboard_game_shows_the_configs_keys_and_no_undo(tmp_path: Path) -> None:
    """Through the real loop and Screen: the config's bindings and
    --no-undo reach the key line and the help."""
    bound = run(tmp_path, [(1.0, b"?"), (2.0, b"x"), (3.0, b"q")], animation=False, bindings=((b"i", Action.UP),))
    shown = screens(bound)
    first = shown[0][1]
    assert any("i up" in line for line in first), "\n".join(first)
    helped = [display for time, display in shown if 101.0 <= time < 102.0][-1]
    assert any(line.lstrip().startswith("i ") and "slide up" in line for line in helped), "\n".join(helped)
    hard = run(tmp_path / "hard", [(1.0, b"?"), (2.0, b"x"), (3.0, b"q")], animation=False, no_undo=True)
    shown = screens(hard)
    assert not any("u undo" in line for line in shown[0][1]), "\n".join(shown[0][1])
    helped = [display for time, display in shown if 101.0 <= time < 102.0][-1]
    assert any("off in this game (--no-undo)" in line for line in helped), "\n".join(helped)


def test_help_reflows_to_the_window_and_always_says_how_to_quit() -> None:
    """Issue 30, item 3: at 40x12 the help cut descriptions mid-phrase and
    lost the q line. Descriptions wrap whole; quitting and closing always show."""
    full = _help(VIEW, 200, 60)
    for width, height in [(40, 12), (30, 10), (50, 14), (60, 20), (80, 30), (26, 8)]:
        lines = help_lines(VIEW, ColorDepth.NONE, width, height)
        assert len(lines) <= height - 1 and all(len(line) < width for line in lines)
        text = "\n".join(lines)
        assert "q, Ctrl-C" in text and "any key closes this help" in text, (width, height, text)
        flowing = " ".join(text.split())
        # Every description shown is shown whole (words wrapped, never dropped).
        for line in full.splitlines():
            if line.startswith("  ") and "  " in line.strip():
                key, _, what = line.strip().partition("   ")
                if any(shown.startswith(f"  {key} ") or shown == f"  {key}" for shown in lines):
                    assert " ".join(what.split()) in flowing, (width, height, key, text)


def test_in_the_daily_game_r_is_said_to_restart_the_day_not_to_start_a_new_game() -> None:
    daily = replace(VIEW, day="2026-11-26")
    for width in (200, 80, 60):
        line = _key_line(daily, width)
        assert "new" not in line, (width, line)
        assert "r restart" in line, (width, line)
    assert "r restart day" in _key_line(daily, 200)
    text = _help(daily)
    assert "new game" not in text
    assert "the day's game again, from its start (undo brings the old one back)" in text
    assert "the day's game again, from its start" in _help(replace(daily, undo=False))
    assert "(undo brings" not in _help(replace(daily, undo=False))
    assert "r new game" in _key_line(VIEW, 200)  # any other game: a new one


def test_in_a_ranked_daily_game_r_is_said_to_end_it() -> None:
    ranked = replace(VIEW, day="2026-11-26", undo=False, ranked=True)
    line = _key_line(ranked, 200)
    assert "r end ranked" in line and "new" not in line and "restart" not in line
    assert "end the ranked game (asked first; its score counts)" in _help(ranked)
    # Narrow windows drop other items before the key's words: "r end" alone
    # would read as quitting.
    for width in range(len("r end ranked") + 1, 80):
        line = _key_line(ranked, width)
        assert "r end" not in line or "r end ranked" in line, (width, line)


def test_the_loop_views_the_days_game_as_the_day_and_another_seed_as_a_new_game() -> None:
    from ansi2048.game.session import Session
    from ansi2048.loop.state import Play, Settings, view

    settings = Settings(animate=False, can_wait=True, day="2026-11-26", day_seed=99)
    day = Play(Session(Game(seed=99)), settings, (80, 24))
    assert view(day).restart.name == "DAY"
    other = Play(Session(Game(seed=5)), settings, (80, 24))
    assert view(other).restart.name == "NEW"
    ranked = Play(Session(Game(seed=99)), replace(settings, ranked=True), (80, 24))
    assert view(ranked).restart.name == "END"


def test_no_window_ends_a_section_at_its_heading() -> None:
    """A heading is shown only with something under it (issue 40, item 13:
    at 60x20 the help ended on a bare ``rules``)."""
    headings = {"keys", "rules", "marks"}
    for width in range(20, 121, 4):
        for height in range(4, 41):
            lines = [line.rstrip() for line in help_lines(VIEW, ColorDepth.NONE, width, height)]
            for index, line in enumerate(lines):
                if line in headings:
                    after = lines[index + 1] if index + 1 < len(lines) else ""
                    assert after.startswith("  "), (width, height, lines)


def test_the_autoplay_speed_keys_read_as_faster_and_slower() -> None:
    """One key of each in the key column, each named with what it does."""
    rows = [line.split() for line in _help(VIEW).splitlines() if "autoplay faster" in line]
    assert rows == [["+", "-", "autoplay", "faster", "(+,", "=),", "slower", "(-)"]], rows
