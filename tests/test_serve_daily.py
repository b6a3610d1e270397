"""The daily leaderboard over SSH (issue 27), in-process: asyncssh clients
play the day's game on a server whose clock the test sets, on each
database (tests/databases.py). The real ``ssh`` with the server's clock
moved by libfaketime is in test_serve_daily_ssh.py."""

from __future__ import annotations

import asyncio
import datetime
import hashlib
import hmac
import io
import json
import subprocess
import sys
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any, AsyncIterator, Iterator, List, Optional, Tuple

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the server is for POSIX hosts (asyncssh, signals)")
asyncssh = pytest.importorskip("asyncssh", reason="the server's tests need ansi2048[serve]", exc_type=ImportError)

from ansi2048 import __version__  # noqa: E402
from ansi2048.game.engine import Game  # noqa: E402
from ansi2048.game.keys import Action  # noqa: E402
from ansi2048.records.replay import Result, Setup, verdict  # noqa: E402
from ansi2048.serve.commands import parse_command  # noqa: E402
from ansi2048.serve.daily import (  # noqa: E402
    board_note,
    day_end,
    day_of,
    day_seed,
    leaderboard_document,
    leaderboard_lines,
    machine_timing,
)
from ansi2048.serve.log import ServerLog  # noqa: E402
from ansi2048.serve.ranked import SECRET_FILE, daily_secret  # noqa: E402
from ansi2048.serve.requests import CommandError, Daily, KeysRequest, Leaderboard  # noqa: E402
from ansi2048.serve.store import open_store  # noqa: E402
from ansi2048.serve.store.base import ClaimLost, DailyBoard, DailyEntry, Standing  # noqa: E402
from ansi2048.serve.store.links import Statement  # noqa: E402
from ansi2048.serve.verify import verify  # noqa: E402

from .conftest import child_env  # noqa: E402
from .serve_support import ServerThread, Terminal  # noqa: E402
from .test_serve import client_key, connect, on_server, open_terminal, player_of, run  # noqa: E402
from .test_store import opened  # noqa: E402

SECRET = b"the test server's secret, 32 b.."
DAY = "2026-11-26"
NOON = datetime.datetime(2026, 11, 26, 12, tzinfo=datetime.timezone.utc).timestamp()
NEXT_DAY = datetime.datetime(2026, 11, 27, 0, 0, 1, tzinfo=datetime.timezone.utc).timestamp()


def seed_of(day: str) -> int:
    """The day's seed as docs/serving.md defines it."""
    digest = hmac.new(SECRET, f"ansi2048 daily {day}".encode(), hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big")


def practice_of(day: str) -> int:
    """The day's practice seed as docs/serving.md defines it: other tiles."""
    digest = hmac.new(SECRET, f"ansi2048 practice {day}".encode(), hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big")


def expected(keys: str, seed: Optional[int] = None) -> Tuple[int, int, Tuple[int, ...]]:
    """Score, moves and board of the day's game (or of ``seed``'s) after ``keys``, by the engine alone."""
    game = Game(4, 4, 2048, seed_of(DAY) if seed is None else seed)
    for key in keys:
        game.move(Action(key).direction)  # type: ignore[arg-type]
    return game.score, game.moves, tuple(game.cells)


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def served(tmp_path: Path, store_url: str) -> Iterator[Tuple[ServerThread, Clock]]:
    clock = Clock(NOON)
    with ServerThread(tmp_path, store_url) as server:
        server.server.context = replace(server.server.context, daily_secret=SECRET, now=clock)
        yield server, clock


@asynccontextmanager
async def daily_terminal(served: ServerThread, key: Any, user: str) -> AsyncIterator[Tuple[Any, Terminal]]:
    """``daily`` on a terminal, its first frame shown."""
    async with await connect(served.server.port, key, user=user) as conn:
        chan, terminal = await open_terminal(conn, "daily")
        await terminal.shows("Score")
        yield chan, terminal


async def play_daily(served: ServerThread, key: Any, keys: bytes, user: str = "alice") -> str:
    """``daily`` played with ``keys`` (one read each, a moment apart), then
    q; the first frame's text, and the last's."""
    async with daily_terminal(served, key, user) as (chan, terminal):
        first = terminal.text()
        for byte in keys:
            chan.write(bytes([byte]))
            await asyncio.sleep(0.02)
        chan.write(b"q")
        await terminal.closed.wait()
        return first + "\n" + terminal.text()


async def command(served: ServerThread, key: Any, text: str) -> Tuple[int, str, str]:
    async with await connect(served.server.port, key) as conn:
        result = await conn.run(text)
        return int(result.exit_status), bytes(result.stdout).decode(), bytes(result.stderr).decode()


def test_two_players_are_ranked_by_score_and_later_games_are_practice(
    served: Tuple[ServerThread, Clock], tmp_path: Path
) -> None:
    server, clock = served
    alice, bob = client_key(), client_key()
    alice_keys, bob_keys = "wasdwasdwasd", "ssaassdd"

    async def scenario() -> None:
        screen = await play_daily(server, alice, alice_keys.encode(), user="alice")
        assert "ranked game of 2026-11-26" in screen
        assert "r end" in screen and "r new" not in screen and "r restart" not in screen  # r ends a ranked game
        await play_daily(server, bob, bob_keys.encode(), user="bob")
        # Alice again: her ranked game resumed.
        screen = await play_daily(server, alice, b"", user="alice")
        assert "ranked game of 2026-11-26" in screen and "Moves 12" in screen
        status, out, _ = await command(server, bob, "leaderboard --json")
        assert status == 0
        board = json.loads(out)
        want = sorted([("alice", expected(alice_keys)), ("bob", expected(bob_keys))], key=lambda pair: -pair[1][0])
        assert [(row["name"], row["score"], row["moves"]) for row in board["top"]] == [
            (name, score, moves) for name, (score, moves, _) in want
        ]
        assert board["day"] == DAY and board["you"]["name"] == "bob"
        assert all(not row["finished"] for row in board["top"])  # still the day: still playing
        _, out, _ = await command(server, bob, "leaderboard")
        assert "Your rank:" in out and "alice" in out

        # Before midnight the keys are refused: they would give the seed away.
        alice_id = board["top"][[row["name"] for row in board["top"]].index("alice")]["id"]
        status, out, err = await command(server, bob, f"keys {alice_id}")
        assert (status, out) == (2, "") and "secret until it ends" in err and len(err.splitlines()) == 1
        clock.now = NEXT_DAY
        status, out, _ = await command(server, bob, f"keys {alice_id}")
        assert status == 0
        assert f"seed={seed_of(DAY)} size=4x4 goal=2048" in out.splitlines()[0]
        replayed = subprocess.run(
            [sys.executable, "-m", "ansi2048", "--json"],
            input=out.encode(),
            capture_output=True,
            env=child_env(),
            timeout=60,
            check=False,
        )
        final = json.loads(replayed.stdout.decode().splitlines()[-1])
        assert final["score"] == expected(alice_keys)[0]
        assert tuple(cell for row in final["board"] for cell in row) == expected(alice_keys)[2]
        status, out, _ = await command(server, bob, f"leaderboard {DAY} --json")
        assert all(row["finished"] for row in json.loads(out)["top"])  # the day is over

    run(scenario())


def test_a_confirmed_hint_ends_the_game_unranked_before_the_ai_plays_the_days_deal(
    served: Tuple[ServerThread, Clock],
) -> None:
    server, _ = served
    carol = client_key()

    async def scenario() -> None:
        async with daily_terminal(server, carol, "carol") as (chan, terminal):
            chan.write(b"w")
            await asyncio.sleep(0.1)
            chan.write(b"u")
            await terminal.shows("no undo in the ranked game")  # not "--no-undo": an option nobody gave
            assert "--no-undo" not in terminal.text()
            chan.write(b"t")
            await terminal.shows("t again ends it, unranked")
            chan.write(b"t")
            await terminal.closed.wait()  # no hint on the day's deal: the ranked game ended
            said = "ranked game ended unranked, score 0\nto practise with the AI, connect again with the command daily"
            assert said in terminal.text()
        _, out, _ = await command(server, carol, "leaderboard --json")
        assert json.loads(out)["top"] == []
        # Its player's next daily game is practice: the AI there plays other tiles.
        async with daily_terminal(server, carol, "carol") as (chan, terminal):
            await terminal.shows("practice")
            chan.write(b"q")
            await terminal.closed.wait()

    run(scenario())


def test_r_twice_ends_the_ranked_game_for_good(served: Tuple[ServerThread, Clock]) -> None:
    server, _ = served
    dave = client_key()

    async def scenario() -> None:
        async with daily_terminal(server, dave, "dave") as (chan, terminal):
            chan.write(b"sa")
            await asyncio.sleep(0.1)
            chan.write(b"r")
            await terminal.shows("r again ends it for good")
            chan.write(b"r")
            await terminal.closed.wait()
            assert "your ranked game is over" in bytes(terminal.output).decode()
        _, out, _ = await command(server, dave, "leaderboard --json")
        (row,) = json.loads(out)["top"]
        assert row["finished"] and row["score"] == expected("sa")[0]
        # Again that day: practice, on the practice tiles, and the board does not change.
        screen = await play_daily(server, dave, b"wasdwasdwasd", user="dave")
        practiced = expected("wasdwasdwasd", practice_of(DAY))
        assert "practice (not ranked)" in screen and f"Score {practiced[0]}" in screen
        assert "r restart" in screen and "r new" not in screen  # in practice r starts the day's game again
        _, again, _ = await command(server, dave, "leaderboard --json")
        assert json.loads(again)["top"] == [row]

    run(scenario())


def test_guests_are_never_ranked(served: Tuple[ServerThread, Clock]) -> None:
    server, _ = served

    async def scenario() -> None:
        screen = await play_daily(server, None, b"wasd")
        assert "a guest is never ranked" in screen
        _, out, _ = await command(server, None, "leaderboard --json")
        assert json.loads(out) == {
            "version": json.loads(out)["version"],
            "day": DAY,
            "ranked": 0,
            "top": [],
            "you": None,
            "removed": [],
        }

    run(scenario())


def test_one_address_enters_at_most_its_cap_of_players(served: Tuple[ServerThread, Clock]) -> None:
    server, _ = served
    server.server.context = replace(server.server.context, daily_per_address=2)

    async def scenario() -> None:
        for user in ("p1", "p2"):
            assert "ranked game" in await play_daily(server, client_key(), b"w", user=user)
        assert "your address entered its players" in await play_daily(server, client_key(), b"w", user="p3")
        _, out, _ = await command(server, None, "leaderboard --json")
        assert json.loads(out)["ranked"] == 2

    run(scenario())


def test_verify_reports_a_recording_altered_by_hand(
    served: Tuple[ServerThread, Clock], tmp_path: Path, store_url: str
) -> None:
    server, _ = served
    erin = client_key()

    async def scenario() -> None:
        await play_daily(server, erin, b"wasdwasd", user="erin")
        player = await player_of(server, erin)
        entry = await on_server(server, server.store.daily_entry(DAY, player.id))  # type: ignore[attr-defined]
        # Altered by hand: one key changed in the stored recording.
        altered = entry.recording[:-1] + (b"s" if entry.recording.endswith(b"d") else b"d")
        await on_server(server, server.store.daily_result(replace(entry, recording=altered)))  # type: ignore[attr-defined]

    run(scenario())
    server.stop()
    lines: List[str] = []

    class Out:
        def write(self, text: str) -> int:
            lines.append(text)
            return len(text)

        def flush(self) -> None:
            pass

    assert asyncio.run(verify(store_url, str(tmp_path), DAY, Out(), Out())) == 1  # type: ignore[arg-type]
    report = "".join(lines)
    assert "game 1 of 2026-11-26 (erin): stored score" in report
    assert "1 ranked games replayed, 1 changed" in report


# -- the pure rules (serve/daily.py) ------------------------------------------------


def test_the_day_is_the_utc_date_and_ends_at_utc_midnight() -> None:
    assert day_of(NOON) == DAY
    assert day_of(NEXT_DAY - 1.5) == DAY and day_of(NEXT_DAY) == "2026-11-27"
    assert day_end(DAY) == NEXT_DAY - 1


def test_the_seed_is_an_hmac_of_the_day_under_the_secret() -> None:
    assert day_seed(SECRET, DAY) == seed_of(DAY)
    assert day_seed(SECRET, "2026-11-27") != day_seed(SECRET, DAY)
    assert day_seed(b"another server's secret........", DAY) != day_seed(SECRET, DAY)


def test_the_secret_is_made_once_in_the_database_and_shared_by_every_server_on_it(
    tmp_path: Path, store_url: str
) -> None:
    # Two servers with data directories of their own on one database deal
    # the same tiles: one leaderboard, with nothing copied between them.
    first_dir, second_dir = tmp_path / "a", tmp_path / "b"
    first_dir.mkdir()
    second_dir.mkdir()

    async def scenario() -> Tuple[Tuple[bytes, str], Tuple[bytes, str]]:
        async with opened(store_url, first_dir) as first, opened(store_url, second_dir) as second:
            return await daily_secret(first, str(first_dir)), await daily_secret(second, str(second_dir))

    (secret, said), (shared, said_too) = run(scenario())
    assert len(secret) == 32 and shared == secret and said == said_too == ""
    assert not (first_dir / SECRET_FILE).exists()  # no copy of it lying around


def test_a_secret_file_of_an_earlier_version_is_kept_and_one_that_differs_is_said_unused(
    tmp_path: Path, store_url: str
) -> None:
    earlier, other = b"the secret an earlier server made", b"another deployment's secret....."
    first_dir, second_dir = tmp_path / "a", tmp_path / "b"
    first_dir.mkdir()
    second_dir.mkdir()
    (first_dir / SECRET_FILE).write_bytes(earlier)
    (second_dir / SECRET_FILE).write_bytes(other)

    async def scenario() -> Tuple[Tuple[bytes, str], Tuple[bytes, str]]:
        async with opened(store_url, first_dir) as first, opened(store_url, second_dir) as second:
            return await daily_secret(first, str(first_dir)), await daily_secret(second, str(second_dir))

    (secret, said), (shared, said_too) = run(scenario())
    assert secret == shared == earlier  # the days already played keep their tiles
    assert said == ""
    assert said_too == f"{second_dir / SECRET_FILE} is not used: the database holds the daily secret its servers share"


def test_a_secret_file_too_short_is_refused(tmp_path: Path, store_url: str) -> None:
    (tmp_path / SECRET_FILE).write_bytes(b"short")

    async def scenario() -> None:
        async with opened(store_url, tmp_path) as store:
            with pytest.raises(ValueError, match="too short"):
                await daily_secret(store, str(tmp_path))

    run(scenario())


@pytest.mark.parametrize(
    ("gaps", "machine"),
    [
        ([100] * 150, True),  # a script's, or a held key's repeat
        ([0] * 150, True),  # pasted: every key in one read
        ([100] * 98, False),  # too few keys to tell
        ([90, 400, 150, 1200, 230, 80, 610] * 20, False),  # a person's
        ([400] * 150, False),  # slower than the rule's gap
    ],
)
def test_key_timing_no_person_types_is_marked(gaps: List[int], machine: bool) -> None:
    times = [sum(gaps[:index]) for index in range(len(gaps) + 1)]
    assert machine_timing(times) is machine


def entry(player: int, name: str, score: int, moves: int, status: str = "playing") -> DailyEntry:
    return DailyEntry(player, DAY, player, name, "10.0.0.1", NOON + player, status, b"", score=score, moves=moves)


def board_of(*entries: DailyEntry) -> DailyBoard:
    return DailyBoard(len(entries), tuple(Standing(rank, e, False) for rank, e in enumerate(entries, 1)), None)


def test_the_board_ranks_by_score_then_fewer_moves_and_leaves_out_the_unranked(store_url: str, tmp_path: Path) -> None:
    games = [("ann", 500, 60, "playing"), ("ben", 900, 80, "finished"), ("cid", 500, 50, "playing")]
    games += [("dee", 2000, 90, "assisted"), ("eve", 3000, 90, "mismatch")]

    async def scenario() -> Tuple[DailyBoard, DailyBoard]:
        async with opened(store_url, tmp_path) as store:
            ids = []
            for number, (name, score, moves, status) in enumerate(games):
                player = (await store.player(f"SHA256:{name}", name)).id
                ids.append(player)
                begun = await store.daily_start(DAY, player, f"10.0.0.{number}", NOON + number, b"h\n", 9)
                assert begun is not None
                await store.daily_result(replace(begun, status=status, score=score, moves=moves))
            return await store.daily_board(DAY, ids[0], 10), await store.daily_board(DAY, ids[0], 2)

    board, short = run(scenario())
    assert board.ranked == 3 and [(s.rank, s.entry.name) for s in board.top] == [(1, "ben"), (2, "cid"), (3, "ann")]
    # Beyond the top asked for, the player's own standing is still given, ranked.
    assert [s.entry.name for s in short.top] == ["ben", "cid"] and short.mine == board.top[2]
    assert all(s.entry.recording == b"" and s.entry.times == "" for s in board.top)  # read without them
    document = leaderboard_document(DAY, board, over=True)
    assert document["you"]["rank"] == 3 and all(row["finished"] for row in document["top"])
    assert leaderboard_lines(DAY, board, board.top[2].entry.player, over=False)[-1] == "Your rank: 3 of 3"
    assert leaderboard_lines(DAY, short, board.top[2].entry.player, over=False)[-3:-1] == [
        "  ...",
        "   3  ann                  500      0     60  0:00:00  playing      1",
    ]


HOSTILE = "\x1b]0;owned\x07\x1b[2J\x9b31m\u202egnp.exe\u2066x\x85y\x00z"


def test_no_text_a_player_controls_reaches_another_terminal_as_a_control_character() -> None:
    named = board_of(entry(2, "ok" + HOSTILE, 20, 2), entry(1, HOSTILE, 10, 1))
    lines = [*leaderboard_lines(DAY, named, None, over=False), board_note(named)]
    document = json.dumps(leaderboard_document(DAY, named, over=False), ensure_ascii=False)
    for text in (*lines, document):
        assert all(" " <= ch <= "~" or ch in "\n" for ch in text), repr(text)
    for words in (f"leaderboard {HOSTILE}", f"keys {HOSTILE}", f"daily {HOSTILE}", f"{HOSTILE} x"):
        with pytest.raises(CommandError) as error:
            parse_command(words)
        assert all(" " <= ch <= "~" for ch in str(error.value)), repr(str(error.value))


def test_the_daily_commands_parse() -> None:
    assert parse_command("daily") == Daily()
    assert parse_command("leaderboard") == Leaderboard(None, False)
    assert parse_command("leaderboard 2026-02-03 --json") == Leaderboard("2026-02-03", True)
    assert parse_command("keys 17") == KeysRequest(17)
    for bad in ("leaderboard 2026-02-30", "leaderboard today", "keys x", "keys", "daily now"):
        with pytest.raises(CommandError):
            parse_command(bad)


# -- the storage, on each database -------------------------------------------------


def test_the_store_keeps_one_ranked_game_per_player_and_day_within_the_address_cap(
    store_url: str, tmp_path: Path
) -> None:
    async def scenario() -> None:
        store = open_store(store_url, str(tmp_path))
        await store.open()
        try:
            ids = [(await store.player(f"SHA256:{n}", f"p{n}")).id for n in range(4)]
            first = await store.daily_start(DAY, ids[0], "10.0.0.1", NOON, b"h\n", 2)
            assert first is not None and (first.status, first.recording, first.name) == ("playing", b"h\n", "p0")
            again = await store.daily_start(DAY, ids[0], "10.0.0.1", NOON + 5, b"other\n", 2)
            assert again == first  # the first game of the day stays the ranked one
            assert await store.daily_start(DAY, ids[1], "10.0.0.1", NOON, b"h\n", 2) is not None
            assert await store.daily_start(DAY, ids[2], "10.0.0.1", NOON, b"h\n", 2) is None  # the cap
            assert await store.daily_start(DAY, ids[2], "10.0.0.2", NOON, b"h\n", 2) is not None
            assert await store.daily_start("2026-11-27", ids[3], "10.0.0.1", NOON, b"h\n", 2) is not None
            # A ranked game's keys and their times: in one transaction, both or neither.
            board = "4x4-2048-daily-2026-11-26"
            assert await store.claim(ids[0], board, "me", 30) is None
            await store.rewrite(ids[0], board, "me", b"h\n")
            await store.append(ids[0], board, "me", b"wa", (first.id, " 10 20"))
            await store.append(ids[0], board, "me", b"s", (first.id, " 35"))
            await store.claim(ids[0], board, "other", 30, take_over=True)
            with pytest.raises(ClaimLost):
                await store.append(ids[0], board, "me", b"d", (first.id, " 40"))
            assert await store.load(ids[0], board) == b"h\nwas"
            result = replace(first, status="finished", recording=b"h\nwasd", score=12, biggest=8, moves=4, cells="1 2")
            await store.daily_result(result)
            assert await store.daily_by_id(first.id) == replace(result, times=" 10 20 35", machine=False)
            assert await store.daily_entry(DAY, ids[0]) == replace(result, times=" 10 20 35", machine=False)
            assert [e.player for e in await store.daily_entries(DAY)] == [ids[0], ids[1], ids[2]]
            assert len(await store.daily_entries()) == 4
            assert await store.daily_by_id(999) is None
        finally:
            await store.close()

    asyncio.run(scenario())


def test_a_version_1_database_is_upgraded_with_its_games_kept(store_url: str, tmp_path: Path) -> None:
    async def scenario() -> None:
        old = open_store(store_url, str(tmp_path))
        old.migrations = old.migrations[:1]  # type: ignore[attr-defined]
        await old.open()
        player = (await old.player("SHA256:a", "ann")).id
        assert await old.claim(player, "4x4-2048", "s", 60) is None
        # As version 1 wrote a game (this version's rewrite also drops a snapshot: a later column).
        write = "UPDATE games SET recording = %s WHERE player = %s AND board = %s"
        await old.run_script([Statement(write, (b"kept\n", player, "4x4-2048"))])
        await old.close()
        new = open_store(store_url, str(tmp_path))
        await new.open()
        try:
            assert await new.load(player, "4x4-2048") == b"kept\n"
            assert await new.daily_start(DAY, player, "::1", NOON, b"h\n", 3) is not None
        finally:
            await new.close()

    asyncio.run(scenario())


def test_b_shows_the_board_in_the_game(served: Tuple[ServerThread, Clock]) -> None:
    server, _ = served
    fay, gus = client_key(), client_key()

    async def scenario() -> None:
        await play_daily(server, fay, b"wasd", user="fay")
        async with await connect(server.server.port, gus, user="gus") as conn:
            chan, terminal = await open_terminal(conn, "daily")
            await terminal.shows("b: the board")
            chan.write(b"b")
            await terminal.shows(f"the board: 1. fay {expected('wasd')[0]}")
            chan.write(b"q")
            await terminal.closed.wait()

    run(scenario())


def test_a_hostile_name_and_command_reach_no_terminal_nor_the_log_as_control_characters(
    served: Tuple[ServerThread, Clock],
) -> None:
    server, _ = served
    log = io.StringIO()
    server.server._log = ServerLog(log, lambda: NOON)
    watcher = client_key()

    # Both SSH clients refuse control characters in a user name (the server
    # reduces what any other client sends: test_serve_commands.py); a name
    # the database holds as it came is what is shown here, reduced again.
    async def scenario() -> List[Tuple[int, str, str]]:
        name = HOSTILE.replace("\x00", "")  # PostgreSQL text holds no NUL
        player = await on_server(server, server.store.player("SHA256:mallory", name))  # type: ignore[attr-defined]
        await on_server(server, server.store.daily_start(DAY, player.id, "::1", NOON, b"h\n", 3))  # type: ignore[attr-defined]
        outputs = []
        for words in ("leaderboard", "leaderboard --json", f"leaderboard {HOSTILE}", f"keys {HOSTILE}", HOSTILE):
            outputs.append(await command(server, watcher, words))
        return outputs

    outputs = run(scenario())
    assert "gnp.exex" in outputs[0][1], outputs[0]  # the reduced name, on the board
    for _, out, err in outputs:
        for text in (out, err):
            assert all(" " <= ch <= "~" or ch in "\r\n" for ch in text), repr(text)
    assert all(" " <= ch <= "~" or ch == "\n" for ch in log.getvalue()), repr(log.getvalue())
    assert [status for status, _, _ in outputs[2:]] == [2, 2, 2]


def test_only_a_replay_that_reproduces_the_game_seen_under_its_own_rules_may_be_ranked() -> None:
    later = "2026-11-27"
    header = f"# ansi2048 version={__version__} seed={seed_of(DAY)} size=4x4 goal=2048\n"
    score, moves, cells = expected("wasd")
    seen = Result(score, moves, " ".join(map(str, cells)))
    day = Setup(seed_of(DAY), 4, 4, 2048)
    replayed, why = verdict((header + "wasd").encode(), day, seen)
    assert why == "" and replayed is not None and (replayed.score, replayed.moves) == (score, moves)
    assert verdict((header + "wass").encode(), day, seen)[1].startswith("the replay gives")  # a key changed
    assert verdict((header + "wasd").encode(), day, replace(seen, score=score + 4))[1].startswith("the replay gives")
    assert verdict((header + "wasd").encode(), day, replace(seen, moves=moves + 1))[1] == (
        f"the replay gives {moves} moves, the game showed {moves + 1}"
    )
    other_board = " ".join(map(str, cells[::-1]))
    assert verdict((header + "wasd").encode(), day, replace(seen, cells=other_board))[1] == (
        "the replay gives another board"
    )
    # The same keys dealt from another seed (a header altered to another day's) are not the day's game.
    elsewhere = header.replace(f"seed={seed_of(DAY)}", f"seed={seed_of(later)}")
    score_there, moves_there, cells_there = expected("wasd", seed_of(later))
    there = Result(score_there, moves_there, " ".join(map(str, cells_there)))
    assert verdict((elsewhere + "wasd").encode(), day, there)[1] == (
        "recorded from another seed or board than the game's"
    )
    older = header.replace(f"version={__version__}", "version=0.0.1")
    assert verdict((older + "wasd").encode(), day, seen)[1] == "recorded under other rules"
    newer = header.replace(f"version={__version__}", "version=99.0.0")
    assert verdict((newer + "wasd").encode(), day, seen) == (None, "recorded under other rules")
    assert verdict(b"wasd", day, seen) == (None, "no valid header")


def test_at_midnight_the_ranked_game_ends_and_its_score_counts(served: Tuple[ServerThread, Clock]) -> None:
    server, clock = served
    hal = client_key()

    async def scenario() -> None:
        async with daily_terminal(server, hal, "hal") as (chan, terminal):
            chan.write(b"wa")
            await terminal.shows("Moves 2")
            clock.now = NEXT_DAY  # the key after midnight is not played
            chan.write(b"s")
            await terminal.closed.wait()
            assert f"your ranked game ends with score {expected('wa')[0]}" in bytes(terminal.output).decode()
        _, out, _ = await command(server, hal, f"leaderboard {DAY} --json")
        (row,) = json.loads(out)["top"]
        assert (row["finished"], row["score"], row["moves"]) == (True, expected("wa")[0], 2)

    run(scenario())
