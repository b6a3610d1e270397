"""The package as a packager sees it: one version everywhere, a changelog that
says it, metadata that matches what is tested, a description a package index
can show, and a manual page that is current and renders.

Building the sdist and the wheel, and running this suite from the unpacked
sdist, is .ci/package's job (it takes minutes, and a network for the build's
own environment)."""

from __future__ import annotations

import configparser
import importlib.metadata
import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import List, Set, Tuple

import pytest

from ansi2048 import __version__
from ansi2048.options.parser import build_parser

from .conftest import run_cli

ROOT = Path(__file__).resolve().parent.parent
SUPPORTED = ["3.10", "3.11", "3.12", "3.13"]


def load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"_ansi2048_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def setup_cfg(section: str = "metadata") -> configparser.SectionProxy:
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg", encoding="utf-8")
    return config[section]


def metadata() -> configparser.SectionProxy:
    return setup_cfg("metadata")


def classifiers() -> List[str]:
    return [line.strip() for line in metadata()["classifiers"].splitlines() if line.strip()]


def version_tuple(version: str) -> Tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


# --- one version ----------------------------------------------------------------


def test_package_metadata_version_and_changelog_agree() -> None:
    manpage = load(ROOT / "scripts" / "manpage.py")
    releases = manpage.releases((ROOT / "CHANGELOG.md").read_text(encoding="utf-8"))
    assert releases, "CHANGELOG.md has no '## [X.Y.Z] - YYYY-MM-DD' heading"
    assert releases[0][0] == __version__, "the newest release in CHANGELOG.md is not ansi2048.__version__"
    assert run_cli(["--version"]).stdout.decode().strip() == f"ansi2048 {__version__}"
    installed = importlib.metadata.version("ansi2048")
    assert installed == __version__, f"installed metadata says {installed}: reinstall (pip install -e .)"
    assert metadata()["version"] == "attr: ansi2048.__version__"  # said once, in the package


def test_the_changelog_keeps_a_changelog_from_0_1_0() -> None:
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    releases = load(ROOT / "scripts" / "manpage.py").releases(text)
    versions = [version for version, _ in releases]
    assert versions[-1] == "0.1.0"
    assert [version_tuple(v) for v in versions] == sorted((version_tuple(v) for v in versions), reverse=True)
    dates = [date for _, date in releases]
    assert dates == sorted(dates, reverse=True)
    # Every release says what changed, under Keep a Changelog's own headings.
    kinds = {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}
    for block in re.split(r"^## ", text, flags=re.MULTILINE)[1:]:
        found = re.findall(r"^### (.+)$", block, flags=re.MULTILINE)
        assert found and set(found) <= kinds, block.splitlines()[0]
    # Nothing may sit above the newest release but an [Unreleased] section.
    headings = re.findall(r"^## (.+)$", text, flags=re.MULTILINE)
    assert headings[0].startswith((f"[{__version__}]", "[Unreleased]"))


# --- metadata ---------------------------------------------------------------------


def test_one_python_classifier_for_each_version_tested() -> None:
    python = re.compile(r"Programming Language :: Python :: (3\.\d+)")
    pythons = [match[1] for match in map(python.fullmatch, classifiers()) if match]
    assert pythons == SUPPORTED
    assert setup_cfg("options")["python_requires"].strip() == f">={SUPPORTED[0]}"
    # The same versions as CI's matrices and .ci/run's loop.
    for workflow in ("ci.yml", "release.yml"):
        text = (ROOT / ".github" / "workflows" / workflow).read_text(encoding="utf-8")
        for version in SUPPORTED:
            assert f'"{version}"' in text, (workflow, version)
    ci_run = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "for minor in " + " ".join(v.split(".")[1] for v in SUPPORTED) + ";" in ci_run


def test_operating_systems_are_those_the_release_is_tested_on() -> None:
    systems = {c for c in classifiers() if c.startswith("Operating System ::")}
    release = (ROOT / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8")
    runners = set(re.findall(r"\b(ubuntu|macos|windows)-latest\b", release))
    classifier = {
        "ubuntu": "Operating System :: POSIX :: Linux",
        "macos": "Operating System :: MacOS",
        "windows": "Operating System :: Microsoft :: Windows",
    }
    named: Set[str] = {classifier[runner] for runner in runners}
    assert systems == named


def test_licence_is_an_spdx_expression_matching_the_file() -> None:
    assert metadata()["license_expression"].strip() == "MIT"
    assert "MIT License" in (ROOT / "LICENSE").read_text(encoding="utf-8")
    # PEP 639: with an expression, licence classifiers are deprecated (and refused by newer tools).
    assert not [c for c in classifiers() if c.startswith("License ::")]
    for wanted in ("Environment :: Console", "Topic :: Games/Entertainment :: Puzzle Games", "Typing :: Typed"):
        assert wanted in classifiers()
    import ansi2048

    assert (Path(ansi2048.__file__).parent / "py.typed").exists()  # installed, or the sources


def test_the_index_description_has_no_picture_or_link_it_cannot_show() -> None:
    setup = load(ROOT / "setup.py")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    description = setup.index_description(readme)
    assert "](docs/" in readme and setup.PICTURES_START in readme  # the README keeps its pictures
    targets = re.findall(r"\]\(([^)]*)\)", description)
    assert targets and all(target.startswith("https://") for target in targets), targets
    assert "<img" not in description and "docs/screenshot.svg" not in description
    # Everything else is the README: every section, and its text word for word.
    assert re.findall(r"^#+ .*$", description, re.M) == re.findall(r"^#+ .*$", readme, re.M)
    outside = readme.split(setup.PICTURES_START)[0] + readme.split(setup.PICTURES_END)[1]
    # Local links (a heading, a file of the repository) are their text there.
    local = r"\]\((?![A-Za-z][A-Za-z0-9+.-]*:)[^)]*\)"
    words = lambda text: re.sub(local, "]", text).replace("[", "").replace("]", "").split()  # noqa: E731
    assert words(description) == words(outside)


def test_an_unclosed_pictures_block_is_an_error() -> None:
    setup = load(ROOT / "setup.py")
    with pytest.raises(ValueError, match="without"):
        setup.index_description(f"# x\n{setup.PICTURES_START}\n![a](docs/a.svg)\n")


# --- the manual page ----------------------------------------------------------------


def test_the_man_page_is_current() -> None:
    manpage = load(ROOT / "scripts" / "manpage.py")
    written = (ROOT / "ansi2048.1").read_text(encoding="utf-8")
    assert written == manpage.current_page(), "ansi2048.1 is stale: run python scripts/manpage.py"


def test_the_man_page_is_written_from_the_parser_readme_and_changelog() -> None:
    manpage = load(ROOT / "scripts" / "manpage.py")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    page = manpage.man_page(build_parser(), readme, changelog)
    for action in build_parser()._actions:
        for name in action.option_strings:
            assert f"\\fB{name.replace('-', chr(92) + '-')}\\fR" in page
    assert ".SH KEYS" in page and ".SH FILES" in page and "best.json" in page
    # Change the sources, and the page follows.
    parser = build_parser()
    parser.add_argument("--speed", choices=("slow", "brisk"), help="how fast it goes")
    readme = readme.replace("| `u` | undo,", "| `u`, `z` | undo,")
    changed = manpage.man_page(parser, readme, changelog)
    assert "how fast it goes" in changed and "\\fIbrisk\\fR" in changed and "\\fBz\\fR" in changed
    with pytest.raises(ValueError, match="CHANGELOG"):
        manpage.man_page(build_parser(), readme, changelog.replace(f"[{__version__}]", "[9.9.9]"))


def test_roff_escapes_what_roff_would_read_as_requests() -> None:
    manpage = load(ROOT / "scripts" / "manpage.py")
    lines = manpage.markdown_to_roff(".hidden line\nand `a\\b --c`\n\n```sh\n'quoted\n```\n")
    assert "\\&.hidden line and \\fBa\\eb \\-\\-c\\fR" in lines
    assert "\\&'quoted" in lines


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="man -l is man-db's (Linux)")
def test_man_renders_the_page_without_a_warning(tmp_path: Path) -> None:
    man = shutil.which("man")
    if man is None:
        pytest.skip("man is not installed")
    result = subprocess.run(
        [man, "--warnings", "-l", str(ROOT / "ansi2048.1")],
        env={"PATH": "/usr/bin:/bin", "MANPAGER": "cat", "MANWIDTH": "80", "LC_ALL": "C.UTF-8", "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0 and result.stderr == "", result.stderr
    shown = result.stdout
    assert shown.startswith("ANSI2048(1)") and f"ansi2048 {__version__}" in shown
    for section in ("NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "KEYS", "THEMES AND CONFIG", "FILES"):
        assert f"\n{section}\n" in shown
    for action in build_parser()._actions:
        for name in action.option_strings:
            assert name in shown


def test_the_systemd_unit_shown_in_serving_md_is_the_one_in_docs() -> None:
    # .ci/run checks docs/ansi2048.service with systemd-analyze verify; the
    # page shows it whole, so the two must not drift apart.
    unit = (ROOT / "docs" / "ansi2048.service").read_text(encoding="utf-8")
    page = (ROOT / "docs" / "serving.md").read_text(encoding="utf-8")
    shown = re.search(r"## A systemd unit\n.*?```ini\n(.*?)```\n", page, re.DOTALL)
    assert shown is not None and shown.group(1) == unit
    assert "ExecReload=/bin/kill -HUP $MAINPID" in unit  # the log's reopening (serve: SIGHUP)
