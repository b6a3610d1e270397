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

__all__ = ["MAGIC", "Header", "format_header", "parse_header"]

MAGIC = "# ansi2048"
_FIELD = re.compile(r"(\w+)=(\S+)")
_SIZE = re.compile(r"(\d+)x(\d+)")


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


def parse_header(line: str) -> Optional[Header]:
    """The header in ``line``, or None if it is not one. Fields that are
    malformed are left out (the game then uses its defaults for them)."""
    if not line.startswith(MAGIC + " ") and line.rstrip("\r\n") != MAGIC:
        return None
    fields = dict(_FIELD.findall(line[len(MAGIC) :]))
    seed = int(fields["seed"]) if fields.get("seed", "").isdigit() else None
    size = _SIZE.fullmatch(fields.get("size", ""))
    goal = int(fields["goal"]) if fields.get("goal", "").isdigit() else None
    return Header(
        seed=seed,
        rows=int(size.group(1)) if size else None,
        cols=int(size.group(2)) if size else None,
        goal=goal,
        version=fields.get("version"),
    )
