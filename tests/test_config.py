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
from hypothesis import given, settings, strategies as st

from ansi2048.game.engine import check_goal, default_goal
from ansi2048.game.keys import Action, KeyDecoder
from ansi2048.options.config import Config, apply_config, config_path, load_config, parse_config
from ansi2048.options.context import Context, Options
from ansi2048.options.parser import parse_options
from ansi2048.play.keyboard import play_terminal
from ansi2048.render.themes import dark
from ansi2048.terminal.console import Console, ScreenHooks

from .conftest import messages, run_cli

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
    assert warning is not None and "line 2" in warning.split("\n")[0]
    assert warning.split("\n")[1:] == ["/home/me/config.toml"]  # the path on a line of its own


def test_bad_keys_and_values_are_one_warning_naming_them_and_the_rest_is_kept() -> None:
    text = (
        'theme = "neon"\ncolour = "red"\nsize = "11"\ngoal = 2048\nanimation = "yes"\n'
        '[keys]\njump = ["x"]\nup = ["é", "i"]\n'
    )
    config, warning = parse_config(text, "config.toml")
    assert config == Config(goal=2048, bindings=((b"i", Action.UP), (b"I", Action.UP)))
    assert warning is not None and warning.split("\n")[1:] == ["config.toml"]
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
    merged = apply_config(given, config, interactive=True, warn=print)
    assert (merged.rows, merged.cols, merged.goal, merged.theme) == (6, 6, 512, "high-contrast")
    assert merged.animation is False and merged.bindings == ((b"i", Action.UP),)
    piped = apply_config(Options(), config, interactive=False, warn=print)
    # A replay plays what its header says on every machine: no size, goal or keys from the config.
    assert (piped.rows, piped.goal, piped.bindings, piped.theme) == (None, None, (), "dark")
    assert apply_config(Options(), Config(animation=True), True, print).animation is True
    assert apply_config(Options(animation=False), Config(animation=True), True, print).animation is False


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


def test_a_file_saved_with_a_byte_order_mark_is_read(tmp_path: Path) -> None:
    # Some Windows editors start UTF-8 files with one; TOML itself has no place for it.
    path = tmp_path / "config.toml"
    path.write_bytes(b"\xef\xbb\xbf" + GOOD.encode("utf-8"))
    warnings: List[str] = []
    config = load_config({"ANSI2048_CONFIG": str(path)}, warnings.append)
    assert warnings == []
    assert config == parse_config(GOOD, "config.toml")[0] and config.theme == "dark"
    # Only at the start: a BOM further in is no mark, and TOML refuses it.
    path.write_bytes(GOOD.encode("utf-8") + b"\xef\xbb\xbf")
    assert load_config({"ANSI2048_CONFIG": str(path)}, warnings.append) == Config() and len(warnings) == 1


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
    said = messages(broken.stderr)
    assert len(said) == 1 and "warning" in said[0] and "line 2" in said[0] and str(path) in said[0]
    assert b"score" in broken.stdout


def test_the_keyboard_game_uses_the_configs_size_and_keys(tmp_path: Path) -> None:
    config_file = tmp_path / "config.toml"
    config_file.write_text('size = "3x5"\n[keys]\nup = ["i"]\n', encoding="utf-8")
    env = {"ANSI2048_CONFIG": str(config_file), "ANSI2048_DATA_DIR": str(tmp_path), "TERM": "xterm"}
    options = apply_config(Options(seed=4), load_config(env, lambda message: None), interactive=True, warn=print)
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


# -- any config (issue 20): hostile files, and size and goal as the command line checks them --


def _load(tmp_path: Path, data: bytes) -> tuple[Config, List[str]]:
    path = tmp_path / "config.toml"
    path.write_bytes(data)
    said: List[str] = []
    return load_config({"ANSI2048_CONFIG": str(path)}, said.append), said


def _check_said(said: List[str]) -> None:
    """At most one warning: one line of words, short, with no control code
    from the file (it would reach the terminal), then the file's path alone."""
    assert len(said) <= 1, said
    for message in said:
        line, *paths = message.split("\n")
        assert len(paths) == 1 and paths[0].endswith("config.toml") and len(line) < 4000, message[:200]
        assert not any(ord(ch) < 32 or 0x7F <= ord(ch) < 0xA0 for ch in line), line[:200]


_NEST = [1, 10, 100, 1000, 10_000, 200_000]
HOSTILE = {
    **{f"arrays nested {n}": b"a = " + b"[" * n + b"]" * n for n in _NEST},
    **{f"arrays left open {n}": b"a = " + b"[" * n for n in _NEST},
    **{f"inline tables nested {n}": b"a = " + b"{b = " * n + b"1" + b"}" * n for n in _NEST},
    **{f"keys nested {n}": b"[keys]\nup = " + b"[" * n + b'"i"' + b"]" * n for n in _NEST},
    **{f"dotted key {n}": b"a" + b".a" * n + b" = 1" for n in _NEST},
    **{f"tables {n}": b"".join(b"[t%d]\n" % i for i in range(n)) for n in _NEST[:5]},
    **{f"bad keys {n}": b"".join(b"k%d = 1\n" % i for i in range(n)) for n in _NEST[:5]},
    "a long string": b'theme = "' + b"x" * 900_000 + b'"',
    "an escape in a value": b'theme = "\\u001b]0;owned\\u0007\\u001b[2J"',
    "an escape in a key": b'"\\u001b[2J" = 1\n[keys]\n"\\u001b[31m" = ["x"]\nup = ["\\u001b"]',
    "NUL bytes": b"theme = \x00\x00",
    "not UTF-8": b'theme = "\xff\xfe"',
    "a byte order mark": b'\xef\xbb\xbftheme = "dark"',
    "CRLF": b'theme = "dark"\r\nsize = 3\r\n',
    "a 400-digit size": b"size = 1" + b"0" * 400,
    "a 5000-digit goal": b"goal = 1" + b"0" * 5000,
    "a negative size": b"size = -4",
    "a float goal": b"goal = 2048.0",
    "infinity": b"goal = inf",
    "a size table": b"[size]\nrows = 4",
    "only a comment, huge": b"#" * 1_000_000,
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_any_config_is_the_defaults_or_its_good_part_with_at_most_one_warning(tmp_path: Path, name: str) -> None:
    config, said = _load(tmp_path, HOSTILE[name])
    _check_said(said)
    results = [config]
    try:
        text = HOSTILE[name].decode("utf-8")
    except UnicodeDecodeError:
        pass
    else:  # the parser too, past the file's size limit
        parsed, warning = parse_config(text, "config.toml")
        _check_said([warning] if warning else [])
        results.append(parsed)
    for result in results:
        assert isinstance(result, Config)
        if result.goal is not None:  # whatever survives is playable
            rows, cols = result.size or (4, 4)
            check_goal(result.goal, rows, cols)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=2000))
def test_any_bytes_as_a_config_never_crash(data: bytes) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        _config, said = _load(Path(tmp), data)
    _check_said(said)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.sampled_from(["theme", "size", "goal", "animation", "keys", "[keys]", "up", "x", '"', "[", "]", "{", "}"])
        | st.text(max_size=8),
        max_size=30,
    ).map(lambda parts: "".join(f"{part} = " if i % 3 == 0 else part for i, part in enumerate(parts)))
)
def test_any_toml_ish_text_never_crashes(text: str) -> None:
    config, warning = parse_config(text, "config.toml")
    _check_said([warning] if warning else [])
    assert isinstance(config, Config)


_SIDES = ["0", "1", "2", "3", "2x3", "3x2", "2x5", "4", "10", "11", "3x11", "999", "4x4x4", "", "x", "٣"]
_GOALS = ["0", "2", "4", "8", "16", "32", "64", "256", "512", "1024", "2048", "3000", "4096", str(2**31), str(2**32)]


@pytest.mark.parametrize("size", _SIDES)
@pytest.mark.parametrize("goal", _GOALS)
def test_size_and_goal_from_the_config_are_checked_as_the_command_line_checks_them(size: str, goal: str) -> None:
    # The command line's verdict on --size S --goal G ...
    try:
        given = parse_options(["--size", size, "--goal", goal])
        command_line = (given.rows, given.cols, given.goal)
    except SystemExit:
        command_line = None
    # ... is the config file's on size = "S" and goal = G.
    config, warning = parse_config(f'size = "{size}"\ngoal = {goal}\n', "config.toml")
    said: List[str] = []
    options = apply_config(Options(), config, True, said.append)
    assert said == []  # the file's own pair is checked in it, with its line
    if command_line is not None:
        assert warning is None
        assert (options.rows, options.cols, options.goal) == command_line
    else:
        assert warning is not None and "line " in warning
        rows, cols = options.rows or 4, options.cols or 4
        check_goal(options.goal or default_goal(rows, cols), rows, cols)  # the game it starts can be won


def test_config_size_2_with_goal_2048_is_refused_and_the_2x2_game_plays_to_8() -> None:
    config, warning = parse_config('size = "2"\ngoal = 2048\n', "config.toml")
    assert warning is not None and "line 2" in warning and "cannot be reached on a 2x2 board" in warning
    options = apply_config(Options(), config, True, print)
    assert (options.rows, options.cols, options.goal) == (2, 2, None)  # None: the board's default, 8


@pytest.mark.parametrize(
    "argv, text, ignored",
    [
        (["--size", "2"], "goal = 2048", "goal"),
        (["--size", "3"], "goal = 4096", "goal"),
        (["--goal", "2048"], 'size = "2"', "size"),
        (["--goal", "1024"], 'size = "2x3"', "size"),
    ],
)
def test_a_config_value_that_does_not_fit_the_command_line_is_ignored_with_a_warning(
    argv: List[str], text: str, ignored: str
) -> None:
    given = parse_options(argv)
    config, warning = parse_config(text, "config.toml")
    assert warning is None  # fine on its own
    said: List[str] = []
    options = apply_config(given, config, True, said.append)
    assert len(said) == 1 and f"config file's {ignored} is ignored" in said[0]
    assert (options.rows, options.cols, options.goal) == (given.rows, given.cols, given.goal)
