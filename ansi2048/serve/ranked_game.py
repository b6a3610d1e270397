"""The daily game's own rules, plugged into the game's driver
(:class:`~.game.GameRules`): ``b`` shows the day's board on the note line
(:class:`DailyRules`, ranked or practice); a ranked game has no undo, asks
again before a hint, autoplay or ``r`` counts, and is verified by replay
when it ends or its session does (:class:`RankedRules`), its keys' arrival
times kept beside them (:class:`DailyKeeping`).

What the rules decide from what they are given is pure
(:func:`screen_keys`, :func:`status_at`); the rest is the shell around it.
The day's pure rules are :mod:`.daily`'s; opening the day's game is :mod:`.ranked`'s."""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial
from typing import Awaitable, Callable, List, Optional, Sequence, Tuple

from ..game.keys import Action, KeyDecoder
from ..loop.events import Event, Key, Keys
from ..loop.state import Play
from ..records.history import daily_key
from ..records.recording import BodyDecoder
from ..records.replay import Result, Setup, verdict_steps
from .daily import (
    ASSISTED,
    DAILY,
    FINISHED,
    MISMATCH,
    PLAYING,
    RANKED,
    SAID_ASSISTED,
    board_note,
    day_end,
    ended_line,
)
from .game import GameDriver, PlainRules
from .keeping import StoreKeeping, replay_step, stepped
from .names import display_name
from .pauses import Write
from .saving import SAID_TAKEN_OVER, PausedEnd, PlayEnds
from .store.base import DailyEntry, Store

__all__ = [
    "ASK_ASSIST",
    "ASK_END",
    "BOARD_KEY",
    "SAID_DAY_OVER",
    "DailyKeeping",
    "DailyRules",
    "RankedRules",
    "Screened",
    "screen_keys",
    "status_at",
]

BOARD_KEY = b"b"  # typed alone, in a daily game: the day's board on the note line
BOARD_NOTE_TOP = 3  # the games that line names
# The keys a ranked game asks about before they count.
ASKED = (Action.HINT, Action.AUTOPLAY, Action.RESTART)

# What the ranked game says, on its note line or as its last line.
# The AI never plays the day's ranked deal: its line could be typed into
# another key's ranked game. A confirmed hint or autoplay ends the ranked
# game, unranked; practice (other tiles) has the AI.
ASK_ASSIST = "ranked: {key} again ends it, unranked (other keys: play on)"
ASK_END = "ranked game: r again ends it for good, its score counts (any other key: play on)"
SAID_DAY_OVER = "the day is over (UTC midnight): your ranked game ends with score {score}"
# How each of those ends the session, as the log says it.
ENDED_FOR_GOOD = "ranked game ended"
ENDED_UNRANKED = "ranked game ended unranked"
ENDED_DAY_OVER = "day over"


class DailyKeeping(StoreKeeping):
    """A ranked game in progress: kept as any game is, and each appended
    key's arrival time (ms since the game began) kept beside it."""

    def __init__(
        self, store: Store, player: int, board: str, holder: str, entry: DailyEntry, now: Callable[[], float]
    ) -> None:
        super().__init__(store, player, board, holder)
        self.entry = entry
        self.now = now
        self.last = 0  # the latest key's time, ms
        # The items of an append not stored yet, the time their keys came
        # (ms) and how many: a paused append is tried again whole, with the
        # times the keys came at.
        self._unsent: Optional[Tuple[bytes, int, int]] = None

    async def append(self, items: bytes) -> None:
        """The items and their keys' arrival times, in one transaction."""
        if self._unsent is None or self._unsent[0] != items:
            decoder = BodyDecoder(saved=True)
            keys = sum(1 for item in decoder.feed(items) + decoder.finish() if isinstance(item, Action))
            came = max(0, round((self.now() - self.entry.started) * 1000)) if keys else self.last
            self._unsent = (items, came, keys)
        _, came, keys = self._unsent
        times = (self.entry.id, f" {came}" * keys) if keys else None
        await self._store.append(self._player, self._board, self._holder, items, times)
        self.last, self._unsent = came, None


@dataclass(frozen=True)
class Screened:
    """A read's keys, as a ranked game takes them: ``keys`` play; ``asking``
    is the key now asked to be pressed again; ``asked``: this read asked
    it (the note line says so); ``confirmed``: this read pressed it again
    (r: the game ends for good; a hint or autoplay: it ends unranked)."""

    keys: Tuple[Key, ...]
    asking: Optional[Action] = None
    asked: Optional[Action] = None
    confirmed: Optional[Action] = None


def screen_keys(asking: Optional[Action], actions: Sequence[Key]) -> Screened:
    """The keys of one read that play, ``asking`` the key asked about before
    it: a hint, autoplay or ``r`` is asked about (the keys after it in the
    read are dropped: they answer a question not yet seen); pressed again it
    is confirmed; any other key answers no (and only answers)."""
    kept: List[Key] = []
    for action in actions:
        was, asking = asking, None
        if was is not None:
            if action is was:
                return Screened(tuple(kept), confirmed=action)
            continue
        if action in ASKED:
            assert isinstance(action, Action)
            return Screened(tuple(kept), asking=action, asked=action)
        kept.append(action)
    return Screened(tuple(kept), asking)


def status_at(now: float, end: float) -> str:
    """A ranked game's status as its session ends at ``now``: played on
    tomorrow, unless the day (which ends at ``end``) is over."""
    return FINISHED if now >= end else PLAYING


class _BoardKeyDecoder(KeyDecoder):
    """The game's keys, and :data:`BOARD_KEY` typed alone: the board asked
    for (no action of the game)."""

    def __init__(self) -> None:
        super().__init__(comments=False, assist=True)
        self.asked = False

    def feed(self, data: bytes) -> List[Action]:
        if data == BOARD_KEY and not self.pending:
            self.asked = True
            return []
        return super().feed(data)


# The player's own game, on the board before it is shown (a ranked game's).
Progress = Callable[[GameDriver], Awaitable[None]]


class DailyRules(PlainRules):
    """A daily game's rules, ranked or practice: ``b`` shows the day's board
    on the note line; the bests are the day's own, as the local daily's
    (the loop's alone otherwise: :class:`~.game.PlainRules`'s)."""

    def __init__(self, store: Store, day: str, player: Optional[int], progress: Optional[Progress] = None) -> None:
        self._store = store
        self._day = day
        self._player = player
        self._progress = progress
        self._keys = _BoardKeyDecoder()

    def decoder(self) -> KeyDecoder:
        return self._keys

    def best_key(self, play: Play) -> str:
        return daily_key(self._day, *DAILY)  # not the regular 4x4's

    async def before(self, game: GameDriver, event: Event) -> Optional[Event]:
        if isinstance(event, Keys) and self._keys.asked:
            self._keys.asked = False
            if self._progress is not None:
                await self._progress(game)
            board = await game.saving.saved(partial(self._store.daily_board, self._day, self._player, BOARD_NOTE_TOP))
            await game.say(board_note(board))
            if not event.actions:
                # b was the whole read: the loop gets no key (it would take
                # an empty read for a key that is no key, and say so).
                return None
        return event


class RankedRules:
    """A ranked daily game's rules (and the daily game's, :class:`DailyRules`):
    a hint, autoplay or ``r`` is asked again before it counts; the game is
    verified and its result stored when it ends (game over, ``r`` twice,
    the day's end) and when the session does."""

    def __init__(self, keeping: DailyKeeping, store: Store, log: Callable[[str], None]) -> None:
        entry = keeping.entry
        self._keeping = keeping
        self._store = store
        self._log = log
        self._now = keeping.now
        self._end = day_end(entry.day)
        self._daily = DailyRules(store, entry.day, entry.player, progress=self._progress)
        self._asking: Optional[Action] = None  # the key asked to be pressed again
        self._done = False  # the ranked result is final (or the game is no longer ranked)

    def decoder(self) -> KeyDecoder:
        return self._daily.decoder()

    def best_key(self, play: Play) -> str:
        return self._daily.best_key(play)

    def begin(self, play: Play) -> Play:
        # r ends this game (asked twice): the key line and the help say so.
        return replace(play, settings=replace(play.settings, ranked=True))

    def _day_over(self) -> bool:
        return not self._done and self._now() >= self._end

    async def before(self, game: GameDriver, event: Event) -> Optional[Event]:
        score = game.play.session.game.score
        if isinstance(event, Keys) and not self._done:
            if self._day_over():
                raise PlayEnds(SAID_DAY_OVER.format(score=score), ENDED_DAY_OVER)
            screened = screen_keys(self._asking, event.actions)
            self._asking = screened.asking
            if screened.confirmed is Action.RESTART:
                await self._settle(game, FINISHED)
                # Ended for good: a finished game, kept in the history as a game over is.
                game.pending.add_to_history(game.play.session.played())
                raise PlayEnds(await self._over_lines(game), ENDED_FOR_GOOD)
            if screened.confirmed is not None:
                # Ended here, unranked: kept in the history as it stands, the
                # AI not asked (serve/secrecy.py: nothing shows the day's deal
                # beyond what its player saw, and the AI would play it on).
                await self._settle(game, ASSISTED)
                game.pending.add_to_history(game.play.session.played())
                raise PlayEnds(SAID_ASSISTED.format(score=score), ENDED_UNRANKED)
            if screened.asked is not None:
                asked = screened.asked
                await game.say(ASK_END if asked is Action.RESTART else ASK_ASSIST.format(key=asked.value))
            if event.actions and not screened.keys:
                # Every key of the read asked or answered a question: the
                # loop gets none (it would take the empty read for a key
                # that is no key, and say so over the question).
                return None
            event = Keys(screened.keys, event.now)
        elif isinstance(event, Keys) and Action.RESTART in event.actions and self._keeping.entry.status == FINISHED:
            raise PlayEnds(await self._over_lines(game), ENDED_FOR_GOOD)
        return await self._daily.before(game, event)

    async def _over_lines(self, game: GameDriver) -> str:
        """The last lines of a game ended for good, with its rank today (read from the day's board)."""
        entry = self._keeping.entry
        board = await game.saving.saved(partial(self._store.daily_board, entry.day, entry.player, 0))
        return ended_line(entry, board)

    async def after(self, game: GameDriver) -> None:
        if not self._done and game.play.session.game.over:
            await self._settle(game, FINISHED)

    async def renew(self, game: GameDriver, renew: Callable[[], Awaitable[None]]) -> None:
        if self._day_over():
            raise PlayEnds(SAID_DAY_OVER.format(score=game.play.session.game.score), ENDED_DAY_OVER)
        await renew()
        await self._progress(game)

    async def closing(self, game: GameDriver) -> None:
        if self._day_over():  # ended for good at midnight: kept as r r's is
            game.pending.add_to_history(game.play.session.played())

    async def closed(self, game: GameDriver) -> None:
        if self._done or game.claim.lost:  # a game taken over is settled by the session that has it
            return
        status = status_at(self._now(), self._end)
        try:
            await self._settle(game, status)
        except PausedEnd as paused:
            # The player has left: the server settles the result, trying
            # until the store is back (serve/pauses.py), from what it stored.
            game.saving.hand_over([self._settled_later(game, status)], paused.error)
            game.claim.kept = True  # until it expires: the settlement checks it is still this game's
        except PlayEnds:
            pass  # taken over as it ended: the session that has the game settles it

    async def _progress(self, game: GameDriver) -> None:
        """The game as it stands (the server's engine played its stored
        keys) on the board while it is played, at each claim renewal and
        each ``b``: not zeros until it settles, when its replay decides."""
        entry, played = self._keeping.entry, game.play.session.game
        if self._done or (entry.score, entry.moves) == (played.score, played.moves):
            return
        seconds = self._keeping.last / 1000
        entry = replace(entry, score=played.score, biggest=played.biggest, moves=played.moves, seconds=seconds)
        await game.saving.saved(partial(self._store.daily_result, entry), pause=not game.saving.closing)
        self._keeping.entry = entry

    def _settled_later(self, game: GameDriver, status: str) -> Write:
        entry, keeping = self._keeping.entry, self._keeping

        async def settle() -> None:
            if not await keeping.renew():
                return  # taken over since: the session that has the game settles it
            recording = await keeping.load() or b""
            result, why = await self._result(game, entry, status, recording)
            await self._store.daily_result(result)
            self._stored(result, why)
            await keeping.release()  # kept for this (closed)

        return settle

    async def _settle(self, game: GameDriver, status: str) -> None:
        """Replay the stored recording from the seed; the result stored,
        ranked only if it reproduces the game the player saw. The store's
        read and write pause as every write of the game does (serve/pauses.py):
        once play has ended, :class:`~.saving.PausedEnd` (the caller hands it over)."""
        entry, saving = self._keeping.entry, game.saving
        # Only the game's holder settles it, from the recording it wrote: a
        # session that lost it (to another on another server, which it learns
        # here at the latest) would judge another session's keys by its own board.
        if not await saving.saved(self._keeping.renew, pause=not saving.closing):
            game.claim.lost = True
            raise PlayEnds(SAID_TAKEN_OVER)
        self._done = status != PLAYING
        recording = await saving.saved(self._keeping.load, pause=not saving.closing) or b""
        result, why = await self._result(game, entry, status, recording)
        self._done = self._done or result.status == MISMATCH
        if self._done and result.status != FINISHED:  # no longer ranked: r starts the day's game again
            game.play = replace(game.play, settings=replace(game.play.settings, ranked=False))
        await saving.saved(partial(self._store.daily_result, result), pause=not saving.closing)
        self._stored(result, why)
        self._keeping.entry = result

    def _stored(self, result: DailyEntry, why: str) -> None:
        """The log told of a result stored unranked because its replay does
        not match (``why``), once, whoever settled it: the player's session,
        or the server after they left (:meth:`_settled_later`)."""
        if result.status == MISMATCH:
            self._log(
                f"daily: game {result.id} of {display_name(result.name)} not ranked, its replay does not match: {why}"
            )

    async def _result(
        self, game: GameDriver, entry: DailyEntry, status: str, recording: bytes
    ) -> Tuple[DailyEntry, str]:
        """``entry`` settled as ``status`` from the stored ``recording``, and
        why its replay does not match the game the player saw ("" if it does;
        then a ranked status is MISMATCH)."""
        played = game.play.session.game
        rows, cols, _ = DAILY
        replayed, why = await stepped(
            verdict_steps(recording, Setup.of(played), Result.of(played), replay_step(rows, cols))
        )
        if why and status in RANKED:
            status = MISMATCH
        result = replace(entry, status=status, recording=recording, seconds=self._keeping.last / 1000)
        if replayed is not None:
            result = replace(
                result, score=replayed.score, biggest=replayed.biggest, moves=replayed.moves, cells=replayed.cells
            )
        return result, why
