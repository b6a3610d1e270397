"""The browser door in a real browser: headless Chromium (Debian's, driven
by Selenium) loads the page, and the game is played in its terminal. The
screen is read through xterm.js's buffer (``window.term``), as a screen
reader's tools may."""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterator, List

import pytest

pytest.importorskip("asyncssh", exc_type=ImportError)
pytest.importorskip("aiohttp", exc_type=ImportError)

from .serve_support import SCREEN_WAIT, MemoryStore
from .web_support import (
    WebServerThread,
    chromium as open_chromium,
    screen_lines,
)

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the server is for POSIX hosts (asyncssh, signals)")


@pytest.fixture
def chromium(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    yield from open_chromium(request, tmp_path)


@pytest.fixture
def door(tmp_path: Path) -> Iterator[WebServerThread]:
    with WebServerThread(tmp_path, MemoryStore(), seeds=[1234] * 8) as served:
        yield served


def wait_screen(driver: Any, wanted: Callable[[List[str]], bool], what: str, timeout: float = SCREEN_WAIT) -> List[str]:
    """The page's screen once ``wanted`` holds of it; fails after ``timeout`` s, showing it."""
    end = time.monotonic() + timeout
    lines = screen_lines(driver)
    while not wanted(lines):
        if time.monotonic() > end:
            raise AssertionError(f"not seen: {what}; on screen:\n" + "\n".join(lines))
        time.sleep(0.05)
        lines = screen_lines(driver)
    return lines


def shows(driver: Any, text: str) -> List[str]:
    return wait_screen(driver, lambda lines: any(text in line for line in lines), repr(text))


def console_errors(driver: Any) -> List[str]:
    return [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


def play_until_moved(driver: Any, press: Callable[[str], None]) -> None:
    """Each direction in turn until the board moves (which one can, the seed
    says): ``Moves`` past 0 in the header (a slow server may show two)."""
    moved = re.compile(r"Moves [1-9]")

    def has_moved(lines: List[str]) -> bool:
        return any(moved.search(line) for line in lines)

    for direction in ("left", "up", "right", "down"):
        press(direction)
        try:
            wait_screen(driver, has_moved, "a move", timeout=2)
            return
        except AssertionError:
            continue
    wait_screen(driver, has_moved, "a move")


def test_the_page_loads_without_an_error_and_the_board_appears(chromium: Any, door: WebServerThread) -> None:
    chromium.get(door.origin + "/")
    lines = shows(chromium, "Moves 0")
    assert any("Join the tiles" in line for line in lines)
    assert chromium.execute_script("return window.term.cols") >= 40
    assert console_errors(chromium) == []


def test_arrow_keys_move_the_board(chromium: Any, door: WebServerThread) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    chromium.get(door.origin + "/")
    shows(chromium, "Moves 0")
    typing = chromium.find_element(By.CSS_SELECTOR, ".xterm-helper-textarea")
    arrows = {"left": Keys.ARROW_LEFT, "up": Keys.ARROW_UP, "right": Keys.ARROW_RIGHT, "down": Keys.ARROW_DOWN}
    play_until_moved(chromium, lambda direction: typing.send_keys(arrows[direction]))
    typing.send_keys("q")  # the end of the session: what an SSH player sees, and a way to play again
    shows(chromium, "guest's game is not kept")
    again = chromium.find_element(By.ID, "again")
    wait_screen(chromium, lambda lines: again.is_displayed(), "the button to play again")
    again.click()
    shows(chromium, "Moves 0")
    assert console_errors(chromium) == []


# A swipe as a finger makes it on the terminal: touchstart, touchmove, touchend.
SWIPE = """
const [dx, dy] = arguments;
const element = document.getElementById("terminal");
const box = element.getBoundingClientRect();
const x = box.left + box.width / 2, y = box.top + box.height / 2;
function touch(type, atX, atY) {
  const point = new Touch({identifier: 1, target: element, clientX: atX, clientY: atY});
  const ending = type === "touchend";
  element.dispatchEvent(new TouchEvent(type, {
    touches: ending ? [] : [point], changedTouches: [point], bubbles: true, cancelable: true}));
}
touch("touchstart", x, y);
touch("touchmove", x + dx / 2, y + dy / 2);
touch("touchend", x + dx, y + dy);
"""


def test_a_swipe_on_the_board_moves_it(chromium: Any, door: WebServerThread) -> None:
    chromium.get(door.origin + "/")
    shows(chromium, "Moves 0")
    vectors = {"left": (-120, 0), "up": (0, -120), "right": (120, 0), "down": (0, 120)}
    play_until_moved(chromium, lambda direction: chromium.execute_script(SWIPE, *vectors[direction]))
    assert console_errors(chromium) == []


def test_the_button_bar_sends_its_keys(chromium: Any, door: WebServerThread) -> None:
    from selenium.webdriver.common.by import By

    chromium.get(door.origin + "/")
    shows(chromium, "Moves 0")
    chromium.find_element(By.CSS_SELECTOR, "button[data-key='?']").click()
    shows(chromium, "any key closes this help")  # the help screen
    assert console_errors(chromium) == []


def test_resizing_the_window_redraws_for_the_new_size(chromium: Any, door: WebServerThread) -> None:
    chromium.get(door.origin + "/")
    shows(chromium, "Moves 0")
    wide = chromium.execute_script("return window.term.cols")
    chromium.set_window_size(420, 700)
    wait_screen(chromium, lambda lines: chromium.execute_script("return window.term.cols") < wide, "fewer columns")
    # The game draws for the new size: its key line is the short one of a narrow window.
    lines = wait_screen(
        chromium,
        lambda lines: any("Moves 0" in line for line in lines) and any("u undo" in line for line in lines)
        and not any("wasd hjkl" in line for line in lines),
        "the frame drawn for the narrow window",
    )  # fmt: skip
    assert all(len(line) <= chromium.execute_script("return window.term.cols") for line in lines)
    assert console_errors(chromium) == []


def test_a_4x4_board_fits_a_phone_in_portrait(chromium: Any, door: WebServerThread) -> None:
    chromium.set_window_size(360, 640)
    chromium.get(door.origin + "/")
    lines = shows(chromium, "Moves 0")
    assert not any("too small" in line for line in lines)
    assert chromium.execute_script("return window.term.cols") >= 43  # the 4x4 board's big layout
    assert console_errors(chromium) == []
