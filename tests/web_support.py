"""What the browser door's tests share: the game server with its door on
loopback (:class:`WebServerThread`), a page's WebSocket as a script opens
it (:class:`PageSocket`), and a real headless Chromium driven by Selenium
(:func:`chromium`), whose absence skips a test on a developer's machine and
fails it in CI (CI must test the door in a browser)."""

from __future__ import annotations

import asyncio
import shutil
import sys
from contextlib import suppress
from pathlib import Path
from typing import Any, Iterator, List, Optional

import pytest

from .databases import skip_outside_ci
from .serve_support import SCREEN_WAIT, ServerThread

__all__ = [
    "HEADLESS_FLAGS",
    "PageSocket",
    "WebServerThread",
    "chromium",
    "chromium_browser",
    "chromium_driver",
    "screen_lines",
]


class WebServerThread(ServerThread):
    """The game server with its browser door on a free loopback port
    (``http_port``); stopped as ``ansi2048 serve`` stops them (serve/server.py's run)."""

    def __init__(self, data: Path, store: object, **kwargs: Any) -> None:
        super().__init__(data, store, **kwargs)
        from ansi2048.serve.web.site import WebSite

        async def started() -> Any:
            site = WebSite(self.server.context)
            return site, await site.start("127.0.0.1", 0)

        self.site, (_, self.http_port) = self.call(started())
        self.origin = f"http://127.0.0.1:{self.http_port}"

    def stop(self) -> None:
        if self.loop.is_running():
            self.call(self.site.stop_listening())
            self.call(self.server.stop())
            self.call(self.site.close())
            self.call(self.store.close())  # type: ignore[attr-defined]
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(10)


class PageSocket:
    """The page's WebSocket as a script opens it (aiohttp's client): what
    comes down, read through pyte as a terminal of its size would show it."""

    def __init__(
        self, origin: str, width: int = 80, height: int = 24, send_origin: Optional[str] = None, query: str = ""
    ) -> None:
        self.url = origin + "/socket" + query
        self.send_origin = origin if send_origin is None else send_origin
        self.width, self.height = width, height
        self.output = bytearray()
        self.texts: List[str] = []  # text messages down (the exit status)
        self.closed = False

    async def __aenter__(self) -> PageSocket:
        import aiohttp

        self._session = aiohttp.ClientSession()
        self.socket = await self._session.ws_connect(self.url, origin=self.send_origin or None)
        await self.socket.send_str(f"r{self.width}x{self.height}")
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.socket.close()
        await self._session.close()

    def text(self) -> str:
        from .screen import emulate

        return "\n".join(line.rstrip() for line in emulate(bytes(self.output), self.width, self.height).display)

    async def shows(self, wanted: str, timeout: float = SCREEN_WAIT) -> None:
        """Reads until ``wanted`` is on the screen (or the socket closes: fails)."""
        import aiohttp

        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while wanted not in self.text():
            left = end - loop.time()
            if left <= 0 or self.closed:
                raise AssertionError(f"not seen: {wanted!r}; on screen:\n{self.text()}")
            with suppress(asyncio.TimeoutError):
                message = await self.socket.receive(timeout=left)
                if message.type == aiohttp.WSMsgType.BINARY:
                    self.output += message.data
                elif message.type == aiohttp.WSMsgType.TEXT:
                    self.texts.append(message.data)
                else:
                    self.closed = True

    async def until_closed(self, timeout: float = SCREEN_WAIT) -> None:
        with suppress(AssertionError):
            await self.shows("\0never\0", timeout)
        assert self.closed, "the socket stayed open"


# Chromium as Debian packages it (what .ci/run installs), or Google Chrome
# (what GitHub's Linux and macOS runners ship, with a chromedriver on PATH).
# Headless Chromium as root in a container, with nothing fetched from the
# network at its start (a closed network refuses it, many times over); the
# tests and scripts/web_screenshot.py start it alike.
HEADLESS_FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-dev-shm-usage",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
)
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
MAC_CHROME = "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome"


def chromium_browser() -> Optional[str]:
    found = next((path for path in map(shutil.which, BROWSERS) if path), None)
    if found is None and sys.platform == "darwin" and Path(MAC_CHROME).exists():
        found = MAC_CHROME
    return found


def chromium_driver() -> Optional[str]:
    """chromedriver, when a browser for it is installed too."""
    driver = shutil.which("chromedriver")
    return driver if driver and chromium_browser() else None


def chromium(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    """A headless Chromium (Debian's chromium and chromium-driver) with a
    fresh profile, driven by Selenium, its console's messages kept; a
    fixture's body (``yield from``)."""
    if sys.platform == "win32":
        pytest.skip("the browser tests drive Debian's Chromium: POSIX only")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        skip_outside_ci(request, "the browser door in a real browser", "selenium is not installed")
    driver_path = chromium_driver()
    if driver_path is None:
        skip_outside_ci(request, "the browser door in a real browser", "no chromium (or chrome) with chromedriver")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium_browser() or ""
    for flag in (*HEADLESS_FLAGS, f"--user-data-dir={tmp_path / 'chromium-profile'}", "--window-size=1024,768"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # The driver named: Selenium's manager would look for one on the network first.
    driver = webdriver.Chrome(options=options, service=Service(executable_path=driver_path))
    try:
        yield driver
    finally:
        driver.quit()


SCREEN_SCRIPT = """
if (!window.term) { return []; }  // the page still loading
const buffer = window.term.buffer.active;
const lines = [];
for (let i = 0; i < window.term.rows; i++) {
  const line = buffer.getLine(buffer.viewportY + i);
  lines.push(line ? line.translateToString(true) : "");
}
return lines;
"""


def screen_lines(driver: Any) -> List[str]:
    """What the page's terminal shows, line by line (xterm.js's buffer)."""
    return list(driver.execute_script(SCREEN_SCRIPT))
