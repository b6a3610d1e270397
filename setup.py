"""The one piece of metadata setup.cfg cannot say: the long description.

A package index shows the README without its directory, so the pictures
(relative paths into docs/) would be broken images there, and links to the
README's own headings or to files of the repository go nowhere. The
description is the README with the block between ``<!-- pictures -->`` and
``<!-- /pictures -->`` left out and those links turned into their text; everything else is the README as written
(tests/test_package.py checks both).
"""

from __future__ import annotations

import re
from pathlib import Path

PICTURES_START = "<!-- pictures -->"
PICTURES_END = "<!-- /pictures -->"

# [text](#anchor) or [text](docs/file): a link to a heading of the same page
# or a path in the repository (anything without a scheme such as https:).
_LOCAL_LINK = re.compile(r"\[([^\]]+)\]\((?![A-Za-z][A-Za-z0-9+.-]*:)[^)]*\)")


def index_description(readme: str) -> str:
    """The README as a package index should show it."""
    lines = []
    skipping = False
    for line in readme.splitlines():
        if line.strip() == PICTURES_START:
            skipping = True
        elif line.strip() == PICTURES_END:
            skipping = False
        elif not skipping:
            lines.append(_LOCAL_LINK.sub(r"\1", line))
    if skipping:
        raise ValueError(f"README.md: {PICTURES_START} without {PICTURES_END}")
    # The blank lines around the block would otherwise double up.
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)) + "\n"


if __name__ == "__main__":
    from setuptools import setup

    readme = Path(__file__).resolve().with_name("README.md").read_text(encoding="utf-8")
    setup(long_description=index_description(readme))
