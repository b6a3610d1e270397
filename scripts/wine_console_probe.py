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
    import msvcrt

    kernel32: Any = ctypes.WinDLL("kernel32", use_last_error=True)  # type: ignore[attr-defined,unused-ignore]
    kernel32.CreateFileW.restype = wintypes.HANDLE
    kernel32.CreateFileW.argtypes = [wintypes.LPCWSTR, wintypes.DWORD, wintypes.DWORD, wintypes.LPVOID,
                                     wintypes.DWORD, wintypes.DWORD, wintypes.HANDLE]
    kernel32.GetConsoleMode.argtypes = [wintypes.HANDLE, ctypes.POINTER(wintypes.DWORD)]
    kernel32.SetConsoleMode.argtypes = [wintypes.HANDLE, wintypes.DWORD]
    kernel32.WriteConsoleInputW.argtypes = [wintypes.HANDLE, ctypes.c_void_p, wintypes.DWORD, ctypes.POINTER(wintypes.DWORD)]
    kernel32.FreeConsole()
    allocated = kernel32.AllocConsole()  # none when started from a pipe; a no-op in a console
    kernel32.GetStdHandle.restype = wintypes.HANDLE
    conin = kernel32.GetStdHandle(-10)  # the console's input, whoever set up the streams
    mode = wintypes.DWORD()
    print("allocated a console:", bool(allocated))
    print("console input mode:", hex(mode.value) if kernel32.GetConsoleMode(conin, ctypes.byref(mode)) else None)

    def press(char: str, vk: int, scan: int, enhanced: bool = False) -> None:
        records = (INPUT_RECORD * 2)()
        for record, down in zip(records, (True, False)):
            record.EventType = KEY_EVENT
            record.KeyEvent = KEY_EVENT_RECORD(down, 1, vk, scan, char, ENHANCED_KEY if enhanced else 0)
        written = wintypes.DWORD()
        assert kernel32.WriteConsoleInputW(conin, records, 2, ctypes.byref(written)), ctypes.get_last_error()

    def unget(char: str) -> str:
        try:
            msvcrt.ungetwch(char)  # type: ignore[attr-defined,unused-ignore]
        except OSError:
            return "refused"
        return "accepted"

    facts: List[str] = []
    press("\0", 0x26, 0x48, enhanced=True)  # the up arrow
    facts.append(f"kbhit with an arrow waiting: {msvcrt.kbhit()}")  # type: ignore[attr-defined,unused-ignore]
    facts.append(f"arrow, first getwch: {msvcrt.getwch()!r}")  # type: ignore[attr-defined,unused-ignore]
    facts.append(f"kbhit with its scan code waiting: {msvcrt.kbhit()}")  # type: ignore[attr-defined,unused-ignore]
    facts.append(f"ungetwch then: {unget(chr(0xE0))}")
    facts.append(f"arrow, second getwch: {msvcrt.getwch()!r}")  # type: ignore[attr-defined,unused-ignore]
    press("à", 0x30, 0x0B)  # à on AZERTY (the 0 key)
    facts.append(f"à, getwch: {msvcrt.getwch()!r}")  # type: ignore[attr-defined,unused-ignore]
    facts.append(f"ungetwch after à: {unget(chr(0xE0))}")
    facts.append(f"getwch after that: {msvcrt.getwch()!r}")  # type: ignore[attr-defined,unused-ignore]
    facts.append(f"kbhit with nothing typed: {msvcrt.kbhit()}")  # type: ignore[attr-defined,unused-ignore]
    kernel32.SetConsoleMode(conin, mode.value & ~0x0001)
    press("\x03", 0x43, 0x2E)
    facts.append(f"Ctrl-C, processed input off: {msvcrt.getwch()!r}")  # type: ignore[attr-defined,unused-ignore]
    kernel32.SetConsoleMode(conin, mode.value)
    print("\n".join(facts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
