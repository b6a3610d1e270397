"""A recording replayed through the engine, the pure part: work done in
steps (:data:`Steps`: a caller with other work, a server's event loop, runs
it between them; :func:`finish` runs it through at once)."""

from __future__ import annotations

from typing import Generator, TypeVar, cast

__all__ = ["Steps", "finish"]

# A replay in steps: it yields between parts of its items (so a caller can
# run other work between them), and returns what it replayed.
T = TypeVar("T")
Steps = Generator[None, None, T]


def finish(steps: Steps[T]) -> T:
    """What ``steps`` gives, run through at once."""
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return cast(T, done.value)
