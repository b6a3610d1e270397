"""The performer: the effects of the loop done through a store, a recorder
and a screen given to it, and the events that answer them; the answers go
back through ``step``, never into the state by the shell."""

from __future__ import annotations

from typing import List, Optional

from ansi2048.game.engine import Game
from ansi2048.game.keys import Action
from ansi2048.game.session import Played, Session
from ansi2048.loop.events import AddToHistory, Append, AskAI, BestStored, Draw, Keys, RecordUnaided, Warned, WriteBest
from ansi2048.loop.state import Play, Settings, view
from ansi2048.loop.step import step
from ansi2048.play.performer import BestWriter, NoStore, Performer
from ansi2048.play.screen import Screen
from ansi2048.records.recording import Item, Recorder
from ansi2048.render.style import ColorDepth

from .console import FakeClock

QUIET = Settings(animate=False, can_wait=True)


class ListStore:
    """A store that writes down what it is given; its stored best is ``stored``."""

    def __init__(self, stored: Optional[int] = None) -> None:
        self.saving = True
        self.items: List[Item] = []
        self.history: List[Played] = []
        self.unaided: List[int] = []
        self.bests: List[int] = []
        self.stored = stored

    def append(self, item: Item) -> None:
        self.items.append(item)

    def add_to_history(self, played: Played) -> None:
        self.history.append(played)

    def record_best(self, score: int) -> Optional[int]:
        self.bests.append(score)
        return None if self.stored is None else max(score, self.stored)

    def record_unaided(self, score: int) -> None:
        self.unaided.append(score)


def performer_of(store: ListStore, screen: Optional[Screen] = None, notes: Optional[List[str]] = None) -> Performer:
    best = BestWriter(store.record_best, FakeClock(), stored=0, interval=0)
    return Performer(screen, store, Recorder(None, lambda message: None), best, notes)


def test_the_stores_higher_best_comes_back_as_an_event_that_step_shows() -> None:
    store = ListStore(stored=5000)
    performer = performer_of(store)
    play = Play(Session(Game(seed=8)), QUIET, (80, 30))
    while play.session.game.score == 0:
        play, effects = step(play, Keys((Action.LEFT, Action.UP), 0.0))
    writes = [effect for effect in effects if isinstance(effect, WriteBest)]
    assert writes == [WriteBest(play.session.game.score)]
    answers = performer.perform(writes[0])
    assert store.bests == [play.session.game.score]
    assert answers == [BestStored(5000)]
    assert play.session.best < 5000  # the performer wrote nothing into the state
    play, effects = step(play, answers[0])
    assert play.session.best == 5000 and effects == []
    play, effects = step(play, BestStored(10))  # a lower one changes nothing
    assert play.session.best == 5000
    assert view(play).best == 5000


def test_a_store_that_answers_later_leaves_the_best_alone() -> None:
    store = ListStore(stored=None)  # as an asynchronous store: no answer yet
    performer = performer_of(store)
    assert performer.perform(WriteBest(64)) == []
    assert store.bests == [64]
    performer.perform(WriteBest(64, final=True))
    assert store.bests == [64]  # written once: the writer counts it as stored


def test_games_and_unaided_scores_go_to_the_store() -> None:
    store = ListStore()
    performer = performer_of(store)
    session = Session(Game(seed=3))
    session.apply(Action.LEFT)
    played = session.played()
    assert performer.perform(AddToHistory(played)) == []
    assert performer.perform(RecordUnaided(8)) == []
    assert performer.perform(Append((Action.UP,))) == []
    assert store.history == [played] and store.unaided == [8] and store.items == [Action.UP]


def test_a_warning_said_while_performing_comes_back_once() -> None:
    notes: List[str] = []
    store = ListStore()
    performer = performer_of(store, notes=notes)
    notes.append("disk full")
    store.saving = False
    assert performer.perform(Append((Action.UP,))) == [Warned("disk full", saving=False)]
    assert performer.perform(Append((Action.UP,))) == []


def test_frames_go_to_the_screens_write_which_a_driver_may_hold_back() -> None:
    """An asynchronous driver collects a step's frames and sends them once
    its store has made the keys durable: the performer only writes."""
    held: List[str] = []
    screen = Screen(held.append, lambda: (80, 30), ColorDepth.NONE, {})
    performer = performer_of(ListStore(), screen)
    play = Play(Session(Game(seed=8)), QUIET, (80, 30))
    performer.perform(Draw(view(play)))
    assert len(held) == 1 and "Score" in held[0]


def test_without_a_screen_or_a_store_nothing_is_drawn_or_kept() -> None:
    store = NoStore()
    best = BestWriter(store.record_best, FakeClock(), stored=0, interval=0)
    performer = Performer(None, store, Recorder(None, lambda message: None), best)
    play = Play(Session(Game(seed=8)), QUIET, (80, 30))
    for _ in range(20):
        play, effects = step(play, Keys((Action.LEFT, Action.UP), 0.0))
        for effect in effects:
            assert not isinstance(effect, AskAI)
            assert performer.perform(effect) == []
    assert play.session.best == play.session.game.score > 0
