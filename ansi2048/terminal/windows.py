"""The Windows console: colorama for the escape codes, readchar's reader over
``msvcrt`` for keys. The platform modules are imported inside the functions,
so this module imports anywhere (the tests run it with a fake ``msvcrt``)."""

from __future__ import annotations

import sys
from contextlib import contextmanager
from typing import IO, Any, Dict, Iterator, List, Optional

from ..keys import Action, KeyDecoder
from .console import Console, ScreenHooks
from .streams import terminal_size

__all__ = ["open_console", "open_terminal_output", "quiet_terminal", "windows_key_table"]

# How often the console loop wakes to notice a resized window.
_POLL_INTERVAL = 0.05
# How often a wait for a key during an animation looks: well under a frame.
_KEY_POLL = 0.005


@contextmanager
def open_console(stdin: IO[Any], stdout: IO[Any], hooks: ScreenHooks) -> Iterator[Console]:
    """Take the console for the session. Keys come from the console itself
    (readchar over ``msvcrt``), not from ``stdin``; resizes are noticed by
    polling, since the console sends no signal."""
    import msvcrt  # type: ignore[import-not-found,unused-ignore]
    import time

    import colorama
    import readchar

    before = sys.stdout
    colorama.just_fix_windows_console()
    # On Windows 10+ colorama switches on native VT processing and leaves
    # stdout alone; on a legacy console it wraps stdout to convert escapes.
    legacy = sys.stdout is not before
    out = sys.stdout
    keys = windows_key_table(readchar.key)
    size = [terminal_size(1)]

    def read_key(decoder: KeyDecoder) -> List[Action]:
        try:
            key = readchar.readkey()
        except KeyboardInterrupt:  # readchar raises it for Ctrl-C
            return [Action.QUIT]
        action = keys.get(key)
        if action is not None:
            return [action]
        return decoder.feed(key.encode("utf-8", "replace"))

    def read_actions(decoder: KeyDecoder) -> List[Action]:
        """Block until at least one action (or a resize: an empty list), then
        take every key already typed, so the next frame shows them all."""
        while not msvcrt.kbhit():  # type: ignore[attr-defined,unused-ignore]
            time.sleep(_POLL_INTERVAL)
            now = terminal_size(1)
            if now != size[0]:
                size[0] = now
                hooks.redraw()
        actions = read_key(decoder)
        while msvcrt.kbhit():  # type: ignore[attr-defined,unused-ignore]
            actions += read_key(decoder)
        return actions

    def key_ready(seconds: float) -> bool:
        """Wait up to ``seconds`` for a key: the console has no select, so poll."""
        deadline = time.monotonic() + seconds
        while not msvcrt.kbhit():  # type: ignore[attr-defined,unused-ignore]
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            time.sleep(min(left, _KEY_POLL))
        return True

    def write(text: str) -> None:
        out.write(text)
        out.flush()

    yield Console(read_actions, write, lambda: terminal_size(1), legacy=legacy, key_ready=key_ready)


def windows_key_table(key: Any) -> Dict[str, Action]:
    """readchar's Windows key names for the arrows -> actions. ``key`` is the
    ``readchar.key`` module (passed in so tests can hand over a stand-in)."""
    return {key.UP: Action.UP, key.DOWN: Action.DOWN, key.LEFT: Action.LEFT, key.RIGHT: Action.RIGHT}


@contextmanager
def quiet_terminal(fd: int) -> Iterator[None]:
    """Nothing to do: the Windows console does not echo keys that no one reads."""
    yield


def open_terminal_output(stdin: IO[Any]) -> Optional[IO[str]]:
    """None: the console session writes through ``sys.stdout`` (colorama),
    so with stdout redirected the keys are read as a stream, as before."""
    return None
