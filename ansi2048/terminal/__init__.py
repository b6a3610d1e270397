"""The imperative shell around the terminal (modes, keys, size, signals).

The platform is chosen once, here, and both sides offer the same names:

- ``open_console(stdin, stdout, hooks)``: a context manager that takes the
  terminal for the whole session (raw mode, hidden echo) and gives a
  :class:`~.console.Console` (read actions, write frames, size); it hands the
  terminal back as it was on every exit.
- ``quiet_terminal(fd)``: no echo while a piped replay is drawn on ``fd``.
- ``open_terminal_output(stdin)``: a text stream that writes to the terminal
  ``stdin`` reads (stdout being a pipe or a file), or None.

:mod:`.streams` (writes, size, the pipe reader) and :mod:`.signals`
(hangups) are shared by both.
"""

from __future__ import annotations

import sys

if sys.platform == "win32":
    from .windows import open_console, open_terminal_output, quiet_terminal
else:
    from .posix import open_console, open_terminal_output, quiet_terminal

__all__ = ["open_console", "open_terminal_output", "quiet_terminal"]
