"""Warnings and notices as the game prints them on a stream (pure): one
line each into a pipe or a file, within the window on a terminal, what
matters read first.

A message is one line of words (what happened, what the game does about
it), then, on lines of their own, the paths it names: ``"cannot use the
data folder (Permission denied); this game will not be saved\\n/home/..."``.
Into a pipe or a file (a log collector, ``grep``) a diagnostic is one line,
as every tool's: the paths follow the words in parentheses. On a terminal
the words wrap to its width and the paths go last and alone, because they
are long (a data folder on macOS is some 55 columns before a file's name)
and are copied whole: a path broken across lines, or in the middle of a
sentence, is read by no one. In a frame (a note under the board) the lines
are joined by spaces and cut to the window: the path, last, is what is cut.
"""

from __future__ import annotations

from typing import List, Optional

__all__ = ["NOTICE_WIDTH", "notice_lines", "one_line", "warning_text"]

# Columns of an 80-column terminal a printed line may take. The last column
# is left free, as frames leave it: a console that wraps as soon as a line
# fills it (the legacy Windows console) would add an empty line after it.
NOTICE_WIDTH = 79
# Lines after the first: the words that did not fit, and the paths.
_INDENT = "  "


def notice_lines(prefix: str, message: str, width: int = NOTICE_WIDTH) -> List[str]:
    """``message`` printed after ``prefix`` (``"ansi2048: warning: "``) in
    lines of at most ``width`` columns: its words wrapped at spaces, the
    lines after the first indented; each path on a line of its own,
    indented if that fits. A word or a path longer than a line is left
    whole (cut, it could not be copied), alone on its line."""
    text, *paths = message.split("\n")
    lines: List[str] = []
    line, bare = prefix.rstrip(" "), True  # bare: no word on the line yet
    for word in text.split(" "):
        if not word:
            continue
        joined = f"{line} {word}" if line else word
        if len(joined) <= width or bare:
            line, bare = joined, False
        else:
            lines.append(line)
            line = _INDENT + word
    lines.append(line)
    lines += [_INDENT + path if len(_INDENT + path) <= width else path for path in paths if path]
    return lines


def warning_text(message: str, width: Optional[int]) -> str:
    """A warning as the game prints it on standard error, each line ended:
    wrapped to ``width`` columns (a terminal's), or on one line, its paths
    inline, when ``width`` is None (a pipe or a file)."""
    prefix = "ansi2048: warning: "
    if width is None:
        text, *paths = (part for part in message.split("\n") if part)
        return f"{prefix}{text} ({', '.join(paths)})\n" if paths else f"{prefix}{text}\n"
    return "".join(line + "\n" for line in notice_lines(prefix, message, width))


def one_line(message: str) -> str:
    """``message`` on one line, its paths after its words (a note on a board)."""
    return " ".join(part for part in message.split("\n") if part)
