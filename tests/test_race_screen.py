"""A race's screens (ansi2048/render/race.py) and its keys: plain string
checks at several window sizes, tiny ones too."""

from __future__ import annotations

from typing import List, Tuple

import pytest

from ansi2048.game.keys import Action, KeyDecoder
from ansi2048.game.race import Progress, RaceSettings, race_actions
from ansi2048.render.codes import visible_width
from ansi2048.render.race import (
    Placed,
    Racer,
    RaceScreen,
    countdown_lines,
    expired_line,
    lobby_lines,
    race_lines,
    result_lines,
)
from ansi2048.render.style import ColorDepth
from ansi2048.render.themes import THEMES

CELLS = (2, 0, 4, 8, 0, 2048, 0, 0, 16, 0, 0, 2, 0, 0, 0, 131072)
OTHER = (4, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 32)
NAMES = ("bob", "cy", "dee", "eve", "fay", "gus", "hal")


def _screen(opponents: int = 1) -> RaceScreen:
    others = tuple(Racer(name, 100 + i, 32, 7 + i, OTHER) for i, name in enumerate(NAMES[:opponents]))
    return RaceScreen(4, 4, 2048, Racer("ann", 4321, 2048, 99, CELLS), others, 61.5)


def _lines(screen: RaceScreen, width: int, height: int, depth: ColorDepth = ColorDepth.NONE) -> List[str]:
    lines = race_lines(screen, width, height, depth, THEMES["classic"]())
    assert len(lines) <= height
    assert all(visible_width(line) <= width for line in lines), lines
    return lines


def test_a_wide_window_shows_each_opponent_beside_the_board_with_their_board_in_miniature() -> None:
    lines = _lines(_screen(1), 100, 30)
    text = "\n".join(lines)
    assert lines[0] == "Race to 2048 · 4x4 · 1:02 left"
    assert "ann (you)  score 4321  tile 2048  moves 99" in text
    board_top = next(i for i, line in enumerate(lines) if line.startswith("+"))
    # bob's card on the board's first lines, to its right: name, numbers, his board's rows.
    assert lines[board_top].endswith("bob")
    assert lines[board_top + 1].endswith("score 100  tile 32  moves 7")
    assert lines[board_top + 2].endswith("    4    4    .    .")
    assert lines[board_top + 5].endswith("    .    .    .   32")
    assert "131072" in lines[board_top + 7]  # the own board at its full size
    assert lines[-1] == "arrows/wasd/hjkl move · q leaves · no undo, hint or autoplay in a race"


def test_a_narrow_tall_window_puts_the_opponents_below_the_board() -> None:
    lines = _lines(_screen(2), 60, 40)
    board_end = max(i for i, line in enumerate(lines) if line.startswith("+"))
    below = lines[board_end + 1 :]
    assert any(line.startswith("bob") for line in below) and any("cy" in line for line in below)
    board_top = next(i for i, line in enumerate(lines) if line.startswith("+"))
    assert all(len(line) <= 40 for line in lines[board_top : board_end + 1])  # nothing beside the board


def test_eight_players_fit_an_80x24_window_as_a_line_each_beside_the_board() -> None:
    lines = _lines(_screen(7), 80, 24)
    board_top = next(i for i, line in enumerate(lines) if line.startswith("+"))
    for i, name in enumerate(NAMES):
        assert lines[board_top + i].endswith(f"   {name}  score {100 + i}  tile 32  moves {7 + i}")
    assert "q leaves" in lines[-1]


@pytest.mark.parametrize(
    "width,height,header,mine",
    [
        (40, 12, "Race to 2048 · 4x4 · 1:02 left", "ann (you)  4321 · tile 2048 · 99 moves"),
        (30, 8, "Race to 2048 · 4x4 · 1:02 left", "ann (you)  4321 · tile 2048"),
        (20, 5, "Race · 1:02 left", "ann (you)  4321"),
        (12, 3, "1:02 left", "ann (you)"),
        (5, 2, "1:02", "ann ~"),
        (1, 1, "1", None),
    ],
)
def test_small_windows_keep_within_the_window_showing_the_clock_and_numbers_first(
    width: int, height: int, header: str, mine: str
) -> None:
    # The clock is the last of the header to go, the numbers go in fewer words, never cut mid-word.
    lines = _lines(_screen(3), width, height)
    assert lines[0] == header
    assert lines[1:2] == ([mine] if mine else [])


def test_a_small_window_keeps_the_own_board_in_miniature_everyone_and_the_keys() -> None:
    lines = _lines(_screen(3), 50, 12)  # the full board does not fit with a line for each opponent
    assert lines[1] == "ann (you)  score 4321  tile 2048  moves 99"
    assert lines[2:6] == [
        "    2    .    4    8",
        "    . 2048    .    .",
        "   16    .    .    2",
        "    .    .    . 2^17",
    ]
    assert [line.split()[0] for line in lines[7:10]] == ["bob", "cy", "dee"]
    assert lines[-1] == "arrows move · q leaves · no undo/hint/autoplay"
    lines = _lines(_screen(3), 40, 12)  # narrower: every player's numbers in the same fewer words
    assert lines[7:10] == [
        "bob  100 · tile 32 · 7 moves",
        "cy  101 · tile 32 · 8 moves",
        "dee  102 · tile 32 · 9 moves",
    ]
    assert lines[-1] == "q leaves · no undo, hint or autoplay"
    assert [line.split()[0] for line in _lines(_screen(7), 40, 12)[2:9]] == list(NAMES)  # no room: numbers alone


@pytest.mark.parametrize("width,height", [(40, 12), (20, 10)])
def test_every_screen_breaks_between_whole_words_in_a_narrow_window(width: int, height: int) -> None:
    settings, names = RaceSettings(4, 4, 2048, 3, 5), ("alice", "bob", "carol")
    placed = [
        Placed(1, Progress("alice", 120, 16, 14), True),
        Placed(2, Progress("bob", 88, 8, 12), True),
        Placed(0, Progress("carol", 4, 4, 2, left=True), False),
    ]
    screens = {
        "lobby": lobby_lines(settings, names[:2], 1, 600, width, height),
        "countdown": countdown_lines(settings, names, 3, width, height),
        "race": _lines(_screen(2), width, height),
        "result": result_lines(placed, "alice", "time is up", width, height, "kept as r12: races lists it"),
    }
    for name, lines in screens.items():
        assert len(lines) <= height and all(len(line) <= width for line in lines), (name, lines)
        assert not any("~" in line for line in lines), (name, lines)  # nothing cut mid-word
    assert screens["lobby"][-1] == "q leaves the lobby" and screens["countdown"][-1].startswith("q leaves")
    said = " ".join(" ".join(screens["lobby"][:-1]).split())  # the words, whatever the breaks
    assert said == (
        "Race to 2048 on 4x4, 3 players, 5 min In the lobby: alice, bob"
        " waiting for 1 more player (the lobby closes in 10:00 if nobody comes)"
    )
    result = screens["result"]
    assert " ".join(result[:2]).startswith("Race over (time is up): alice wins")
    assert next(line for line in result if line[:2] in ("1.", "2.", "- ")).startswith("1. alice  120")
    assert any(line.startswith("- carol (left)  4") for line in result)


def test_in_colour_the_own_board_is_painted_and_the_lines_still_fit() -> None:
    lines = _lines(_screen(2), 90, 30, ColorDepth.TRUE)
    assert any("\x1b[" in line for line in lines)


def test_a_dropped_or_leaving_opponent_is_marked() -> None:
    screen = _screen(2)
    others = (Racer("bob", away=True), Racer("cy", left=True), Racer("dee", stuck=True))
    away = RaceScreen(4, 4, 2048, screen.me, others, 10)
    text = "\n".join(_lines(away, 120, 40))
    assert "bob (away)" in text and "cy (left)" in text and "dee (no moves)" in text


def test_the_lobby_says_who_is_there_and_how_many_are_awaited() -> None:
    lines = lobby_lines(RaceSettings(3, 3, 64, 3, 5), ("ann", "bob"), 1, 599.2, 80, 24)
    assert lines[0] == "Race to 64 on 3x3, 3 players, 5 min"
    assert lines[1] == "In the lobby: ann, bob"
    assert lines[2].startswith("waiting for 1 more player (the lobby closes in 10:00")
    assert lines[-1] == "q leaves the lobby"
    assert all(len(line) <= 12 for line in lobby_lines(RaceSettings(), ("ann",), 2, 5, 12, 3))


def test_the_countdown_and_the_expired_lobby() -> None:
    lines = countdown_lines(RaceSettings(), ("ann", "bob"), 2.2, 80, 24)
    assert "Racing: ann, bob" in lines and "Starting in 3..." in lines
    assert "no undo, hint or autoplay" in lines[-1]
    assert expired_line(10) == "Nobody else came in 10 minutes: the lobby is closed."


def test_the_result_table_ranks_the_verified_and_marks_a_mismatch() -> None:
    placed = [
        Placed(1, Progress("bob", 300, 64, 40, reached=5.0), True),
        Placed(2, Progress("ann", 500, 32, 50, left=True), True),
        Placed(0, Progress("cy", 900, 32, 60), False),
    ]
    lines = result_lines(placed, "bob", "bob reached 64", 80, 24)
    assert lines[0] == "Race over (bob reached 64): bob wins"
    assert lines[2].split() == ["1", "bob", "300", "64", "40"]
    assert lines[3].split() == ["2", "ann", "500", "32", "50", "(left)"]
    assert lines[4].split()[:5] == ["-", "cy", "900", "32", "60"] and "not ranked" in lines[4]
    assert result_lines([], None, "time", 80, 24)[0] == "Race over (time): no winner"


def test_a_race_plays_moves_and_quit_only() -> None:
    decoded = KeyDecoder(comments=False).feed(b"wasd\x1b[Aurtp?q")
    assert race_actions(decoded) == [
        Action.UP,
        Action.LEFT,
        Action.DOWN,
        Action.RIGHT,
        Action.UP,
        Action.QUIT,
    ]


def test_a_miniature_labels_a_tile_too_long_for_its_cell_as_the_board_does() -> None:
    from ansi2048.render.race import mini_board

    assert mini_board((131072, 0, 2, 1024), 2, 2) == [" 2^17    .", "    2 1024"]


# -- the hall (serve/race_hall.py) on an event loop of its own, without a socket -------


class _Host:
    """What the hall needs of a server: a clock the test sets, a log, a store that keeps nothing."""

    daily_secret = b"secret"

    def __init__(self) -> None:
        self.clock = 1_800_000_000.0
        self.lines: List[str] = []
        self.stored: List[object] = []
        self.store = self

    def now(self) -> float:
        return self.clock

    def random_seed(self) -> int:
        return 99

    def log(self, line: str) -> None:
        self.lines.append(line)

    async def run_script(self, script: List[object]) -> List[List[Tuple[int]]]:
        self.stored.append(script)
        return [[(1,)]]


def test_a_player_whose_keys_do_not_replay_to_what_they_showed_is_not_ranked_and_logged() -> None:
    import asyncio

    from ansi2048.game.engine import Direction
    from ansi2048.serve.race_friends import Entrant
    from ansi2048.serve.race_hall import RaceHall

    async def scenario() -> None:
        host = _Host()
        hall = RaceHall(host)  # type: ignore[arg-type]
        settings = RaceSettings(3, 3, 1024, 2, 1)
        room, ann = hall.join(settings, Entrant("p1", "ann", 1, "a"), asyncio.Queue())
        _, bob = hall.join(settings, Entrant("p2", "bob", 2, "b"), asyncio.Queue())
        host.clock += 3
        room.tick()
        assert ann.game is not None and bob.game is not None and ann.game.cells == bob.game.cells  # one deal
        for direction in [Direction.LEFT, Direction.RIGHT, Direction.UP, Direction.DOWN] * 3:
            room.move(ann, direction)
            room.move(bob, direction)
        # Boards that can still move (two stuck ones would end the race before its time).
        assert bob.game.score > 0 and not bob.game.over and not ann.game.over
        del bob.keys[:]  # keys that replay to nothing of what bob was shown
        host.clock += 60  # the time is up
        for _ in range(100):
            if room.settled:
                break
            await asyncio.sleep(0.05)
        assert room.settled and room.how == "time is up"
        by_name = {place.progress.name: place for place in room.placed}
        assert by_name["ann"].verified and by_name["ann"].rank == 1
        assert not by_name["bob"].verified and by_name["bob"].rank == 0
        assert room.winner == "ann"
        assert any(line.startswith("race 1: bob's keys are not ranked: ") for line in host.lines)
        assert len(host.stored) == 1

    asyncio.run(scenario())


def test_the_biggest_numbers_are_cut_to_their_card_not_past_the_window() -> None:
    huge = Racer("a-sixteen-letter", 9_999_999, 131072, 99_999, OTHER, away=True)
    screen = RaceScreen(4, 4, 2048, Racer("ann", 9_999_999, 131072, 99_999, CELLS), (huge,) * 7, 1800)
    for width, height in ((200, 60), (110, 60), (100, 30), (80, 24), (72, 50)):
        _lines(screen, width, height, ColorDepth.TRUE)  # the lines beside a painted board are not cut after


def test_words_break_between_whole_words_and_cut_only_a_word_wider_than_the_window() -> None:
    from ansi2048.render.race import waiting_lines, words

    assert words("Nobody else came in 10 minutes: the lobby is closed.", 20) == [
        "Nobody else came in",
        "10 minutes: the",
        "lobby is closed.",
    ]
    assert words("a Supercalifragilistic b", 10) == ["a", "Supercali~", "b"]
    assert words("", 10) == [""]
    assert waiting_lines("bob", 61, 40, 3) == [
        "Waiting for bob to start or join a race",
        "(you meet in their lobby; the wait ends",
        "in 1:01)",
    ]


def test_a_wide_result_row_drops_words_of_its_mark_rather_than_cut_one() -> None:
    placed = [Placed(0, Progress("carol", 4, 4, 2, left=True), False)]
    row = result_lines(placed, None, "time is up", 80, 24)[2]
    assert row.split() == ["-", "carol", "4", "4", "2", "(left)", "not", "ranked"]
    assert result_lines(placed, None, "time is up", 100, 24)[2].endswith("(left)  not ranked: keys did not replay")


def test_a_replays_note_and_title_keep_whole_words_in_a_narrow_window() -> None:
    screen = _screen(2)
    replay = RaceScreen(
        4, 4, 2048, screen.me, screen.others, None, "+ - speed, space pauses, q leaves", None, "Replay of race r12"
    )
    lines = _lines(replay, 20, 10)
    assert lines[0] == "Replay of race r12"
    assert lines[-2:] == ["+ - speed, space", "pauses, q leaves"]
    assert _lines(replay, 12, 10)[0] == "Replay of r~"  # no clock to keep: the title, cut
