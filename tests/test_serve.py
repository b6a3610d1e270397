"""``ansi2048 serve`` in-process: a server on a loopback port played by
asyncssh clients, for the finer cases (keys split across packets, window
changes, refused requests, concurrent sessions, taking a game over, the
server stopping). The real OpenSSH client plays it in test_serve_ssh.py."""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the server is for POSIX hosts (asyncssh, signals)")

asyncssh = pytest.importorskip("asyncssh", reason="the server's tests need ansi2048[serve]", exc_type=ImportError)

from ansi2048.game.engine import Game  # noqa: E402
from ansi2048.game.keys import Action  # noqa: E402
from ansi2048.records.recording import ASSISTED, encode_item, split_header  # noqa: E402
from ansi2048.serve.game import SAID_STOPPING  # noqa: E402
from ansi2048.serve.host_key import HOST_KEY_FILE  # noqa: E402
from ansi2048.serve.play_commands import GUEST_NOTE, take_over_prompt  # noqa: E402
from ansi2048.serve.saving import SAID_TAKEN_OVER  # noqa: E402

from .serve_support import MemoryStore, ServeProcess, ServerThread, Terminal, session_class  # noqa: E402

BOARD = "4x4-2048"


@pytest.fixture
def served(tmp_path: Path, store_url: str) -> Iterator[ServerThread]:
    """A server keeping its games in a real database (each of tests/databases.py's)."""
    with ServerThread(tmp_path, store_url, seeds=[7, 8, 9, 10]) as server:
        yield server


@pytest.fixture
def served_in_memory(tmp_path: Path) -> Iterator[ServerThread]:
    """A server whose store the test can look through (MemoryStore), for
    what the storage interface cannot say (that nothing at all was stored)."""
    with ServerThread(tmp_path, MemoryStore(), seeds=[7, 8, 9, 10]) as server:
        yield server


def client_key() -> Any:
    return asyncssh.generate_private_key("ssh-ed25519")


class _Guest(asyncssh.SSHClient):  # type: ignore[misc]
    """A client without a key: keyboard-interactive, answering no prompt."""

    def kbdint_auth_requested(self) -> str:
        return ""

    def kbdint_challenge_received(self, name: str, instructions: str, lang: str, prompts: Any) -> List[str]:
        return ["" for _ in prompts]


async def connect(port: int, key: Any = None, user: str = "alice", **options: Any) -> Any:
    options.setdefault("agent_path", None)
    if key is None:
        options.update(client_factory=_Guest, kbdint_auth=True)
    return await asyncssh.connect(
        "127.0.0.1",
        port,
        username=user,
        client_keys=[key] if key is not None else [],
        known_hosts=None,
        encoding=None,
        **options,
    )


async def open_terminal(
    conn: Any, command: Optional[str] = None, size: Tuple[int, int] = (80, 24), pty: bool = True, **options: Any
) -> Tuple[Any, Terminal]:
    terminal = Terminal(*size)
    if pty:
        options.setdefault("term_type", "xterm-256color")
        options["term_size"] = size
    chan, _ = await conn.create_session(session_class(terminal), command, **options)
    return chan, terminal


def saved_keys(store: MemoryStore, player: int = 1) -> bytes:
    return split_header(store.games[(player, BOARD)])[1]


async def on_server(served: ServerThread, coroutine: Any) -> Any:
    """Await ``coroutine`` on the server's loop (its store lives there)."""
    return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coroutine, served.loop))


async def player_of(served: ServerThread, key: Any) -> Any:
    """The store's player of ``key`` (the fingerprint the server saw)."""
    return await on_server(served, served.store.player(key.get_fingerprint(), "unused"))  # type: ignore[attr-defined]


async def kept_keys(served: ServerThread, key: Any) -> bytes:
    """The keys of ``key``'s game on the 4x4 board, as the store holds them."""
    player = await player_of(served, key)
    recording = await on_server(served, served.store.load(player.id, BOARD))  # type: ignore[attr-defined]
    assert recording is not None
    return bytes(split_header(recording)[1])


async def claimed(served: ServerThread, key: Any) -> bool:
    """Another session holds ``key``'s game (probing takes it when free)."""
    player = await player_of(served, key)
    held = await on_server(served, served.store.claim(player.id, BOARD, "probe", 0.001))  # type: ignore[attr-defined]
    return held is not None


def run(scenario: Any) -> Any:
    return asyncio.run(asyncio.wait_for(scenario, 60))


# -- playing --------------------------------------------------------------------


def test_a_player_plays_their_game_each_key_kept_before_its_frame(served: ServerThread) -> None:
    typed = b"asdwaassddww"
    kept_when_shown: List[bytes] = []
    key = client_key()

    async def scenario() -> None:
        async with await connect(served.port, key) as conn:
            chan, terminal = await open_terminal(conn, "play --no-animation")
            await terminal.shows("Score")
            for typed_key in typed:
                shown = len(terminal.output)
                chan.write(bytes([typed_key]))
                await terminal.wait_for(lambda t, shown=shown: len(t.output) > shown)  # type: ignore[misc]
                kept_when_shown.append(await kept_keys(served, key))
            chan.write(b"q")
            await terminal.closed.wait()
            assert "game kept for next time: connecting again resumes it" in terminal.text()
            assert terminal.exit_status == 0
        assert await kept_keys(served, key) == kept_when_shown[-1]
        assert (await player_of(served, key)).name == "alice"
        assert not await claimed(served, key), "the claim is let go when the player leaves"

    run(scenario())
    # The game the first seed deals, played by the rules: which keys move.
    game, moved = Game(4, 4, 2048, 7), b""
    for i, key in enumerate(typed):
        if game.move(Action(chr(key)).direction):  # type: ignore[arg-type]
            moved += bytes([key])
        # The frame after each key came once the store held every move so far.
        assert kept_when_shown[i] == moved


def test_the_same_key_resumes_its_game_exactly_and_another_key_has_its_own(served: ServerThread) -> None:
    key, other = client_key(), client_key()

    async def play(key: Any, typed: bytes) -> str:
        async with await connect(served.port, key) as conn:
            chan, terminal = await open_terminal(conn, "play --no-animation")
            await terminal.shows("Score")
            chan.write(typed)
            await terminal.shows("game kept for next time")
            return terminal.text()

    async def resumed(key: Any) -> str:
        return await _first_screen_then_quit(served.port, key, "resumed your game")

    async def scenario() -> None:
        first = await play(key, b"asdwq")
        second = await play(other, b"ddq")
        again = await resumed(key)
        # The board, up to the note line: the quitting frame's note line is
        # empty (its farewell is on the key line below it), the resumed
        # frame's says "resumed", so the line breaks before either differ.
        board = lambda text: text.split("resumed")[0].split("game kept")[0].rstrip("\n")  # noqa: E731
        assert (
            board(first).split("Score")[1][:200].split("\n", 1)[1]
            == board(again).split("Score")[1][:200].split("\n", 1)[1]
        )
        assert "resumed your game" in await resumed(other)
        assert second
        assert (await player_of(served, key)).id != (await player_of(served, other)).id
        assert await kept_keys(served, other) == b"dd"[: len(await kept_keys(served, other))]

    run(scenario())


def test_a_guest_plays_and_nothing_is_kept(served_in_memory: ServerThread) -> None:
    served = served_in_memory

    async def scenario() -> None:
        async with await connect(served.port, None, user="mallory") as conn:
            chan, terminal = await open_terminal(conn, size=(160, 40))  # a window the whole first note fits
            await terminal.shows(GUEST_NOTE)
            assert "watched as guest-1" in terminal.text()  # as the watch list shows this game
            chan.write(b"adsw")
            await asyncio.sleep(0.3)
            chan.write(b"q")
            await terminal.closed.wait()
            assert "a guest's game is not kept" in terminal.text()

    run(scenario())
    store: MemoryStore = served.store  # type: ignore[assignment]
    assert not store.players and not store.games and not store.bests and not store.records


def test_the_help_over_ssh_offers_only_what_works_there(served_in_memory: ServerThread) -> None:
    """Over SSH there is no shell to suspend to (Ctrl-Z is no key there),
    and a guest's game is not kept: the help says neither otherwise."""
    served = served_in_memory

    async def help_text(key: Any) -> str:
        async with await connect(served.port, key, user="mallory") as conn:
            chan, terminal = await open_terminal(conn, size=(100, 40))
            await terminal.shows("Score")
            chan.write(b"?")
            await terminal.shows("any key closes this help")
            text = terminal.text()
            chan.write(b"x")
            await terminal.shows("Score")
            chan.write(b"q")
            await terminal.closed.wait()
            return text

    keyed, guest = run(help_text(client_key())), run(help_text(None))
    for text in (keyed, guest):
        assert "Ctrl-Z" not in text and "suspend" not in text, text
        assert "q, Ctrl-C" in text, text
    assert "quit: the game is kept for next time" in keyed, keyed
    assert "quit: a guest's game is not kept" in guest and "is kept" not in guest, guest


def test_an_escape_sequence_split_across_packets_is_one_arrow(served: ServerThread) -> None:
    key = client_key()

    async def scenario() -> bytes:
        async with await connect(served.port, key) as conn:
            chan, terminal = await open_terminal(conn, "play --no-animation")
            await terminal.shows("Score")
            for arrow in (b"\x1b[A", b"\x1b[B", b"\x1bOC", b"\x1b[D"):
                for byte in arrow:  # one packet each
                    chan.write(bytes([byte]))
                    await asyncio.sleep(0.02)
            await asyncio.sleep(0.5)
            chan.write(b"q")
            await terminal.closed.wait()
        return await kept_keys(served, key)

    # Only arrows: no w/a/s/d typed, and no letter of a sequence (A B C D:
    # capital WASD would be moves) taken for a key.
    keys = run(scenario())
    assert keys and set(keys) <= set(b"wasd")
    assert len(keys) <= 4


def test_a_window_change_redraws_the_board_at_the_new_size(served: ServerThread) -> None:
    async def scenario() -> None:
        async with await connect(served.port, client_key()) as conn:
            chan, terminal = await open_terminal(conn, size=(80, 24))
            await terminal.shows("Score")
            before = len(terminal.output)
            chan.change_terminal_size(30, 8)
            await terminal.wait_for(lambda t: b"too small:" in t.output[before:] and b"need 30x" in t.output[before:])
            assert b"have 30x8" in terminal.output[before:] or b"too small" in terminal.output[before:]
            before = len(terminal.output)
            chan.change_terminal_size(10**6, 10**6)  # absurd: clamped, and the board is back
            await terminal.wait_for(lambda t: b"Score" in t.output[before:])
            chan.write(b"q")
            await terminal.closed.wait()

    run(scenario())


def test_concurrent_sessions_of_different_players_play_at_once(served: ServerThread) -> None:
    keys = [client_key() for _ in range(4)]

    async def player(name: str, key: Any) -> str:
        async with await connect(served.port, key, user=name) as conn:
            chan, terminal = await open_terminal(conn, "play --no-animation")
            await terminal.shows("Score")
            for typed in b"adadwsws":
                chan.write(bytes([typed]))
                await asyncio.sleep(0.01)
            chan.write(b"q")
            await terminal.closed.wait()
            return terminal.text()

    async def scenario() -> None:
        texts = await asyncio.gather(*(player(f"p{i}", key) for i, key in enumerate(keys)))
        assert all("game kept for next time" in text for text in texts)
        for i, key in enumerate(keys):
            assert (await player_of(served, key)).name == f"p{i}"
            assert set(await kept_keys(served, key)) <= set(b"wasd")

    run(scenario())


def test_the_same_player_twice_may_take_the_game_over(served: ServerThread) -> None:
    key = client_key()

    async def scenario() -> None:
        async with await connect(served.port, key) as first_conn, await connect(served.port, key) as second_conn:
            _, first_terminal = await open_terminal(first_conn)
            await first_terminal.shows("Score")
            second, second_terminal = await open_terminal(second_conn)
            await second_terminal.shows(take_over_prompt(80)[0])
            second.write(b"y")
            await second_terminal.shows("Score")
            await first_terminal.closed.wait()
            assert SAID_TAKEN_OVER in first_terminal.text()
            second.write(b"q")
            await second_terminal.closed.wait()

    run(scenario())


def test_a_player_moves_mid_game_to_another_server_on_the_same_database(tmp_path: Path, store_url: str) -> None:
    # Two `ansi2048 serve` processes on one database, as behind a TCP load
    # balancer: the game open on the first is taken over on the second
    # exactly as it stands, and the first, which no longer holds it, keeps
    # nothing more of it.
    from ansi2048.serve.store import open_store

    key = client_key()
    for directory in ("a", "b"):
        (tmp_path / directory).mkdir()
    first_server = ServeProcess(tmp_path / "a", store_url)
    second_server = ServeProcess(tmp_path / "b", store_url)

    def board(text: str) -> Tuple[List[str], str]:
        """The header's score, moves and seed, and the grid below it (the
        screen is drawn inline: what the client printed before stays above)."""
        shown = text[text.index("2048  Score") :].split("Join the tiles")[0]
        header, grid = shown.split("\n", 1)
        return re.findall(r"(?:Score|Moves|Seed) (\d+)", header), grid

    async def move(chan: Any, terminal: Terminal, moves: int) -> bytes:
        """One move that moves the board (the server picks the seed: a
        direction may be blocked, and says so); the key that made it."""
        moved = f"Moves {moves + 1} "
        for key, direction in ((b"a", "left"), (b"s", "down"), (b"d", "right"), (b"w", "up")):
            answers = (moved, f"can't move {direction}")
            chan.write(key)
            await terminal.wait_for(lambda shown, answers=answers: any(answer in shown.text() for answer in answers))
            if moved in terminal.text():
                return key
        raise AssertionError("no direction moved a board with empty cells")

    async def scenario() -> None:
        async with await connect(first_server.port, key) as first_conn:
            first, first_terminal = await open_terminal(first_conn, "play --no-animation")
            await first_terminal.shows("Score")
            made = await move(first, first_terminal, 0) + await move(first, first_terminal, 1)
            seen = board(first_terminal.text())
            async with await connect(second_server.port, key) as second_conn:
                second, second_terminal = await open_terminal(second_conn, "play --no-animation")
                await second_terminal.shows(take_over_prompt(80)[0])
                second.write(b"y")
                await second_terminal.shows("Moves 2")
                assert board(second_terminal.text()) == seen
                first.write(b"d")  # the first server lost the game: this key is not kept
                await first_terminal.closed.wait()
                assert SAID_TAKEN_OVER in first_terminal.text()
                made += await move(second, second_terminal, 2)
                second.write(b"q")
                await second_terminal.closed.wait()
        store = open_store(store_url, str(tmp_path))
        await store.open()
        try:
            player = await store.player(key.get_fingerprint(), "unused")
            recording = await store.load(player.id, BOARD)
            assert recording is not None and bytes(split_header(recording)[1]) == made
        finally:
            await store.close()

    try:
        run(scenario())
    finally:
        first_server.kill(15)
        second_server.kill(15)


def test_declining_to_take_over_leaves_the_other_session_playing(served: ServerThread) -> None:
    key = client_key()

    async def scenario() -> None:
        async with await connect(served.port, key) as first_conn, await connect(served.port, key) as second_conn:
            first, first_terminal = await open_terminal(first_conn)
            await first_terminal.shows("Score")
            second, second_terminal = await open_terminal(second_conn)
            await second_terminal.shows("any other key: leave")
            second.write(b"n")
            await second_terminal.closed.wait()
            first.write(b"a")
            first.write(b"q")
            await first_terminal.closed.wait()
            assert "game kept for next time" in first_terminal.text()

    run(scenario())


def test_the_server_stopping_saves_every_game_and_says_so(tmp_path: Path) -> None:
    served = ServerThread(tmp_path, MemoryStore(), seeds=[7])
    store: MemoryStore = served.store  # type: ignore[assignment]

    async def scenario() -> None:
        async with await connect(served.port, client_key()) as conn:
            chan, terminal = await open_terminal(conn, "play --no-animation")
            await terminal.shows("Score")
            chan.write(b"ad")
            await asyncio.sleep(0.3)
            await asyncio.get_running_loop().run_in_executor(None, served.stop)
            await terminal.closed.wait()
            assert SAID_STOPPING in terminal.text()

    run(scenario())
    assert saved_keys(store) and not store.claims


def test_the_stop_tells_a_guest_and_a_watcher_what_is_true_for_them(tmp_path: Path) -> None:
    from ansi2048.serve.game import SAID_STOPPING_GUEST, SAID_STOPPING_VIEWER

    served = ServerThread(tmp_path, MemoryStore(), seeds=[7])

    async def scenario() -> None:
        async with await connect(served.port, None) as guest, await connect(served.port, client_key()) as viewer:
            _, guest_terminal = await open_terminal(guest, "play --no-animation")
            await guest_terminal.shows("Score")
            _, list_terminal = await open_terminal(viewer, "watch")
            await list_terminal.shows("q leaves")
            await asyncio.get_running_loop().run_in_executor(None, served.stop)
            await guest_terminal.closed.wait()
            await list_terminal.closed.wait()
            assert SAID_STOPPING_GUEST in guest_terminal.text() and "your game is kept" not in guest_terminal.text()
            assert SAID_STOPPING_VIEWER in list_terminal.text() and "your game" not in list_terminal.text()

    run(scenario())


def test_the_stop_tells_every_player_and_cuts_a_client_that_stays_connected(tmp_path: Path) -> None:
    # Two players mid-game. Alice's client leaves once its session has
    # closed, as ssh does; Bob's keeps its connection open. Both are told
    # and kept, and the server cuts Bob's connection rather than wait for it.
    served = ServerThread(tmp_path, MemoryStore(), seeds=[7, 8])
    store: MemoryStore = served.store  # type: ignore[assignment]

    async def scenario() -> None:
        alice = await connect(served.port, client_key(), user="alice")
        async with await connect(served.port, client_key(), user="bob") as bob:
            terminals = []
            for conn in (alice, bob):
                chan, terminal = await open_terminal(conn, "play --no-animation")
                await terminal.shows("Score")
                chan.write(b"ad")
                terminals.append(terminal)
            await asyncio.sleep(0.3)
            stopping = asyncio.ensure_future(asyncio.to_thread(served.stop))  # as SIGTERM does (bounded: 10 s)
            await terminals[0].closed.wait()
            alice.close()
            await terminals[1].closed.wait()
            await asyncio.wait_for(bob.wait_closed(), 10)  # cut by the server: Bob's client never leaves
            await stopping
        for terminal in terminals:
            assert SAID_STOPPING in terminal.text()
            assert terminal.exit_status == 0

    run(scenario())
    assert saved_keys(store, 1) and saved_keys(store, 2) and not store.claims


# -- commands without a terminal --------------------------------------------------


async def command(port: int, line: Optional[str], key: Any = None, pty: bool = False) -> Tuple[int, str, str]:
    async with await connect(port, key if key is not None else client_key()) as conn:
        _, terminal = await open_terminal(conn, line, pty=pty)
        await terminal.closed.wait()
        assert terminal.exit_status is not None
        return terminal.exit_status, terminal.output.decode(), terminal.stderr.decode()


def test_help_lists_the_commands(served: ServerThread) -> None:
    status, out, err = run(command(served.port, "help"))
    assert status == 0 and not err
    for word in ("play", "stats", "help", "--size", "IdentitiesOnly=yes"):
        assert word in out


@pytest.mark.parametrize(
    "line",
    ["bogus", "play --size 99", "play --color 8", "stats --bogus", "help me", "sh -c id", "scp -t /tmp", 'play "'],
)
def test_an_unknown_command_or_bad_argument_is_one_line_and_status_2(served: ServerThread, line: str) -> None:
    status, out, err = run(command(served.port, line))
    assert status == 2 and not out
    assert err.count("\n") == 1 and err.startswith("ansi2048: ")


def test_no_terminal_and_no_command_says_to_use_ssh_t(served: ServerThread) -> None:
    status, out, err = run(command(served.port, None))
    assert status == 2 and not out and "ssh -t" in err and err.count("\n") == 1


def test_stats_as_text_and_json(served: ServerThread) -> None:
    key = client_key()

    async def scenario() -> None:
        async with await connect(served.port, key) as conn:
            chan, terminal = await open_terminal(conn, "play --no-animation --size 2 --goal 8")
            await terminal.shows("Score")
            # Play until the 2x2 game is over (or 200 keys), then q.
            for _ in range(50):
                chan.write(b"wasd")
                await asyncio.sleep(0.01)
                if "game over" in terminal.text().lower():
                    break
            chan.write(b"q")
            await terminal.closed.wait()
        status, out, _ = await command(served.port, "stats", key)
        assert status == 0 and "Your records: 1 game on 1 board" in out
        # Only what works over SSH: no local command (--replay-best) to replay the top games.
        assert "Top 1\n" in out and "ansi2048 --" not in out
        status, out, _ = await command(served.port, "stats --json", key)
        import json

        assert status == 0 and json.loads(out)["boards"][0]["played"] == 1

    run(scenario())


# -- refused, always ----------------------------------------------------------------


def test_sftp_is_refused(served: ServerThread) -> None:
    async def scenario() -> None:
        async with await connect(served.port, client_key()) as conn:
            with pytest.raises((asyncssh.ChannelOpenError, asyncssh.SFTPError, OSError)):
                await conn.start_sftp_client()

    run(scenario())


def test_any_subsystem_is_refused(served: ServerThread) -> None:
    async def scenario() -> None:
        async with await connect(served.port, client_key()) as conn:
            with pytest.raises(asyncssh.ChannelOpenError):
                await conn.create_session(asyncssh.SSHClientSession, subsystem="netconf")

    run(scenario())


def test_local_port_forwarding_is_refused(served: ServerThread) -> None:
    async def scenario() -> None:
        async with await connect(served.port, client_key()) as conn:
            with pytest.raises(asyncssh.ChannelOpenError):
                await conn.create_connection(asyncssh.SSHTCPSession, "127.0.0.1", served.port)

    run(scenario())


def test_unix_socket_forwarding_is_refused_both_ways(served: ServerThread) -> None:
    async def scenario() -> None:
        async with await connect(served.port, client_key()) as conn:
            with pytest.raises(asyncssh.ChannelOpenError):
                await conn.create_unix_connection(asyncssh.SSHUNIXSession, "/run/anything.sock")
            with pytest.raises(asyncssh.ChannelListenError):
                await conn.forward_remote_path("/tmp/ansi2048-test.sock", "/run/anything.sock")

    run(scenario())


def test_remote_port_forwarding_is_refused(served: ServerThread) -> None:
    async def scenario() -> None:
        async with await connect(served.port, client_key()) as conn:
            with pytest.raises(asyncssh.ChannelListenError):
                await conn.forward_remote_port("127.0.0.1", 0, "127.0.0.1", 9)

    run(scenario())


def test_agent_forwarding_is_refused(served: ServerThread, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with await connect(
            served.port, client_key(), agent_forwarding=True, agent_path=str(tmp_path / "a")
        ) as conn:
            chan, terminal = await open_terminal(conn)
            await terminal.shows("Score")
            server_conns = list(served.server.connections)
            assert server_conns and all(c.get_agent_path() is None for c in server_conns)
            chan.write(b"q")
            await terminal.closed.wait()

    run(scenario())


def test_x11_forwarding_is_refused(served: ServerThread) -> None:
    async def scenario() -> None:
        async with await connect(served.port, client_key()) as conn:
            with pytest.raises(asyncssh.ChannelOpenError):
                await open_terminal(conn, x11_forwarding=True, x11_display="127.0.0.1:0")

    run(scenario())


def test_the_host_key_is_made_once_readable_by_its_owner_only(tmp_path: Path) -> None:
    from ansi2048.serve.host_key import host_key

    first = host_key(str(tmp_path))
    path = tmp_path / HOST_KEY_FILE
    assert path.stat().st_mode & 0o777 == 0o600
    assert host_key(str(tmp_path)).get_fingerprint() == first.get_fingerprint()


# -- the same frames as the local game ------------------------------------------------


def local_frames(data: Path, script: List[Any], size: Tuple[int, int]) -> List[bytes]:
    """What the local keyboard game writes for ``script`` (each write a frame),
    played in-process over in-memory streams: the same seed, the client's TERM."""
    import io

    from ansi2048.options.context import Context, Options
    from ansi2048.play.keyboard import play_terminal

    from .console import PlayConsole

    console = PlayConsole(script, size=size)
    ctx = Context(
        options=Options(animation=False, color="always"),
        stdin=io.StringIO(),
        stdout=io.StringIO(),
        env={"ANSI2048_DATA_DIR": str(data), "TERM": "xterm-256color"},
        warn=pytest.fail,
        random_seed=lambda: 7,
    )
    assert play_terminal(ctx, console.open) == 0
    # As the terminal gets them: its output processing (ONLCR) makes LF CR LF.
    return [text.replace("\n", "\r\n").encode() for _, text in console.frames]


def test_the_frames_over_ssh_are_the_local_games_frames_byte_for_byte(served: ServerThread, tmp_path: Path) -> None:
    from .console import Resize
    from .screen import emulate

    # The served game's own (issue 40 item 8): its first frame's note says
    # who the player is and what else the server offers, and its help (?)
    # has a section on the server's commands (tests/test_serve_who.py); the
    # frames from the first key's on, the help aside, are the local game's.
    keys = [b"a", b"s", b"d", b"d", b"w", b"u", b"u", b"\x1b[A", b"hjkl", b"r", b"u", b"a"]
    resize = (len(keys) // 2, Resize(50, 20))
    script: List[Any] = [*keys[: resize[0]], (0.0, resize[1]), *keys[resize[0] :]]
    local = local_frames(tmp_path / "local", [*script, b"q"], (80, 24))
    # Everything from the second key's frame up to the farewell (which names
    # the command that resumes the game: "ansi2048" here, "connecting again" over SSH).
    expected = b"".join(local[2:-2])
    assert b"connecting again" not in expected and len(local) > len(keys)
    # What the local game has written by the end of each step of the
    # script: each write is one read there, so each is sent once the frames
    # of the one before it are in (keys typed ahead of a busy server are
    # rightly drawn as one frame, and would make this test flaky).
    through = [
        len(b"".join(local_frames(tmp_path / f"local-{i}", [*script[: i + 1], b"q"], (80, 24))[2:-2]))
        for i in range(1, len(script))
    ]
    assert all(a < b for a, b in zip(through, through[1:])) and through[-1] == len(expected)  # each step draws
    first = [line.rstrip() for line in emulate(local[0], 80, 24).display]

    async def scenario() -> bytes:
        async with await connect(served.port, client_key()) as conn:
            chan, terminal = await open_terminal(conn, "play --no-animation", size=(80, 24))
            await terminal.shows("Score")
            shown = [line.rstrip() for line in terminal.display()]
            differ = [(mine, theirs) for mine, theirs in zip(shown, first) if mine != theirs]
            assert len(differ) == 1 and differ[0][0].startswith("you are alice; also here: daily"), differ
            chan.write(keys[0])
            await terminal.wait_for(lambda t: "you are" not in t.text())
            await asyncio.sleep(0.2)  # nothing more comes
            mark = len(terminal.output)
            for step, written in zip(script[1:], through):
                if isinstance(step, bytes):
                    chan.write(step)
                else:
                    chan.change_terminal_size(50, 20)
                await terminal.wait_for(lambda t, written=written: len(t.output) >= mark + written)  # type: ignore[misc]
            await asyncio.sleep(0.2)  # nothing more comes
            seen = bytes(terminal.output[mark:])
            chan.write(b"q")
            await terminal.closed.wait()
            assert b"game kept for next time: connecting again" in terminal.output
            return seen

    assert run(scenario()) == expected


# -- the AI, from the server's pool ---------------------------------------------------


def test_a_hint_and_autoplay_come_from_the_ai_pool(served: ServerThread) -> None:
    key = client_key()

    async def scenario() -> bytes:
        async with await connect(served.port, key) as conn:
            chan, terminal = await open_terminal(conn, "play --no-animation")
            await terminal.shows("Score")
            chan.write(b"t")
            # The first question starts the pool's worker (a process): seconds, once.
            await terminal.wait_for(lambda t: re.search(r"hint: \S+ (up|down|left|right)", t.text()) is not None, 60)
            assert "assisted: this game sets no best" in terminal.text()
            chan.write(b"p")  # autoplay: the AI's moves, played as keys
            for _ in range(300):  # the AI plays: its moves are kept
                if len(await kept_keys(served, key)) >= 16:
                    break
                await asyncio.sleep(0.1)
            chan.write(b"p")
            chan.write(b"q")
            await terminal.closed.wait()
        return await kept_keys(served, key)

    keys = run(scenario())
    mark = encode_item(ASSISTED).encode()
    assert keys.startswith(mark)  # marked before the AI's first move
    assert len(keys) - len(mark) >= 5 and set(keys[len(mark) :]) <= set(b"wasd")


def test_when_the_ai_is_busy_a_hint_says_so(tmp_path: Path) -> None:
    from ansi2048.loop.step import AI_BUSY_NOTE
    from ansi2048.serve.pool import Busy

    served = ServerThread(tmp_path, MemoryStore(), seeds=[7])

    async def busy(*args: Any) -> Any:
        raise Busy

    served.server.context.pool.move = busy  # type: ignore[method-assign]
    try:

        async def scenario() -> None:
            async with await connect(served.port, client_key()) as conn:
                chan, terminal = await open_terminal(conn, "play --no-animation")
                await terminal.shows("Score")
                chan.write(b"t")
                await terminal.shows(AI_BUSY_NOTE)
                chan.write(b"a")  # the game goes on
                await terminal.wait_for(lambda t: AI_BUSY_NOTE not in t.text())
                chan.write(b"q")
                await terminal.closed.wait()

        run(scenario())
    finally:
        served.stop()


def test_the_pool_refuses_questions_beyond_its_bound() -> None:
    from ansi2048.game.engine import Game
    from ansi2048.serve.pool import AIPool, Busy

    async def scenario() -> None:
        pool = AIPool(1)
        try:
            game = Game(4, 4, 2048, 3)
            asked = [asyncio.ensure_future(pool.move(game.board, game.goal)) for _ in range(3)]
            await asyncio.sleep(0)  # the three are in flight (one answering, two waiting)
            with pytest.raises(Busy):
                await pool.move(game.board, game.goal)
            answers = await asyncio.gather(*asked)
            assert all(direction is not None and warning == "" for direction, warning in answers)
            assert pool.ready
            await pool.move(game.board, game.goal)  # room again
        finally:
            pool.close()

    run(scenario())


def test_a_players_theme_colour_and_animation_are_remembered(served: ServerThread) -> None:
    key = client_key()

    async def scenario() -> Tuple[bytes, bytes]:
        async with await connect(served.port, key) as conn:
            chan, terminal = await open_terminal(conn, "play --theme dark --color 24bit --no-animation")
            await terminal.shows("Score")
            chan.write(b"q")
            await terminal.closed.wait()
            first = bytes(terminal.output)
        async with await connect(served.port, key) as conn:
            chan, terminal = await open_terminal(conn)  # a plain ssh: the choices come back
            await terminal.shows("Score")
            chan.write(b"q")
            await terminal.closed.wait()
            return first, bytes(terminal.output)

    first, second = run(scenario())
    prefs = run(player_of(served, key)).prefs
    assert (prefs.theme, prefs.color, prefs.animation) == ("dark", "24bit", False)
    assert b"38;2;" in first and b"38;2;" in second  # 24-bit colour both times (TERM says 256)
    # The resumed note aside, the same colours: the same theme.
    assert re.findall(rb"\x1b\[[0-9;]*m", first)[:20] == re.findall(rb"\x1b\[[0-9;]*m", second)[:20]


def test_moves_are_shown_moving_over_ssh(served: ServerThread) -> None:
    from ansi2048.render.repaint import FRAME_END

    end = FRAME_END.replace("\n", "\r\n").encode()

    async def scenario() -> None:
        async with await connect(served.port, client_key()) as conn:
            chan, terminal = await open_terminal(conn, "play --animation")
            await terminal.shows("Score")
            before = len(terminal.output)
            chan.write(b"a")  # seed 7: a move that changes the board
            # Its frames of motion, then the settled one (every frame is
            # drawn, each at its time or late, none skipped).
            await terminal.wait_for(lambda t: t.output[before:].count(end) >= 3)
            chan.write(b"q")
            await terminal.closed.wait()

    run(scenario())


def test_a_resumed_game_drops_the_games_before_its_last_restart(served: ServerThread) -> None:
    key = client_key()

    async def recording() -> bytes:
        player = await player_of(served, key)
        return bytes(await on_server(served, served.store.load(player.id, BOARD)))  # type: ignore[attr-defined]

    async def scenario() -> None:
        async with await connect(served.port, key) as conn:
            chan, terminal = await open_terminal(conn, "play --no-animation")
            await terminal.shows("Score")
            chan.write(b"adr")  # a move or two, then a new game (r), then moves in it
            await asyncio.sleep(0.2)
            chan.write(b"wsws")
            await asyncio.sleep(0.3)
            chan.write(b"q")
            await terminal.closed.wait()
            before = terminal.text()
        kept = await recording()
        assert b"r" in split_header(kept)[1]
        async with await connect(served.port, key) as conn:
            chan, terminal = await open_terminal(conn)
            await terminal.shows("resumed your game")
            after = terminal.text()
            chan.write(b"q")
            await terminal.closed.wait()
        header, keys = split_header(await recording())
        # The new game's seed in the header, its keys alone after it.
        assert header is not None and header.seed != 7 and b"r" not in keys and set(keys) <= set(b"ws")
        assert kept.endswith(keys)
        board = lambda text: text.split("Score", 1)[1].split("Join the tiles")[0].split("\n", 1)[1]  # noqa: E731
        assert board(after) == board(before)

    run(scenario())


class _Faulty:
    """A store whose writes of play (keys, games ended, bests) fail while
    ``down`` (SQLite's disk full or locked, as the server sees it); all else
    goes to ``store``."""

    def __init__(self, store: Any) -> None:
        self._store = store
        self.down = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    async def append(self, player: int, board: str, holder: str, items: bytes) -> None:
        from ansi2048.serve.store.base import StoreUnavailable

        if self.down:
            raise StoreUnavailable("database or disk is full")
        await self._store.append(player, board, holder, items)

    async def add_to_history(self, player: int, record: Any) -> None:
        from ansi2048.serve.store.base import StoreUnavailable

        if self.down:
            raise StoreUnavailable("database or disk is full")
        await self._store.add_to_history(player, record)

    async def record_best(self, player: int, key: str, score: int) -> int:
        from ansi2048.serve.store.base import StoreUnavailable

        if self.down:
            raise StoreUnavailable("database or disk is full")
        return int(await self._store.record_best(player, key, score))


def test_saving_pauses_while_the_database_is_away_and_play_resumes_by_itself(
    tmp_path: Path, store_url: str, store_kind: str, request: pytest.FixtureRequest
) -> None:
    from ansi2048.serve.saving import SAID_PAUSED
    from ansi2048.serve.store import open_store

    store = _Faulty(open_store(store_url, str(tmp_path)))
    if store_kind == "postgresql":  # the real thing: the cluster stopped under play, then started
        cluster = request.getfixturevalue("postgres_cluster")
        down, up = cluster.stop, cluster.start
    else:

        def down() -> None:
            store.down = True

        def up() -> None:
            store.down = False

    alice, bob = client_key(), client_key()
    board = lambda text: text.split("Score", 1)[1].split("Join the tiles")[0]  # noqa: E731
    with ServerThread(tmp_path, store, seeds=[7, 8]) as served:

        async def scenario() -> None:
            async with await connect(served.port, alice) as first, await connect(served.port, bob, "bob") as second:
                chan, terminal = await open_terminal(first, "play --no-animation")
                await terminal.shows("Score")
                other, beside = await open_terminal(second, "play --no-animation")
                await beside.shows("Score")
                before = terminal.text()
                try:
                    await asyncio.to_thread(down)
                    chan.write(b"a")  # seed 7: a move that changes the board
                    await terminal.shows(SAID_PAUSED)
                    paused = terminal.text()
                    assert board(paused) == board(before)  # the move is not shown
                    chan.write(b"dd")  # not played: dropped while saving is paused
                    other.write(b"w")  # the other player pauses too, and is not stopped
                    await beside.shows(SAID_PAUSED)
                    await asyncio.sleep(0.5)
                    assert board(terminal.text()) == board(before)
                finally:
                    await asyncio.to_thread(up)
                # Play resumes by itself: the held frame comes, the notice goes.
                await terminal.wait_for(lambda t: SAID_PAUSED not in t.text() and board(t.text()) != board(before))
                shown = terminal.text()
                await beside.wait_for(lambda t: SAID_PAUSED not in t.text())
                other.write(b"q")
                await beside.closed.wait()
                chan.write(b"q")
                await terminal.closed.wait()
                # What was shown is what is kept: the one move, none of the dropped keys.
                assert await kept_keys(served, alice) == b"a"
                assert await kept_keys(served, bob) == b"w"
                assert "Moves 1" in shown  # the held frame: the move, once

        run(scenario())


def test_q_during_a_pause_ends_play_with_nothing_shown_unsaved(tmp_path: Path) -> None:
    from ansi2048.serve.saving import SAID_PAUSED, SAID_UNSAVED

    store = _Faulty(MemoryStore())
    with ServerThread(tmp_path, store, seeds=[7]) as served:

        async def scenario() -> Tuple[bytes, bytes]:
            async with await connect(served.port, client_key()) as conn:
                chan, terminal = await open_terminal(conn, "play --no-animation")
                await terminal.shows("Score")
                first = bytes(terminal.output)
                store.down = True
                chan.write(b"a")  # seed 7: a move that changes the board
                await terminal.shows(SAID_PAUSED)
                chan.write(b"q")
                await terminal.closed.wait()
                return first, bytes(terminal.output)

        first, everything = run(scenario())
    assert Game(4, 4, 2048, 7).move(Action.LEFT.direction)  # type: ignore[arg-type]  # the key moved
    assert SAID_UNSAVED.encode() in everything
    after = everything[len(first) :]
    # Nothing of the move's frame: no new score or move count.
    assert b"Moves" not in after and b"Score" not in after
    assert saved_keys(store._store) == b""


def test_a_server_stopping_during_a_pause_ends_play_cleanly(tmp_path: Path) -> None:
    store = _Faulty(MemoryStore())
    served = ServerThread(tmp_path, store, seeds=[7])
    from ansi2048.serve.saving import SAID_PAUSED

    async def scenario() -> bytes:
        async with await connect(served.port, client_key()) as conn:
            chan, terminal = await open_terminal(conn, "play --no-animation")
            await terminal.shows("Score")
            store.down = True
            chan.write(b"a")
            await terminal.shows(SAID_PAUSED)
            await asyncio.to_thread(served.stop)  # as SIGTERM does
            await terminal.closed.wait()
            return bytes(terminal.output)

    everything = run(scenario())
    assert SAID_STOPPING.encode() in everything
    assert saved_keys(store._store) == b""


def test_new_starts_a_new_game_that_u_undoes_and_each_board_has_its_own(served: ServerThread) -> None:
    key = client_key()

    async def session(command: Optional[str], typed: bytes, wanted: str) -> str:
        async with await connect(served.port, key) as conn:
            chan, terminal = await open_terminal(conn, command)
            await terminal.shows(wanted)
            text = terminal.text()
            chan.write(typed)
            await terminal.closed.wait()
            return text

    async def scenario() -> None:
        first = await session("play --no-animation", b"adwsq", "Score")
        seed = re.search(r"Seed (\d+)", first)
        assert seed is not None and seed.group(1) == "7"
        fresh = await session("play --new --no-animation", b"uq", "Score")
        assert not re.search(r"Seed 7\b", fresh) and "Moves 0" in fresh  # a new game; u brings the old one back
        resumed = await session(None, b"q", "resumed your game")
        assert "Seed 7" in resumed  # the one u brought back is kept
        small = await session("play --size 3 --no-animation", b"q", "Score")
        assert not re.search(r"Seed 7\b", small) and "Moves 0" in small  # the 3x3 board's own game
        again = await session(None, b"q", "resumed your game")
        assert "Seed 7" in again  # the 4x4 game untouched

    run(scenario())


@pytest.mark.parametrize(
    ("term", "env", "wanted", "unwanted"),
    [
        ("xterm", {}, rb"\x1b\[[0-9;]*(3[0-7]|9[0-7]|4[0-7]|10[0-7])m", rb"[34]8;[25];"),  # 16 colours
        ("xterm-256color", {}, rb"[34]8;5;", rb"[34]8;2;"),  # 256 colours
        ("xterm-256color", {"COLORTERM": "truecolor"}, rb"[34]8;2;", rb"[34]8;5;"),  # 24-bit
        ("xterm-256color", {"NO_COLOR": "1"}, rb"Score", rb"[34]8;[25];|\x1b\[[0-9;]*3[0-7]m"),  # none
    ],
)
def test_the_colour_depth_comes_from_the_clients_term_and_colorterm(
    served: ServerThread, term: str, env: Dict[str, str], wanted: bytes, unwanted: bytes
) -> None:
    async def scenario() -> bytes:
        async with await connect(served.port, client_key()) as conn:
            chan, terminal = await open_terminal(conn, term_type=term, env=env)
            await terminal.shows("Score")
            chan.write(b"q")
            await terminal.closed.wait()
            return bytes(terminal.output)

    output = run(scenario())
    assert re.search(wanted, output) and not re.search(unwanted, output)


def test_a_first_connection_and_a_game_of_no_moves_are_not_resumed_games(served: ServerThread) -> None:
    """Nothing was played: no "resumed your game: 0 moves" (issue 40, item 17)."""
    key = client_key()

    async def scenario() -> None:
        first = await _first_screen_then_quit(served.port, key, "Score")
        assert "resumed" not in first, first
        again = await _first_screen_then_quit(served.port, key, "Score")  # the first's game, quit before a move
        assert "resumed" not in again and "Moves 0" in again, again

    run(scenario())


async def _first_screen_then_quit(port: int, key: Any, wanted: str) -> str:
    """The screen of ``ssh HOST`` with ``key`` once it shows ``wanted``; then q."""
    async with await connect(port, key) as conn:
        chan, terminal = await open_terminal(conn)
        await terminal.shows(wanted)
        text = terminal.text()
        chan.write(b"q")
        await terminal.closed.wait()
        return text
