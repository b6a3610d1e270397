"""The help screen (pure): every key the game takes, the rules and the
marks, reflowed to the window, and always how to quit and how to close it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

from ..game.keys import Action
from .board import ASCII, UNICODE
from .frame import View, layout_for
from .keymap import MOVES, key_map, move_keys
from .lines import Frame, line_of
from .style import BOLD, PLAIN, ColorDepth, Span, fit

__all__ = ["help_frame", "help_lines"]

# Below this many columns for a key's description beside the key column,
# the description goes under its key instead.
_MIN_TEXT = 16


@dataclass(frozen=True)
class _Block:
    """Lines kept or left off together (a key and its description); the
    ``kept`` ones show in any window that has rows for them at all."""

    lines: Tuple[Tuple[Span, ...], ...]
    kept: bool = False


def _wrap(text: str, room: int) -> List[str]:
    import textwrap  # here: the help is shown on '?', and the keyboard game starts without it

    return textwrap.wrap(text, max(1, room), break_long_words=False)


def _entry(key: str, text: str, column: int, limit: int, kept: bool = False) -> _Block:
    """A key and what it does, the description wrapped beside the key (or
    under it, in a window too narrow for both)."""
    indent = 2 + column
    if limit - indent < _MIN_TEXT:
        indent = 4
        first: List[str] = [f"  {key}"]
        wrapped = _wrap(text, limit - indent)
    else:
        first = []
        wrapped = _wrap(text, limit - indent)
        wrapped[0] = f"  {key.ljust(column)}{wrapped[0]}"
        wrapped[1:] = [" " * indent + line for line in wrapped[1:]]
        indent = 0
    lines = [*first, *(" " * indent + line for line in wrapped)]
    return _Block(tuple(((line, PLAIN),) for line in lines), kept)


def _text(text: str, limit: int) -> _Block:
    return _Block(tuple(((f"  {line}", PLAIN),) for line in _wrap(text, limit - 2)))


_BLANK = _Block(((("", PLAIN),),))


def help_frame(view: View, depth: ColorDepth, width: int, height: int, *, ascii_only: Optional[bool] = None) -> Frame:
    """The help screen (``?``): every key the game takes as it is set up
    (the config's keys, ``--no-undo``), the rules, and the marks as the
    board in this window draws them. Within ``width`` x ``height`` like a
    frame: descriptions wrap to the window, what does not fit is left off
    from the end, but how to quit and the closing line always show."""
    if ascii_only is None:
        ascii_only = depth is ColorDepth.NONE
    glyphs = ASCII if ascii_only else UNICODE
    keys = key_map(view.bindings, view.undo)
    limit = width - 1

    def named(*actions: Action) -> str:
        return ", ".join(key for action in actions for key in keys.get(action, []))

    groups, _others = move_keys(keys)
    rows: List[Tuple[str, str]] = [(" ".join([glyphs.arrows, *groups]), "slide the tiles")]
    rows += [(key, f"slide {action.name.lower()}") for action in MOVES for key in keys.get(action, [])[len(groups) :]]
    if view.undo:
        rows.append((named(Action.UNDO), "undo (redoing a move brings the same tile)"))
    else:
        rows.append(("undo", "off in this game (--no-undo)"))
    quit_key = ", ".join([*keys.get(Action.QUIT, []), "Ctrl-C"])
    rows += [
        (named(Action.RESTART), view.restart.help(view.undo)),
        (named(Action.HINT), "hint: the AI's move, on the line under the board"),
        (named(Action.AUTOPLAY), "autoplay: the AI plays; any move takes over"),
        _speed_row(keys),
        (named(Action.HELP), "this help"),
        (quit_key, "quit: a guest's game is not kept" if view.guest else "quit: the game is kept for next time"),
    ]
    if view.suspends:  # a key offered only where it works (not over SSH, nor on Windows)
        rows.append(("Ctrl-Z", "suspend to the shell; fg comes back"))
    rows = [(key, text) for key, text in rows if key.strip()]
    layout = layout_for(view, width, height)
    if layout is not None and layout.tile_height >= 3:
        corner = glyphs.frame[0] + glyphs.frame[4] * 2 + glyphs.frame[1]
        new_tile = (f"{corner} outline", "the tile that just appeared")
    else:
        new_tile = (f"[N], {glyphs.marker} in a corner", "the tile that just appeared")
    marks = [new_tile, ("+N by the score", "the last move's points"), ("assisted", "the AI helped: no best score")]
    # Each section's keys in a column of its own: a long mark does not push
    # the keys' descriptions right (and onto more lines) in a small window.
    key_column = max(len(key) for key, _ in rows) + 3
    mark_column = max(len(key) for key, _ in marks) + 3
    blocks = [
        _Block((((f"ansi2048 {glyphs.dash} help", BOLD),),)),
        _BLANK,
        *_section("keys", [_entry(key, text, key_column, limit, kept=key == quit_key) for key, text in rows]),
        _BLANK,
        *_offered(view.offers, limit),
        *_section(
            "rules",
            [
                _text("Tiles slide as far as they go; two equal tiles merge into one.", limit),
                _text(f"After each move a 2 (or a 4) appears. Make the {view.goal} tile!", limit),
            ],
        ),
        _BLANK,
        *_section("marks", [_entry(key, text, mark_column, limit) for key, text in marks]),
        _BLANK,
        _Block((((("any key closes this help", BOLD),),)), kept=True),
    ]
    shown = _within(blocks, height - 1)
    return Frame(tuple(line_of(fit([list(spans)], limit)) for block in shown for spans in block.lines), depth)


def _section(heading: str, blocks: List[_Block]) -> List[_Block]:
    """A heading and its blocks, the heading one block with the first of
    them: a window too short for it shows neither, never a heading with
    nothing under it."""
    first, *rest = blocks
    return [_Block((((heading, BOLD),), *first.lines), first.kept), *rest]


def _offered(offers: Sequence[Tuple[str, str]], limit: int) -> List[_Block]:
    """A server's section: who the player is there and its other commands
    (``ssh HOST COMMAND``), then a blank line; none off a server."""
    if not offers:
        return []
    column = max(len(command) for command, _ in offers) + 3
    return [*_section("on this server: ssh HOST COMMAND", [_entry(*row, column, limit) for row in offers]), _BLANK]


def _speed_row(keys: Dict[Action, List[str]]) -> Tuple[str, str]:
    """Autoplay's speed keys, one row: the first key of each in the key
    column (as the moves' are), every key named in the words."""
    faster, slower = keys.get(Action.FASTER, []), keys.get(Action.SLOWER, [])
    shown = " ".join(key_list[0] for key_list in (faster, slower) if key_list)
    pairs = (("faster", faster), ("slower", slower))
    said = [f"{what} ({', '.join(key_list)})" for what, key_list in pairs if key_list]
    return shown, "autoplay " + ", ".join(said)


def _within(blocks: Sequence[_Block], room: int) -> List[_Block]:
    """The blocks that fit in ``room`` lines: the kept ones first (the last
    of them first, when even they do not all fit), then the others from the
    top, in their order."""
    chosen = set()
    used = 0
    for index in reversed(range(len(blocks))):
        if blocks[index].kept and used + len(blocks[index].lines) <= room:
            chosen.add(index)
            used += len(blocks[index].lines)
    for index, block in enumerate(blocks):
        if index in chosen or block.kept:
            continue
        if used + len(block.lines) > room:
            break
        chosen.add(index)
        used += len(block.lines)
    return [block for index, block in enumerate(blocks) if index in chosen]


def help_lines(
    view: View, depth: ColorDepth, width: int, height: int, *, ascii_only: Optional[bool] = None
) -> List[str]:
    """The help screen of :func:`help_frame` as text, one string per line."""
    return help_frame(view, depth, width, height, ascii_only=ascii_only).text()
