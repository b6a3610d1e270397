"""AI strength and speed: seeded games played to the end by ``ansi2048.ai``.

Game i is ``Game(rows, cols, seed=first_seed + i)``; the player asks
``Player.best_move`` before every move. Prints, per player: games, the share
reaching each tile, mean and median score, mean and p99 time per move.

    python benchmarks/ai.py --games 20                    # 4x4, the default player
    pypy3 benchmarks/ai.py --games 200 --jobs 2           # strength, faster
    python benchmarks/ai.py --size 3x5 --games 20 --player greedy --player ai

Without ``--budget`` the AI is deterministic (node budgets and fixed depths,
no clock), so the moves, hence the strength columns, are the same under PyPy
and CPython: measure strength under PyPy and time per move under CPython.
With ``--budget SECONDS`` the search deepens while time remains: results then
depend on the interpreter and the machine.

``--player greedy`` is the baseline: the move with the most points, then the
most empty cells.

Measured on the development machine (2 cores shared with other jobs), with
the shipped weights (5 stages, 992,256 self-play games), seeds 1 and up never
used to tune or to choose the weights (that: seeds 10000-10079):

    4x4 level 1, PyPy, seeds 1..200 (--jobs 2 --per-game): 2048 100%,
        4096 100%, 8192 89%, 16384 10%; mean score 163537, median 164382
        (the network before, one stage: 100%, 99%, 45%, 0%; mean 106189)
    4x4 level 1, CPython 3.11, seeds 1..3 (--cpu), load average ~1.8:
        4.30 ms/move, p99 9.8 ms, max 16.4 ms over 23171 moves
    4x4 --budget 0.05 --level 2 --cpu, seed 3, 300 moves: mean 50.2 ms,
        p99 50.7 ms, max 53.8 ms (the cap on CPU time)
    other shapes, CPython --cpu: p99 per hint 25-51 ms (3x3, 2x6, 3x5, 5x5,
        6x6, 4x7, 10x10, 2x2), measured in round 2
    5x5, CPython 3.11 --cpu, seed 4242, first 400 moves (--games 1
        --max-moves 400), load average ~10: 16.63 ms/move (60 a second),
        p99 42.4 ms; 29.22 ms/move (34 a second) before the heuristic search
        generated its afterstates without points (the same moves)
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout without installing

from ansi2048.ai import Player, heuristic
from ansi2048.game.engine import Game


def play(job: Tuple[str, int, int, int, int, Optional[float], int, Optional[str], bool]) -> Dict[str, Any]:
    kind, rows, cols, seed, level, budget, max_moves, weights, cpu = job
    # CPU time leaves out what other processes take on a shared machine.
    clock = time.process_time if cpu else time.perf_counter
    game = Game(rows, cols, goal=2048, seed=seed)
    # With --cpu the cap is on CPU time too: on a loaded machine wall-clock
    # time adds however long the scheduler keeps the process waiting.
    player = Player(level=level, time_budget=budget, weights=weights, clock=clock if budget else None)
    if kind == "ai":
        player.network()  # load outside the timed moves; the load is measured on its own
    times: List[float] = []
    while not game.over and game.moves < max_moves:
        start = clock()
        if kind == "greedy":
            index = heuristic.greedy(heuristic.to_ranks(game.board))
            move = heuristic.MOVE_NAMES[index] if index >= 0 else None
        else:
            move = player.best_move(game)
        times.append(clock() - start)
        if move is None:
            break
        game.move(move)
    return {"score": game.score, "biggest": game.biggest, "moves": game.moves, "times": times}


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--size", default="4", help="N or RxC")
    parser.add_argument("--seed", type=int, default=1, help="seed of the first game")
    parser.add_argument("--level", type=int, default=1)
    parser.add_argument("--budget", type=float, default=None, help="time cap per move, seconds")
    parser.add_argument("--player", action="append", choices=("ai", "greedy"), help="repeatable; default ai")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--cpu", action="store_true", help="time moves in process CPU time, not wall-clock time")
    parser.add_argument("--tiles", help="comma-separated tiles to report, e.g. 256,512,1024")
    parser.add_argument("--weights", help="4x4 weights file (default: the shipped one)")
    parser.add_argument("--max-moves", type=int, default=10**6, help="stop a game after this many moves")
    parser.add_argument("--per-game", action="store_true", help="also print each game as it ends, in seed order")
    parser.add_argument("--quick", action="store_true", help="a tiny size, seconds: that the script still runs")
    args = parser.parse_args(argv)
    if args.quick:
        args.games, args.max_moves = 2, 30
    rows, _, cols = args.size.partition("x")
    shape = (int(rows), int(cols or rows))

    print(
        f"# {platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} cpus, "
        f"size {shape[0]}x{shape[1]}, seeds {args.seed}..{args.seed + args.games - 1}, "
        f"level {args.level}, budget {args.budget}, jobs {args.jobs}, {'CPU' if args.cpu else 'wall'} time"
    )
    if shape == (4, 4):
        from ansi2048.ai import load_network

        start = time.perf_counter()
        net, warning = load_network(args.weights)
        print(
            f"# first load (row tables are separate): {1000 * (time.perf_counter() - start):.0f} ms"
            + (f"; {warning}" if warning else f", {_trained(net.header) if net else '?'} training games")
        )
    print(
        f"{'player':8} {'games':>5} "
        + " ".join(f"{t:>6}" for t in _tiles(shape, args.tiles))
        + f" {'mean':>8} {'median':>8} {'ms/move':>8} {'p99 ms':>7} {'max ms':>7} {'moves':>9}"
    )
    tiles = _tiles(shape, args.tiles)
    for kind in args.player or ["ai"]:
        jobs = [
            (kind, shape[0], shape[1], args.seed + i, args.level, args.budget, args.max_moves, args.weights, args.cpu)
            for i in range(args.games)
        ]
        results = []
        pool = None
        if args.jobs > 1:
            from multiprocessing import Pool

            pool = Pool(args.jobs)
        for job, result in zip(jobs, pool.imap(play, jobs, chunksize=1) if pool else map(play, jobs)):
            results.append(result)
            if args.per_game:
                # A long run cut short still says what its finished games showed.
                print(f"# seed {job[3]}: score {result['score']} biggest {result['biggest']} moves {result['moves']}")
                print(f"#   mean {1000 * statistics.mean(result['times'] or [0.0]):.2f} ms/move", flush=True)
        if pool is not None:
            pool.close()
        times = sorted(t for r in results for t in r["times"])
        scores = [r["score"] for r in results]
        shares = " ".join(f"{100.0 * sum(1 for r in results if r['biggest'] >= t) / len(results):5.1f}%" for t in tiles)
        print(
            f"{kind:8} {len(results):5d} {shares} {statistics.mean(scores):8.0f} {statistics.median(scores):8.0f} "
            f"{1000 * statistics.mean(times):8.2f} {1000 * times[int(0.99 * (len(times) - 1))]:7.1f} "
            f"{1000 * times[-1]:7.1f} "
            f"{len(times):9d}",
            flush=True,
        )
    return 0


def _trained(header: Dict[str, Any]) -> int:
    """Self-play games behind a weights file: each stage's, and the games of
    the checkpoint a stage started from (a later stage starts from the earlier
    stage itself, whose games are already counted)."""
    stages = header.get("stages") or [header]
    total = 0
    for number, stage in enumerate(stages):
        total += int(stage.get("games", 0))
        if number == 0:
            total += int(stage.get("init_games") or 0)
    return total


def _tiles(shape: Tuple[int, int], wanted: Optional[str]) -> List[int]:
    """The tiles worth a column: ``--tiles`` if given, else five powers of two
    around what a good player reaches on that many cells."""
    if wanted:
        return [int(t) for t in wanted.split(",")]
    cells = shape[0] * shape[1]
    top = {4: 32, 6: 256, 8: 512, 9: 1024, 12: 2048, 15: 4096, 16: 16384, 25: 16384, 36: 32768}.get(cells)
    if top is None:
        top = 2 ** min(cells // 2 + 6, 31)
    return [top >> k for k in range(4, -1, -1)]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
