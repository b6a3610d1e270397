"""One player's game over SSH: the keyboard game's loop (:mod:`ansi2048.loop.step`)
driven by one asyncio task (:class:`GameDriver`), its frames drawn by the local
game's own :class:`~ansi2048.play.screen.Screen`, so a player sees the frames
the local command draws for the same window, colour depth and keys.

The task waits for what comes in (the keys of one read, a new window size,
the end), or for the loop's next timer (:func:`~ansi2048.loop.step.next_due`),
steps the loop, and has the shared :mod:`~ansi2048.play.performer` do its effects
in order (the AI's question it answers itself, from the server's pool of
processes). Keys are decoded
incrementally (:class:`~ansi2048.game.keys.KeyDecoder`): an escape sequence split
across SSH packets decodes as from a terminal, and a lone ESC is given
:data:`~.game_parts.ESC_TIMEOUT` to become an arrow.

The driver is made of parts, each with its own constructor: the save policy
(:mod:`.saving`: what is stored before a frame is shown, the pauses), the
claim, the ESC's wait and the AI (:mod:`.game_parts`), and the game's rules
(:class:`GameRules`: none for a regular game; the daily game's, ranked or
practice, are :mod:`.ranked_rules`), which see each event before the loop
does and each step after it.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from typing import Awaitable, Callable, Dict, List, Optional, Protocol, Sequence

from ..game.keys import KeyDecoder
from ..loop.events import AIReady, AskAI, Effect, Event, Keys, Resized, Tick, Warned
from ..loop.state import Play
from ..loop.step import closing_effects, next_due, start, step
from ..play.performer import BestWriter, Performer
from ..play.screen import Screen
from ..records.history import config_key
from ..records.recording import Recorder
from .game_parts import DEFAULT_TIMINGS, AskingAI, Claim, EscapeWait, Timings
from .keeping import Keeping, Pending
from .limits import Breach
from .link import Ended, Incoming, Link, for_terminal, incoming_within, typed_ahead, unmeasured
from .pauses import SavingPauses, Write
from .pool import AIPool
from .saving import SAID_UNSAVED, FramesOut, PausedInput, PlayEnds, SavePolicy, during_pause

__all__ = [
    "SAID_DRAINED",
    "SAID_IDLE",
    "SAID_STOPPING",
    "SAID_STOPPING_GUEST",
    "SAID_STOPPING_VIEWER",
    "SAID_TOO_SLOW",
    "ChannelSide",
    "GameDriver",
    "GameRules",
    "PlainRules",
    "ServerSide",
    "said_at_end",
]

SAID_STOPPING = "the server is stopping; your game is kept: connect again to resume it"
# A draining server (a new one took over: serve/takeover.py) ends a game at its natural point.
SAID_DRAINED = "game over, and the server is updating: connect again to play on"
# ...as a guest is told (nothing of a guest's is kept), and one who watched,
# replayed or ran a command (no game of theirs was running).
SAID_STOPPING_GUEST = "the server is stopping; a guest's game is not kept"
SAID_STOPPING_VIEWER = "the server is stopping"
SAID_TOO_SLOW = "your connection cannot take the frames fast enough; your game is kept"
SAID_IDLE = "no key for a while: your game is kept; connect again to resume it"
# What a game says when its channel's rules end it (limits.ChannelRules).
_BREACH_SAID = {Breach.IDLE: SAID_IDLE, Breach.SLOW: SAID_TOO_SLOW}


def said_at_end(ended: Ended, guest: bool) -> str:
    """What to say as play ends from outside: the channel's rules (idle,
    a client not reading: its game is kept, said so), a take-over, the
    server stopping (a ``guest`` is not told its game is kept), the client gone."""
    if ended.breach is not None:
        return _BREACH_SAID[ended.breach]
    if ended.said == SAID_STOPPING and guest:
        return SAID_STOPPING_GUEST
    return ended.said


@dataclass(frozen=True)
class ChannelSide:
    """What a game has of its client's channel (the :class:`~.link.Client`):
    the ``screen`` the performer draws on, whose ``write`` collects into
    ``frames``; the ``link`` they are written to; what comes in (filled by
    the channel's callbacks); ``sent``, told after each write of frames."""

    screen: Screen
    frames: List[str]
    link: Link
    incoming: asyncio.Queue[Incoming]
    sent: Callable[[], None] = lambda: None


@dataclass(frozen=True)
class ServerSide:
    """What a game has of the server, taken from its
    :class:`~.context.ServeContext`: the AI's pool, the monotonic ``clock``
    (waits), ``now`` (wall time, for records) and the paused games."""

    pool: AIPool
    clock: Callable[[], float]
    now: Callable[[], float]
    pauses: SavingPauses
    # Told the seconds a read's keys took to be shown, and an append to land (serve/metrics.py).
    answered: Callable[[float], None] = unmeasured
    appended: Callable[[float], None] = unmeasured
    # The server drains (a new one took over): a game ends at its game over.
    draining: Callable[[], bool] = lambda: False


class GameRules(Protocol):
    """A kind of game's own rules, plugged into the driver: they see each
    event before the loop (and may take it, or end play with
    :class:`~.saving.PlayEnds`), each step after it, the claim's renewals
    and the end of play."""

    def decoder(self) -> KeyDecoder: ...

    def best_key(self, play: Play) -> str:
        """The key of the game's bests."""

    def begin(self, play: Play) -> Play:
        """The game as these rules play it."""

    async def before(self, game: GameDriver, event: Event) -> Optional[Event]:
        """``event`` as the loop gets it (None: it gets none)."""

    async def after(self, game: GameDriver) -> None:
        """A step is done (its frames sent)."""

    async def renew(self, game: GameDriver, renew: Callable[[], Awaitable[None]]) -> None:
        """The claim's renewal (``renew``), done when these rules say."""

    async def closing(self, game: GameDriver) -> None:
        """Play has ended: its last effects are still to come."""

    async def closed(self, game: GameDriver) -> None:
        """Play has ended and its last frame is written."""


class PlainRules:
    """A regular game's rules: the loop's alone."""

    def decoder(self) -> KeyDecoder:
        return KeyDecoder(comments=False, assist=True)

    def best_key(self, play: Play) -> str:
        game = play.session.game
        return config_key(game.rows, game.cols, game.goal)

    def begin(self, play: Play) -> Play:
        return play

    async def before(self, game: GameDriver, event: Event) -> Optional[Event]:
        return event

    async def after(self, game: GameDriver) -> None:
        pass

    async def renew(self, game: GameDriver, renew: Callable[[], Awaitable[None]]) -> None:
        await renew()

    async def closing(self, game: GameDriver) -> None:
        pass

    async def closed(self, game: GameDriver) -> None:
        pass


class GameDriver:
    """The asynchronous driver of one player's game (the contract is
    :mod:`ansi2048.play.performer`'s): ``run`` plays until the end and leaves
    the screen tidy, the last line said. The performer draws into the
    channel's frames and writes into a :class:`~.keeping.Pending`; once a
    step's effects are done, the save policy stores the keys and only then
    sends the frames. ``opening``: the writes of the game's opening (the
    recording begun or compacted), done before its first frame."""

    def __init__(
        self,
        play: Play,
        keeping: Keeping,
        channel: ChannelSide,
        server: ServerSide,
        rules: Optional[GameRules] = None,
        opening: Sequence[Write] = (),
        timings: Optional[Timings] = None,
    ) -> None:
        timings = timings or DEFAULT_TIMINGS  # read now: a test may set the module's
        self.rules: GameRules = rules or PlainRules()
        self.play = self.rules.begin(play)
        self.keys = 0  # keys played (for the log: how many, never which)
        self.said = ""  # what ended play, said to the player ("": they quit, or left)
        self.how = ""  # how, as the log says it, where what was said does not tell (PlayEnds.how)
        self._incoming = channel.incoming
        self._link = channel.link
        self._clock = server.clock
        self._decoder = self.rules.decoder()
        self.pending = Pending(server.now)
        best = BestWriter(self.pending.record_best, server.clock, play.session.best)
        self._performer = Performer(channel.screen, self.pending, Recorder(None, lambda message: None), best)
        self.claim = Claim(keeping, server.clock, timings.renew)
        self._escape = EscapeWait(timings.escape)
        self._ai = AskingAI(server.pool, server.clock, timings.ai)
        self._out = FramesOut(channel.screen, channel.frames, channel.link, channel.sent)
        key = self.rules.best_key(self.play)
        self.saving = SavePolicy(
            keeping, self.pending, self._out, self.claim, server.pauses, self, key, server.clock, server.appended
        )
        self._opening = list(opening)
        self._answered = server.answered
        self._draining = server.draining

    async def run(self) -> None:
        said = ""
        try:
            if self._ai.ready:
                self.play, _ = step(self.play, AIReady())
            for write in self._opening:  # the recording begun or compacted, before a frame shows it
                await self.saving.saved(write)
            self.play, effects = start(self.play, self._clock(), autoplay=False)
            await self._do(effects)
            said = await self._until_over()
        except PlayEnds as end:
            said, self.how = end.said, end.how
        finally:
            self.said = said
            await self._close(said)
            await self.claim.let_go()

    async def _until_over(self) -> str:
        """Play until the player quits (""), or until the end comes from outside."""
        escape = self._escape
        while not self.play.over:
            if self.play.session.game.over and self._draining() and next_due(self.play) is None:
                return SAID_DRAINED  # its last board shown whole, motion and all
            wake = [when for when in (next_due(self.play), escape.at) if when is not None]
            timeout = max(0.0, min([self.claim.renew_at, *wake]) - self._clock())
            incoming = await incoming_within(self._incoming, timeout)
            now = self._clock()
            if incoming is None:
                if self.claim.due(now):
                    await self._renew()
                if escape.due(now):
                    self._decoder.flush()  # the ESC stood alone: no action (it closes the help)
                    await self.feed(Keys((), now))
                due = next_due(self.play)
                if due is not None and now >= due:
                    await self.feed(Tick(now))
            elif isinstance(incoming, Ended):
                return self._ended(incoming)
            elif isinstance(incoming, (Resized, Warned)):
                await self.feed(incoming)
            else:
                actions = self._decoder.feed(typed_ahead(self._incoming, incoming.data))
                self.keys += len(actions)
                escape.after_read(now, self._decoder.pending)
                if actions or not self._decoder.pending:
                    await self.feed(Keys(tuple(actions), now))
                    self._answered(self._clock() - (incoming.at or now))  # their frame is written
        return ""

    def _ended(self, ended: Ended) -> str:
        """What to say as play ends from outside; after a take-over nothing more is written."""
        self.claim.lost = self.claim.lost or ended.lost
        return said_at_end(ended, self.play.settings.guest)

    async def _renew(self) -> None:
        await self.rules.renew(self, self.saving.renew_claim)

    async def feed(self, event: Event) -> None:
        """``event`` through the game's rules to the loop, its effects done."""
        screened = await self.rules.before(self, event)
        if screened is not None:
            await self.step(screened)
            await self.rules.after(self)

    async def step(self, event: Event) -> None:
        """``event`` to the loop (the rules' own, which they do not see again), its effects done."""
        self.play, effects = step(self.play, event)
        await self._do(effects)

    async def say(self, note: str) -> None:
        """``note`` on the note line, the frame drawn again."""
        self.play = replace(self.play, note=note)
        await self.step(Resized(self.play.size))

    async def _do(self, effects: List[Effect]) -> None:
        """One step's effects, in order; then their answers, each a step of its own."""
        answers: List[Event] = []
        for effect in effects:
            if isinstance(effect, AskAI):
                # The frames so far (the AI loading) go out while it thinks.
                answers += await self.saving.flush()
                answers.append(await self._ai.ask(effect, self.play))
            else:
                answers += self._performer.perform(effect)
        answers += await self.saving.flush()
        for answer in answers:
            await self.feed(answer)

    async def paused_input(self, wait: float, later: Dict[type, Incoming]) -> Optional[str]:
        """What comes in for ``wait`` seconds of a pause (the save policy's
        :class:`~.saving.PauseListener`); what to say if play must end."""
        end = self._clock() + wait
        while True:
            now = self._clock()
            if self.claim.due(now):
                await self._renew()  # the claim outlives the pause (a long one would lose it)
            if now >= end:
                return None
            incoming = await incoming_within(self._incoming, min(end, self.claim.renew_at) - now)
            if incoming is None:
                continue
            if isinstance(incoming, Ended):
                return self._ended(incoming)
            seen = during_pause(incoming, self._decoder)
            if seen is PausedInput.QUIT:
                return SAID_UNSAVED
            if seen is PausedInput.LATER:
                later[type(incoming)] = incoming

    def resumed(self, later: Dict[type, Incoming]) -> None:
        """The pause is over: it was not the player's idleness; what waited comes in."""
        self._link.rested()
        for event in later.values():
            self._incoming.put_nowait(event)

    async def _close(self, said: str) -> None:
        """What the end of play writes, whatever ended it; the screen left
        with the cursor below the board, and ``said`` under it."""
        saving, out = self.saving, self._out
        await self.rules.closing(self)
        saving.closing = True
        try:
            if not saving.unsaved and not self.claim.lost:
                for effect in closing_effects(self.play):
                    self._performer.perform(effect)
                await saving.flush()
        except PlayEnds as end:
            said = said or end.said
        finally:
            if saving.unsaved:  # the frames past the saved keys stay unsent: the screen is as last sent
                out.frames.clear()
                out.screen.rewind(out.shown)
            out.screen.close()
            out.write(for_terminal(f"{said}\n") if said else "")
            saving.uncount()
        await self.rules.closed(self)
