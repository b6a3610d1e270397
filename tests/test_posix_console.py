"""The POSIX console's read loop without a pty: what it does with the keys it
reads and the signals its handlers noted, driven through fakes of select,
read, the terminal's modes and the job's stop. tests/test_terminal.py and
tests/test_resize.py try the same paths on a real pty, end to end."""

from __future__ import annotations

import errno
import signal
import sys
from collections import deque
from typing import Deque, Dict, List, Optional, Union

import pytest

if sys.platform == "win32":  # the module reads termios; the signal names below are POSIX's
    pytest.skip("POSIX only: termios and job-control signals", allow_module_level=True)

from ansi2048.game.keys import Action, KeyDecoder
from ansi2048.terminal.console import ESC_TIMEOUT, ScreenHooks
from ansi2048.terminal.posix import PosixConsole
from ansi2048.terminal.signals import Hangup

pytestmark = pytest.mark.posix("termios and job-control signals")

IN, WAKE = 10, 11
UP, DOWN, LEFT, RIGHT = Action.UP, Action.DOWN, Action.LEFT, Action.RIGHT
Read = Union[bytes, OSError]


class Rig:
    """A console over fakes, logging what it does to the terminal and the
    screen in order. ``ready`` holds what each wait returns (fds ready), and
    ``input`` what each read of the terminal gives; a signal is "delivered"
    as the real handler is: noted, and the wake-up pipe made readable."""

    def __init__(self) -> None:
        self.log: List[str] = []
        self.ready: Deque[List[int]] = deque()
        self.input: Deque[Read] = deque()
        self.wakeups = 0
        self.waits: List[Optional[float]] = []
        self.during_wait: Dict[int, int] = {}  # the nth wait (from 1) -> a signal delivered during it
        self.written: List[bytes] = []
        self.write_error: Optional[OSError] = None
        self.now = 100.0
        self.continued_by_fg = True  # a stop ends with SIGCONT, as fg sends it
        rig = self

        class Terminal:
            def enter(self) -> None:
                rig.log.append("terminal game mode")

            def leave(self) -> None:
                rig.log.append("terminal as it was")

        hooks = ScreenHooks(redraw=lambda: self.log.append("redraw"), leave=lambda: self.log.append("screen left"))
        self.console = PosixConsole(
            IN,
            WAKE,
            Terminal(),
            hooks,
            wait=self.wait,
            read=self.read,
            write=self.write,
            size=lambda: (80, 24),
            stop_job=self.stop_job,
            clock=lambda: self.now,
        )

    def wait(self, fds: List[int], timeout: Optional[float]) -> List[int]:
        assert fds in ([IN, WAKE], [WAKE])  # the wake-up alone: a suspend waiting for its continue to be noted
        self.waits.append(timeout)
        if not self.ready:
            raise AssertionError("the console would block here for good")
        ready, signum = self.ready.popleft(), self.during_wait.pop(len(self.waits), None)
        if signum is not None:  # delivered while the loop waits
            self.signal(signum)
        if not ready and timeout is not None:
            self.now += timeout  # nothing came: the whole timeout went by
        return ready

    def read(self, fd: int) -> bytes:
        if fd == WAKE:
            if self.wakeups:
                self.wakeups = 0
                return b"\x00"
            raise BlockingIOError(errno.EAGAIN, "drained")
        item = self.input.popleft()
        if isinstance(item, OSError):
            raise item
        return item

    def write(self, data: bytes) -> None:
        if self.write_error is not None:
            raise self.write_error
        self.written.append(data)

    def stop_job(self) -> None:
        self.log.append("job stopped")
        if self.continued_by_fg:
            self.signal(signal.SIGCONT)  # fg: the handler notes it while the loop is in suspend

    def signal(self, signum: int) -> None:
        self.console.note(signum)
        self.wakeups += 1

    def keys(self, *chunks: Read) -> None:
        """Keys arriving: each chunk one read, each read after a wait that finds input."""
        for chunk in chunks:
            self.input.append(chunk)
            self.ready.append([IN])


SUSPENDED = ["screen left", "terminal as it was", "job stopped", "terminal game mode", "redraw"]


def test_keys_are_decoded_and_the_read_blocks_with_no_timeout() -> None:
    rig = Rig()
    rig.keys(b"wasd")
    assert rig.console.read_actions(KeyDecoder(comments=False)) == [UP, LEFT, DOWN, RIGHT]
    assert rig.waits == [None] and rig.log == []


def test_keys_that_are_no_action_return_an_empty_list_rather_than_wait_for_more() -> None:
    rig = Rig()
    rig.keys(b"xyz")
    assert rig.console.read_actions(KeyDecoder(comments=False)) == []


def test_ctrl_z_typed_suspends_there_and_the_keys_after_it_count_on_return() -> None:
    rig = Rig()
    rig.keys(b"w\x1as")
    assert rig.console.read_actions(KeyDecoder(comments=False)) == [UP, DOWN]
    assert rig.log == SUSPENDED
    # fg's SIGCONT was this suspend's own: nothing is left to act on, so the
    # next read blocks for keys rather than redrawing the screen again.
    assert rig.console.pending == set()
    rig.ready.append([WAKE])  # its wake-up byte, still in the pipe
    rig.keys(b"a")
    assert rig.console.read_actions(KeyDecoder(comments=False)) == [LEFT]
    assert rig.log == SUSPENDED


def test_fgs_continue_noted_late_is_still_the_suspends_own_and_draws_no_second_frame() -> None:
    """The SIGCONT's handler ran on another thread (the AI loading, under
    load): Python notes it only once the main thread looks again, after
    ``stop_job`` returned. It is still this suspend's continue: one redraw,
    and the next read gives the keys (issue 40, item 18)."""
    rig = Rig()
    rig.continued_by_fg = False  # not noted by the time the job runs again...
    rig.during_wait[2] = signal.SIGCONT  # ...but at the next look
    rig.keys(b"\x1a")
    rig.ready.append([WAKE])  # the handler's wake-up
    rig.keys(b"a")
    decoder = KeyDecoder(comments=False)
    assert rig.console.read_actions(decoder) == []
    assert rig.console.read_actions(decoder) == [LEFT]
    assert rig.log == SUSPENDED and rig.console.pending == set()


def test_a_stop_signal_from_outside_suspends_like_ctrl_z_and_returns_to_the_loop() -> None:
    rig = Rig()
    rig.signal(signal.SIGTSTP)  # kill -TSTP, or Ctrl-Z with ISIG on elsewhere
    rig.ready.append([WAKE])
    assert rig.console.read_actions(KeyDecoder(comments=False)) == []
    assert rig.log == SUSPENDED and rig.console.pending == set()


def test_a_continue_after_someone_elses_stop_takes_the_terminal_again_and_redraws() -> None:
    rig = Rig()
    rig.signal(signal.SIGCONT)  # kill -STOP then kill -CONT: the shell may have changed the modes
    rig.ready.append([WAKE])
    assert rig.console.read_actions(KeyDecoder(comments=False)) == []
    assert rig.log == ["terminal game mode", "screen left", "redraw"]


def test_a_resize_redraws_once_and_returns_to_the_loop() -> None:
    rig = Rig()
    rig.signal(signal.SIGWINCH)
    rig.signal(signal.SIGWINCH)  # a storm of them before the loop wakes: one redraw
    rig.ready.append([WAKE])
    assert rig.console.read_actions(KeyDecoder(comments=False)) == []
    assert rig.log == ["redraw"]


def test_a_resize_noted_before_the_read_is_drawn_before_the_keys_are_read() -> None:
    rig = Rig()
    rig.signal(signal.SIGWINCH)  # seen by key_ready, say, which took its wake-up
    rig.keys(b"d")
    assert rig.console.read_actions(KeyDecoder(comments=False)) == []
    assert rig.log == ["redraw"] and rig.waits == []
    assert rig.console.read_actions(KeyDecoder(comments=False)) == [RIGHT]


def test_a_resize_and_keys_in_one_wait_redraw_and_give_the_keys() -> None:
    rig = Rig()
    rig.input.append(b"d")
    rig.ready.append([IN, WAKE])
    rig.during_wait[1] = signal.SIGWINCH
    assert rig.console.read_actions(KeyDecoder(comments=False)) == [RIGHT]
    assert rig.log == ["redraw"]


def test_a_lone_esc_waits_the_escape_timeout_then_counts_as_nothing() -> None:
    rig = Rig()
    decoder = KeyDecoder(comments=False)
    rig.keys(b"\x1b")
    rig.ready.append([])  # nothing more within the timeout
    assert rig.console.read_actions(decoder) == []
    assert rig.waits == [None, ESC_TIMEOUT] and not decoder.pending
    rig.keys(b"[A")  # so "[A" typed later is two keys, not the rest of an arrow
    assert rig.console.read_actions(decoder) == [LEFT]


def test_an_arrow_split_across_reads_is_one_key() -> None:
    rig = Rig()
    rig.keys(b"\x1b", b"[A")
    assert rig.console.read_actions(KeyDecoder(comments=False)) == [UP]
    assert rig.waits == [None, ESC_TIMEOUT]


def test_a_signal_waits_for_a_pending_escape_sequence_to_end_first() -> None:
    rig = Rig()
    decoder = KeyDecoder(comments=False)
    rig.keys(b"\x1b")
    rig.ready.append([])
    assert rig.console.read_actions(decoder) == []
    rig.keys(b"\x1b", b"[B")  # another ESC; a resize lands while its rest is awaited
    rig.during_wait[len(rig.waits) + 2] = signal.SIGWINCH
    rig.ready[-1] = [IN, WAKE]
    assert rig.console.read_actions(decoder) == [DOWN]
    assert rig.log == ["redraw"] and rig.waits[-1] == ESC_TIMEOUT


@pytest.mark.parametrize("gone", [b"", OSError(errno.EIO, "I/O error"), OSError(errno.ENXIO, "gone")])
def test_the_end_of_the_terminal_is_a_hangup(gone: Read) -> None:
    rig = Rig()
    rig.keys(gone)
    with pytest.raises(Hangup) as hangup:
        rig.console.read_actions(KeyDecoder(comments=False))
    assert hangup.value.signum == signal.SIGHUP


def test_another_read_error_is_no_hangup() -> None:
    rig = Rig()
    rig.keys(OSError(errno.EBADF, "bad file descriptor"))
    with pytest.raises(OSError) as error:
        rig.console.read_actions(KeyDecoder(comments=False))
    assert error.value.errno == errno.EBADF


def test_key_ready_says_whether_a_key_or_a_signal_came_in_time() -> None:
    rig = Rig()
    rig.ready.append([])
    assert not rig.console.key_ready(0.25)
    assert rig.waits == [0.25]
    rig.ready.append([IN])
    assert rig.console.key_ready(0.25)
    rig.signal(signal.SIGWINCH)
    rig.ready.append([WAKE])
    assert rig.console.key_ready(0.25)
    # read_actions acts on the signal key_ready saw, without waiting again.
    waits = len(rig.waits)
    assert rig.console.read_actions(KeyDecoder(comments=False)) == []
    assert len(rig.waits) == waits and rig.log == ["redraw"]


def test_key_ready_waits_on_past_a_wakeup_already_dealt_with() -> None:
    # fg's SIGCONT after a Ctrl-Z wakes the wait, but suspend took the
    # terminal back already: autoplay must go on waiting for its next move,
    # not hand over to a read that blocks until a key.
    rig = Rig()
    rig.wakeups = 1
    rig.ready.append([WAKE])
    rig.ready.append([])  # then nothing, for the rest of the wait
    assert not rig.console.key_ready(0.25)
    assert len(rig.waits) == 2 and rig.wakeups == 0


def test_negative_waits_are_no_wait() -> None:
    rig = Rig()
    rig.ready.append([])
    assert not rig.console.key_ready(-1.0)
    assert rig.waits == [0.0]


def test_frames_are_written_as_utf8_and_a_closed_window_is_a_hangup() -> None:
    rig = Rig()
    console = rig.console.console()
    console.write("2048 ▲")
    assert rig.written == ["2048 ▲".encode()]
    assert console.size() == (80, 24) and console.legacy is False and console.key_ready is not None
    rig.write_error = OSError(errno.EIO, "I/O error")
    with pytest.raises(Hangup):
        console.write("frame")
    rig.write_error = OSError(errno.ENOSPC, "no space")
    with pytest.raises(OSError):
        console.write("frame")


def signals_noted(rig: Rig) -> Dict[int, bool]:
    return {signum: signum in rig.console.pending for signum in (signal.SIGTSTP, signal.SIGCONT, signal.SIGWINCH)}


def test_the_handler_only_notes_a_signal() -> None:
    rig = Rig()
    rig.console.note(signal.SIGWINCH, None)
    assert signals_noted(rig) == {signal.SIGTSTP: False, signal.SIGCONT: False, signal.SIGWINCH: True}
    assert rig.log == [] and rig.waits == []
