"""The entry point: options, the run's context, the play mode, exit codes.

Modes: ``--stats`` and ``--replay-best`` show your records
(:mod:`.records_cli`); otherwise, chosen from what stdin and stdout are:
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


def main(argv: Optional[Sequence[str]] = None) -> int:
    options = parse_options(argv)  # --help, --version and bad options end here
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
    record_stream: Optional[IO[str]] = None
    if options.record is not None:
        if _same_file(stdin, options.record):
            return _usage_error(f"argument --record: {options.record!r} is the input being replayed", stderr)
        try:
            record_stream = open(options.record, "w", encoding="ascii", newline="\n")  # noqa: SIM115
        except OSError as error:
            return _usage_error(f"argument --record: cannot write {options.record!r}: {error.strerror}", stderr)

    def warn(message: str) -> None:
        stderr.write(f"ansi2048: warning: {message}\n")
        stderr.flush()

    recorder = Recorder(record_stream, warn)
    ctx = Context(options, stdin, stdout, env, warn, _random_seed, recorder)
    try:
        if options.stats or options.replay_best is not None:
            from .records_cli import NoSuchGame, replay_best, show_stats

            try:
                return show_stats(ctx) if options.stats else replay_best(ctx)
            except NoSuchGame as error:
                return _usage_error(str(error), stderr)
        # The keyboard game needs a terminal on both ends; anything else
        # (a pipe, a file, --json for a bot) is a stream of keys.
        if isatty(stdin) and isatty(stdout) and not options.json:
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


def _silence_stdout() -> None:
    # Python flushes stdout at exit; point it at devnull so that flush cannot
    # raise a second BrokenPipeError.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
