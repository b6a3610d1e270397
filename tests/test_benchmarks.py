"""Every script in benchmarks/ still runs (issue 40, item 20): each takes
``--quick``, a tiny size that runs in seconds, and the suite runs each so,
checking that it ends well and prints its figures. The scripts are found,
not listed: one added later is run too, and fails here until it takes
``--quick``.

A script that needs what this machine lacks (a slow link needs root and
TUN devices) says so on standard error and exits 77 (automake's "skipped"):
skipped here, with its words."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import List

import pytest

from .conftest import child_env

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
CANNOT_RUN_HERE = 77  # benchmarks/slow_link.py's, for one


def _scripts() -> List[Path]:
    return sorted(path for path in BENCHMARKS.glob("*.py") if not path.name.startswith("_"))


def test_the_scripts_are_found() -> None:
    names = {path.name for path in _scripts()}
    assert {"engine.py", "serve.py", "watch.py", "store.py"} <= names, names


@pytest.mark.posix("the scripts measure POSIX processes (resource, ptys, the server)")
@pytest.mark.parametrize("script", _scripts(), ids=lambda path: path.name)
def test_each_benchmark_runs_at_its_tiny_size_and_prints_figures(script: Path, tmp_path: Path) -> None:
    source = script.read_text(encoding="utf-8")
    assert '"--quick"' in source, f"{script.name} has no --quick (a tiny size, seconds): add one"
    # As a user runs one (python benchmarks/NAME.py): its folder first on
    # sys.path (watch.py imports serve.py), no PYTHONSAFEPATH; the package
    # under test next, then the checkout (the scripts import tests' helpers).
    env = child_env()
    env.pop("PYTHONSAFEPATH", None)
    env["PYTHONPATH"] = os.pathsep.join([env["PYTHONPATH"], str(BENCHMARKS.parent)])
    result = subprocess.run(
        [sys.executable, str(script), "--quick"],
        capture_output=True,
        env=env,
        cwd=tmp_path,
        timeout=240,
        check=False,
    )
    said = result.stderr.decode(errors="replace")
    if result.returncode == CANNOT_RUN_HERE:
        pytest.skip(said.strip().splitlines()[-1])
    assert result.returncode == 0, said
    printed = result.stdout.decode(errors="replace")
    figures = re.findall(r"\d+(?:[.,]\d+)*", printed)
    assert len(figures) >= 3, printed  # its figures, not only a heading
    assert "Traceback" not in said, said
