"""The tally of your records (pure): each board's statistics and top 10,
counted a record at a time in bounded memory, a game kept again later (undo,
resumed) counting once. The records themselves, their JSON lines and the
functions over a list of them are in ``history``."""

from __future__ import annotations

import heapq
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Deque, Dict, List, Mapping, NamedTuple, Optional, Tuple, Union

from ..game.engine import UNDO_DEPTH

# The tally keeps where a record is and hands back what ``Fetch`` gives:
# Record is only a type here (history, which makes records, imports this).
if TYPE_CHECKING:
    from .history import Record

__all__ = ["RECENT", "TOP", "WINDOW", "Board", "BoardStats", "Fetch", "Tally", "median"]

TOP = 10  # games in a board's top list
RECENT = 30  # scores in the sparkline


@dataclass(frozen=True)
class BoardStats:
    rows: int
    cols: int
    goal: int
    played: int
    won: int
    # One definition of best, the header's: the highest score a game reached
    # that the AI did not help (undo allowed), never lowered. An assisted
    # game sets none (the README promises it and the header shows it). The
    # history keeps each game's last score only, so the shell adds the best
    # scores file's (a score reached and then undone); see play/stats.py.
    best: int
    best_unaided: int  # the same, of games without undo or the AI
    assisted: int  # games the AI helped (a hint, autoplay): counted, but no best
    median: float
    tiles: Tuple[Tuple[int, int], ...]  # (biggest tile, games), biggest first
    recent: Tuple[int, ...]  # the last scores, oldest first
    top: Tuple[Record, ...]


# Where a record can be found again (a byte offset in the file, an index in a
# list): the tally keeps this, not the record, and asks for the few it shows.
Fetch = Callable[[int], "Record"]  # a string: Record is imported for the type checker only
Board = Tuple[int, int, int]


class _Game(NamedTuple):
    """What the statistics need of one game (its keys and text are not kept).
    A named tuple: made once a record, and faster to make than a frozen dataclass."""

    number: int  # its place in the history: the earlier wins a tie
    where: int
    score: int
    biggest: int
    won: bool
    unaided: bool
    own: bool  # the AI did not help: its score can be a best (see BoardStats.best)
    entry: int  # its entry in the prefix index
    known: int  # the fingerprint of its board and seed


class _Board:
    """One board's statistics so far: the games still open to being
    superseded (the last WINDOW), and the rest folded into totals."""

    def __init__(self) -> None:
        self.open: Dict[int, _Game] = {}  # by number
        # The numbers of the board's last WINDOW records, oldest first (a
        # deque: popping a dict's first item rescans the slots it emptied).
        self.last: Deque[int] = deque()
        self.played = 0
        self.won = 0
        self.best = 0  # of the games the AI did not help
        self.best_unaided = 0
        self.assisted = 0
        self.scores: Dict[int, int] = {}  # games per score: as many entries as different scores
        self.tiles: Dict[int, int] = {}  # games per biggest tile
        self.recent: Deque[int] = deque(maxlen=RECENT)
        self.top: List[Tuple[int, int, int]] = []  # a heap of (score, -number, where): the best TOP

    def fold(self, game: _Game) -> None:
        """``game`` can no longer be superseded: into the totals (once a
        record: plain dict updates, not Counter's, which are slower)."""
        self.played += 1
        score = game.score
        if game.won:
            self.won += 1
        if not game.own:
            self.assisted += 1
        elif score > self.best:
            self.best = score
        if game.unaided and score > self.best_unaided:
            self.best_unaided = score
        scores, tiles = self.scores, self.tiles
        scores[score] = scores.get(score, 0) + 1
        tiles[game.biggest] = tiles.get(game.biggest, 0) + 1
        self.recent.append(score)
        ranked = (score, -game.number, game.where)
        if len(self.top) < TOP:
            heapq.heappush(self.top, ranked)
        elif ranked > self.top[0]:
            heapq.heapreplace(self.top, ranked)


# A game's entry in the prefix index, packed in one int (a tuple would take
# five objects): bucket << 144 | fingerprint << 80 | keys' length << 40 | number.
_LOW40 = (1 << 40) - 1
_LOW64 = (1 << 64) - 1

# How many of a board's latest records a later one can still supersede.
# The game keeps one game per board in its save, and undo reaches back at
# most UNDO_DEPTH games left by r: a game is continued within that many
# games on its board, or never. Past the window a game is final, folded
# into totals: memory stays bounded whatever the history's length.
WINDOW = 4 * UNDO_DEPTH


class Tally:
    """Your records read once, a record at a time, in bounded memory (the
    last WINDOW games per board, and totals): ``--stats`` and
    ``--replay-best`` on a history of any length.

    A game can be kept more than once (game over, then undo and play on, or
    quit after winning and resumed later). Its keys only grow (undo is a key
    too), so a record whose board and seed match an earlier one's, and whose
    keys start with that one's, is that game further on: the earlier record
    no longer counts (see :meth:`_supersede`). ``only`` tallies one board;
    ``listing`` keeps where every game that counts is, for :meth:`latest`."""

    def __init__(self, only: Optional[Board] = None, listing: bool = False) -> None:
        self._only = only
        self._boards: Dict[Board, _Board] = {}
        self._count = 0
        # The open games, by a fingerprint of (board, seed, a prefix of
        # their keys a power of two long, which power): an entry, or a list
        # of them when several share the prefix.
        self._index: Dict[int, Union[int, List[int]]] = {}
        self._listing: Optional[List[Tuple[int, int]]] = [] if listing else None
        # Open records per fingerprint of (board, seed): most seeds have one
        # game, and a record with none open before it looks nothing up.
        self._open_games: Dict[int, int] = {}
        self.comparisons = 0  # prefix checks made: the tests' measure of the work

    def add(self, record: Record, where: int) -> None:
        """Count ``record``, which ``fetch(where)`` gives back."""
        board_key = record.board
        if self._only is not None and board_key != self._only:
            return
        number = self._count
        self._count += 1
        keys = record.keys
        game = (*board_key, record.seed)
        board = self._boards.get(board_key)
        if board is None:
            board = self._boards[board_key] = _Board()
        known = hash(game)
        open_games = self._open_games
        if known in open_games:
            for superseded in self._supersede(game, keys):
                del board.open[superseded]
                self._forget(known)
        open_games[known] = open_games.get(known, 0) + 1
        level = len(keys).bit_length() - 1  # -1 for no keys
        bucket = hash((game, level, keys[: 1 << level] if level >= 0 else "")) & _LOW64
        entry = bucket << 144 | (hash((game, keys)) & _LOW64) << 80 | len(keys) << 40 | number
        self._file(bucket, entry)
        board.open[number] = _Game(
            number, where, record.score, record.biggest, record.won, record.unaided, not record.ai, entry, known
        )
        board.last.append(number)
        if len(board.last) > WINDOW:
            oldest = board.open.pop(board.last.popleft(), None)  # None: superseded already
            if oldest is not None:
                self._close(board, oldest)

    def _file(self, bucket: int, entry: int) -> None:
        found = self._index.get(bucket)
        if found is None:
            self._index[bucket] = entry
        elif isinstance(found, int):
            self._index[bucket] = [found, entry]
        else:
            found.append(entry)

    def _forget(self, known: int) -> None:
        left = self._open_games[known] - 1
        if left:
            self._open_games[known] = left
        else:
            del self._open_games[known]

    def _close(self, board: _Board, game: _Game) -> None:
        """``game`` is final: out of the index, into the totals."""
        bucket = game.entry >> 144
        found = self._index[bucket]
        if isinstance(found, int):
            del self._index[bucket]
        else:
            found.remove(game.entry)
            if len(found) == 1:
                self._index[bucket] = found[0]
        self._forget(game.known)
        board.fold(game)
        if self._listing is not None:
            self._listing.append((game.number, game.where))

    def _supersede(self, game: Tuple[int, ...], keys: str) -> List[int]:
        """The numbers of the open records of ``game`` that these ``keys``
        continue, taken out of the index.

        An earlier game whose keys are a prefix of these, of length n, was
        filed under the prefix of these keys 2**floor(log2 n) long: one
        look-up per power of two up to the keys' length finds every
        candidate, so the work grows with the keys' length, not with the
        games already on the seed. Fingerprints are Python's 64-bit hashes:
        two different games that collide twice (bucket and keys) would be
        taken for one, about once in 2**64 comparisons."""
        index = self._index
        superseded: List[int] = []
        for level in range(-1, len(keys).bit_length()):
            bucket = hash((game, level, keys[: 1 << level] if level >= 0 else "")) & _LOW64
            found = index.get(bucket)
            if found is None:
                continue
            kept = []
            for entry in [found] if isinstance(found, int) else found:
                self.comparisons += 1
                length = entry >> 40 & _LOW40
                if length <= len(keys) and hash((game, keys[:length])) & _LOW64 == entry >> 80 & _LOW64:
                    superseded.append(entry & _LOW40)
                else:
                    kept.append(entry)
            if not kept:
                del index[bucket]
            else:
                index[bucket] = kept[0] if len(kept) == 1 else kept
        return superseded

    def _finish(self) -> None:
        """The end of the history: every open game is final."""
        for board in self._boards.values():
            while board.last:
                oldest = board.open.pop(board.last.popleft(), None)
                if oldest is not None:
                    self._close(board, oldest)

    def top(self, board: Board, fetch: Fetch, count: int = TOP) -> List[Record]:
        """The best ``count`` (at most TOP) games on ``board``: highest score
        first, then the earlier game (the first to reach a score keeps its place)."""
        self._finish()
        found = self._boards.get(board)
        ranked = sorted(found.top, key=lambda game: (-game[0], -game[1])) if found else []
        return [fetch(where) for _, _, where in ranked[:count]]

    def stats(self, fetch: Fetch) -> List[BoardStats]:
        """Statistics per board, the most played board first."""
        self._finish()
        out: List[BoardStats] = []
        for key, board in self._boards.items():
            if not board.played:
                continue
            out.append(
                BoardStats(
                    rows=key[0],
                    cols=key[1],
                    goal=key[2],
                    played=board.played,
                    won=board.won,
                    best=board.best,
                    best_unaided=board.best_unaided,
                    assisted=board.assisted,
                    median=median(board.scores, board.played),
                    tiles=tuple(sorted(board.tiles.items(), reverse=True)),
                    recent=tuple(board.recent),
                    top=tuple(self.top(key, fetch)),
                )
            )
        out.sort(key=lambda stats: (-stats.played, stats.rows, stats.cols, stats.goal))
        return out

    def latest(self) -> List[int]:
        """Where the records that count are (``where`` as added), in the
        order they were added; only with ``listing``."""
        self._finish()
        assert self._listing is not None, "Tally(listing=True) lists the games"
        return [where for _, where in sorted(self._listing)]


def median(counts: Mapping[int, int], total: int) -> float:
    """The median of ``total`` scores given as {score: how many}, exact for
    whole numbers of any size (statistics.median goes through float)."""
    low_at, high_at = (total - 1) // 2, total // 2  # the middle one or two, counted from 0
    low: Optional[int] = None
    high = 0
    seen = 0
    for score in sorted(counts):
        seen += counts[score]  # places seen - counts[score] to seen - 1 hold this score
        if low is None and seen > low_at:
            low = score
        if seen > high_at:
            high = score
            break
    both = (high if low is None else low) + high
    return both // 2 if both % 2 == 0 else both / 2
