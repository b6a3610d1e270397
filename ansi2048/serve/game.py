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
A game's other writes (its history record, bests, the claim's renewal, the
recording begun or compacted when it opens) follow the frames they belong to.
While the database cannot take any of them, saving pauses
(:meth:`PlayerGame._pause`): the frame waits, the player is told, the write
is tried again until it lands, and play resumes once it has; the server's
log says so (:mod:`.pauses`).
"""

from __future__ import annotations

import asyncio
from contextlib import suppress
from functools import partial
from typing import Awaitable, Callable, Dict, List, Optional, Sequence, TypeVar

from ..game.keys import Action, KeyDecoder
from ..loop.events import AIMoved, AIReady, AskAI, BestStored, Effect, Event, Keys, Resized, Tick, Warned
from ..loop.state import Play
from ..loop.step import closing_effects, next_due, start, step
from ..play.performer import BestWriter, Performer
from ..play.screen import Screen
from ..records.history import config_key, unaided_key
from ..records.recording import Recorder
from .channel import Ended, Incoming, Link, Typed, typed_ahead, unmeasured
from .keeping import CLAIM_SECONDS, Keeping, Pending
from .limits import Breach
from .pauses import PAUSE_FIRST, SavingPauses, Write, next_wait
from .pool import AIPool, Busy
from .store.base import ClaimLost, StoreUnavailable

__all__ = [
    "SAID_IDLE",
    "SAID_PAUSED",
    "SAID_RECORD_LATER",
    "SAID_STOPPING",
    "SAID_STOPPING_GUEST",
    "SAID_STOPPING_VIEWER",
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

# How long a lone ESC waits for the rest of an arrow key before it counts as
# just ESC: longer than a terminal's 50 ms (terminal.console.ESC_TIMEOUT),
# since the network may hold back the second half of a sequence split
# across packets; a lone ESC only closes the help.
ESC_TIMEOUT = 0.3

SAID_STOPPING = "the server is stopping; your game is kept: connect again to resume it"
# ...as a guest is told (nothing of a guest's is kept), and one who watched,
# replayed or ran a command (no game of theirs was running).
SAID_STOPPING_GUEST = "the server is stopping; a guest's game is not kept"
SAID_STOPPING_VIEWER = "the server is stopping"
SAID_TAKEN_OVER = "your game was taken over by another session"
SAID_TOO_SLOW = "your connection cannot take the frames fast enough; your game is kept"
SAID_UNSAVED = "your game cannot be saved right now; what you saw is kept: try again later"
# The note while saving is paused (in the frame's note line, on the board as it was saved).
SAID_PAUSED = "saving has paused: the database is away; your keys wait"
# Said when play ends while the game's keys are kept but its record is not yet
# (the server keeps trying: :meth:`~.pauses.SavingPauses.keep_trying`).
SAID_RECORD_LATER = "your game is kept as you saw it; its record is saved when the database is back"
SAID_IDLE = "no key for a while: your game is kept; connect again to resume it"
# What a game says when its channel's rules end it (limits.ChannelRules).
_BREACH_SAID = {Breach.IDLE: SAID_IDLE, Breach.SLOW: SAID_TOO_SLOW}


class _Stop(Exception):
    """Play must end now, saying ``said`` (the frame not yet saved is not drawn)."""

    def __init__(self, said: str) -> None:
        super().__init__(said)
        self.said = said


class _Paused(_Stop):
    """Play must end during a pause, the write paused not done (the store's ``error``)."""

    def __init__(self, said: str, error: StoreUnavailable) -> None:
        super().__init__(said)
        self.error = error


class PlayerGame:
    """The asynchronous driver of one player's session (the contract is
    :mod:`ansi2048.play.performer`'s): ``incoming`` is what comes in; ``run``
    plays until the end and leaves the screen tidy, the last line said.
    The performer draws into ``frames`` (the screen's ``write`` collects
    there) and writes into a :class:`~.keeping.Pending`; once a step's effects are
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
        pauses: Optional[SavingPauses] = None,
        opening: Sequence[Write] = (),
    ) -> None:
        self.play = play
        self._sent = sent  # told after each write of frames (watchers get them then: watch.py)
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
        self._pending = Pending(now)
        best = BestWriter(self._pending.record_best, clock, play.session.best)
        self._performer = Performer(screen, self._pending, Recorder(None, lambda message: None), best)
        self._renew_at = clock() + _RENEW_SECONDS
        self._lost = False  # the claim went to another session: nothing more is written to the game
        self._claim_kept = False  # a write of the game handed to the server needs the claim: not released
        # What the client's terminal shows (the last frames sent), for the pause (_pause).
        self._shown_mark = screen.mark()
        self._unsaved = False  # play ends in a pause: the state past the saved keys is neither drawn nor kept
        self._closing = False  # play has ended: what is left to write is written, or handed over, never paused for
        # The server's paused games (a test's driver of its own: not logged); this game in them now.
        self._pauses, self._counted = pauses or SavingPauses(lambda *line, **fields: None, clock), False
        self._opening = list(opening)  # the writes of its opening (open_game), done before its first frame
        # Told the seconds a read took to be shown, and an append to land (serve/metrics.py).
        self.answered: Callable[[float], None] = unmeasured
        self.appended: Callable[[float], None] = unmeasured

    async def run(self) -> None:
        said = ""
        try:
            if self._pool.ready:
                self.play, _ = step(self.play, AIReady())
            for write in self._opening:  # the recording begun or compacted, before a frame shows it
                await self._saved(write)
            self.play, effects = start(self.play, self._clock(), autoplay=False)
            await self._do(effects)
            said = await self._until_over()
        except _Stop as stop:
            said = stop.said
        finally:
            self.said = said
            await self._close(said)
            await self._let_go()

    async def _until_over(self) -> str:
        """Play until the player quits (""), or until the end comes from outside."""
        escape_at: Optional[float] = None  # a lone ESC's wait for the rest of its sequence
        while not self.play.over:
            wake = [when for when in (next_due(self.play), escape_at) if when is not None]
            timeout = max(0.0, min([self._renew_at, *wake]) - self._clock())
            try:
                incoming: Optional[Incoming] = await asyncio.wait_for(self._incoming.get(), timeout)
            except asyncio.TimeoutError:
                incoming = None
            now = self._clock()
            if incoming is None:
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
                return self._ended(incoming)
            elif isinstance(incoming, (Resized, Warned)):
                await self._feed(incoming)
            else:
                actions = self._decoder.feed(typed_ahead(self._incoming, incoming.data))
                self.keys += len(actions)
                escape_at = now + ESC_TIMEOUT if self._decoder.pending else None
                if actions or not self._decoder.pending:
                    await self._feed(Keys(tuple(actions), now))
                    self.answered(self._clock() - (incoming.at or now))  # their frame is written
        return ""

    def _ended(self, ended: Ended) -> str:
        """What to say as play ends from outside: the channel's rules (idle,
        a client not reading: its game is kept, said so), a take-over
        (nothing more is written), the server stopping, the client gone."""
        self._lost = self._lost or ended.lost
        if ended.breach is not None:
            return _BREACH_SAID[ended.breach]
        if ended.said == SAID_STOPPING and self.play.settings.guest:
            return SAID_STOPPING_GUEST  # "your game is kept" would be untrue
        return ended.said

    async def _renew(self) -> None:
        self._renew_at = self._clock() + _RENEW_SECONDS
        if self._unsaved:
            # In a pause (of this renewal or another write): tried, not paused
            # again; the claim outlives a short outage and the next one tries again.
            try:
                held = await self._keeping.renew()
            except StoreUnavailable:
                return
        else:
            held = await self._saved(self._keeping.renew)
            self._send()  # after a pause: the notice undone
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
        """What the performer left pending, to the store: the keys first;
        once they are kept, the frames that show them to the client; then the
        games that ended and the bests (no frame waits for those: the keys
        hold them too). The answers: the best the store holds, if another
        session raised it higher.

        If play ends while one of those later writes is paused, the keys are
        kept and shown, and the writes left are handed to the server, which
        keeps trying them (:meth:`~.pauses.SavingPauses.keep_trying`): the
        player is told (:data:`SAID_RECORD_LATER`)."""
        pending, keeping, key = self._pending, self._keeping, self._key
        if self._lost:  # another session has the game: what this one did since is neither kept nor shown
            pending.drop()
            self._frames.clear()
            return []
        if pending.items:
            items, began = bytes(pending.items), self._clock()
            pending.items.clear()
            await self._saved(partial(self._keeping.append, items))  # the keys to the store, until it has them
            self.appended(self._clock() - began)
        self._send()
        records, pending.records = pending.records, []
        unaided = [record.score for record in records if record.unaided] + pending.unaided
        bests, pending.unaided, pending.bests = pending.bests, [], []
        writes: List[Write] = [partial(keeping.keep, record) for record in records]
        writes += [partial(keeping.record_best, unaided_key(key), score) for score in unaided]
        writes += [partial(keeping.record_best, key, best) for best in bests]
        first_best = len(writes) - len(bests)
        answers: List[Event] = []
        for index, write in enumerate(writes):
            try:
                stored = await self._saved(write, pause=not self._closing)
            except _Paused as paused:
                if not self._lost:  # a game taken over meanwhile is the other session's to write
                    self._pauses.keep_trying(writes[index:], paused.error, game=not self._counted)
                self._uncount()
                raise _Stop(SAID_RECORD_LATER if paused.said == SAID_UNSAVED else paused.said) from None
            if index >= first_best and isinstance(stored, int) and stored > bests[index - first_best]:
                answers.append(BestStored(stored))
        self._send()  # after a pause: the notice undone
        return answers

    async def _saved(self, write: Callable[[], Awaitable[T]], pause: bool = True) -> T:
        """What ``write`` (of a step's keys, a game ended, a best) gives,
        once the store has taken it. While the database is away, saving
        pauses (:meth:`_pause`) until it does; not ``pause`` (the player has
        left): play ends at once, as if they quit during a pause."""
        try:
            return await write()
        except ClaimLost:
            self._lost = True
            self._frames.clear()
            raise _Stop(SAID_TAKEN_OVER) from None
        except StoreUnavailable as error:
            if not pause:
                raise _Paused(SAID_UNSAVED, error) from None
            return await self._pause(write, error)

    async def _pause(self, write: Callable[[], Awaitable[T]], error: StoreUnavailable) -> T:
        """Saving has paused: the frames showing what ``write`` keeps are held back, and
        in their place the player sees the frame last sent with
        :data:`SAID_PAUSED` as its last line. The write is tried again with
        backoff; keys typed meanwhile are not played (dropped: nothing waits
        unbounded), bar q, which ends play. Once the store has the keys, the
        frame as it was sent comes back and the held frames follow: play goes on.

        The notice is a frame of its own, drawn from the screen's mark of
        what the terminal shows (the game's state is already past the held
        keys): the held frames are the difference from that mark, so the
        notice is undone before they go.

        The game is in the server's paused games (:mod:`.pauses`: the log's
        lines) until the write lands, or play ends (:meth:`_uncount`)."""
        self._pauses.paused_by(error)
        self._counted = True
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
        wait = PAUSE_FIRST
        while True:
            try:
                said = await self._paused_input(wait, later)
            except _Stop as stop:  # the claim lost
                raise _Paused(stop.said, error) from None
            if said is not None:
                raise _Paused(said, error)
            try:
                result = await write()
                break
            except ClaimLost:
                self._lost = True
                raise _Stop(SAID_TAKEN_OVER) from None
            except StoreUnavailable as again:
                error = again
                wait = next_wait(wait)
        self._uncount()
        self._screen.redraw(shown)  # the notice goes: the frame as it was sent
        self._frames.append(held)
        self._screen.rewind(after)
        self._unsaved = False
        self._link.rested()  # the pause was not the player's idleness
        for event in later.values():
            self._incoming.put_nowait(event)
        return result

    async def _paused_input(self, wait: float, later: Dict[type, Incoming]) -> Optional[str]:
        """What comes in for ``wait`` seconds of a pause; what to say if play must end."""
        end = self._clock() + wait
        while True:
            now = self._clock()
            if now >= self._renew_at:
                await self._renew()  # the claim outlives the pause (a long one would lose it)
            if now >= end:
                return None
            try:
                incoming = await asyncio.wait_for(self._incoming.get(), min(end, self._renew_at) - now)
            except asyncio.TimeoutError:
                continue
            if isinstance(incoming, Ended):
                return self._ended(incoming)
            if isinstance(incoming, Typed):
                # Decoded, so a sequence split around the pause stays whole; played, never.
                if Action.QUIT in self._decoder.feed(incoming.data):
                    return SAID_UNSAVED
            else:
                later[type(incoming)] = incoming

    def _uncount(self) -> None:
        """This game no longer waits for the store (its write landed, or play ended)."""
        if self._counted:
            self._counted = False
            self._pauses.resumed()

    def _send(self) -> None:
        """The frames drawn, to the client: the terminal shows them now."""
        if self._frames:
            self._write_frames()
            self._shown_mark = self._screen.mark()

    def _write_frames(self) -> None:
        text = "".join(self._frames)
        self._frames.clear()
        self._link.write(text.encode("utf-8", "replace"))
        self._sent()

    async def _close(self, said: str) -> None:
        """What the end of play writes, whatever ended it; the screen left
        with the cursor below the board, and ``said`` under it."""
        self._closing = True
        try:
            if not self._unsaved and not self._lost:
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
            self._uncount()

    async def _let_go(self) -> None:
        """The claim released (not if another session has it, nor while a write handed to the server needs it)."""
        if not self._lost and not self._claim_kept:
            with suppress(StoreUnavailable):  # then the claim expires by itself
                await self._keeping.release()
