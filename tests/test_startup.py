"""What runs before the keyboard game's first frame: only what that frame
needs. Modules for other modes (casts, pipes, the AI, --stats) and heavy
standard modules that only they use are imported when used, not at start-up
(benchmarks/startup.py times the first frame; no timing here)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Optional

import pexpect
import pytest

from ansi2048.render.repaint import FRAME_END

from .ptys import spawn

# Loaded by other modes only; each costs start-up time if imported early.
NOT_BEFORE_THE_FIRST_FRAME = {
    "ansi2048.ai",
    "ansi2048.render.cast",
    "ansi2048.play.headless",
    "ansi2048.play.piped",
    "ansi2048.play.stats",
    "statistics",  # --stats only (with decimal, fractions and random)
    "shutil",  # argparse's way to measure --help's width (with bz2 and lzma)
    "platformdirs",  # pathlib and tempfile: the XDG directories need neither on Linux
    "hashlib",  # OpenSSL: seeding uses the interpreter's own SHA-256
    "datetime",  # dates: a finished game's record, the daily game
    "textwrap",  # a window too small to play in
}


@pytest.mark.posix("a pty")
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="platformdirs is the way elsewhere")
def test_the_keyboard_game_starts_without_what_other_modes_need(tmp_path: Path) -> None:
    dump = tmp_path / "modules.txt"
    # The AI starts loading in the background once the first frame is out
    # (Advisor.warm_up): the modules are taken as they are at that moment, or
    # at exit if it never came.
    code = (
        "import atexit, sys\n"
        "from ansi2048.play import advisor as autoplay\n"
        "seen = []\n"
        "warm_up = autoplay.Advisor.warm_up\n"
        "def noted(self, board):\n"
        "    seen.append(sorted(sys.modules))\n"
        "    warm_up(self, board)\n"
        "autoplay.Advisor.warm_up = noted\n"
        "def dump(path):\n"
        "    open(path, 'w').write(chr(10).join(seen[0] if seen else sorted(sys.modules)))\n"
        f"atexit.register(dump, {str(dump)!r})\n"
        "from ansi2048.cli import main\n"
        "sys.exit(main(['--seed', '1', '--new']))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANSI2048_", "XDG_"))}
    env.pop("NO_COLOR", None)
    # The user's own directories, as a real start finds them (under a fresh HOME).
    env.update(TERM="xterm-256color", HOME=str(tmp_path))
    child = spawn(sys.executable, ["-c", code], env=env, dimensions=(30, 80), timeout=60)
    try:
        child.expect_exact(FRAME_END)
        child.send("q")  # quitting an unplayed game: nothing more to load
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    loaded = set(dump.read_text().split())
    assert "ansi2048.play.keyboard" in loaded  # the dump is the game's
    assert not loaded & NOT_BEFORE_THE_FIRST_FRAME, sorted(loaded & NOT_BEFORE_THE_FIRST_FRAME)
    assert (tmp_path / ".local" / "share" / "ansi2048").is_dir()  # the game's save went where platformdirs says


HOMES = ["/home/someone", "", "relative/home", None]
XDG_VALUES = ["/xdg/here", "", "   ", "relative/xdg", None]


@pytest.mark.parametrize("kind, variable", [("config", "XDG_CONFIG_HOME"), ("data", "XDG_DATA_HOME")])
@pytest.mark.parametrize("home", HOMES)
@pytest.mark.parametrize("xdg", XDG_VALUES)
def test_user_dirs_are_where_platformdirs_puts_them(
    monkeypatch: pytest.MonkeyPatch, kind: str, variable: str, home: Optional[str], xdg: Optional[str]
) -> None:
    import platformdirs

    from ansi2048.storage.userdirs import user_dir

    for name, value in (("HOME", home), (variable, xdg)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    for name in ("ANDROID_DATA", "ANDROID_ROOT"):
        monkeypatch.delenv(name, raising=False)
    ask = platformdirs.user_config_dir if kind == "config" else platformdirs.user_data_dir
    try:
        expected = ask("ansi2048", appauthor=False)
    except RuntimeError:  # this platformdirs finds no home at all: ours must not find one either
        with pytest.raises(RuntimeError):
            user_dir(kind, dict(os.environ))
        return
    assert user_dir(kind, dict(os.environ)) == expected


@pytest.mark.parametrize("seed", [0, 1, 7, 20261122, 2**64, 10**999 - 1])
def test_seeding_is_sha256_whichever_module_computes_it(seed: int) -> None:
    import hashlib

    from ansi2048.game.spawns import seed_state

    digest = hashlib.sha256(str(seed).encode("ascii")).digest()
    assert seed_state(seed) == int.from_bytes(digest[:8], "little")


def test_seeding_looks_for_its_sha256_at_the_first_game_only(monkeypatch: pytest.MonkeyPatch) -> None:
    # Before Python 3.12 there is no _sha2: looked for at every seeding, the
    # failed import searched every path again (~40 us of every new game).
    import builtins

    from ansi2048.game.spawns import seed_state

    looked = []
    real_import = builtins.__import__

    def counting(name: str, *args: object, **kwargs: object) -> object:
        if name in ("_sha2", "_sha256", "hashlib"):
            looked.append(name)
        return real_import(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(builtins, "__import__", counting)
    seed_state(1)  # the process's first seeding, or a later one
    first = len(looked)
    for seed in range(2, 10):
        seed_state(seed)
    assert len(looked) == first, looked


def test_importing_the_spawns_looks_for_no_sha256() -> None:
    import subprocess

    from .conftest import child_env

    code = (
        "import sys\n"
        "import ansi2048.game.spawns as spawns\n"
        "print(sorted({'_sha2', '_sha256', 'hashlib'} & set(sys.modules)))\n"
        "spawns.seed_state(7)\n"
        "print(bool({'_sha2', '_sha256', 'hashlib'} & set(sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=child_env(), timeout=60)
    assert (done.returncode, done.stdout) == (0, "[]\nTrue\n"), done.stderr


def test_the_written_down_256_colour_answers_are_what_the_search_finds() -> None:
    # The classic board's 256-colour stand-ins are not searched at start-up:
    # each answer kept must still be the search's (colours or search changed:
    # rerun the search and write its answer down).
    from ansi2048.render.palette import _FOUND, classic, separated_xterm

    assert _FOUND, "nothing written down: the start-up pays for the search again"
    for (colors, ramp), indices in _FOUND.items():
        assert separated_xterm(list(colors), found={}, ramp=ramp) == dict(zip(colors, indices))
    backgrounds = {classic().empty[0].rgb, classic().grid.rgb, *(bg.rgb for bg, _ in classic().tiles.values())}
    assert any(set(colors) == backgrounds | {classic().beyond[0].rgb} for colors, _ in _FOUND)  # the one start-up uses
