"""Your records from any history (issue 20) and at any scale (issue 18):
every line is a record the game could play or is skipped with one warning;
no text from the file reaches the terminal; --stats and --replay-best read
the history once, a line at a time, with work that does not grow with the
square of the games on one seed. No timings here: benchmarks/stats.py
measures those."""

from __future__ import annotations

import io
import json
import re
import tracemalloc
from dataclasses import replace as dataclasses_replace
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from ansi2048.game.engine import Game, default_goal
from ansi2048.game.keys import KeyDecoder
from ansi2048.game.session import Session
from ansi2048.options.context import Context, Options
from ansi2048.play.stats import NoSuchGame, replay_best, show_stats
from ansi2048.records.history import Record, board_stats, latest
from ansi2048.records.tally import Tally
from ansi2048.storage.history_file import MAX_LINE, History

from .conftest import symlink_or_skip

DATE = "2026-11-22T12:00:00Z"


def game_record(seed: int, keys: str, rows: int = 4, cols: int = 4, goal: Optional[int] = None) -> Record:
    """The record of a game really played: ``keys`` on ``seed``."""
    session = Session(Game(rows, cols, goal or default_goal(rows, cols), seed))
    for action in KeyDecoder().feed(keys.encode()):
        session.apply(action)
    return Record.of(session.played(), DATE)


def made_up(seed: int, keys: str, score: int = 8) -> Record:
    """A record the schema takes (its keys need not reach its score)."""
    return Record(
        rows=4, cols=4, goal=2048, seed=seed, keys=keys, score=score, moves=len(keys), biggest=4,
        won=False, over=True, undo=False, ai=False, date=DATE,
    )  # fmt: skip


def run(data: Path, **options: Any) -> Tuple[int, str, List[str]]:
    """(status, output, warnings) of --stats or --replay-best, in process."""
    stdout = io.StringIO()
    warnings: List[str] = []
    ctx = Context(
        options=Options(**options),
        stdin=io.StringIO(),
        stdout=stdout,
        env={"ANSI2048_DATA_DIR": str(data)},
        warn=warnings.append,
        random_seed=lambda: 1,
    )
    status = show_stats(ctx) if options.get("stats") else replay_best(ctx)
    return status, stdout.getvalue(), warnings


_SGR = re.compile(r"\x1b\[[0-9;]*m")
_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]")


def controls(text: str) -> List[str]:
    """The control characters in ``text`` other than newlines and SGR colours."""
    return _CONTROL.findall(_SGR.sub("", text))


# -- any history ---------------------------------------------------------------------

_FIELDS = ["v", "date", "size", "goal", "seed", "score", "moves", "biggest", "won", "over", "undo", "ai", "daily"]
_FIELDS += ["keys", "extra"]
_HOSTILE_TEXT = st.text(
    st.sampled_from(["\x1b", "\x9b", "\x07", "\x00", "\r", "\n", "\u202e", "é", "🀄"])
    | st.sampled_from(["2", "x", "-", "T", ":", "Z", "w"]),
    max_size=30,
)
_HOSTILE = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.sampled_from([10**400, 10**999, 10**1000, 2**31, 2**31 + 1, 0, 3, 1 << 200])
    | st.floats(allow_nan=False)
    | _HOSTILE_TEXT
    | st.sampled_from(["0x0", "999x999", "1x4", "10x10", "4x4", "2026-02-30", "2026-11-22T25:00:00Z", "\x1b]0;t\x07"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=6,
)


@st.composite
def hostile_lines(draw: st.DrawFn) -> str:
    """A line of a history: a real record with some fields made hostile,
    missing or added, or any text at all."""
    if draw(st.integers(0, 9)) == 0:
        return draw(st.text(max_size=60)).replace("\n", " ")
    data: Dict[str, Any] = json.loads(game_record(draw(st.integers(0, 50)), "wasd" * 6).to_json())
    for name in draw(st.lists(st.sampled_from(_FIELDS), max_size=3)):
        if draw(st.booleans()):
            data[name] = draw(_HOSTILE)
        else:
            data.pop(name, None)
    return json.dumps(data, ensure_ascii=draw(st.booleans()))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(hostile_lines(), min_size=1, max_size=6))
def test_any_history_gives_records_the_game_can_play_or_one_warning(tmp_path: Path, lines: List[str]) -> None:
    data = tmp_path / "data"
    data.mkdir(exist_ok=True)
    (data / "history.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    read_warnings: List[str] = []
    records = History(str(data / "history.jsonl")).read(read_warnings.append)
    assert len(read_warnings) <= 1
    for record in records:
        # Each record is a board the game plays, with a seed it takes.
        Game(record.rows, record.cols, record.goal, record.seed)
    for color in ("never", "always"):
        status, text, warnings = run(data, stats=True, color=color)
        assert status == 0 and not controls(text) and not controls("".join(warnings))
        if color == "never":
            assert "\x1b" not in text
    status, text, _ = run(data, stats=True, json=True)
    document = json.loads(text)
    assert status == 0 and document["games"] == len(latest(records))
    for board in board_stats(records):
        rows, cols, goal = board.rows, board.cols, board.goal
        status, text, warnings = run(data, replay_best=1, rows=rows, cols=cols, goal=goal, delay=0.0)
        assert status == 0 and not controls(text)
    with pytest.raises(NoSuchGame):
        run(data, replay_best=10, rows=2, cols=3, goal=32)


@pytest.mark.parametrize(
    "change",
    [
        {"score": 10**400},  # crashed the median with OverflowError
        {"score": 10**12},  # more than 24 moves can score
        {"size": "0x0"},
        {"size": "999x999"},
        {"size": "1x4"},
        {"goal": 0},
        {"goal": 3},
        {"goal": 2**40},
        {"size": "2x2", "goal": 2048},  # a goal the board cannot hold
        {"seed": 10**1999},  # 2000 digits: no game has it, so it cannot be replayed
        {"seed": -1},
        {"date": "\x1b]0;pwned\x07\x1b[2J"},  # set the title, cleared the screen
        {"date": "2026-02-30T12:00:00Z"},
        {"date": "2026-11-22T24:00:00Z"},
        {"daily": "\x1b[2J"},
        {"daily": "2026-11-22"},  # a daily game's seed is its date
        {"biggest": 3},
        {"biggest": 1 << 20},  # more than 24 moves can build
        {"moves": 25},  # more moves than keys
        {"keys": "wasd\x1b"},
        {"keys": "wasd" * 6 + "r"},  # r begins another game: never in a game's keys
        {"won": 1},
        {"ai": "yes"},
        {"v": 2},
        {"v": True},
        {"undo": None},
    ],
)
def test_a_field_the_game_would_refuse_makes_the_line_no_record(tmp_path: Path, change: Dict[str, Any]) -> None:
    good = game_record(3, "wasd" * 6)
    data = json.loads(good.to_json())
    data.update(change)
    path = tmp_path / "history.jsonl"
    path.write_text(good.to_json() + "\n" + json.dumps(data) + "\n")
    warnings: List[str] = []
    assert History(str(path)).read(warnings.append) == [good]
    assert len(warnings) == 1 and "line 2" in warnings[0]


def test_the_score_bound_is_exactly_what_the_moves_can_score(tmp_path: Path) -> None:
    """A game of ``moves`` moves has spawned at most 4 * (moves + 2) points of
    tiles, and no move scores more than that: a score at the bound is a
    record, one point more is not (a doubled bound would take it)."""
    good = game_record(3, "wasd" * 6)
    data = json.loads(good.to_json())
    bound = good.moves * 4 * (good.moves + 2)
    at_bound = dict(data, score=bound)
    above = dict(data, score=bound + 1)
    path = tmp_path / "history.jsonl"
    path.write_text(json.dumps(at_bound) + "\n" + json.dumps(above) + "\n")
    warnings: List[str] = []
    assert [record.score for record in History(str(path)).read(warnings.append)] == [bound]
    assert len(warnings) == 1 and "line 2" in warnings[0]


def test_the_limits_themselves_are_records(tmp_path: Path) -> None:
    """The largest seed, the smallest and largest boards: kept, listed, replayed."""
    path = tmp_path / "history.jsonl"
    big_seed = 10**999 + 7  # 1000 digits, the most --seed takes
    games = [game_record(big_seed, "wasd" * 6), game_record(5, "wasd" * 4, 2, 2), game_record(6, "wasd" * 9, 10, 10)]
    path.write_text("".join(game.to_json() + "\n" for game in games))
    assert History(str(path)).read(pytest.fail) == games
    status, text, _ = run(tmp_path, replay_best=1, delay=0.0)
    assert status == 0 and f"score {games[0].score}" in text
    status, text, _ = run(tmp_path, stats=True, json=True)
    assert [board["top"][0]["seed"] for board in json.loads(text)["boards"]] == [5, big_seed, 6]  # 2x2, 4x4, 10x10


def test_a_line_too_long_is_skipped_without_being_held(tmp_path: Path) -> None:
    good = game_record(3, "wasd" * 6)

    def peak_for(length: int) -> int:
        path = tmp_path / f"history-{length}.jsonl"
        with open(path, "w") as stream:
            stream.write('{"keys":"' + "w" * length + '"}\n' + good.to_json() + "\n")
        warnings: List[str] = []
        tracemalloc.start()
        try:
            assert History(str(path)).read(warnings.append) == [good]
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert len(warnings) == 1 and "line 1" in warnings[0]
        return peak

    # A line four times longer takes no more memory: it is never held whole.
    assert peak_for(16 * MAX_LINE) < peak_for(4 * MAX_LINE) + MAX_LINE // 2


def test_a_history_that_is_not_a_file_is_one_warning(tmp_path: Path) -> None:
    (tmp_path / "history.jsonl").mkdir()
    status, text, warnings = run(tmp_path, stats=True)
    assert status == 0 and "No finished games" in text
    assert len(warnings) == 1 and "history" in warnings[0]


# -- at scale ----------------------------------------------------------------------------


def test_games_on_one_seed_cost_work_in_proportion_not_in_square() -> None:
    """8,000 games on one seed compared every pair before (32 million prefix
    checks for --stats); now a game is checked against the earlier games
    filed under its own prefixes only."""
    import random

    rng = random.Random(1)

    def prefix_checks(count: int) -> Tuple[int, int]:
        tally, games = Tally(listing=True), []
        for number in range(count):
            if games and number % 4 == 0:  # the previous game, undone and played on
                keys = games[-1].keys + "u" + "".join(rng.choice("wasd") for _ in range(rng.randint(1, 50)))
            else:
                keys = "wasdwasd" + "".join(rng.choice("wasd") for _ in range(rng.randint(20, 300)))
            games.append(made_up(7, keys))
            tally.add(games[-1], number)
        assert len(tally.latest()) == count - count // 4 + (count % 4 == 0)
        return tally.comparisons, count

    for checks, count in (prefix_checks(500), prefix_checks(4000)):
        assert checks <= count  # the pairs compared before: count * (count - 1) / 2


def test_the_same_game_kept_again_still_counts_once_among_many_on_its_seed() -> None:
    games = [made_up(7, "wasd" * 5 + "".join("ad"[(n >> bit) & 1] for bit in range(12))) for n in range(300)]
    continued = [made_up(7, game.keys + "uwasd", score=16) for game in games[::3]]
    stats = board_stats(games + continued)
    assert stats[0].played == 300
    assert sorted(latest(games + continued), key=lambda game: game.keys) == sorted(
        [game for index, game in enumerate(games) if index % 3] + continued, key=lambda game: game.keys
    )
    # A prefix of another game that came later is superseded; one that came after is not.
    first, longer = made_up(7, "wasdw"), made_up(7, "wasdwasd")
    assert latest([first, longer]) == [longer]
    assert latest([longer, first]) == [longer, first]
    assert latest([made_up(7, ""), first]) == [first]


def test_memory_is_bounded_whatever_the_history_and_the_totals_stay_exact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import random

    from ansi2048.records import tally

    monkeypatch.setattr(tally, "WINDOW", 64)  # the games still open per board (4000 in use)
    rng = random.Random(5)

    def history(games: int, keys_length: int) -> List[Record]:
        made: List[Record] = []
        for seed in range(games):
            if made and seed % 5 == 0:  # the game 3 back, undone and played on
                made.append(dataclasses_replace(made[-3], keys=made[-3].keys + "uw", moves=made[-3].moves + 1))
            else:
                keys = "".join(rng.choice("wasd") for _ in range(keys_length))
                made.append(made_up(seed % 7, keys, score=rng.randint(0, 4 * keys_length)))
        return made

    def peak_for(games: List[Record]) -> int:
        path = tmp_path / "history.jsonl"
        path.write_text("".join(game.to_json() + "\n" for game in games))
        stored = History(str(path))
        tracemalloc.start()
        try:
            tally = Tally()
            for where, record in stored.records(pytest.fail):
                tally.add(record, where)
            (stats,) = tally.stats(stored.fetch)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        # The totals are those of every game that counts, as a plain count gives them.
        counted = brute_force_latest(games)
        scores = sorted(game.score for game in counted)
        assert stats.played == len(counted) and stats.best == scores[-1]
        assert stats.recent == tuple(game.score for game in counted[-30:])
        ranked = sorted(enumerate(counted), key=lambda pair: (-pair[1].score, pair[0]))
        assert list(stats.top) == [game for _, game in ranked[:10]]
        return peak

    small, large = peak_for(history(250, 30)), peak_for(history(2000, 30))
    assert large < small + (200 << 10)  # eight times the games, the same memory (within 200 KiB)
    short_keys, long_keys = peak_for(history(250, 10)), peak_for(history(250, 2000))
    assert long_keys < short_keys + (200 << 10)  # keys are never kept
    records_read = History(str(tmp_path / "history.jsonl")).records(pytest.fail)
    assert iter(records_read) is records_read  # a generator: one record at a time, never a list of them all


def brute_force_latest(games: List[Record]) -> List[Record]:
    """The games that count, by comparing every pair (as before: quadratic)."""
    return [
        game
        for at, game in enumerate(games)
        if not any(
            later.board == game.board and later.seed == game.seed and later.keys.startswith(game.keys)
            for later in games[at + 1 :]
        )
    ]


# -- --replay-best picks the goal as play does (issue 14, item 12) -------------------------


def test_replay_best_without_goal_takes_the_boards_default_goal(tmp_path: Path) -> None:
    games = [game_record(seed, "wasd" * (3 + seed), 3, 3) for seed in (1, 2)]  # 3x3 plays to 256
    History(str(tmp_path / "history.jsonl")).append(games[0])
    History(str(tmp_path / "history.jsonl")).append(games[1])
    best = max(games, key=lambda game: game.score)
    status, text, _ = run(tmp_path, replay_best=1, rows=3, cols=3, delay=0.0)
    assert status == 0 and f"score {best.score}  moves {best.moves}" in text
    status, text, _ = run(tmp_path, stats=True)
    # The command shown finds the game: no --goal needed for the board's own.
    assert "(replay one: ansi2048 --replay-best N --size 3)" in text


# -- the tests the mutation check found missing (issue 16, item 5) ---------------------------


def test_a_record_is_appended_in_one_write_of_the_whole_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two writes (the line, then its newline) could interleave with another
    game's append or be cut between them by a kill."""
    import os

    path = tmp_path / "history.jsonl"
    first, second = game_record(1, "wasd" * 6), game_record(2, "wasd" * 6)
    path.write_bytes(first.to_json().encode()[:40])  # a line cut short before
    written: List[bytes] = []
    real_write = os.write

    def spy(fd: int, data: bytes) -> int:
        written.append(bytes(data))
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", spy)
    History(str(path)).append(first)
    History(str(path)).append(second)
    assert written == [b"\n" + first.to_json().encode() + b"\n", second.to_json().encode() + b"\n"]


def test_a_last_line_without_its_newline_that_is_a_record_counts(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    games = [game_record(1, "wasd" * 6), game_record(2, "wasd" * 7)]
    path.write_text(games[0].to_json() + "\n" + games[1].to_json())  # written by hand, or by another tool
    assert History(str(path)).read(pytest.fail) == games
    _, text, _ = run(tmp_path, stats=True, json=True)
    assert json.loads(text)["games"] == 2


def test_atomic_writes_reach_the_disk_before_the_rename(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the fsync, a power cut after the rename can leave the new
    name on an empty file: the save or best scores lost."""
    import os

    from ansi2048.storage import files

    events: List[Tuple[str, int]] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        events.append(("fsync", os.fstat(fd).st_ino))
        real_fsync(fd)

    def replace(source: Any, target: Any) -> None:
        events.append(("replace", os.stat(source).st_ino))
        real_replace(source, target)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    path = tmp_path / "game-4x4-2048.keys"
    files.atomic_write(str(path), [b"# ansi2048 seed=1 size=4x4 goal=2048\n", b"wasd"])
    assert path.read_bytes().endswith(b"wasd")
    written = path.stat().st_ino
    assert ("fsync", written) in events and events.index(("fsync", written)) < events.index(("replace", written))


@pytest.mark.parametrize("kind", ["symlink", pytest.param("fifo", marks=pytest.mark.posix("FIFOs")), "directory"])
def test_a_history_that_is_not_a_file_is_never_written_through(tmp_path: Path, kind: str) -> None:
    import os

    from ansi2048.storage.data_dir import BoardStore

    data, outside = tmp_path / "data", tmp_path / "outside.jsonl"
    data.mkdir()
    outside.write_text("")
    history = data / "history.jsonl"
    if kind == "symlink":
        symlink_or_skip(history, outside)
    elif kind == "fifo":
        os.mkfifo(history)
    else:
        history.mkdir()
    warnings: List[str] = []
    keeper = BoardStore({"ANSI2048_DATA_DIR": str(data)}, 4, 4, 2048, warnings.append)
    keeper.add_record(game_record(1, "wasd" * 6))
    keeper.add_record(game_record(2, "wasd" * 6))
    keeper.close()
    # Never written through: set aside (never deleted), one warning that says
    # where, and a history of its own begun in its place.
    assert outside.read_text() == ""
    assert len(warnings) == 1 and "history.jsonl.bad-" in warnings[0]
    assert [p.name for p in data.iterdir() if p.name.startswith("history.jsonl.bad-")]
    assert history.is_file() and not history.is_symlink()
    status, text, read_warnings = run(data, stats=True)
    assert status == 0 and "2 games" in text and read_warnings == []


def test_a_history_changed_between_reading_and_showing_is_one_error_line(tmp_path: Path) -> None:
    from ansi2048.play.stats import HistoryChanged, _fetcher

    path = tmp_path / "history.jsonl"
    games = [game_record(1, "wasd" * 6), game_record(2, "wasd" * 7)]
    path.write_text("".join(game.to_json() + "\n" for game in games))
    history = History(str(path))
    places = [where for where, _ in history.records(pytest.fail)]
    assert [_fetcher(history)(where) for where in places] == games
    path.write_text("rewritten by another hand\n")
    with pytest.raises(HistoryChanged, match="changed while it was read"):
        _fetcher(history)(places[1])
