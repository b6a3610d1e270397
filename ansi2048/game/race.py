"""A race's rules (pure): two to eight players on one deal, from a lobby to
a result.

A race is a value; each event (a player joins or leaves the lobby, a clock
reading, a player's progress) gives the next value, so the server's shell
only feeds it events and shows what it holds. The phases::

    LOBBY --(full)--> COUNTDOWN --(3 s)--> RUNNING --(goal, time, one left)--> OVER
      \\--(nobody came in 10 minutes)--> EXPIRED

It ends when a player reaches the goal (the first to reach it wins), when
its time is up (the best score wins; ties: fewer moves, then whoever got
to the score first), or when all but one have left. The result is settled
by the shell only once every player's keys replay, from the race's seed, to
what they reported (as ranked daily games are); here is only the order."""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum
from typing import Iterable, List, Optional, Tuple

from .engine import check_goal, check_size
from .keys import Action
from .limits import DEFAULT_GOAL, DEFAULT_SIZE

__all__ = [
    "COUNTDOWN_SECONDS",
    "DEFAULT_MINUTES",
    "DEFAULT_PLAYERS",
    "LOBBY_SECONDS",
    "MAX_MINUTES",
    "MAX_PLAYERS",
    "MIN_MINUTES",
    "MIN_PLAYERS",
    "RACE_ACTIONS",
    "Phase",
    "Progress",
    "Race",
    "RaceSettings",
    "race_actions",
    "standings",
]

MIN_PLAYERS, MAX_PLAYERS, DEFAULT_PLAYERS = 2, 8, 2
MIN_MINUTES, MAX_MINUTES, DEFAULT_MINUTES = 1, 30, 5
COUNTDOWN_SECONDS = 3.0
# A lobby that has not filled by then is closed, saying so.
LOBBY_SECONDS = 600.0
# The keys of a race: the moves, and leaving. No undo (nor a new game): the
# deal is the race's; hints and autoplay are never even decoded.
RACE_ACTIONS = frozenset((Action.UP, Action.DOWN, Action.LEFT, Action.RIGHT, Action.QUIT))


def race_actions(actions: Iterable[Action]) -> List[Action]:
    """The actions of decoded keys (a ``KeyDecoder`` without ``assist``)
    that a race plays; the others are ignored one by one."""
    return [action for action in actions if action in RACE_ACTIONS]


@dataclass(frozen=True)
class RaceSettings:
    """What a race is played with; the same settings meet in one lobby."""

    rows: int = DEFAULT_SIZE
    cols: int = DEFAULT_SIZE
    goal: int = DEFAULT_GOAL
    players: int = DEFAULT_PLAYERS
    minutes: int = DEFAULT_MINUTES

    def __post_init__(self) -> None:
        check_size(self.rows, self.cols)
        check_goal(self.goal, self.rows, self.cols)
        if not MIN_PLAYERS <= self.players <= MAX_PLAYERS:
            raise ValueError(f"players must be from {MIN_PLAYERS} to {MAX_PLAYERS}, got {self.players}")
        if not MIN_MINUTES <= self.minutes <= MAX_MINUTES:
            raise ValueError(f"minutes must be from {MIN_MINUTES} to {MAX_MINUTES}, got {self.minutes}")


@dataclass(frozen=True)
class Progress:
    """A player's race so far, as their own game reports it after each move.
    ``since``: when the score became what it is (the tie-break after moves);
    ``reached``: when the goal was first reached, if it was."""

    name: str
    score: int = 0
    biggest: int = 0
    moves: int = 0
    since: float = 0.0
    reached: Optional[float] = None
    left: bool = False
    stuck: bool = False  # their board can move no more: they keep their place, and wait for the end


class Phase(Enum):
    LOBBY = "lobby"
    COUNTDOWN = "countdown"
    RUNNING = "running"
    OVER = "over"
    EXPIRED = "expired"  # the lobby never filled


def _order(progress: Progress) -> Tuple[int, float, int, int, float]:
    reached = progress.reached is not None
    return (
        0 if reached else 1,
        progress.reached if progress.reached is not None else 0.0,
        -progress.score,
        progress.moves,
        progress.since,
    )


def standings(players: Tuple[Progress, ...]) -> Tuple[Progress, ...]:
    """The players in the race's order: those who reached the goal, first
    to reach it first; then by score, fewer moves, then who got to their
    score first. A player who left keeps their place by what they had."""
    return tuple(sorted(players, key=_order))


@dataclass(frozen=True)
class Race:
    """A race at one moment. ``opened``: when its lobby opened; ``starts``
    and ``ends``: the start and the time limit, once the lobby is full."""

    settings: RaceSettings
    opened: float
    players: Tuple[Progress, ...] = ()
    phase: Phase = Phase.LOBBY
    starts: Optional[float] = None
    ends: Optional[float] = None
    ended: Optional[float] = None

    @property
    def waiting_for(self) -> int:
        """Players still awaited in the lobby."""
        return max(0, self.settings.players - len(self.players))

    @property
    def names(self) -> Tuple[str, ...]:
        return tuple(player.name for player in self.players)

    def join(self, name: str, now: float) -> Race:
        """``name`` enters the lobby (ValueError: not open, full, or there
        already); the countdown starts once it is full."""
        if self.phase is not Phase.LOBBY:
            raise ValueError("this race has begun")
        if name in self.names:
            raise ValueError(f"{name} is in this race already")
        joined = replace(self, players=(*self.players, Progress(name)))
        if joined.waiting_for == 0:
            return replace(joined, phase=Phase.COUNTDOWN, starts=now + COUNTDOWN_SECONDS)
        return joined

    def leave(self, name: str, now: float) -> Race:
        """``name`` leaves: from the lobby (or its countdown), they are gone
        and the lobby waits again; from a race, they keep their place and
        the race ends when only one is still in it."""
        if name not in self.names:
            return self
        if self.phase in (Phase.LOBBY, Phase.COUNTDOWN):
            return replace(
                self, players=tuple(p for p in self.players if p.name != name), phase=Phase.LOBBY, starts=None
            )
        if self.phase is not Phase.RUNNING:
            return self
        left = replace(self, players=tuple(replace(p, left=True) if p.name == name else p for p in self.players))
        if sum(not player.left for player in left.players) <= 1 or left.all_stuck:
            return replace(left, phase=Phase.OVER, ended=now)
        return left

    @property
    def all_stuck(self) -> bool:
        """No player still in the race can move: nothing can change its result."""
        return all(player.left or player.stuck for player in self.players)

    def back(self, name: str) -> Race:
        """``name``, who dropped, is in the race again (while it lasts)."""
        if self.phase is not Phase.RUNNING:
            return self
        return replace(self, players=tuple(replace(p, left=False) if p.name == name else p for p in self.players))

    def tick(self, now: float) -> Race:
        """The clock read: the countdown ends, the time runs out, an unfilled
        lobby expires."""
        if self.phase is Phase.LOBBY and now - self.opened >= LOBBY_SECONDS:
            return replace(self, phase=Phase.EXPIRED, ended=now)
        if self.phase is Phase.COUNTDOWN and self.starts is not None and now >= self.starts:
            return replace(self, phase=Phase.RUNNING, ends=self.starts + self.settings.minutes * 60)
        if self.phase is Phase.RUNNING and self.ends is not None and now >= self.ends:
            return replace(self, phase=Phase.OVER, ended=self.ends)
        return self

    def moved(self, name: str, score: int, biggest: int, moves: int, now: float, stuck: bool = False) -> Race:
        """``name``'s game after a move (``stuck``: their board can move no
        more); reaching the goal ends the race, and so does every board
        still in it stuck (waiting for the time would change nothing).
        Reports outside a running race, or from no player of it, change
        nothing."""
        race = self.tick(now)
        if race.phase is not Phase.RUNNING or name not in race.names:
            return race
        players = []
        for player in race.players:
            if player.name == name:
                since = player.since if score == player.score else now
                reached = player.reached if player.reached is not None or biggest < race.settings.goal else now
                player = replace(
                    player, score=score, biggest=biggest, moves=moves, since=since, reached=reached, stuck=stuck
                )
            players.append(player)
        race = replace(race, players=tuple(players))
        if any(player.reached is not None for player in race.players) or race.all_stuck:
            return replace(race, phase=Phase.OVER, ended=now)
        return race

    def result(self) -> Tuple[Progress, ...]:
        """The order, once it is over (empty before)."""
        return standings(self.players) if self.phase is Phase.OVER else ()

    def winner(self) -> Optional[str]:
        """The first of the result; None before the end, or if nobody moved."""
        result = self.result()
        if not result or (result[0].score == 0 and result[0].reached is None):
            return None
        return result[0].name
