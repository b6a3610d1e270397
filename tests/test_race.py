"""A race's rules (ansi2048/game/race.py): the lobby, the countdown, the
three ways a race ends, and its order."""

from __future__ import annotations

from typing import Tuple

import pytest
from hypothesis import given, strategies as st

from ansi2048.game.race import (
    COUNTDOWN_SECONDS,
    LOBBY_SECONDS,
    Phase,
    Progress,
    Race,
    RaceSettings,
    standings,
)

T0 = 1_800_000_000.0


def _running(players: Tuple[str, ...] = ("ann", "bob"), goal: int = 2048, minutes: int = 5) -> Race:
    race = Race(RaceSettings(goal=goal, players=len(players), minutes=minutes), opened=T0)
    for name in players:
        race = race.join(name, T0 + 1)
    race = race.tick(T0 + 1 + COUNTDOWN_SECONDS)
    assert race.phase is Phase.RUNNING
    return race


def test_the_lobby_fills_then_counts_down_then_runs_for_its_minutes() -> None:
    race = Race(RaceSettings(players=3, minutes=2), opened=T0)
    race = race.join("ann", T0 + 5).join("bob", T0 + 6)
    assert (race.phase, race.waiting_for, race.names) == (Phase.LOBBY, 1, ("ann", "bob"))
    race = race.join("cy", T0 + 7)
    assert (race.phase, race.starts, race.waiting_for) == (Phase.COUNTDOWN, T0 + 10, 0)
    assert race.tick(T0 + 9.9).phase is Phase.COUNTDOWN
    race = race.tick(T0 + 10)
    assert (race.phase, race.ends) == (Phase.RUNNING, T0 + 10 + 120)
    with pytest.raises(ValueError, match="begun"):
        race.join("dee", T0 + 11)


def test_one_name_once_and_a_leaver_in_the_countdown_reopens_the_lobby() -> None:
    race = Race(RaceSettings(), opened=T0).join("ann", T0)
    with pytest.raises(ValueError, match="already"):
        race.join("ann", T0)
    race = race.join("bob", T0 + 1)
    assert race.phase is Phase.COUNTDOWN
    race = race.leave("bob", T0 + 2)
    assert (race.phase, race.starts, race.names) == (Phase.LOBBY, None, ("ann",))
    assert race.tick(T0 + 60).phase is Phase.LOBBY  # no countdown left to end


def test_a_lobby_nobody_fills_expires_after_ten_minutes() -> None:
    race = Race(RaceSettings(), opened=T0).join("ann", T0)
    assert race.tick(T0 + LOBBY_SECONDS - 1).phase is Phase.LOBBY
    expired = race.tick(T0 + LOBBY_SECONDS)
    assert (expired.phase, expired.ended, expired.result(), expired.winner()) == (Phase.EXPIRED, T0 + 600, (), None)


def test_the_first_to_reach_the_goal_wins_at_once() -> None:
    race = _running(("ann", "bob", "cy"), goal=64)
    race = race.moved("ann", 500, 32, 40, T0 + 30)  # the best score so far...
    race = race.moved("bob", 300, 64, 35, T0 + 31)  # ...but bob reaches 64 first
    assert race.phase is Phase.OVER and race.ended == T0 + 31
    assert [player.name for player in race.result()] == ["bob", "ann", "cy"]
    assert race.winner() == "bob"
    assert race.moved("ann", 900, 64, 50, T0 + 32) == race  # nothing counts after the end


def test_at_the_time_limit_the_best_score_wins_then_fewer_moves_then_who_got_there_first() -> None:
    race = _running(("ann", "bob", "cy", "dee"), minutes=1)
    start = race.ends - 60  # type: ignore[operator]
    race = race.moved("ann", 200, 16, 30, start + 10)
    race = race.moved("bob", 200, 16, 25, start + 20)  # same score, fewer moves: ahead of ann
    race = race.moved("cy", 200, 16, 25, start + 15)  # same score and moves, got there sooner: ahead of bob
    race = race.moved("dee", 100, 8, 10, start + 5)
    race = race.moved("dee", 100, 8, 11, start + 30)  # a move that scores nothing keeps dee's time
    assert race.players[3].since == start + 5
    assert race.tick(start + 59.9).phase is Phase.RUNNING
    over = race.tick(start + 60)
    assert (over.phase, over.ended) == (Phase.OVER, start + 60)
    assert [player.name for player in over.result()] == ["cy", "bob", "ann", "dee"]


def test_when_all_but_one_have_left_it_ends_and_a_dropped_player_may_come_back_before() -> None:
    race = _running(("ann", "bob", "cy"))
    race = race.moved("bob", 40, 8, 5, T0 + 20).leave("bob", T0 + 21)
    assert race.phase is Phase.RUNNING and race.players[1].left
    race = race.back("bob")
    assert not race.players[1].left
    race = race.leave("bob", T0 + 22).leave("cy", T0 + 23)
    assert (race.phase, race.ended) == (Phase.OVER, T0 + 23)
    assert [player.name for player in race.result()] == ["bob", "ann", "cy"]  # the leavers keep what they had
    assert race.winner() == "bob"


def test_when_no_board_still_in_the_race_can_move_it_ends_there() -> None:
    # Waiting for the time would change nothing; one stuck board alone ends nothing.
    race = _running(("ann", "bob", "cy"))
    race = race.moved("ann", 60, 16, 30, T0 + 20, stuck=True)
    assert race.phase is Phase.RUNNING and race.players[0].stuck
    race = race.moved("bob", 44, 8, 25, T0 + 30, stuck=True)
    assert race.phase is Phase.RUNNING  # cy still moves
    race = race.moved("cy", 20, 8, 9, T0 + 40)
    assert race.phase is Phase.RUNNING and not race.players[2].stuck
    race = race.leave("cy", T0 + 41)  # the only board that could move left: the rest are stuck
    assert (race.phase, race.ended) == (Phase.OVER, T0 + 41)
    assert [player.name for player in race.result()] == ["ann", "bob", "cy"]
    race = _running().moved("ann", 8, 4, 3, T0 + 20, stuck=True).moved("bob", 12, 8, 4, T0 + 21, stuck=True)
    assert (race.phase, race.ended, race.winner()) == (Phase.OVER, T0 + 21, "bob")


def test_reports_from_strangers_or_outside_the_race_change_nothing() -> None:
    lobby = Race(RaceSettings(), opened=T0).join("ann", T0)
    assert lobby.moved("ann", 100, 8, 3, T0 + 1) == lobby
    race = _running()
    assert race.moved("mallory", 10**6, 2048, 1, T0 + 10) == race


@pytest.mark.parametrize(
    "settings, said",
    [
        ({"players": 1}, "players must be from 2 to 8, got 1"),
        ({"players": 9}, "players must be from 2 to 8, got 9"),
        ({"minutes": 0}, "minutes must be from 1 to 30, got 0"),
        ({"minutes": 31}, "minutes must be from 1 to 30, got 31"),
        ({"rows": 2, "cols": 2, "goal": 2048}, "cannot be reached on a 2x2 board"),
        ({"goal": 100}, "power of two"),
    ],
)
def test_settings_out_of_range_are_refused_saying_why(settings: dict, said: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(ValueError, match=said):
        RaceSettings(**settings)


progress = st.builds(
    Progress,
    name=st.text(min_size=1, max_size=3),
    score=st.integers(0, 5000),
    biggest=st.sampled_from([0, 2, 4, 2048]),
    moves=st.integers(0, 500),
    since=st.floats(0, 100),
    reached=st.none() | st.floats(0, 100),
)


@given(st.lists(progress, max_size=8))
def test_the_order_is_every_player_once_goal_reachers_first(players: list) -> None:  # type: ignore[type-arg]
    order = standings(tuple(players))
    assert sorted(map(repr, order)) == sorted(map(repr, players))
    reached = [p for p in order if p.reached is not None]
    assert order[: len(reached)] == tuple(reached)
    assert [p.reached for p in reached] == sorted(p.reached for p in reached)  # type: ignore[type-var]
    rest = order[len(reached) :]
    assert all(a.score >= b.score for a, b in zip(rest, rest[1:]))
