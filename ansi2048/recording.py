"""The recording format (pure): a header line, then one character per action.

    # ansi2048 version=0.1.0 seed=7 size=4x4 goal=2048
    wasdwwu...

Any further line starting with '#' is a comment. The header is what makes a
bare ``ansi2048 < game.keys`` replay the recorded game exactly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from .engine import MAX_SEED_DIGITS

__all__ = ["BOM", "MAGIC", "Header", "format_header", "parse_header"]

MAGIC = "# ansi2048"
BOM = b"\xef\xbb\xbf"  # a UTF-8 byte order mark, as Notepad writes; skipped before a header
_FIELD = re.compile(r"(\w+)=(\S+)")
# ASCII digits only: str.isdigit() also accepts '²', which int() rejects.
_NUMBER = re.compile(f"[0-9]{{1,{MAX_SEED_DIGITS}}}")
_SIZE = re.compile(r"([0-9]{1,3})x([0-9]{1,3})")


@dataclass(frozen=True)
class Header:
    """What a recording's first line fixes; None where it says nothing."""

    seed: Optional[int] = None
    rows: Optional[int] = None
    cols: Optional[int] = None
    goal: Optional[int] = None
    version: Optional[str] = None


def format_header(seed: int, rows: int, cols: int, goal: int, version: str) -> str:
    return f"{MAGIC} version={version} seed={seed} size={rows}x{cols} goal={goal}\n"


def _number(text: str) -> Optional[int]:
    return int(text) if _NUMBER.fullmatch(text) else None


def parse_header(line: str) -> Optional[Header]:
    """The header in ``line``, or None if it is not one. Fields that are
    malformed are left out (the game then uses its defaults for them)."""
    if not line.startswith(MAGIC + " ") and line.rstrip("\r\n") != MAGIC:
        return None
    fields = dict(_FIELD.findall(line[len(MAGIC) :]))
    seed = _number(fields.get("seed", ""))
    size = _SIZE.fullmatch(fields.get("size", ""))
    goal = _number(fields.get("goal", ""))
    return Header(
        seed=seed,
        rows=int(size.group(1)) if size else None,
        cols=int(size.group(2)) if size else None,
        goal=goal,
        version=fields.get("version"),
    )
