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

import errno
import os
import sys

from .options.parser import EXIT_ERROR, EXIT_OK, EXIT_USAGE, parse_options

# Not typing's: --version and --help import as little as they can (see
# benchmarks/startup.py); mypy treats any name TYPE_CHECKING as true.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO, Any, Mapping, Optional, Sequence

    from .options.context import Context
    from .render.cast import CastWriter
    from .storage.files import OutputSink

__all__ = ["EXIT_ERROR", "EXIT_OK", "EXIT_USAGE", "main"]

# 128 + the signal's number when a signal ends the game, as shells report it.
# When standard output's reader leaves: what a shell reports for a program
# SIGPIPE ended (13 on every POSIX system Python runs on); Windows has no
# SIGPIPE, and Python's own guidance there is 1.
_EXIT_READER_GONE = EXIT_ERROR if sys.platform == "win32" else 128 + 13


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


def _stderr_width(stderr: Optional[IO[str]]) -> Optional[int]:
    """The columns a diagnostic may take on standard error: its terminal's
    width but the last column (frames leave it free too), or None when it
    is a pipe or a file, where a diagnostic is one line whatever its length."""
    from .terminal.streams import isatty, terminal_size

    if stderr is None or not isatty(stderr):
        return None
    try:
        fd = stderr.fileno()
    except (AttributeError, ValueError, OSError):
        return None
    return max(20, terminal_size(fd)[0] - 1)


def _usage_error(message: str, stderr: Optional[IO[str]]) -> int:
    _say(stderr, f"ansi2048: error: {message}\n")
    return EXIT_USAGE


def _same_file(stream: IO[Any], path: str) -> bool:
    """``path`` names the file ``stream`` reads. Windows gives a pipe or a
    device no file id (inode 0 on device 0): every one would be the same as
    every other (a piped game's ``--record NUL`` was "the input"), so a
    stream without one is the same as nothing."""
    try:
        ours, theirs = os.fstat(stream.fileno()), os.stat(path)
    except (OSError, ValueError, TypeError, AttributeError):
        return False
    return ours.st_ino != 0 and os.path.samestat(ours, theirs)


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
    if (sys.argv[1:] if argv is None else argv)[:1] == ["serve"]:
        from .serve.cli import main as serve  # the game over SSH: a command of its own

        return serve(list(sys.argv[2:] if argv is None else argv[1:]))
    options = parse_options(argv)  # --help, --version and bad options end here
    import time

    from .options.config import apply_config, load_config
    from .options.context import Context
    from .records.recording import MAGIC, Recorder, split_header
    from .storage.files import NotOurs, PipelineEnded, open_output
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
        from .render.notice import warning_text  # only now: most runs warn of nothing

        _say(stderr, warning_text(message, _stderr_width(stderr)))

    # Keys typed on a terminal are the keyboard game (frames on that
    # terminal, even with stdout redirected); anything else (a pipe, a file,
    # --json for a bot) is a stream of keys.
    keyboard = isatty(stdin) and not options.json
    options = apply_config(options, load_config(env, warn), keyboard, warn)
    if options.cast is not None:
        problem = _cast_problem(options.cast, stdin, options.record)
        if problem:
            return _usage_error(f"argument --cast: {problem}", stderr)
    record_stream: Optional[OutputSink] = None
    if options.record is not None:
        if _same_file(stdin, options.record):
            return _usage_error(f"argument --record: {options.record!r} is the input being replayed", stderr)
        try:
            record_stream = open_output(
                options.record, lambda head: split_header(head)[0] is not None, "an ansi2048 recording", "ascii"
            )
        except NotOurs as error:
            return _usage_error(f"argument --record: {error}", stderr)
        except OSError as error:
            return _usage_error(f"argument --record: cannot write {options.record!r}: {error.strerror}", stderr)
        try:
            record_stream.write_early(MAGIC)  # a header that cannot be written is a recording lost
        except OSError as error:
            record_stream.close()
            return _usage_error(f"argument --record: cannot write {options.record!r}: {error.strerror}", stderr)
        record_stream.ends_pipeline = not keyboard and _same_file(stdout, options.record)
    cast_writer: Optional[CastWriter] = None
    if options.cast is not None:
        from .render.cast import CAST_START, CastWriter, is_ours  # only now: not needed before the first frame

        try:
            cast_stream = open_output(options.cast, is_ours, "an asciicast or a recording", "utf-8")
            try:
                cast_stream.write_early(CAST_START)  # as --record's header
            except OSError:
                cast_stream.close()
                raise
        except NotOurs as error:
            if record_stream is not None:
                record_stream.close()
            return _usage_error(f"argument --cast: {error}", stderr)
        except OSError as error:
            if record_stream is not None:
                record_stream.close()
            return _usage_error(f"argument --cast: cannot write {options.cast!r}: {error.strerror}", stderr)
        cast_stream.ends_pipeline = not keyboard and _same_file(stdout, options.cast)
        theme = options.theme or "classic"
        cast_writer = CastWriter(cast_stream, time.monotonic, warn, timestamp=int(time.time()), env=env, theme=theme)

    recorder = Recorder(record_stream, warn)
    # Not an IO subclass: it passes everything but write and flush through.
    guarded: IO[str] = _GuardedStdout(stdout)  # type: ignore[assignment]
    ctx = Context(
        options,
        stdin,
        guarded,
        env,
        warn,
        _random_seed,
        recorder,
        clock=time.monotonic,
        cast=cast_writer,
        stderr=stderr,
        program=program_name(sys.argv[0] if sys.argv else "", env, sys.executable),
    )
    try:
        status = _play(ctx, keyboard, stderr)
        guarded.flush()  # here, not at exit, where a failure could only be ignored
        return status
    except PipelineEnded:
        # Standard output's reader left (`| head -1`): the pipeline's normal
        # end, quiet as cat's; what is left unwritten goes nowhere.
        _silence(stdout)
        return _EXIT_READER_GONE
    except StdoutFailed as error:
        # A full disk, an I/O error: nothing more can be said there, so once
        # on stderr; what is left unwritten goes nowhere.
        _silence(stdout)
        _say(stderr, f"ansi2048: error: cannot write standard output: {error}\n")
        return EXIT_ERROR
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


def program_name(argv0: str, env: Mapping[str, str], executable: str) -> str:
    """The command that starts ansi2048 the way this run was started, as
    the player can type it again from where they are: ``ansi2048`` if the
    one on the PATH is this one; else the path they typed
    (``.venv/bin/ansi2048``: the README's install leaves it off the PATH);
    ``python -m ansi2048`` for ``python -m ansi2048``, with the same Python."""
    import shlex

    if os.path.basename(argv0) == "__main__.py":
        python = os.path.basename(executable)
        same = _on_path(python, executable, env)
        return f"{python if same else shlex.quote(executable)} -m ansi2048"
    if not argv0 or _on_path("ansi2048", argv0, env):
        return "ansi2048"
    if os.sep in argv0 or (os.altsep is not None and os.altsep in argv0):
        return argv0 if os.name == "nt" else shlex.quote(argv0)
    return "ansi2048"


def _on_path(name: str, path: str, env: Mapping[str, str]) -> bool:
    """Typing ``name`` runs ``path``: the first ``name`` on the PATH is it.
    (Not shutil.which: importing shutil costs the first frame a few ms.)"""
    suffixes = [""] + (env.get("PATHEXT", "").split(os.pathsep) if os.name == "nt" else [])
    for directory in env.get("PATH", "").split(os.pathsep):
        for suffix in suffixes:
            candidate = os.path.join(directory, name + suffix)
            if directory and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
                try:
                    return os.path.samefile(candidate, path)
                except OSError:
                    return False
    return False


def _play(ctx: Context, keyboard: bool, stderr: Optional[IO[str]]) -> int:
    """The play mode the options and the streams ask for; its exit status."""
    from .terminal.streams import isatty

    options = ctx.options
    if options.stats or options.replay_best is not None:
        from .play.stats import NoSuchGame, replay_best, show_stats

        try:
            return show_stats(ctx) if options.stats else replay_best(ctx)
        except NoSuchGame as error:
            return _usage_error(str(error), stderr)
    if options.autoplay and not (keyboard and isatty(ctx.stdout)):
        # Nothing to watch it on: the AI plays one whole game, reading no input.
        from .play.headless import play_headless

        return play_headless(ctx)
    if keyboard:
        if isatty(ctx.stdout):
            from .play.keyboard import play_terminal

            return play_terminal(ctx)
        status = _play_beside_stdout(ctx)
        if status is not None:
            return status
    from .play.piped import play_piped

    return play_piped(ctx)


class StdoutFailed(Exception):
    """Standard output cannot take what the game writes: the disk is full,
    an I/O error, ... Not an OSError, so that no handler of a file's errors
    takes it for its own: it ends the run, in :func:`main`."""


class _GuardedStdout:
    """Standard output, whose failed write or flush ends the run: a reader
    that left as :class:`~.files.PipelineEnded`, anything else as a
    :class:`StdoutFailed` saying why; everything else is the stream's own."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except OSError as error:
            raise _failed(error) from None

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as error:
            raise _failed(error) from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _failed(error: OSError) -> Exception:
    from .storage.files import PipelineEnded

    # On Windows the C runtime's write reports a pipe whose reader closed
    # as EINVAL, not EPIPE (measured under Wine, as CPython on Windows
    # reports `| head` having left): there a write of text to an open
    # standard output has no other cause of it.
    gone = isinstance(error, BrokenPipeError) or (sys.platform == "win32" and error.errno == errno.EINVAL)
    if gone:
        return PipelineEnded("standard output")
    return StdoutFailed(error.strerror or str(error))


def _play_beside_stdout(ctx: Context) -> Optional[int]:
    """The keyboard game on the terminal stdin reads, with stdout elsewhere
    (``ansi2048 | tee log``): frames on that terminal, the final board and
    summary on stdout. None if the terminal cannot be written to."""
    from dataclasses import replace

    from .play.keyboard import play_terminal
    from .play.piped import write_summary
    from .terminal import open_terminal_output

    screen = open_terminal_output(ctx.stdin)
    if screen is None:
        return None
    with screen:
        return play_terminal(
            replace(ctx, stdout=screen),
            on_end=lambda session: write_summary(ctx.stdout, session, ctx.options, ctx.env),
        )


def _silence(stream: IO[Any]) -> None:
    # Python flushes stdout and stderr at exit; point the stream at devnull so
    # that flush cannot raise a second error.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass
