"""Your records, the pure part: each game followed from its start by the
session, history records as JSON lines, statistics, the top 10, the daily
seed, and ``--stats`` drawn (read back off an emulated terminal)."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from typing import List, Sequence

import pytest

from ansi2048.game.engine import Game
from ansi2048.game.keys import Action, KeyDecoder
from ansi2048.game.session import Played, Session
from ansi2048.options.parser import TOP_GAMES
from ansi2048.records.history import (
    Record,
    board_stats,
    daily_key,
    daily_seed,
    latest,
    stats_document,
    top_games,
)
from ansi2048.records.recording import replay
from ansi2048.records.tally import TOP
from ansi2048.render.palette import classic
from ansi2048.render.stats import sparkline, stats_lines
from ansi2048.render.style import ColorDepth

from .screen import dump, terminal


def actions(keys: str) -> List[Action]:
    return KeyDecoder().feed(keys.encode())


def replayed(played: Played) -> Game:
    """The game ``played``'s seed and keys recreate, as --replay-best does."""
    session = Session(Game(played.rows, played.cols, played.goal, played.seed))
    replay(session, played.keys.encode())
    return session.game


def same_state(a: Game, b: Game) -> bool:
    return (a.cells, a.score, a.moves, a.won, a.rng_state, a.seed) == (
        b.cells,
        b.score,
        b.moves,
        b.won,
        b.rng_state,
        b.seed,
    )


# -- the session follows the game on the board from its start --------------------


def test_the_run_replays_the_game_on_the_board_through_undo_and_restarts() -> None:
    rng = random.Random(5)
    session = Session(Game(4, 4, 2048, seed=3))
    for _ in range(3000):
        session.apply(rng.choice(actions("wasdwasdwasduur")))
        played = session.played()
        assert same_state(replayed(played), session.game), played.keys


def test_undoing_a_restart_brings_back_the_run_it_left() -> None:
    session = Session(Game(seed=1))
    for action in actions("wasd"):
        session.apply(action)
    before = session.played()
    session.apply(Action.RESTART)
    assert session.played().keys == "" and session.played().seed != before.seed
    session.apply(Action.UNDO)
    assert session.played() == before  # same seed, same keys, no undo counted
    assert not session.used_undo


def test_keys_that_change_nothing_are_not_part_of_the_run() -> None:
    session = Session(Game.from_board([[2, 0], [0, 0]], goal=8, seed=0, won=False))
    session.apply(Action.LEFT)  # nothing moves
    session.apply(Action.RIGHT)
    session.apply(Action.UNDO)
    session.apply(Action.UNDO)  # nothing left to undo
    assert session.played().keys == "du"


def test_undo_marks_the_game_and_a_restart_starts_unmarked() -> None:
    session = Session(Game(seed=2))
    for action in actions("wasd"):
        session.apply(action)
    assert not session.used_undo
    session.apply(Action.UNDO)
    assert session.used_undo and session.played().undo
    session.assisted = True
    assert session.played().ai
    ended = session.apply(Action.RESTART).ended
    assert ended is not None and ended.undo and ended.ai
    assert not session.used_undo and not session.assisted


def test_game_over_and_restart_report_the_game_that_ended() -> None:
    session = Session(Game(2, 2, 8, seed=4))
    assert session.apply(Action.RESTART).ended is None  # no move made: nothing to keep
    ended = None
    for action in actions("wasd" * 20):
        outcome = session.apply(action)
        if outcome.ended is not None:
            ended = outcome.ended
            break
    assert ended is not None and ended.over and session.game.over
    assert ended == session.played() and ended.moves == session.game.moves
    assert same_state(replayed(ended), session.game)


def test_with_undo_off_u_is_refused_and_changes_nothing() -> None:
    session = Session(Game(seed=9), undo=False)
    for action in actions("wasd"):
        session.apply(action)
    before = session.game.cells
    outcome = session.apply(Action.UNDO)
    assert outcome.refused and not outcome.moved
    assert session.game.cells == before and not session.used_undo
    assert "u" not in session.played().keys


# -- records ---------------------------------------------------------------------


LONG = "wasd" * 8  # moves enough for the scores and tiles below (a record must be a possible game)


def record(score: int = 100, seed: int = 1, keys: str = LONG, **changes: object) -> Record:
    base = Record(
        date="2026-11-22T12:00:00Z",
        rows=4,
        cols=4,
        goal=2048,
        seed=seed,
        score=score,
        moves=len(keys),
        biggest=64,
        won=False,
        over=True,
        undo=False,
        ai=False,
        keys=keys,
    )
    return replace(base, **changes)  # type: ignore[arg-type]


def test_a_record_is_one_json_line_and_reads_back() -> None:
    original = record(daily="2026-11-22", seed=20261122, undo=True, ai=True)
    line = original.to_json()
    assert "\n" not in line
    data = json.loads(line)
    assert data["size"] == "4x4" and data["undo"] is True and data["ai"] is True and data["keys"] == LONG
    assert Record.from_json(line) == original


@pytest.mark.parametrize(
    "line",
    [
        "",
        "{",
        "[]",
        '{"v":1}',
        record().to_json().replace('"score":100', '"score":-1'),
        record().to_json().replace('"score":100', '"score":true'),
        record().to_json().replace(f'"keys":"{LONG}"', f'"keys":"{LONG}q"'),
        record().to_json().replace('"size":"4x4"', '"size":"4"'),
        record().to_json()[:-5],  # cut short
    ],
)
def test_a_damaged_line_is_not_a_record(line: str) -> None:
    with pytest.raises(ValueError):
        Record.from_json(line)


def test_a_record_without_the_ai_field_still_reads() -> None:
    data = json.loads(record().to_json())
    del data["ai"]
    assert Record.from_json(json.dumps(data)) == record()


def test_a_game_kept_twice_counts_once_the_later_one() -> None:
    first = record(score=100, keys=LONG)
    later = record(score=300, keys=LONG + "uwd")  # the same game, undone and played on
    other_seed = record(score=200, seed=2, keys=LONG)
    same_seed_other_game = record(score=50, keys="sdwa" * 8)
    assert latest([first, other_seed, later, same_seed_other_game]) == [other_seed, later, same_seed_other_game]


def test_the_top_list_is_by_score_then_the_earlier_game_and_per_board() -> None:
    games = [record(score=s, seed=i, date=f"2026-11-{10 + i:02d}T00:00:00Z") for i, s in enumerate([5, 9, 7, 9, 1])]
    elsewhere = record(score=1000, seed=99, rows=3, cols=3)
    top = top_games([*games, elsewhere], 4, 4, 2048)
    assert [(g.score, g.seed) for g in top] == [(9, 1), (9, 3), (7, 2), (5, 0), (1, 4)]
    many = [record(score=s, seed=s) for s in range(30)]
    assert [g.score for g in top_games(many, 4, 4, 2048)] == list(range(29, 29 - TOP, -1))
    assert TOP == TOP_GAMES  # --help and the list agree


def test_board_stats() -> None:
    games = [
        record(score=10, seed=1, biggest=64),
        record(score=40, seed=2, biggest=128, undo=True),
        record(score=20, seed=3, biggest=64, won=True),
        record(score=30, seed=4, biggest=2048, won=True, keys="wasd" * 128),
        record(score=99, seed=5, rows=3, cols=3),
    ]
    stats = board_stats(games)
    assert [(s.rows, s.played) for s in stats] == [(4, 4), (3, 1)]
    four = stats[0]
    assert (four.won, four.best, four.best_unaided, four.median) == (2, 40, 30, 25)
    assert four.tiles == ((2048, 1), (128, 1), (64, 2))
    assert four.recent == (10, 40, 20, 30)
    document = stats_document(stats, "9.9")
    assert json.loads(json.dumps(document)) == document
    assert document["games"] == 5
    assert document["boards"][0]["biggest_tiles"] == {"2048": 1, "128": 1, "64": 2}
    assert document["boards"][0]["top"][0] == {
        "rank": 1, "score": 40, "biggest": 128, "moves": 32, "date": "2026-11-22T12:00:00Z",
        "seed": 2, "undo": True, "ai": False, "daily": None,
    }  # fmt: skip


def test_the_daily_seed_is_the_date_and_stable() -> None:
    assert daily_seed("2026-11-22") == 20261122
    assert daily_seed("2027-01-01") == 20270101
    assert daily_key("2026-11-22", 4, 4, 2048) == "daily-2026-11-22-4x4-2048"
    # The tiles of that day, for everyone, on every version that keeps the engine:
    assert Game(seed=daily_seed("2026-11-22")).board == Game(seed=20261122).board
    with pytest.raises(ValueError):
        daily_seed("22/11/2026")


# -- drawn -------------------------------------------------------------------------


def test_sparkline_scales_from_lowest_to_highest() -> None:
    assert sparkline([1, 5, 9], "abcdefghi") == "aei"
    assert sparkline([3, 3], "▁▂▃▄▅▆▇█") == "▄▄"
    assert sparkline([], "ab") == ""


def screen_of(lines: Sequence[str], width: int = 80):  # type: ignore[no-untyped-def]
    screen, stream = terminal(width, len(lines) + 2)
    stream.feed("\n".join(lines))
    return screen


def test_stats_count_one_game_in_the_singular_and_name_the_replay_only_where_it_works() -> None:
    stats = board_stats([record(score=20, seed=1, biggest=16)])
    local = stats_lines(stats, ColorDepth.NONE, width=80)
    assert local[0] == "Your records: 1 game on 1 board"
    assert "  Top 1 (replay one: ansi2048 --replay-best N)" in local
    served = stats_lines(stats, ColorDepth.NONE, width=80, replayable=False)  # over SSH: no such command
    assert "  Top 1" in served and not any("replay-best" in line for line in served)


def test_stats_drawn_in_colour_read_back_off_a_terminal() -> None:
    games = [record(score=s * 10, seed=s, biggest=b) for s, b in enumerate([64, 64, 64, 64, 128, 128, 256], 1)]
    games.append(record(score=500, seed=50, biggest=256, undo=True, ai=True))
    lines = stats_lines(board_stats(games), ColorDepth.TRUE, width=80)
    screen = screen_of(lines)
    text = dump(screen.display)
    assert "Your records: 8 games on 1 board" in text
    assert "4x4 to 2048: 8 played · 0 won" in text and "best 70 · median 45" in text  # the AI's 500: no best
    bars = {}
    for y, line in enumerate(screen.display):
        parts = line.split()
        if len(parts) == 3 and parts[0] in ("64", "128", "256") and set(parts[1]) == {"█"}:
            bars[int(parts[0])] = (len(parts[1]), int(parts[2]))
            x = line.index("█")
            color = screen.buffer[y][x].fg
            assert color == "{:02x}{:02x}{:02x}".format(*classic().tile(int(parts[0]))[0].rgb)
    assert bars == {256: (15, 2), 128: (15, 2), 64: (30, 4)}  # the most common tile has the longest bar
    spark = next(line for line in screen.display if "low 10, high 500" in line).split()[0]
    assert len(spark) == 8 and spark[0] == "▁" and spark[-1] == "█"
    top = [line.split() for line in screen.display if line.strip()[:2].strip().isdigit() and "2026-11-22" in line]
    assert [int(row[1]) for row in top] == [500, 70, 60, 50, 40, 30, 20, 10]
    assert top[0][-2:] == ["undo", "assisted"] and top[1][-1] == "7"  # the seed, unmarked


def test_stats_plain_have_no_escapes_and_ascii_when_asked() -> None:
    games = [record(score=s, seed=s) for s in range(1, 4)]
    plain = "\n".join(stats_lines(board_stats(games), ColorDepth.NONE, width=80, ascii_only=True))
    assert "\x1b" not in plain
    assert plain.isascii()
    assert "##" in plain
    assert all(len(line) < 80 for line in plain.splitlines())


def test_stats_fit_a_narrow_terminal_cutting_long_seeds() -> None:
    games = [record(score=s, seed=2**63 + s, undo=True) for s in range(1, 12)]
    for width in (60, 80):
        lines = stats_lines(board_stats(games), ColorDepth.NONE, width=width)
        assert all(len(line) < width for line in lines), [line for line in lines if len(line) >= width]
    assert any(str(2**63 + 11) in line for line in stats_lines(board_stats(games), ColorDepth.NONE, width=80))


def test_stats_name_the_replay_command_for_another_board() -> None:
    lines = stats_lines(board_stats([record(rows=3, cols=5, goal=256)]), ColorDepth.NONE)
    assert any("ansi2048 --replay-best N --size 3x5 --goal 256" in line for line in lines)
