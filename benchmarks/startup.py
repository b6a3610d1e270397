"""Start-up time of ansi2048, next to a bare interpreter and to term2048.

Times, over --runs trials interleaved in a shuffled order each round (so that a
change in the machine's load touches every command alike):

- ``python -c pass``, the floor every Python program stands on;
- ``python -m ansi2048 --version`` and the installed console script's
  ``ansi2048 --version`` and ``ansi2048 --help`` (from this interpreter's
  scripts directory), each as a multiple of ``python -c pass``;
- term2048 0.2.7's ``term2048 --version`` and ``--help``, as a multiple of its
  own interpreter's ``python -c pass`` (installed into a temporary virtual
  environment when this interpreter cannot import it);
- exec to the first complete frame in a pseudo-terminal (80x30,
  TERM=xterm-256color, a fresh data directory, ``--seed 1 --new``), next to
  exec to the first output of ``python -c "print('ready')"`` in the same kind
  of pty. Target: under 100 ms.

With --importtime, also the modules that ``python -X importtime -m ansi2048
--version`` spends its time on.

    python benchmarks/startup.py [--runs 20] [--importtime] [--no-term2048] [--fresh-venv]

Run it by hand; it prints figures and asserts nothing. It times the ansi2048
installed for the interpreter that runs it, or, with --fresh-venv, a regular
(not editable) install of this checkout into a temporary virtual environment:
the figures a user gets. An editable install costs every start of its
interpreter, ``python -c pass`` included, the import of its finder (pathlib and
more, several ms), which inflates the floor and shrinks the ratios.

Every command gets a terminal (a pty) as its stdin, as when typed at a prompt:
term2048 reads the terminal's settings as it is imported and fails without one.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
import venv
from collections import defaultdict
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

FRAME_TARGET_MS = 100.0
TERM2048 = "term2048==0.2.7"

Trial = Callable[[], float]  # one run; returns seconds


def script_path(scripts_dir: Path, name: str) -> Optional[Path]:
    for candidate in (scripts_dir / name, scripts_dir / f"{name}.exe"):
        if candidate.exists():
            return candidate
    return None


def clean_env(**extra: str) -> Dict[str, str]:
    env = dict(os.environ)
    env.pop("NO_COLOR", None)
    # A user's Python writes and reads its bytecode cache: without it every
    # start compiles every module again (it tripled the first frame here).
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("PYTHONPROFILEIMPORTTIME", None)
    env.update(extra)
    return env


def terminal_stdin() -> int:
    """A file descriptor for the commands' stdin: a pty's terminal end where there are ptys."""
    if sys.platform == "win32":
        return subprocess.DEVNULL
    import pty

    _controller, terminal = pty.openpty()  # both stay open until the process ends
    return terminal


STDIN = subprocess.DEVNULL  # set in main()


def process_trial(argv: Sequence[str], env: Dict[str, str]) -> Trial:
    def run() -> float:
        start = time.perf_counter()
        subprocess.run(argv, stdin=STDIN, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        return time.perf_counter() - start

    return run


def check_runs(argv: Sequence[str], env: Dict[str, str]) -> str:
    """Runs ``argv`` once (which also warms the caches); its first line of output, or why it failed."""
    done = subprocess.run(argv, stdin=STDIN, capture_output=True, env=env, timeout=60)
    text = (done.stdout or done.stderr).decode(errors="replace").strip()
    first = text.splitlines()[0] if text else ""
    if done.returncode != 0:
        raise RuntimeError(f"exit status {done.returncode}: {first}")
    return first


def frame_end_pattern() -> str:
    """The end of every frame, as a pattern: the renderer's FRAME_END (shared with the tests and latency.py)."""
    try:
        from ansi2048.render.repaint import FRAME_END
    except ImportError:  # an ansi2048 from before the render package: the keys line, then erase-to-end-of-line
        return r"q quit\x1b\[0m\x1b\[K|q quit\x1b\[K"
    return re.escape(FRAME_END)


def children_cpu() -> float:
    """CPU seconds (user + system) used by the children that have ended."""
    import resource  # POSIX only, as the pty runs are

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def pty_trial(
    argv: Sequence[str], pattern: str, env: Dict[str, str], fresh_data_dir: bool, quit_key: str, cpu: List[float]
) -> Trial:
    """Seconds from spawn to ``pattern``; appends to ``cpu`` the CPU time the
    child used in all (to its exit: on a loaded machine, the steadier figure)."""
    import pexpect  # a test dependency; POSIX only

    def run() -> float:
        with tempfile.TemporaryDirectory() as data:
            child_env = dict(env, ANSI2048_DATA_DIR=data) if fresh_data_dir else env
            used = children_cpu()
            start = time.perf_counter()
            child = pexpect.spawn(argv[0], list(argv[1:]), env=child_env, dimensions=(30, 80), timeout=10)
            child.delaybeforesend = None
            child.expect(pattern)
            elapsed = time.perf_counter() - start
            if quit_key:
                child.send(quit_key)
            child.expect(pexpect.EOF)
            child.close()
            cpu.append(children_cpu() - used)
        return elapsed

    return run


def term2048_interpreter(workdir: Path) -> Tuple[Optional[Path], str]:
    """An interpreter that can run term2048, and where it came from."""
    if importlib.util.find_spec("term2048") is not None:
        return Path(sys.executable), "importable here"
    env_dir = workdir / "term2048-venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = script_path(env_dir / ("Scripts" if sys.platform == "win32" else "bin"), "python")
    assert python is not None
    done = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", TERM2048],
        stdin=subprocess.DEVNULL,
        capture_output=True,
    )
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).decode(errors="replace").strip().splitlines()
        return None, f"`pip install {TERM2048}` failed: {lines[-1] if lines else done.returncode}"
    return python, f"installed into a temporary venv ({TERM2048})"


def editable_install() -> bool:
    try:
        text = importlib.metadata.distribution("ansi2048").read_text("direct_url.json")
    except importlib.metadata.PackageNotFoundError:
        return False
    return bool(text and json.loads(text).get("dir_info", {}).get("editable"))


def rerun_in_fresh_venv(argv: Sequence[str]) -> int:
    """Installs this checkout (not editable, with pexpect) into a temporary venv and runs this script there."""
    checkout = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory(prefix="ansi2048-startup-venv-") as where:
        env_dir = Path(where)
        venv.EnvBuilder(with_pip=True).create(env_dir)
        python = script_path(env_dir / ("Scripts" if sys.platform == "win32" else "bin"), "python")
        assert python is not None
        print(f"installing {checkout} into a fresh venv ({env_dir}) ...", flush=True)
        pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
        subprocess.run([*pip, str(checkout), "pexpect"], check=True, stdin=subprocess.DEVNULL)
        return subprocess.run([str(python), str(Path(__file__).resolve()), *argv]).returncode


def measure(trials: Dict[str, Trial], runs: int) -> Dict[str, List[float]]:
    """Every trial ``runs`` times, in a new random order each round; milliseconds."""
    times: Dict[str, List[float]] = {name: [] for name in trials}
    names = list(trials)
    shuffle = random.Random(2048).shuffle
    for _ in range(runs):
        shuffle(names)
        for name in names:
            times[name].append(trials[name]() * 1000)
    return times


def importtime(python: str, env: Dict[str, str], repeats: int = 5, top: int = 12) -> None:
    """Top offenders of ``python -X importtime -m ansi2048 --version`` (best of ``repeats`` per module)."""
    line = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)")
    best: Dict[str, Tuple[int, int, int]] = {}  # module -> (self us, cumulative us, depth)
    for _ in range(repeats):
        done = subprocess.run(
            [python, "-X", "importtime", "-m", "ansi2048", "--version"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            env=env,
        )
        for match in line.finditer(done.stderr.decode(errors="replace")):
            own, cumulative, indent, module = int(match[1]), int(match[2]), len(match[3]), match[4]
            depth = (indent - 1) // 2
            old_own, old_cumulative, _ = best.get(module, (own, cumulative, depth))
            best[module] = (min(old_own, own), min(old_cumulative, cumulative), depth)
    if not best:
        print("  (no -X importtime output)")
        return
    total = sum(c for _, c, d in best.values() if d == 0)
    ansi = [m for m in best if m == "ansi2048" or m.startswith("ansi2048.")]
    print(f"\npython -X importtime -m ansi2048 --version: best of {repeats}, {len(best)} modules")
    print(f"  {total / 1000:.1f} ms of imports in all")
    print(f"  ansi2048's own modules imported: {', '.join(sorted(ansi)) or 'none'}")
    print(f"  top {top} by cumulative time (depth 0 = imported directly by the program or runpy):")
    for module, (own, cumulative, depth) in sorted(best.items(), key=lambda kv: -kv[1][1])[:top]:
        print(f"    {cumulative / 1000:7.2f} ms  (self {own / 1000:5.2f})  depth {depth}  {module}")
    print(f"  top {top} by own time:")
    for module, (own, _cumulative, depth) in sorted(best.items(), key=lambda kv: -kv[1][0])[:top]:
        print(f"    {own / 1000:7.2f} ms  depth {depth}  {module}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="trials of each command (default 20)")
    parser.add_argument("--importtime", action="store_true", help="also list the slowest imports of --version")
    parser.add_argument("--no-term2048", action="store_true", help="leave term2048 out")
    parser.add_argument(
        "--fresh-venv", action="store_true", help="time a regular install of this checkout in a temporary venv"
    )
    parser.add_argument("--quick", action="store_true", help="a tiny size, seconds: that the script still runs")
    args = parser.parse_args()
    if args.quick:
        args.runs, args.no_term2048 = 2, True
    if args.fresh_venv:
        sys.exit(rerun_in_fresh_venv([a for a in sys.argv[1:] if a != "--fresh-venv"]))
    global STDIN
    STDIN = terminal_stdin()

    if importlib.util.find_spec("ansi2048") is None:
        sys.exit(f"ansi2048 is not importable by {sys.executable}; install it first (pip install -e .)")
    python = sys.executable
    scripts = Path(sysconfig.get_path("scripts"))
    console = script_path(scripts, "ansi2048")
    workdir = Path(tempfile.mkdtemp(prefix="ansi2048-startup-"))
    try:
        env = clean_env(ANSI2048_DATA_DIR=str(workdir / "data"), TERM="xterm-256color")
        notes: List[str] = []
        commands: Dict[str, List[str]] = {
            "python -c pass": [python, "-c", "pass"],
            "python -m ansi2048 --version": [python, "-m", "ansi2048", "--version"],
        }
        if console is not None:
            commands["ansi2048 --version"] = [str(console), "--version"]
            commands["ansi2048 --help"] = [str(console), "--help"]
        else:
            notes.append(f"no ansi2048 console script in {scripts}: not timed")

        t2048_python: Optional[Path] = None
        if not args.no_term2048:
            t2048_python, origin = term2048_interpreter(workdir)
            notes.append(f"term2048: {origin}")
            if t2048_python is not None:
                t2048_script = script_path(t2048_python.parent, "term2048")
                if t2048_script is None:
                    notes.append(f"term2048: no console script next to {t2048_python}: not timed")
                    t2048_python = None
                else:
                    commands["term2048: python -c pass"] = [str(t2048_python), "-c", "pass"]
                    commands["term2048 --version"] = [str(t2048_script), "--version"]
                    commands["term2048 --help"] = [str(t2048_script), "--help"]

        trials: Dict[str, Trial] = {}
        versions: Dict[str, str] = {}
        for name, argv in commands.items():
            try:
                versions[name] = check_runs(argv, env)
            except (RuntimeError, OSError, subprocess.TimeoutExpired) as error:
                notes.append(f"{name}: does not run ({error}): not timed")
                continue
            trials[name] = process_trial(argv, env)

        frame_names: List[str] = []
        cpu: Dict[str, List[float]] = defaultdict(list)  # pty runs: CPU seconds of each
        if sys.platform == "win32":
            notes.append("first frame in a pty: not on Windows")
        elif importlib.util.find_spec("pexpect") is None:
            notes.append("first frame in a pty: pexpect is not installed (pip install -e '.[test]')")
        else:
            game = [str(console)] if console is not None else [python, "-m", "ansi2048"]
            game_name = "ansi2048" if console is not None else "python -m ansi2048"
            frame = f"pty: {game_name} --seed 1 --new, first frame"
            floor = "pty: python -c print, first output"
            trials[floor] = pty_trial([python, "-c", "print('ready')"], "ready", env, False, "", cpu[floor])
            trials[frame] = pty_trial([*game, "--seed", "1", "--new"], frame_end_pattern(), env, True, "q", cpu[frame])
            for name in (floor, frame):
                trials[name]()  # warm-up, and proof that it works
            frame_names = [floor, frame]

        times = measure(trials, args.runs)

        print(f"python {sys.version.split()[0]} ({python}), {os.cpu_count()} cores, {sys.platform}")
        print(f"{args.runs} runs of each, interleaved; wall time from spawn to exit (pty: to the pattern)")
        for name, first in versions.items():
            if first and name in trials and "pass" not in name:
                print(f"  {name}: {first!r}")
        print("x floor: the same statistic for the floor (its own python -c pass; for pty runs, python -c print)")
        print(f"\n{'command':<44}{'best':>9}{'median':>9}{'x floor, best':>15}{'median':>8}")
        for name, samples in times.items():
            floor_name = "term2048: python -c pass" if name.startswith("term2048") else "python -c pass"
            if name in frame_names:
                floor_name = frame_names[0]
            best, median = min(samples), statistics.median(samples)
            ratios = ""
            if floor_name in times and floor_name != name:
                floor = times[floor_name]
                ratios = f"{best / min(floor):14.2f}x{median / statistics.median(floor):7.2f}x"
            print(f"{name:<44}{best:7.1f}ms{median:7.1f}ms{ratios}")
        if frame_names:
            median = statistics.median(times[frame_names[1]])
            verdict = "met" if median < FRAME_TARGET_MS else "NOT met"
            print(f"\nfirst frame: median {median:.1f} ms; target < {FRAME_TARGET_MS:.0f} ms: {verdict}")
            for name in frame_names:
                used = [seconds * 1000 for seconds in cpu[name][1:]]  # the warm-up left out
                print(f"  CPU, exec to exit: median {statistics.median(used):.1f} ms, best {min(used):.1f}  {name}")
        if editable_install():
            notes.append(
                "ansi2048 is an editable install here: its finder is imported at every start of this interpreter, "
                "python -c pass included; --fresh-venv gives a user's figures"
            )
        for note in notes:
            print(f"note: {note}")
        if args.importtime:
            importtime(python, env)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
