"""A served game's save policy: what is stored before a frame is shown, and
what happens while the store cannot take it.

The keys a frame shows are appended, and the append has returned, before
that frame is written (the keys of one step share one append): nothing a
player was shown is lost, whatever happens to the server. A game's other
writes (its history record, bests, the claim's renewal, the recording begun
or compacted when it opens) follow the frames they belong to. While the
database cannot take any of them, saving pauses (:meth:`SavePolicy.saved`):
the frame waits, the player is told, the write is tried again until it
lands, and play resumes once it has; the server's log says so
(:mod:`.pauses`).

Play that must end says why with :class:`PlayEnds` (or :class:`PausedEnd`,
ended during a pause, the write not done), raised by the driver's parts
and caught by its run (:mod:`.game`)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from functools import partial
from typing import Awaitable, Callable, Dict, List, Optional, Protocol, Sequence, TypeVar

from ..game.keys import Action, KeyDecoder
from ..loop.events import BestStored, Event
from ..play.screen import Screen
from ..records.history import Record, unaided_key
from .game_parts import Claim
from .keeping import Keeping, Pending
from .link import Incoming, Link, Typed, unmeasured
from .pauses import PAUSE_FIRST, SavingPauses, Write, next_wait
from .store.base import ClaimLost, StoreUnavailable

__all__ = [
    "SAID_PAUSED",
    "SAID_RECORD_LATER",
    "SAID_TAKEN_OVER",
    "SAID_UNSAVED",
    "FramesOut",
    "PauseListener",
    "PausedEnd",
    "PausedInput",
    "PlayEnds",
    "SavePolicy",
    "after_keys",
    "bests_stored",
    "during_pause",
]

SAID_TAKEN_OVER = "your game was taken over by another session"
SAID_UNSAVED = "your game cannot be saved right now; what you saw is kept: try again later"
# The note while saving is paused (in the frame's note line, on the board as it was saved).
SAID_PAUSED = "saving has paused: the database is away; your keys wait"
# Said when play ends while the game's keys are kept but its record is not yet
# (the server keeps trying: :meth:`~.pauses.SavingPauses.keep_trying`).
SAID_RECORD_LATER = "your game is kept as you saw it; its record is saved when the database is back"
T = TypeVar("T")


class PlayEnds(Exception):
    """Play must end now, saying ``said`` (the frame not yet saved is not
    drawn); ``how``: how the session ended, as the log says it, where
    ``said`` alone does not tell (a ranked game's last line has its score in
    it); empty: the log reads it from ``said``."""

    def __init__(self, said: str, how: str = "") -> None:
        super().__init__(said)
        self.said = said
        self.how = how


class PausedEnd(PlayEnds):
    """Play must end during a pause, the write paused not done (the store's ``error``)."""

    def __init__(self, said: str, error: StoreUnavailable, how: str = "") -> None:
        super().__init__(said, how)
        self.error = error


@dataclass(frozen=True)
class LaterWrite:
    """One write that follows a step's frames: a history record, or a best
    score under its key (``asked``: a best of the game's own, whose stored
    value is answered to the loop)."""

    record: Optional[Record] = None
    key: str = ""
    score: int = 0
    asked: bool = False


def after_keys(records: Sequence[Record], unaided: Sequence[int], bests: Sequence[int], key: str) -> List[LaterWrite]:
    """What a step stores after its keys, in order: the games that ended,
    the unaided bests (the scores of games the AI never helped, and those
    ``records`` ended unaided), then the game's bests under ``key``."""
    scores = [record.score for record in records if record.unaided] + list(unaided)
    writes = [LaterWrite(record=record) for record in records]
    writes += [LaterWrite(key=unaided_key(key), score=score) for score in scores]
    return writes + [LaterWrite(key=key, score=best, asked=True) for best in bests]


def bests_stored(write: LaterWrite, stored: object) -> List[Event]:
    """The loop's answer to a best written: the store holds a higher one
    (another session of the player's raised it)."""
    if write.asked and isinstance(stored, int) and stored > write.score:
        return [BestStored(stored)]
    return []


class PausedInput(Enum):
    """What a read from the client is during a pause."""

    QUIT = "quit"  # q: play ends, the held state unkept
    LATER = "later"  # a window size, a note: applied once the pause is over
    DROPPED = "dropped"  # keys: never played (nothing waits unbounded)


def during_pause(incoming: Incoming, decoder: KeyDecoder) -> PausedInput:
    """What ``incoming`` (not :class:`~.link.Ended`) is during a pause.
    Keys are decoded, so a sequence split around the pause stays whole."""
    if isinstance(incoming, Typed):
        return PausedInput.QUIT if Action.QUIT in decoder.feed(incoming.data) else PausedInput.DROPPED
    return PausedInput.LATER


class FramesOut:
    """The frames the performer drew (the screen's ``write`` collects them
    in ``frames``), on their way to the client, and what its terminal shows
    (``shown``: the screen's mark of the frames last sent). ``sent`` is told
    after each write (watchers get the frames then: watch.py)."""

    def __init__(self, screen: Screen, frames: List[str], link: Link, sent: Callable[[], None]) -> None:
        self.screen = screen
        self.frames = frames
        self._link = link
        self._sent = sent
        self.shown = screen.mark()

    def send(self) -> None:
        """The frames drawn, to the client: the terminal shows them now."""
        if self.frames:
            self.write()
            self.shown = self.screen.mark()

    def write(self, tail: str = "") -> None:
        """The frames collected and ``tail``, written as they are."""
        text = "".join(self.frames) + tail
        self.frames.clear()
        self._link.write(text.encode("utf-8", "replace"))
        self._sent()

    def take(self) -> str:
        """The frames collected, taken back (held: not sent)."""
        held = "".join(self.frames)
        self.frames.clear()
        return held


class PauseListener(Protocol):
    """The driver's side of a pause: what comes in meanwhile, and what it does once over."""

    async def paused_input(self, wait: float, later: Dict[type, Incoming]) -> Optional[str]:
        """What comes in for ``wait`` seconds of a pause (kept in ``later``
        if it waits for the pause's end); what to say if play must end."""

    def resumed(self, later: Dict[type, Incoming]) -> None:
        """The pause is over: ``later`` comes in again."""


class SavePolicy:
    """The order of a served game's writes and frames, and its pauses:
    ``pending`` is what the performer left, ``key`` the key of the game's bests."""

    def __init__(
        self,
        keeping: Keeping,
        pending: Pending,
        out: FramesOut,
        claim: Claim,
        pauses: SavingPauses,
        listener: PauseListener,
        key: str,
        clock: Callable[[], float] = lambda: 0.0,
        appended: Callable[[float], None] = unmeasured,
    ) -> None:
        self._keeping = keeping
        self._pending = pending
        self._out = out
        self._claim = claim
        self._pauses = pauses
        self._listener = listener
        self._key = key
        self._clock = clock
        self._appended = appended  # told how long each append of keys took (on ``clock``) to land (serve/metrics.py)
        self.unsaved = False  # play ends in a pause: the state past the saved keys is neither drawn nor kept
        self.closing = False  # play has ended: what is left to write is written, or handed over, never paused for
        self._counted = False  # this game is in the server's paused games now

    async def flush(self) -> List[Event]:
        """What the performer left pending, to the store: the keys first;
        once they are kept, the frames that show them to the client; then the
        games that ended and the bests (no frame waits for those: the keys
        hold them too). The answers: the best the store holds, if another
        session raised it higher.

        If play ends while one of those later writes is paused, the keys are
        kept and shown, and the writes left are handed to the server, which
        keeps trying them (:meth:`~.pauses.SavingPauses.keep_trying`): the
        player is told (:data:`SAID_RECORD_LATER`)."""
        pending = self._pending
        if self._claim.lost:  # another session has the game: what this one did since is neither kept nor shown
            pending.drop()
            self._out.frames.clear()
            return []
        if pending.items:
            items, began = bytes(pending.items), self._clock()
            pending.items.clear()
            await self.saved(partial(self._keeping.append, items))
            self._appended(self._clock() - began)
        self._out.send()
        later = after_keys(pending.records, pending.unaided, pending.bests, self._key)
        pending.records, pending.unaided, pending.bests = [], [], []
        answers: List[Event] = []
        for index, write in enumerate(later):
            try:
                stored = await self.saved(self._write(write), pause=not self.closing)
            except PausedEnd as paused:
                if not self._claim.lost:  # a game taken over meanwhile is the other session's to write
                    self.hand_over([self._write(left) for left in later[index:]], paused.error)
                self.uncount()
                raise PlayEnds(SAID_RECORD_LATER if paused.said == SAID_UNSAVED else paused.said, paused.how) from None
            answers += bests_stored(write, stored)
        self._out.send()  # after a pause: the notice undone
        return answers

    def _write(self, write: LaterWrite) -> Write:
        if write.record is not None:
            return partial(self._keeping.add_to_history, write.record)
        return partial(self._keeping.record_best, write.key, write.score)

    def hand_over(self, writes: List[Write], error: StoreUnavailable) -> None:
        """``writes`` outlive the session, the server trying them until they land."""
        self._pauses.keep_trying(writes, error, game=not self._counted)

    async def renew_claim(self) -> None:
        """The claim renewed; play ends if another session has it."""
        self._claim.renewing()
        if self.unsaved:
            # In a pause (of this renewal or another write): tried, not paused
            # again; the claim outlives a short outage and the next one tries again.
            try:
                held = await self._keeping.renew()
            except StoreUnavailable:
                return
        else:
            held = await self.saved(self._keeping.renew)
            self._out.send()  # after a pause: the notice undone
        if not held:
            self._claim.lost = True
            raise PlayEnds(SAID_TAKEN_OVER)

    async def saved(self, write: Callable[[], Awaitable[T]], pause: bool = True) -> T:
        """What ``write`` (of a step's keys, a game ended, a best) gives,
        once the store has taken it. While the database is away, saving
        pauses (:meth:`_pause`) until it does; not ``pause`` (the player has
        left): play ends at once, as if they quit during a pause."""
        try:
            return await write()
        except ClaimLost:
            self._claim.lost = True
            self._out.frames.clear()
            raise PlayEnds(SAID_TAKEN_OVER) from None
        except StoreUnavailable as error:
            if not pause:
                raise PausedEnd(SAID_UNSAVED, error) from None
            return await self._pause(write, error)

    async def _pause(self, write: Callable[[], Awaitable[T]], error: StoreUnavailable) -> T:
        """Saving has paused: the frames showing what ``write`` keeps are held back, and
        in their place the player sees the frame last sent with
        :data:`SAID_PAUSED` as its last line. The write is tried again with
        backoff; keys typed meanwhile are not played (:func:`during_pause`),
        bar q, which ends play. Once the store has the keys, the frame as it
        was sent comes back and the held frames follow: play goes on.

        The notice is a frame of its own, drawn from the screen's mark of
        what the terminal shows (the game's state is already past the held
        keys): the held frames are the difference from that mark, so the
        notice is undone before they go.

        The game is in the server's paused games (:mod:`.pauses`: the log's
        lines) until the write lands, or play ends (:meth:`uncount`)."""
        self._pauses.paused_by(error)
        self._counted = True
        out, screen = self._out, self._out.screen
        held = out.take()
        # Whatever ends play from here on (q, the server stopping, the client
        # not reading, the claim lost) must not draw or keep the held state.
        self.unsaved = True
        after = screen.mark()  # what the held frames leave on screen
        shown = out.shown
        screen.rewind(shown)
        screen.notice(SAID_PAUSED)
        out.write()
        later: Dict[type, Incoming] = {}  # the latest window size and server note, for after the pause
        wait = PAUSE_FIRST
        while True:
            try:
                said = await self._listener.paused_input(wait, later)
            except PlayEnds as end:  # the claim lost, the day over
                raise PausedEnd(end.said, error, end.how) from None
            if said is not None:
                raise PausedEnd(said, error)
            try:
                result = await write()
                break
            except ClaimLost:
                self._claim.lost = True
                raise PlayEnds(SAID_TAKEN_OVER) from None
            except StoreUnavailable as again:
                error = again
                wait = next_wait(wait)
        self.uncount()
        screen.redraw(shown)  # the notice goes: the frame as it was sent
        out.frames.append(held)
        screen.rewind(after)
        self.unsaved = False
        self._listener.resumed(later)
        return result

    def uncount(self) -> None:
        """This game no longer waits for the store (its write landed, or play ended)."""
        if self._counted:
            self._counted = False
            self._pauses.resumed()
