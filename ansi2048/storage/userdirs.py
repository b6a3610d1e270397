"""The user's config and data directories, without importing platformdirs
where the answer is plain.

platformdirs imports pathlib and tempfile (with shutil, random and more): the
largest part of the keyboard game's start-up that is not the game. On Linux,
in the common case (``$XDG_CONFIG_HOME`` / ``$XDG_DATA_HOME`` an absolute
path, or unset or empty with ``$HOME`` absolute), every platformdirs version
gives the XDG answer computed here; anything else (another platform,
Android, a relative or blank variable, no usable ``HOME``) asks platformdirs
itself, so the two never disagree (tests/test_startup.py compares them)."""

from __future__ import annotations

import os
import sys
from typing import Mapping

__all__ = ["APP", "user_dir"]

APP = "ansi2048"

# kind -> (its XDG variable, the default under $HOME)
_XDG = {"config": ("XDG_CONFIG_HOME", ".config"), "data": ("XDG_DATA_HOME", ".local/share")}


def _plain_xdg(kind: str, env: Mapping[str, str]) -> str:
    """The directory by the XDG rule, or "" where it takes platformdirs."""
    if not sys.platform.startswith("linux") or hasattr(sys, "getandroidapilevel"):
        return ""
    if "ANDROID_DATA" in env or "ANDROID_ROOT" in env:
        return ""
    variable, default = _XDG[kind]
    value = env.get(variable, "")
    if value:
        return value if os.path.isabs(value) else ""
    home = env.get("HOME", "")
    return os.path.join(home, default) if os.path.isabs(home) else ""


def user_dir(kind: str, env: Mapping[str, str]) -> str:
    """The user's ``kind`` ("config" or "data") directory for ansi2048."""
    base = _plain_xdg(kind, env)
    if base:
        return os.path.join(base, APP)
    import platformdirs

    if kind == "config":
        return platformdirs.user_config_dir(APP, appauthor=False)
    return platformdirs.user_data_dir(APP, appauthor=False)
