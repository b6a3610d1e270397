"""The served daily game, the shell: the server's secret, the day's game
opened for a player (ranked, or practice, with the rules its driver plays it
by: :mod:`.ranked_game`), and the ``leaderboard`` command's answer.

The pure rules are in :mod:`.daily`."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from functools import partial
from typing import Awaitable, Callable, List, Optional, Sequence, Tuple

from .. import __version__
from ..game.engine import Game
from ..game.session import Session
from ..records.history import daily_key
from ..records.recording import format_header
from ..storage.files import read_regular
from ..storage.save_file import SaveFile
from .context import ServeContext
from .daily import (
    DAILY,
    PLAYING,
    TOP,
    daily_board,
    day_of,
    day_seed,
    leaderboard_document,
    leaderboard_lines,
    practice_seed,
    times_of,
)
from .game import GameRules
from .keeping import GuestKeeping, Keeping, StoreKeeping, load_recording
from .pauses import Write
from .ranked_game import DailyKeeping, DailyRules, RankedRules
from .secrecy import Deal, GameFacts, Shown, shown
from .store.base import Player, Store

__all__ = [
    "SECRET_FILE",
    "OpenedDaily",
    "daily_secret",
    "leaderboard_output",
    "open_daily",
]

SECRET_FILE = "daily_secret"  # a secret to propose (earlier versions kept it here)
SECRET_NAME = "daily"  # its name in the database
SECRET_BYTES = 32
SECRET_LONGEST = 4096  # a file bigger than this is no secret of ours

# What the daily game's first frame says.
NOTE_RANKED = "ranked game of {day}: no undo; r twice ends it; b: the board"
NOTE_PRACTICE = "practice (not ranked): your ranked game of {day} was played; b: the board"
NOTE_GUEST = "practice: a guest is never ranked (connect with an SSH key)"
NOTE_CAPPED = "practice: your address entered its players in today's ranking"


async def daily_secret(store: Store, data_dir: str) -> Tuple[bytes, str]:
    """The secret that the days' seeds derive from, and what to say of it
    ("" if nothing). It is kept in the database, so that every server on one
    database deals the same tiles (one leaderboard) with nothing to copy
    between them: the first server to start makes it. A server's
    ``daily_secret`` file (written by earlier versions, or by an operator
    who brings the secret of another deployment) is what it proposes in
    place of new random bytes; once the database has one, the database's
    wins, and a file that differs is said to be unused. Whoever reads the
    secret can compute every day's tiles."""
    path = os.path.join(data_dir, SECRET_FILE)
    try:
        from_file: Optional[bytes] = read_regular(path, SECRET_LONGEST, follow=True)
    except FileNotFoundError:
        from_file = None
    if from_file is not None and len(from_file) < 16:
        raise ValueError(f"{path}: the daily secret is too short (16 bytes at least)")
    secret = await store.shared_secret(SECRET_NAME, from_file or os.urandom(SECRET_BYTES))
    if from_file is not None and from_file != secret:
        return secret, f"{path} is not used: the database holds the daily secret its servers share"
    return secret, ""


@dataclass(frozen=True)
class OpenedDaily:
    """The day's game as a session plays it: ranked (:class:`~.ranked_game.RankedRules`
    on :class:`~.ranked_game.DailyKeeping`) or practice (kept nowhere for a guest)."""

    keeping: Keeping
    session: Session
    note: str
    day: str
    day_seed: int  # r starts the day's game again (practice; in a ranked game r is asked first)
    rules: GameRules  # what its driver plays it by
    facts: GameFacts  # its deal and owner: who may watch it (serve/secrecy.py)
    opening: Sequence[Write] = ()  # the recording begun, before the first frame (as open_game's)
    guest: bool = False


async def open_daily(
    context: ServeContext,
    player: Optional[Player],
    address: str,
    claim: Callable[[Player, str], Awaitable[Optional[str]]],
) -> Optional[OpenedDaily]:
    """The day's game for ``player`` (None: a guest): their ranked one, new
    or resumed, if they may play it; else practice. None: another session
    has their ranked game and they chose to leave it there."""
    store, now = context.store, context.now()
    day = day_of(now)
    seed = day_seed(context.daily_secret, day)
    practice = practice_seed(context.daily_secret, day)
    rows, cols, goal = DAILY

    if player is None:
        guest = Session(Game(rows, cols, goal, practice))
        facts = GameFacts(Deal.PRACTICE, day)
        rules = DailyRules(store, day, None)
        return OpenedDaily(GuestKeeping(), guest, NOTE_GUEST, day, practice, rules, facts, guest=True)
    header = format_header(seed, rows, cols, goal, __version__).encode("ascii")
    entry = await store.daily_start(day, player.id, address, now, header, context.daily_per_address)
    ranked = entry is not None and entry.status == PLAYING
    if entry is None:
        context.log(f"daily: {player.name} not ranked on {day}: {address} entered {context.daily_per_address} players")
    board = daily_board(day) if ranked else daily_board(day) + "-practice"
    holder = await claim(player, board)
    if holder is None:
        return None
    if not ranked:
        # Practice is kept and resumed as any game (a game over starts the day's game again).
        kept = StoreKeeping(store, player.id, board, holder)
        session, opening = await _open_kept(kept, day, practice, undo=True)
        note = NOTE_CAPPED if entry is None else NOTE_PRACTICE.format(day=day)
        facts = GameFacts(Deal.PRACTICE, day, player.id)
        return OpenedDaily(kept, session, note, day, practice, DailyRules(store, day, player.id), facts, opening)
    assert entry is not None
    keeping = DailyKeeping(store, player.id, board, holder, entry, context.now)
    times = times_of(entry)
    keeping.last = times[-1] if times else 0
    session, opening = await _open_kept(keeping, day, seed, undo=False)
    facts = GameFacts(Deal.RANKED, day, player.id)
    rules_ranked = RankedRules(keeping, store, context.log)
    return OpenedDaily(keeping, session, NOTE_RANKED.format(day=day), day, seed, rules_ranked, facts, opening)


async def _open_kept(keeping: StoreKeeping, day: str, seed: int, undo: bool) -> Tuple[Session, List[Write]]:
    """The day's game in ``keeping``, resumed, or begun from ``seed``
    (also when the kept one is over: practice starts again); and the writes
    that needs, which the driver does before the game's first frame, pausing
    as any write of the game does (as :func:`.keeping.open_game`'s)."""
    rows, cols, goal = DAILY
    header = format_header(seed, rows, cols, goal, __version__).encode("ascii")
    recording = await keeping.load()
    loaded = await load_recording(SaveFile("", rows, cols, goal, recording)) if recording is not None else None
    opening: List[Write] = []
    # Practice kept by an earlier version dealt the ranked tiles: it starts again on its own.
    if loaded is None or (undo and (loaded.game.over or loaded.game.seed != seed)):
        opening.append(partial(keeping.rewrite, header))
        loaded = SaveFile("", rows, cols, goal, header).load()
        assert loaded is not None
    best = await keeping.best(daily_key(day, rows, cols, goal))
    return Session(loaded.game, best, loaded.runs, undo=undo), opening


async def leaderboard_output(
    store: Store, now: float, day: Optional[str], as_json: bool, me: Optional[int]
) -> List[str]:
    """What ``leaderboard [DAY] [--json]`` prints: ``day``'s board (None:
    today's) as text or one JSON document; ``me``: the caller, if a player."""
    day = day or day_of(now)
    board = await store.daily_board(day, me, TOP)
    # The board shows scores, never a deal; once the day's deal is public
    # (the secrecy rule) its games are over, each as it stood.
    over = shown(GameFacts(Deal.RANKED, day), None, day_of(now)) is Shown.EVERYTHING
    if as_json:
        text: str = json.dumps(leaderboard_document(day, board, over), indent=1)
        return text.splitlines()
    return leaderboard_lines(day, board, me, over)
