#!/usr/bin/env python3
"""Train the 4x4 n-tuple network of ``ansi2048.ai`` by self-play.

TD(0) on afterstates (Szubert & Jaskowski 2014): the player being trained is
greedy (the move maximising points + value of the afterstate), and the value
of each afterstate moves toward the next move's points + the next afterstate's
value. ``--plain RATE`` uses a fixed rate (divided among the 40 features),
lowered to ``--fine-rate`` from game ``--fine-from`` on; without ``--plain``,
temporal coherence (TC) learning (Beal & Smith 1999; Jaskowski 2016) gives each
weight its own rate alpha * |sum of errors| / sum of |errors|. In 78 s pilots
here, TC at alpha 1.0 collapsed (mean score 2000), TC at 0.25 and plain TD at
0.1 learned alike per second (57-59% reaching 2048 after 5-8k games); the
shipped run uses plain TD 0.1 then 0.01, the schedule TDL2048 practice uses.

Deterministic from ``--seed`` and ``--games`` on CPython and PyPy alike: the
tiles come from ansi2048's SplitMix64 and the arithmetic is IEEE doubles in a
fixed order. ``--minutes`` stops early (logging the number of games played,
so the run can be repeated with ``--games``). A checkpoint of the weights file
is written every ``--checkpoint`` games and at the end.

Use PyPy: 300 games from scratch take 12 s in CPython 3.11 and under 2 s in
PyPy 3.9 here, and give byte-identical files. The shipped weights, in two
stages (the second starts from the first's per-tuple checkpoint):

    nice pypy3 scripts/train_ai.py --seed 2048 --plain 0.1 --games 60000 \\
        --out /tmp/stage1.bin
    nice pypy3 scripts/train_ai.py --seed 2049 --plain 0.01 --games 19358 \\
        --init /tmp/stage1.bin.tuples --out ansi2048/ai/ntuple4x4.bin

Stage 1 took 51 minutes (3042 s; it was launched with ``--games 120000
--fine-from 100000 --minutes 75`` and stopped by hand after its 60000-game
checkpoint, which is what ``--games 60000`` writes); stage 2 took 12 minutes
(721 s; ``--minutes 12`` stopped it after 19358 games). Both on a 2-core
machine shared with other jobs, the niced process getting 30-100% of one core.
Greedy self-play over the last 1000 games of stage 1: mean score 40084, 2048
in 84%, 4096 in 37%; of stage 2: mean 44895, 2048 in 87%, 4096 in 46%.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import List, Tuple

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from ansi2048.ai.bitboard import moves, row_tables
from ansi2048.ai.ntuple import TABLE, TUPLES, features, pack_weights, unpack_weights
from ansi2048.engine import SplitMix64, seed_state

_LOW32 = (1 << 32) - 1
_FOUR_THRESHOLD = (1 << 32) // 10


def spawn(b: int, rng: SplitMix64) -> int:
    """The engine's spawn rule on a bitboard: a 2 (p = 0.9) or a 4 on a uniform empty cell."""
    empty = [shift for shift in range(0, 64, 4) if not (b >> shift) & 0xF]
    if not empty:
        return b
    draw = rng.next()
    shift = empty[(draw * len(empty)) >> 64]
    return b | ((2 if (draw & _LOW32) < _FOUR_THRESHOLD else 1) << shift)


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=2048)
    parser.add_argument("--games", type=int, default=200000)
    parser.add_argument("--minutes", type=float, default=0.0, help="stop after this long (0 = no limit)")
    parser.add_argument("--alpha", type=float, default=1.0, help="TC meta learning rate (per afterstate)")
    parser.add_argument("--plain", type=float, default=0.0, help="plain TD(0) with this rate instead of TC")
    parser.add_argument("--fine-from", type=int, default=0, help="from this game on, plain TD uses --fine-rate")
    parser.add_argument("--fine-rate", type=float, default=0.01)
    parser.add_argument("--init", help="start from this per-tuple weights file (a checkpoint's .tuples) instead of 0")
    parser.add_argument("--checkpoint", type=int, default=5000, help="write the weights every N games")
    parser.add_argument("--log-every", type=int, default=1000)
    parser.add_argument("--out", default="ansi2048/ai/ntuple4x4.bin")
    args = parser.parse_args(argv)

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
        with open(args.init, "rb") as fh:
            header, quantised = unpack_weights(fh.read())
        if "positions" in header:
            sys.exit(f"{args.init}: a folded (shipped) file; --init needs the per-tuple .tuples file")
        scale = float(header["scale"])
        w = [q * scale for table in quantised for q in table]
        init_games = int(header.get("games", 0)) + int(header.get("init_games", 0))
        print(f"# starting from {args.init} ({header.get('games')} games)", flush=True)
    tc = not args.plain
    e_sum = [0.0] * size if tc else []
    a_sum = [0.0] * size if tc else []
    step = (args.plain or args.alpha) / m
    rate_now = [step]

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

    rng = SplitMix64(seed_state(args.seed))
    start = time.time()
    scores: List[int] = []
    biggest: List[int] = []
    played = 0

    def save() -> None:
        tabs = [w[i * TABLE : (i + 1) * TABLE] for i in range(len(TUPLES))]
        meta = {
            "games": played,
            "seed": args.seed,
            "method": "TC(0)" if tc else "TD(0)",
            "alpha": args.plain or args.alpha,
            "fine_from": args.fine_from,
            "fine_rate": args.fine_rate,
            "init": os.path.basename(args.init) if args.init else None,
            "init_games": init_games,
        }
        # The shipped file (folded per position) and the per-tuple form --init resumes from.
        forms = ((args.out, pack_weights(tabs, meta)), (args.out + ".tuples", pack_weights(tabs, meta, False)))
        for path, data in forms:
            with open(path + ".tmp", "wb") as fh:
                fh.write(data)
            os.replace(path + ".tmp", path)
            print(f"# saved {path} after {played} games ({len(data)} bytes)", flush=True)

    while played < args.games:
        if args.plain and args.fine_from and played == args.fine_from:
            # A smaller rate at the end averages out the noise of the fixed rate (TDL2048 practice).
            rate_now[0] = args.fine_rate / m
            print(f"# rate {args.fine_rate} from game {played}", flush=True)
        b = spawn(spawn(0, rng), rng)
        score = 0
        prev: List[int] = []
        prev_value = 0.0
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
            if not best_idx:
                if prev:
                    learn(prev, -prev_value)
                break
            if prev:
                # Target of the previous afterstate: this move's points + this afterstate's value.
                learn(prev, best - prev_value)
            prev = best_idx
            prev_value = best - best_points
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
            print(
                f"games {played:7d}  {time.time() - start:7.0f}s  mean {sum(last) / n:8.0f}  {rates}",
                flush=True,
            )
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
