"""The 4x4 n-tuple network: its features, its weights file, and its evaluator.

A network is a list of 4-cell tuples, each with a table of 65536 weights
indexed by the ranks under its cells (cell j's rank in nibble j). The value of
an afterstate sums each tuple's weight over the 8 symmetries of the board
(Szubert & Jaskowski 2014), so a board and its mirror images are valued alike
and every game trains 8 times as many patterns.

Shipped network: 2 straight lines (an edge row, an inner row) and 3 squares
(corner, edge, centre) = 5 x 65536 weights a stage. With the 8 symmetries those
are 40 features over 17 positions: the 8 rows and columns and the 9 2x2 squares.

Stages (multi-stage weights, Yeh et al. 2016): stage 0 values every board, and
each later stage, from its own rank on, the boards holding a tile of that rank
or more; a board is valued by the last stage it reaches. Which stages the
shipped file holds, and how they were trained, its header says.

The evaluator (:class:`Network`) folds, at load time, every feature at a
position into one table indexed by the ranks at that position in row-major
order, so an evaluation is 17 lookups taken straight from the board's rows
and columns: about 4x fewer operations than 40 feature lookups in CPython.

Weights file (little-endian)::

    b"A2048NT1"         8 bytes, magic
    sha256              32 bytes, of everything after this field
    header length       uint32
    header              JSON: {"tuples": [[cell, ...], ...], "stages": [{"from_rank": int,
                        "scale": float, "tables": int, "positions": [...], ...}, ...]}
    payload             zlib(int16 weights, table after table, stage after stage)

A weight is ``int16 * scale`` of its stage.
"""

from __future__ import annotations

import hashlib
import json
import math
import struct
import sys
import zlib
from array import array
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

__all__ = [
    "MAGIC",
    "TUPLES",
    "Network",
    "WeightsError",
    "features",
    "pack_weights",
    "symmetries",
    "unfold",
    "unpack_weights",
]

MAGIC = b"A2048NT1"
TABLE = 65536

# Cells are row-major indices 0..15 (cell (r, c) = 4 * r + c).
TUPLES: Tuple[Tuple[int, ...], ...] = (
    (0, 1, 2, 3),  # edge row
    (4, 5, 6, 7),  # inner row
    (0, 1, 4, 5),  # corner square
    (1, 2, 5, 6),  # edge square
    (5, 6, 9, 10),  # centre square
)


class WeightsError(ValueError):
    """The weights file is missing a part, damaged, or of another format."""


def symmetries() -> List[Tuple[int, ...]]:
    """The 8 symmetries of the 4x4 square as cell permutations (cell -> cell)."""
    maps = []
    for transpose in (False, True):
        for flip_r in (False, True):
            for flip_c in (False, True):
                perm = []
                for cell in range(16):
                    r, c = divmod(cell, 4)
                    if transpose:
                        r, c = c, r
                    if flip_r:
                        r = 3 - r
                    if flip_c:
                        c = 3 - c
                    perm.append(4 * r + c)
                maps.append(tuple(perm))
    return maps


def features(tuples: Sequence[Sequence[int]]) -> List[Tuple[int, Tuple[int, ...]]]:
    """(table number, ordered board cells) of every tuple under every symmetry."""
    out = []
    for number, cells in enumerate(tuples):
        for sym in symmetries():
            out.append((number, tuple(sym[cell] for cell in cells)))
    return out


# -- the weights file ---------------------------------------------------------

MAX_STAGES = 8

# One stage of a network: (the smallest biggest-tile rank it values, per-tuple
# tables). Stage 0 values every board; a later stage takes over the boards
# holding a tile of at least its rank (multi-stage weights, Yeh et al. 2016).
Stage = Tuple[int, Sequence[Sequence[float]]]


def pack_weights(stages: Sequence[Stage], meta: Sequence[Dict[str, Any]], folded: bool = True) -> bytes:
    """Quantise each stage to int16 with its own scale, compress, checksum.

    ``meta`` holds one dict per stage (its training record). ``folded`` (the
    shipped form) stores the per-position tables the evaluator reads, so
    loading is a decompression; otherwise the canonical per-tuple tables.
    """
    header: Dict[str, Any] = {"tuples": [list(t) for t in TUPLES], "stages": []}
    quantised = array("h")
    ranks = [rank for rank, _ in stages]
    if not ranks or ranks[0] != 0 or ranks != sorted(set(ranks)) or ranks[-1] > 15:
        raise WeightsError("stages must start at rank 0 and rise")
    for (rank, tables), info in zip(stages, meta):
        stage = dict(info)
        if folded:
            tables, positions = fold(tables, TUPLES)
            stage["positions"] = positions
        biggest = max((abs(w) for table in tables for w in table), default=0.0)
        scale = biggest / 32767 if biggest else 1.0
        quantised.extend(round(w / scale) for table in tables for w in table)
        stage.update(from_rank=rank, scale=scale, tables=len(tables))
        header["stages"].append(stage)
    if sys.byteorder != "little":
        quantised.byteswap()
    head = json.dumps(header, sort_keys=True).encode("utf-8")
    body = struct.pack("<I", len(head)) + head + zlib.compress(quantised.tobytes(), 9)
    return MAGIC + hashlib.sha256(body).digest() + body


# Bounds a file must keep to before anything in it is decoded: a header far
# longer than any trainer writes (the shipped one is about 1 KB) is no header,
# and no stage holds more tables than there are positions to fold them into
# (17), so the payload's inflated size is known, and capped, before it is inflated.
MAX_HEADER_BYTES = 1 << 20
MAX_TABLES = 17


def unpack_weights(data: bytes) -> Tuple[Dict[str, Any], List[Tuple[Dict[str, Any], List[array[int]]]]]:
    """Check and unpack a weights file: (header, [(stage header, int16 tables)]).

    A file of one stage may keep its stage's fields in the header itself (the
    format before stages). The checksum only tells damage from a whole file:
    a file made to pass it is read as carefully as any other, so anything
    malformed is a :class:`WeightsError`, and the payload is inflated no
    further than the weights its header announces."""
    if len(data) < 44 or data[:8] != MAGIC:
        raise WeightsError("not an ansi2048 n-tuple weights file")
    body = data[40:]
    if hashlib.sha256(body).digest() != data[8:40]:
        raise WeightsError("checksum mismatch: the weights file is damaged")
    (head_len,) = struct.unpack_from("<I", body)
    if head_len > min(MAX_HEADER_BYTES, len(body) - 4):
        raise WeightsError("weights file: bad header length")
    try:
        header = json.loads(body[4 : 4 + head_len].decode("utf-8"))
    except ValueError as exc:  # also a UnicodeDecodeError
        raise WeightsError(f"weights file: unreadable header ({exc})") from None
    except RecursionError:  # nested too deep
        raise WeightsError("weights file: header nested too deep") from None
    if not isinstance(header, dict):
        raise WeightsError("weights file: bad header")
    tuples = header.get("tuples")
    if (
        not isinstance(tuples, list)
        or not 0 < len(tuples) <= MAX_TABLES
        or not all(isinstance(t, list) and len(t) == 4 for t in tuples)
        or not all(type(cell) is int and 0 <= cell < 16 for t in tuples for cell in t)
    ):
        raise WeightsError("weights file: bad tuple list")
    stages = header.get("stages")
    if stages is None:
        stages = [dict(header, from_rank=0, tables=header.get("tables", len(tuples)))]
    if (
        not isinstance(stages, list)
        or not 0 < len(stages) <= MAX_STAGES
        or not all(isinstance(stage, dict) for stage in stages)
    ):
        raise WeightsError("weights file: bad stage list")
    counts = [stage.get("tables") for stage in stages]
    if not all(type(count) is int and 0 < count <= MAX_TABLES for count in counts):
        raise WeightsError("weights file: bad table count")
    expected = 2 * TABLE * sum(counts)  # bytes of int16 weights
    inflate = zlib.decompressobj()
    try:
        # One byte more than announced is enough to know there is more.
        raw = inflate.decompress(body[4 + head_len :], expected + 1)
    except zlib.error as exc:
        raise WeightsError(f"weights file: unreadable weights ({exc})") from None
    if len(raw) != expected or not inflate.eof or inflate.unused_data:
        raise WeightsError("weights file: wrong number of weights")
    weights = array("h")
    weights.frombytes(raw)
    if sys.byteorder != "little":
        weights.byteswap()
    # The tables stay int16 arrays: 2 bytes an entry (a list would take 8,
    # and an int object per distinct weight), read as fast as a list's items.
    out = []
    first = 0
    for stage, count in zip(stages, counts):
        out.append((stage, [weights[(first + i) * TABLE : (first + i + 1) * TABLE] for i in range(count)]))
        first += count
    return header, out


# -- the evaluator --------------------------------------------------------------

# The 17 positions in the order Network.value reads them: rows 0-3, columns
# 0-3 (cells top to bottom), then the 2x2 squares with top-left (r, c).
_POSITIONS: Tuple[Tuple[int, ...], ...] = (
    *(tuple(4 * r + c for c in range(4)) for r in range(4)),
    *(tuple(4 * r + c for r in range(4)) for c in range(4)),
    *((4 * r + c, 4 * r + c + 1, 4 * r + c + 4, 4 * r + c + 5) for r in range(3) for c in range(3)),
)


def _permutation(order: Tuple[int, ...]) -> List[int]:
    """Index at a position (raw nibble k = k-th cell of the position) -> index of a
    feature whose j-th cell is the position's ``order[j]``-th cell."""
    lo = [0] * 256
    hi = [0] * 256
    for byte in range(256):
        nibbles = (byte & 0xF, byte >> 4)
        for j, k in enumerate(order):
            if k < 2:
                lo[byte] |= nibbles[k] << (4 * j)
            else:
                hi[byte] |= nibbles[k - 2] << (4 * j)
    return [lo[x & 0xFF] | hi[x >> 8] for x in range(TABLE)]


def fold(tables: Sequence[Sequence[float]], tuples: Sequence[Sequence[int]]) -> Tuple[List[List[float]], List[int]]:
    """Per-tuple tables -> (distinct per-position tables, table number of each of
    the 17 positions): every feature at a position summed into one table indexed
    by the ranks at that position in row-major order."""
    groups: Dict[Tuple[int, ...], List[Tuple[int, Tuple[int, ...]]]] = {p: [] for p in _POSITIONS}
    for number, cells in features([tuple(t) for t in tuples]):
        position = tuple(sorted(cells))
        if position not in groups:
            raise WeightsError(f"tuple cells {cells} are not a row, column or square")
        groups[position].append((number, tuple(position.index(cell) for cell in cells)))
    perms: Dict[Tuple[int, ...], List[int]] = {}
    numbers: Dict[Tuple[Tuple[int, Tuple[int, ...]], ...], int] = {}
    out: List[List[float]] = []
    positions: List[int] = []
    for position in _POSITIONS:
        key = tuple(sorted(groups[position]))
        if key not in numbers:
            table = [0.0] * TABLE
            for number, order in key:
                perm = perms.get(order)
                if perm is None:
                    perm = perms[order] = _permutation(order)
                weights = tables[number]
                table = [acc + weights[i] for acc, i in zip(table, perm)]
            numbers[key] = len(out)
            out.append(table)
        positions.append(numbers[key])
    return out, positions


def unfold(tables: Sequence[Sequence[float]], positions: Sequence[int]) -> List[List[float]]:
    """Folded per-position tables -> per-tuple tables that :func:`fold` turns back
    into the same values (exactly, but for float rounding).

    Each shipped tuple lists its cells in row-major order and is itself one of
    the positions, and a position's table sums the features of one tuple over
    the symmetries that keep the position's cells; the table is symmetric under
    them, so that share of it is the tuple's table."""
    out = []
    for cells in TUPLES:
        position = _POSITIONS.index(tuple(cells))
        keeping = sum(1 for number, feature in features([cells]) if tuple(sorted(feature)) == tuple(cells))
        out.append([w / keeping for w in tables[positions[position]]])
    return out


_LOW_NIBBLES = 0x0F0F0F0F0F0F0F0F
_CARRIES = 0x1010101010101010

# A value function of an afterstate and, if known, its transpose.
Evaluator = Callable[[int, Optional[int]], float]


def _has_rank(b: int, add: int) -> bool:
    """Whether board ``b`` holds a tile of rank R or more, ``add`` being
    (16 - R) * 0x0101010101010101: adding 16 - R to every nibble (spread over
    bytes, so no nibble carries into the next) sets a byte's bit 4 where the
    nibble >= R."""
    return bool((((b & _LOW_NIBBLES) + add) | (((b >> 4) & _LOW_NIBBLES) + add)) & _CARRIES)


def _stage_evaluator(tables: Sequence[Sequence[float]], scale: float, pairs: Sequence[int]) -> Evaluator:
    """The value of one stage: 17 lookups (see :data:`_POSITIONS`), the tables
    held in the closure, where CPython reads them faster than from ``self``."""
    (l0, l1, l2, l3, k0, k1, k2, k3, s00, s01, s02, s10, s11, s12, s20, s21, s22) = tables

    def value(b: int, t: Optional[int] = None) -> float:
        r0 = b & 0xFFFF
        r1 = (b >> 16) & 0xFFFF
        r2 = (b >> 32) & 0xFFFF
        r3 = b >> 48
        if t is None:
            a = (b & 0xF0F00F0FF0F00F0F) | ((b & 0x0000F0F00000F0F0) << 12) | ((b >> 12) & 0x0000F0F00000F0F0)
            t = (a & 0xFF00FF0000FF00FF) | ((a & 0x00FF00FF00000000) >> 24) | ((a << 24) & 0x00FF00FF00000000)
        # The squares over rows i and i + 1 are 16-bit fields of one word
        # (see Network._pairs): two lookups and a shift for three squares.
        p1 = pairs[r1]
        p2 = pairs[r2]
        z0 = pairs[r0] | (p1 << 8)
        z1 = p1 | (p2 << 8)
        z2 = p2 | (pairs[r3] << 8)
        total = (
            l0[r0]
            + l1[r1]
            + l2[r2]
            + l3[r3]
            + k0[t & 0xFFFF]
            + k1[(t >> 16) & 0xFFFF]
            + k2[(t >> 32) & 0xFFFF]
            + k3[t >> 48]
            + s00[z0 & 0xFFFF]
            + s01[(z0 >> 16) & 0xFFFF]
            + s02[z0 >> 32]
            + s10[z1 & 0xFFFF]
            + s11[(z1 >> 16) & 0xFFFF]
            + s12[z1 >> 32]
            + s20[z2 & 0xFFFF]
            + s21[(z2 >> 16) & 0xFFFF]
            + s22[z2 >> 32]
        )
        return total * scale

    return value


class Network:
    """A loaded network: ``value(board)`` is the afterstate's expected future score.

    ``stages`` are (stage header, tables) as :func:`unpack_weights` gives them:
    the folded per-position tables when the stage header lists ``positions``
    (the shipped form), else per-tuple tables, folded here. Stage 0 values
    every board; each later stage (up to :data:`MAX_STAGES` in all) takes over
    the boards holding a tile of its ``from_rank`` or more.
    """

    def __init__(
        self, header: Dict[str, Any], stages: Sequence[Tuple[Dict[str, Any], Sequence[Sequence[float]]]]
    ) -> None:
        self.header = header
        # Row x's adjacent pairs of cells, 8 bits each, in bits 0, 16 and 32:
        # row i's word | row i + 1's word << 8 holds the three 2x2 squares'
        # indices (row-major ranks) in its 16-bit fields.
        pairs = [(x & 0xFF) | ((x & 0xFF0) << 12) | ((x & 0xFF00) << 24) for x in range(TABLE)]
        ranks: List[int] = []
        scales: List[float] = []
        evaluators: List[Evaluator] = []
        for stage, tables in stages:
            positions = stage.get("positions")
            if positions is None:
                if len(tables) != len(header["tuples"]):
                    raise WeightsError("weights file: a table for each tuple")
                tables, positions = fold(tables, header["tuples"])
            if (
                not isinstance(positions, list)
                or len(positions) != len(_POSITIONS)
                or not all(isinstance(i, int) and 0 <= i < len(tables) for i in positions)
            ):
                raise WeightsError("weights file: bad position list")
            rank = stage.get("from_rank")
            if not isinstance(rank, int) or not 0 <= rank <= 15:
                raise WeightsError("weights file: bad stage rank")
            given: Any = stage.get("scale")
            # type(), not isinstance: true is no scale.
            scale = float(given) if type(given) in (int, float) else math.nan
            if not 0 < scale < math.inf:  # also NaN, which JSON may hold
                raise WeightsError("weights file: bad stage scale")
            ranks.append(rank)
            scales.append(scale)
            evaluators.append(_stage_evaluator([tables[i] for i in positions], scale, pairs))
        if not 1 <= len(ranks) <= MAX_STAGES or ranks[0] != 0 or ranks != sorted(set(ranks)):
            raise WeightsError(f"weights file: 1 to {MAX_STAGES} stages, from rank 0, rising")
        self.stage_ranks = tuple(ranks)
        self.scales = tuple(scales)  # a weight is an int16 times its stage's scale
        self._evaluators = evaluators
        # (carry-test constant, stage) of the later stages, the highest first.
        self._later = [((16 - rank) * 0x0101010101010101, i) for i, rank in enumerate(ranks)][:0:-1]

    def stage(self, b: int) -> int:
        """Which stage values board ``b``: the last whose rank a tile on it reaches."""
        for add, number in self._later:
            if _has_rank(b, add):
                return number
        return 0

    def value(self, b: int, t: Optional[int] = None) -> float:
        """The network's value of afterstate ``b`` (a bitboard); ``t``, if given,
        is its transpose (the search often has it already)."""
        return self._evaluators[self.stage(b)](b, t)

    def evaluator(self, b: int, moves: int) -> Evaluator:
        """What values every afterstate ``moves`` moves or fewer after board ``b``:
        the one stage's evaluator where no later stage can begin in so few moves
        (a move raises the biggest tile by one rank at most), else :meth:`value`.
        The same numbers as :meth:`value`, without its stage test in the search's
        inner loop but near a stage's first tile."""
        number = self.stage(b)
        if number + 1 < len(self.stage_ranks):
            top = max((b >> shift) & 0xF for shift in range(0, 64, 4))
            if top + moves >= self.stage_ranks[number + 1]:
                return self.value
        return self._evaluators[number]


def load_network(data: bytes) -> Network:
    header, stages = unpack_weights(data)
    return Network(header, stages)


def reference_value(
    tables: Sequence[Sequence[float]], b: int, tuples: Optional[Sequence[Sequence[int]]] = None
) -> float:
    """The value by definition (40 feature lookups): what the trainer computes,
    and what tests compare :meth:`Network.value` against."""
    ranks = [(b >> (4 * cell)) & 0xF for cell in range(16)]
    total = 0.0
    for number, cells in features(tuples or TUPLES):
        index = 0
        for j, cell in enumerate(cells):
            index |= ranks[cell] << (4 * j)
        total += tables[number][index]
    return total
