"""The entry point: options, the run's context, the play mode, exit codes.

Modes, chosen from what stdin and stdout are:
- stdin and stdout a terminal (and no ``--json``): interactive play
  (:mod:`.interactive`), with the game kept between runs;
- otherwise a stream of keys (:mod:`.piped`): with ``--json`` one JSON object
  per action key; with stdout a terminal the game is shown as frames;
  otherwise the final board and a summary are printed at the end.
"""

from __future__ import annotations

import os
import sys
from typing import IO, Any, Optional, Sequence, cast

from .options import EXIT_USAGE, parse_options

__all__ = ["EXIT_ERROR", "EXIT_OK", "EXIT_USAGE", "main"]

EXIT_OK = 0
EXIT_ERROR = 1  # an unexpected error, said in one line
# 128 + the signal's number when a signal ends the game, as shells report it.


def _usage_error(message: str, stderr: IO[str]) -> int:
    stderr.write(f"ansi2048: error: {message}\n")
    return EXIT_USAGE


def _same_file(stream: IO[Any], path: str) -> bool:
    try:
        return os.path.samefile(stream.fileno(), path)
    except (OSError, ValueError, TypeError, AttributeError):
        return False


def _random_seed() -> int:
    return int.from_bytes(os.urandom(4), "big")


def _cast_problem(path: str, stdin: IO[Any], record: Optional[str]) -> Optional[str]:
    """Why --cast may not write ``path``, if it may not: an existing file is
    overwritten only if it is empty, an asciicast or a recording."""
    from .cast import is_ours

    if _same_file(stdin, path):
        return f"{path!r} is the input being replayed"
    if record is not None and os.path.abspath(record) == os.path.abspath(path):
        return f"{path!r} is also the --record file"
    try:
        with open(path, "rb") as file:
            head = file.read(4096)
    except OSError:
        return None  # missing (fine), or unreadable: opening it for writing says why
    if not is_ours(head):
        return f"{path!r} exists and is not an asciicast or a recording; not overwriting it"
    return None


def main(argv: Optional[Sequence[str]] = None) -> int:
    options = parse_options(argv)  # --help, --version and bad options end here
    import time

    from .cast import CastWriter
    from .config import apply_config, load_config
    from .context import Context
    from .recording import Recorder, RecordError
    from .terminal.signals import Hangup
    from .terminal.streams import isatty

    # Optional: under pythonw (no console) these are None.
    stdin = cast(Optional[IO[Any]], sys.stdin)
    stdout = cast(Optional[IO[str]], sys.stdout)
    stderr = sys.stderr
    env = os.environ
    if stdin is None or stdout is None:
        stderr.write("ansi2048: error: no standard input or output\n")
        return EXIT_ERROR

    def warn(message: str) -> None:
        stderr.write(f"ansi2048: warning: {message}\n")
        stderr.flush()

    # The keyboard game needs a terminal on both ends; anything else
    # (a pipe, a file, --json for a bot) is a stream of keys.
    interactive = isatty(stdin) and isatty(stdout) and not options.json
    options = apply_config(options, load_config(env, warn), interactive)
    if options.cast is not None:
        problem = _cast_problem(options.cast, stdin, options.record)
        if problem:
            return _usage_error(f"argument --cast: {problem}", stderr)
    record_stream: Optional[IO[str]] = None
    if options.record is not None:
        if _same_file(stdin, options.record):
            return _usage_error(f"argument --record: {options.record!r} is the input being replayed", stderr)
        try:
            record_stream = open(options.record, "w", encoding="ascii", newline="\n")  # noqa: SIM115
        except OSError as error:
            return _usage_error(f"argument --record: cannot write {options.record!r}: {error.strerror}", stderr)
    cast_writer: Optional[CastWriter] = None
    if options.cast is not None:
        try:
            cast_stream = open(options.cast, "w", encoding="utf-8", newline="\n")  # noqa: SIM115
        except OSError as error:
            if record_stream is not None:
                record_stream.close()
            return _usage_error(f"argument --cast: cannot write {options.cast!r}: {error.strerror}", stderr)
        theme = options.theme or "classic"
        cast_writer = CastWriter(cast_stream, time.monotonic, warn, timestamp=int(time.time()), env=env, theme=theme)

    recorder = Recorder(record_stream, warn)
    ctx = Context(options, stdin, stdout, env, warn, _random_seed, recorder, clock=time.monotonic, cast=cast_writer)
    try:
        if interactive:
            from .interactive import play_terminal

            return play_terminal(ctx)
        from .piped import play_piped

        return play_piped(ctx)
    except RecordError as error:
        return _usage_error(f"argument --record: {error}", stderr)
    except BrokenPipeError:
        # The reader of our output left (a bot exited, `| head`): not an error.
        _silence_stdout()
        return EXIT_OK
    except KeyboardInterrupt:
        return 128 + 2
    except Hangup as hangup:
        return 128 + hangup.signum
    except Exception as error:  # the one place that turns a crash into one line
        if env.get("ANSI2048_DEBUG"):
            raise
        stderr.write(f"ansi2048: error: {type(error).__name__}: {error} (ANSI2048_DEBUG=1 shows the traceback)\n")
        return EXIT_ERROR
    finally:
        recorder.close()
        if cast_writer is not None:
            cast_writer.close()


def _silence_stdout() -> None:
    # Python flushes stdout at exit; point it at devnull so that flush cannot
    # raise a second BrokenPipeError.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
