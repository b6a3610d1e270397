"""``replay ID`` and ``cast ID`` of a ranked daily game (issue 28 item 3),
on each database, through a server whose clock the test sets: refused, in
one line saying when, until the game's day is over (the rule of ``keys``);
then played back to its final board, and cast as an asciicast v2 file whose
last frame shows that board. The player's own games by their ids are in
test_serve_watch.py."""

from __future__ import annotations

import io
import json
import sys
import time
from pathlib import Path
from typing import Any, Dict, Tuple

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the server is for POSIX hosts (asyncssh, signals)")
asyncssh = pytest.importorskip("asyncssh", reason="the server's tests need ansi2048[serve]", exc_type=ImportError)

from ansi2048.game.session import Session  # noqa: E402
from ansi2048.render.frame import View, layout_for  # noqa: E402
from ansi2048.serve.replay import Playback  # noqa: E402
from ansi2048.serve.requests import NEEDS_TERMINAL  # noqa: E402

from .screen import emulate, read_board  # noqa: E402
from .serve_support import ServerThread, Terminal  # noqa: E402
from .test_serve import client_key, connect, on_server, open_terminal, player_of, run  # noqa: E402
from .test_serve_daily import DAY, NEXT_DAY, Clock, command, play_daily, seed_of, served  # noqa: E402, F401
from .test_serve_watch import board_on, played  # noqa: E402
from .test_store import a_record  # noqa: E402

ALICE_KEYS = "wasdwasdssaaddww"
SECRET_UNTIL = "whose tiles stay secret until it ends (00:00 UTC)"


def test_a_daily_games_recording_is_played_back_from_its_header_or_not_at_all() -> None:
    header = b"# ansi2048 version=0.3.0 seed=123 size=4x4 goal=2048\n"
    assert Playback.of_recording(header + b"wasd") == Playback(4, 4, 2048, 123, b"wasd")
    assert Playback.of_recording(header) == Playback(4, 4, 2048, 123, b"")
    for bad in (b"wasd", b"", header.replace(b"seed=123 ", b""), header.replace(b"4x4", b"0x4")):
        assert Playback.of_recording(bad + b"wasd") is None, bad
    assert Playback.of_recording(header.replace(b"goal=2048", b"goal=3") + b"wasd") is None


async def on_terminal(server: ServerThread, key: Any, text: str) -> Tuple[int, str, str]:
    """``text`` run on a terminal (as ``ssh -t``): its status, screen and standard error."""
    async with await connect(server.port, key) as conn:
        _, terminal = await open_terminal(conn, text)
        await terminal.closed.wait()
        return terminal.exit_status or 0, terminal.text().strip(), bytes(terminal.stderr).decode()


def test_a_ranked_daily_game_is_replayed_and_cast_once_its_day_is_over_never_before(
    served: Tuple[ServerThread, Clock],  # noqa: F811 (the fixture of test_serve_daily.py)
) -> None:
    server, clock = served
    alice, bob = client_key(), client_key()

    async def scenario() -> Tuple[int, Dict[str, Tuple[int, str, str]], Terminal, bytes, Tuple[int, str, str]]:
        await play_daily(server, alice, ALICE_KEYS.encode(), user="alice")
        _, out, _ = await command(server, bob, "leaderboard --json")
        (row,) = json.loads(out)["top"]
        game = int(row["id"])
        # Before midnight: refused to others; its own player sees it without its seed.
        early = {
            "replay": await on_terminal(server, bob, f"replay {game}"),
            "cast": await command(server, bob, f"cast {game}"),
            "own": await on_terminal(server, alice, f"replay {game}"),
            "own cast": await command(server, alice, f"cast {game}"),
            "unknown": await command(server, bob, f"cast {game + 1000}"),
        }
        clock.now = NEXT_DAY
        async with await connect(server.server.port, bob, user="bob") as conn:
            _, replayed = await open_terminal(conn, f"replay {game}")
            await replayed.shows("end of replay", 60)
        async with await connect(server.server.port, None, user="guest") as guest:  # a guest too: it is public
            cast = await guest.run(f"cast {game}")
        return game, early, replayed, bytes(cast.stdout), (int(cast.exit_status), "", bytes(cast.stderr).decode())

    game_id, early, replayed, cast, cast_status = run(scenario())
    secret = str(seed_of(DAY))
    status, out, err = early["own"]
    assert (status, err) == (0, "") and f"Daily {DAY}" in out and secret not in out
    status, out, err = early["own cast"]
    assert (status, err) == (0, "") and secret not in out
    assert json.loads(out.splitlines()[0])["title"] == f"ansi2048 replay 4x4 daily {DAY}"
    for name in ("replay", "cast"):
        status, out, err = early[name]
        said, end = ("cast", "\n") if name == "cast" else ("replay", "\r\n")
        assert (status, out) == (2, "")
        assert err == f"ansi2048: {said}: game {game_id} is of {DAY}, {SECRET_UNTIL}{end}"
    assert early["unknown"] == (2, "", f"ansi2048: cast: no ranked game {game_id + 1000}\n")

    game = played(seed_of(DAY), ALICE_KEYS)  # the day's game after Alice's keys, by the engine alone
    expected = [list(row) for row in game.board]
    assert board_on(replayed, game) == expected
    assert f"alice, daily game of {DAY}" in replayed.text()
    assert f"Score {game.score}" in replayed.text() and f"Moves {game.moves}" in replayed.text()

    assert cast_status == (0, "", "")
    lines = cast.decode().splitlines()
    head = json.loads(lines[0])
    assert head["version"] == 2 and head["title"] == f"ansi2048 replay 4x4 seed {secret}"  # the day over: all of it
    events: Any = [json.loads(line) for line in lines[1:]]
    assert all(event[1] == "o" for event in events)
    screen = emulate("".join(event[2] for event in events).encode(), head["width"], head["height"])
    layout = layout_for(View.of(Session(game)), head["width"], head["height"])
    assert layout is not None
    assert read_board(screen.display, layout, 4, 4) == expected
    assert f"Score {game.score}" in "\n".join(screen.display)


def test_stats_shows_no_seed_of_todays_daily_game_until_the_day_is_over(
    served: Tuple[ServerThread, Clock],  # noqa: F811 (the fixture of test_serve_daily.py)
) -> None:
    """A finished daily game (ranked or practice) is kept in its player's
    history with the day's seed; stats lists each top game's seed."""
    server, clock = served
    alice = client_key()
    secret = seed_of(DAY)

    async def scenario() -> Tuple[str, str, str]:
        await command(server, alice, "stats")  # the player, made
        player = await player_of(server, alice)
        await on_server(server, server.store.add_to_history(player.id, a_record(24, seed=secret)))  # type: ignore[attr-defined]
        await on_server(server, server.store.add_to_history(player.id, a_record(16, seed=7)))  # type: ignore[attr-defined]
        _, during, _ = await command(server, alice, "stats --json")
        _, text, _ = await command(server, alice, "stats")
        clock.now = NEXT_DAY
        _, after, _ = await command(server, alice, "stats --json")
        return during, text, after

    during, text, after = run(scenario())
    assert str(secret) not in during and str(secret) not in text
    document = json.loads(during)
    assert (document["games"], document["daily_held_back"], len(document["last_games"])) == (1, 1, 2)
    assert "1 of today's daily games count once the day is over (its tiles are secret)." in text.splitlines()
    document = json.loads(after)
    assert (document["games"], document["daily_held_back"]) == (2, 0)
    assert [game["seed"] for game in document["boards"][0]["top"]] == [secret, 7]


# -- each command checks what it names first, and the log says how it ended ------


def test_without_a_terminal_an_id_or_a_name_is_checked_first_cast_needs_none_and_the_log_says_each_outcome(
    tmp_path: Path, store_url: str
) -> None:
    log = io.StringIO()
    key = client_key()
    cases = {  # the command, without a terminal: its status, what it says, how its connection's line ends
        "replay g999": (2, "ansi2048: replay: you have no game g999 (stats lists yours)", "replay: refused"),
        "cast g999": (2, "ansi2048: cast: you have no game g999 (stats lists yours)", "cast: refused"),
        "replay 999": (2, "ansi2048: replay: no ranked game 999", "replay: refused"),
        "keys 999": (2, "ansi2048: keys: no ranked game 999", "keys: refused"),
        "watch nobody": (
            2,
            "ansi2048: watch: no game of 'nobody' is being played now (or it is private)",
            "watch: refused",
        ),
        "replay GAME": (2, f"ansi2048: {NEEDS_TERMINAL}", "replay: needs a terminal"),
        "watch": (2, f"ansi2048: {NEEDS_TERMINAL}", "watch: needs a terminal"),
        "play": (2, f"ansi2048: {NEEDS_TERMINAL}", "play: needs a terminal"),
        "cast GAME": (0, "", "cast: done"),
        "stats": (0, "", "stats: done"),
    }

    async def scenario(thread: ServerThread) -> Tuple[Dict[str, Tuple[int, str, str]], Tuple[int, str, str]]:
        player = await player_of(thread, key)
        await on_server(thread, thread.store.add_to_history(player.id, a_record(16)))  # type: ignore[attr-defined]
        [kept] = await on_server(thread, thread.store.history(player.id))  # type: ignore[attr-defined]
        said = {}
        for text in cases:
            async with await connect(thread.port, key) as conn:
                result = await conn.run(text.replace("GAME", f"g{kept.id}"))
            said[text] = (int(result.exit_status), bytes(result.stdout).decode(), bytes(result.stderr).decode())
        on_tty = await on_terminal(thread, key, "replay g999")
        return said, on_tty

    with ServerThread(tmp_path, store_url, log=log) as thread:
        said, on_tty = run(scenario(thread))
        for _ in range(100):  # a connection's line is written when the server sees it close
            if log.getvalue().count(" keys, ") >= len(cases) + 1:
                break
            time.sleep(0.05)
        lines = [line for line in log.getvalue().splitlines() if " keys, " in line]  # each connection's last
    for text, (status, err, _) in cases.items():
        assert (said[text][0], said[text][2].rstrip("\n")) == (status, err), text
    assert json.loads(said["cast GAME"][1].splitlines()[0])["version"] == 2  # an asciicast, no terminal asked
    assert on_tty == (2, "", "ansi2048: replay: you have no game g999 (stats lists yours)\r\n")
    endings = [line.rsplit(" keys, ", 1)[1] for line in lines]
    assert endings == [ending for _, _, ending in cases.values()] + ["replay: refused"]
