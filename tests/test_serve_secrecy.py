"""The secrecy rule (issue 34): nothing that reveals the day's deal reaches
anyone before the day is over, but each player's own ranked game as they
play it. The rule itself (serve/secrecy.py, pure); that it is the one
decider (a scan of the server's code); and every command's bytes, to the
game's own player and to another, during the day (no seed) and after it
(the seed), on a server whose clock the test sets. Practice deals other
tiles; a ranked game of today is not watched live."""

from __future__ import annotations

import ast
import asyncio
import json
import sys
from pathlib import Path
from typing import Any, Dict, Set, Tuple

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the server is for POSIX hosts (asyncssh, signals)")
asyncssh = pytest.importorskip("asyncssh", reason="the server's tests need ansi2048[serve]", exc_type=ImportError)

import ansi2048.serve  # noqa: E402
from ansi2048 import __version__  # noqa: E402
from ansi2048.serve.secrecy import Deal, GameFacts, Shown, facts_of_seed, shown  # noqa: E402
from ansi2048.serve.watch_list import SECRET_MARK  # noqa: E402

from .serve_support import ServerThread  # noqa: E402
from .test_serve import client_key, connect, on_server, open_terminal, player_of, run  # noqa: E402
from .test_serve_daily import (  # noqa: E402, F401
    DAY,
    NEXT_DAY,
    SECRET,
    Clock,
    command,
    daily_terminal,
    expected,
    play_daily,
    practice_of,
    seed_of,
    served,
)
from .test_store import a_record  # noqa: E402

YESTERDAY, TOMORROW = "2026-11-25", "2026-11-27"

# -- the rule ---------------------------------------------------------------------


def test_the_rule_hides_todays_ranked_deal_from_all_but_its_player_and_never_its_seed() -> None:
    ranked = GameFacts(Deal.RANKED, DAY, owner=1)
    assert shown(ranked, 1, DAY) is Shown.WITHOUT_SEED  # their own: its boards, not its seed
    assert shown(ranked, 2, DAY) is Shown.NOTHING
    assert shown(ranked, None, DAY) is Shown.NOTHING  # a guest
    assert shown(GameFacts(Deal.RANKED, TOMORROW, 1), 2, DAY) is Shown.NOTHING  # a day to come
    assert shown(ranked, 2, TOMORROW) is Shown.EVERYTHING  # the day over: public
    assert shown(GameFacts(Deal.RANKED, YESTERDAY, 1), None, DAY) is Shown.EVERYTHING
    assert shown(GameFacts(Deal.PRACTICE, DAY, 1), 2, DAY) is Shown.EVERYTHING  # other tiles
    assert shown(GameFacts(Deal.REGULAR, "", 1), 2, DAY) is Shown.EVERYTHING
    # A kept game known by its seed: today's ranked deal, or not.
    assert facts_of_seed(seed_of(DAY), 3, SECRET, DAY) == GameFacts(Deal.RANKED, DAY, 3)
    assert facts_of_seed(seed_of(YESTERDAY), 3, SECRET, DAY).deal is Deal.REGULAR
    assert facts_of_seed(practice_of(DAY), 3, SECRET, DAY).deal is Deal.REGULAR


# What may compute a day's deal or its end, and why none of them shows a game.
DEAL_MAKERS = {
    ("secrecy", "facts_of_seed", "day_seed"),  # the rule's own facts
    ("secrecy", "secret_seed", "day_seed"),  # the seed stats has the database leave out (after asking the rule)
    ("ranked", "open_daily", "day_seed"),  # the day's game dealt to its player
    ("ranked", "open_daily", "practice_seed"),  # practice dealt
    ("ranked_game", "RankedRules.__init__", "day_end"),  # the ranked game ends at midnight
    ("daily", "daily_setup", "day_seed"),  # serve --verify checks each game was of its day's deal (nothing shown)
}
# The paths that show a game, and what each asks (the rule, or a helper that asks it).
SHOWING = {
    ("viewer_commands", "_replayed"): "shown",  # replay and cast, their titles and headers
    ("record_commands", "stats_command"): "shown",  # stats and --json
    ("viewer_commands", "_watch_refusal"): "shown",  # watch NAME and the watch list
    ("viewer_commands", "watch_command"): "_watch_refusal",
    ("viewer_commands", "replay_command"): "_replayed",
    ("record_commands", "keys_command"): "keys_for",  # keys
    ("secrecy", "keys_for"): "published",
    ("secrecy", "published"): "shown",
    ("ranked", "leaderboard_output"): "shown",  # leaderboard and --json
}


def _calls(tree: ast.AST) -> Dict[Tuple[str, str], Set[str]]:
    """The names each top-level function (or method, as Class.name) calls, nested functions included."""
    found: Dict[Tuple[str, str], Set[str]] = {}

    def names(node: ast.AST) -> Set[str]:
        called = set()
        for inner in ast.walk(node):
            if isinstance(inner, ast.Call):
                func = inner.func
                called.add(func.id if isinstance(func, ast.Name) else getattr(func, "attr", ""))
        return called

    for node in getattr(tree, "body", []):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found[("", node.name)] = names(node)
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    found[("", f"{node.name}.{item.name}")] = names(item)
    return found


def test_one_function_decides_what_of_a_game_is_shown_and_every_path_asks_it() -> None:
    package = Path(ansi2048.serve.__file__).parent
    makers = set()
    calls: Dict[Tuple[str, str], Set[str]] = {}
    for path in sorted(package.rglob("*.py")):
        module = path.stem
        for (_, function), called in _calls(ast.parse(path.read_text())).items():
            calls[(module, function)] = called
            for secret in ("day_seed", "practice_seed", "day_end"):
                if secret in called:
                    makers.add((module, function, secret))
        if module != "secrecy":
            assert "Shown(" not in path.read_text(), f"{path.name} makes its own Shown"
    assert makers == DEAL_MAKERS
    for (module, function), asks in SHOWING.items():
        assert asks in calls[(module, function)], f"{module}.{function} does not ask {asks}"


# -- every path's bytes, during the day and after ---------------------------------


async def _terminal_bytes(server: ServerThread, key: Any, text: str, user: str) -> bytes:
    """All ``text`` sends on a terminal (to its end, or until it shows the replay's end, then q)."""
    async with await connect(server.server.port, key, user=user) as conn:
        chan, terminal = await open_terminal(conn, text)
        await terminal.wait_for(lambda t: t.closed.is_set() or "end of replay" in t.text(), 60)
        # "end of replay" is the last frame's line: the server closes the
        # channel after it, and may have begun to (a q then would not go).
        if not chan.is_closing():
            chan.write(b"q")
        await terminal.closed.wait()
        return bytes(terminal.output) + bytes(terminal.stderr)


async def _every_path(server: ServerThread, keys: Dict[str, Any], ranked: int, own: int) -> Dict[str, bytes]:
    """Each way to see a game, by its player (alice) and another (bob): all bytes sent."""
    sent: Dict[str, bytes] = {}
    for user, key in keys.items():
        for text in (
            "stats",
            "stats --json",
            "leaderboard",
            "leaderboard --json",
            f"leaderboard {DAY} --json",
            f"keys {ranked}",
            f"cast {ranked}",
            "cast",
            f"cast g{own}",
            f"replay g{own}",
        ):
            _, out, err = await command(server, key, text)
            sent[f"{user}: {text}"] = (out + err).encode()
        for text in (f"replay {ranked}", "replay"):
            sent[f"{user}: {text} (terminal)"] = await _terminal_bytes(server, key, text, user)
    return sent


def test_todays_seed_reaches_no_client_on_any_path_until_the_day_is_over(
    served: Tuple[ServerThread, Clock],  # noqa: F811 (the fixture of test_serve_daily.py)
) -> None:
    server, clock = served
    alice, bob, carol = client_key(), client_key(), client_key()
    secret = str(seed_of(DAY)).encode()

    async def scenario() -> Tuple[int, Dict[str, bytes], Dict[str, bytes]]:
        await play_daily(server, alice, b"wasdwasd", user="alice")
        player = await player_of(server, alice)
        # Her game of the day kept in her history, as a finished game is, with the day's seed.
        await on_server(server, server.store.add_to_history(player.id, a_record(24, seed=seed_of(DAY))))  # type: ignore[attr-defined]
        [kept] = await on_server(server, server.store.history(player.id))  # type: ignore[attr-defined]
        _, out, _ = await command(server, bob, "leaderboard --json")
        ranked = json.loads(out)["top"][0]["id"]
        during = await _every_path(server, {"alice": alice, "bob": bob}, ranked, kept.id)
        # Carol's ranked game, live: watched by name, in the list, by another and by a guest.
        async with daily_terminal(server, carol, "carol") as (chan, _):
            chan.write(b"wasd")
            await asyncio.sleep(0.3)
            for user, key in (("bob", bob), ("guest", None)):
                _, out, err = await command(server, key, "watch carol")
                during[f"{user}: watch carol"] = (out + err).encode()
                during[f"{user}: watch carol (terminal)"] = await _terminal_bytes(server, key, "watch carol", user)
            async with await connect(server.server.port, bob, user="bob") as conn:
                listing, terminal = await open_terminal(conn, "watch")
                await terminal.shows("carol")
                listing.write(b"\r")
                await terminal.shows("not watchable live")
                listing.write(b"q")
                await terminal.closed.wait()
                during["bob: watch (list)"] = bytes(terminal.output)
        clock.now = NEXT_DAY
        after = await _every_path(server, {"bob": bob}, ranked, kept.id)
        return ranked, during, after

    ranked, during, after = run(scenario())
    leaks = [path for path, data in during.items() if secret in data]
    assert leaks == []
    # Each path did show something (a refusal is one line; alice's own replay and cast her boards).
    assert all(data.strip() for data in during.values())
    own_replays = [path for path in during if path.startswith("alice: replay") and path.endswith("(terminal)")]
    assert len(own_replays) == 2  # her ranked game by its id, her last game: played back, without the seed
    assert all(b"end of replay" in during[path] and b"Daily " + DAY.encode() in during[path] for path in own_replays)
    refused = ("bob: replay {} (terminal)", "bob: cast {}", "bob: keys {}", "alice: keys {}")
    for path in (text.format(ranked) for text in refused):
        assert f"game {ranked} is of {DAY}, whose tiles stay secret until it ends".encode() in during[path], path
    assert b"is playing the ranked daily game of " + DAY.encode() in during["bob: watch carol"]
    assert b"is playing the ranked daily game of" in during["guest: watch carol (terminal)"]
    assert b"ranked" + SECRET_MARK.encode() in during["bob: watch (list)"]
    # After the day: the seed is public, in keys, the cast's title, stats.
    for path in (f"bob: keys {ranked}", f"bob: cast {ranked}"):
        assert secret in after[path], path


def test_practice_deals_other_tiles_the_ranked_game_its_own(
    served: Tuple[ServerThread, Clock],  # noqa: F811
) -> None:
    server, _ = served
    alice = client_key()
    keys = "wasdwasdwasd"
    ranked, practice = expected(keys), expected(keys, practice_of(DAY))
    assert ranked[2] != practice[2]  # the same keys, other boards

    async def scenario() -> Tuple[str, str, str]:
        as_guest = await play_daily(server, None, keys.encode(), user="guest")
        as_ranked = await play_daily(server, alice, keys.encode(), user="alice")
        _, out, _ = await command(server, alice, "leaderboard --json")
        assert json.loads(out)["top"][0]["score"] == ranked[0]  # the ranked deal, verified by replay
        await command(server, alice, "daily")  # no terminal: refused, nothing changes
        return as_guest, as_ranked, out

    as_guest, as_ranked, _ = run(scenario())
    assert f"Score {practice[0]}" in as_guest and "a guest is never ranked" in as_guest
    assert f"Score {ranked[0]}" in as_ranked and "ranked game of" in as_ranked


def test_practice_kept_by_an_earlier_version_on_the_ranked_tiles_starts_again_on_its_own(
    served: Tuple[ServerThread, Clock],  # noqa: F811
) -> None:
    server, _ = served
    dave = client_key()
    keys = "wasdwasdwasd"
    header = f"# ansi2048 version={__version__} seed={seed_of(DAY)} size=4x4 goal=2048\n".encode()

    async def scenario() -> str:
        async with daily_terminal(server, dave, "dave") as (chan, terminal):  # his ranked game, ended
            chan.write(b"r")
            await terminal.shows("r again ends it for good")
            chan.write(b"r")
            await terminal.closed.wait()
        player = await player_of(server, dave)
        board, store = f"daily-{DAY}-practice", server.store  # type: ignore[attr-defined]
        await on_server(server, store.claim(player.id, board, "old", 60))
        await on_server(server, store.rewrite(player.id, board, "old", header + b"ww"))  # practice on the ranked tiles
        await on_server(server, store.release(player.id, board, "old"))
        return await play_daily(server, dave, keys.encode(), user="dave")

    screen = run(scenario())
    assert "practice (not ranked)" in screen and f"Score {expected(keys, practice_of(DAY))[0]}" in screen
    assert str(seed_of(DAY)) not in screen  # resumed, it showed the day's seed in its header
