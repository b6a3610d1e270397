"""The served daily game, the shell: the server's secret, a ranked game's
keeping (its keys' arrival times beside them) and its driver (no undo; a
hint, autoplay or ``r`` asked twice; verified by replay when it ends or its
session does), and the ``leaderboard`` and ``keys`` commands' answers.

The pure rules are in :mod:`.daily`."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, Awaitable, Callable, List, Optional, Sequence, Tuple

from .. import __version__
from ..game.engine import Game
from ..game.keys import Action, KeyDecoder
from ..game.session import Session
from ..loop.events import Event, Key, Keys, Resized
from ..records.history import daily_key
from ..records.recording import BodyDecoder, format_header
from ..records.replay import Result, Setup, verdict_steps
from ..storage.files import read_regular
from ..storage.save_file import SaveFile
from .context import ServeContext
from .daily import (
    ASSISTED,
    DAILY,
    FINISHED,
    MISMATCH,
    PLAYING,
    RANKED,
    TOP,
    board_note,
    daily_board,
    day_end,
    day_of,
    day_seed,
    leaderboard_document,
    leaderboard_lines,
    practice_seed,
    times_of,
)
from .game import SAID_TAKEN_OVER, PlayerGame, _Paused, _Stop
from .keeping import GuestKeeping, Keeping, StoreKeeping, load_recording, replay_step, stepped
from .names import display_name
from .pauses import Write
from .secrecy import Deal, GameFacts, Shown, shown
from .store.base import DailyEntry, Player, Store

__all__ = [
    "SECRET_FILE",
    "DailyKeeping",
    "OpenedDaily",
    "RankedGame",
    "daily_secret",
    "leaderboard_output",
    "open_daily",
]

SECRET_FILE = "daily_secret"  # a secret to propose (earlier versions kept it here)
SECRET_NAME = "daily"  # its name in the database
SECRET_BYTES = 32
SECRET_LONGEST = 4096  # a file bigger than this is no secret of ours
BOARD_KEY = b"b"  # typed alone, in a daily game: the day's board on the note line
BOARD_NOTE_TOP = 3  # the games that line names

# What the ranked game says, on its note line or as its last line.
# The AI never plays the day's ranked deal: its line could be typed into
# another key's ranked game. A confirmed hint or autoplay ends the ranked
# game, unranked; practice (other tiles) has the AI.
ASK_ASSIST = "ranked: {key} again ends it, unranked (other keys: play on)"
ASK_END = "ranked game: r again ends it for good, its score counts (any other key: play on)"
SAID_ENDED = "your ranked game is over, score {score}; daily again plays practice, on other tiles"
SAID_ASSISTED = "your ranked game ended unranked, score {score}; daily again: practice, with the AI"
NOTE_RANKED = "ranked game of {day}: no undo; r twice ends it; b: the board"
NOTE_PRACTICE = "practice (not ranked): your ranked game of {day} was played; b: the board"
NOTE_GUEST = "practice: a guest is never ranked (connect with an SSH key)"
NOTE_CAPPED = "practice: your address entered its players in today's ranking"
SAID_DAY_OVER = "the day is over (UTC midnight): your ranked game ends with score {score}"


async def daily_secret(store: Store, data_dir: str) -> Tuple[bytes, str]:
    """The secret that the days' seeds derive from, and what to say of it
    ("" if nothing). It is kept in the database, so that every server on one
    database deals the same tiles (one leaderboard) with nothing to copy
    between them: the first server to start makes it. A server's
    ``daily_secret`` file (written by earlier versions, or by an operator
    who brings the secret of another deployment) is what it proposes in
    place of new random bytes; once the database has one, the database's
    wins, and a file that differs is said to be unused. Whoever reads the
    secret can compute every day's tiles."""
    path = os.path.join(data_dir, SECRET_FILE)
    try:
        from_file: Optional[bytes] = read_regular(path, SECRET_LONGEST, follow=True)
    except FileNotFoundError:
        from_file = None
    if from_file is not None and len(from_file) < 16:
        raise ValueError(f"{path}: the daily secret is too short (16 bytes at least)")
    secret = await store.shared_secret(SECRET_NAME, from_file or os.urandom(SECRET_BYTES))
    if from_file is not None and from_file != secret:
        return secret, f"{path} is not used: the database holds the daily secret its servers share"
    return secret, ""


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


class DailyGame(PlayerGame):
    """The driver of a daily game, ranked or practice: ``b`` shows the
    day's board on the note line. Made as :class:`~.game.PlayerGame` is
    (``args``), with the day's own parts by name."""

    def __init__(
        self,
        *args: Any,
        store: Store,
        day: str,
        player: Optional[int],
        now: Callable[[], float],
        opening: Sequence[Write] = (),
    ) -> None:
        super().__init__(*args)
        self._opening = list(opening)  # the recording begun (_open_kept), before the first frame
        self._store = store
        self._day = day
        self._player = player
        self._now = now
        self._board_keys = _BoardKeyDecoder()
        self._decoder = self._board_keys
        self._key = daily_key(day, *DAILY)  # the day's own best, as the local daily's (not the regular 4x4's)

    async def _feed(self, event: Event) -> None:
        if isinstance(event, Keys) and self._board_keys.asked:
            self._board_keys.asked = False
            await self._progress()
            board = await self._saved(partial(self._store.daily_board, self._day, self._player, BOARD_NOTE_TOP))
            await self._say(board_note(board))
            if not event.actions:
                # b was the whole read: the loop gets no key (it would take
                # an empty read for a key that is no key, and say so).
                return
        await super()._feed(event)

    async def _progress(self) -> None:
        """The player's own game as it stands, on the board (a ranked game's)."""

    async def _say(self, note: str) -> None:
        """``note`` on the note line, the frame drawn again."""
        self.play = replace(self.play, note=note)
        await super()._feed(Resized(self.play.size))


class RankedGame(DailyGame):
    """The driver of a ranked daily game: a hint, autoplay or ``r`` is
    asked again before it counts; the game is verified and its result
    stored when it ends (game over, ``r`` twice, the day's end) and when
    the session does."""

    def __init__(
        self,
        *args: Any,
        keeping: DailyKeeping,
        store: Store,
        log: Callable[[str], None],
        opening: Sequence[Write] = (),
    ) -> None:
        entry = keeping.entry
        super().__init__(*args, store=store, day=entry.day, player=entry.player, now=keeping.now, opening=opening)
        # r ends this game (asked twice): the key line and the help say so.
        self.play = replace(self.play, settings=replace(self.play.settings, ranked=True))
        self._daily = keeping
        self._log = log
        self._end = day_end(entry.day)
        self._asking: Optional[Action] = None  # the key asked to be pressed again
        self._done = False  # the ranked result is final (or the game is no longer ranked)

    async def _feed(self, event: Event) -> None:
        if isinstance(event, Keys) and not self._done:
            if self._now() >= self._end:
                raise _Stop(SAID_DAY_OVER.format(score=self.play.session.game.score))
            screened = await self._screened(event)
            if event.actions and not screened.actions:
                # Every key of the read asked or answered a question: the
                # loop gets none (it would take the empty read for a key
                # that is no key, and say so over the question).
                return
            event = screened
        elif isinstance(event, Keys) and Action.RESTART in event.actions and self._daily.entry.status == FINISHED:
            raise _Stop(SAID_ENDED.format(score=self._daily.entry.score))
        await super()._feed(event)
        if not self._done and self.play.session.game.over:
            await self._settle(FINISHED)

    async def _screened(self, event: Keys) -> Keys:
        """The keys that play; a hint, autoplay or ``r`` asked about first."""
        kept: List[Key] = []
        for action in event.actions:
            asking, self._asking = self._asking, None
            if asking is not None:
                if action is not asking:
                    continue  # the answer no: the key only answered
                if action is Action.RESTART:
                    await self._settle(FINISHED)
                    # Ended for good: a finished game, kept in the history as a game over is.
                    self._pending.add_to_history(self.play.session.played())
                    raise _Stop(SAID_ENDED.format(score=self._daily.entry.score))
                # Ended here, unranked: kept in the history as it stands, the
                # AI not asked (serve/secrecy.py: nothing shows the day's deal
                # beyond what its player saw, and the AI would play it on).
                await self._settle(ASSISTED)
                self._pending.add_to_history(self.play.session.played())
                raise _Stop(SAID_ASSISTED.format(score=self.play.session.game.score))
            if action in (Action.HINT, Action.AUTOPLAY, Action.RESTART):
                self._asking = action
                await self._say(ASK_END if action is Action.RESTART else ASK_ASSIST.format(key=action.value))
                return Keys(tuple(kept), event.now)
            kept.append(action)
        return Keys(tuple(kept), event.now)

    async def _renew(self) -> None:
        if not self._done and self._now() >= self._end:
            raise _Stop(SAID_DAY_OVER.format(score=self.play.session.game.score))
        await super()._renew()
        await self._progress()

    async def _progress(self) -> None:
        """The game as it stands (the server's engine played its stored
        keys) on the board while it is played, at each claim renewal and
        each ``b``: not zeros until it settles, when its replay decides."""
        entry, game = self._daily.entry, self.play.session.game
        if self._done or (entry.score, entry.moves) == (game.score, game.moves):
            return
        seconds = self._daily.last / 1000
        entry = replace(entry, score=game.score, biggest=game.biggest, moves=game.moves, seconds=seconds)
        await self._saved(partial(self._store.daily_result, entry), pause=not self._closing)
        self._daily.entry = entry

    async def _close(self, said: str) -> None:
        if not self._done and self._now() >= self._end:  # ended for good at midnight: kept as r r's is
            self._pending.add_to_history(self.play.session.played())
        await super()._close(said)
        if not self._done and not self._lost:  # a game taken over is settled by the session that has it
            status = FINISHED if self._now() >= self._end else PLAYING
            try:
                await self._settle(status)
            except _Paused as paused:
                # The player has left: the server settles the result, trying
                # until the store is back (serve/pauses.py), from what it stored.
                self._pauses.keep_trying([self._settled_later(status)], paused.error, not self._counted)
                self._claim_kept = True  # until it expires: the settlement checks it is still this game's
            except _Stop:
                pass  # taken over as it ended: the session that has the game settles it

    def _settled_later(self, status: str) -> Write:
        entry = self._daily.entry

        async def settle() -> None:
            if not await self._daily.renew():
                return  # taken over since: the session that has the game settles it
            recording = await self._daily.load() or b""
            await self._store.daily_result((await self._result(entry, status, recording))[0])
            await self._daily.release()  # kept for this (RankedGame._close)

        return settle

    async def _settle(self, status: str) -> None:
        """Replay the stored recording from the seed; the result stored,
        ranked only if it reproduces the game the player saw. The store's
        read and write pause as every write of the game does (serve/pauses.py):
        once play has ended, :class:`_Paused` (the caller hands it over)."""
        entry = self._daily.entry
        # Only the game's holder settles it, from the recording it wrote: a
        # session that lost it (to another on another server, which it learns
        # here at the latest) would judge another session's keys by its own board.
        if not await self._saved(self._daily.renew, pause=not self._closing):
            self._lost = True
            raise _Stop(SAID_TAKEN_OVER)
        self._done = status != PLAYING
        recording = await self._saved(self._daily.load, pause=not self._closing) or b""
        result, why = await self._result(entry, status, recording)
        if why and status in RANKED:
            self._done = True
            self._log(
                f"daily: game {entry.id} of {display_name(entry.name)} not ranked, its replay does not match: {why}"
            )
        if self._done and result.status != FINISHED:  # no longer ranked: r starts the day's game again
            self.play = replace(self.play, settings=replace(self.play.settings, ranked=False))
        await self._saved(partial(self._store.daily_result, result), pause=not self._closing)
        self._daily.entry = result

    async def _result(self, entry: DailyEntry, status: str, recording: bytes) -> Tuple[DailyEntry, str]:
        """``entry`` settled as ``status`` from the stored ``recording``, and
        why its replay does not match the game the player saw ("" if it does;
        then a ranked status is MISMATCH)."""
        game = self.play.session.game
        rows, cols, _ = DAILY
        replayed, why = await stepped(
            verdict_steps(recording, Setup.of(game), Result.of(game), replay_step(rows, cols))
        )
        if why and status in RANKED:
            status = MISMATCH
        result = replace(entry, status=status, recording=recording, seconds=self._daily.last / 1000)
        if replayed is not None:
            result = replace(
                result, score=replayed.score, biggest=replayed.biggest, moves=replayed.moves, cells=replayed.cells
            )
        return result, why


@dataclass(frozen=True)
class OpenedDaily:
    """The day's game as a session plays it: ranked (a :class:`RankedGame`
    on :class:`DailyKeeping`) or practice (kept nowhere)."""

    keeping: Keeping
    session: Session
    note: str
    day: str
    day_seed: int  # r starts the day's game again (practice; in a ranked game r is asked first)
    driver: Callable[..., PlayerGame]
    facts: GameFacts  # its deal and owner: who may watch it (serve/secrecy.py)
    guest: bool = False


async def open_daily(
    server: ServeContext,
    player: Optional[Player],
    address: str,
    claim: Callable[[Player, str], Awaitable[Optional[str]]],
) -> Optional[OpenedDaily]:
    """The day's game for ``player`` (None: a guest): their ranked one, new
    or resumed, if they may play it; else practice. None: another session
    has their ranked game and they chose to leave it there."""
    store, now = server.store, server.now()
    day = day_of(now)
    seed = day_seed(server.daily_secret, day)
    practice = practice_seed(server.daily_secret, day)
    rows, cols, goal = DAILY

    if player is None:
        guest = Session(Game(rows, cols, goal, practice))
        driver = partial(DailyGame, store=store, day=day, player=None, now=server.now)
        facts = GameFacts(Deal.PRACTICE, day)
        return OpenedDaily(GuestKeeping(), guest, NOTE_GUEST, day, practice, driver, facts, guest=True)
    header = format_header(seed, rows, cols, goal, __version__).encode("ascii")
    entry = await store.daily_start(day, player.id, address, now, header, server.daily_per_address)
    ranked = entry is not None and entry.status == PLAYING
    if entry is None:
        server.log(f"daily: {player.name} not ranked on {day}: {address} entered {server.daily_per_address} players")
    board = daily_board(day) if ranked else daily_board(day) + "-practice"
    holder = await claim(player, board)
    if holder is None:
        return None
    if not ranked:
        # Practice is kept and resumed as any game (a game over starts the day's game again).
        kept = StoreKeeping(store, player.id, board, holder)
        session, opening = await _open_kept(kept, day, practice, undo=True)
        note = NOTE_CAPPED if entry is None else NOTE_PRACTICE.format(day=day)
        driver = partial(DailyGame, store=store, day=day, player=player.id, now=server.now, opening=opening)
        return OpenedDaily(kept, session, note, day, practice, driver, GameFacts(Deal.PRACTICE, day, player.id))
    assert entry is not None
    keeping = DailyKeeping(store, player.id, board, holder, entry, server.now)
    times = times_of(entry)
    keeping.last = times[-1] if times else 0
    session, opening = await _open_kept(keeping, day, seed, undo=False)
    ranked_driver = partial(RankedGame, keeping=keeping, store=store, log=server.log, opening=opening)
    facts = GameFacts(Deal.RANKED, day, player.id)
    return OpenedDaily(keeping, session, NOTE_RANKED.format(day=day), day, seed, ranked_driver, facts)


async def _open_kept(keeping: StoreKeeping, day: str, seed: int, undo: bool) -> Tuple[Session, List[Write]]:
    """The day's game in ``keeping``, resumed, or begun from ``seed``
    (also when the kept one is over: practice starts again); and the writes
    that needs, which the driver does before the game's first frame, pausing
    as any write of the game does (as :func:`.keeping.open_game`'s)."""
    rows, cols, goal = DAILY
    header = format_header(seed, rows, cols, goal, __version__).encode("ascii")
    recording = await keeping.load()
    loaded = await load_recording(SaveFile("", rows, cols, goal, recording)) if recording is not None else None
    opening: List[Write] = []
    # Practice kept by an earlier version dealt the ranked tiles: it starts again on its own.
    if loaded is None or (undo and (loaded.game.over or loaded.game.seed != seed)):
        opening.append(partial(keeping.rewrite, header))
        loaded = SaveFile("", rows, cols, goal, header).load()
        assert loaded is not None
    best = await keeping.best(daily_key(day, rows, cols, goal))
    return Session(loaded.game, best, loaded.runs, undo=undo), opening


async def leaderboard_output(
    store: Store, now: float, day: Optional[str], as_json: bool, me: Optional[int]
) -> List[str]:
    """What ``leaderboard [DAY] [--json]`` prints: ``day``'s board (None:
    today's) as text or one JSON document; ``me``: the caller, if a player."""
    day = day or day_of(now)
    board = await store.daily_board(day, me, TOP)
    # The board shows scores, never a deal; once the day's deal is public
    # (the secrecy rule) its games are over, each as it stood.
    over = shown(GameFacts(Deal.RANKED, day), None, day_of(now)) is Shown.EVERYTHING
    if as_json:
        text: str = json.dumps(leaderboard_document(day, board, over), indent=1)
        return text.splitlines()
    return leaderboard_lines(day, board, me, over)
