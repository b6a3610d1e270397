#!/usr/bin/env python3
"""Draw docs/screenshot.svg from the real renderer.

A seeded game is played by a fixed, deterministic strategy; its frame from
``frame_lines`` goes through ``Repainter`` into a pyte VT100 screen, the same
bytes a terminal would get, and every cell of that screen becomes an SVG
rectangle and glyph. Nothing here draws a tile by itself, so the picture
cannot drift from what the game shows.

    python scripts/screenshot.py [--depth true|256|16|none] [--theme classic|dark|high-contrast]
                                 [--status playing|over|won] [--size 60x22] [--out docs/screenshot.svg]
    python scripts/screenshot.py --gallery [--status over] --out docs/gallery.svg

``--gallery`` draws every theme (rows) at 24-bit, 256 and 16 colours
(columns), each on its theme's own terminal colours.
"""

from __future__ import annotations

import argparse
import copy
import sys
from dataclasses import replace
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple
from xml.sax.saxutils import escape

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    # Runnable from a checkout without installing the package.
    sys.path.insert(0, str(ROOT))

import pyte  # noqa: E402

from ansi2048.game.engine import Direction, Game, trace_move  # noqa: E402
from ansi2048.game.session import Session, Status  # noqa: E402
from ansi2048.render.frame import View, frame_lines  # noqa: E402
from ansi2048.render.motion import SETTLE_SECONDS, motion_frames  # noqa: E402
from ansi2048.render.repaint import Repainter  # noqa: E402
from ansi2048.render.style import ColorDepth  # noqa: E402
from ansi2048.render.themes import TERMINALS, THEMES  # noqa: E402

SEED = 218
MOVES = 424
COLUMNS, LINES = 60, 22  # the 4x4 big layout needs 43x22; room for the keys line

DEPTHS = {"true": ColorDepth.TRUE, "256": ColorDepth.EXTENDED, "16": ColorDepth.BASIC, "none": ColorDepth.NONE}

# A dark terminal theme; the 16 ANSI colours as xterm draws them. pyte names
# them (and spells 105 "bfightmagenta").
BACKGROUND = "#1d1f21"
FOREGROUND = "#c5c8c6"
ANSI: Dict[str, str] = {
    "black": "#000000",
    "red": "#cd0000",
    "green": "#00cd00",
    "brown": "#cdcd00",
    "blue": "#0000ee",
    "magenta": "#cd00cd",
    "cyan": "#00cdcd",
    "white": "#e5e5e5",
    "brightblack": "#7f7f7f",
    "brightred": "#ff0000",
    "brightgreen": "#00ff00",
    "brightbrown": "#ffff00",
    "brightblue": "#5c5cff",
    "brightmagenta": "#ff00ff",
    "bfightmagenta": "#ff00ff",
    "brightcyan": "#00ffff",
    "brightwhite": "#ffffff",
}

CELL_W, CELL_H, FONT_SIZE, PAD = 9.6, 20, 16, 14

# Prefer the corner the big tiles gather in; the first move that changes the
# board wins. Deterministic, so the picture only changes with the renderer.
ORDER = (Direction.DOWN, Direction.LEFT, Direction.RIGHT, Direction.UP)


def play(seed: int, moves: int) -> Session:
    session = Session(Game(4, 4, seed=seed))
    game = session.game
    for _ in range(moves):
        if game.over or not any(game.move(direction) for direction in ORDER):
            break
    session.best = max(session.best, game.score)
    return session


def color(name: str, default: str) -> str:
    if name == "default":
        return default
    if name in ANSI:
        return ANSI[name]
    return "#" + name  # pyte keeps 256-colour and 24-bit colours as hex


def runs(line: Sequence[pyte.screens.Char], key: str) -> List[Tuple[int, int, pyte.screens.Char]]:
    """(start, end, first char) of each run of cells sharing attribute ``key``."""
    out: List[Tuple[int, int, pyte.screens.Char]] = []
    start = 0
    for x in range(1, len(line) + 1):
        if x == len(line) or getattr(line[x], key) != getattr(line[start], key):
            out.append((start, x, line[start]))
            start = x
    return out


def svg(screen: pyte.Screen, used_lines: int) -> str:
    return "\n".join([*_svg_open(screen.columns, used_lines), *_cells(screen, used_lines), "</g>", "</svg>", ""])


def _svg_open(columns: int, used_lines: int) -> List[str]:
    width = columns * CELL_W + 2 * PAD
    height = used_lines * CELL_H + 2 * PAD
    return [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.1f} {height:.1f}">',
        f'<rect width="100%" height="100%" rx="8" fill="{BACKGROUND}"/>',
        f'<g font-family="DejaVu Sans Mono, Consolas, Menlo, monospace" font-size="{FONT_SIZE}" '
        'font-weight="bold" xml:space="preserve">',
    ]


def animated_svg(screens: Sequence[Tuple[float, pyte.Screen]], used_lines: int, loop: float) -> str:
    """Frames shown in turn, each from its time (seconds) to the next one's,
    looping every ``loop`` seconds: CSS keyframes, no script, so it plays
    where a README's images play."""
    columns = screens[0][1].columns
    parts = _svg_open(columns, used_lines)
    parts.append("<style>g.f{opacity:0}")
    for index, (start, _) in enumerate(screens):
        end = screens[index + 1][0] if index + 1 < len(screens) else loop
        a, b = 100 * start / loop, 100 * end / loop
        parts.append(
            f"@keyframes f{index}{{0%,{a:.3f}%{{opacity:0}}{a:.3f}%,{b:.3f}%{{opacity:1}}{b:.3f}%,100%{{opacity:0}}}}"
            f"#f{index}{{animation:f{index} {loop:.3f}s step-end infinite}}"
        )
    parts.append("</style>")
    for index, (_, screen) in enumerate(screens):
        parts.append(f'<g class="f" id="f{index}">')
        parts += _cells(screen, used_lines)
        parts.append("</g>")
    parts += ["</g>", "</svg>", ""]
    return "\n".join(parts)


def _cells(
    screen: pyte.Screen,
    used_lines: int,
    left: float = PAD,
    top_edge: float = PAD,
    background: str = BACKGROUND,
    foreground: str = FOREGROUND,
) -> List[str]:
    parts: List[str] = []
    for y in range(used_lines):
        line = [screen.buffer[y][x] for x in range(screen.columns)]
        top = top_edge + y * CELL_H
        for start, end, char in runs(line, "bg"):
            if char.bg != "default":
                parts.append(
                    f'<rect x="{left + start * CELL_W:.1f}" y="{top}" width="{(end - start) * CELL_W:.1f}" '
                    f'height="{CELL_H}" fill="{color(char.bg, background)}"/>'
                )
        baseline = top + CELL_H * 0.75
        for x, char in enumerate(line):
            if char.data.strip():
                # One element per glyph, each at its own cell: no drift when
                # the font's advance differs from CELL_W.
                weight = "" if char.bold else ' font-weight="normal"'
                parts.append(
                    f'<text x="{left + x * CELL_W:.1f}" y="{baseline:.1f}" fill="{color(char.fg, foreground)}"'
                    f"{weight}>{escape(char.data)}</text>"
                )
            if char.underscore:
                parts.append(
                    f'<rect x="{left + x * CELL_W:.1f}" y="{top + CELL_H - 3}" width="{CELL_W:.1f}" height="1.5" '
                    f'fill="{color(char.fg, foreground)}"/>'
                )
    return parts


STATUSES = ("playing", "over", "won")


def shown_view(session: Session, status: str) -> View:
    """The view of the played game, or of it under the game-over or win message."""
    view = View.of(session)
    if status == "over":
        return replace(view, status=Status.OVER, over=True)
    if status == "won":
        return replace(view, status=Status.WON, reached=True)
    return view


def drawn(view: View, depth: ColorDepth, theme: str, columns: int, lines_: int) -> Tuple[pyte.Screen, int]:
    """The screen after the frame for ``view`` (and the lines it takes)."""
    lines = frame_lines(view, depth, columns, lines_, palette=THEMES[theme]())
    screen = pyte.Screen(columns, lines_)
    screen.set_mode(pyte.modes.LNM)  # "\n" as CR+LF, like a terminal with ONLCR
    pyte.Stream(screen).feed(Repainter(hide_cursor=False).frame(lines))
    return screen, len(lines)


def gallery(view: View, columns: int, lines_: int) -> str:
    """Every theme (rows) at 24-bit, 256 and 16 colours (columns), each
    panel on its theme's terminal colours, labelled."""
    depths = (("24-bit", ColorDepth.TRUE), ("256 colours", ColorDepth.EXTENDED), ("16 colours", ColorDepth.BASIC))
    label = CELL_H * 1.5
    panel_w, panel_h = columns * CELL_W + 2 * PAD, lines_ * CELL_H + 2 * PAD + label
    width, height = panel_w * len(depths), panel_h * len(THEMES)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.1f} {height:.1f}">',
        f'<rect width="100%" height="100%" fill="{BACKGROUND}"/>',
        f'<g font-family="DejaVu Sans Mono, Consolas, Menlo, monospace" font-size="{FONT_SIZE}" '
        'font-weight="bold" xml:space="preserve">',
    ]
    for row, theme in enumerate(THEMES):
        colors = TERMINALS[theme]
        background, foreground = f"#{colors.bg:06x}", f"#{colors.fg:06x}"
        for column, (name, depth) in enumerate(depths):
            x, y = column * panel_w, row * panel_h
            parts.append(
                f'<rect x="{x + 2:.1f}" y="{y + 2:.1f}" width="{panel_w - 4:.1f}" height="{panel_h - 4:.1f}" '
                f'rx="8" fill="{background}"/>'
            )
            parts.append(
                f'<text x="{x + PAD:.1f}" y="{y + PAD + CELL_H * 0.75:.1f}" fill="{foreground}">'
                f"{escape(theme)}, {name}</text>"
            )
            screen, used = drawn(view, depth, theme, columns, lines_)
            parts += _cells(screen, used, x + PAD, y + PAD + label, background, foreground)
    parts += ["</g>", "</svg>", ""]
    return "\n".join(parts)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depth", choices=sorted(DEPTHS), default="true")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshot.svg")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--moves", type=int, default=MOVES)
    parser.add_argument("--size", default=f"{COLUMNS}x{LINES}", help="terminal COLUMNSxLINES")
    parser.add_argument("--theme", choices=sorted(THEMES), default="classic")
    parser.add_argument("--status", choices=STATUSES, default="playing", help="the board as played, or under a message")
    parser.add_argument("--gallery", action="store_true", help="every theme at 24-bit, 256 and 16 colours")
    parser.add_argument(
        "--animate", type=float, metavar="SLOWER", help="one more move, animated, this many times slower than in play"
    )
    options = parser.parse_args(argv)
    columns, lines_ = (int(n) for n in options.size.split("x"))
    if options.animate:
        return animate(options, columns, lines_)

    view = shown_view(play(options.seed, options.moves), options.status)
    options.out.parent.mkdir(parents=True, exist_ok=True)
    if options.gallery:
        options.out.write_text(gallery(view, columns, lines_), encoding="utf-8")
        print(f"wrote {options.out}")
        return 0
    screen, used = drawn(view, DEPTHS[options.depth], options.theme, columns, lines_)
    options.out.write_text(svg(screen, used), encoding="utf-8")
    print(f"wrote {options.out}")
    return 0


def animate(options: argparse.Namespace, columns: int, lines_: int) -> int:
    """The board before a move, the move's frames of motion, the settled board
    (as the game draws them, through one Repainter), as an animated SVG."""
    session = play(options.seed, options.moves)
    game = session.game
    depth = DEPTHS[options.depth]
    repainter = Repainter(hide_cursor=False)
    screen = pyte.Screen(columns, lines_)
    screen.set_mode(pyte.modes.LNM)
    stream = pyte.Stream(screen)
    lines = frame_lines(View.of(session), depth, columns, lines_)
    stream.feed(repainter.frame(lines, columns, lines_))
    hold = 0.9  # the board before and after, long enough to take in
    shots = [(0.0, copy.deepcopy(screen))]
    direction = next(d for d in ORDER if Game.from_board(game.board).move(d))
    before, score = game.cells, game.score
    game.move(direction)
    slides = trace_move(before, game.rows, game.cols, direction)
    spawn = game.spawned
    value = game.board[spawn[0]][spawn[1]] if spawn else 0
    view = replace(View.of(session), gained=game.score - score)
    for time, sprites in motion_frames(slides, game.cols, spawn, value):
        stream.feed(repainter.frame(frame_lines(view, depth, columns, lines_, sprites=sprites), columns, lines_))
        shots.append((hold + time * options.animate, copy.deepcopy(screen)))
    stream.feed(repainter.frame(frame_lines(view, depth, columns, lines_), columns, lines_))
    shots.append((hold + SETTLE_SECONDS * options.animate, copy.deepcopy(screen)))
    loop = shots[-1][0] + 2 * hold
    options.out.parent.mkdir(parents=True, exist_ok=True)
    options.out.write_text(animated_svg(shots, len(lines), loop), encoding="utf-8")
    print(f"wrote {options.out}: {len(shots)} frames, {loop:.2f} s a loop")
    return 0


if __name__ == "__main__":
    sys.exit(main())
