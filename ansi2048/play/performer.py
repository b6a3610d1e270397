"""The performer: does the effects :func:`.loop.step` asks for, for any
driver, and gives back the events that answer them.

A *driver* owns the wait for events and the loop around the state machine;
the performer owns what the effects do. The contract, for whoever writes a
driver (the blocking terminal driver in :mod:`.interactive` is one):

1. Keep one :class:`~.state.Play`. For every event (a key read, a timer
   :func:`.loop.next_due` set coming due, a resize, an answer), call
   ``play, effects = step(play, event)`` and replace your ``play`` with the
   new one. Nothing else writes into ``play`` or its session.
2. Do the effects *in order*. :class:`~.events.AskAI` is yours: answer it
   with :class:`~.events.AIMoved` (the blocking driver asks the AI at once; an
   asyncio driver may ask a process pool and feed the answer when it comes,
   feeding the other events meanwhile: ``step`` keeps the turn waiting for
   it; a key that takes control back makes autoplay's late answer play
   nothing, while a late hint is shown for the board it was asked about,
   so such a driver may drop a hint answered after a key). Every other
   effect goes to :meth:`Performer.perform`, which returns the events that
   answer it (a warning from the files, the best score the storage now
   holds).
3. Once the effects of one step are done, feed their answers to ``step``
   in the order they came, each the same way, before waiting again.
4. Stop when ``play.over``; then perform :func:`.loop.closing_effects`
   (also after a signal or a lost connection) and close the screen.

:class:`BlockingDriver` is steps 1 to 3 for a driver that may block while
it waits (the terminal's, the pipe's, the headless AI's).

Order is durability: ``step`` puts :class:`~.events.Append` (a key into the
save) before the :class:`~.events.Draw` that shows the key. A driver whose
storage is asynchronous makes its :class:`PlayStore` buffer what it is
given, hands the performer a :class:`~.screen.Screen` whose ``write``
collects the frame's text, and, once the step's effects are done, awaits
its storage's flush before it sends the collected text: a frame is sent
only once the keys it shows are durable. :meth:`PlayStore.record_best` may
then return None (no answer yet); the driver feeds
:class:`~.events.BestStored` itself once its storage answers.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Protocol, Union

from ..game.session import Played
from ..loop.events import (
    AddToHistory,
    AIMoved,
    Append,
    AskAI,
    BestStored,
    Draw,
    Effect,
    Event,
    Leave,
    Quit,
    RecordKeys,
    RecordUnaided,
    Report,
    StopRecording,
    Warned,
    WriteBest,
)
from ..loop.state import Play
from ..loop.step import step
from ..records.recording import Item, Recorder
from .screen import Screen

__all__ = ["BEST_WRITE_INTERVAL", "BestWriter", "BlockingDriver", "NoStore", "Performed", "Performer", "PlayStore"]

# Seconds between writes of a rising best score during play: a write costs
# up to ~10 ms on a local disk, which the next key should not wait for.
BEST_WRITE_INTERVAL = 1.0

# Every effect but AskAI: the driver answers that one (see the module's docstring).
Performed = Union[Append, RecordKeys, Report, StopRecording, AddToHistory, RecordUnaided, WriteBest, Draw, Leave, Quit]


class PlayStore(Protocol):
    """Where a game's keys, its history and the bests go: the data directory
    (:class:`.storage.BoardStore`), nothing (:class:`NoStore`), or a
    server's database behind an asynchronous driver. Failures are the
    store's to say (as warnings); none ends the game."""

    @property
    def saving(self) -> bool:
        """The keys given reach the save (a kill then loses nothing the save holds)."""

    def append(self, item: Item) -> None:
        """Add ``item`` (a key, a restart's seed, the assisted mark) to the save."""

    def add_to_history(self, played: Played) -> None:
        """Put a finished (or left) game in the history."""

    def record_best(self, score: int) -> Optional[int]:
        """Raise this board's stored best to ``score``; the best now stored,
        or None if the answer comes later (the driver then feeds it)."""

    def record_unaided(self, score: int) -> None:
        """Raise this board's best without undo or AI to ``score``."""


class NoStore:
    """A store that keeps nothing: piped and headless games are pure."""

    saving = False

    def append(self, item: Item) -> None:
        pass

    def add_to_history(self, played: Played) -> None:
        pass

    def record_best(self, score: int) -> Optional[int]:
        return None

    def record_unaided(self, score: int) -> None:
        pass


class BestWriter:
    """Writes a rising best score at most once per ``interval`` seconds of
    ``clock``, and whatever is left at the end (``flush``). If the game is
    killed in between, resuming its save recovers the best it reached."""

    def __init__(
        self,
        store: Callable[[int], Optional[int]],
        clock: Callable[[], float],
        stored: int,
        interval: float = BEST_WRITE_INTERVAL,
    ) -> None:
        self._store = store  # writes a best, returns the best now stored (None: not known yet)
        self._clock = clock
        self._interval = interval
        self.stored = stored
        self._written_at = clock()

    def offer(self, best: int, urgent: bool = False) -> int:
        """Write ``best`` if it is higher and the interval has passed (or
        ``urgent``: nothing else would recover it after a kill); the best to
        show (another game may have stored a higher one)."""
        if best > self.stored and (urgent or self._clock() - self._written_at >= self._interval):
            self._write(best)
            self._written_at = self._clock()
        return max(best, self.stored)

    def flush(self, best: int) -> None:
        if best > self.stored:
            self._write(best)

    def _write(self, best: int) -> None:
        stored = self._store(best)
        self.stored = best if stored is None else stored


class Performer:
    """Does effects: frames through ``screen`` (none: nothing is drawn),
    keys and games into ``store``, keys into ``recorder`` (``--record``),
    what keys did to ``report`` (``--json``). ``notes`` is where the store
    and the recorder put their warnings once the board is up: each new one
    comes back as a :class:`~.events.Warned`."""

    def __init__(
        self,
        screen: Optional[Screen],
        store: PlayStore,
        recorder: Recorder,
        best: BestWriter,
        notes: Optional[List[str]] = None,
        report: Optional[Callable[[Dict[str, Any]], None]] = None,
    ) -> None:
        self._report = report
        self._screen = screen
        self._store = store
        self._recorder = recorder
        self._best = best
        self._notes: List[str] = [] if notes is None else notes
        self._warned = len(self._notes)
        self._recording = True  # --record follows the game (or there is none)

    def draw_nothing(self) -> None:
        """From now on no frame is drawn (nobody sees them: a piped replay's
        ``--cast`` stopped). The screen is not closed: it writes to no terminal."""
        self._screen = None

    def perform(self, effect: Performed) -> List[Event]:
        """Do ``effect``; the events that answer it, to be fed to ``step``."""
        answers: List[Event] = []
        if isinstance(effect, Draw):
            if self._screen is not None:
                if effect.help:
                    self._screen.paint_help(effect.view)
                else:
                    self._screen.paint(effect.view, effect.sprites, effect.shake)
        elif isinstance(effect, Append):
            append = self._store.append
            for item in effect.items:
                append(item)
        elif isinstance(effect, RecordKeys):
            action = self._recorder.action
            for item in effect.items:
                action(item)
        elif isinstance(effect, Report):
            if self._report is not None:
                self._report(effect.event)
        elif isinstance(effect, StopRecording):
            if self._recording:
                self._recording = False
                self._recorder.warn(f"recording stopped: {effect.why}")
                self._recorder.close()
        elif isinstance(effect, AddToHistory):
            self._store.add_to_history(effect.played)
        elif isinstance(effect, RecordUnaided):
            self._store.record_unaided(effect.score)
        elif isinstance(effect, WriteBest):
            if effect.final:
                self._best.flush(effect.best)
            else:
                shown = self._best.offer(effect.best, urgent=effect.urgent)
                if shown > effect.best:
                    answers.append(BestStored(shown))
        elif isinstance(effect, Leave) and self._screen is not None:
            self._screen.close()
        # Quit: nothing to do; the driver sees that play is over.
        if len(self._notes) > self._warned:
            fresh, self._warned = self._notes[self._warned :], len(self._notes)
            answers = [Warned(message, self._store.saving) for message in fresh] + answers
        return answers


class BlockingDriver:
    """What every blocking driver shares (the terminal's, the pipe's, the
    headless AI's): feed an event to ``step``, do its effects in order (the
    performer's, and :meth:`ask` for the AI's), then feed their answers. An
    asyncio driver does the same with awaits in between (see the module's
    docstring)."""

    def __init__(self, play: Play, performer: Performer) -> None:
        self.play = play
        self.performer = performer

    def feed(self, event: Event) -> None:
        self.play, effects = step(self.play, event)
        self.do(effects)

    def do(self, effects: List[Effect]) -> None:
        answers: List[Event] = []
        for effect in effects:
            if isinstance(effect, AskAI):
                moved = self.ask(effect)
                if moved is None:
                    return  # no answer (interrupted): nothing more happens
                answers.append(moved)
            else:
                answers += self.performer.perform(effect)
        for answer in answers:
            self.feed(answer)

    def ask(self, effect: AskAI) -> Optional[AIMoved]:
        """The AI's answer; None if it was interrupted before it gave one."""
        raise NotImplementedError(f"{type(self).__name__} asks no AI")
