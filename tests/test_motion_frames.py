"""Motion frames stay byte for byte what players saw and casts recorded.

The board in motion was rebuilt for speed (cached sprite pieces, a key's
view built once); what it draws must not change. ``motion_frames.json`` holds
digests made by the code before that rebuild (``python -m
tests.test_motion_frames`` wrote it): for seeded games played through the
loop (keys at paces that let a motion finish and that cut it short, moves
that change nothing), at sizes that take every layout, in every colour depth
and theme, the digest of every frame built (its text) and of every byte the
screen wrote (the diffs between frames)."""

from __future__ import annotations

import hashlib
import json
import random
import sys
from dataclasses import FrozenInstanceError, fields, replace
from pathlib import Path
from typing import Dict, List, NamedTuple

import pytest

from ansi2048.game.engine import Direction, Game
from ansi2048.game.keys import move_action
from ansi2048.game.session import Session
from ansi2048.loop.events import BestStored, Draw, Effects, Event, Keys, Tick, Warned
from ansi2048.loop.state import Moving, Play, Settings, view, with_moving
from ansi2048.loop.step import next_due, step
from ansi2048.play.screen import Screen
from ansi2048.render.frame import build_frame
from ansi2048.render.style import ColorDepth
from ansi2048.render.themes import THEMES

REFERENCE = Path(__file__).with_name("motion_frames.json")
KEYS = 40
# Seconds from a key to the next: the motion runs out (0.25), is cut short
# after its first frames (0.05), or before its second (0.02).
PACES = (0.25, 0.25, 0.05, 0.02)


class Case(NamedTuple):
    seed: int
    rows: int
    cols: int
    width: int
    height: int
    theme: str
    depth: ColorDepth

    @property
    def name(self) -> str:
        return f"{self.rows}x{self.cols}@{self.width}x{self.height}-{self.theme}-{self.depth.name}-seed{self.seed}"


# (rows, cols, width, height): the layouts HUGE, LARGE, BIG, MEDIUM, COMPACT
# and NARROW, and boards that are not square.
SHAPES = (
    (4, 4, 120, 45),
    (4, 4, 100, 30),
    (4, 4, 80, 24),
    (3, 3, 40, 16),
    (5, 5, 50, 14),
    (6, 6, 80, 30),
    (10, 10, 80, 30),
    (2, 6, 100, 30),
    (3, 5, 60, 20),
)


def cases() -> List[Case]:
    themes = sorted(THEMES)
    out = []
    for index, (rows, cols, width, height) in enumerate(SHAPES):
        for depth in ColorDepth:
            theme = themes[(index + depth.value) % len(themes)]
            out.append(Case(1 + index + 10 * depth.value, rows, cols, width, height, theme, depth))
    return out


def digest(case: Case) -> str:
    """What the screen wrote and every frame's text, for ``KEYS`` keys of
    random moves played through the loop at mixed paces."""
    written: List[str] = []
    size = (case.width, case.height)
    palette = THEMES[case.theme]()
    screen = Screen(written.append, lambda: size, case.depth, {"TERM": "xterm-256color"}, palette=palette)
    play = Play(Session(Game(case.rows, case.cols, seed=case.seed)), Settings(animate=True, can_wait=True), size)
    rng = random.Random(case.seed)
    hashed = hashlib.sha256()

    def perform(effects: Effects) -> None:
        for effect in effects:
            if isinstance(effect, Draw):
                sprites, shake = effect.sprites, effect.shake
                frame = build_frame(effect.view, case.depth, *size, palette=palette, sprites=sprites, shake=shake)
                hashed.update("\n".join(frame.text()).encode())
                screen.paint(effect.view, effect.sprites, effect.shake)
                hashed.update("".join(written).encode())
                written.clear()

    now = 0.0
    for _ in range(KEYS):
        if play.session.game.over:
            play.session.game.restart()
        play, effects = step(play, Keys((move_action(rng.choice(list(Direction))),), now))
        perform(effects)
        later = now + rng.choice(PACES)
        due = next_due(play)
        while due is not None and due < later:
            play, effects = step(play, Tick(due))
            perform(effects)
            due = next_due(play)
        now = later
    return hashed.hexdigest()


def reference() -> Dict[str, str]:
    return dict(json.loads(REFERENCE.read_text(encoding="utf-8")))


@pytest.mark.parametrize("case", cases(), ids=lambda case: case.name)
def test_motion_frames_are_those_of_the_reference(case: Case) -> None:
    assert digest(case) == reference()[case.name]


def test_the_reference_covers_every_case() -> None:
    assert sorted(reference()) == sorted(case.name for case in cases())


def test_the_digest_sees_a_change_of_one_frame() -> None:
    case = cases()[0]
    assert digest(case._replace(seed=case.seed + 1)) != reference()[case.name]


if __name__ == "__main__":
    # Writes the reference: only from code whose frames are known good.
    table = {case.name: digest(case) for case in cases()}
    REFERENCE.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{len(table)} digests written to {REFERENCE}", file=sys.stderr)


@pytest.mark.parametrize("event", [BestStored(10**6), Warned("the disk is full", saving=False)])
def test_a_best_or_a_warning_that_comes_during_a_motion_shows_in_its_next_frame(event: Event) -> None:
    """A key's motion frames share one view, built with the key: what
    changes the view meanwhile shows from the next frame of the motion on."""
    play = Play(Session(Game(seed=1)), Settings(animate=True, can_wait=True), (100, 30))
    play, effects = step(play, Keys((move_action(Direction.LEFT),), 0.0))
    first = [effect for effect in effects if isinstance(effect, Draw)][-1]
    assert first.sprites is not None and (first.view.best, first.view.note) == (0, "")
    play, effects = step(play, event)
    assert effects == []  # no frame of its own: the motion's next one shows it
    due = next_due(play)
    assert due is not None
    play, effects = step(play, Tick(due))
    (frame,) = [effect for effect in effects if isinstance(effect, Draw)]
    assert frame.sprites is not None
    expected = (10**6, "") if isinstance(event, BestStored) else (0, "the disk is full")
    assert (frame.view.best, frame.view.note) == expected
    while play.moving is not None:  # and so does the settled frame
        due = next_due(play)
        assert due is not None
        play, effects = step(play, Tick(due))
    (settled,) = [effect for effect in effects if isinstance(effect, Draw)]
    assert settled.sprites is None and (settled.view.best, settled.view.note) == expected


def test_a_tick_moves_the_state_on_as_replace_would() -> None:
    """``with_moving`` copies Play's fields instead of ``dataclasses.replace``:
    the same value, the state it came from untouched, still frozen; and
    Play has nothing computed at construction that a copy would skip."""
    play = Play(Session(Game(seed=1)), Settings(animate=True, can_wait=True), (100, 30), note="n", gained=8)
    moving = Moving(1.0, (), 0.1, view(play))
    moved = with_moving(play, moving)
    assert moved == replace(play, moving=moving) and moved.moving is moving
    assert play.moving is None and moved.note == "n" and moved.gained == 8
    with pytest.raises(FrozenInstanceError):
        moved.moving = None  # type: ignore[misc]
    assert not hasattr(Play, "__post_init__") and all(field.init for field in fields(Play))
