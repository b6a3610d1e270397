"""Shell completion: ``ansi2048 --completion bash|zsh|fish``, written from the
parser and loaded into the real shells (bash always on POSIX; zsh and fish
where they are installed)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Sequence

import pytest

from ansi2048.options.completion import WRITERS, completed_options, completion_script
from ansi2048.options.parser import COMPLETION_SHELLS, THEME_CHOICES, build_parser

from .conftest import run_cli
from .test_architecture import loaded_after

CHOICES = {"--color": ("auto", "always", "never"), "--theme": THEME_CHOICES, "--completion": COMPLETION_SHELLS}


def shell_env(home: Path) -> Dict[str, str]:
    """A bare environment: none of the developer's shell set-up or config."""
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "TERM": "dumb", "LC_ALL": "C"}


def test_a_script_for_every_shell_the_option_offers() -> None:
    assert set(WRITERS) == set(COMPLETION_SHELLS)
    assert set(build_parser()._option_string_actions["--completion"].choices or ()) == set(COMPLETION_SHELLS)


@pytest.mark.parametrize("shell", COMPLETION_SHELLS)
def test_every_option_and_choice_is_in_the_script(shell: str) -> None:
    parser = build_parser()
    script = completion_script(shell, parser)
    for action in parser._actions:
        for name in action.option_strings:
            # fish names options without their dashes (-l theme, -s h).
            assert (name if shell != "fish" else name.lstrip("-")) in script, name
    for choices in CHOICES.values():
        assert " ".join(choices) in script


@pytest.mark.parametrize("shell", COMPLETION_SHELLS)
def test_the_script_follows_the_parser(shell: str) -> None:
    # Written from the parser: an option added there is completed, with its choices.
    parser = build_parser()
    parser.add_argument("--speed", choices=("slow", "brisk"))
    script = completion_script(shell, parser)
    assert "speed" in script and "slow brisk" in script
    assert "speed" not in completion_script(shell, build_parser())


def test_only_plain_words_reach_a_script() -> None:
    parser = build_parser()
    parser.add_argument("--evil", choices=("$(rm -rf ~)",))
    with pytest.raises(ValueError, match="unquoted"):
        completed_options(parser)


@pytest.mark.parametrize("shell", COMPLETION_SHELLS)
def test_the_command_prints_the_script(shell: str) -> None:
    result = run_cli(["--completion", shell])
    assert result.returncode == 0 and result.stderr == b""
    # Byte for byte: '\n' line ends on every system (a shell reads no '\r\n').
    assert result.stdout == completion_script(shell, build_parser()).encode()


def test_a_shell_without_completion_is_one_line_and_exit_2() -> None:
    result = run_cli(["--completion", "tcsh"])
    err = result.stderr.decode()
    assert result.returncode == 2 and len(err.strip().splitlines()) == 1 and "--completion" in err
    assert result.stdout == b"" and "Traceback" not in err


def test_completion_loads_nothing_of_the_game() -> None:
    code = "from ansi2048.cli import main\ntry:\n    main(['--completion', 'bash'])\nexcept SystemExit:\n    pass"
    light = {
        "ansi2048",
        "ansi2048.cli",
        "ansi2048.options",
        "ansi2048.options.parser",
        "ansi2048.game",
        "ansi2048.game.limits",
        "ansi2048.options.completion",
    }
    assert loaded_after(code) <= light


# --- in the real shells -------------------------------------------------------

# (words typed, the cursor at the end of the last) -> what is offered
BASH_CASES = [
    (["--the"], ["--theme"]),
    (["--theme", ""], list(THEME_CHOICES)),
    (["--color", ""], ["auto", "always", "never"]),
    (["--color", "a"], ["auto", "always"]),
    (["--color", "=", "al"], ["always"]),  # --color=al, split at '=' by bash
    (["--color", "="], ["auto", "always", "never"]),
    (["--completion", "f"], ["fish"]),
    (["--record", "ga"], ["game.cast", "game.keys", "games"]),
    (["--cast", "my"], ["my game.cast"]),
    (["--size", ""], []),  # a value of the user's own: nothing offered
    (["--seed", "1"], []),
    (["--json", "--no-"], ["--no-animation", "--no-undo"]),
]


def files_to_complete(tmp_path: Path) -> Path:
    tmp_path.mkdir()
    for name in ("game.keys", "game.cast", "my game.cast", "other.txt"):
        (tmp_path / name).write_text("")
    (tmp_path / "games").mkdir()
    return tmp_path


@pytest.mark.posix("bash")
def test_bash_completes_options_choices_and_files(tmp_path: Path) -> None:
    bash = shutil.which("bash")
    assert bash, "bash is needed to test the bash completion"
    script = tmp_path / "ansi2048.bash"
    script.write_text(completion_script("bash", build_parser()))
    lines = [f"source {script}", "complete -p ansi2048"]
    for words, _ in BASH_CASES:
        quoted = " ".join("'" + word + "'" for word in ["ansi2048", *words])
        lines.append(
            f"COMP_WORDS=({quoted}); COMP_CWORD={len(words)}; COMPREPLY=(); _ansi2048;"
            ' printf "%s\\n" "${#COMPREPLY[@]}" "${COMPREPLY[@]}"'
        )
    result = subprocess.run(
        [bash, "--norc", "--noprofile", "-c", "\n".join(lines)],
        cwd=files_to_complete(tmp_path / "files"),
        env=shell_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0 and result.stderr == "", result.stderr
    out = result.stdout.splitlines()
    assert out[0] == "complete -F _ansi2048 ansi2048"
    rest = out[1:]
    for words, expected in BASH_CASES:
        count = int(rest[0])
        offered, rest = rest[1 : 1 + count], rest[1 + count :]
        assert sorted(offered) == sorted(expected), words


@pytest.mark.posix("a pty and bash")
def test_bash_completes_on_tab(tmp_path: Path) -> None:
    # The whole way: an interactive bash, the script sourced as the README says, a real Tab.
    pytest.importorskip("pexpect")
    from .ptys import spawn

    bash = shutil.which("bash")
    assert bash
    script = tmp_path / "ansi2048.bash"
    script.write_text(completion_script("bash", build_parser()))
    shell = spawn(
        bash,
        ["--norc", "--noprofile", "-i"],
        env=shell_env(tmp_path),
        cwd=str(files_to_complete(tmp_path / "files")),
        encoding="utf-8",
        timeout=20,
        dimensions=(24, 200),
    )
    try:
        # A function stands in for the game: it says what it was given.
        shell.sendline(f"PS1='$ '; ansi2048() {{ echo \"GOT $*\"; }}; source {script}; echo LOADED")
        shell.expect("LOADED")
        shell.send("ansi2048 --them\t")
        shell.expect("--theme")  # unique: completed in the line
        shell.send("hig\t\n")
        shell.expect("GOT --theme high-contrast")
        shell.send("ansi2048 --cast my\t\n")
        shell.expect("GOT --cast my game.cast")
    finally:
        shell.close(force=True)


@pytest.mark.posix("a pty and zsh")
def test_zsh_completes_on_tab(tmp_path: Path) -> None:
    pytest.importorskip("pexpect")
    from .ptys import spawn

    zsh = shutil.which("zsh")
    if zsh is None:
        pytest.skip("zsh is not installed")
    functions = tmp_path / "functions"
    functions.mkdir()
    (functions / "_ansi2048").write_text(completion_script("zsh", build_parser()))
    shell = spawn(
        zsh,
        ["-f", "-i"],
        env=shell_env(tmp_path),
        cwd=str(files_to_complete(tmp_path / "files")),
        encoding="utf-8",
        timeout=20,
        dimensions=(24, 200),
    )
    try:
        # Autoloaded from $fpath, as the script's own comment says to install it.
        shell.sendline(
            f"PS1='%% '; ansi2048() {{ echo \"GOT $*\"; }}; fpath=({functions} $fpath);"
            " autoload -U compinit; compinit -u -D; echo LOADED"
        )
        shell.expect("LOADED")
        shell.send("ansi2048 --them\t")
        shell.expect("--theme=")
        shell.send("hig\t\n")
        shell.expect("GOT --theme=high-contrast")
        shell.send("ansi2048 --record my\t\n")
        shell.expect("GOT --record my game.cast")
    finally:
        shell.close(force=True)


def fish_completions(fish: str, script: Path, line: str, cwd: Path) -> List[str]:
    result = subprocess.run(
        [fish, "--no-config", "-c", f"source {script}; complete -C '{line}'"],
        cwd=cwd,
        env=shell_env(cwd.parent),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return sorted(entry.split("\t")[0] for entry in result.stdout.splitlines())


@pytest.mark.skipif(sys.platform == "win32", reason="fish is a POSIX shell")
def test_fish_completes_options_choices_and_files(tmp_path: Path) -> None:
    fish = shutil.which("fish")
    if fish is None:
        pytest.skip("fish is not installed")
    script = tmp_path / "ansi2048.fish"
    script.write_text(completion_script("fish", build_parser()))
    cwd = files_to_complete(tmp_path / "files")
    assert fish_completions(fish, script, "ansi2048 --the", cwd) == ["--theme"]
    assert fish_completions(fish, script, "ansi2048 --theme ", cwd) == sorted(THEME_CHOICES)
    assert fish_completions(fish, script, "ansi2048 --color=al", cwd) == ["--color=always"]
    assert fish_completions(fish, script, "ansi2048 --record ga", cwd) == ["game.cast", "game.keys", "games/"]
    assert fish_completions(fish, script, "ansi2048 --size ", cwd) == []
    assert fish_completions(fish, script, "ansi2048 ga", cwd) == []  # no file is an argument by itself


def run_with_stdout(stdout: int, wrapper: Sequence[str] = ()) -> subprocess.CompletedProcess[bytes]:
    """``ansi2048 --completion bash`` with ``stdout``, run by ``wrapper`` (a
    command that ends by running its arguments) if given."""
    return subprocess.run(
        [*wrapper, sys.executable, "-m", "ansi2048", "--completion", "bash"],
        stdout=stdout,
        stderr=subprocess.PIPE,
        timeout=60,
        check=False,
    )


def test_a_reader_that_left_is_one_line_and_exit_1() -> None:
    # As every other mode says it (issue 20): the script did not arrive.
    read_end, write_end = os.pipe()
    os.close(read_end)  # gone before the first byte: the write fails at once
    try:
        result = run_with_stdout(write_end)
    finally:
        os.close(write_end)
    lines = result.stderr.decode().splitlines()
    assert result.returncode == 1
    assert len(lines) == 1 and "cannot write the completion script" in lines[0], lines


@pytest.mark.posix("a POSIX shell's >&-")
def test_a_closed_stdout_is_one_line_and_exit_1() -> None:
    # Closed by a shell before it execs the game (not by a preexec_fn: no
    # Python code runs in a fork of this threaded process).
    result = run_with_stdout(subprocess.DEVNULL, wrapper=["sh", "-c", 'exec "$@" >&-', "sh"])
    err = result.stderr.decode()
    assert result.returncode == 1 and len(err.strip().splitlines()) == 1, err
    assert "standard output is closed" in err and "Traceback" not in err


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")
def test_a_full_disk_is_one_line_and_exit_1() -> None:
    with open("/dev/full", "wb") as full:
        result = run_with_stdout(full.fileno())
    err = result.stderr.decode()
    assert result.returncode == 1 and len(err.strip().splitlines()) == 1, err
    assert "No space left" in err and "Traceback" not in err
