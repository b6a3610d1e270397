"""The server's pure parts: display names, and the commands a client may give."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, List

import pytest

from ansi2048.render.style import ColorDepth
from ansi2048.serve.cli import parse_listen
from ansi2048.serve.commands import COMMANDS, help_text, parse_command
from ansi2048.serve.names import MAX_NAME, NAMELESS, display_name
from ansi2048.serve.requests import COLOR_DEPTHS, CommandError, Help, PlayRequest, Stats


@pytest.mark.parametrize(
    ("user", "name"),
    [
        ("alice", "alice"),
        ("Bob_the-2.0", "Bob_the-2.0"),
        ("\x1b[31mbob\x1b[0m", "bob"),  # CSI: the parameters go with it
        ("\x1b]0;owned\x07eve", "eve"),  # OSC (a window title) up to BEL
        ("\x1b]8;;http://x\x1b\\link", "link"),  # OSC up to ST
        ("\x9b31mcarl", "carl"),  # 8-bit CSI
        ("\x90qdata\x9cdan", "dan"),  # 8-bit DCS up to 8-bit ST
        ("\x85\x8dmeg", "meg"),  # C1 controls
        ("\x9bmeg", "eg"),  # 8-bit CSI m (SGR): the m is its final byte
        ("\u202egnirts\u202c", "gnirts"),  # bidi override and pop
        ("\u2066iso\u2069", "iso"),  # bidi isolates
        ("zo\u200be", "zoe"),  # zero width space
        ("\u0430dmin", "dmin"),  # a Cyrillic look-alike letter
        ("a\tb\nc\x00d\x7fe", "abcde"),  # C0 and DEL
        ("x" * 40, "x" * MAX_NAME),
        ("", NAMELESS),
        ("\x1b[2J\x1b[H", NAMELESS),
        ("élève", "lve"),
    ],
)
def test_a_display_name_keeps_letters_digits_and_dot_dash_underscore(user: str, name: str) -> None:
    assert display_name(user) == name


def test_no_name_is_longer_than_16_or_holds_anything_else() -> None:
    for user in ("\x1b" * 50, "a\x1b[" * 30, "\u202e" * 20 + "b" * 30, "\x1bP" + "q" * 40):
        name = display_name(user)
        assert 1 <= len(name) <= 16
        assert all(ch.isascii() and (ch.isalnum() or ch in "_.-") for ch in name)


def test_a_shell_request_or_an_empty_command_plays() -> None:
    assert parse_command(None) == PlayRequest()
    assert parse_command("  ") == PlayRequest()


def test_play_takes_the_local_options_that_make_sense_remotely() -> None:
    assert parse_command("play --size 3x5 --goal 512 --theme dark --color 24bit --no-animation --new") == PlayRequest(
        3, 5, 512, "dark", "24bit", False, True
    )
    assert parse_command("play --animation").animation is True  # type: ignore[union-attr]
    assert COLOR_DEPTHS == {"16": ColorDepth.BASIC, "256": ColorDepth.EXTENDED, "24bit": ColorDepth.TRUE}


def test_help_and_stats() -> None:
    assert parse_command("help") == Help()
    assert parse_command("stats") == Stats(False)
    assert parse_command("stats --json") == Stats(True)


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ("play --size 11", "argument --size"),
        ("play --goal 3", "argument --goal"),
        ("play --size 3 --goal 4096", "cannot be reached"),  # the local parser's check, with the size
        ("play --theme neon", "argument --theme"),
        ("play --color never", "argument --color"),
        ("play --seed 4", "unrecognized arguments: --seed"),  # not over SSH
        ("play --record /etc/passwd", "unrecognized arguments"),
        ("play --animation --no-animation", "not allowed with"),
        ("play --help", "unrecognized arguments"),
        ("stats --all", "unrecognized arguments"),
        ("help me", "help takes no arguments"),
        ("bash", "unknown command 'bash'"),
        ("scp -t .", "unknown command 'scp'"),
        ("play 'open", "cannot read the command"),
        ("keys", "keys: the following arguments are required: ID"),  # as the docs name it, not "entry"
    ],
)
def test_a_bad_command_is_one_line_saying_what(line: str, said: str) -> None:
    with pytest.raises(CommandError) as raised:
        parse_command(line)
    message = str(raised.value)
    assert said in message and "\n" not in message


def test_a_bad_command_is_not_repeated_with_its_control_codes() -> None:
    for line in ("\x1b]0;x\x07", "play --\x1b[2J", "play --size \x1b[2J"):
        with pytest.raises(CommandError) as raised:
            parse_command(line)
        assert all(" " <= ch <= "~" for ch in str(raised.value))


def test_help_names_every_command_in_80_columns() -> None:
    text = help_text(2048)
    assert all(len(line) <= 80 for line in text.splitlines())
    for part in ("ssh -t -p 2048 HOST", " play ", " stats ", " help ", "IdentitiesOnly=yes", "--no-animation"):
        assert part in text
    for part in (" replay [ID] ", " cast [ID] ", "(g7)", "leaderboard (12) once its day is over"):
        assert part in text  # the one rule of game ids
    assert "ssh -t HOST COMMAND" in help_text(22)


@pytest.mark.parametrize(
    ("text", "where"),
    [("127.0.0.1:2048", ("127.0.0.1", 2048)), ("[::1]:0", ("::1", 0)), ("0.0.0.0:22", ("0.0.0.0", 22))],
)
def test_listen_is_host_and_port(text: str, where: tuple) -> None:  # type: ignore[type-arg]
    assert parse_listen(text) == where


@pytest.mark.parametrize("text", ["2048", ":2048", "host:", "host:65536", "host:-1", "host:x"])
def test_a_bad_listen_address_is_refused(text: str) -> None:
    import argparse

    with pytest.raises(argparse.ArgumentTypeError):
        parse_listen(text)


def test_serve_without_asyncssh_says_how_to_install_it(tmp_path: object) -> None:
    import subprocess
    import sys

    from .conftest import child_env

    code = "import sys; sys.modules['asyncssh'] = None; from ansi2048.cli import main; sys.exit(main(['serve']))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=child_env(), timeout=60)
    assert done.returncode == 1 and not done.stdout
    assert done.stderr == (
        'ansi2048 serve: error: the server needs asyncssh: pip install ".[serve]" from a clone (or "ansi2048[serve]")\n'
    )


def _can_serve() -> bool:
    """asyncssh loads here (the serve extra; under Wine its cryptography does not)."""
    import importlib

    try:
        importlib.import_module("asyncssh")
    except ImportError:
        return False
    return True


# The server itself (past its options): asyncssh, and a POSIX host.
serving = pytest.mark.skipif(
    sys.platform == "win32" or not _can_serve(), reason="the server's tests need ansi2048[serve] on a POSIX host"
)


def _serve(*args: str, code: str = "pass") -> Any:
    """``ansi2048 serve ARGS`` in a child (``code`` run first), its output kept."""
    import subprocess
    import sys

    from .conftest import child_env

    run = f"import sys; {code}; from ansi2048.cli import main; sys.exit(main(['serve', *sys.argv[1:]]))"
    return subprocess.run(
        [sys.executable, "-c", run, *args], capture_output=True, text=True, env=child_env(), timeout=60
    )


@serving
def test_serve_without_the_postgres_driver_says_which_extra_to_install(tmp_path: Path) -> None:
    done = _serve(
        "--data-dir", str(tmp_path), "--db", "postgresql://nobody@127.0.0.1:1/none",
        code="sys.modules['psycopg'] = None",
    )  # fmt: skip
    assert done.returncode == 1 and not done.stdout
    assert done.stderr == (
        "ansi2048 serve: error: postgresql:// needs the postgres extra:"
        ' pip install ".[postgres]" from a clone (or "ansi2048[postgres]")\n'
    )


@serving
@pytest.mark.parametrize("key", [b"garbage", b"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n"])
def test_a_broken_host_key_is_one_line_naming_the_file(tmp_path: Path, key: bytes) -> None:
    path = tmp_path / "ssh_host_ed25519_key"
    path.write_bytes(key)
    done = _serve("--data-dir", str(tmp_path), "--listen", "127.0.0.1:0")
    assert done.returncode == 1 and not done.stdout and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(f"ansi2048 serve: error: the host key {path} cannot be read (")
    assert path.read_bytes() == key  # never replaced: the players' known_hosts name it


@serving
def test_verify_without_a_day_checks_every_day(tmp_path: Path) -> None:
    done = _serve("--data-dir", str(tmp_path), "--verify")
    assert (done.returncode, done.stdout, done.stderr) == (0, "0 ranked games replayed, 0 changed\n", "")


def test_the_local_game_never_imports_the_server() -> None:
    import subprocess
    import sys

    from .conftest import child_env

    code = (
        "import sys, contextlib, io\n"
        "from ansi2048.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit): main(['--help'])\n"
        "print(sorted(name for name in sys.modules if name.startswith(('asyncssh', 'ansi2048.serve'))))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=child_env(), timeout=60)
    assert done.returncode == 0 and done.stdout == "[]\n", done.stderr


def test_serve_bad_options_are_one_line_and_status_2() -> None:
    import subprocess
    import sys

    from .conftest import child_env

    for args in (
        ["--listen", "nowhere"],
        ["--bogus"],
        ["--listen", "127.0.0.1:70000"],
        ["--verify", "2026-02-30"],
        ["--daily-per-address", "-1"],
    ):
        done = subprocess.run(
            [sys.executable, "-m", "ansi2048", "serve", *args],
            capture_output=True,
            text=True,
            env=child_env(),
            timeout=60,
        )
        assert done.returncode == 2 and done.stderr.count("\n") == 1 and "ansi2048 serve: error:" in done.stderr


# -- what the loop does for a server (pure) ---------------------------------------------


def _play(guest: bool = False) -> Any:
    from ansi2048.game.engine import Game
    from ansi2048.game.session import Session
    from ansi2048.loop.state import Play, Settings

    return Play(Session(Game(4, 4, 2048, 7)), Settings(animate=False, can_wait=True, guest=guest), (80, 24))


def _drawn(effects: List[Any]) -> Any:
    from ansi2048.loop.events import Draw

    return [effect for effect in effects if isinstance(effect, Draw)][-1].view


def test_a_guests_farewell_says_the_game_is_not_kept() -> None:
    from ansi2048.game.keys import Action
    from ansi2048.loop.events import Keys
    from ansi2048.loop.step import step

    for guest, said in ((True, "a guest's game is not kept"), (False, "game kept for next time")):
        play, effects = step(_play(guest), Keys((Action.LEFT, Action.QUIT), 1.0))
        assert play.over and said in _drawn(effects).ending


def test_a_busy_ai_answers_no_hint_and_stops_autoplay_saying_so() -> None:
    from ansi2048.game.keys import Action
    from ansi2048.loop.events import AIMoved, AskAI, Keys, Purpose, Tick
    from ansi2048.loop.step import AI_BUSY_NOTE, next_due, step

    play, effects = step(_play(), Keys((Action.HINT,), 1.0))
    assert any(isinstance(effect, AskAI) for effect in effects) and play.thinking is not None
    play, effects = step(play, AIMoved(Purpose.HINT, None, 1.1, busy=True))
    view = _drawn(effects)
    assert view.note == AI_BUSY_NOTE and view.hint is None and not view.stuck and play.thinking is None

    play, _ = step(play, Keys((Action.AUTOPLAY,), 2.0))
    play, effects = step(play, Tick(2.0))
    assert any(isinstance(effect, AskAI) and effect.purpose is Purpose.AUTOPLAY for effect in effects)
    play, effects = step(play, AIMoved(Purpose.AUTOPLAY, None, 2.1, busy=True))
    assert play.pilot is None and next_due(play) is None and _drawn(effects).note == AI_BUSY_NOTE


@pytest.mark.parametrize(("line", "meant"), [("stast", "stats"), ("leaderbord", "leaderboard"), ("pley", "play")])
def test_an_unknown_command_near_one_of_the_table_says_which(line: str, meant: str) -> None:
    with pytest.raises(CommandError) as raised:
        parse_command(line)
    assert str(raised.value) == f"unknown command {line!r} (did you mean {meant!r}? see: help)"


def test_an_unknown_command_near_none_says_only_help() -> None:
    with pytest.raises(CommandError) as raised:
        parse_command("xyzzy")
    assert str(raised.value) == "unknown command 'xyzzy' (see: help)"


def test_help_is_grouped_by_whether_a_terminal_is_needed_its_descriptions_aligned() -> None:
    # Issue 40 item 11: a dense wall, the description column misaligned for
    # cast, leaderboard and keys, -t recommended for commands that need no
    # terminal, and a last line that read as unfinished.
    lines = help_text(2048).splitlines()
    assert all(len(line) <= 80 for line in lines)
    terminal = next(i for i, line in enumerate(lines) if line.endswith("ssh -t -p 2048 HOST COMMAND"))
    plain = next(i for i, line in enumerate(lines) if line.endswith("ssh -p 2048 HOST COMMAND"))
    keys = next(i for i, line in enumerate(lines) if line.startswith("Keys in a game"))
    rows = {line.split()[0]: i for i, line in enumerate(lines[:keys]) if line.startswith("  ") and line[2:3] != " "}
    for name in ("play", "daily", "watch", "replay", "race"):
        assert terminal < rows[name] < plain, name
    for name in ("cast", "stats", "races", "leaderboard", "keys", "link", "help"):
        assert rows[name] > plain, name
    # Every command with lines of its own has its row (an entry written
    # another way, as races' was, must not vanish from help).
    assert [command.name for command in COMMANDS if command.usage and command.name not in rows] == []
    assert [line for line in lines if "-t" in line.split()] == [lines[terminal]]  # said once, where needed
    # Every description starts in one column: on its command's line, or
    # under it when the command is too long for the column.
    starts = set()
    for row in rows.values():
        line = lines[row]
        gap = line.find("  ", 2)
        if gap == -1:  # the description on the next line
            nxt = lines[row + 1]
            starts.add(len(nxt) - len(nxt.lstrip()))
        else:
            starts.add(len(line) - len(line[gap:].lstrip()))
    assert len(starts) == 1, (starts, lines)
    assert lines[-1] == "  ssh -o IdentitiesOnly=yes -i ~/.ssh/KEY -p 2048 HOST"  # a whole command, not "-i KEY"
    assert "ssh -t HOST COMMAND" in help_text(22) and "ssh -p 22" not in help_text(22)


def test_keys_without_an_id_names_it_as_the_docs_do() -> None:
    with pytest.raises(CommandError) as raised:
        parse_command("keys")
    assert "ID" in str(raised.value) and "entry" not in str(raised.value)
