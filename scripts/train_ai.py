#!/usr/bin/env python3
"""Train the 4x4 n-tuple network of ``ansi2048.ai`` by self-play.

TD(0) on afterstates (Szubert & Jaskowski 2014): the player being trained is
greedy (the move maximising points + value of the afterstate), and the value
of each afterstate moves toward the next move's points + the next afterstate's
value. The previous afterstate's value in that error is read after the
previous update (which may have moved weights the two afterstates share), so
the error is that of the weights being changed. ``--plain RATE`` uses a fixed
rate (divided among the 40 features), lowered to ``--fine-rate`` from game
``--fine-from`` on; without ``--plain``, temporal coherence (TC) learning
(Beal & Smith 1999; Jaskowski 2016) gives each weight its own rate
alpha * |sum of errors| / sum of |errors|. In 78 s pilots here, TC at alpha 1.0
collapsed (mean score 2000), TC at 0.25 and plain TD at 0.1 learned alike per
second (57-59% reaching 2048 after 5-8k games).

Stages (multi-stage TD, Yeh et al. 2016): ``--stage-rank R --below FILE``
trains a second table set for the boards holding a tile of 2**R or more. Each
game is played by FILE's network (greedy, not learning) until such a tile
appears, then learned on by the new stage to its end; the output holds both
stages, FILE's exactly as it was. ``--init`` starts the weights from a file of
one stage (a ``.tuples`` file, or a shipped file, unfolded exactly).

Reproducible: the same command gives the same bytes on CPython and PyPy alike
(the tiles come from ansi2048's SplitMix64 through the engine's own spawn rule,
:func:`ansi2048.engine.spawn_draw`; the arithmetic is IEEE doubles in a fixed
order), and the files a run starts from are recorded by SHA-256
(``init_sha256``, ``below_sha256``), so a header names exactly what it was
built on. Resumable: every ``--checkpoint`` games and at the end, besides the
weights (``--out``, and ``--out``.tuples, the per-tuple form ``--init`` reads),
``--out``.ckpt keeps the weights in full precision with the generator's state;
``--resume`` that file (with the same settings) continues exactly as if never
stopped (checked: 20 + 20 games resumed = 40 games, byte for byte).
``--minutes`` stops early, logging the games played, so the run can be
repeated with ``--games``. Never run by the tests: they load the shipped file.

Use PyPy (300 games from scratch: 12 s in CPython 3.11, under 2 s in PyPy 3.9).

The shipped weights (79358 games) were made by this script as it was at
commit 3fb75d4 (``git show 3fb75d4:scripts/train_ai.py``), which recorded the
``--init`` file by name and computed the TD error with the value read before
the previous update; to rebuild those bytes, use that version and name the
stage-1 checkpoint ``stage1_60k.tuples``:

    nice pypy3 train_ai.py --seed 2048 --plain 0.1 --games 60000 --out stage1_60k
    nice pypy3 train_ai.py --seed 2049 --plain 0.01 --games 19358 \\
        --init stage1_60k.tuples --out ansi2048/ai/ntuple4x4.bin

(51 and 12 minutes on a shared 2-core machine; greedy self-play over the last
1000 games: mean 40084, then 44895, 2048 in 87%, 4096 in 46%.)

A second stage for boards holding a 4096, from the shipped weights, was tried
here (``--seed 4096 --plain 0.03 --stage-rank 12 --below ntuple4x4.bin --init
ntuple4x4.bin``, 12000 games in 27 minutes): the greedy player's mean after
4096 stayed at 61-63k throughout, and over 20 tuning games (seeds
10000-10019) the searching player reached 8192 in 40% with it as without
(mean 103637 vs 102033), so it is not shipped.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import struct
import sys
import time
import zlib
from array import array
from typing import Any, Dict, List, Optional, Tuple

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from ansi2048.ai.bitboard import moves, row_tables
from ansi2048.ai.ntuple import TABLE, TUPLES, Network, features, pack_weights, unfold, unpack_weights
from ansi2048.engine import SplitMix64, seed_state, spawn_draw

_CKPT_MAGIC = b"A2048CK1"
# What a checkpoint keeps of the command line: the settings that shape the run.
_SETTINGS = ("seed", "alpha", "plain", "fine_from", "fine_rate", "stage_rank", "init_sha256", "below_sha256")


def spawn(b: int, rng: SplitMix64) -> int:
    """The engine's spawn (:func:`ansi2048.engine.spawn_draw`) on a bitboard."""
    empty = [shift for shift in range(0, 64, 4) if not (b >> shift) & 0xF]
    if not empty:
        return b
    nth, value = spawn_draw(rng.next(), len(empty))
    return b | ((2 if value == 4 else 1) << empty[nth])


def at_least(b: int, rank: int) -> bool:
    """Whether bitboard ``b`` holds a tile of ``rank`` or more (1 <= rank <= 15)."""
    add = (16 - rank) * 0x0101010101010101
    low = 0x0F0F0F0F0F0F0F0F
    return bool((((b & low) + add) | (((b >> 4) & low) + add)) & 0x1010101010101010)


def sha256_of(path: str) -> str:
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def per_tuple_weights(path: str) -> Tuple[List[float], Dict[str, Any]]:
    """Per-tuple weights (flat) and the stage header from a weights file of one
    stage: a ``.tuples`` file, or a shipped (folded) file, unfolded exactly."""
    with open(path, "rb") as fh:
        _, stages = unpack_weights(fh.read())
    if len(stages) != 1:
        sys.exit(f"{path}: {len(stages)} stages; --init needs a file of one stage")
    stage, quantised = stages[0]
    scale = float(stage["scale"])
    tables = [[q * scale for q in table] for table in quantised]
    if "positions" in stage:
        tables = unfold(tables, stage["positions"])
    return [w for table in tables for w in table], stage


def write_checkpoint(path: str, meta: Dict[str, Any], arrays: List[List[float]]) -> None:
    """Everything a resumed run needs to continue exactly: settings, the
    generator's state, games played, weights in full precision."""
    head = json.dumps(meta, sort_keys=True).encode("utf-8")
    payload = b"".join(array("d", a).tobytes() for a in arrays)
    data = _CKPT_MAGIC + struct.pack("<II", len(head), len(arrays)) + head + zlib.compress(payload, 1)
    with open(path + ".tmp", "wb") as fh:
        fh.write(data)
    os.replace(path + ".tmp", path)


def read_checkpoint(path: str) -> Tuple[Dict[str, Any], List[List[float]]]:
    with open(path, "rb") as fh:
        data = fh.read()
    if data[:8] != _CKPT_MAGIC:
        sys.exit(f"{path}: not a training checkpoint")
    head_len, count = struct.unpack_from("<II", data, 8)
    meta = json.loads(data[16 : 16 + head_len].decode("utf-8"))
    flat = array("d")
    flat.frombytes(zlib.decompress(data[16 + head_len :]))
    if sys.byteorder != "little":  # pragma: no cover
        flat.byteswap()
    size = len(flat) // count
    return meta, [flat[i * size : (i + 1) * size].tolist() for i in range(count)]


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=2048)
    parser.add_argument("--games", type=int, default=200000)
    parser.add_argument("--minutes", type=float, default=0.0, help="stop after this long (0 = no limit)")
    parser.add_argument("--alpha", type=float, default=1.0, help="TC meta learning rate (per afterstate)")
    parser.add_argument("--plain", type=float, default=0.0, help="plain TD(0) with this rate instead of TC")
    parser.add_argument("--fine-from", type=int, default=0, help="from this game on, plain TD uses --fine-rate")
    parser.add_argument("--fine-rate", type=float, default=0.01)
    parser.add_argument("--init", help="start from this weights file (one stage: .tuples or shipped) instead of 0")
    parser.add_argument("--stage-rank", type=int, default=0, help="train the stage for boards with a tile >= 2**RANK")
    parser.add_argument("--below", help="with --stage-rank: the network of the earlier stage (plays until then)")
    parser.add_argument("--resume", help="continue exactly from this checkpoint (.ckpt)")
    parser.add_argument("--checkpoint", type=int, default=5000, help="write the weights every N games")
    parser.add_argument("--log-every", type=int, default=1000)
    parser.add_argument("--out", default="ansi2048/ai/ntuple4x4.bin")
    args = parser.parse_args(argv)
    args.init_sha256 = sha256_of(args.init) if args.init else None
    args.below_sha256 = sha256_of(args.below) if args.below else None
    if args.stage_rank and not args.below:
        parser.error("--stage-rank needs --below")
    if not 0 <= args.stage_rank <= 15:
        parser.error("--stage-rank must be 0 to 15")

    tables = row_tables()
    feats = features(TUPLES)
    # Flat feature list: (table offset, cell shifts) so an index is 4 shifts.
    flat: List[Tuple[int, int, int, int, int]] = [
        (number * TABLE, 4 * c[0], 4 * c[1], 4 * c[2], 4 * c[3]) for number, c in feats
    ]
    m = len(flat)
    size = TABLE * len(TUPLES)
    w = [0.0] * size
    init_games = 0
    if args.init:
        w, stage = per_tuple_weights(args.init)
        init_games = int(stage.get("games", 0)) + int(stage.get("init_games", 0))
        print(f"# starting from {args.init} (sha256 {args.init_sha256}, {init_games} games)", flush=True)
    below: Optional[Network] = None
    below_data = b""
    if args.below:
        from ansi2048.ai.ntuple import load_network

        with open(args.below, "rb") as fh:
            below_data = fh.read()
        below = load_network(below_data)
        if len(below.stage_ranks) != 1:
            sys.exit(f"{args.below}: --below needs a network of one stage")
    tc = not args.plain
    e_sum = [0.0] * size if tc else []
    a_sum = [0.0] * size if tc else []
    step = (args.plain or args.alpha) / m
    rate_now = [step]
    rng = SplitMix64(seed_state(args.seed))
    played = 0
    attempts = 0
    if args.resume:
        meta, arrays = read_checkpoint(args.resume)
        for key in _SETTINGS:
            if meta["settings"].get(key) != getattr(args, key):
                sys.exit(f"{args.resume}: --{key.replace('_', '-')} differs from the checkpoint's")
        w = arrays[0]
        if tc:
            e_sum, a_sum = arrays[1], arrays[2]
        rng.state = int(meta["rng_state"])
        played, attempts = int(meta["games"]), int(meta["attempts"])
        init_games = int(meta["init_games"])
        print(f"# resuming {args.resume} after {played} games", flush=True)

    def indices(b: int) -> List[int]:
        return [
            off + ((b >> s0) & 15) + (((b >> s1) & 15) << 4) + (((b >> s2) & 15) << 8) + (((b >> s3) & 15) << 12)
            for off, s0, s1, s2, s3 in flat
        ]

    def learn(idx: List[int], delta: float) -> None:
        if tc:
            for i in idx:
                a = a_sum[i]
                rate = abs(e_sum[i]) / a if a else 1.0
                w[i] += rate_now[0] * rate * delta
                e_sum[i] += delta
                a_sum[i] += abs(delta)
        else:
            d = rate_now[0] * delta
            for i in idx:
                w[i] += d

    start = time.time()
    scores: List[int] = []
    biggest: List[int] = []

    def save() -> None:
        tabs = [w[i * TABLE : (i + 1) * TABLE] for i in range(len(TUPLES))]
        meta = {
            "games": played,
            "seed": args.seed,
            "method": "TC(0)" if tc else "TD(0)",
            "alpha": args.plain or args.alpha,
            "fine_from": args.fine_from,
            "fine_rate": args.fine_rate,
            "init_sha256": args.init_sha256,
            "init_games": init_games,
        }
        shipped = [(0, tabs)]
        metas = [meta]
        if below is not None:
            # The shipped form holds the earlier stage too, exactly as loaded.
            _, stages = unpack_weights(below_data)
            stage, quantised = stages[0]
            scale = float(stage["scale"])
            early = unfold([[q * scale for q in t] for t in quantised], stage["positions"])
            meta["below_sha256"] = args.below_sha256
            shipped = [(0, early), (args.stage_rank, tabs)]
            metas = [{k: v for k, v in stage.items() if k not in ("positions", "scale", "tables", "from_rank")}, meta]
        # The shipped file (folded per position) and the per-tuple form --init starts from.
        forms = (
            (args.out, pack_weights(shipped, metas)),
            (args.out + ".tuples", pack_weights([(0, tabs)], [meta], False)),
        )
        for path, data in forms:
            with open(path + ".tmp", "wb") as fh:
                fh.write(data)
            os.replace(path + ".tmp", path)
            print(f"# saved {path} after {played} games ({len(data)} bytes)", flush=True)
        settings = {key: getattr(args, key) for key in _SETTINGS}
        state = {"settings": settings, "rng_state": rng.state, "games": played, "attempts": attempts}
        state["init_games"] = init_games
        write_checkpoint(args.out + ".ckpt", state, [w, e_sum, a_sum] if tc else [w])

    stage_rank = args.stage_rank
    stage_value = below.value if below is not None else None
    while played < args.games:
        if args.plain and args.fine_from and played >= args.fine_from and rate_now[0] != args.fine_rate / m:
            # A smaller rate at the end averages out the noise of the fixed rate (TDL2048 practice).
            rate_now[0] = args.fine_rate / m
            print(f"# rate {args.fine_rate} from game {played}", flush=True)
        b = spawn(spawn(0, rng), rng)
        score = 0
        if stage_value is not None:
            # Play the earlier stage's moves (greedy, not learning) until this stage begins.
            attempts += 1
            while not at_least(b, stage_rank):
                best = -float("inf")
                best_after = best_points = -1
                for after, points in moves(b, tables):
                    if after != b:
                        v = points + stage_value(after)
                        if v > best:
                            best, best_after, best_points = v, after, points
                if best_after < 0:
                    break
                score += best_points
                b = spawn(best_after, rng)
            if not at_least(b, stage_rank):
                continue  # lost before the stage: nothing to learn
        prev: List[int] = []
        while True:
            best = -float("inf")
            best_after = 0
            best_points = 0
            best_idx: List[int] = []
            for after, points in moves(b, tables):
                if after == b:
                    continue
                idx = indices(after)
                v = points + sum([w[i] for i in idx])
                if v > best:
                    best, best_after, best_points, best_idx = v, after, points, idx
            # The previous afterstate's value is read now, after the previous
            # update (which may have moved shared weights), so the TD error is
            # the error of the weights being changed.
            if not best_idx:
                if prev:
                    learn(prev, -sum([w[i] for i in prev]))
                break
            if prev:
                # Target of the previous afterstate: this move's points + this afterstate's value.
                learn(prev, best - sum([w[i] for i in prev]))
            prev = best_idx
            score += best_points
            b = spawn(best_after, rng)
        played += 1
        scores.append(score)
        top = max((b >> s) & 15 for s in range(0, 64, 4))
        biggest.append(top)
        if played % args.log_every == 0:
            n = args.log_every
            last, tops = scores[-n:], biggest[-n:]
            rates = " ".join(f"{1 << k}:{100.0 * sum(1 for t in tops if t >= k) / n:5.1f}%" for k in (11, 12, 13, 14))
            reached = f"  reached the stage {played}/{attempts}" if stage_value is not None else ""
            print(
                f"games {played:7d}  {time.time() - start:7.0f}s  mean {sum(last) / n:8.0f}  {rates}{reached}",
                flush=True,
            )
            del scores[:-n], biggest[:-n]
        if played % args.checkpoint == 0:
            save()
        if args.minutes and time.time() - start > 60 * args.minutes:
            print(f"# time limit: stopping after {played} games", flush=True)
            break
    save()
    print(f"# done: {played} games in {time.time() - start:.0f}s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
