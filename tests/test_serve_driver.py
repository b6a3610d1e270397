"""The served game's driver and its parts (serve/game.py, saving.py,
game_parts.py, ranked_game.py) without a socket: the rules they decide by,
and the driver's order of saving and drawing, on an in-memory store and a
link that records what it is written, in the order it happens."""

from __future__ import annotations

import asyncio
import time
from typing import List, Optional, Tuple

import pytest

from ansi2048.game.engine import Game
from ansi2048.game.keys import Action, KeyDecoder
from ansi2048.game.session import Session
from ansi2048.loop.events import BestStored, Resized, Warned
from ansi2048.loop.state import Play, Settings
from ansi2048.play.screen import Screen
from ansi2048.records.history import Record, config_key, unaided_key
from ansi2048.render.style import ColorDepth
from ansi2048.serve.daily import FINISHED, PLAYING
from ansi2048.serve.game import (
    SAID_IDLE,
    SAID_STOPPING,
    SAID_STOPPING_GUEST,
    ChannelSide,
    GameDriver,
    ServerSide,
    said_at_end,
)
from ansi2048.serve.game_parts import Claim, EscapeWait
from ansi2048.serve.limits import Breach
from ansi2048.serve.link import Ended, Incoming, Typed
from ansi2048.serve.pauses import SavingPauses
from ansi2048.serve.pool import AIPool
from ansi2048.serve.ranked_game import Screened, screen_keys, status_at
from ansi2048.serve.saving import (
    SAID_PAUSED,
    SAID_TAKEN_OVER,
    LaterWrite,
    PausedInput,
    after_keys,
    bests_stored,
    during_pause,
)
from ansi2048.serve.store.base import ClaimLost, StoreUnavailable

H, A, R = Action.HINT, Action.AUTOPLAY, Action.RESTART
UP, LEFT = Action.UP, Action.LEFT

# -- the ranked game's rules ------------------------------------------------------


def test_a_ranked_read_plays_its_keys_up_to_a_question_and_drops_what_follows_it() -> None:
    assert screen_keys(None, [UP, LEFT]) == Screened((UP, LEFT))
    # A hint is asked about: the keys before it play, those after it do not
    # (they would answer a question the player has not seen yet).
    assert screen_keys(None, [UP, H, LEFT]) == Screened((UP,), asking=H, asked=H)
    assert screen_keys(None, [R]) == Screened((), asking=R, asked=R)
    assert screen_keys(None, [A, A]) == Screened((), asking=A, asked=A)  # the second is dropped too


def test_a_ranked_question_is_confirmed_by_its_own_key_only_and_any_other_answers_no() -> None:
    assert screen_keys(R, [R]) == Screened((), confirmed=R)
    assert screen_keys(H, [H, UP]) == Screened((), confirmed=H)  # ended: nothing after plays
    # Another key answers no, and only answers; the keys after it play.
    assert screen_keys(R, [UP, LEFT]) == Screened((LEFT,))
    assert screen_keys(R, [H]) == Screened(())  # another asked key answers too, and is not asked
    assert screen_keys(R, []) == Screened((), asking=R)  # an empty read: still asking


def test_a_ranked_game_left_before_midnight_is_played_on_and_after_it_finished() -> None:
    assert status_at(99.0, 100.0) == PLAYING
    assert status_at(100.0, 100.0) == FINISHED


# -- the save policy's rules ------------------------------------------------------


def _record(score: int, unaided: bool) -> Record:
    return Record(4, 4, 2048, 7, "wasd", score, 4, 16, False, True, False, not unaided, "2026-11-28T10:00:00Z")


def test_after_the_keys_come_the_records_then_the_unaided_bests_then_the_games_bests() -> None:
    key = config_key(4, 4, 2048)
    aided, alone = _record(40, unaided=False), _record(60, unaided=True)
    writes = after_keys([aided, alone], [30], [80], key)
    assert writes == [
        LaterWrite(record=aided),
        LaterWrite(record=alone),
        LaterWrite(key=unaided_key(key), score=60),  # the record that ended unaided
        LaterWrite(key=unaided_key(key), score=30),
        LaterWrite(key=key, score=80, asked=True),
    ]
    assert after_keys([], [], [], key) == []


def test_only_a_higher_best_held_by_the_store_is_answered_to_the_loop() -> None:
    best = LaterWrite(key="4x4", score=80, asked=True)
    assert bests_stored(best, 120) == [BestStored(120)]
    assert bests_stored(best, 80) == []
    assert bests_stored(LaterWrite(key="u", score=80), 120) == []  # the unaided best: no answer
    assert bests_stored(LaterWrite(record=_record(1, True)), None) == []


def test_during_a_pause_q_ends_play_keys_are_dropped_and_a_window_size_waits() -> None:
    decoder = KeyDecoder(comments=False, assist=True)
    assert during_pause(Typed(b"w"), decoder) is PausedInput.DROPPED
    assert during_pause(Typed(b"q"), decoder) is PausedInput.QUIT
    assert during_pause(Resized((80, 24)), decoder) is PausedInput.LATER
    assert during_pause(Warned("2 watching", True), decoder) is PausedInput.LATER
    # An arrow split around the pause is decoded whole, not read as ESC and [A.
    assert during_pause(Typed(b"\x1b"), decoder) is PausedInput.DROPPED
    assert during_pause(Typed(b"[A"), decoder) is PausedInput.DROPPED and not decoder.pending


def test_what_play_ended_from_outside_says() -> None:
    assert said_at_end(Ended(SAID_STOPPING), guest=False) == SAID_STOPPING
    assert said_at_end(Ended(SAID_STOPPING), guest=True) == SAID_STOPPING_GUEST  # nothing of theirs is kept
    assert said_at_end(Ended("", breach=Breach.IDLE), guest=False) == SAID_IDLE
    assert said_at_end(Ended(), guest=False) == ""


def test_a_lone_esc_waits_once_and_a_read_inside_no_sequence_cancels_the_wait() -> None:
    wait = EscapeWait(0.3)
    wait.after_read(10.0, pending=True)
    assert wait.at == 10.3 and not wait.due(10.2)
    assert wait.due(10.3) and not wait.due(10.4)  # due once
    wait.after_read(11.0, pending=True)
    wait.after_read(11.1, pending=False)
    assert wait.at is None and not wait.due(20.0)


# -- the driver, keys in and frames out, on an in-memory store --------------------


class MemoryKeeping:
    """A game kept in memory; its appends fail while told; each call logged in ``events``."""

    def __init__(self, events: List[str], failing: int = 0, lost: bool = False) -> None:
        self.events = events
        self.items = bytearray()
        self.failing = failing  # appends that fail as the database away does
        self.lost = lost  # an append finds the game taken over

    async def load(self) -> Optional[bytes]:
        return None

    async def rewrite(self, recording: bytes) -> None:
        self.events.append("rewrite")

    async def append(self, items: bytes) -> None:
        if self.lost:
            raise ClaimLost("taken")
        if self.failing:
            self.failing -= 1
            raise StoreUnavailable("the database is away")
        self.events.append("append")
        self.items += items

    async def best(self, key: str) -> int:
        return 0

    async def record_best(self, key: str, score: int) -> int:
        return score

    async def add_to_history(self, record: Record) -> None:
        self.events.append("add_to_history")

    async def renew(self) -> bool:
        return True

    async def release(self) -> None:
        self.events.append("release")


class RecordingLink:
    def __init__(self, events: List[str]) -> None:
        self.events = events
        self.text = ""

    def write(self, data: bytes) -> None:
        self.events.append("frame")
        self.text += data.decode("utf-8")

    def unsent(self) -> int:
        return 0

    def drop(self) -> None:
        self.events.append("drop")

    def rested(self) -> None:
        self.events.append("rested")


Driven = Tuple[GameDriver, RecordingLink, List[str]]


def _drive(keeping: MemoryKeeping, events: List[str], typed: List[bytes]) -> Driven:
    """A 4x4 game played to its end from ``typed`` (each a read), its driver, link and the server's log."""
    link = RecordingLink(events)
    log: List[str] = []
    frames: List[str] = []
    size = (60, 24)
    screen = Screen(lambda text: frames.append(text.replace("\n", "\r\n")), lambda: size, ColorDepth.TRUE, {})
    play = Play(Session(Game(4, 4, 2048, 7)), Settings(animate=False, can_wait=True, command="again"), size)

    async def run() -> GameDriver:
        incoming: asyncio.Queue[Incoming] = asyncio.Queue()
        for data in typed:
            incoming.put_nowait(Typed(data))
        pauses = SavingPauses(lambda line, *event, **fields: log.append(line), time.monotonic)
        server = ServerSide(AIPool(1), time.monotonic, time.time, pauses)
        driver = GameDriver(play, keeping, ChannelSide(screen, frames, link, incoming), server)
        await asyncio.wait_for(driver.run(), 20)
        return driver

    return asyncio.run(run()), link, log


def test_a_frame_is_written_only_once_the_keys_it_shows_are_kept() -> None:
    events: List[str] = []
    keeping = MemoryKeeping(events)
    driver, _, log = _drive(keeping, events, [b"w", b"a", b"q"])
    assert driver.said == "" and driver.play.over
    assert events[0] == "frame"  # the first frame shows no key
    assert events.index("append") < events.index("frame", 1)  # the next shows the keys: kept first
    assert b"w" in keeping.items and b"a" in keeping.items
    assert events[-1] == "release" and log == []  # the claim let go; no pause


def test_keys_kept_during_a_pause_are_shown_after_it_and_the_log_says_it_once() -> None:
    events: List[str] = []
    keeping = MemoryKeeping(events, failing=2)
    _, link, log = _drive(keeping, events, [b"wq"])
    notice = link.text.index(SAID_PAUSED)
    assert events.count("append") == 1 and b"w" in keeping.items  # tried until it landed, then kept once
    # The notice, then (once kept) the player's idle time restarted and the held frames sent.
    assert events.index("rested") > events.index("append") > events.index("frame", 1)
    assert len(link.text) > notice + len(SAID_PAUSED)
    assert [line.split(":")[0] for line in log] == ["saving paused", "saving resumed"]


def test_a_game_taken_over_shows_and_keeps_nothing_more_and_is_not_released() -> None:
    events: List[str] = []
    keeping = MemoryKeeping(events, lost=True)
    driver, link, _ = _drive(keeping, events, [b"w"])
    assert driver.said == SAID_TAKEN_OVER and driver.claim.lost
    assert "append" not in events and "release" not in events
    assert link.text.endswith(f"{SAID_TAKEN_OVER}\r\n")


def test_the_claim_is_renewed_a_period_after_the_last_renewal() -> None:
    now = [100.0]
    claim = Claim(MemoryKeeping([]), lambda: now[0], 10.0)
    assert claim.renew_at == 110.0 and not claim.due(109.9) and claim.due(110.0)
    now[0] = 111.0
    claim.renewing()
    assert claim.renew_at == 121.0


@pytest.mark.parametrize("lost,kept", [(True, False), (False, True)])
def test_a_claim_lost_or_needed_by_a_handed_over_write_is_not_released(lost: bool, kept: bool) -> None:
    events: List[str] = []
    claim = Claim(MemoryKeeping(events), time.monotonic, 10.0)
    claim.lost, claim.kept = lost, kept
    asyncio.run(claim.let_go())
    assert events == []
