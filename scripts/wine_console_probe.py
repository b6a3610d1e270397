"""What the Windows C runtime's console calls do with real key events.

Run it with a Windows CPython (under Wine: ``.ci/windows`` leaves one in its
cache). It writes key events into its own console's input (WriteConsoleInputW)
and prints what ``msvcrt`` gives back, the facts tests/test_windows.py's fakes
model:

- an arrow is a 0xE0 prefix then the scan code; ``ungetwch`` is refused while
  the scan code waits, and accepted after ``à`` (also 0xE0);
- whether ``kbhit`` sees the waiting scan code, and an arrow in the console;
- Ctrl-C with processed input off arrives as ``\\x03``.
"""

from __future__ import annotations

import ctypes
import sys
from ctypes import wintypes
from typing import Any, List


class KEY_EVENT_RECORD(ctypes.Structure):
    _fields_ = [
        ("bKeyDown", wintypes.BOOL),
        ("wRepeatCount", wintypes.WORD),
        ("wVirtualKeyCode", wintypes.WORD),
        ("wVirtualScanCode", wintypes.WORD),
        ("UnicodeChar", wintypes.WCHAR),
        ("dwControlKeyState", wintypes.DWORD),
    ]


class INPUT_RECORD(ctypes.Structure):
    _fields_ = [("EventType", wintypes.WORD), ("KeyEvent", KEY_EVENT_RECORD)]


KEY_EVENT, ENHANCED_KEY = 0x0001, 0x0100


def main() -> int:
    msvcrt: Any = __import__("msvcrt")
    kernel32: Any = getattr(ctypes, "WinDLL")("kernel32", use_last_error=True)  # noqa: B009 (Windows only)
    handle, dword = wintypes.HANDLE, wintypes.DWORD
    kernel32.GetStdHandle.restype = handle
    kernel32.GetConsoleMode.argtypes = [handle, ctypes.POINTER(dword)]
    kernel32.SetConsoleMode.argtypes = [handle, dword]
    kernel32.WriteConsoleInputW.argtypes = [handle, ctypes.c_void_p, dword, ctypes.POINTER(dword)]
    allocated = kernel32.AllocConsole()  # fails (False) when it already has one, as in wineconsole
    conin = kernel32.GetStdHandle(-10)  # the console's input
    mode = dword()
    has_mode = kernel32.GetConsoleMode(conin, ctypes.byref(mode))

    def press(char: str, vk: int, scan: int, enhanced: bool = False) -> None:
        records = (INPUT_RECORD * 2)()
        for record, down in zip(records, (True, False)):
            record.EventType = KEY_EVENT
            record.KeyEvent = KEY_EVENT_RECORD(down, 1, vk, scan, char, ENHANCED_KEY if enhanced else 0)
        written = wintypes.DWORD()
        assert kernel32.WriteConsoleInputW(conin, records, 2, ctypes.byref(written)), "WriteConsoleInputW failed"

    def unget(char: str) -> str:
        try:
            msvcrt.ungetwch(char)
        except OSError:
            return "refused"
        return "accepted"

    facts: List[str] = [f"a new console: {bool(allocated)}; input mode: {hex(mode.value) if has_mode else None}"]
    press("\0", 0x26, 0x48, enhanced=True)  # the up arrow
    facts.append(f"kbhit with an arrow waiting: {msvcrt.kbhit()}")
    facts.append(f"arrow, first getwch: {msvcrt.getwch()!r}")
    facts.append(f"kbhit with its scan code waiting: {msvcrt.kbhit()}")
    facts.append(f"ungetwch then: {unget(chr(0xE0))}")
    facts.append(f"arrow, second getwch: {msvcrt.getwch()!r}")
    press("à", 0x30, 0x0B)  # à on AZERTY (the 0 key)
    facts.append(f"à, getwch: {msvcrt.getwch()!r}")
    facts.append(f"ungetwch after à: {unget(chr(0xE0))}")
    facts.append(f"getwch after that: {msvcrt.getwch()!r}")
    facts.append(f"kbhit with nothing typed: {msvcrt.kbhit()}")
    kernel32.SetConsoleMode(conin, mode.value & ~0x0001)
    press("\x03", 0x43, 0x2E)
    facts.append(f"Ctrl-C, processed input off: {msvcrt.getwch()!r}")
    kernel32.SetConsoleMode(conin, mode.value)
    report = "\n".join(facts) + "\n"
    if len(sys.argv) > 1:  # the console is not where anyone reads: to a file
        with open(sys.argv[1], "w", encoding="utf-8") as out:
            out.write(report)
    print(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
