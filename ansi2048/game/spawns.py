"""The seeded spawns (pure): a seed's generator state, the SplitMix64
generator, and the rule that turns one draw into a new tile.

The whole state is one integer, and the sequence is fixed by the algorithm,
not by Python's ``random``: a recorded game replays identically on every
Python version and platform. The game (``engine``) and the AI's trainer
(``scripts/train_ai.py``) both spawn through here, so they spawn alike.
"""

from __future__ import annotations

import functools
from typing import Any, Tuple

from .limits import MAX_SEED_DIGITS

__all__ = ["SplitMix64", "seed_state", "spawn_draw"]

_MASK64 = (1 << 64) - 1
_SEED_LIMIT = 10**MAX_SEED_DIGITS
_LOW32 = (1 << 32) - 1
# A spawn is a 4 when the low 32 bits of its draw fall below a tenth of their
# range: p = 429496729 / 2**32 = 0.1 - 1.4e-10.
_FOUR_THRESHOLD = (1 << 32) // 10


def seed_state(seed: int) -> int:
    """Map a seed (0 <= seed < 10**MAX_SEED_DIGITS) to a 64-bit generator state.

    The first 8 bytes (little-endian) of SHA-256 over the seed's decimal digits:
    stable everywhere, and distinct seeds above 2**64 stay distinct games.
    """
    if not 0 <= seed < _SEED_LIMIT:
        raise ValueError(f"seed must be a whole number >= 0 with at most {MAX_SEED_DIGITS} digits")
    digest = _sha256()(str(seed).encode("ascii")).digest()
    return int.from_bytes(digest[:8], "little")


@functools.cache
def _sha256() -> Any:
    """SHA-256, the interpreter's own where it has one: hashlib loads OpenSSL
    (~5 ms of every start-up, the first game's seeding being at start-up).
    Found at the first seeding and kept: an import that fails is looked up
    again on every path each time (``_sha2`` before Python 3.12: ~40 us of
    every new game)."""
    try:
        from _sha2 import sha256  # type: ignore[import-not-found,unused-ignore]  # Python 3.12 and later
    except ImportError:
        try:
            from _sha256 import sha256  # type: ignore[import-not-found,no-redef,unused-ignore]  # up to 3.11
        except ImportError:  # a build without them (FIPS): the same hash, from OpenSSL
            from hashlib import sha256  # type: ignore[no-redef,unused-ignore]
    return sha256


class SplitMix64:
    """SplitMix64 (Steele, Lea, Flood 2014): the state is one 64-bit integer.

    ``next()`` adds the golden-ratio increment and mixes; the sequence is fixed
    by the algorithm, not by Python's ``random`` module.
    """

    __slots__ = ("state",)

    def __init__(self, state: int) -> None:
        self.state = state & _MASK64

    def next(self) -> int:
        self.state = z = (self.state + 0x9E3779B97F4A7C15) & _MASK64
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
        return z ^ (z >> 31)


def spawn_draw(draw: int, empty: int) -> Tuple[int, int]:
    """The spawn rule for one 64-bit ``draw`` and ``empty`` > 0 empty cells:
    (n, value), the tile going on the n-th empty cell in row-major order.

    n = draw * empty >> 64 (the high bits); the tile is a 4 when the low 32
    bits fall below a tenth of their range, else a 2. The game and the AI's
    trainer (``scripts/train_ai.py``) both use it, so they spawn alike.
    """
    return (draw * empty) >> 64, 4 if (draw & _LOW32) < _FOUR_THRESHOLD else 2
