"""The AI's trainer (scripts/train_ai.py and its C loop): the same rules as
the game, and the same bytes from the same command, resumed or not.

The loop is compiled with the machine's C compiler; where there is none (the
Windows run under Wine), these tests are skipped: the trainer is a developer's
tool, never run by the game."""

from __future__ import annotations

import importlib.util
import random
import shutil
import subprocess
from pathlib import Path
from types import ModuleType
from typing import List

import pytest

from ansi2048.ai.bitboard import MAX_RANK, moves, row_tables
from ansi2048.ai.ntuple import TUPLES, load_network, reference_value
from ansi2048.game.spawns import SplitMix64, seed_state, spawn_draw

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "train_ai.py"

pytestmark = pytest.mark.skipif(
    not (shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")), reason="no C compiler on this machine"
)


@pytest.fixture(scope="module")
def trainer() -> ModuleType:
    spec = importlib.util.spec_from_file_location("train_ai", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def binary(trainer: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return trainer.build(tmp_path_factory.mktemp("build"))  # type: ignore[no-any-return]


def random_board(rng: random.Random) -> int:
    b = 0
    for cell in range(16):
        if rng.random() < 0.8:
            # Low ranks often, so rows merge; rank 15 sometimes (it never merges).
            rank = rng.choice((1, 1, 2, 2, 3, MAX_RANK, MAX_RANK - 1, rng.randint(1, MAX_RANK)))
            b |= rank << (4 * cell)
    return b


def test_the_c_loop_moves_scores_and_spawns_as_the_game(binary: Path) -> None:
    rng = random.Random(19)
    boards = [random_board(rng) for _ in range(3000)]
    boards += [0, 0x1111_1111_1111_1111, 0xFFFF_FFFF_FFFF_FFFF, 0x1234_5678_9ABC_DEF1, 0xFF00_FF00_0000_0000]
    state = seed_state(7)
    done = subprocess.run(
        [str(binary), "selftest", str(state)],
        input="".join(f"{b}\n" for b in boards),
        capture_output=True,
        text=True,
        check=True,
    )
    lines = done.stdout.splitlines()
    assert len(lines) == len(boards)
    tables = row_tables()
    generator = SplitMix64(state)
    for b, line in zip(boards, lines):
        fields = [int(x) for x in line.split()]
        expected: List[int] = [x for pair in moves(b, tables) for x in pair]
        assert fields[:8] == expected, f"board {b:016x}"
        empty = [shift for shift in range(0, 64, 4) if not (b >> shift) & 0xF]
        spawned = b
        if empty:
            nth, value = spawn_draw(generator.next(), len(empty))
            spawned = b | ((2 if value == 4 else 1) << empty[nth])
        assert fields[8] == spawned, f"spawn on board {b:016x}"


def run(trainer: ModuleType, build: Path, out: Path, *extra: str) -> int:
    argv = ["--seed", "5", "--tc", "--stages", "11,12", "--carousel", "--log-every", "100000"]
    return trainer.main([*argv, "--build-dir", str(build), "--out", str(out), *extra])  # type: ignore[no-any-return]


def test_the_same_command_gives_the_same_bytes_and_a_resumed_run_too(
    trainer: ModuleType, binary: Path, tmp_path: Path
) -> None:
    build = binary.parent
    assert run(trainer, build, tmp_path / "a.bin", "--games", "120") == 0
    assert run(trainer, build, tmp_path / "b.bin", "--games", "120") == 0
    assert (tmp_path / "a.bin").read_bytes() == (tmp_path / "b.bin").read_bytes()
    # Stopped at game 60 (a checkpoint), then resumed to 120.
    assert run(trainer, build, tmp_path / "c.bin", "--games", "60") == 0
    checkpoint = tmp_path / "c.bin.weights.ckpt"
    assert run(trainer, build, tmp_path / "c.bin", "--games", "120", "--resume", str(checkpoint)) == 0
    assert (tmp_path / "c.bin").read_bytes() == (tmp_path / "a.bin").read_bytes()
    # Another seed is another network.
    assert run(trainer, build, tmp_path / "d.bin", "--games", "120", "--seed", "6") == 0
    assert (tmp_path / "d.bin").read_bytes() != (tmp_path / "a.bin").read_bytes()


def test_a_resume_with_other_settings_is_refused(trainer: ModuleType, binary: Path, tmp_path: Path) -> None:
    assert run(trainer, binary.parent, tmp_path / "a.bin", "--games", "20") == 0
    checkpoint = tmp_path / "a.bin.weights.ckpt"
    resumed = ("--games", "40", "--resume", str(checkpoint))
    assert run(trainer, binary.parent, tmp_path / "a.bin", *resumed, "--rate", "0.5") != 0


def test_the_packed_network_holds_the_trained_weights_of_every_stage(
    trainer: ModuleType, binary: Path, tmp_path: Path
) -> None:
    out = tmp_path / "n.bin"
    assert run(trainer, binary.parent, out, "--games", "300") == 0
    net = load_network(out.read_bytes())
    assert net.stage_ranks == (0, 11, 12)
    assert net.header["stages"][0]["games"] == 300
    raw = trainer.read_doubles(out.with_name(out.name + ".weights"))
    per_stage = 65536 * len(TUPLES)
    assert len(raw) == 3 * per_stage
    rng = random.Random(3)
    learned = 0
    for top in (10, 11, 12, 13):
        for _ in range(30):
            cells = [rng.choice((0, 1, 2, 3, rng.randint(1, top))) for _ in range(16)]
            cells[rng.randrange(16)] = top
            b = sum(rank << (4 * i) for i, rank in enumerate(cells))
            stage = 0 if top < 11 else 1 if top < 12 else 2
            first = stage * per_stage
            tables = [raw[first + i * 65536 : first + (i + 1) * 65536] for i in range(len(TUPLES))]
            exact = reference_value(tables, b)
            assert net.stage(b) == stage
            assert net.value(b) == pytest.approx(exact, abs=17 * net.scales[stage] / 2 + 1e-6)
            learned += exact != 0.0
    assert learned  # training moved the weights


def test_kept_checkpoints_average_into_one_network(trainer: ModuleType, binary: Path, tmp_path: Path) -> None:
    out = tmp_path / "run.bin"
    assert run(trainer, binary.parent, out, "--games", "90", "--checkpoint", "30", "--keep") == 0
    kept = [out.with_name(f"run.bin.weights.{games}") for games in (30, 60, 90)]
    assert all(path.exists() for path in kept)
    final = out.with_name("run.bin.weights")
    assert kept[-1].read_bytes() == final.read_bytes()  # the last checkpoint is the end
    assert kept[0].read_bytes() != kept[1].read_bytes()  # the weights moved between checkpoints
    averaged = tmp_path / "mean.bin"
    files = [str(path) for path in kept[:2]] + [str(final)]
    stages = ["--stages", "11,12", "--build-dir", str(binary.parent)]
    assert trainer.main([*stages, "--out", str(averaged), "--average", *files]) == 0
    net = load_network(averaged.read_bytes())
    assert [entry["file"] for entry in net.header["stages"][0]["average_of"]] == [Path(f).name for f in files]
    raws = [trainer.read_doubles(Path(f)) for f in files]
    per_stage = 65536 * len(TUPLES)
    rng = random.Random(4)
    stages_seen = set()
    for n in range(60):
        cells = [rng.choice((0, 1, 2, 3, 5, 8)) for _ in range(16)]
        cells[rng.randrange(16)] = 10 + n % 3  # a 1024, a 2048 or a 4096: each stage in turn
        b = sum(rank << (4 * i) for i, rank in enumerate(cells))
        stage = net.stage(b)
        first = stage * per_stage
        exact = sum(
            reference_value([raw[first + i * 65536 : first + (i + 1) * 65536] for i in range(len(TUPLES))], b)
            for raw in raws
        ) / len(raws)
        assert net.value(b) == pytest.approx(exact, abs=17 * net.scales[stage] / 2 + 1e-6)
        stages_seen.add(stage)
    assert stages_seen == {0, 1, 2}
