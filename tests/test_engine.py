"""The engine against the original game's rules (the README's "Rules and randomness") and simple references.

Every expected value here comes from the rules table, from a deliberately naive
reference slide (squeeze, merge, squeeze) written below, or from a reference
implementation of the documented spawn algorithm (SplitMix64 draws, cell = the
n-th empty one in row-major order with n = draw * empty >> 64, a 4 when the low
32 bits fall below (2**32) // 10) — never from the engine's own output.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import random
import threading
from collections import Counter
from typing import Optional, Sequence

import pytest
from hypothesis import given, settings, strategies as st

from ansi2048.game.engine import (
    MAX_GOAL,
    MAX_SEED_DIGITS,
    MAX_SIDE,
    MIN_GOAL,
    MIN_SIDE,
    UNDO_DEPTH,
    Direction,
    Game,
    slide_line,
    slide_lines,
)
from ansi2048.game.spawns import SplitMix64, seed_state

from .reference import DIRECTIONS, Flat, ref_lines, ref_move, ref_move_biggest, ref_over, ref_slide


def flat(board: Sequence[Sequence[int]]) -> Flat:
    return [v for row in board for v in row]


def set_board(game: Game, cells: Sequence[int]) -> Game:
    """A game like the fresh ``game`` (same size, goal, seed and generator
    state) with ``cells`` (flat, row-major) on its board."""
    assert len(cells) == game.rows * game.cols
    assert game.moves == 0 and game.score == 0 and not game.can_undo
    board = [list(cells[r * game.cols : (r + 1) * game.cols]) for r in range(game.rows)]
    placed = Game.from_board(board, goal=game.goal, seed=game.seed, won=False)
    assert placed.rng_state == game.rng_state
    return placed


def game_with(board: Sequence[Sequence[int]], goal: int = 2048, seed: int = 0) -> Game:
    return set_board(Game(len(board), len(board[0]), goal, seed), flat(board))


class RefSplitMix64:
    """SplitMix64 straight from Vigna's reference C (splitmix64.c)."""

    def __init__(self, state: int) -> None:
        self.x = state % 2**64

    def next(self) -> int:
        self.x = (self.x + 0x9E3779B97F4A7C15) % 2**64
        z = self.x
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) % 2**64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) % 2**64
        return z ^ (z >> 31)


def ref_seed_state(seed: int) -> int:
    return int.from_bytes(hashlib.sha256(str(seed).encode()).digest()[:8], "little")


def ref_spawn(cells: Flat, rng: RefSplitMix64) -> Optional[int]:
    """The documented spawn: returns the flat index used, or None if full."""
    empties = [i for i, v in enumerate(cells) if v == 0]
    if not empties:
        return None
    draw = rng.next()
    index = empties[(draw * len(empties)) >> 64]
    cells[index] = 4 if (draw % 2**32) < 2**32 // 10 else 2
    return index


class RefGame:
    """An independent model of a whole seeded game (no undo)."""

    def __init__(self, rows: int, cols: int, goal: int, seed: int) -> None:
        self.rows, self.cols, self.goal = rows, cols, goal
        self.start(seed)

    def start(self, seed: int) -> None:
        self.seed = seed
        self.rng = RefSplitMix64(ref_seed_state(seed))
        self.cells = [0] * (self.rows * self.cols)
        self.score = self.moves = 0
        self.won = False
        ref_spawn(self.cells, self.rng)
        self.spawned = ref_spawn(self.cells, self.rng)

    def move(self, direction: Direction) -> bool:
        after, points, biggest = ref_move_biggest(self.cells, self.rows, self.cols, direction)
        if after == self.cells:
            return False
        if biggest >= self.goal:
            self.won = True
        self.cells = after
        self.score += points
        self.moves += 1
        self.spawned = ref_spawn(self.cells, self.rng)
        return True

    def restart(self) -> None:
        self.start(self.rng.next())


def state(game: Game) -> tuple[object, ...]:
    return (game.board, game.score, game.moves, game.won, game.over, game.seed, game.rng_state, game.spawned)


def check_move_against_reference(game: Game, direction: Direction) -> None:
    """game.move(direction) == reference slide + exactly one 2/4 on an empty cell."""
    before = list(game.cells)
    score, moves = game.score, game.moves
    expected, points, changed = ref_move(before, game.rows, game.cols, direction)
    assert game.move(direction) is changed
    after = list(game.cells)
    if not changed:
        assert after == before and game.score == score and game.moves == moves
        return
    assert game.score == score + points
    assert game.moves == moves + 1
    diff = [i for i in range(len(after)) if after[i] != expected[i]]
    assert len(diff) == 1, (before, direction, expected, after)
    (i,) = diff
    assert expected[i] == 0 and after[i] in (2, 4)
    assert game.spawned == divmod(i, game.cols)
    assert sum(after) == sum(before) + after[i]


# --------------------------------------------------------------------------
# The rules table: rows slid left and right by the original game's rules, with their points
# --------------------------------------------------------------------------

RULES = [
    # row, left, right, points
    ([2, 2, 2, 2], [4, 4, 0, 0], [0, 0, 4, 4], 8),
    ([4, 2, 2, 0], [4, 4, 0, 0], [0, 0, 4, 4], 4),
    ([2, 2, 4, 0], [4, 4, 0, 0], [0, 0, 4, 4], 4),
    ([8, 0, 8, 8], [16, 8, 0, 0], [0, 0, 8, 16], 16),
    ([2, 4, 8, 16], [2, 4, 8, 16], [2, 4, 8, 16], 0),
]


@pytest.mark.parametrize("row, left, right, points", RULES)
def test_rules_table_slide_line(row: list[int], left: list[int], right: list[int], points: int) -> None:
    cells = list(row)
    changed, gained, _ = slide_line(cells, tuple(range(4)))
    assert (cells, gained, changed) == (left, points, left != row)

    cells = list(row)
    changed, gained, _ = slide_line(cells, (3, 2, 1, 0))
    assert (cells, gained, changed) == (right, points, right != row)


def without_spawn(game: Game) -> Flat:
    """The board as the slide left it: the newest tile taken off again."""
    cells = list(game.cells)
    assert game.spawned is not None
    row, col = game.spawned
    cells[row * game.cols + col] = 0
    return cells


@pytest.mark.parametrize("row, left, right, points", RULES)
def test_rules_table_on_a_game(row: list[int], left: list[int], right: list[int], points: int) -> None:
    # The row as the first row of a 4x4 board, then as its first column.
    blank = [0] * 4
    cases = [
        ([row, blank, blank, blank], Direction.LEFT, [left, blank, blank, blank]),
        ([row, blank, blank, blank], Direction.RIGHT, [right, blank, blank, blank]),
        ([[v, 0, 0, 0] for v in row], Direction.UP, [[v, 0, 0, 0] for v in left]),
        ([[v, 0, 0, 0] for v in row], Direction.DOWN, [[v, 0, 0, 0] for v in right]),
    ]
    for board, direction, expected in cases:
        game = game_with(board)
        moved = game.move(direction)
        assert moved is (expected != board)
        assert game.score == points
        assert game.moves == int(moved)
        if moved:
            assert without_spawn(game) == flat(expected)
        else:
            assert list(game.cells) == flat(board)


# --------------------------------------------------------------------------
# Exhaustive small rows
# --------------------------------------------------------------------------


@pytest.mark.parametrize("length", [2, 3, 4, 5, 6])
def test_every_row_against_reference(length: int) -> None:
    forward = tuple(range(length))
    backward = tuple(reversed(forward))
    checked = 0
    for row in itertools.product((0, 2, 4, 8, 16), repeat=length):
        left, points, biggest_left = ref_slide(row)
        right_reversed, points_right, biggest_right = ref_slide(row[::-1])
        right = right_reversed[::-1]
        for line, expected, pts, big in (
            (forward, left, points, biggest_left),
            (backward, right, points_right, biggest_right),
        ):
            cells = list(row)
            changed, gained, biggest = slide_line(cells, line)
            assert cells == expected, (row, line)
            assert gained == pts, (row, line)
            assert biggest == big, (row, line)
            assert changed is (expected != list(row)), (row, line)
            checked += 1
    assert checked == 2 * 5**length


def test_merge_once_per_move_examples() -> None:
    # Hand-computed: the merged 4 must not take the next 4 in the same move.
    cases = [
        ([2, 2, 4, 0], [4, 4, 0, 0]),
        ([4, 4, 8, 0], [8, 8, 0, 0]),
        ([2, 2, 4, 8], [4, 4, 8, 0]),
        ([4, 4, 4, 4], [8, 8, 0, 0]),
        ([4, 4, 4, 0], [8, 4, 0, 0]),
        ([0, 4, 4, 4], [8, 4, 0, 0]),
        ([2, 0, 0, 2], [4, 0, 0, 0]),
    ]
    for row, left in cases:
        cells = list(row)
        slide_line(cells, (0, 1, 2, 3))
        assert cells == left, row


@pytest.mark.parametrize("row", [[2, 4], [2, 4, 2], [4, 2, 4, 2], [2, 4, 2, 4, 2, 4], [0, 0], [2, 0], [0, 2, 0, 4]])
def test_slide_terminates_on_unmergeable_rows(row: list[int]) -> None:
    # The seed article's engine looped forever on rows like [2, 4] and [2, 4, 2].
    results: list[tuple[tuple[int, ...], tuple[bool, int, int], list[int]]] = []

    def run() -> None:
        for line in (tuple(range(len(row))), tuple(reversed(range(len(row))))):
            cells = list(row)
            results.append((line, slide_line(cells, line), cells))

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(timeout=5)
    assert not worker.is_alive(), f"slide_line did not return on {row}"
    assert len(results) == 2
    for line, (changed, gained, biggest), cells in results:
        ordered = [row[i] for i in line]
        expected_ordered = ref_slide(ordered)[0]
        expected = [0] * len(row)
        for i, v in zip(line, expected_ordered):
            expected[i] = v
        assert (cells, changed, gained, biggest) == (expected, expected != row, 0, 0)


def test_slide_lines_several_lines_in_one_call() -> None:
    cells = flat([[2, 2, 0], [0, 4, 4], [8, 0, 8]])
    lines = ((0, 1, 2), (3, 4, 5), (6, 7, 8))
    changed, gained, biggest = slide_lines(cells, lines)
    assert cells == flat([[4, 0, 0], [8, 0, 0], [16, 0, 0]])
    assert (changed, gained, biggest) == (True, 4 + 8 + 16, 16)


# --------------------------------------------------------------------------
# Games: four directions, rectangular boards
# --------------------------------------------------------------------------


def random_cells(rng: random.Random, n: int) -> Flat:
    return [rng.choice((0, 0, 0, 2, 2, 4, 4, 8, 16, 32)) for _ in range(n)]


@pytest.mark.parametrize("direction", DIRECTIONS)
def test_known_board_each_direction(direction: Direction) -> None:
    board = [
        [2, 2, 4, 8],
        [0, 4, 4, 4],
        [2, 0, 2, 0],
        [8, 8, 8, 8],
    ]
    # Hand-computed from the rules (not from the engine):
    expected = {
        Direction.LEFT: [[4, 4, 8, 0], [8, 4, 0, 0], [4, 0, 0, 0], [16, 16, 0, 0]],
        Direction.RIGHT: [[0, 4, 4, 8], [0, 0, 4, 8], [0, 0, 0, 4], [0, 0, 16, 16]],
        Direction.UP: [[4, 2, 8, 8], [8, 4, 2, 4], [0, 8, 8, 8], [0, 0, 0, 0]],
        Direction.DOWN: [[0, 0, 0, 0], [0, 2, 8, 8], [4, 4, 2, 4], [8, 8, 8, 8]],
    }[direction]
    assert ref_move(flat(board), 4, 4, direction)[0] == flat(expected)  # the reference agrees
    game = game_with(board)
    check_move_against_reference(game, direction)


@pytest.mark.parametrize("rows, cols", [(4, 4), (2, 2), (2, 10), (10, 2), (3, 5), (5, 3), (10, 10)])
def test_directions_match_reference_rows_and_columns(rows: int, cols: int) -> None:
    rng = random.Random(rows * 100 + cols)
    for trial in range(60):
        game = set_board(Game(rows, cols, 2048, seed=trial), random_cells(rng, rows * cols))
        for _ in range(6):
            check_move_against_reference(game, rng.choice(DIRECTIONS))


def test_string_directions_move_like_enum() -> None:
    for spelling, direction in (("left", Direction.LEFT), ("UP", Direction.UP), ("Right", Direction.RIGHT)):
        a = game_with([[2, 2, 0], [0, 4, 4], [2, 0, 2]], seed=3)
        b = game_with([[2, 2, 0], [0, 4, 4], [2, 0, 2]], seed=3)
        assert a.move(spelling) == b.move(direction)
        assert state(a) == state(b)


# --------------------------------------------------------------------------
# Hypothesis properties
# --------------------------------------------------------------------------

VALUES = st.sampled_from([0, 0, 0, 2, 2, 4, 4, 8, 16, 32, 64])


@st.composite
def boards(draw: st.DrawFn, max_side: int = 6) -> tuple[int, int, Flat]:
    rows = draw(st.integers(MIN_SIDE, max_side))
    cols = draw(st.integers(MIN_SIDE, max_side))
    cells = draw(st.lists(VALUES, min_size=rows * cols, max_size=rows * cols))
    return rows, cols, cells


@settings(max_examples=300, deadline=None)
@given(boards(), st.sampled_from(DIRECTIONS), st.integers(0, 2**70))
def test_property_move_is_reference_plus_one_spawn(
    board: tuple[int, int, Flat], direction: Direction, seed: int
) -> None:
    # Covers: tile sum preserved up to the spawn, no tile merges twice (the
    # reference merges each tile at most once), score rises by the points.
    rows, cols, cells = board
    game = set_board(Game(rows, cols, 2048, seed), cells)
    check_move_against_reference(game, direction)


@settings(max_examples=300, deadline=None)
@given(boards(max_side=8), st.sampled_from(DIRECTIONS))
def test_property_second_move_after_mergeless_move_changes_nothing(
    board: tuple[int, int, Flat], direction: Direction
) -> None:
    rows, cols, original = board
    cells = list(original)
    lines = tuple(tuple(line) for line in ref_lines(rows, cols, direction))
    _, gained, _ = slide_lines(cells, lines)
    assert cells == ref_move(original, rows, cols, direction)[0]
    if gained == 0:
        again = list(cells)
        assert slide_lines(again, lines) == (False, 0, 0)
        assert again == cells


@settings(max_examples=200, deadline=None)
@given(boards(), st.sampled_from(DIRECTIONS), st.integers(0, 2**64))
def test_property_game_second_move_after_mergeless_move(
    board: tuple[int, int, Flat], direction: Direction, seed: int
) -> None:
    # On a Game: after a move that merged nothing, the same move again can
    # only slide the newly spawned tile (and merge it with its neighbour).
    rows, cols, cells = board
    game = set_board(Game(rows, cols, 2048, seed), cells)
    if not game.move(direction) or game.score:
        return
    settled = without_spawn(game)
    assert ref_move(settled, rows, cols, direction)[2] is False


@settings(max_examples=300, deadline=None)
@given(boards(), st.sampled_from(DIRECTIONS), st.integers(0, 2**64))
def test_property_noop_move_changes_nothing_at_all(
    board: tuple[int, int, Flat], direction: Direction, seed: int
) -> None:
    rows, cols, cells = board
    # Settle the board in that direction with the reference: the next move
    # that way cannot change anything.
    while True:
        cells, _, changed = ref_move(cells, rows, cols, direction)
        if not changed:
            break
    game = set_board(Game(rows, cols, 2048, seed), cells)
    before = state(game)
    can_undo = game.can_undo
    assert game.move(direction) is False
    assert state(game) == before
    assert game.can_undo == can_undo


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**64 - 1), st.integers(MIN_SIDE, 5), st.integers(MIN_SIDE, 5), st.data())
def test_property_game_equals_reference_model(seed: int, rows: int, cols: int, data: st.DataObject) -> None:
    # The whole seeded game, including spawn cells/values, restarts, score,
    # won and over, equals an independent model of the documented algorithm.
    goal = data.draw(st.sampled_from([8, 16, 32, 2048]))
    game = Game(rows, cols, goal, seed)
    model = RefGame(rows, cols, goal, seed)
    actions = data.draw(st.lists(st.sampled_from([*DIRECTIONS, "restart"]), max_size=80))
    for action in actions:
        if action == "restart":
            game.restart()
            model.restart()
        else:
            assert game.move(action) is model.move(action)  # type: ignore[arg-type]
        assert list(game.cells) == model.cells
        assert (game.score, game.moves, game.seed) == (model.score, model.moves, model.seed)
        assert game.won is model.won
        assert game.over is ref_over(model.cells, rows, cols)
        if model.spawned is not None:
            assert game.spawned == divmod(model.spawned, cols)


# --------------------------------------------------------------------------
# Spawns
# --------------------------------------------------------------------------


def test_start_has_exactly_two_tiles() -> None:
    for rows, cols in ((2, 2), (4, 4), (2, 10), (10, 10)):
        for seed in range(200):
            game = Game(rows, cols, 2048, seed)
            tiles = [v for v in game.cells if v]
            assert len(tiles) == 2 and set(tiles) <= {2, 4}
            assert (game.score, game.moves, game.won, game.over, game.can_undo) == (0, 0, False, False, False)
            assert game.spawned is not None and game.board[game.spawned[0]][game.spawned[1]] in (2, 4)


def test_spawn_statistics_on_the_start_board() -> None:
    n = 20000
    values: Counter[int] = Counter()
    first_cell: Counter[int] = Counter()
    for seed in range(n):
        game = Game(4, 4, 2048, seed)
        cells = game.cells
        assert game.spawned is not None
        second = game.spawned[0] * 4 + game.spawned[1]
        (first,) = [i for i, v in enumerate(cells) if v and i != second]
        first_cell[first] += 1
        values.update(v for v in cells if v)
    draws = 2 * n
    # Fraction of 4s: binomial with p = 0.1; allow 5 standard deviations.
    p = 0.1
    sigma = math.sqrt(p * (1 - p) / draws)  # 0.0015 for 40000 draws
    assert abs(values[4] / draws - p) < 5 * sigma
    assert set(values) == {2, 4}
    # The first tile lands on any of the 16 empty cells uniformly: Pearson's
    # chi-square has 15 degrees of freedom (mean 15, sd sqrt(30) = 5.5); a
    # bound of mean + 6 sd (~48) is beyond its 99.99th percentile (~44).
    expected = n / 16
    chi2 = sum((first_cell[i] - expected) ** 2 / expected for i in range(16))
    assert len(first_cell) == 16
    assert chi2 < 15 + 6 * math.sqrt(30)


def test_spawn_after_a_move_is_uniform_over_scattered_empty_cells() -> None:
    # After LEFT this board's empty cells are (0,1), (0,2) and (2,2): flat 1, 2, 8.
    board = [[0, 2, 0], [4, 8, 16], [32, 0, 64]]
    n = 6000
    cells_hit: Counter[int] = Counter()
    fours = 0
    for seed in range(n):
        game = game_with(board, seed=seed)
        assert game.move(Direction.LEFT)
        assert game.spawned is not None
        index = game.spawned[0] * 3 + game.spawned[1]
        cells_hit[index] += 1
        fours += game.cells[index] == 4
    assert set(cells_hit) == {1, 2, 8}
    expected = n / 3
    chi2 = sum((cells_hit[i] - expected) ** 2 / expected for i in (1, 2, 8))
    # 2 degrees of freedom: P(chi2 > 18.4) = 1e-4.
    assert chi2 < 18.4
    sigma = math.sqrt(0.1 * 0.9 / n)
    assert abs(fours / n - 0.1) < 5 * sigma


def test_no_spawn_and_no_draw_when_move_is_noop_on_full_board() -> None:
    game = game_with([[2, 4], [8, 16]])
    assert game.over
    rng = game.rng_state
    for direction in DIRECTIONS:
        assert game.move(direction) is False
    assert game.rng_state == rng and game.moves == 0


# --------------------------------------------------------------------------
# Won and over
# --------------------------------------------------------------------------


def test_won_when_a_merge_reaches_the_goal_and_stays() -> None:
    game = game_with([[4, 4, 0, 0], [0, 0, 0, 0], [2, 0, 0, 0], [0, 0, 0, 0]], goal=8)
    assert not game.won
    assert game.move(Direction.RIGHT)
    assert game.board[0][3] == 8
    assert game.won
    # keep playing: won stays, whatever happens next
    rng = random.Random(1)
    for _ in range(40):
        game.move(rng.choice(DIRECTIONS))
        assert game.won
    # undoing back to before the winning move clears it
    while game.can_undo:
        game.undo()
    assert not game.won


def test_not_won_below_goal_and_won_above_goal() -> None:
    game = game_with([[2, 2], [0, 0]], goal=8)
    assert game.move(Direction.LEFT) and not game.won
    game = game_with([[8, 8], [0, 0]], goal=8)  # a merge past the goal also wins
    assert game.move(Direction.LEFT) and game.won


def test_over_exactly_when_no_direction_changes_the_board() -> None:
    rng = random.Random(5)
    seen_over = 0
    for seed in range(150):
        rows, cols = rng.choice(((2, 2), (2, 3), (3, 2), (3, 3)))
        game = Game(rows, cols, 2**31, seed)
        for _ in range(400):
            game.move(rng.choice(DIRECTIONS))
            assert game.over is ref_over(list(game.cells), rows, cols)
            if game.over:
                seen_over += 1
                before = state(game)
                assert not any(game.move(d) for d in DIRECTIONS)
                assert state(game) == before
                break
    assert seen_over > 100  # the loop did reach game over, many times


def test_over_after_the_winning_move() -> None:
    # LEFT makes 8 (the goal) and the spawn (2 or 4) lands on the last hole:
    # 8 x / 16 32 has no equal neighbours, so the game is won and over.
    game = game_with([[4, 4], [16, 32]], goal=8)
    assert game.move(Direction.LEFT)
    assert game.won and game.over


# --------------------------------------------------------------------------
# Determinism and seeds
# --------------------------------------------------------------------------


def play(game: Game, actions: Sequence[str]) -> list[tuple[object, ...]]:
    trace = []
    for action in actions:
        if action == "undo":
            game.undo()
        elif action == "restart":
            game.restart()
        else:
            game.move(action)
        trace.append(state(game))
    return trace


def test_same_seed_same_moves_same_game() -> None:
    rng = random.Random(11)
    actions = [rng.choice(["up", "down", "left", "right", "right", "undo", "restart"]) for _ in range(600)]
    for seed in (0, 1, 123456789, 2**64 - 1, 2**64, 2**200):
        assert play(Game(5, 4, 2048, seed), actions) == play(Game(5, 4, 2048, seed), actions)


def test_different_seeds_give_different_games() -> None:
    rng = random.Random(2)
    actions = [rng.choice(["up", "down", "left", "right"]) for _ in range(30)]
    boards = [tuple(s[0] for s in play(Game(4, 4, 2048, seed), actions)) for seed in range(100)]
    assert len(set(boards)) >= 95
    assert len({Game(4, 4, 2048, seed).rng_state for seed in range(1000)}) == 1000


@pytest.mark.parametrize("small", [0, 1, 7, 2**63])
def test_seeds_above_2_64_work_and_differ_from_seed_mod_2_64(small: int) -> None:
    big = small + 2**64
    assert big % 2**64 == small
    a, b = Game(4, 4, 2048, big), Game(4, 4, 2048, small)
    assert a.seed == big
    assert a.rng_state != b.rng_state
    actions = ["left", "up", "right", "down"] * 10
    assert play(a, actions) != play(b, actions)
    model = RefGame(4, 4, 2048, big)
    assert list(Game(4, 4, 2048, big).cells) == model.cells


def test_seeds_up_to_the_documented_digit_limit_work_and_longer_ones_are_refused() -> None:
    # Seeds are hashed from their decimal digits, so they stay within
    # MAX_SEED_DIGITS (CPython refuses int<->str beyond 4300 digits).
    seed = 10**MAX_SEED_DIGITS - 1
    game = Game(4, 4, 2048, seed)
    assert game.seed == seed
    assert len([v for v in game.cells if v]) == 2
    assert seed_state(seed) != seed_state(seed - 1)
    with pytest.raises(ValueError, match="digits"):
        Game(4, 4, 2048, 10**MAX_SEED_DIGITS)
    with pytest.raises(ValueError, match="digits"):
        Game(4, 4, 2048, 10**5000 + 1)


def test_negative_seed_rejected() -> None:
    with pytest.raises(ValueError):
        Game(4, 4, 2048, -1)


def test_splitmix64_pinned_outputs() -> None:
    # Published first outputs of SplitMix64 for state 0 (e.g. the test vectors
    # quoted alongside Vigna's splitmix64.c and in many ports).
    published = [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F]
    ref = RefSplitMix64(0)
    assert [ref.next() for _ in range(3)] == published
    rng = SplitMix64(0)
    assert [rng.next() for _ in range(3)] == published
    assert rng.state == 3 * 0x9E3779B97F4A7C15 % 2**64


@given(st.integers(0, 2**80))
def test_splitmix64_matches_reference(state0: int) -> None:
    ref, rng = RefSplitMix64(state0), SplitMix64(state0)
    assert [rng.next() for _ in range(5)] == [ref.next() for _ in range(5)]
    assert rng.state == ref.x


def test_seed_state_pinned_to_sha256_of_decimal_digits() -> None:
    for seed in (0, 7, 2**64, 10**30):
        assert seed_state(seed) == ref_seed_state(seed)
        assert 0 <= seed_state(seed) < 2**64


@pytest.mark.parametrize("seed", [0, 7, 42, 2**64 + 3])
def test_start_board_pinned_to_documented_algorithm(seed: int) -> None:
    model = RefGame(4, 4, 2048, seed)
    game = Game(4, 4, 2048, seed)
    assert list(game.cells) == model.cells
    assert game.rng_state == model.rng.x


# --------------------------------------------------------------------------
# Undo and restart
# --------------------------------------------------------------------------


def test_undo_on_fresh_game_returns_false() -> None:
    game = Game(4, 4, 2048, 9)
    before = state(game)
    assert not game.can_undo
    assert game.undo() is False
    assert state(game) == before


def test_undo_restores_and_redo_replays_same_spawn() -> None:
    game = Game(4, 4, 2048, 21)
    rng = random.Random(21)
    for _ in range(25):
        game.move(rng.choice(DIRECTIONS))
    for direction in DIRECTIONS:
        before = state(game)
        if not game.move(direction):
            assert state(game) == before
            continue
        after = state(game)
        assert game.undo() is True
        assert state(game) == before
        assert game.move(direction) is True
        assert state(game) == after  # same spawn, same cell, same value


def test_undo_at_least_100_deep() -> None:
    assert UNDO_DEPTH >= 100
    game = Game(6, 6, 2**31, 4)
    rng = random.Random(4)
    history = [state(game)]
    while len(history) < 151:
        if game.move(rng.choice(DIRECTIONS)):
            history.append(state(game))
        assert not game.over
    for expected in reversed(history[:-1]):
        assert game.undo() is True
        assert state(game) == expected
    assert game.undo() is False
    assert state(game) == history[0]


def test_restart_is_undoable_and_new_seed() -> None:
    game = Game(4, 4, 2048, 33)
    for d in ("left", "up", "right", "down", "left"):
        game.move(d)
    before = state(game)
    game.restart()
    assert game.seed != 33
    assert (game.score, game.moves, game.won, game.over) == (0, 0, False, False)
    assert len([v for v in game.cells if v]) == 2
    # The new seed is the old generator's next draw (documented in Game).
    expected_seed = RefSplitMix64(before[6]).next()  # type: ignore[arg-type]
    assert game.seed == expected_seed
    assert list(game.cells) == RefGame(4, 4, 2048, expected_seed).cells
    assert game.undo() is True
    assert state(game) == before


# --------------------------------------------------------------------------
# Direction and validation
# --------------------------------------------------------------------------


def test_direction_accepts_any_case_and_rejects_unknown() -> None:
    assert Direction("left") is Direction.LEFT
    assert Direction("LEFT") is Direction.LEFT
    assert Direction("Up") is Direction.UP
    for bad in ("north", "", "lef", "left "):
        with pytest.raises(ValueError):
            Direction(bad)
    with pytest.raises(ValueError):
        Game().move("north")


@pytest.mark.parametrize(
    "kwargs",
    [
        {"rows": 1},
        {"rows": 11},
        {"cols": 1},
        {"cols": 11},
        {"rows": 0},
        {"goal": 6},
        {"goal": 12},
        {"goal": 4},
        {"goal": 2**32},
        {"goal": 0},
        {"goal": -8},
    ],
)
def test_invalid_sizes_and_goals(kwargs: dict[str, int]) -> None:
    with pytest.raises(ValueError):
        Game(**kwargs)


@pytest.mark.parametrize(
    "rows, cols, goal", [(MIN_SIDE, MIN_SIDE, MIN_GOAL), (MAX_SIDE, MAX_SIDE, MAX_GOAL), (2, 10, 16), (10, 2, 1024)]
)
def test_valid_extremes(rows: int, cols: int, goal: int) -> None:
    game = Game(rows, cols, goal, 1)
    assert (game.rows, game.cols, game.goal) == (rows, cols, goal)
    assert len(game.board) == rows and all(len(r) == cols for r in game.board)
    assert (MIN_SIDE, MAX_SIDE, MIN_GOAL, MAX_GOAL) == (2, 10, 8, 2**31)


def test_undo_reaches_back_1000_moves_as_the_readme_promises() -> None:
    # Moves and restarts are both steps undo takes back, one at a time.
    game = Game(4, 4, 2048, seed=11)
    boards = [game.board]
    rng = random.Random(5)
    while len(boards) <= 1005:
        if game.over:
            game.restart()
            boards.append(game.board)
        elif game.move(rng.choice(DIRECTIONS)):
            boards.append(game.board)
    for back in range(1, 1001):
        assert game.undo(), f"undo {back} failed"
        assert game.board == boards[-1 - back]
    assert not game.undo()  # the 1001st step back is gone


def test_from_board_sets_up_a_game_in_the_middle() -> None:
    game = Game.from_board([[2, 2, 0], [0, 4, 0]], goal=8, seed=3, score=40, moves=7)
    assert (game.rows, game.cols, game.goal, game.score, game.moves) == (2, 3, 8, 40, 7)
    assert game.board == ((2, 2, 0), (0, 4, 0))
    assert game.spawned is None and not game.can_undo and not game.won and not game.over
    assert game.rng_state == Game(2, 3, 8, seed=3).rng_state
    assert game.move(Direction.LEFT) and game.board[0][0] == 4 and game.score == 44
    assert Game.from_board([[8, 2], [4, 2]], goal=8).won
    assert Game.from_board([[8, 2], [4, 16]], goal=8, won=False).over


@pytest.mark.parametrize(
    "board", [[[2, 3], [0, 0]], [[2, 2], [0]], [[1, 0], [0, 0]], [[-2, 0], [0, 0]], [[2] * 11] * 2]
)
def test_from_board_refuses_what_no_game_holds(board: list[list[int]]) -> None:
    with pytest.raises(ValueError):
        Game.from_board(board)


@settings(max_examples=300, deadline=None)
@given(
    st.integers(2, 5),
    st.integers(2, 5),
    st.sampled_from(DIRECTIONS),
    st.lists(st.sampled_from([0, 0, 0, 2, 2, 4, 4, 8, 16]), min_size=25, max_size=25),
)
def test_trace_move_agrees_with_the_slide(rows: int, cols: int, direction: Direction, pool: list[int]) -> None:
    from ansi2048.game.engine import trace_move

    cells = pool[: rows * cols]
    slides = trace_move(cells, rows, cols, direction)
    expected, _, _ = ref_move(cells, rows, cols, direction)
    assert sorted(s.start for s in slides) == [i for i, v in enumerate(cells) if v]  # every tile, once
    landed = [0] * len(cells)
    for slide in slides:
        assert slide.value == cells[slide.start]
        landed[slide.end] += slide.value
    assert landed == expected
    for end in {s.end for s in slides}:
        arriving = [s for s in slides if s.end == end]
        assert len(arriving) in (1, 2)
        assert all(s.merged == (len(arriving) == 2) for s in arriving)
