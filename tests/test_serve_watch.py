"""Watching live and replaying (issue 28): the pure parts (the watcher's
view, the list and its keys, the replay's clock), then a server played by
asyncssh clients: a player watched by two watchers of other window sizes and
colour depths, a watcher that stops reading, privacy, the limits, and a
finished game replayed and cast. The real ``ssh`` client watches in
test_serve_ssh.py."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any, Iterator, List, Tuple

import pytest

from ansi2048.game.engine import Game
from ansi2048.game.session import Session
from ansi2048.render.frame import View, layout_for

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the server is for POSIX hosts (asyncssh, signals)")

asyncssh = pytest.importorskip("asyncssh", reason="the server's tests need ansi2048[serve]", exc_type=ImportError)

from ansi2048.serve.commands import parse_command  # noqa: E402
from ansi2048.serve.live import LiveGames, WatchFull, watched_view, watchers_note  # noqa: E402
from ansi2048.serve.replay_clock import ReplayClock  # noqa: E402
from ansi2048.serve.requests import CommandError, Replay, Watch  # noqa: E402
from ansi2048.serve.watch_list import Entry, ListKey, list_keys, list_lines  # noqa: E402

from .screen import emulate, read_board  # noqa: E402
from .serve_support import ServerThread, Terminal, session_class  # noqa: E402
from .test_serve import client_key, connect, open_terminal, run  # noqa: E402

# -- pure -----------------------------------------------------------------------


def test_the_watcher_sees_the_board_not_what_is_the_players_own() -> None:
    from ansi2048.game.keys import Direction

    view = View.of(Session(Game(4, 4, 2048, 5)), note="your game, resumed")
    view = View(**{**vars(view), "hint": Direction.LEFT, "autoplay": 5})
    seen = watched_view(view, "alice", 3)
    assert (seen.board, seen.score, seen.moves, seen.spawned) == (view.board, view.score, view.moves, view.spawned)
    assert seen.hint is None and seen.autoplay == 0
    assert seen.note == "3 watching"
    assert seen.ending == "watching alice · q leaves"


def test_a_watcher_in_a_window_too_small_reads_whose_game_and_how_to_leave_on_lines_of_their_own() -> None:
    from ansi2048.render.frame import frame_lines
    from ansi2048.render.style import ColorDepth

    seen = watched_view(View.of(Session(Game(4, 4, 2048, 5))), "guest-1", 1)
    # At 20x10 it read "watching guest-1 ·" over "q leaves".
    assert frame_lines(seen, ColorDepth.NONE, 20, 10)[:2] == ["watching guest-1", "q leaves"]
    assert frame_lines(seen, ColorDepth.NONE, 29, 10)[0] == "watching guest-1 · q leaves"  # whole where it fits


def test_the_player_is_told_how_many_watch() -> None:
    assert [watchers_note(n) for n in (0, 1, 2)] == ["", "1 watching", "2 watching"]


def test_the_lists_keys_arrows_and_jk_enter_q_the_rest_skipped() -> None:
    assert list_keys(b"\x1b[Aj\x1bOBkx\r\x1b[C\x03q") == [
        ListKey.UP,
        ListKey.DOWN,
        ListKey.DOWN,
        ListKey.UP,
        ListKey.CHOOSE,
        ListKey.LEAVE,
        ListKey.LEAVE,
    ]


def test_the_list_marks_the_chosen_game_and_fits_the_width() -> None:
    entries = [Entry(1, "alice", 120, 16, 4, 4, 0), Entry(2, "guest", 8, 4, 5, 5, 2)]
    lines = list_lines(entries, 1, 60)
    assert all(len(line) <= 60 for line in lines)
    alice = next(line for line in lines if "alice" in line)
    guest = next(line for line in lines if "guest" in line)
    assert alice.startswith("  ") and guest.startswith("> ")
    assert guest.split()[2:] == ["8", "4", "5x5", "2"]
    assert "No game" in "".join(list_lines([], 0, 80))


def test_the_lists_name_column_is_as_wide_as_its_names_so_a_narrow_window_shows_the_numbers() -> None:
    # It was 20 columns whatever the names: at 40 columns the board and the
    # watchers were cut off beside "alice" and "guest-1".
    entries = [Entry(1, "alice", 120, 16, 4, 4, 0), Entry(2, "guest-1", 8, 4, 5, 5, 2)]
    lines = list_lines(entries, 0, 40)
    assert [line.split() for line in lines[2:]] == [
        ["player", "score", "tile", "board"],
        [">", "alice", "120", "16", "4x4"],
        ["guest-1", "8", "4", "5x5"],
    ]
    for width in range(12, 120):  # columns kept whole: "watchi" was shown at 40
        header = list_lines(entries, 0, width)[2]
        assert set(header.split()) <= {"player", "score", "tile", "board", "watching"}, width
        rows = list_lines(entries, 0, width)[3:]
        assert all(len(row.split()) == len(header.split()) + (row[0] == ">") for row in rows)
    longest = Entry(3, "a" * 16, 0, 2, 4, 4, 0)  # names.MAX_NAME: the column never wider
    assert list_lines([longest], 0, 80)[3] == f"> {'a' * 16}        0      2    4x4         0"


def test_the_lists_words_are_never_cut_and_how_to_leave_always_shows() -> None:
    # Before, each line was cut at the window's edge: at 60 columns the title
    # lost "q leaves)", at 20 it read "Games being played n".
    entries = [Entry(1, "alice", 120, 16, 4, 4, 0)]
    title = "Games being played now (arrows or j/k choose, Enter watches, q leaves)"
    words = {word.strip("(),") for word in title.split(" ")}
    for width in range(8, 90):
        for shown in (list_lines(entries, 0, width)[0], list_lines([], 0, width)[0]):
            assert len(shown) <= width and "q leaves" in shown, (width, shown)
            assert {word.strip("(),") for word in shown.split()} <= words, (width, shown)
        empty = list_lines([], 0, width)[2]
        assert len(empty) <= width and not empty.rstrip().endswith(("Gam", "bein", "pla", "follo")), (width, empty)
    assert list_lines(entries, 0, 60)[0] == "Games being played now (j/k, Enter watches, q leaves)"
    assert list_lines(entries, 0, 20)[0] == "q leaves"


def test_watch_replay_and_cast_commands_parse() -> None:
    assert parse_command("watch") == Watch()
    assert parse_command("watch bob") == Watch("bob")
    assert parse_command("replay") == Replay()
    assert parse_command("cast") == Replay(cast=True)
    assert parse_command("replay 12") == Replay(12, daily=True)  # a leaderboard's id, as keys takes
    assert parse_command("replay g7") == Replay(7)  # one of the player's own, as stats lists
    assert parse_command("cast g7") == Replay(7, cast=True)
    assert parse_command("cast 0012") == Replay(12, daily=True, cast=True)
    assert parse_command("play --private").private is True  # type: ignore[union-attr]
    assert parse_command("play --public").private is False  # type: ignore[union-attr]
    assert parse_command("play").private is None  # type: ignore[union-attr]
    for bad in ("watch a b", "replay x", "replay g", "replay G7", "replay d7", "replay -1", "replay 1.5"):
        with pytest.raises(CommandError):
            parse_command(bad)
    for bad in ("cast 1 2", "replay \u00b2", "replay 1234567890123456789", "play --private --public"):
        with pytest.raises(CommandError):
            parse_command(bad)


def test_a_garbage_game_id_is_refused_in_one_printable_line() -> None:
    with pytest.raises(CommandError) as refused:
        parse_command("replay '\x1b[2J\x9b31m\u202egarbage\n'")
    said = str(refused.value)
    assert said.startswith("replay: not a game's id: ") and "leaderboard" in said and "g7" in said
    assert all(" " <= ch <= "~" for ch in said)


def test_the_replay_clock_runs_at_its_speed_and_stands_still_paused() -> None:
    real = [100.0]
    clock = ReplayClock(lambda: real[0])
    real[0] += 1.0
    assert clock.now() == pytest.approx(1.0)
    clock.faster()  # 2x
    real[0] += 1.0
    assert clock.now() == pytest.approx(3.0)
    clock.pause()
    real[0] += 5.0
    assert clock.now() == pytest.approx(3.0)
    clock.pause()
    clock.slower()
    clock.slower()  # 0.5x
    real[0] += 2.0
    assert clock.now() == pytest.approx(4.0)
    for _ in range(10):
        clock.slower()
    assert clock.speed == ReplayClock.SPEEDS[0]


def test_the_watchers_limits_per_game_and_in_all() -> None:
    async def scenario() -> None:
        live = LiveGames(per_game=2, total=3)
        first, second = live.start("alice", 4, 4), live.start("bob", 4, 4)
        told: List[int] = []
        first.on_watchers = told.append
        a, b = first.join(), first.join()
        with pytest.raises(WatchFull):
            first.join()
        second.join()
        with pytest.raises(WatchFull):
            second.join()  # the server's 3 in all
        first.leave(a)
        second.join()  # a place again
        assert told == [1, 2, 1]
        first.leave(b)
        assert [entry.watchers for entry in live.entries()] == [0, 2]
        first.end()
        assert [entry.name for entry in live.entries()] == ["bob"]

    asyncio.run(scenario())


def test_watchers_in_step_share_one_drawing_and_one_that_skipped_frames_joins_them() -> None:
    from ansi2048.game.keys import Direction
    from ansi2048.play.screen import Screen
    from ansi2048.render.style import ColorDepth
    from ansi2048.serve.link import Viewer

    async def scenario() -> None:
        live = LiveGames()
        game = live.start("alice", 4, 4)
        viewer = Viewer(
            link=None,  # type: ignore[arg-type]  (drawing only)
            incoming=asyncio.Queue(),
            window=lambda: (80, 24),
            new_screen=lambda write, size: Screen(write, size, ColorDepth.EXTENDED, {"TERM": "xterm"}),
            look="xterm-256",
        )
        first, second = game.fresh(viewer), game.fresh(viewer)
        assert first is second
        played_game = Game(4, 4, 2048, 3)
        frames = []
        for direction in (Direction.LEFT, Direction.UP, Direction.RIGHT):
            played_game.move(direction)
            frames.append((View.of(Session(played_game)), None, 0))
        game.publish(frames[0])
        a1, text_a1 = game.draw(first, (80, 24))
        b1, text_b1 = game.draw(second, (80, 24))
        assert a1 is b1 and text_a1 == text_b1 and "Score" in text_a1
        game.publish(frames[1])
        a2, text_a2 = game.draw(a1, (80, 24))  # the second watcher skips this frame
        game.publish(frames[2])
        a3, text_a3 = game.draw(a2, (80, 24))
        b3, text_b3 = game.draw(b1, (80, 24))
        assert b3 is a3  # in step again: the next frame is drawn once for both
        shown_a = emulate((text_a1 + text_a2 + text_a3).encode(), 80, 24).display
        shown_b = emulate((text_b1 + text_b3).encode(), 80, 24).display
        assert shown_a == shown_b
        layout = layout_for(frames[2][0], 80, 24)
        assert layout is not None
        assert read_board(shown_b, layout, 4, 4) == [list(row) for row in played_game.board]

    asyncio.run(scenario())


def test_the_watchers_limits_are_serve_options() -> None:
    from ansi2048.serve.cli import parse_serve_options

    options = parse_serve_options(
        ["--max-watchers-per-game", "3", "--max-watchers", "0", "--watcher-stalled-seconds", "2.5"],
        {"HOME": "/nowhere"},
    )
    assert (options.watchers_per_game, options.watchers, options.watcher_stall) == (3, 0, 2.5)
    defaults = parse_serve_options([], {"HOME": "/nowhere"})
    assert (defaults.watchers_per_game, defaults.watchers) == (20, 200)
    assert defaults.watcher_stall == 10
    # One source of each default (serve/settings.py): the registry's own are the options'.
    live = LiveGames()
    assert (live.per_game, live.total) == (defaults.watchers_per_game, defaults.watchers)
    for bad in (
        ["--max-watchers", "-1"],
        ["--max-watchers-per-game", "many"],
        ["--watcher-stalled-seconds", "0"],
        ["--watcher-stalled-seconds", "nan"],
        ["--watcher-stalled-seconds", "-3"],
    ):
        with pytest.raises(SystemExit) as raised:
            parse_serve_options(bad, {"HOME": "/nowhere"})
        assert raised.value.code == 2
    with pytest.raises(WatchFull, match="cannot be watched"):
        asyncio.run(_join(LiveGames(per_game=0)))


async def _join(live: LiveGames) -> None:
    live.start("alice", 4, 4).join()


# -- over SSH -------------------------------------------------------------------


@pytest.fixture
def served(tmp_path: Path, store_url: str) -> Iterator[ServerThread]:
    with ServerThread(tmp_path, store_url, seeds=[7, 8, 9, 10]) as server:
        yield server


def board_on(terminal: Terminal, game: Game) -> List[List[int]]:
    """The board on ``terminal``'s screen, read at the places its size's layout puts the tiles."""
    layout = layout_for(View.of(Session(game)), terminal.width, terminal.height)
    assert layout is not None
    return read_board(terminal.display(), layout, game.rows, game.cols)


def played(seed: int, keys: str, rows: int = 4, cols: int = 4, goal: int = 2048) -> Game:
    """The game of ``seed`` after ``keys``, by the engine alone."""
    from ansi2048.game.keys import Action

    game = Game(rows, cols, goal, seed)
    for key in keys:
        direction = Action(key).direction
        assert direction is not None
        game.move(direction)
    return game


def moves_shown(terminal: Terminal) -> int:
    found = re.search(r"Moves (\d+)", terminal.text())
    return int(found.group(1)) if found else -1


def test_two_watchers_see_the_players_board_each_drawn_for_its_own_window_and_colours(served: ServerThread) -> None:
    async def scenario() -> None:
        key = client_key()
        conn = await connect(served.port, key, user="alice")
        chan, player = await open_terminal(conn, "play --no-animation", size=(80, 24))
        await player.shows("Score")
        wide_conn = await connect(served.port, client_key(), user="bob")
        _, wide = await open_terminal(
            wide_conn, "watch alice", size=(120, 40), term_type="xterm-256color", env={"COLORTERM": "truecolor"}
        )
        small_conn = await connect(served.port, None, user="carol")
        small_chan, small = await open_terminal(small_conn, "watch alice", size=(60, 22), term_type="xterm")
        await wide.shows("watching alice")
        await small.shows("watching alice")
        await player.shows("2 watching")
        typed = ""
        for key_typed in "asdwassd":
            chan.write(key_typed.encode())
            typed += key_typed
            game = played(7, typed)
            for terminal in (player, wide, small):
                await terminal.wait_for(lambda t, moves=game.moves: moves_shown(t) == moves)
            expected = [list(row) for row in game.board]
            assert board_on(player, game) == expected
            assert board_on(wide, game) == expected
            assert board_on(small, game) == expected
        # Each drawn in its own colours: 24-bit, and the 16 of plain xterm.
        assert b"38;2;" in wide.output or b"48;2;" in wide.output
        assert b"38;2;" not in small.output and b"48;2;" not in small.output
        assert b"38;5;" not in small.output and b"48;5;" not in small.output
        # What is the player's own is theirs: the help is not shown to watchers.
        chan.write(b"?")
        await player.wait_for(lambda t: "Score" not in t.text())  # the help in the board's place
        await asyncio.sleep(0.3)
        assert board_on(wide, game) == expected
        chan.write(b"?")
        await player.shows("Score")
        # The watcher's window changes: too small, then drawn again at its new size.
        before = len(small.output)
        small_chan.change_terminal_size(30, 8)
        await small.wait_for(lambda t: b"too small" in t.output[before:])
        small_chan.change_terminal_size(100, 30)
        small.width, small.height = 100, 30
        # (the "too small" frame says whose game it is too: wait for the board)
        await small.wait_for(lambda t: "watching alice" in t.text() and "Score" in t.text())
        assert board_on(small, game) == expected
        chan.write(b"q")
        await wide.shows("the game you watched has ended")
        for c in (conn, wide_conn, small_conn):
            c.close()

    run(scenario())


def test_a_watcher_that_stops_reading_is_dropped_and_the_player_plays_on(served: ServerThread) -> None:
    served.server.context = replace(served.server.context, watch_stall=0.5)

    async def scenario() -> None:
        conn = await connect(served.port, client_key(), user="alice")
        chan, player = await open_terminal(conn, "play --no-animation")
        await player.shows("Score")
        reading_conn = await connect(served.port, None, user="bob")
        _, reading = await open_terminal(reading_conn, "watch alice")
        stuck_conn = await connect(served.port, None, user="carol")
        stuck_terminal = Terminal()
        # A small window, and the client stops reading: the server's channel fills.
        stuck_chan, _ = await stuck_conn.create_session(
            session_class_paused(stuck_terminal), "watch alice", term_type="xterm", term_size=(80, 24), window=512
        )
        await player.shows("2 watching")
        typed = ""
        for key_typed in "asdw" * 6:
            chan.write(key_typed.encode())
            typed += key_typed
            game = played(7, typed)
            await player.wait_for(lambda t, moves=game.moves: moves_shown(t) == moves)
            await asyncio.sleep(0.05)
        # Dropped: the player is told one watcher is gone; the client, reading
        # again, finds its channel closed.
        await player.shows("1 watching")
        stuck_chan.resume_reading()
        await asyncio.wait_for(stuck_terminal.closed.wait(), 10)
        game = played(7, typed)
        await reading.wait_for(lambda t: moves_shown(t) == game.moves)
        assert board_on(reading, game) == [list(row) for row in game.board]
        conn.close()
        reading_conn.close()
        stuck_conn.close()

    run(scenario())


def session_class_paused(terminal: Terminal) -> Any:
    """A client session that stops reading as soon as it starts."""
    base = session_class(terminal)

    class _Paused(base):  # type: ignore[misc,valid-type]
        def connection_made(self, chan: Any) -> None:
            chan.pause_reading()

    return _Paused


def test_watch_at_the_watchers_limit_is_refused_with_status_1_as_replay_is(served: ServerThread) -> None:
    served.server.context = replace(
        served.server.context, live=LiveGames(per_game=0)
    )  # --max-watchers-per-game 0: no game can be watched

    async def scenario() -> None:
        conn = await connect(served.port, client_key(), user="alice")
        chan, player = await open_terminal(conn, "play")
        await player.shows("Score")
        viewer = await connect(served.port, None, user="bob")
        _, direct = await open_terminal(viewer, "watch alice")
        await direct.closed.wait()
        assert bytes(direct.stderr) == b"ansi2048: games cannot be watched on this server\r\n"
        assert direct.exit_status == 1  # as replay's "too many viewers" (it was 0, the line on stdout)
        chan.write(b"q")
        await player.closed.wait()

    run(scenario())


def test_a_private_game_is_not_listed_nor_watched_and_is_remembered(served: ServerThread) -> None:
    async def scenario() -> None:
        key = client_key()
        conn = await connect(served.port, key, user="alice")
        chan, player = await open_terminal(conn, "play --private")
        await player.shows("Score")
        await player.shows("private: nobody may watch your games")  # said: it took effect
        viewer = await connect(served.port, None, user="bob")
        _, listed = await open_terminal(viewer, "watch", size=(80, 24))
        await listed.shows("No game is being played now")
        _, direct = await open_terminal(viewer, "watch alice")
        await direct.closed.wait()
        # Refused as replay and keys refuse a game they cannot give: one line
        # on standard error, status 2 (before: standard output, status 0).
        assert bytes(direct.stderr) == b"ansi2048: watch: no game of 'alice' is being played now (or it is private)\r\n"
        assert direct.exit_status == 2 and "alice" not in direct.text()
        chan.write(b"q")
        await player.closed.wait()
        # Remembered: played again without --private, still private.
        chan, player = await open_terminal(conn, None)
        await player.shows("Score")
        _, direct = await open_terminal(viewer, "watch alice")
        await direct.closed.wait()
        assert b"no game of 'alice'" in bytes(direct.stderr) and direct.exit_status == 2
        chan.write(b"q")
        await player.closed.wait()
        # --public: watchable again; a guest as "guest".
        chan, player = await open_terminal(conn, "play --public")
        await player.shows("Score")
        await player.shows("public: your games may be watched")
        guest_conn = await connect(served.port, None, user="dave")
        _, guest = await open_terminal(guest_conn, None)
        await guest.shows("Score")
        await listed.wait_for(lambda t: "alice" in t.text() and "guest" in t.text())
        for c in (conn, viewer, guest_conn):
            c.close()

    run(scenario())


def test_two_guests_are_listed_apart_and_watch_guest_n_watches_that_one(served: ServerThread) -> None:
    async def scenario() -> None:
        first_conn = await connect(served.port, None, user="dave")
        first_chan, first = await open_terminal(first_conn, None)
        await first.shows("Score")
        second_conn = await connect(served.port, None, user="erin")
        second_chan, second = await open_terminal(second_conn, "play --size 5")
        await second.shows("Score")
        viewer = await connect(served.port, None, user="bob")
        _, listed = await open_terminal(viewer, "watch", size=(80, 24))
        await listed.wait_for(lambda t: "guest-1" in t.text() and "guest-2" in t.text())
        rows = {line[2:].split()[0]: line[2:].split()[3] for line in listed.display() if line[2:].startswith("guest-")}
        assert rows == {"guest-1": "4x4", "guest-2": "5x5"}  # each guest's own game under its own name
        _, bare = await open_terminal(viewer, "watch guest")  # their one name once: told how they are named now
        await bare.closed.wait()
        said = b"ansi2048: watch: no game of 'guest': guests are guest-1, guest-2, ... (watch lists them)\r\n"
        assert bytes(bare.stderr) == said and bare.exit_status == 2
        _, direct = await open_terminal(viewer, "watch guest-2", size=(80, 24))
        await direct.shows("watching guest-2")
        assert moves_shown(direct) == 0
        second_chan.write(b"a")  # guest-2's moves reach guest-2's watcher
        await direct.wait_for(lambda t: moves_shown(t) == moves_shown(second) == 1)
        first_chan.write(b"q")  # guest-1 leaves: guest-2 keeps its name
        await first.closed.wait()
        await listed.wait_for(lambda t: "guest-1" not in t.text() and "guest-2" in t.text())
        assert "watching guest-2" in direct.text()
        for conn in (first_conn, second_conn, viewer):
            conn.close()

    run(scenario())


def test_the_list_chooses_with_arrows_and_enter_and_q_comes_back(served: ServerThread) -> None:
    async def scenario() -> None:
        conn_a = await connect(served.port, client_key(), user="alice")
        _, alice = await open_terminal(conn_a, None)
        await alice.shows("Score")
        conn_b = await connect(served.port, client_key(), user="bob")
        _, bob = await open_terminal(conn_b, None)
        await bob.shows("Score")
        viewer = await connect(served.port, None, user="carol")
        chan, listed = await open_terminal(viewer, "watch", size=(80, 24))
        await listed.wait_for(lambda t: "alice" in t.text() and "bob" in t.text())
        assert re.search(r"^> alice", listed.text(), re.M)
        chan.write(b"\x1b[B")
        await listed.wait_for(lambda t: re.search(r"^> bob", t.text(), re.M) is not None)
        chan.write(b"\r")
        await listed.shows("watching bob")
        await bob.shows("1 watching")
        chan.write(b"q")
        await listed.shows("Games being played now")
        await bob.wait_for(lambda t: "1 watching" not in t.text())
        chan.write(b"q")
        await listed.closed.wait()
        for c in (conn_a, conn_b, viewer):
            c.close()

    run(scenario())


def test_the_list_and_the_game_chosen_take_each_others_place(served: ServerThread) -> None:
    # A window tall enough for the list and a board one under the other: the
    # board chosen must replace the list (before, it was drawn below it, and
    # on a window the board fills, the list's last line stayed above the
    # board), and the list must replace the board when q comes back to it.
    async def scenario() -> None:
        conn_a = await connect(served.port, client_key(), user="alice")
        _, alice = await open_terminal(conn_a, None)
        await alice.shows("Score")
        viewer = await connect(served.port, None, user="carol")
        chan, seen = await open_terminal(viewer, "watch", size=(80, 60))
        await seen.shows("> alice")
        chan.write(b"\r")
        await seen.shows("watching alice")
        await asyncio.sleep(0.3)  # the list's redraws had time to come, if any did
        text = seen.text()
        assert "Games being played now" not in text and "alice      " not in text
        assert text.count("Score") == 1
        assert text.startswith("2048")  # the board from the list's first line on
        chan.write(b"q")
        await seen.shows("Games being played now")
        await asyncio.sleep(0.3)
        text = seen.text()
        assert "Score" not in text and "watching alice" not in text
        assert text.startswith("Games being played now")
        chan.write(b"q")
        await seen.closed.wait()
        for c in (conn_a, viewer):
            c.close()

    run(scenario())


async def finish_a_game(chan: Any, player: Terminal) -> str:
    """Play w a s d in turn until the game is over; the keys that moved."""
    moved = ""
    for turn in range(400):
        if "game over" in player.text().lower():
            break
        key = "wasd"[turn % 4]
        before, moves = len(player.output), moves_shown(player)
        chan.write(key.encode())
        await player.wait_for(lambda t, before=before: len(t.output) != before, 5)
        if moves_shown(player) > moves:
            moved += key
    assert "game over" in player.text().lower()
    return moved


def test_replay_and_cast_reproduce_a_finished_games_final_board(served: ServerThread) -> None:
    async def scenario() -> Tuple[str, str, Terminal, bytes]:
        conn = await connect(served.port, client_key(), user="alice")
        chan, player = await open_terminal(conn, "play --size 2 --goal 32 --no-animation")
        await player.shows("Score")
        typed = await finish_a_game(chan, player)
        final = player.text()
        chan.write(b"q")
        await player.closed.wait()
        _, replayed = await open_terminal(conn, "replay")
        await replayed.shows("end of replay", 60)
        cast = Terminal()
        await conn.create_session(session_class(cast), "cast")
        await cast.closed.wait()
        conn.close()
        return typed, final, replayed, bytes(cast.output)

    typed, final, replayed, cast = run(scenario())
    game = played(7, typed, 2, 2, 32)  # the game the player's keys played, by the engine alone
    assert game.over
    expected = [list(row) for row in game.board]
    assert board_on(replayed, game) == expected
    numbers = re.compile(r"Score (\d+).*Moves (\d+)")
    assert numbers.findall(replayed.text()) == numbers.findall(final) == [(str(game.score), str(game.moves))]
    board_lines = [line for line in final.splitlines() if "│" in line or "┌" in line]
    assert [line for line in replayed.text().splitlines() if "│" in line or "┌" in line] == board_lines
    lines = cast.decode().splitlines()
    head = json.loads(lines[0])
    assert head["version"] == 2
    events = [event[2] for event in map(json.loads, lines[1:]) if event[1] == "o"]
    # Asked for without a terminal (as `ssh HOST cast > game.cast` is), the
    # cast is drawn for a usual one, not for "no terminal" (TERM=dumb drew
    # the frames without colour, each under the last): 256 colours, each
    # frame in the last one's place.
    assert head["env"]["TERM"] == "xterm-256color"
    assert "\x1b[0;38;5;" in events[0]
    output = "".join(events)
    tall = emulate(output.encode(), head["width"], 500)  # room for every frame, were they one under another
    assert "\n".join(tall.display).count("Score") == 1
    screen = emulate(output.encode(), head["width"], head["height"])
    layout = layout_for(View.of(Session(game)), head["width"], head["height"])
    assert layout is not None
    assert read_board(screen.display, layout, 2, 2) == expected
    assert numbers.findall("\n".join(screen.display)) == [(str(game.score), str(game.moves))]


def test_replay_of_no_game_says_so(served: ServerThread) -> None:
    async def scenario() -> None:
        conn = await connect(served.port, client_key(), user="alice")
        _, terminal = await open_terminal(conn, "replay")
        await terminal.closed.wait()
        assert bytes(terminal.stderr) == b"ansi2048: replay: you have no finished game yet\r\n"
        assert terminal.exit_status == 2
        conn.close()
        guest = await connect(served.port, None, user="guest")
        result = await guest.run("cast g1")
        assert (result.exit_status, bytes(result.stdout)) == (2, b"")
        assert bytes(result.stderr) == b"ansi2048: cast: a guest has no games kept (connect with an SSH key)\n"
        guest.close()

    run(scenario())


def test_stats_lists_the_last_games_ids_and_replay_plays_one_by_its_id_for_its_player_only(
    served: ServerThread,
) -> None:
    alice, bob = client_key(), client_key()

    async def scenario() -> Tuple[List[str], List[str], Terminal, bytes, Any, Any, Any]:
        conn = await connect(served.port, alice, user="alice")
        typed = []
        for _ in range(2):  # two games over: the first one is replayed by its id
            chan, player = await open_terminal(conn, "play --size 2 --goal 32 --no-animation --new")
            await player.shows("Score")
            typed.append(await finish_a_game(chan, player))
            chan.write(b"q")
            await player.closed.wait()
        listed = await conn.run("stats")
        document = json.loads(bytes((await conn.run("stats --json")).stdout).decode())
        ids = [game["id"] for game in document["last_games"]]  # the newest first
        assert "seed" not in document["last_games"][0]
        _, replayed = await open_terminal(conn, f"replay {ids[1]}")
        await replayed.shows("end of replay", 60)
        conn.close()
        other = await connect(served.port, bob, user="bob")
        theirs = await other.run(f"cast {ids[1]}")
        unknown = await other.run("cast g999999")
        other.close()
        return typed, ids, replayed, bytes(listed.stdout), document, theirs, unknown

    typed, ids, replayed, listed, document, theirs, unknown = run(scenario())
    assert len(ids) == 2 and all(re.fullmatch(r"g[0-9]+", game) for game in ids)
    first = played(7, typed[0], 2, 2, 32)
    assert [(game["score"], game["moves"]) for game in document["last_games"]][1] == (first.score, first.moves)
    lines = listed.decode().splitlines()
    assert "Your last games (replay ID, cast ID):" in lines
    shown = lines[lines.index("Your last games (replay ID, cast ID):") + 1 :]
    assert [line.split()[0] for line in shown] == ids
    assert f"score {first.score:>6}" in shown[1]
    assert board_on(replayed, first) == [list(row) for row in first.board]
    assert re.findall(r"Score (\d+).*Moves (\d+)", replayed.text()) == [(str(first.score), str(first.moves))]
    # Bob asks for Alice's game: not found, as an id no game has; nothing shown.
    for refused, game in ((theirs, ids[1]), (unknown, "g999999")):
        assert (refused.exit_status, bytes(refused.stdout)) == (2, b"")
        assert bytes(refused.stderr).decode() == f"ansi2048: cast: you have no game {game} (stats lists yours)\n"


# -- through the real ssh client ------------------------------------------------


def test_through_ssh_two_watchers_see_the_players_board_drawn_for_their_own_windows(
    served: ServerThread, tmp_path: Path
) -> None:
    """The player, and two watchers of other window sizes and colour depths
    (256 colours at 110x36; plain xterm's 16 at 60x22), each the real ssh on a
    pty of its own, read through pyte."""
    import shutil

    if shutil.which("ssh") is None:
        pytest.skip("needs the OpenSSH client (ssh)")
    from .serve_support import make_key
    from .test_serve_ssh import SshPlayer

    player = SshPlayer(served.port, make_key(tmp_path / "alice"), "play", "--no-animation", user="alice")
    player.shows("Score")
    wide = SshPlayer(served.port, make_key(tmp_path / "bob"), "watch", "alice", user="bob", size=(110, 36))
    small = SshPlayer(served.port, None, "watch", "alice", user="carol", size=(60, 22), term="xterm")
    wide.shows("watching alice")
    small.shows("watching alice")
    player.shows("2 watching")
    typed = ""
    for key in "adsawd":
        player.type(key.encode())
        typed += key
        game = played(7, typed)  # the fixture's first seed
        expected = [list(row) for row in game.board]
        for terminal in (player, wide, small):
            terminal.shows(f"Moves {game.moves} ")
            terminal.settle(0.2)
            layout = layout_for(View.of(Session(game)), terminal.width, terminal.height)
            assert layout is not None
            assert read_board(terminal.screen.display, layout, 4, 4) == expected, terminal.text()
    assert b"\x1b[38;5;" in wide.output or b"\x1b[48;5;" in wide.output or b";5;" in wide.output
    assert b";5;" not in small.output and b";2;" not in small.output
    small.type(b"q")  # a watcher leaves: the player is told, and plays on
    assert small.ended() == 0
    player.shows("1 watching")
    player.type(b"q")
    wide.shows("the game you watched has ended")
    assert player.ended() == 0 and wide.ended() == 0


def test_two_players_of_one_user_name_are_watched_by_their_store_names(served: ServerThread) -> None:
    async def scenario() -> None:
        first = await connect(served.port, client_key(), user="alice")
        _, first_player = await open_terminal(first, "play --no-animation")
        await first_player.shows("Score")
        second = await connect(served.port, client_key(), user="alice")
        second_chan, second_player = await open_terminal(second, "play --no-animation --size 5")
        await second_player.shows("Score")
        viewer = await connect(served.port, None, user="bob")
        _, listed = await open_terminal(viewer, "watch")
        await listed.wait_for(lambda t: "5x5" in t.text())
        names = re.findall(r"^[> ] (\S+) .*\b(\dx\d)\b", listed.text(), re.M)
        assert len(names) == 2 and names[0][0] == "alice" and names[1][0] != "alice", listed.text()
        _, watching = await open_terminal(viewer, f"watch {names[1][0]}")
        await watching.shows(f"watching {names[1][0]}")
        second_chan.write(b"a")
        await second_player.shows("1 watching")
        for conn in (first, second, viewer):
            conn.close()

    run(scenario())


def test_guests_are_numbered_as_a_races_are_each_keeping_its_number_while_it_plays() -> None:
    # They were all "guest": a watcher could not tell them apart, and
    # "watch guest" found only the newest.
    live = LiveGames()
    first, alice, second = live.start(None, 4, 4), live.start("alice", 4, 4), live.start(None, 5, 5)
    assert (first.name, alice.name, second.name) == ("guest-1", "alice", "guest-2")
    first.end()
    third = live.start(None, 4, 4)  # the lowest number free, as a race's lobby gives it
    assert (second.name, third.name) == ("guest-2", "guest-1")  # guest-2 kept its number
    assert [entry.name for entry in live.entries()] == ["alice", "guest-2", "guest-1"]
    assert live.find("guest-2") is second and live.find("GUEST-1") is third and live.find("guest") is None


def test_no_key_takes_a_guests_numbered_name() -> None:
    # A key called guest-2 would be listed beside the guest who is guest-2
    # (and watch guest-2 would find either): it is given the nameless name, as "guest" is.
    from ansi2048.serve.names import NAMELESS, key_name

    assert [key_name(asked) for asked in ("guest-2", "GUEST-12", "Guest-1")] == [NAMELESS] * 3
    assert [key_name(asked) for asked in ("guest-", "guest-x", "guest2", "guests-1")] == [
        "guest-",
        "guest-x",
        "guest2",
        "guests-1",
    ]


def test_watch_finds_a_name_without_regard_to_case_as_names_are_unique_so() -> None:
    # A second player can never be "Dana" beside "dana" (the store folds
    # names): "watch Dana" is dana's game, whoever typed the name.
    live = LiveGames()
    dana = live.start("dana", 4, 4)
    other = live.start("Dana2", 4, 4)
    assert live.find("Dana") is dana and live.find("DANA") is dana
    assert live.find("dana2") is other
    assert live.find("dan") is None
