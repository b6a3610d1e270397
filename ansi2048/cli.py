"""The entry point: options, the run's context, the play mode, exit codes.

Modes: ``--stats`` and ``--replay-best`` show your records
(:mod:`.records_cli`); otherwise, chosen from what stdin and stdout are:
- stdin a terminal (and no ``--json``): interactive play (:mod:`.interactive`),
  with the game kept between runs; when stdout is not that terminal
  (``ansi2048 | tee log``, ``ansi2048 > out``) the frames go to the terminal
  and stdout gets the final board and summary;
- otherwise a stream of keys (:mod:`.piped`): with ``--json`` one JSON object
  per action key; with stdout a terminal the game is shown as frames;
  otherwise the final board and a summary are printed at the end;
- ``--autoplay`` where there is no keyboard game to watch (stdout not a
  terminal, or ``--json``): the AI plays one whole game headless
  (:mod:`.headless`), reading no input.
"""

from __future__ import annotations

import os
import stat
import sys

from .options import EXIT_USAGE, parse_options

# Not typing's: --version and --help import as little as they can (see
# benchmarks/startup.py); mypy treats any name TYPE_CHECKING as true.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO, Any, Callable, Optional, Sequence

    from .cast import CastWriter
    from .context import Context

__all__ = ["EXIT_ERROR", "EXIT_OK", "EXIT_USAGE", "main"]

EXIT_OK = 0
EXIT_ERROR = 1  # an unexpected error, said in one line
# 128 + the signal's number when a signal ends the game, as shells report it.


def _say(stderr: Optional[IO[str]], line: str) -> None:
    """One line on standard error, or nothing if it cannot be written (closed,
    a full disk, a pipe nobody reads): a message must never stop the game."""
    if stderr is None:
        return
    try:
        stderr.write(line)
        stderr.flush()
    except (OSError, ValueError):
        # What is left in its buffer would fail again when Python flushes at
        # exit (and turn the exit status into 120): send it nowhere instead.
        _silence(stderr)


def _usage_error(message: str, stderr: Optional[IO[str]]) -> int:
    _say(stderr, f"ansi2048: error: {message}\n")
    return EXIT_USAGE


def _same_file(stream: IO[Any], path: str) -> bool:
    try:
        return os.path.samefile(stream.fileno(), path)
    except (OSError, ValueError, TypeError, AttributeError):
        return False


def _random_seed() -> int:
    return int.from_bytes(os.urandom(4), "big")


def _cast_problem(path: str, stdin: IO[Any], record: Optional[str]) -> Optional[str]:
    """Why --cast may not write ``path`` before it is even opened: it is the
    input, or the --record file (what it holds is checked on opening)."""
    if _same_file(stdin, path):
        return f"{path!r} is the input being replayed"
    if record is not None and os.path.abspath(record) == os.path.abspath(path):
        return f"{path!r} is also the --record file"
    return None


def main(argv: Optional[Sequence[str]] = None) -> int:
    options = parse_options(argv)  # --help, --version and bad options end here
    import time

    from .config import apply_config, load_config
    from .context import Context
    from .recording import Recorder, RecordError, split_header
    from .terminal.signals import Hangup, ignore_ending_signals
    from .terminal.streams import isatty

    # Optional: under pythonw (no console) these are None.
    stdin: Optional[IO[Any]] = sys.stdin
    stdout: Optional[IO[str]] = sys.stdout
    stderr: Optional[IO[str]] = sys.stderr
    env = os.environ
    if stdin is None and (options.autoplay or options.stats or options.replay_best is not None):
        # Standard input closed (``<&-``) where none is read: plug its
        # descriptor with the null device, so no file opened later becomes it.
        stdin = open(os.devnull, "rb")  # noqa: SIM115 (open for the whole run)
    if stdin is None or stdout is None:
        _say(stderr, "ansi2048: error: no standard input or output\n")
        return EXIT_ERROR

    def warn(message: str) -> None:
        _say(stderr, f"ansi2048: warning: {message}\n")

    # Keys typed on a terminal are the keyboard game (frames on that
    # terminal, even with stdout redirected); anything else (a pipe, a file,
    # --json for a bot) is a stream of keys.
    keyboard = isatty(stdin) and not options.json
    options = apply_config(options, load_config(env, warn), keyboard)
    if options.cast is not None:
        problem = _cast_problem(options.cast, stdin, options.record)
        if problem:
            return _usage_error(f"argument --cast: {problem}", stderr)
    record_stream: Optional[IO[str]] = None
    if options.record is not None:
        if _same_file(stdin, options.record):
            return _usage_error(f"argument --record: {options.record!r} is the input being replayed", stderr)
        try:
            record_stream = _open_ours(
                options.record, lambda head: split_header(head)[0] is not None, "an ansi2048 recording", "ascii"
            )
        except NotOurs as error:
            return _usage_error(f"argument --record: {error}", stderr)
        except OSError as error:
            return _usage_error(f"argument --record: cannot write {options.record!r}: {error.strerror}", stderr)
    cast_writer: Optional[CastWriter] = None
    if options.cast is not None:
        from .cast import CastWriter, is_ours  # only now: not needed before the first frame

        try:
            cast_stream = _open_ours(options.cast, is_ours, "an asciicast or a recording", "utf-8")
        except NotOurs as error:
            if record_stream is not None:
                record_stream.close()
            return _usage_error(f"argument --cast: {error}", stderr)
        except OSError as error:
            if record_stream is not None:
                record_stream.close()
            return _usage_error(f"argument --cast: cannot write {options.cast!r}: {error.strerror}", stderr)
        theme = options.theme or "classic"
        cast_writer = CastWriter(cast_stream, time.monotonic, warn, timestamp=int(time.time()), env=env, theme=theme)

    recorder = Recorder(record_stream, warn)
    ctx = Context(
        options, stdin, stdout, env, warn, _random_seed, recorder, clock=time.monotonic, cast=cast_writer, stderr=stderr
    )
    try:
        if options.stats or options.replay_best is not None:
            from .records_cli import NoSuchGame, replay_best, show_stats

            try:
                return show_stats(ctx) if options.stats else replay_best(ctx)
            except NoSuchGame as error:
                return _usage_error(str(error), stderr)
        if options.autoplay and not (keyboard and isatty(stdout)):
            # Nothing to watch it on: the AI plays one whole game, reading no input.
            from .headless import play_headless

            return play_headless(ctx)
        if keyboard:
            if isatty(stdout):
                from .interactive import play_terminal

                return play_terminal(ctx)
            status = _play_beside_stdout(ctx)
            if status is not None:
                return status
        from .piped import play_piped

        return play_piped(ctx)
    except RecordError as error:
        return _usage_error(f"argument --record: {error}", stderr)
    except BrokenPipeError:
        # The reader of our output left (a bot exited, `| head`): not an error.
        _silence_stdout()
        return EXIT_OK
    except KeyboardInterrupt:
        ignore_ending_signals()  # no second one may interrupt the way out
        return 128 + 2
    except Hangup as hangup:
        ignore_ending_signals()
        return 128 + hangup.signum
    except Exception as error:  # the one place that turns a crash into one line
        if env.get("ANSI2048_DEBUG"):
            raise
        _say(stderr, f"ansi2048: error: {type(error).__name__}: {error} (ANSI2048_DEBUG=1 shows the traceback)\n")
        return EXIT_ERROR
    finally:
        recorder.close()
        if cast_writer is not None:
            cast_writer.close()


def _play_beside_stdout(ctx: Context) -> Optional[int]:
    """The keyboard game on the terminal stdin reads, with stdout elsewhere
    (``ansi2048 | tee log``): frames on that terminal, the final board and
    summary on stdout. None if the terminal cannot be written to."""
    from dataclasses import replace

    from .interactive import play_terminal
    from .piped import write_summary
    from .terminal import open_terminal_output

    screen = open_terminal_output(ctx.stdin)
    if screen is None:
        return None
    with screen:
        return play_terminal(
            replace(ctx, stdout=screen),
            on_end=lambda session: write_summary(ctx.stdout, session, ctx.options, ctx.env),
        )


class NotOurs(Exception):
    """An output file (``--record``, ``--cast``) holds something else the user
    would lose: a bad option."""


def _open_ours(path: str, ours: Callable[[bytes], bool], what: str, encoding: str) -> IO[str]:
    """An output file, emptied only if it is empty or ``ours`` says its
    first bytes are one of ours; else NotOurs naming ``what`` it is not.

    Opened without truncating, checked, then truncated through the same
    descriptor: what was checked is what gets emptied, even if the name is
    swapped (or is a symlink) meanwhile. Not a regular file (a FIFO,
    /dev/stdout): written as it is, nothing there to destroy."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_BINARY", 0), 0o666)
    try:
        info = os.fstat(fd)
        if stat.S_ISREG(info.st_mode) and info.st_size > 0:
            if not ours(os.read(fd, 4096)):
                raise NotOurs(f"{path!r} is not {what}; not overwriting it")
            os.lseek(fd, 0, os.SEEK_SET)
            os.ftruncate(fd, 0)
        stream = open(fd, "w", encoding=encoding, newline="\n")  # noqa: SIM115
    except BaseException:
        os.close(fd)
        raise
    stream.buffer.raw.name = path  # type: ignore[attr-defined]  # for messages, instead of the descriptor
    return stream


def _silence(stream: IO[Any]) -> None:
    # Python flushes stdout and stderr at exit; point the stream at devnull so
    # that flush cannot raise a second error.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def _silence_stdout() -> None:
    _silence(sys.stdout)
