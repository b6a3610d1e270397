"""The browser door's cost: the time from a key in the page to its frame in
the page's terminal, and the server's CPU per key through the door against
SSH, on one machine over loopback.

``ansi2048 serve --http`` runs as its own process (SQLite in a temporary
directory). Three players in turn, each playing ``--keys`` keys of ``play
--no-animation`` (left, then right: the board keeps changing), one key at a
time, the next once its frame has come:

- in headless Chromium (Debian's chromium and chromium-driver, Selenium):
  each key goes in as xterm.js's own input event in the page, and its time
  runs until the terminal has parsed the first write that follows
  (``term.onWriteParsed``): key-to-frame p50 and p99, as a player sees it;
- a script on the WebSocket (aiohttp's client) and an SSH client (asyncssh)
  play the same keys the same way: the server's CPU seconds per 1,000 keys
  (user + system, from /proc: Linux only) through each door.

    python benchmarks/web.py [--keys 300] [--quick]

``--quick``: 20 keys each, a check that it all runs.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, List, Tuple

import asyncssh

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout without installing
sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks/serve.py's helpers

import serve as serve_benchmark  # benchmarks/serve.py

from ansi2048.render.repaint import FRAME_END

COMMAND = "play --no-animation"
KEYS = (b"\x1b[D", b"\x1b[C")  # left, right
_END = FRAME_END.encode()

# In the page: each key as xterm.js's input (what its onData sends up), the
# time until the terminal has parsed the next write; resolves with the times.
PAGE_SCRIPT = """
const [count, done] = [arguments[0], arguments[arguments.length - 1]];
const keys = ["\\x1b[D", "\\x1b[C"];
const times = [];
let started = 0;
let index = 0;
let timer = 0;
function next() {
  if (index === count) { listener.dispose(); done(times); return; }
  started = performance.now();
  timer = setTimeout(function () { started = 0; next(); }, 2000);  // a key that moved nothing: not counted
  window.term._core.coreService.triggerDataEvent(keys[index % 2], true);
  index += 1;
}
const listener = window.term.onWriteParsed(function () {
  if (started) {
    times.push(performance.now() - started);
    started = 0;
    clearTimeout(timer);
    setTimeout(next, 5);
  }
});
next();
"""


FIRST_LINE = "return window.term ? window.term.buffer.active.getLine(0).translateToString(true) : ''"


def start_server(data: Path) -> Tuple[subprocess.Popen[bytes], int, int]:
    """``ansi2048 serve --http`` on free loopback ports: the process, its SSH port and its HTTP port."""
    command = [sys.executable, "-m", "ansi2048", "serve", "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0"]
    process = subprocess.Popen(
        [*command, "--data-dir", str(data)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    assert process.stderr is not None
    ssh = re.search(rb":(\d+) \(host key", process.stderr.readline())
    http = re.search(rb":(\d+)/", process.stderr.readline())
    if ssh is None or http is None:
        process.kill()
        raise SystemExit("benchmarks/web.py: the server did not start")
    return process, int(ssh.group(1)), int(http.group(1))


def in_chromium(port: int, keys: int, profile: Path) -> List[float]:
    """Key-to-frame times (ms) in the page of a headless Chromium."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    driver_path, browser = shutil.which("chromedriver"), shutil.which("chromium")
    if not driver_path or not browser:
        raise SystemExit("benchmarks/web.py: needs chromium and chromedriver (apt-get install chromium-driver)")
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--no-first-run"):
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    options.add_argument("--window-size=1280,800")
    driver = webdriver.Chrome(options=options, service=Service(executable_path=driver_path))
    try:
        driver.set_script_timeout(60 + keys)
        driver.get(f"http://127.0.0.1:{port}/?command={COMMAND.replace(' ', '%20')}")
        end = time.monotonic() + 30
        while "Moves 0" not in str(driver.execute_script(FIRST_LINE)):
            if time.monotonic() > end:
                raise SystemExit("benchmarks/web.py: the page showed no board")
            time.sleep(0.1)
        return [float(t) for t in driver.execute_async_script(PAGE_SCRIPT, keys)]
    finally:
        driver.quit()


async def on_websocket(port: int, keys: int) -> None:
    import aiohttp

    async with aiohttp.ClientSession() as session:
        socket = await session.ws_connect(f"http://127.0.0.1:{port}/socket?command={COMMAND}")
        await socket.send_str("r100x30")
        await _frame(socket)
        for index in range(keys):
            await socket.send_str("i" + KEYS[index % 2].decode())
            await _frame(socket)
        await socket.close()


async def _frame(socket: Any) -> None:
    while True:
        message = await asyncio.wait_for(socket.receive(), 10)
        if isinstance(message.data, bytes) and _END in message.data:
            return


async def over_ssh(port: int, keys: int) -> None:
    async with asyncssh.connect(
        "127.0.0.1", port, username="bench", client_keys=[asyncssh.generate_private_key("ssh-ed25519")],
        known_hosts=None, encoding=None, agent_path=None,
    ) as conn:  # fmt: skip
        chan, player = await conn.create_session(
            serve_benchmark._Player, COMMAND, term_type="xterm-256color", term_size=(100, 30)
        )
        for index in range(keys + 1):
            player.frame.clear()
            if index:
                chan.write(KEYS[index % 2])
            await asyncio.wait_for(player.frame.wait(), 10)
        chan.close()


def cpu_per_thousand(pid: int, play: Any, keys: int) -> float:
    before = serve_benchmark.server_cpu(pid)
    asyncio.run(play)
    return (serve_benchmark.server_cpu(pid) - before) / keys * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keys", type=int, default=300)
    parser.add_argument("--quick", action="store_true", help="20 keys each: a check that it all runs")
    args = parser.parse_args()
    keys = 20 if args.quick else args.keys
    with tempfile.TemporaryDirectory() as work:
        process, ssh_port, http_port = start_server(Path(work) / "data")
        try:
            times = in_chromium(http_port, keys, Path(work) / "profile")
            web_cpu = cpu_per_thousand(process.pid, on_websocket(http_port, keys), keys)
            ssh_cpu = cpu_per_thousand(process.pid, over_ssh(ssh_port, keys), keys)
        finally:
            process.terminate()
            process.wait(10)
    p50, p99 = serve_benchmark.percentile(times, 0.5), serve_benchmark.percentile(times, 0.99)
    print(f"browser key-to-frame: p50 {p50:.1f} ms, p99 {p99:.1f} ms ({len(times)} keys in headless Chromium)")
    print(f"server CPU per 1,000 keys: web {web_cpu:.2f} s, ssh {ssh_cpu:.2f} s ({keys} keys each)")
    print(f"load average: {' '.join(f'{load:.1f}' for load in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
