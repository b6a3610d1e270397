"""``ansi2048 serve`` over a slow link (issue 29, item 5): 100 ms of round
trip between the real OpenSSH client and the server, each in a network
namespace of its own (tests/slow_link.py). Keys typed ahead of the screen
are all played, and the screen catches up in one frame, as it does without
the delay (the same play over the same link without delay is the control),
with motion on (the default).

What the boards should be comes from the engine, replaying the keys typed
from the seed the server's store kept, never from what the server drew.

Needs Linux, and there root and iproute2: without them these tests are
skipped, saying which is missing, except in CI (CI=true), where they fail.
GitHub's Linux runners are not root: the workflow runs this file by sudo, in
a step of its own."""

from __future__ import annotations

import asyncio
import shutil
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import List, Tuple

import pytest

pytestmark = [
    pytest.mark.skipif(sys.platform == "win32", reason="the server is for POSIX hosts (asyncssh, signals, ptys)"),
    pytest.mark.skipif(shutil.which("ssh") is None, reason="needs the OpenSSH client (ssh)"),
]

asyncssh = pytest.importorskip("asyncssh", reason="the server's tests need ansi2048[serve]", exc_type=ImportError)

from ansi2048.game.engine import Game  # noqa: E402
from ansi2048.game.keys import Action  # noqa: E402
from ansi2048.records.history import config_key  # noqa: E402
from ansi2048.records.recording import recorded_actions, split_header  # noqa: E402
from ansi2048.render.repaint import FRAME_END  # noqa: E402
from ansi2048.serve.store import open_store  # noqa: E402

from .databases import skip_outside_ci  # noqa: E402
from .screen import NUMBER, emulate, parse_tile  # noqa: E402
from .serve_support import ServeProcess, make_key  # noqa: E402
from .slow_link import SERVER_ADDRESS, SlowLink, missing  # noqa: E402
from .test_serve_ssh import HEIGHT, WIDTH, SshPlayer, moves  # noqa: E402

ONE_WAY = 0.050  # seconds each way: a 100 ms round trip
# The server writes "\n" as the terminal's CR LF (it has no pty of its own to do it).
END = FRAME_END.replace("\n", "\r\n").encode()
# Twenty moves typed at once (pasted, or typed ahead of a slow screen): ssh
# sends them in one packet.
BURST = b"adwsaadswdasdwssadwa"
# Twenty more at a fast typist's pace, 30 a second: a key every 33 ms, each
# gone before the frame of the one before comes back. Each comes alone, and
# is shown moving, as without the delay.
TYPED = b"wdsaasdwdsawwdsaasdw"
TYPING_PAUSE = 1 / 30
STALL = 3.0  # seconds the link is held: typing 15 keys takes 0.5 s of it, with room for a loaded machine
QUIET = 0.8  # seconds without output: the screen is done (the "+N" fades 0.6 s after a move)


@pytest.fixture
def slow_link_available(request: pytest.FixtureRequest) -> None:
    if not sys.platform.startswith("linux"):  # as Windows skips PostgreSQL: even in CI
        pytest.skip("a slow link needs Linux's network namespaces")
    reason = missing()
    if reason:
        skip_outside_ci(request, "a slow link", reason)


def tiles(text: str) -> List[int]:
    """The tiles of the board a screen shows, in reading order (empty cells are blank)."""
    lines = text.split("\n")
    header = next(i for i, line in enumerate(lines) if "Score" in line)
    end = next(i for i, line in enumerate(lines) if "wasd" in line or "Join the tiles" in line)
    return [parse_tile(match.group(0)) for line in lines[header + 1 : end] for match in NUMBER.finditer(line)]


@dataclass(frozen=True)
class Expected:
    """What the engine makes of keys from a seed."""

    tiles: List[int]  # the board's, in reading order
    moves: int
    kept: List[Action]  # the keys a recording keeps: the moves that moved


def expected(seed: int, keys: bytes) -> Expected:
    game = Game(4, 4, 2048, seed=seed)
    moved = [action for action in map(Action, keys.decode()) if game.move(action.direction)]  # type: ignore[arg-type]
    return Expected([value for row in game.board for value in row if value], game.moves, moved)


def shown(text: str) -> Tuple[List[int], int]:
    """The board's tiles and the move count a screen shows."""
    return tiles(text), moves(text)


def rest(player: SshPlayer, limit: float = 15) -> None:
    """Read until the output has rested QUIET seconds (bounded by ``limit``)."""
    start = time.monotonic()
    while time.monotonic() < start + limit:
        last = max(start, player.arrivals[-1][0]) if player.arrivals else start
        if time.monotonic() - last >= QUIET:
            return
        player._pump(0.05)
    raise AssertionError(f"the output did not rest in {limit} s")


@dataclass(frozen=True)
class Catching:
    """What the screen did after keys were typed from ``mark`` (a length of the output) on."""

    frames: int  # drawn until the screen rested
    first: str  # the screen once the first of them had come
    rested: str  # the screen once it rested


def catch_up(player: SshPlayer, mark: int) -> Catching:
    rest(player)
    frames = player.output[mark:].count(END)
    assert frames >= 1, "nothing was drawn"
    first = player.output.index(END, mark) + len(END)
    screen = emulate(player.output[:first], WIDTH, HEIGHT)
    return Catching(frames, "\n".join(line.rstrip() for line in screen.display), player.text())


async def kept_game(data: Path, key: Path) -> Tuple[int, bytes]:
    """The seed and the keys of ``key``'s 4x4 game, as the server's store keeps them."""
    store = open_store("", str(data))
    await store.open()
    try:
        fingerprint = asyncssh.read_public_key(f"{key}.pub").get_fingerprint()
        player = await store.player(fingerprint, "unused")
        recording = await store.load(player.id, config_key(4, 4, 2048))
    finally:
        await store.close()
    assert recording is not None
    header, keys = split_header(recording)
    assert header is not None
    return header.seed, bytes(keys)


class Served:
    """``ansi2048 serve`` in the link's server namespace, a new player's ``ssh`` in its client's."""

    def __init__(self, link: SlowLink, data: Path, key: Path) -> None:
        self.data, self.key = data, key
        self.server = ServeProcess(data, host=SERVER_ADDRESS, prefix=link.server)
        try:
            self.player = SshPlayer(self.server.port, key, host=SERVER_ADDRESS, prefix=link.client)
            self.player.shows("Score")
            rest(self.player)
        except BaseException:
            self.server.kill()
            raise

    def __enter__(self) -> Served:
        return self

    def __exit__(self, *exc: object) -> None:
        """The server killed whatever happened: a test that failed midway
        must not leave it running in a namespace that is then deleted."""
        self.server.kill()
        self.player.child.close(force=True)

    def end(self) -> Tuple[int, bytes]:
        """Quit, stop the server; the seed and keys its store kept."""
        try:
            self.player.type(b"q")
            assert self.player.ended() == 0
            assert self.server.kill(signal.SIGTERM) == 0
        finally:
            self.server.kill()
        return asyncio.run(kept_game(self.data, self.key))


def test_keys_typed_ahead_over_a_slow_link_are_all_played_and_the_screen_catches_up_in_one_frame(
    slow_link_available: None, tmp_path: Path
) -> None:
    key = make_key(tmp_path / "key")
    for delay in (0.0, ONE_WAY):  # without delay first: the control
        with SlowLink(delay) as link, Served(link, tmp_path / f"server-{delay}", key) as served:
            player = served.player
            mark = len(player.output)
            player.child.send(BURST)  # one write
            burst = catch_up(player, mark)
            mark = len(player.output)
            player.type(TYPED, pause=TYPING_PAUSE)
            typed = catch_up(player, mark)
            seed, kept = served.end()
        where = f"{delay * 2000:.0f} ms round trip"
        # Every key was played and kept, in order.
        everything = expected(seed, BURST + TYPED)
        assert recorded_actions(kept) == everything.kept, where
        # The burst's first frame shows the board after all twenty: one frame
        # catches up. The only frame after it takes the "+N" away.
        after_burst = expected(seed, BURST)
        assert shown(burst.first) == (after_burst.tiles, after_burst.moves), where
        assert burst.frames <= 2 and shown(burst.rested) == shown(burst.first), where
        # Typed one at a time, each key is shown moving (motion is on); the screen ends on the board after all.
        assert typed.frames > len(TYPED), where
        assert shown(typed.rested) == (everything.tiles, everything.moves), where


def test_keys_typed_while_a_slow_link_stalls_come_at_once_and_are_drawn_in_one_frame(
    slow_link_available: None, tmp_path: Path
) -> None:
    # A slow link stalls too (a mobile link, a lost packet resent): what the
    # player typed meanwhile, each key in its own packet, then comes all at
    # once. It was typed ahead of the screen: one frame shows it, as the
    # local game's one read of its terminal does, not a motion begun and cut
    # short per key.
    key = make_key(tmp_path / "key")
    with SlowLink(ONE_WAY) as link, Served(link, tmp_path / "server", key) as served:
        player = served.player
        mark = len(player.output)
        stall_end = time.monotonic() + STALL
        link.stall(STALL)
        player.type(TYPED[:15], pause=TYPING_PAUSE)  # 0.5 s: well within the stall
        typed_in_time = time.monotonic() < stall_end
        time.sleep(max(0.0, stall_end - time.monotonic()))  # nothing comes before: catch_up would take it as rest
        stalled = catch_up(player, mark)
        seed, kept = served.end()
    assert typed_in_time, "the machine is too slow for this test: typing outlasted the stall"
    played = expected(seed, TYPED[:15])
    assert recorded_actions(kept) == played.kept
    # The held packets reach the server in one TCP segment, as a receiver's
    # GRO joins a burst (tests/slow_link.py's coalesced): its SSH packets,
    # one a key, are read at once and queued behind each other. So: a frame
    # and the "+N" fading, one more where another packet on the line splits
    # the burst in two; never one per key (33 frames before the server took
    # what had queued up as one batch; the busy-server test below checks
    # the first frame exactly).
    assert stalled.frames <= 3, stalled.frames
    assert shown(stalled.rested) == (played.tiles, played.moves)


def test_keys_that_queue_up_while_the_server_is_busy_are_drawn_in_one_frame(tmp_path: Path) -> None:
    # The same without a slow link or root: the server's loop is kept busy
    # while the keys come, each in an SSH packet of its own; it then reads
    # them all at once, as after a stall.
    from .serve_support import MemoryStore, ServerThread
    from .test_serve import client_key, connect, open_terminal, run, saved_keys

    keys = TYPED[:15]

    async def scenario(served: ServerThread) -> Tuple[int, str]:
        """The frames drawn after the keys, and the screen after the first of them."""
        async with await connect(served.port, client_key()) as conn:
            chan, terminal = await open_terminal(conn, "play")  # motion on: the default
            await terminal.shows("Score")
            await asyncio.sleep(QUIET)
            mark = len(terminal.output)
            served.loop.call_soon_threadsafe(time.sleep, 0.5)  # busy: reads nothing meanwhile
            await asyncio.sleep(0.05)
            for key in keys:
                chan.write(bytes([key]))
                await asyncio.sleep(0.01)
            shown = len(terminal.output)
            while True:  # until the output rests (the test's run() bounds it)
                await asyncio.sleep(QUIET)
                if len(terminal.output) == shown:
                    break
                shown = len(terminal.output)
            output = bytes(terminal.output)
            chan.write(b"q")
            await terminal.closed.wait()
        first = emulate(output[: output.index(END, mark) + len(END)], WIDTH, HEIGHT)
        return output[mark:].count(END), "\n".join(line.rstrip() for line in first.display)

    store = MemoryStore()
    with ServerThread(tmp_path, store, seeds=[7]) as served:
        frames, first = run(scenario(served))
    played = expected(7, keys)
    assert recorded_actions(saved_keys(store)) == played.kept
    assert shown(first) == (played.tiles, played.moves)
    assert frames <= 2  # that one, and the "+N" taken away
