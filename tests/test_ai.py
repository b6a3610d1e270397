"""The AI: legal, deterministic moves; the bitboard agrees with the engine; the
weights load, and a damaged or missing file falls back with one warning."""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import struct
import warnings
import zlib
from pathlib import Path
from typing import Callable, List, Optional, Tuple

import pytest
from hypothesis import given, settings, strategies as st

from ansi2048.ai import DEFAULT_WEIGHTS, Player, WeightsWarning, best_move, heuristic, search
from ansi2048.ai.bitboard import decode, empty_cells, encode, moves, row_tables, transpose
from ansi2048.ai.ntuple import (
    MAGIC,
    TUPLES,
    Network,
    WeightsError,
    load_network,
    pack_weights,
    reference_value,
    symmetries,
    unfold,
    unpack_weights,
)
from ansi2048.game.engine import Direction, Game, _geometry, slide_lines

Board = Tuple[Tuple[int, ...], ...]
ORDER = (Direction.UP, Direction.DOWN, Direction.LEFT, Direction.RIGHT)
TILES = [0, 0, 0, 2, 2, 4, 8, 16, 32, 64, 128, 1024, 2048, 32768]

# A small heuristic budget keeps the property tests fast; legality and
# determinism do not depend on the budget.
FAST = Player(node_budget=3000)


def after(board: Board, direction: Direction) -> Tuple[List[int], bool]:
    rows, cols = len(board), len(board[0])
    cells = [v for row in board for v in row]
    lines, _ = _geometry(rows, cols)
    changed, _, _ = slide_lines(cells, lines[direction])
    return cells, changed


def boards(rows: int, cols: int) -> st.SearchStrategy[Board]:
    row = st.tuples(*[st.sampled_from(TILES)] * cols)
    return st.tuples(*[row] * rows)


def shaped_boards() -> st.SearchStrategy[Board]:
    return st.tuples(st.integers(2, 7), st.integers(2, 7)).flatmap(lambda s: boards(*s))


def test_bitboard_moves_match_the_engine() -> None:
    rng = random.Random(7)
    tables = row_tables()
    lines, _ = _geometry(4, 4)
    for _ in range(2000):
        # Without 32768: two of them do not merge in 4-bit cells (documented; such boards go elsewhere).
        cells = [rng.choice(TILES[:-1]) for _ in range(16)]
        b = encode(cells)
        assert b is not None and decode(b) == cells
        assert transpose(transpose(b)) == b
        for direction, (moved, points) in zip(ORDER, moves(b, tables)):
            expected = list(cells)
            _, gained, _ = slide_lines(expected, lines[direction])
            assert decode(moved) == expected
            assert points == gained


@settings(max_examples=150, deadline=None)
@given(shaped_boards())
def test_heuristic_moves_match_the_engine(board: Board) -> None:
    ranks = heuristic.to_ranks(board)
    for direction, (moved, _), slid in zip(ORDER, heuristic.moves(ranks), heuristic.afterstates(ranks)):
        cells, _ = after(board, direction)
        assert [1 << r if r else 0 for row in moved for r in row] == cells
        assert [1 << r if r else 0 for row in slid for r in row] == cells  # the search's own, without points
        assert type(slid) is tuple and all(type(row) is tuple for row in slid)  # so equal boards compare equal


def test_encode_refuses_tiles_above_32768() -> None:
    assert encode([65536] + [0] * 15) is None


@settings(max_examples=60, deadline=None)
@given(shaped_boards())
def test_never_suggests_a_move_that_changes_nothing(board: Board) -> None:
    move = FAST.best_move(board)
    legal = [d for d in ORDER if after(board, d)[1]]
    if legal:
        assert move in legal
    else:
        assert move is None


@settings(max_examples=25, deadline=None)
@given(boards(4, 4))
def test_4x4_network_moves_are_legal(board: Board) -> None:
    move = best_move(board)
    legal = [d for d in ORDER if after(board, d)[1]]
    assert (move in legal) if legal else move is None


@pytest.mark.parametrize("shape", [(3, 3), (5, 5), (6, 6), (2, 6), (3, 5), (2, 2), (10, 10), (4, 4)])
def test_rectangular_games_get_legal_moves(shape: Tuple[int, int]) -> None:
    game = Game(*shape, seed=3)
    for _ in range(15):
        if game.over:
            break
        move = FAST.best_move(game)
        assert move is not None
        assert game.move(move), f"{move} changed nothing on {game.board}"


def test_takes_the_winning_merge() -> None:
    board = ((2, 4, 2, 4), (1024, 1024, 8, 2), (4, 2, 16, 8), (2, 16, 4, 2))
    move = best_move(board, goal=2048)
    assert move in (Direction.LEFT, Direction.RIGHT)
    assert 2048 in after(board, move)[0]
    # On a 3x5 board too, vertically, and the goal comes from the game.
    tall = ((2, 4, 8, 16, 32), (4, 512, 2, 4, 2), (8, 512, 16, 2, 4))
    move = Player(node_budget=3000).best_move(tall, goal=1024)
    assert move in (Direction.UP, Direction.DOWN)


def test_game_over_gives_none() -> None:
    full = ((2, 4, 2, 4), (4, 2, 4, 2), (2, 4, 2, 4), (4, 2, 4, 2))
    assert best_move(full) is None
    assert FAST.best_move(((2, 4, 8), (4, 8, 2))) is None
    game = Game(2, 2, seed=0)
    while not game.over:
        move = FAST.best_move(game)
        assert move is not None
        game.move(move)
    assert FAST.best_move(game) is None


def test_deterministic() -> None:
    rng = random.Random(11)
    for shape in [(4, 4), (3, 5), (5, 5)]:
        for _ in range(5):
            board = tuple(tuple(rng.choice(TILES[:-1]) for _ in range(shape[1])) for _ in range(shape[0]))
            first = Player(node_budget=5000).best_move(board)
            assert Player(node_budget=5000).best_move(board) == first
            assert Player(node_budget=5000).best_move(board) == first


def test_tiles_above_32768_on_4x4_use_the_exact_search() -> None:
    board = ((65536, 65536, 2, 0), (4, 2, 4, 2), (2, 4, 2, 4), (4, 2, 4, 2))
    move = FAST.best_move(board)
    assert move in (Direction.LEFT, Direction.RIGHT)


def test_time_budget_with_an_injected_clock() -> None:
    ticks = iter(range(10**6))
    player = Player(time_budget=5.0, clock=lambda: float(next(ticks)))
    board = ((2, 0, 0, 2), (4, 0, 8, 0), (0, 2, 0, 0))
    move = player.best_move(board)
    assert move is not None and after(board, move)[1]
    board4 = ((2, 0, 0, 2), (4, 0, 8, 0), (0, 2, 0, 0), (0, 0, 0, 4))
    move = player.best_move(board4)
    assert move is not None and after(board4, move)[1]


def test_shipped_weights_load_and_are_small() -> None:
    assert os.path.getsize(DEFAULT_WEIGHTS) <= 5_000_000
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        player = Player()
        assert player.network() is not None
    assert player.warning is None


def test_folded_evaluator_matches_the_definition(arbitrary_weights: Tuple[List[List[float]], Path]) -> None:
    rng = random.Random(5)
    tables, path = arbitrary_weights
    direct = Network({"tuples": [list(t) for t in TUPLES]}, [({"scale": 1.0, "from_rank": 0}, tables)])
    packed = load_network(path.read_bytes())
    step = packed.scales[0]
    for _ in range(100):
        b = encode([rng.choice(TILES[:-1]) for _ in range(16)])
        assert b is not None
        exact = reference_value(tables, b)
        assert direct.value(b) == exact
        assert direct.value(b, transpose(b)) == exact
        # 17 int16-rounded sums: each off by at most half a quantisation step.
        assert abs(packed.value(b) - exact) <= 17 * step / 2 + 1e-6


def test_damaged_weights_fall_back_with_a_warning(tmp_path: Path) -> None:
    damaged = tmp_path / "damaged.bin"
    shutil.copy(DEFAULT_WEIGHTS, damaged)
    data = bytearray(damaged.read_bytes())
    data[len(data) // 2] ^= 0x40
    damaged.write_bytes(bytes(data))
    player = Player(weights=str(damaged), node_budget=3000)
    board = ((2, 4, 0, 0), (0, 0, 0, 0), (0, 2, 0, 0), (0, 0, 0, 0))
    with pytest.warns(WeightsWarning, match="checksum"):
        move = player.best_move(board)
    assert move is not None and after(board, move)[1]
    assert player.warning is not None and "checksum" in player.warning
    # Once: a second player on the same file gets the reason but no new warning.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again = Player(weights=str(damaged), node_budget=3000)
        assert again.best_move(board) is not None
        assert again.warning == player.warning


def test_missing_weights_fall_back_with_a_warning(tmp_path: Path) -> None:
    player = Player(weights=str(tmp_path / "nowhere.bin"), node_budget=3000)
    board = ((2, 2, 0, 0), (0, 0, 0, 0), (0, 0, 0, 0), (0, 0, 0, 4))
    with pytest.warns(WeightsWarning):
        move = player.best_move(board)
    assert move is not None and after(board, move)[1]
    assert player.network() is None and player.warning


def test_truncated_or_foreign_files_fall_back(tmp_path: Path) -> None:
    for name, data in [("short.bin", b"A2048NT1"), ("foreign.bin", b"\x89PNG" + bytes(100))]:
        path = tmp_path / name
        path.write_bytes(data)
        with pytest.warns(WeightsWarning):
            assert Player(weights=str(path)).network() is None


# -- weights files made to pass the checksum (issue 30) -----------------------------


def crafted(header: object, payload: bytes, head: Optional[bytes] = None) -> bytes:
    """A weights file whose checksum is right for whatever it holds: the JSON
    of ``header`` (or the raw bytes ``head``), then ``payload``."""
    head = json.dumps(header).encode("utf-8") if head is None else head
    body = struct.pack("<I", len(head)) + head + payload
    return MAGIC + hashlib.sha256(body).digest() + body


def zeros_bomb(mebibytes: int) -> bytes:
    """A zlib stream (checksum and all) that inflates to ``mebibytes`` MiB of
    zeros, made in well under a second: one deflate block of a MiB of zeros
    refers only to zeros before it, so it is repeated, not deflated again."""
    chunk = bytes(1 << 20)
    deflate = zlib.compressobj(9)
    first = deflate.compress(chunk) + deflate.flush(zlib.Z_SYNC_FLUSH)
    again = deflate.compress(chunk) + deflate.flush(zlib.Z_SYNC_FLUSH)
    end = deflate.flush()[:-4]  # the last block, without the checksum of 2 MiB
    adler = 1
    for _ in range(mebibytes):
        adler = zlib.adler32(chunk, adler)
    return first + again * (mebibytes - 1) + end + struct.pack(">I", adler)


def test_the_bomb_is_what_it_says() -> None:
    assert zlib.decompress(zeros_bomb(5)) == bytes(5 << 20)


ONE_TABLE = {"tuples": [[0, 1, 2, 3]], "stages": [{"from_rank": 0, "scale": 1.0, "tables": 1}]}
ONE_PAYLOAD = zlib.compress(bytes(2 * 65536))
CRAFTED = {
    "header nested 200,000 deep": crafted(None, ONE_PAYLOAD, b"[" * 200_000 + b"]" * 200_000),
    "header longer than the file": crafted(None, b"", b'{"tuples": []}')[:-4],
    "header not UTF-8": crafted(None, ONE_PAYLOAD, b'{"tuples": "\xff"}'),
    "a tuple's cell off the board": crafted(dict(ONE_TABLE, tuples=[[0, 1, 2, 99]]), ONE_PAYLOAD),
    "a billion tables announced": crafted(
        dict(ONE_TABLE, stages=[{"from_rank": 0, "scale": 1.0, "tables": 10**9}]), ONE_PAYLOAD
    ),
    "a scale that is no number": crafted(
        dict(ONE_TABLE, stages=[{"from_rank": 0, "scale": float("nan"), "tables": 1}]), ONE_PAYLOAD
    ),
    "fewer tables than tuples": crafted(
        dict(ONE_TABLE, tuples=[[0, 1, 2, 3], [4, 5, 6, 7]], stages=[{"from_rank": 0, "scale": 1.0, "tables": 1}]),
        ONE_PAYLOAD,
    ),
    "a payload of 2 GiB for one table": crafted(ONE_TABLE, zeros_bomb(2048)),
    "a payload that goes on after its weights": crafted(ONE_TABLE, ONE_PAYLOAD + b"more"),
}


@pytest.mark.parametrize("kind", sorted(CRAFTED))
def test_crafted_weights_are_one_warning_and_heuristic_play(tmp_path: Path, kind: str) -> None:
    import tracemalloc

    path = tmp_path / "crafted.bin"
    path.write_bytes(CRAFTED[kind])
    with pytest.raises(WeightsError):
        load_network(CRAFTED[kind])
    board = ((2, 4, 0, 0), (0, 0, 0, 0), (0, 2, 0, 0), (0, 0, 0, 0))
    player = Player(weights=str(path), node_budget=3000)
    tracemalloc.start()
    try:
        with pytest.warns(WeightsWarning, match="unusable"):
            assert player.network() is None
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert player.warning is not None and player.warning.split("\n")[1:] == [str(path)]  # the path alone
    move = player.best_move(board)
    assert move is not None and after(board, move)[1]
    # Inflated no further than the one table announced (128 KiB): never the 2 GiB.
    assert peak < 32 << 20


def test_importing_the_game_does_not_import_the_ai() -> None:
    import subprocess
    import sys

    code = "import sys, ansi2048, ansi2048.game.engine; print('ansi2048.ai' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, encoding="utf-8", check=True)
    assert out.stdout.strip() == "False"
    code = "import sys, ansi2048.ai; print('ansi2048.ai.ntuple' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, encoding="utf-8", check=True)
    assert out.stdout.strip() == "False"


# -- the search, against definitions --------------------------------------------


@pytest.fixture(scope="module")
def arbitrary_weights(tmp_path_factory: pytest.TempPathFactory) -> Tuple[List[List[float]], Path]:
    """Per-tuple tables of arbitrary weights (cheaper than 327,680 random
    draws), and a weights file of them; made once, folding costs seconds."""
    tables = [[float((i * 2654435761 + 7919 * t) % 2001 - 1000) for i in range(65536)] for t in range(len(TUPLES))]
    path = tmp_path_factory.mktemp("weights") / "arbitrary.bin"
    path.write_bytes(pack_weights([(0, tables)], [{}]))
    return tables, path


def test_the_8_symmetries_are_distinct_and_the_value_ignores_them(
    arbitrary_weights: Tuple[List[List[float]], Path],
) -> None:
    maps = symmetries()
    assert len(maps) == 8 and all(sorted(m) == list(range(16)) for m in maps)
    asymmetric = [2**k if k else 0 for k in (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0, 0, 1, 0, 3)]
    images = {tuple(asymmetric[m.index(cell)] for cell in range(16)) for m in maps}
    assert len(images) == 8  # the 8 maps are 8 different symmetries, not 4 twice
    tables, path = arbitrary_weights
    folded = load_network(path.read_bytes())
    for cells in images:
        b = encode(list(cells))
        assert b is not None
        # The value sums each tuple over all 8 symmetries, so every image of a
        # board is worth the same; with 4 of them dropped it would not be.
        assert reference_value(tables, b) == pytest.approx(reference_value(tables, encode(asymmetric) or 0))
        assert folded.value(b) == pytest.approx(folded.value(encode(asymmetric) or 0), abs=1e-6)


class StubNetwork:
    """A value that sees every cell and checks the transpose it is handed."""

    def __init__(self) -> None:
        self.calls = 0

    def value(self, b: int, t: Optional[int] = None) -> float:
        self.calls += 1
        if t is not None:
            assert t == transpose(b)
        return float(sum(((b >> (4 * i)) & 0xF) * (3 + 5 * i - (i % 3) * 7) for i in range(16)))

    def evaluator(self, b: int, moves: int) -> Callable[[int, Optional[int]], float]:
        return self.value


def reference_choice(b: int, net: StubNetwork, depth: int) -> Tuple[int, float]:
    """Expectimax by definition: max over moves of points + the worth of the
    afterstate; an afterstate at depth 0 is worth the network's value, above
    that the mean over empty cells of 0.9 x (a 2 there) + 0.1 x (a 4 there)."""
    tables = row_tables()

    def node(board: int, depth: int) -> Tuple[int, float]:
        options = [(i, points + worth(after, depth)) for i, (after, points) in enumerate(moves(board, tables))]
        options = [(i, v) for i, v in options if moves(board, tables)[i][0] != board]
        if not options:
            return -1, 0.0
        return max(options, key=lambda option: (option[1], -option[0]))

    def worth(after: int, depth: int) -> float:
        if depth == 0:
            return net.value(after)
        spawns = [
            0.9 * node(after | (1 << (4 * c)), depth - 1)[1] + 0.1 * node(after | (2 << (4 * c)), depth - 1)[1]
            for c in range(16)
            if not (after >> (4 * c)) & 0xF
        ]
        return sum(spawns) / len(spawns)

    return node(b, depth)


def crowded_boards(count: int, empty: int, seed: int) -> List[int]:
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        cells = [rng.choice([2, 4, 8, 16, 32, 64, 128, 256]) for _ in range(16)]
        for cell in rng.sample(range(16), empty):
            cells[cell] = 0
        b = encode(cells)
        assert b is not None
        out.append(b)
    return out


@pytest.mark.parametrize("depth", [0, 1, 2])
def test_search_is_the_reference_expectimax(depth: int) -> None:
    net = StubNetwork()
    tables = row_tables()
    for b in crowded_boards(12 if depth < 2 else 4, 3, seed=depth):
        move, worth = search.choose(b, net, tables, depth)  # type: ignore[arg-type]
        expected_move, expected = reference_choice(b, net, depth)
        assert worth == pytest.approx(expected, rel=1e-12)
        assert move == expected_move


def test_depth_rule_on_crafted_boards() -> None:
    # Level 1: one chance level; two where 5 cells or fewer are empty.
    # Level 2: one more where 5 or fewer are empty.
    for empty, level1, level2 in [(16, 1, 1), (9, 1, 1), (6, 1, 1), (5, 2, 3), (3, 2, 3), (1, 2, 3), (0, 2, 3)]:
        (b,) = crowded_boards(1, empty, seed=empty)
        assert search.search_depth(b, 1) == level1, empty
        assert search.search_depth(b, 2) == level2, empty


def test_the_player_searches_as_deep_as_the_rule_says(arbitrary_weights: Tuple[List[List[float]], Path]) -> None:
    player = Player(weights=str(arbitrary_weights[1]))
    net = player.network()
    assert net is not None
    tables = row_tables()
    deeper = 0
    for b in crowded_boards(12, 4, seed=11):
        board = tuple(tuple(decode(b)[4 * r : 4 * r + 4]) for r in range(4))
        expected = search.choose(b, net, tables, search.search_depth(b, 1))[0]
        assert player.best_move(board) == ORDER[expected]
        deeper += expected != search.choose(b, net, tables, 1)[0]
    assert deeper  # boards where a depth-1 player would have moved otherwise


def test_ai_time_is_a_cap_checked_inside_the_search(monkeypatch: pytest.MonkeyPatch) -> None:
    # The clock is the number of network evaluations so far: a cap of 10 must
    # stop the search within one chance node of them (at depth 1, at most
    # 2 spawns x 15 empty cells x 4 moves), however deep the default would go.
    spent = [0]
    value = Network.value

    def counted(self: Network, b: int, t: Optional[int] = None) -> float:
        spent[0] += 1
        return value(self, b, t)

    monkeypatch.setattr(Network, "value", counted)
    for empty in (3, 8, 14):
        for b in crowded_boards(5, empty, seed=empty):
            board = tuple(tuple(decode(b)[4 * r : 4 * r + 4]) for r in range(4))
            spent[0] = 0
            player = Player(level=2, time_budget=10, clock=lambda: float(spent[0]))
            assert player.network() is not None
            spent[0] = 0
            move = player.best_move(board)
            assert move is not None and after(board, move)[1]
            assert spent[0] <= 10 + 2 * 15 * 4


def test_a_generous_cap_searches_deeper_than_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    ticks = [0.0]
    player = Player(time_budget=1000.0, clock=lambda: ticks[0])
    (b,) = crowded_boards(1, 3, seed=5)
    board = tuple(tuple(decode(b)[4 * r : 4 * r + 4]) for r in range(4))
    depths: List[int] = []
    choose = search.choose

    def recorded(*args: object, **kwargs: object) -> Tuple[int, float]:
        depths.append(args[3])  # type: ignore[arg-type]
        return choose(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(search, "choose", recorded)
    assert player.best_move(board) is not None
    assert depths == [0, 1, 2, 3, 4]


def staged_network(early: List[List[float]]) -> Network:
    """Four stages (from 2048, 4096, 8192) whose tables differ by a factor."""
    stages = [({"scale": 1.0, "from_rank": rank}, [[w * factor for w in t] for t in early]) for rank, factor in STAGED]
    return Network({"tuples": [list(t) for t in TUPLES]}, stages)


STAGED = ((0, 1.0), (11, -0.5), (12, 2.0), (13, 0.25))


def test_each_stage_values_the_boards_with_its_big_tile(arbitrary_weights: Tuple[List[List[float]], Path]) -> None:
    early, _ = arbitrary_weights
    net = staged_network(early)
    assert net.stage_ranks == (0, 11, 12, 13)
    rng = random.Random(8)
    for biggest in (1024, 2048, 4096, 8192, 32768):
        stage = sum(1 for rank, _ in STAGED[1:] if biggest >= 1 << rank)
        factor = STAGED[stage][1]
        for _ in range(20):
            cells = [rng.choice(TILES[:-6]) for _ in range(16)]
            cells[rng.randrange(16)] = biggest
            b = encode(cells)
            assert b is not None
            assert net.stage(b) == stage
            assert net.value(b) == pytest.approx(factor * reference_value(early, b))


def test_the_search_evaluator_values_every_board_within_reach_as_the_network(
    arbitrary_weights: Tuple[List[List[float]], Path],
) -> None:
    # The search takes one stage's evaluator where no later stage can begin
    # within its moves: over random games walked past each stage's first
    # tile, every afterstate within reach gets the network's own value.
    early, _ = arbitrary_weights
    net = staged_network(early)
    tables = row_tables()
    rng = random.Random(12)
    checked = 0
    for _ in range(30):
        cells = [rng.choice((0, 0, 2, 4, 8)) for _ in range(16)]
        cells[rng.randrange(16)] = 1 << rng.choice((9, 10, 11, 12))
        root = encode(cells)
        assert root is not None
        for reach in (1, 2, 3):
            value = net.evaluator(root, reach)
            frontier = [root]
            for _ in range(reach):
                nxt = []
                for b in frontier:
                    for after, _points in moves(b, tables):
                        if after != b:
                            assert value(after, transpose(after)) == net.value(after)
                            checked += 1
                            empty = empty_cells(after)
                            if empty:
                                nxt.append(after | (rng.choice((1, 2)) << rng.choice(empty)))
                frontier = rng.sample(nxt, min(6, len(nxt)))
    assert checked > 1000


@pytest.mark.parametrize("rank", [rank for rank, _ in STAGED[1:]])
def test_the_search_evaluator_sees_a_stage_begin_on_the_very_next_move(
    arbitrary_weights: Tuple[List[List[float]], Path], rank: int
) -> None:
    # The boundary itself: the biggest tile is one rank short of a stage, and
    # one move (left, merging the two halves) reaches it.
    early, _ = arbitrary_weights
    net = staged_network(early)
    half = 1 << (rank - 1)
    root = encode([half, half, 0, 0, 2, 0, 0, 0, 4, 0, 0, 0, 8, 0, 0, 0])
    merged = encode([2 * half, 0, 0, 0, 2, 0, 0, 0, 4, 0, 0, 0, 8, 0, 0, 0])
    assert root is not None and merged is not None
    stage = [r for r, _ in STAGED].index(rank)
    value = net.evaluator(root, 1)
    assert value(merged, transpose(merged)) == pytest.approx(STAGED[stage][1] * reference_value(early, merged))


def test_a_weights_file_of_many_stages_loads(arbitrary_weights: Tuple[List[List[float]], Path]) -> None:
    early, _ = arbitrary_weights
    data = pack_weights([(rank, early) for rank, _ in STAGED], [{} for _ in STAGED])
    net = load_network(data)
    assert net.stage_ranks == (0, 11, 12, 13)
    with pytest.raises(WeightsError):
        Network({"tuples": [list(t) for t in TUPLES]}, [({"scale": 1.0, "from_rank": r}, early) for r in (0, 12, 11)])


def test_the_shipped_tables_unfold_exactly() -> None:
    # The trainer starts a stage from the shipped file: its per-tuple tables,
    # folded again, must give back the very weights shipped.
    _, stages = unpack_weights(Path(DEFAULT_WEIGHTS).read_bytes())
    stage, quantised = stages[0]
    scale = float(stage["scale"])
    tables = unfold([[q * scale for q in table] for table in quantised], stage["positions"])
    _, again = unpack_weights(pack_weights([(0, tables)], [{}]))
    assert again[0][1] == quantised
    assert again[0][0]["positions"] == stage["positions"]
