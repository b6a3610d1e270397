"""A served game's snapshot (pure): the state its recording replays to,
kept beside the recording so that resuming a long game is a load, not a
replay of every key on the event loop (benchmarks/stalls.py).

The recording stays what the game is (a ranked game is verified from it,
replays and the history read it): a snapshot names the recording it is the
state of by its length and SHA-256, and is used only for that recording:
the whole of the one resumed, or its beginning (keys appended since, the
server killed before it kept a new one: then only those keys are replayed).
One that names another (a recording rewritten), or that this version
cannot read, is ignored: the recording is replayed whole, in steps, as before.

It is JSON: the game (:meth:`~ansi2048.game.engine.Game.state`: the board,
score, moves, the generator and undo's history), the runs undo can bring
back (:class:`~ansi2048.game.session.Run`, their keys as one string), and
what compacting the recording needs (:class:`~ansi2048.storage.save_file.Loaded`)."""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

from ..game.engine import Game
from ..game.session import Run
from ..storage.save_file import Loaded, Steps, continued_steps

__all__ = ["FORMAT", "Snapshot", "Tracked", "decoded", "digest", "encoded", "resumed"]

# The format's name and version, its first key: a later one is not read.
FORMAT = "ansi2048 snapshot"
_VERSION = 1

# A tile and its exponent (0: empty), as the boards are kept: one byte a tile.
_VALUE = [0, *(1 << exponent for exponent in range(1, 256))]
_EXPONENT: Dict[int, int] = {value: exponent for exponent, value in enumerate(_VALUE)}
# One of a game's states as undo restores it (engine.py's _Snapshot).
Kept = Tuple[Tuple[int, ...], int, int, bool, int, int, Optional[int]]


@dataclass(frozen=True)
class Snapshot:
    """The state ``loaded`` that the recording of ``length`` bytes whose
    SHA-256 is ``sha256`` (hex) replays to, on a board of ``rows`` x ``cols`` to ``goal``."""

    rows: int
    cols: int
    goal: int
    length: int
    sha256: str
    loaded: Loaded


def digest(recording: bytes) -> str:
    return hashlib.sha256(recording).hexdigest()


def encoded(snapshot: Snapshot, every: int) -> Steps[bytes]:
    """``snapshot`` as it is stored (:func:`decoded` reads it), in steps of
    ``every`` of the game's states (undo's history: up to a thousand boards)."""
    loaded = snapshot.loaded
    if loaded.open_line:
        raise ValueError("a recording that ends inside a '#' line has no snapshot")
    now, history = loaded.game.state()
    states = [*history, now]
    seeds = list(dict.fromkeys(state[5] for state in states))
    index = {seed: number for number, seed in enumerate(seeds)}
    cells, step = bytearray(), max(1, every)
    for start in range(0, len(states), step):
        for state in states[start : start + step]:
            try:
                cells += bytes(map(_EXPONENT.__getitem__, state[0]))
            except KeyError as tile:  # no game's: a tile is a power of two from 2 up
                raise ValueError(f"a tile of {tile} has no place in a snapshot") from None
        yield
    run, left = loaded.runs if loaded.runs is not None else (Run(loaded.game.seed), [])
    document = {
        FORMAT: _VERSION,
        "board": [snapshot.rows, snapshot.cols, snapshot.goal],
        "length": snapshot.length,
        "sha256": snapshot.sha256,
        "seed": loaded.seed,
        "best": loaded.best_seen,
        "items": loaded.items,
        "restarts_end": loaded.restarts_end,
        "seed_after_restart": loaded.seed_after_restart,
        "seeds": seeds,
        # Each state as undo restores it but its board (in "cells") and its seed (an index into "seeds").
        "states": [
            [score, moves, won, rng, index[seed], spawned] for _, score, moves, won, rng, seed, spawned in states
        ],
        "cells": base64.b64encode(cells).decode("ascii"),  # each tile's exponent (0: empty), a byte
        "runs": [_run_row(one) for one in (run, *left)],
    }
    return json.dumps(document, separators=(",", ":")).encode("ascii")


def decoded(data: bytes, every: int) -> Steps[Snapshot]:
    """The snapshot ``data`` holds, in steps of ``every`` of the game's
    states; ValueError if it is not one this version wrote."""
    try:
        document = json.loads(data)
        if document[FORMAT] != _VERSION:
            raise ValueError(f"a snapshot of format {document[FORMAT]!r}")
        rows, cols, goal = (_integer(value) for value in document["board"])
        area, seeds, rows_of_states = rows * cols, document["seeds"], document["states"]
        cells = base64.b64decode(document["cells"], validate=True)
        if len(cells) != area * len(rows_of_states) or not rows_of_states:
            raise ValueError("its boards are not its states'")
        states: List[Kept] = []
        step = max(1, every)
        for start in range(0, len(rows_of_states), step):
            for number in range(start, min(start + step, len(rows_of_states))):
                board = tuple(map(_VALUE.__getitem__, cells[number * area : (number + 1) * area]))
                states.append(_kept(board, rows_of_states[number], seeds))
            yield
        game = Game.restored(rows, cols, goal, (states[-1], tuple(states[:-1])))
        runs = [_run_of(row) for row in document["runs"]]
        loaded = Loaded(
            game,
            seed=_integer(document["seed"]),
            best_seen=_integer(document["best"]),
            restarts_end=_integer(document["restarts_end"]),
            seed_after_restart=_integer(document["seed_after_restart"]),
            open_line=False,
            runs=(runs[0], runs[1:]),
            items=_integer(document["items"]),
        )
        return Snapshot(rows, cols, goal, _integer(document["length"]), str(document["sha256"]), loaded)
    except (
        KeyError,
        IndexError,
        TypeError,
        AttributeError,
        ValueError,
    ) as error:  # json's and base64's are ValueErrors
        raise ValueError(f"not a snapshot: {error}") from None


def resumed(
    recording: bytes, data: Optional[bytes], rows: int, cols: int, goal: int, every: int
) -> Steps[Optional[Tuple[Loaded, bool]]]:
    """What ``recording`` replays to, from the snapshot ``data`` if that is
    one of this recording on this board, or of its beginning (keys came
    after it was kept: the server was killed before it kept the next one),
    whose keys after it are then replayed, in steps; and whether ``data`` is
    of the whole recording (else it is of a shorter one). None: replay it
    whole."""
    if data is None:
        return None
    try:
        snapshot = yield from decoded(data, every)
    except ValueError:
        return None
    if (snapshot.rows, snapshot.cols, snapshot.goal) != (rows, cols, goal) or snapshot.length > len(recording):
        return None
    head, tail = recording[: snapshot.length], recording[snapshot.length :]
    # Appended items never begin with '#' (a directive's line begins with a
    # newline); one that did would read otherwise after the head than alone.
    if snapshot.sha256 != digest(head) or tail.startswith(b"#"):
        return None
    if not tail:
        return snapshot.loaded, True
    return (yield from continued_steps(snapshot.loaded, tail, every)), False


def _integer(value: Any) -> int:
    if type(value) is not int:
        raise ValueError(f"{value!r} is no integer")
    return value


def _kept(board: Tuple[int, ...], row: Any, seeds: List[Any]) -> Kept:
    """One of a game's states as undo restores it, from its board and its JSON row."""
    score, moves, won, rng_state, seed, spawned = row
    if type(won) is not bool or not (spawned is None or type(spawned) is int):
        raise ValueError("a malformed state")
    return (board, _integer(score), _integer(moves), won, _integer(rng_state), _integer(seeds[seed]), spawned)


def _run_row(run: Run) -> List[Any]:
    keys = "".join(run.keys)
    if len(keys) != len(run.keys):
        raise ValueError("a run's keys are one character each")
    return [run.seed, keys, run.used_undo, run.assisted, run.depth]


def _run_of(row: Any) -> Run:
    seed, keys, used_undo, assisted, depth = row
    if type(keys) is not str or type(used_undo) is not bool or type(assisted) is not bool:
        raise ValueError("a malformed run")
    return Run(_integer(seed), list(keys), used_undo, assisted, _integer(depth))


class Tracked:
    """A game's snapshot carried on as its recording grows: ``base``, the
    snapshot of ``recording`` (encoded), and the items appended to it since
    (:meth:`appended`). The snapshot it gives (:meth:`snapshot`) is of the
    recording it saw grow, whatever the store holds: if the two parted (a
    write that failed), the store's recording is not that one, and the
    snapshot is ignored when the game is resumed."""

    def __init__(self, base: bytes, recording: bytes, every: int, kept: bool = False) -> None:
        self._base = base
        self._kept = kept  # the store holds ``base`` with ``recording`` already
        self._hash = hashlib.sha256(recording)
        self._length = len(recording)
        self._appended = bytearray()
        self._every = every  # the game's states per step, and the items (keeping.replay_step)

    def appended(self, items: bytes) -> None:
        """``items`` are in the recording now, after the others."""
        self._hash.update(items)
        self._length += len(items)
        self._appended += items

    def snapshot(self) -> Steps[Optional[bytes]]:
        """The snapshot of the recording as it is now, encoded, in steps;
        None if the store has it already (nothing was appended to a
        recording that came with its snapshot); ValueError if it has none
        (the base is unreadable, or the recording ends inside a '#' line)."""
        if self._kept and not self._appended:
            return None
        base = yield from decoded(self._base, self._every)
        loaded = yield from continued_steps(base.loaded, bytes(self._appended), self._every)
        now = Snapshot(base.rows, base.cols, base.goal, self._length, self._hash.hexdigest(), loaded)
        return (yield from encoded(now, self._every))
