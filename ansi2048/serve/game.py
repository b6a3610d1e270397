"""One player's game over SSH: the keyboard game's loop (:mod:`ansi2048.loop.step`)
driven by one asyncio task, its frames drawn by the local game's own
:class:`~ansi2048.play.screen.Screen`, so a player sees the frames the local
command draws for the same window, colour depth and keys.

The task waits for what comes in (the keys of one read, a new window size,
the end), or for the loop's next timer (:func:`~ansi2048.loop.step.next_due`),
steps the loop, and has the shared :mod:`~ansi2048.play.performer` do its effects
in order (the AI's question it answers itself, from the server's pool of
processes). Keys are decoded
incrementally (:class:`~ansi2048.game.keys.KeyDecoder`): an escape sequence split
across SSH packets decodes as from a terminal, and a lone ESC is given
:data:`ESC_TIMEOUT` to become an arrow.

The game is kept where :class:`~.keeping.Keeping` says (a :class:`~.store.base.Store`,
or nowhere for a guest), as the local game keeps its save: a recording,
appended key by key. The keys a frame shows are appended, and the append has
returned, before that frame is written (the keys of one read share one
append): nothing a player was shown is lost, whatever happens to the server.
While the database cannot take them, saving pauses (:meth:`PlayerGame._pause`):
the frame waits, the player is told, and play resumes once it can.
"""

from __future__ import annotations

import asyncio
from contextlib import suppress
from functools import partial
from typing import Awaitable, Callable, Dict, List, Optional, TypeVar

from ..game.keys import Action, KeyDecoder
from ..game.session import Played
from ..loop.events import AIMoved, AIReady, AskAI, BestStored, Effect, Event, Keys, Resized, Tick, Warned
from ..loop.state import Play
from ..loop.step import closing_effects, next_due, start, step
from ..play.performer import BestWriter, Performer
from ..play.screen import Screen
from ..records.history import Record, config_key, unaided_key
from ..records.recording import Item, Recorder
from ..storage.history_file import utc_timestamp
from ..storage.save_file import saved_bytes
from .channel import Ended, Incoming, Link, Typed
from .keeping import CLAIM_SECONDS, Keeping
from .limits import DEFAULT_LIMITS, Limits
from .pool import AIPool, Busy
from .store.base import ClaimLost, StoreUnavailable

__all__ = [
    "SAID_IDLE",
    "SAID_PAUSED",
    "SAID_STOPPING",
    "SAID_TAKEN_OVER",
    "SAID_TOO_SLOW",
    "SAID_UNSAVED",
    "PlayerGame",
]

# The claim on the game is renewed at a third of its length.
_RENEW_SECONDS = CLAIM_SECONDS / 3
# The longest an AI question may take before it counts as busy (a hint takes
# milliseconds; a stalled pool must not hold the player's keys for good).
_AI_TIMEOUT = 10.0
T = TypeVar("T")

# While the database cannot take a step's keys, saving pauses (the frame
# showing them waits) and the append is tried again, first this soon, then
# twice as late each time up to the longest: a restarted PostgreSQL or a
# freed disk is seen within seconds, and a long outage costs few tries.
_PAUSE_FIRST = 0.25
_PAUSE_LONGEST = 4.0
# How long a lone ESC waits for the rest of an arrow key before it counts as
# just ESC: longer than a terminal's 50 ms (terminal.console.ESC_TIMEOUT),
# since the network may hold back the second half of a sequence split
# across packets; a lone ESC only closes the help.
ESC_TIMEOUT = 0.3

SAID_STOPPING = "the server is stopping; your game is kept: connect again to resume it"
SAID_TAKEN_OVER = "your game was taken over by another session"
SAID_TOO_SLOW = "your connection cannot take the frames fast enough; your game is kept"
SAID_UNSAVED = "your game cannot be saved right now; what you saw is kept: try again later"
# The note while saving is paused (in the frame's note line, on the board as it was saved).
SAID_PAUSED = "saving has paused: the database is away; your keys wait"
SAID_IDLE = "no key for a while: your game is kept; connect again to resume it"


class _Stop(Exception):
    """Play must end now, saying ``said`` (the frame not yet saved is not drawn)."""

    def __init__(self, said: str) -> None:
        super().__init__(said)
        self.said = said


class _Pending:
    """The :class:`~ansi2048.play.performer.PlayStore` the performer writes to:
    it holds what one step gave (the keys, the games that ended, the bests)
    until the driver writes it to the store, asynchronously (:meth:`PlayerGame._flush`)."""

    saving = True

    def __init__(self, now: Callable[[], float]) -> None:
        self._now = now
        self.items = bytearray()
        self.records: List[Record] = []
        self.bests: List[int] = []
        self.unaided: List[int] = []
        self._last: Optional[Played] = None

    def append(self, item: Item) -> None:
        self.items += saved_bytes(item)

    def add_to_history(self, played: Played) -> None:
        # A game can end more than once (game over, then r): kept once, as locally.
        if played != self._last:
            self._last = played
            self.records.append(Record.of(played, utc_timestamp(self._now())))

    def record_best(self, score: int) -> Optional[int]:
        self.bests.append(score)
        return None  # the store answers later: the driver feeds BestStored

    def record_unaided(self, score: int) -> None:
        self.unaided.append(score)


class PlayerGame:
    """The asynchronous driver of one player's session (the contract is
    :mod:`ansi2048.play.performer`'s): ``incoming`` is what comes in; ``run``
    plays until the end and leaves the screen tidy, the last line said.
    The performer draws into ``frames`` (the screen's ``write`` collects
    there) and writes into a :class:`_Pending`; once a step's effects are
    done, the keys go to the store and only then the frames to the client."""

    def __init__(
        self,
        play: Play,
        screen: Screen,
        frames: List[str],
        link: Link,
        keeping: Keeping,
        pool: AIPool,
        incoming: asyncio.Queue[Incoming],
        clock: Callable[[], float],
        now: Callable[[], float],
        sent: Callable[[], None] = lambda: None,
        limits: Limits = DEFAULT_LIMITS,
    ) -> None:
        self.play = play
        self._sent = sent  # told after each write of frames (watchers get them then: watch.py)
        self.limits = limits
        self.keys = 0  # keys played (for the log: how many, never which)
        self.said = ""  # what ended play, said to the player ("": they quit, or left)
        self._screen = screen
        self._frames = frames
        self._link = link
        self._keeping = keeping
        self._pool = pool
        self._incoming = incoming  # filled by the SSH session's callbacks
        self._clock = clock
        game = play.session.game
        self._key = config_key(game.rows, game.cols, game.goal)
        self._decoder = KeyDecoder(comments=False, assist=True)
        self._pending = _Pending(now)
        best = BestWriter(self._pending.record_best, clock, play.session.best)
        self._performer = Performer(screen, self._pending, Recorder(None, lambda message: None), best)
        self._renew_at = clock() + _RENEW_SECONDS
        self._lost = False  # the claim went to another session: nothing more is written to the game
        self._last_key = clock()
        self._stalled_since: Optional[float] = None  # output held unsent since then
        # What the client's terminal shows (the last frames sent), for the pause (_pause).
        self._shown_mark = screen.mark()
        self._unsaved = False  # play ends in a pause: the state past the saved keys is neither drawn nor kept

    async def run(self) -> None:
        said = ""
        try:
            if self._pool.ready:
                self.play, _ = step(self.play, AIReady())
            self.play, effects = start(self.play, self._clock(), autoplay=False)
            await self._do(effects)
            said = await self._until_over()
        except _Stop as stop:
            said = stop.said
        finally:
            self.said = said
            await self._close(said)

    async def _until_over(self) -> str:
        """Play until the player quits (""), or until the end comes from outside."""
        escape_at: Optional[float] = None  # a lone ESC's wait for the rest of its sequence
        limits = self.limits
        while not self.play.over:
            stall_end = None if self._stalled_since is None else self._stalled_since + limits.stalled_seconds
            idle_end = self._last_key + limits.idle_seconds
            wake = [when for when in (next_due(self.play), self._renew_at, escape_at, stall_end) if when is not None]
            timeout = max(0.0, min(idle_end, *wake) - self._clock())
            try:
                incoming: Optional[Incoming] = await asyncio.wait_for(self._incoming.get(), timeout)
            except asyncio.TimeoutError:
                incoming = None
            now = self._clock()
            self._check_output(now)
            if incoming is None:
                if now >= self._last_key + limits.idle_seconds:
                    raise _Stop(SAID_IDLE)
                if now >= self._renew_at:
                    await self._renew()
                if escape_at is not None and now >= escape_at:
                    escape_at = None
                    self._decoder.flush()  # the ESC stood alone: no action (it closes the help)
                    await self._feed(Keys((), now))
                due = next_due(self.play)
                if due is not None and now >= due:
                    await self._feed(Tick(now))
            elif isinstance(incoming, Ended):
                return incoming.said
            elif isinstance(incoming, (Resized, Warned)):
                await self._feed(incoming)
            else:
                self._last_key = now
                actions = self._decoder.feed(self._typed_ahead(incoming.data))
                self.keys += len(actions)
                escape_at = now + ESC_TIMEOUT if self._decoder.pending else None
                if actions or not self._decoder.pending:
                    await self._feed(Keys(tuple(actions), now))
        return ""

    def _typed_ahead(self, data: bytes) -> bytes:
        """``data`` and the keys queued right behind it. Keys that came in
        packets of their own but are all here by now (a slow link delivering
        what it held at once, or keys typed while a step was being done) were
        typed ahead of the screen: one step plays them all and draws one
        frame, as the local game's one read of its terminal does, instead of
        a motion begun and cut short per key. Whatever else is queued keeps
        its place."""
        queued = self._incoming
        later: List[Incoming] = []  # from the first that is not keys on, put back in order
        while not queued.empty():
            item = queued.get_nowait()
            if isinstance(item, Typed) and not later:
                data += item.data
            else:
                later.append(item)
        for item in later:
            queued.put_nowait(item)
        return data

    def _check_output(self, now: float) -> None:
        """A client that keeps output unsent too long, or too much of it,
        has stopped reading: play ends (its game is kept) and it is
        disconnected, so that its buffers go."""
        unsent = self._link.unsent()
        if unsent == 0:
            self._stalled_since = None
            return
        if self._stalled_since is None:
            self._stalled_since = now
        if unsent > self.limits.unsent_bytes or now - self._stalled_since >= self.limits.stalled_seconds:
            self._link.drop()
            raise _Stop(SAID_TOO_SLOW)

    async def _renew(self) -> None:
        self._renew_at = self._clock() + _RENEW_SECONDS
        try:
            held = await self._keeping.renew()
        except StoreUnavailable:
            return  # the claim outlives a short outage; the next renewal tries again
        if not held:
            self._lost = True
            raise _Stop(SAID_TAKEN_OVER)

    async def _feed(self, event: Event) -> None:
        self.play, effects = step(self.play, event)
        await self._do(effects)

    async def _do(self, effects: List[Effect]) -> None:
        """One step's effects, in order; then their answers, each a step of its own."""
        answers: List[Event] = []
        for effect in effects:
            if isinstance(effect, AskAI):
                # The frames so far (the AI loading) go out while it thinks.
                answers += await self._flush()
                answers.append(await self._ask(effect))
            else:
                answers += self._performer.perform(effect)
        answers += await self._flush()
        for answer in answers:
            await self._feed(answer)

    async def _ask(self, effect: AskAI) -> AIMoved:
        """The AI's answer. Keys typed meanwhile wait in the queue, as they
        wait in the terminal while the local game's AI thinks."""
        game = self.play.session.game
        try:
            direction, warning = await asyncio.wait_for(self._pool.move(game.board, game.goal), _AI_TIMEOUT)
        except (Busy, asyncio.TimeoutError):
            return AIMoved(effect.purpose, None, self._clock(), busy=True)
        return AIMoved(effect.purpose, direction, self._clock(), warning)

    async def _flush(self) -> List[Event]:
        """What the performer left pending, to the store; then, the keys
        they show being kept, the frames to the client. The answers: the
        best the store holds, if another session raised it higher."""
        pending, keeping, key = self._pending, self._keeping, self._key
        answers: List[Event] = []
        if pending.items:
            items = bytes(pending.items)
            pending.items.clear()
            await self._append(items)
        records, pending.records = pending.records, []
        for record in records:
            await self._saved(partial(keeping.keep, record))
            if record.unaided:
                pending.unaided.append(record.score)
        unaided, pending.unaided = pending.unaided, []
        for score in unaided:
            await self._saved(partial(keeping.record_best, unaided_key(key), score))
        bests, pending.bests = pending.bests, []
        for best in bests:
            stored = await self._saved(partial(keeping.record_best, key, best))
            if stored > best:
                answers.append(BestStored(stored))
        if self._frames:
            self._write_frames()
            self._shown_mark = self._screen.mark()
            self._check_output(self._clock())
        return answers

    async def _append(self, items: bytes) -> None:
        """The keys to the store, returning once it has them."""
        if not self._lost:
            await self._saved(partial(self._keeping.append, items))

    async def _saved(self, write: Callable[[], Awaitable[T]]) -> T:
        """What ``write`` (of a step's keys, a game ended, a best) gives,
        once the store has taken it. While the database is away, saving
        pauses (:meth:`_pause`) until it does."""
        try:
            return await write()
        except ClaimLost:
            self._lost = True
            self._frames.clear()
            raise _Stop(SAID_TAKEN_OVER) from None
        except StoreUnavailable:
            return await self._pause(write)

    async def _pause(self, write: Callable[[], Awaitable[T]]) -> T:
        """Saving has paused: the frames showing what ``write`` keeps are held back, and
        in their place the player sees the frame last sent with
        :data:`SAID_PAUSED` as its last line. The write is tried again with
        backoff; keys typed meanwhile are not played (dropped: nothing waits
        unbounded), bar q, which ends play. Once the store has the keys, the
        frame as it was sent comes back and the held frames follow: play goes on.

        The notice is a frame of its own, drawn from the screen's mark of
        what the terminal shows (not written behind the repainter's back,
        nor drawn from the game, whose state is already past the held
        keys): the held frames are the difference from that mark, so the
        notice is undone before they go, and the repainter's idea of the
        screen is right at each write."""
        held = "".join(self._frames)
        self._frames.clear()
        # Whatever ends play from here on (q, the server stopping, the client
        # not reading, the claim lost) must not draw or keep the held state.
        self._unsaved = True
        after = self._screen.mark()  # what the held frames leave on screen
        shown = self._shown_mark
        self._screen.rewind(shown)
        self._screen.notice(SAID_PAUSED)
        self._write_frames()
        later: Dict[type, Incoming] = {}  # the latest window size and server note, for after the pause
        wait = _PAUSE_FIRST
        while True:
            said = await self._paused_input(wait, later)
            if said is not None:
                raise _Stop(said)
            try:
                result = await write()
                break
            except ClaimLost:
                self._lost = True
                raise _Stop(SAID_TAKEN_OVER) from None
            except StoreUnavailable:
                wait = min(2 * wait, _PAUSE_LONGEST)
        self._screen.redraw(shown)  # the notice goes: the frame as it was sent
        self._frames.append(held)
        self._screen.rewind(after)
        self._unsaved = False
        self._last_key = self._clock()  # the pause was not the player's idleness
        for event in later.values():
            self._incoming.put_nowait(event)
        return result

    async def _paused_input(self, wait: float, later: Dict[type, Incoming]) -> Optional[str]:
        """What comes in for ``wait`` seconds of a pause; what to say if play must end."""
        end = self._clock() + wait
        while True:
            now = self._clock()
            self._check_output(now)
            if now >= self._renew_at:
                await self._renew()  # the claim outlives the pause (a long one would lose it)
            if now >= end:
                return None
            try:
                incoming = await asyncio.wait_for(self._incoming.get(), min(end, self._renew_at) - now)
            except asyncio.TimeoutError:
                continue
            if isinstance(incoming, Ended):
                return incoming.said
            if isinstance(incoming, Typed):
                # Decoded, so a sequence split around the pause stays whole; played, never.
                if Action.QUIT in self._decoder.feed(incoming.data):
                    return SAID_UNSAVED
            else:
                later[type(incoming)] = incoming

    def _write_frames(self) -> None:
        text = "".join(self._frames)
        self._frames.clear()
        self._link.write(text.encode("utf-8", "replace"))
        self._sent()

    async def _close(self, said: str) -> None:
        """What the end of play writes, whatever ended it; the screen left
        with the cursor below the board, and ``said`` under it."""
        try:
            if not self._unsaved:
                for effect in closing_effects(self.play):
                    self._performer.perform(effect)
                await self._flush()
        except _Stop as stop:
            said = said or stop.said
        finally:
            if self._unsaved:  # the frames past the saved keys stay unsent: the screen is as last sent
                self._frames.clear()
                self._screen.rewind(self._shown_mark)
            self._screen.close()
            text = "".join(self._frames) + (f"{said}\r\n" if said else "")
            self._frames.clear()
            self._link.write(text.encode("utf-8", "replace"))
            self._sent()
            if not self._lost:
                with suppress(StoreUnavailable):  # then the claim expires by itself
                    await self._keeping.release()
