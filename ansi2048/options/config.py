"""The config file: defaults for the options, and extra keys.

``config.toml`` in the platform's config directory (``ANSI2048_CONFIG``
names another file), for example::

    theme = "dark"
    size = "4"          # or "3x5", or 4
    goal = 2048
    animation = true

    [keys]              # extra keys; a key another action had is taken over
    up = ["i"]
    left = ["j"]

The command line wins over the file. A file that cannot be read as TOML is
ignored as a whole; a bad key or value is ignored alone. Either way one
warning names the line. Size, goal and keys apply to the keyboard game only:
piped games play what their input says, whatever the config. Size and goal
go through the command line's own checks (:func:`.engine.parse_size`,
:func:`.engine.check_goal`), the goal against the board it would be played on.

The file is read only if it is a regular file (through a symlink: a user may
link it from elsewhere) of at most :data:`MAX_CONFIG_BYTES`; a FIFO, a device,
a directory, a huge or endlessly nested file, a line over :data:`MAX_LINE`
characters is one warning and the defaults.
"""

from __future__ import annotations

import re
import reprlib
import sys
from dataclasses import dataclass, replace
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

from ..game.engine import check_goal, parse_goal, parse_size
from ..game.keys import Action
from ..game.limits import DEFAULT_SIZE
from ..game.protocol import ACTION_NAMES
from ..render.themes import THEMES
from .context import Options

__all__ = [
    "CONFIG_ENV",
    "MAX_CONFIG_BYTES",
    "MAX_LINE",
    "Config",
    "apply_config",
    "config_path",
    "load_config",
    "parse_config",
]

CONFIG_ENV = "ANSI2048_CONFIG"
# A config is a few short lines; far more is not one (and /dev/zero never
# ends). Long lines are refused before parsing: the TOML parser's time and
# memory grow with the square of a dotted key's length (a.a.a...: 5000 parts
# take 110 MB), and no setting needs a line of more than a few dozen characters.
MAX_CONFIG_BYTES = 16 << 10
MAX_LINE = 500
# Problems named in the one warning; the rest are counted (a huge file of
# bad keys must not make a huge warning, nor a slow one).
_MAX_PROBLEMS = 10
_FILE_NAME = "config.toml"
_KEYS = ("theme", "size", "goal", "animation", "keys")
_ACTIONS = {name: action for action, name in ACTION_NAMES.items()}


@dataclass(frozen=True)
class Config:
    """What the config file says; None (or empty) where it says nothing."""

    theme: Optional[str] = None
    size: Optional[Tuple[int, int]] = None
    goal: Optional[int] = None
    animation: Optional[bool] = None
    bindings: Tuple[Tuple[bytes, Action], ...] = ()


def config_path(env: Mapping[str, str]) -> str:
    """``ANSI2048_CONFIG`` if set, else ``config.toml`` in the user config
    directory (``$XDG_CONFIG_HOME/ansi2048`` or ``~/.config/ansi2048`` on Linux)."""
    override = env.get(CONFIG_ENV)
    if override:
        return override
    import os

    from ..storage.userdirs import user_dir

    return os.path.join(user_dir("config", env), _FILE_NAME)


def _line_of(text: str, key: str, table: Optional[str] = None) -> int:
    """The line (from 1) where ``key`` is set, in ``[table]`` if given; 0 if not found."""
    pattern = re.compile(r"\s*[\"']?" + re.escape(key) + r"[\"']?\s*=")
    in_table = table is None
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith("["):
            in_table = table is not None and stripped.strip("[] \t").strip("\"'") == table
            if table is None:
                break  # top-level keys come before any table
            continue
        if in_table and pattern.match(line):
            return number
    return 0


_shown = reprlib.Repr()
_shown.maxstring = _shown.maxother = 40
_shown.maxlevel = 2


def _show(value: object) -> str:
    """``repr`` of a value from the file, short and without control codes,
    whatever its size or depth."""
    return _shown.repr(value)


def _keys(value: Any, problem: Callable[[str, str, str], None]) -> Tuple[Tuple[bytes, Action], ...]:
    if not isinstance(value, dict):
        problem("keys", "", 'expected a table like [keys] up = ["i"]')
        return ()
    bound: Dict[bytes, Action] = {}
    for name, keys in value.items():
        action = _ACTIONS.get(name)
        if action is None:
            problem(name, "keys", f"unknown action {_show(name)} (expected one of {', '.join(_ACTIONS)})")
            continue
        keys = [keys] if isinstance(keys, str) else keys
        if not isinstance(keys, list):
            problem(name, "keys", f"keys.{name}: expected a list of single characters")
            continue
        for key in keys:
            if not (isinstance(key, str) and len(key) == 1 and " " <= key <= "~"):
                problem(name, "keys", f"keys.{name}: {_show(key)} is not one printable ASCII character")
                continue
            byte = key.encode("ascii")
            if bound.get(byte, action) is not action:
                problem(name, "keys", f"keys.{name}: {key!r} is already bound to {ACTION_NAMES[bound[byte]]}")
                continue
            bound[byte] = action
    # A letter works in either case (caps lock), unless the other is bound too.
    for byte, action in list(bound.items()):
        for other in (byte.upper(), byte.lower()):
            bound.setdefault(other, action)
    return tuple(bound.items())


def parse_config(text: str, where: str) -> Tuple[Config, Optional[str]]:
    """The config in ``text`` (from the file ``where``) and, if any of it is
    bad, the one warning saying what and on which line."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # the same parser, from PyPI
        import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]

    for number, line in enumerate(text.split("\n"), 1):
        if len(line) > MAX_LINE:
            return Config(), f"config file line {number} is over {MAX_LINE} characters; using the defaults\n{where}"
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        return Config(), f"config file: {error}; using the defaults\n{where}"
    except RecursionError:  # arrays or tables nested thousands deep
        return Config(), f"config file nested too deep; using the defaults\n{where}"
    except ValueError:  # an integer of over 4300 digits: Python refuses to convert it
        return Config(), f"config file has a number too long to read; using the defaults\n{where}"
    problems: List[str] = []

    def problem(key: str, table: str, message: str) -> None:
        if len(problems) < _MAX_PROBLEMS:
            line = _line_of(text, key, table or None)
            problems.append(f"line {line}: {message}" if line else message)
        else:
            problems.append("")  # counted, not shown

    values: Dict[str, Any] = {}
    for key, value in data.items():
        if key not in _KEYS:
            problem(key, "", f"unknown key {_show(key)} (expected one of {', '.join(_KEYS)})")
        elif key == "theme":
            if isinstance(value, str) and value in THEMES:
                values["theme"] = value
            else:
                problem(key, "", f"theme: expected one of {', '.join(THEMES)}, got {_show(value)}")
        elif key in ("size", "goal"):
            # The command line's own checks, so both accept the same values.
            check = parse_size if key == "size" else parse_goal
            # A whole number written as a number: an int of thousands of
            # digits is refused here, before str() of it could fail.
            if isinstance(value, int) and not isinstance(value, bool) and not 0 <= value < 10**12:
                value = "-" if value < 0 else "9" * 13
            if not isinstance(value, (str, int)) or isinstance(value, bool):
                problem(key, "", f"{key}: expected a number or a string, got {_show(value)}")
                continue
            try:
                values[key] = check(str(value))
            except ValueError as error:
                problem(key, "", f"{key}: {error}")
        elif key == "animation":
            if isinstance(value, bool):
                values["animation"] = value
            else:
                problem(key, "", f"animation: expected true or false, got {_show(value)}")
        else:
            values["bindings"] = _keys(value, problem)
    if "goal" in values:
        # As --goal is checked: against the size given with it, else the default.
        rows, cols = values.get("size", (DEFAULT_SIZE, DEFAULT_SIZE))
        try:
            check_goal(values["goal"], rows, cols)
        except ValueError as error:
            problem("goal", "", f"{error}")
            del values["goal"]
    shown = [text for text in problems if text]
    if len(problems) > len(shown):
        shown.append(f"and {len(problems) - len(shown)} more")
    warning = f"ignored in the config file: {'; '.join(shown)}\n{where}" if problems else None
    return Config(**values), warning


def load_config(env: Mapping[str, str], warn: Callable[[str], None]) -> Config:
    """The config file's settings; defaults if there is no file. Reading it
    is never fatal: a file that cannot be read or parsed is one warning."""
    from ..storage.files import NotAFile, read_regular, reason

    path = config_path(env)
    try:
        # utf-8-sig: a byte order mark at the start (as some Windows editors save) is skipped.
        text = read_regular(path, MAX_CONFIG_BYTES, follow=True).decode("utf-8-sig")
    except FileNotFoundError:
        return Config()
    except UnicodeDecodeError:
        warn(f"config file not UTF-8 text; using the defaults\n{path}")
        return Config()
    except NotAFile as error:
        warn(f"config file is {error}; using the defaults\n{path}")
        return Config()
    except (OSError, ValueError) as error:  # ValueError: TooBig
        warn(f"cannot read the config file ({reason(error)}); using the defaults\n{path}")
        return Config()
    config, warning = parse_config(text, path)
    if warning:
        warn(warning)
    return config


def apply_config(options: Options, config: Config, interactive: bool, warn: Callable[[str], None]) -> Options:
    """``options`` with the config's values where the command line said
    nothing. Size, goal and keys only for the keyboard game: a piped game is
    what its input and options say, so a replay plays the same everywhere.
    A size or goal from the config that does not fit the other, given on
    the command line, is ignored with a warning (the command line wins)."""
    changes: Dict[str, Any] = {}
    if options.theme is None and config.theme is not None:
        changes["theme"] = config.theme
    if config.animation is False:
        changes["animation"] = False  # the command line can only turn it off too
    if interactive:
        if options.rows is None and config.size is not None:
            changes["rows"], changes["cols"] = config.size
        if options.goal is None and config.goal is not None:
            changes["goal"] = config.goal
        rows, cols = changes.get("rows", options.rows), changes.get("cols", options.cols)
        goal = changes.get("goal", options.goal)
        if goal is not None:
            try:
                check_goal(goal, rows or DEFAULT_SIZE, cols or DEFAULT_SIZE)
            except ValueError as error:
                # One of the two is the config's (the command line checked its pair).
                if "goal" in changes:
                    del changes["goal"]
                    warn(f"the config file's goal is ignored: {error}")
                else:
                    del changes["rows"], changes["cols"]
                    warn(f"the config file's size is ignored: {error}")
        changes["bindings"] = config.bindings
    return replace(options, **changes)
