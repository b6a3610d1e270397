#!/usr/bin/env python3
"""Draw the served game's screens as a player's terminal shows them: a real
``ansi2048 serve`` on a free loopback port (SQLite in a temporary folder),
asyncssh clients with a terminal of each size, their bytes read through a
pyte VT100 screen and drawn as screenshot.py draws the local game's.

The screens (issue 40: a person looks at them): the first screen of a
session (``play``) at 80x24, the ranked daily game at 60x20, a finished
game's replay at 80x24, ``help`` as ``ssh HOST help`` prints it, and the
watch list at 60x20.

    python scripts/serve_screenshot.py [--out served-screens]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any, List, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT / "benchmarks"))  # serve.py's started_server

import asyncssh  # noqa: E402
import pyte  # noqa: E402
from screenshot import svg  # noqa: E402
from serve import started_server  # noqa: E402


class _Seen(asyncssh.SSHClientSession):  # type: ignore[misc]
    """What a client's terminal receives."""

    def __init__(self) -> None:
        self.output = bytearray()
        self.changed = asyncio.Event()

    def data_received(self, data: bytes, datatype: Optional[int]) -> None:
        self.output += data
        self.changed.set()


def _screen(output: bytes, columns: int, lines: int) -> pyte.Screen:
    screen = pyte.Screen(columns, lines)
    screen.set_mode(pyte.modes.LNM)  # the server writes CR LF itself: a bare LF only moves down
    pyte.ByteStream(screen).feed(output)
    return screen


async def _settled(seen: _Seen, wanted: str, columns: int, lines: int, quiet: float = 0.5) -> pyte.Screen:
    """The screen once ``wanted`` is on it and nothing came for ``quiet`` seconds (30 s at most)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + 30
    while loop.time() < end:
        seen.changed.clear()
        try:
            await asyncio.wait_for(seen.changed.wait(), quiet)
        except asyncio.TimeoutError:
            screen = _screen(bytes(seen.output), columns, lines)
            if wanted in "\n".join(screen.display):
                return screen
    raise AssertionError(f"{wanted!r} not seen: {bytes(seen.output)[-400:]!r}")


async def _session(port: int, key: Any, command: Optional[str], size: Tuple[int, int]) -> Tuple[Any, Any, _Seen]:
    conn = await asyncssh.connect(
        "127.0.0.1", port, username="alice", client_keys=[key], known_hosts=None, encoding=None, agent_path=None
    )
    chan, seen = await conn.create_session(_Seen, command, term_type="xterm-256color", term_size=size)
    return conn, chan, seen


async def shoot(port: int, out: Path) -> List[Path]:
    key = asyncssh.generate_private_key("ssh-ed25519")
    written: List[Path] = []

    def keep(name: str, screen: pyte.Screen) -> None:
        used = max((row + 1 for row in range(screen.lines) if screen.display[row].strip()), default=1)
        path = out / f"{name}.svg"
        path.write_text(svg(screen, used), encoding="utf-8")
        written.append(path)

    conn, chan, seen = await _session(port, key, None, (80, 24))  # the first screen of a session
    keep("first-80x24", await _settled(seen, "Score", 80, 24))
    chan.write(b"q")
    await chan.wait_closed()
    conn.close()
    conn, chan, seen = await _session(port, key, "play --size 2 --no-animation", (80, 24))  # a game to its end
    await _settled(seen, "Score", 80, 24)
    for _ in range(100):  # a 2x2 board is full within a few dozen moves
        chan.write(b"wasd")
        await asyncio.sleep(0.02)
    chan.write(b"q")
    await chan.wait_closed()
    conn.close()
    conn, chan, seen = await _session(port, key, "replay", (80, 24))  # the game just played, back
    chan.write(b" ")  # paused: the key line says so
    keep("replay-80x24", await _settled(seen, "Score", 80, 24, quiet=1.0))
    conn.close()
    conn, chan, seen = await _session(port, key, "daily", (60, 20))  # the day's ranked game
    keep("daily-60x20", await _settled(seen, "Score", 60, 20))
    chan.write(b"q")
    conn.close()
    conn = await asyncssh.connect(
        "127.0.0.1", port, username="alice", client_keys=[key], known_hosts=None, encoding=None, agent_path=None
    )
    result = await conn.run("help", check=False)
    text = result.stdout if isinstance(result.stdout, bytes) else str(result.stdout).encode()
    lines = text.decode("utf-8", "replace").splitlines()
    screen = _screen(text.replace(b"\n", b"\r\n"), max(80, max(map(len, lines), default=0)), len(lines) + 1)
    keep("help", screen)
    conn.close()
    bob = await asyncssh.connect(
        "127.0.0.1",
        port,
        username="bob",
        client_keys=[asyncssh.generate_private_key("ssh-ed25519")],
        known_hosts=None,
        encoding=None,
        agent_path=None,
    )
    bob_chan, bob_seen = await bob.create_session(_Seen, None, term_type="xterm-256color", term_size=(80, 24))
    await _settled(bob_seen, "Score", 80, 24)
    bob_chan.write(b"asd")
    conn, chan, seen = await _session(port, asyncssh.generate_private_key("ssh-ed25519"), "watch", (60, 20))
    keep("watch-list-60x20", await _settled(seen, "bob", 60, 20))
    conn.close()
    bob.close()
    return written


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("served-screens"))
    options = parser.parse_args(argv)
    options.out.mkdir(parents=True, exist_ok=True)
    with started_server() as (_, port, _, _):
        written = asyncio.run(shoot(port, options.out))
    for path in written:
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
