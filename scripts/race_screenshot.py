#!/usr/bin/env python3
"""Draw docs/race.svg, a race's screen, from the real renderer.

Four players on one deal (a seed), each played a different number of moves
by screenshot.py's fixed strategy; the screen of one of them comes from
``render.race.race_lines`` through ``Repainter`` into a pyte VT100 screen,
as a terminal gets it, and becomes an SVG as screenshot.py draws the game's.

    python scripts/race_screenshot.py [--size 100x24] [--out docs/race.svg]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Optional, Sequence

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import pyte  # noqa: E402
from screenshot import play, svg  # noqa: E402

from ansi2048.render.race import Racer, RaceScreen, race_lines  # noqa: E402
from ansi2048.render.repaint import Repainter  # noqa: E402
from ansi2048.render.style import ColorDepth  # noqa: E402
from ansi2048.render.themes import THEMES  # noqa: E402

SEED = 2048
PLAYERS = (("ann", 140), ("bob", 120), ("cy", 151), ("dee", 97))  # name, moves played so far


def racer(name: str, moves: int) -> Racer:
    game = play(SEED, moves).game
    return Racer(name, game.score, game.biggest, game.moves, game.cells)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="100x24", help="terminal COLUMNSxLINES")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "race.svg")
    options = parser.parse_args(argv)
    columns, lines_ = (int(n) for n in options.size.split("x"))
    me, *others = (racer(name, moves) for name, moves in PLAYERS)
    others[2] = Racer(**{**vars(others[2]), "away": True})  # dee's connection dropped: she may come back
    screen = RaceScreen(4, 4, 2048, me, tuple(others), 192.0)
    lines = race_lines(screen, columns, lines_, ColorDepth.TRUE, THEMES["classic"]())
    terminal = pyte.Screen(columns, lines_)
    terminal.set_mode(pyte.modes.LNM)
    pyte.Stream(terminal).feed(Repainter(hide_cursor=False).frame(lines, columns, lines_))
    options.out.parent.mkdir(parents=True, exist_ok=True)
    options.out.write_text(svg(terminal, len(lines)), encoding="utf-8")
    print(f"wrote {options.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
