#!/usr/bin/env python3
"""Write the manual page, ansi2048.1, from what already says it all.

- NAME, SYNOPSIS and OPTIONS: the command line's own parser (the options as
  the completion scripts see them, ``ansi2048.options.completion.completed_options``);
- DESCRIPTION, the text under OPTIONS, KEYS, RECORD, REPLAY, PIPE, THEMES AND
  CONFIG and FILES: the README's introduction and its "Options" (all but the
  table), "Keys", "Record, replay, pipe", "Themes and config" and "Where your
  games are kept" sections, as a package index shows the README (setup.py:
  no pictures);
- the date and version: the newest release in CHANGELOG.md.

So the page cannot say anything the README and ``--help`` do not; when they
change, ``tests/test_package.py`` fails until the page is written again:

    python scripts/manpage.py           # writes ansi2048.1
    python scripts/manpage.py --check   # exit status 1 if ansi2048.1 is stale
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import sys
from pathlib import Path
from typing import Callable, List, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    # Runnable from a checkout or an unpacked sdist without installing the package.
    sys.path.insert(0, str(ROOT))

from ansi2048 import __version__  # noqa: E402
from ansi2048.options.completion import completed_options  # noqa: E402
from ansi2048.options.parser import build_parser  # noqa: E402

MAN_PAGE = ROOT / "ansi2048.1"

# README section -> man page section.
README_SECTIONS = (
    ("Keys", "KEYS"),
    ("Record, replay, pipe", "RECORD, REPLAY, PIPE"),
    ("Themes and config", "THEMES AND CONFIG"),
    ("Where your games are kept", "FILES"),
)
# The README's "Options" section: its table is what OPTIONS already lists from
# the parser; the text after it (goals, colour depths, drawing) follows the list.
OPTIONS_SECTION = "Options"

# "## [0.3.0] - 2026-11-23"
_RELEASE = re.compile(r"^## \[(?P<version>[^\]]+)\] - (?P<date>\d{4}-\d\d-\d\d)$", re.MULTILINE)


def releases(changelog: str) -> List[Tuple[str, str]]:
    """(version, date) of each release in CHANGELOG.md, newest first."""
    return [(match["version"], match["date"]) for match in _RELEASE.finditer(changelog)]


def index_description(readme: str) -> str:
    """The README as a package index shows it: setup.py's own function."""
    spec = importlib.util.spec_from_file_location("_ansi2048_setup", ROOT / "setup.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # setup() runs only as __main__
    describe: Callable[[str], str] = module.index_description
    return describe(readme)


# --- roff ---------------------------------------------------------------------


def escape(text: str) -> str:
    """Plain text for roff: backslashes and minus signs (options must copy as ASCII '-')."""
    return text.replace("\\", "\\e").replace("-", "\\-")


def line_start(text: str) -> str:
    """A line roff will not take for a request (a leading '.' or ')."""
    return "\\&" + text if text.startswith((".", "'")) else text


# `code`, **strong**, *emphasis*, [text](url)
_INLINE = re.compile(r"`([^`]+)`|\*\*([^*]+)\*\*|\*([^*\s][^*]*)\*|\[([^\]]+)\]\(([^)]+)\)")


def inline(text: str) -> str:
    """Markdown's inline marks as roff fonts: code and strong in bold, emphasis in italics."""
    out = []
    position = 0
    for match in _INLINE.finditer(text):
        out.append(escape(text[position : match.start()]))
        code, strong, emphasis, link_text, _url = match.groups()
        if code is not None:
            out.append(f"\\fB{escape(code)}\\fR")
        elif strong is not None:
            out.append(f"\\fB{escape(strong)}\\fR")
        elif emphasis is not None:
            out.append(f"\\fI{escape(emphasis)}\\fR")
        else:
            out.append(inline(link_text))
        position = match.end()
    out.append(escape(text[position:]))
    return "".join(out)


def _cells(row: str) -> List[str]:
    inner = row.strip().strip("|")
    return [cell.strip().replace("\\|", "|") for cell in re.split(r"(?<!\\)\|", inner)]


def markdown_to_roff(markdown: str) -> List[str]:
    """The README's block forms as roff: paragraphs, lists, tables, code, subheadings."""
    out: List[str] = []
    lines = markdown.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        if not line.strip() or line.startswith("<!--"):
            index += 1
        elif line.startswith("```"):
            end = lines.index("```", index + 1)
            out += [".PP", ".RS 4", ".nf", *(line_start(escape(code)) for code in lines[index + 1 : end]), ".fi", ".RE"]
            index = end + 1
        elif line.startswith("### "):
            out += [".SS " + inline(line[4:])]
            index += 1
        elif line.startswith("|"):
            rows = []
            while index < len(lines) and lines[index].startswith("|"):
                rows.append(_cells(lines[index]))
                index += 1
            for cells in rows[2:]:  # past the header and the --- row
                out += [".TP", line_start(inline(cells[0])), line_start(inline("; ".join(cells[1:])))]
        elif line.startswith("- "):
            item = [line[2:]]
            index += 1
            while index < len(lines) and lines[index].startswith("  ") and lines[index].strip():
                item.append(lines[index].strip())
                index += 1
            out += [".IP \\(bu 2", line_start(inline(" ".join(item)))]
        else:
            paragraph = []
            while index < len(lines) and lines[index].strip() and not lines[index].startswith(("```", "|", "- ", "#")):
                paragraph.append(lines[index].strip())
                index += 1
            out += [".PP", line_start(inline(" ".join(paragraph)))]
    return out


def readme_sections(readme: str) -> Tuple[str, List[Tuple[str, str]]]:
    """The introduction (between the title and the first section) and each ``## `` section."""
    parts = re.split(r"^## (.+)$", readme, flags=re.MULTILINE)
    intro = re.sub(r"^# .*$", "", parts[0], count=1, flags=re.MULTILINE)
    return intro, list(zip(parts[1::2], parts[2::2]))


# --- the page -----------------------------------------------------------------


def _option_heading(names: Sequence[str], value: str, choices: Sequence[str], takes_value: bool) -> str:
    shown = ", ".join(f"\\fB{escape(name)}\\fR" for name in names)
    if choices:
        return shown + " " + "|".join(f"\\fI{escape(choice)}\\fR" for choice in choices)
    if takes_value:
        return f"{shown} \\fI{escape(value)}\\fR"
    return shown


def man_page(parser: argparse.ArgumentParser, readme: str, changelog: str) -> str:
    """ansi2048.1's text."""
    known = releases(changelog)
    dates = [date for version, date in known if version == __version__]
    if not dates:
        raise ValueError(f"CHANGELOG.md has no release {__version__} (the package's version)")
    readme = index_description(readme)
    intro, sections = readme_sections(readme)
    by_title = dict(sections)
    options = completed_options(parser)
    summary = (parser.description or "").split(":")[0].replace("\n", " ")

    out = [
        '.\\" The manual page of ansi2048, written by scripts/manpage.py from the command',
        '.\\" line (ansi2048/options/parser.py), README.md and CHANGELOG.md. Do not edit: change',
        '.\\" those and run: python scripts/manpage.py',
        f'.TH ANSI2048 1 {dates[0]} "ansi2048 {escape(__version__)}" "Games"',
        ".nh",  # no hyphenation: option names and paths must copy as they are
        ".ad l",
        ".SH NAME",
        f"{parser.prog} \\- {escape(summary[:1].lower() + summary[1:])}",
        ".SH SYNOPSIS",
        f".B {parser.prog}",
    ]
    for option in options:
        out.append("[" + _option_heading(option.names, option.value, option.choices, option.takes_value) + "]")
    out += [".SH DESCRIPTION", *markdown_to_roff(intro)]
    out += [".SH OPTIONS"]
    for option in options:
        heading = _option_heading(option.names, option.value, option.choices, option.takes_value)
        out += [".TP", heading, line_start(escape(option.help))]
    if OPTIONS_SECTION not in by_title:
        raise ValueError(f"README.md has no section '## {OPTIONS_SECTION}'")
    prose = "\n".join(line for line in by_title[OPTIONS_SECTION].splitlines() if not line.startswith("|"))
    out += markdown_to_roff(prose)
    for title, man_section in README_SECTIONS:
        if title not in by_title:
            raise ValueError(f"README.md has no section '## {title}'")
        out += [f".SH {man_section}", *markdown_to_roff(by_title[title])]
    out += [
        ".SH SEE ALSO",
        "The README (the AI, your records, the rules and their randomness, speed) and",
        "CHANGELOG.md, in the source distribution;",
        ".BR asciinema (1)",
        "plays the files",
        ".B \\-\\-cast",
        "writes.",
    ]
    return "\n".join(out) + "\n"


def current_page() -> str:
    """The page as the checkout's parser, README and changelog give it now."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    return man_page(build_parser(), readme, changelog)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description="Write ansi2048.1 from the parser, README.md and CHANGELOG.md.")
    parser.add_argument("--check", action="store_true", help="only check that ansi2048.1 is current")
    args = parser.parse_args(argv)
    page = current_page()
    if args.check:
        stale = not MAN_PAGE.exists() or MAN_PAGE.read_text(encoding="utf-8") != page
        if stale:
            print(f"{MAN_PAGE.name} is stale: run python scripts/manpage.py", file=sys.stderr)
        return 1 if stale else 0
    MAN_PAGE.write_text(page, encoding="utf-8", newline="\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
