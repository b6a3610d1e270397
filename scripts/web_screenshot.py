#!/usr/bin/env python3
"""Screenshots of the browser door's page: docs/web-1280x800.png (a desktop
window) and docs/web-360x640.png (a phone in portrait), taken by headless
Chromium (Debian's chromium and chromium-driver, through Selenium) from a
real server: the game server and its door on a loopback port, a seeded
game, a few moves played through the page's own keyboard.

    python scripts/web_screenshot.py [--out docs] [--moves 40]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Iterator, Tuple

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # runnable from a checkout

SEED = 2048
SIZES = ((1280, 800, False), (360, 640, True))  # width, height, a phone (touch, its soft keyboard kept shut)
# Moves that keep a board busy without ending the game: round and round.
KEYS = "\x1b[D\x1b[B\x1b[C\x1b[B"


class DoorThread:
    """The game server and its door on a loopback port, on a thread of its own."""

    def __init__(self, data: Path) -> None:
        from ansi2048.serve.pool import AIPool
        from ansi2048.serve.server import GameServer
        from ansi2048.serve.store import open_store
        from ansi2048.serve.web.site import WebSite

        self.loop = asyncio.new_event_loop()
        store = open_store("", str(data))
        self.server = GameServer(store, AIPool(1), lambda: SEED)
        started = threading.Event()

        def serve() -> None:
            asyncio.set_event_loop(self.loop)
            self.loop.run_until_complete(store.open())
            self.site = WebSite(self.server.context)
            self.port = self.loop.run_until_complete(self.site.start("127.0.0.1", 0))[1]
            started.set()
            self.loop.run_forever()

        self.thread = threading.Thread(target=serve, daemon=True)
        self.thread.start()
        if not started.wait(30):
            raise SystemExit("web_screenshot: the server did not start")

    def stop(self) -> None:
        async def stopping() -> None:
            await self.site.stop_listening()
            await self.server.stop()
            await self.site.close()
            await self.server.context.store.close()

        asyncio.run_coroutine_threadsafe(stopping(), self.loop).result(30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


def chromium(profile: Path) -> Any:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    from tests.web_support import HEADLESS_FLAGS, chromium_browser, chromium_driver  # as the tests find and start it

    driver_path, browser = chromium_driver(), chromium_browser()
    if not driver_path or not browser:
        raise SystemExit("web_screenshot: needs chromium and chromedriver (apt-get install chromium chromium-driver)")
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for flag in (*HEADLESS_FLAGS, "--hide-scrollbars", f"--user-data-dir={profile}"):
        options.add_argument(flag)
    return webdriver.Chrome(options=options, service=Service(executable_path=driver_path))


SCREEN = (
    "if (!window.term) return '';"
    "const b = window.term.buffer.active; const out = [];"
    "for (let i = 0; i < window.term.rows; i++) { const l = b.getLine(b.viewportY + i);"
    " out.push(l ? l.translateToString(true) : ''); } return out.join('\\n');"
)


def screen_text(driver: Any) -> str:
    return str(driver.execute_script(SCREEN))


def moves_shown(driver: Any, moves: int, timeout: float = 30.0) -> None:
    end = time.monotonic() + timeout
    while f"Moves {moves}" not in screen_text(driver):
        if time.monotonic() > end:
            raise SystemExit(f"web_screenshot: the page did not show Moves {moves}:\n{screen_text(driver)}")
        time.sleep(0.1)


def shoot(driver: Any, origin: str, size: Tuple[int, int, bool], moves: int, out: Path) -> Path:
    width, height, phone = size
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": phone},
    )
    driver.execute_cdp_cmd("Emulation.setTouchEmulationEnabled", {"enabled": phone, "maxTouchPoints": 1})
    driver.get(origin + "/")
    moves_shown(driver, 0)
    for key in _keys(moves * 4):  # a key that moves nothing is no move: until ``moves`` are shown
        if f"Moves {moves}" in screen_text(driver):
            break
        # The page's own path for a key: what xterm.js's onData sends.
        driver.execute_script("window.term._core.coreService.triggerDataEvent(arguments[0], true);", key)
        time.sleep(0.05)
    moves_shown(driver, moves)
    time.sleep(0.5)  # the last motion settled
    path = out / f"web-{width}x{height}.png"
    driver.save_screenshot(str(path))
    return path


def _keys(moves: int) -> Iterator[str]:
    for index in range(moves):
        yield KEYS[(index % 4) * 3 : (index % 4) * 3 + 3]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs")
    parser.add_argument("--moves", type=int, default=30, help="moves played before the picture (default 30)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        door = DoorThread(Path(work) / "data")
        driver = chromium(Path(work) / "profile")
        try:
            for size in SIZES:
                print(shoot(driver, f"http://127.0.0.1:{door.port}", size, args.moves, args.out))
        finally:
            driver.quit()
            door.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
