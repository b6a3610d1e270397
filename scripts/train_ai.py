#!/usr/bin/env python3
"""Train the 4x4 n-tuple network of ``ansi2048.ai`` by self-play.

TD(0) on afterstates (Szubert & Jaskowski 2014): the player being trained is
greedy (the move maximising points + value of the afterstate), and the value
of each afterstate moves toward the next move's points + the next afterstate's
value, read after the previous update, so the error is that of the weights
being changed. A game over is worth 0. ``--rate`` is the step (divided among
the 40 features), lowered to ``--fine-rate`` from game ``--fine-from`` on;
``--tc`` uses temporal coherence instead (Beal & Smith 1999; Jaskowski 2018):
each weight's own step, rate * |sum of errors| / sum of |errors|.

Stages (multi-stage TD, Yeh et al. 2016; Jaskowski 2018): ``--stages 12,13``
gives the boards holding a 4096, and those holding an 8192, table sets of their
own, each weight of a later stage starting from the stage below's at its first
use (weight promotion). ``--carousel`` starts game g where an earlier game
entered stage g mod stages (kept in a buffer of 4096 boards a stage), so the
late stages, which few games reach, learn as often as the first. ``--init``
starts stage 0 from a weights file's first stage.

The loop is C (``scripts/train_ai.c``, compiled here with the system's ``cc``
into ``build/``): 1.13M moves a second on one core here, against 0.17M for
the Python loop it replaced under PyPy (see the C file), and a network of
stages needs about a million games. It spawns with the engine's own generator and
rule (:class:`ansi2048.game.spawns.SplitMix64`, :func:`ansi2048.game.spawns.spawn_draw`)
and takes its features from :mod:`ansi2048.ai.ntuple`; ``tests/test_trainer.py``
checks its moves, points and spawns against the Python ones.

Reproducible: the same command gives the same bytes (IEEE doubles in a fixed
order, compiled without floating-point contraction, one thread); the header
records the settings, the SHA-256 of the C source and of the ``--init`` file.
Resumable: every ``--checkpoint`` games and at the end the loop writes
``--out``.weights (its weights, doubles) and ``--out``.weights.ckpt (the whole
state: weights in full precision, generator, restart buffers); ``--resume`` it
with the same settings and the run goes on exactly as if never stopped.
``--keep`` also keeps each checkpoint's weights (``--out``.weights.GAMES), and
``--average`` packs the mean of such files. ``--minutes`` stops early. Never run
by the tests or CI: they load the shipped file.

The shipped weights (the README's AI section has their figures)::

    python scripts/train_ai.py --seed 2048 --tc --rate 1.0 --stages 11,12,13,14 \\
        --carousel --games 992256 --checkpoint 100000

(80 minutes on one core of a shared 2-core machine; the run was stopped by
``--minutes 80`` after game 992,256, which changes nothing but where it
stops.) Their header's ``source_sha256`` names the C file of commit 2e81e7d;
it differs from this one only in comments and ``--keep``, so for the very same
bytes, header included, build with that file
(``git show 2e81e7d:scripts/train_ai.c > scripts/train_ai.c``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from array import array
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ansi2048.ai.ntuple import TABLE, TUPLES, features, pack_weights, unfold, unpack_weights  # noqa: E402
from ansi2048.game.spawns import seed_state  # noqa: E402

SOURCE = Path(__file__).resolve().with_suffix(".c")
# No contraction into fused multiply-adds: the same bytes on every x86-64 and ARM build.
CFLAGS = ("-O2", "-std=gnu99", "-ffp-contract=off", "-fno-fast-math")


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def compiler() -> str:
    found = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if not found:
        sys.exit("train_ai: needs a C compiler (cc, gcc or clang), or CC set to one")
    return found


def build(build_dir: Path = ROOT / "build") -> Path:
    """Compile the loop once per version of its source: build/train_ai-<sha>."""
    binary = build_dir / f"train_ai-{sha256_of(SOURCE)[:12]}"
    if not binary.exists():
        build_dir.mkdir(parents=True, exist_ok=True)
        tmp = binary.with_suffix(f".{os.getpid()}.tmp")
        subprocess.run([compiler(), *CFLAGS, "-o", str(tmp), str(SOURCE), "-lm"], check=True)
        os.replace(tmp, binary)
    return binary


def feature_list() -> str:
    """The 40 features (table, then the 4 cells' bit shifts) as the C loop reads them."""
    return ",".join(f"{number},{','.join(str(4 * cell) for cell in cells)}" for number, cells in features(TUPLES))


def first_stage(path: Path) -> List[float]:
    """Per-tuple weights of a weights file's first stage (unfolded exactly)."""
    _, stages = unpack_weights(path.read_bytes())
    stage, quantised = stages[0]
    scale = float(stage["scale"])
    tables = [[q * scale for q in table] for table in quantised]
    if "positions" in stage:
        tables = unfold(tables, stage["positions"])
    return [w for table in tables for w in table]


def read_doubles(path: Path) -> array:
    flat = array("d")
    flat.frombytes(path.read_bytes())
    if sys.byteorder != "little":  # pragma: no cover
        flat.byteswap()
    return flat


def pack(raw: Path, ranks: Sequence[int], recipe: Dict[str, Any]) -> bytes:
    """The C loop's weights (doubles, stage after stage) as the shipped file."""
    flat = read_doubles(raw)
    per_stage = TABLE * len(TUPLES)
    if len(flat) != per_stage * len(ranks):
        sys.exit(f"train_ai: {raw} holds {len(flat)} weights, not {per_stage * len(ranks)}")
    stages = []
    for s, rank in enumerate(ranks):
        base = s * per_stage
        stages.append((rank, [flat[base + i * TABLE : base + (i + 1) * TABLE].tolist() for i in range(len(TUPLES))]))
    # The recipe is the whole file's: stage 0 holds it, the later stages only their number.
    return pack_weights(stages, [recipe] + [{"stage": s} for s in range(1, len(ranks))])


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=2048)
    parser.add_argument("--games", type=int, default=1000000, help="games in all (carousel restarts count)")
    parser.add_argument("--minutes", type=float, default=0.0, help="stop after this long (0 = no limit)")
    parser.add_argument("--rate", type=float, default=0.1, help="TD step, divided among the features")
    parser.add_argument("--fine-from", type=int, default=0, help="from this game on, the step is --fine-rate")
    parser.add_argument("--fine-rate", type=float, default=0.01)
    parser.add_argument("--tc", action="store_true", help="temporal coherence learning: a step per weight")
    parser.add_argument("--stages", default="", help="ranks where later stages begin, e.g. 12,13")
    parser.add_argument("--carousel", action="store_true", help="start games where earlier ones entered each stage")
    parser.add_argument("--init", type=Path, help="start stage 0 from this weights file's first stage")
    parser.add_argument("--resume", type=Path, help="continue exactly from this checkpoint (.ckpt)")
    parser.add_argument("--checkpoint", type=int, default=20000, help="save everything every N games")
    parser.add_argument("--log-every", type=int, default=2000, help="print figures every N games from the start")
    parser.add_argument("--out", type=Path, default=ROOT / "ansi2048" / "ai" / "ntuple4x4.bin")
    parser.add_argument("--keep", action="store_true", help="also keep each checkpoint's weights: OUT.weights.GAMES")
    parser.add_argument(
        "--average",
        nargs="+",
        type=Path,
        metavar="WEIGHTS",
        help="train nothing: pack the mean of these .weights files (kept checkpoints of one run) into --out",
    )
    parser.add_argument("--build-dir", type=Path, default=ROOT / "build", help="where the compiled loop is kept")
    args = parser.parse_args(argv)
    try:
        ranks = [0] + [int(r) for r in args.stages.split(",") if r.strip()]
    except ValueError:
        parser.error("--stages takes ranks such as 12,13")
    if ranks != sorted(set(ranks)) or not all(0 <= r <= 15 for r in ranks) or len(ranks) > 8:
        parser.error("--stages: rising ranks from 1 to 15, at most 7")

    if args.average:
        return average(args.average, ranks, args.out)
    binary = build(args.build_dir)
    raw = args.out.with_name(args.out.name + ".weights")
    recipe: Dict[str, Any] = {
        "trainer": "scripts/train_ai.py + scripts/train_ai.c",
        "source_sha256": sha256_of(SOURCE),
        "seed": args.seed,
        "rate": args.rate,
        "fine_from": args.fine_from,
        "fine_rate": args.fine_rate,
        "tc": args.tc,
        "stage_ranks": ranks,
        "carousel": args.carousel,
        "init_sha256": sha256_of(args.init) if args.init else None,
    }
    with tempfile.TemporaryDirectory() as tmp:
        init = "-"
        if args.init:
            init = str(Path(tmp) / "init.weights")
            Path(init).write_bytes(array("d", first_stage(args.init)).tobytes())
        command = [
            str(binary),
            str(seed_state(args.seed)),
            feature_list(),
            ",".join(map(str, ranks)),
            str(args.games),
            repr(args.rate),
            str(args.fine_from),
            repr(args.fine_rate),
            str(int(args.tc)),
            str(int(args.carousel)),
            str(args.checkpoint),
            str(args.log_every),
            repr(args.minutes),
            str(raw),
            init,
            str(args.resume) if args.resume else "-",
            str(int(args.keep)),
        ]
        print("#", json.dumps(recipe, sort_keys=True), flush=True)
        done = subprocess.run(command)
    if done.returncode:
        return done.returncode
    games = int(read_games(raw.with_name(raw.name + ".ckpt")))
    data = pack(raw, ranks, dict(recipe, games=games))
    tmp_out = args.out.with_name(args.out.name + ".tmp")
    tmp_out.write_bytes(data)
    os.replace(tmp_out, args.out)
    print(f"# wrote {args.out} ({len(data)} bytes, {games} games)", flush=True)
    return 0


def average(files: Sequence[Path], ranks: Sequence[int], out: Path) -> int:
    """Pack the mean of several weights files of the C loop (in the order
    given: the same files give the same bytes). The weights of a TD run
    wander about their optimum from checkpoint to checkpoint; their mean
    (Polyak averaging) sits nearer to it."""
    total = read_doubles(files[0])
    for path in files[1:]:
        more = read_doubles(path)
        if len(more) != len(total):
            sys.exit(f"train_ai: {path} holds {len(more)} weights, {files[0]} {len(total)}")
        total = array("d", [a + b for a, b in zip(total, more)])
    mean = array("d", [w / len(files) for w in total])
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "mean.weights"
        raw.write_bytes(mean.tobytes())
        recipe = {
            "trainer": "scripts/train_ai.py --average",
            "stage_ranks": list(ranks),
            "average_of": [{"file": path.name, "sha256": sha256_of(path)} for path in files],
        }
        data = pack(raw, ranks, recipe)
    tmp_out = out.with_name(out.name + ".tmp")
    tmp_out.write_bytes(data)
    os.replace(tmp_out, out)
    print(f"# wrote {out} ({len(data)} bytes, the mean of {len(files)} files)", flush=True)
    return 0


def read_games(checkpoint: Path) -> int:
    """Games played, from a checkpoint of the C loop (magic, settings, generator, games)."""
    with checkpoint.open("rb") as fh:  # the head only: the weights after it are tens of MB
        length = int.from_bytes(fh.read(12)[8:12], "little")
        fh.seek(12 + length + 8)
        return int.from_bytes(fh.read(8), "little")


if __name__ == "__main__":
    sys.exit(main())
