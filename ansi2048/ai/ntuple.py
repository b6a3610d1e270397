"""The 4x4 n-tuple network: its features, its weights file, and its evaluator.

A network is a list of 4-cell tuples, each with a table of 65536 weights
indexed by the ranks under its cells (cell j's rank in nibble j). The value of
an afterstate sums each tuple's weight over the 8 symmetries of the board
(Szubert & Jaskowski 2014), so a board and its mirror images are valued alike
and every game trains 8 times as many patterns.

Shipped network: 2 straight lines (an edge row, an inner row) and 3 squares
(corner, edge, centre) = 5 x 65536 weights. With the 8 symmetries those are 40
features over 17 positions: the 8 rows and columns and the 9 2x2 squares.

The evaluator (:class:`Network`) folds, at load time, every feature at a
position into one table indexed by the ranks at that position in row-major
order, so an evaluation is 17 lookups taken straight from the board's rows
and columns: about 4x fewer operations than 40 feature lookups in CPython.

Weights file (little-endian)::

    b"A2048NT1"         8 bytes, magic
    sha256              32 bytes, of everything after this field
    header length       uint32
    header              JSON: {"tuples": [[cell, ...], ...], "scale": float, ...}
    payload             zlib(int16 weights, table after table)

A weight is ``int16 * scale``.
"""

from __future__ import annotations

import hashlib
import json
import struct
import sys
import zlib
from array import array
from typing import Any, Dict, List, Optional, Sequence, Tuple

__all__ = [
    "MAGIC",
    "TUPLES",
    "Network",
    "WeightsError",
    "features",
    "pack_weights",
    "symmetries",
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


def pack_weights(tables: Sequence[Sequence[float]], meta: Dict[str, Any], folded: bool = True) -> bytes:
    """Quantise to int16 with one scale, compress, checksum.

    ``folded`` (the shipped form) stores the per-position tables the evaluator
    reads, so loading is a decompression; otherwise the canonical per-tuple
    tables, which training resumes from (``scripts/train_ai.py --init``).
    """
    header = dict(meta)
    header["tuples"] = [list(t) for t in TUPLES]
    if folded:
        tables, positions = fold(tables, TUPLES)
        header["positions"] = positions
    biggest = max((abs(w) for table in tables for w in table), default=0.0)
    scale = biggest / 32767 if biggest else 1.0
    quantised = array("h", (round(w / scale) for table in tables for w in table))
    if sys.byteorder != "little":
        quantised.byteswap()
    header["scale"] = scale
    header["tables"] = len(tables)
    head = json.dumps(header, sort_keys=True).encode("utf-8")
    body = struct.pack("<I", len(head)) + head + zlib.compress(quantised.tobytes(), 9)
    return MAGIC + hashlib.sha256(body).digest() + body


def unpack_weights(data: bytes) -> Tuple[Dict[str, Any], List[List[int]]]:
    """Check and unpack a weights file: (header, int16 tables)."""
    if len(data) < 44 or data[:8] != MAGIC:
        raise WeightsError("not an ansi2048 n-tuple weights file")
    body = data[40:]
    if hashlib.sha256(body).digest() != data[8:40]:
        raise WeightsError("checksum mismatch: the weights file is damaged")
    (head_len,) = struct.unpack_from("<I", body)
    try:
        header = json.loads(body[4 : 4 + head_len].decode("utf-8"))
        raw = zlib.decompress(body[4 + head_len :])
    except (ValueError, zlib.error) as exc:  # pragma: no cover - the checksum catches damage first
        raise WeightsError(f"unreadable weights file: {exc}") from exc
    tuples = header.get("tuples")
    if not isinstance(tuples, list) or not all(isinstance(t, list) and len(t) == 4 for t in tuples):
        raise WeightsError("weights file: bad tuple list")
    count = header.get("tables", len(tuples))
    weights = array("h")
    weights.frombytes(raw)
    if sys.byteorder != "little":
        weights.byteswap()
    if not isinstance(count, int) or len(weights) != TABLE * count:
        raise WeightsError("weights file: wrong number of weights")
    flat = weights.tolist()
    return header, [flat[i * TABLE : (i + 1) * TABLE] for i in range(count)]


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


class Network:
    """A loaded network: ``value(board)`` is the afterstate's expected future score.

    ``tables`` are the folded per-position tables when the header lists
    ``positions`` (the shipped form), else per-tuple tables, folded here."""

    def __init__(self, header: Dict[str, Any], tables: Sequence[Sequence[float]]) -> None:
        self.header = header
        self.scale = float(header["scale"])
        positions = header.get("positions")
        if positions is None:
            tables, positions = fold(tables, header["tuples"])
        if (
            not isinstance(positions, list)
            or len(positions) != len(_POSITIONS)
            or not all(isinstance(i, int) and 0 <= i < len(tables) for i in positions)
        ):
            raise WeightsError("weights file: bad position list")
        self._tables = [tables[i] for i in positions]

    def value(self, b: int) -> float:
        """The network's value of afterstate ``b`` (a bitboard)."""
        (l0, l1, l2, l3, k0, k1, k2, k3, s00, s01, s02, s10, s11, s12, s20, s21, s22) = self._tables
        r0 = b & 0xFFFF
        r1 = (b >> 16) & 0xFFFF
        r2 = (b >> 32) & 0xFFFF
        r3 = b >> 48
        a = (b & 0xF0F00F0FF0F00F0F) | ((b & 0x0000F0F00000F0F0) << 12) | ((b >> 12) & 0x0000F0F00000F0F0)
        t = (a & 0xFF00FF0000FF00FF) | ((a & 0x00FF00FF00000000) >> 24) | ((a << 24) & 0x00FF00FF00000000)
        # Squares: the low byte of two adjacent rows, shifted to the square's column.
        q0 = r0 | (r1 << 16)
        q1 = r1 | (r2 << 16)
        q2 = r2 | (r3 << 16)
        total = (
            l0[r0]
            + l1[r1]
            + l2[r2]
            + l3[r3]
            + k0[t & 0xFFFF]
            + k1[(t >> 16) & 0xFFFF]
            + k2[(t >> 32) & 0xFFFF]
            + k3[t >> 48]
            + s00[(q0 & 0xFF) | ((q0 >> 8) & 0xFF00)]
            + s01[((q0 >> 4) & 0xFF) | ((q0 >> 12) & 0xFF00)]
            + s02[((q0 >> 8) & 0xFF) | ((q0 >> 16) & 0xFF00)]
            + s10[(q1 & 0xFF) | ((q1 >> 8) & 0xFF00)]
            + s11[((q1 >> 4) & 0xFF) | ((q1 >> 12) & 0xFF00)]
            + s12[((q1 >> 8) & 0xFF) | ((q1 >> 16) & 0xFF00)]
            + s20[(q2 & 0xFF) | ((q2 >> 8) & 0xFF00)]
            + s21[((q2 >> 4) & 0xFF) | ((q2 >> 12) & 0xFF00)]
            + s22[((q2 >> 8) & 0xFF) | ((q2 >> 16) & 0xFF00)]
        )
        return total * self.scale


def load_network(data: bytes) -> Network:
    header, tables = unpack_weights(data)
    return Network(header, tables)


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
