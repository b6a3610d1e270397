"""The config file: defaults for the options, extra keys, one warning for
a bad file, and the command line winning over it."""

from __future__ import annotations

import io
import os
from contextlib import nullcontext
from pathlib import Path
from typing import Any, List

import platformdirs
import pytest

from ansi2048.config import Config, apply_config, config_path, load_config, parse_config
from ansi2048.context import Context, Options
from ansi2048.interactive import play_terminal
from ansi2048.keys import Action, KeyDecoder
from ansi2048.options import parse_options
from ansi2048.render.themes import dark
from ansi2048.terminal.console import Console, ScreenHooks

from .conftest import run_cli

GOOD = """\
# my settings
theme = "dark"
size = "3x5"
goal = 512
animation = false

[keys]
up = ["i"]
left = ["j"]
undo = "z"
"""


def test_a_good_file_gives_every_setting() -> None:
    config, warning = parse_config(GOOD, "config.toml")
    assert warning is None
    assert config.theme == "dark" and config.size == (3, 5) and config.goal == 512
    assert config.animation is False
    bindings = dict(config.bindings)
    assert bindings[b"i"] is bindings[b"I"] is Action.UP
    assert bindings[b"j"] is bindings[b"J"] is Action.LEFT
    assert bindings[b"z"] is Action.UNDO
    assert parse_config('size = 5\ngoal = "64"\n', "c")[0] == Config(size=(5, 5), goal=64)


def test_a_syntax_error_is_one_warning_naming_the_line_and_the_defaults_are_used() -> None:
    config, warning = parse_config('theme = "dark"\nsize = \n', "/home/me/config.toml")
    assert config == Config()
    assert warning is not None and "\n" not in warning
    assert "/home/me/config.toml" in warning and "line 2" in warning


def test_bad_keys_and_values_are_one_warning_naming_them_and_the_rest_is_kept() -> None:
    text = (
        'theme = "neon"\ncolour = "red"\nsize = "11"\ngoal = 2048\nanimation = "yes"\n'
        '[keys]\njump = ["x"]\nup = ["é", "i"]\n'
    )
    config, warning = parse_config(text, "config.toml")
    assert config == Config(goal=2048, bindings=((b"i", Action.UP), (b"I", Action.UP)))
    assert warning is not None and "\n" not in warning
    for part in (
        "line 1: theme",
        "neon",
        "line 2: unknown key 'colour'",
        "line 3: size",
        "line 5: animation",
        "line 7: unknown action 'jump'",
        "line 8: keys.up",
    ):
        assert part in warning, part


def test_one_key_for_two_actions_keeps_the_first() -> None:
    config, warning = parse_config('[keys]\nup = ["x"]\ndown = ["x"]\n', "c")
    assert dict(config.bindings)[b"x"] is Action.UP
    assert warning is not None and "line 3" in warning and "already bound to up" in warning


def test_extra_keys_add_to_the_defaults_and_take_over_a_shadowed_key() -> None:
    config, _ = parse_config(GOOD, "c")
    decoder = KeyDecoder(comments=False, extra=config.bindings)
    assert decoder.feed(b"ijJkhswz\x1b[A") == [
        Action.UP,  # i: new
        Action.LEFT,  # j: taken over from down
        Action.LEFT,
        Action.UP,  # k, h: the defaults stay
        Action.LEFT,
        Action.DOWN,  # s: down still has its other keys
        Action.UP,
        Action.UNDO,  # z: new
        Action.UP,  # arrows untouched
    ]
    assert KeyDecoder(comments=False).feed(b"ij") == [Action.DOWN]  # and only where asked


def test_the_command_line_wins_and_piped_games_take_only_the_look() -> None:
    config = Config(theme="dark", size=(3, 5), goal=512, animation=False, bindings=((b"i", Action.UP),))
    given = Options(rows=6, cols=6, theme="high-contrast")
    merged = apply_config(given, config, interactive=True)
    assert (merged.rows, merged.cols, merged.goal, merged.theme) == (6, 6, 512, "high-contrast")
    assert merged.animation is False and merged.bindings == ((b"i", Action.UP),)
    piped = apply_config(Options(), config, interactive=False)
    # A replay plays what its header says on every machine: no size, goal or keys from the config.
    assert (piped.rows, piped.goal, piped.bindings, piped.theme) == (None, None, (), "dark")
    assert apply_config(Options(), Config(animation=True), True).animation is True
    assert apply_config(Options(animation=False), Config(animation=True), True).animation is False


def test_no_animation_is_an_option() -> None:
    assert parse_options([]).animation is True
    assert parse_options(["--no-animation"]).animation is False


def test_the_path_is_in_the_platform_config_dir_unless_overridden() -> None:
    expected = os.path.join(platformdirs.user_config_dir("ansi2048", appauthor=False), "config.toml")
    assert config_path({}) == expected
    assert config_path({"ANSI2048_CONFIG": "/x/y.toml"}) == "/x/y.toml"


def test_config_path_prints_it_and_exits_0(tmp_path: Path) -> None:
    path = str(tmp_path / "c.toml")
    result = run_cli(["--config-path"], env={"ANSI2048_CONFIG": path})
    assert result.returncode == 0
    assert result.stdout.decode().splitlines() == [path]


def test_a_missing_or_unreadable_file_is_the_defaults(tmp_path: Path) -> None:
    warnings: List[str] = []
    assert load_config({"ANSI2048_CONFIG": str(tmp_path / "none.toml")}, warnings.append) == Config()
    assert warnings == []
    assert load_config({"ANSI2048_CONFIG": str(tmp_path)}, warnings.append) == Config()  # a directory
    assert len(warnings) == 1


def test_the_program_reads_it_and_a_bad_file_is_one_warning(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    env = {"ANSI2048_CONFIG": str(path), "TERM": "xterm-256color"}
    path.write_text('theme = "dark"\n', encoding="utf-8")
    themed = run_cli(["--seed", "3", "--color", "always"], b"wasd", env=env)
    assert themed.returncode == 0 and themed.stderr == b""
    assert f"48;5;{dark().empty[0].xterm}m" in themed.stdout.decode()
    path.write_text('theme = "dark"\n[keys\n', encoding="utf-8")
    broken = run_cli(["--seed", "3"], b"wasd", env=env)
    assert broken.returncode == 0
    lines = broken.stderr.decode().splitlines()
    assert len(lines) == 1 and "warning" in lines[0] and "line 2" in lines[0]
    assert b"score" in broken.stdout


def test_the_keyboard_game_uses_the_configs_size_and_keys(tmp_path: Path) -> None:
    config_file = tmp_path / "config.toml"
    config_file.write_text('size = "3x5"\n[keys]\nup = ["i"]\n', encoding="utf-8")
    env = {"ANSI2048_CONFIG": str(config_file), "ANSI2048_DATA_DIR": str(tmp_path), "TERM": "xterm"}
    options = apply_config(Options(seed=4), load_config(env, lambda message: None), interactive=True)
    batches = [b"iaq"]

    def console(stdin: Any, stdout: Any, hooks: ScreenHooks) -> Any:
        return nullcontext(
            Console(lambda decoder: decoder.feed(batches.pop(0)), lambda text: None, lambda: (80, 30), False)
        )

    ctx = Context(options, io.StringIO(), io.StringIO(), env, lambda message: None, lambda: 0)
    assert play_terminal(ctx, console) == 0
    saved = (tmp_path / "game-3x5-2048.keys").read_bytes()  # the config's size
    assert saved.partition(b"\n")[2] == b"wa"  # i was played, and saved, as the up it means


@pytest.mark.parametrize("option", ["--version", "--help"])
def test_version_and_help_do_not_read_the_config(tmp_path: Path, option: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text("this is not toml [", encoding="utf-8")
    result = run_cli([option], env={"ANSI2048_CONFIG": str(path)})
    assert result.returncode == 0 and result.stderr == b""


def test_help_names_the_new_options_within_80_columns() -> None:
    result = run_cli(["--help"], env={"COLUMNS": "80"})
    out = result.stdout.decode()
    for option in ("--theme", "--cast", "--no-animation", "--config-path", "high-contrast"):
        assert option in out
    assert max(len(line) for line in out.splitlines()) < 80


def test_the_readme_example_is_a_good_config() -> None:
    readme = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")
    example = readme.split("```toml\n", 1)[1].split("```", 1)[0]
    config, warning = parse_config(example, "README.md")
    assert warning is None
    assert config.theme == "dark" and dict(config.bindings)[b"j"] is Action.LEFT
