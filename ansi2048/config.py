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
piped games play what their input says, whatever the config.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass, replace
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

from .context import Options
from .keys import Action
from .options import THEME_CHOICES, _goal, _size
from .protocol import ACTION_NAMES

__all__ = ["CONFIG_ENV", "Config", "apply_config", "config_path", "load_config", "parse_config"]

CONFIG_ENV = "ANSI2048_CONFIG"
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

    from .userdirs import user_dir

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


def _keys(value: Any, problem: Callable[[str, str, str], None]) -> Tuple[Tuple[bytes, Action], ...]:
    if not isinstance(value, dict):
        problem("keys", "", 'expected a table like [keys] up = ["i"]')
        return ()
    bound: Dict[bytes, Action] = {}
    for name, keys in value.items():
        action = _ACTIONS.get(name)
        if action is None:
            problem(name, "keys", f"unknown action {name!r} (expected one of {', '.join(_ACTIONS)})")
            continue
        keys = [keys] if isinstance(keys, str) else keys
        if not isinstance(keys, list):
            problem(name, "keys", f"keys.{name}: expected a list of single characters")
            continue
        for key in keys:
            if not (isinstance(key, str) and len(key) == 1 and " " <= key <= "~"):
                problem(name, "keys", f"keys.{name}: {key!r} is not one printable ASCII character")
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

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        return Config(), f"{where}: {error}; using the defaults"
    problems: List[str] = []

    def problem(key: str, table: str, message: str) -> None:
        line = _line_of(text, key, table or None)
        problems.append(f"line {line}: {message}" if line else message)

    values: Dict[str, Any] = {}
    for key, value in data.items():
        if key not in _KEYS:
            problem(key, "", f"unknown key {key!r} (expected one of {', '.join(_KEYS)})")
        elif key == "theme":
            if value in THEME_CHOICES:
                values["theme"] = value
            else:
                problem(key, "", f"theme: expected one of {', '.join(THEME_CHOICES)}, got {value!r}")
        elif key in ("size", "goal"):
            # The command line's own checks, so both accept the same values.
            check = _size if key == "size" else _goal
            if not isinstance(value, (str, int)) or isinstance(value, bool):
                problem(key, "", f"{key}: expected a number or a string, got {value!r}")
                continue
            try:
                values[key] = check(str(value))
            except argparse.ArgumentTypeError as error:
                problem(key, "", f"{key}: {error}")
        elif key == "animation":
            if isinstance(value, bool):
                values["animation"] = value
            else:
                problem(key, "", f"animation: expected true or false, got {value!r}")
        else:
            values["bindings"] = _keys(value, problem)
    warning = f"{where}: {'; '.join(problems)}; ignored" if problems else None
    return Config(**values), warning


def load_config(env: Mapping[str, str], warn: Callable[[str], None]) -> Config:
    """The config file's settings; defaults if there is no file. Reading it
    is never fatal: a file that cannot be read or parsed is one warning."""
    path = config_path(env)
    try:
        with open(path, encoding="utf-8") as file:
            text = file.read()
    except FileNotFoundError:
        return Config()
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) else "not UTF-8 text"
        warn(f"cannot read the config file {path}: {reason}; using the defaults")
        return Config()
    config, warning = parse_config(text, path)
    if warning:
        warn(warning)
    return config


def apply_config(options: Options, config: Config, interactive: bool) -> Options:
    """``options`` with the config's values where the command line said
    nothing. Size, goal and keys only for the keyboard game: a piped game is
    what its input and options say, so a replay plays the same everywhere."""
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
        changes["bindings"] = config.bindings
    return replace(options, **changes)
