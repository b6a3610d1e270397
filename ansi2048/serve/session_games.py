"""A session's games: ``play`` (the player's game on a board, or a
guest's) and ``daily`` (:mod:`.ranked`), from the claim on the game (asking
to take it over from another session) to the end of play, each a
:class:`~.game.PlayerGame` on the session's channel, published to watchers
(:mod:`.live`) unless private."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, List, Optional, Tuple

from ..game.engine import default_goal
from ..game.limits import DEFAULT_SIZE
from ..loop.events import Resized, Warned
from ..loop.state import Play, Settings
from ..options.context import Options
from ..play.screen import wants_motion
from ..records.history import config_key
from ..render.themes import THEMES
from .channel import Ended, Typed
from .commands import PlayRequest
from .daily import DAILY
from .game import (
    SAID_IDLE,
    SAID_STOPPING,
    SAID_STOPPING_GUEST,
    SAID_TAKEN_OVER,
    SAID_TOO_SLOW,
    SAID_UNSAVED,
    PlayerGame,
)
from .keeping import CLAIM_SECONDS, GuestKeeping, Keeping, StoreKeeping, open_game
from .live import GUEST_NAME, REGULAR, PublishingScreen, watchers_note
from .metrics import GameKind
from .pauses import Write
from .ranked import SAID_ASSISTED, SAID_DAY_OVER, SAID_ENDED, OpenedDaily, open_daily
from .store.base import Player, Prefs

if TYPE_CHECKING:
    from .session import SessionChannel  # which imports this module, to run its games

__all__ = [
    "AGAIN",
    "GUEST_NOTE",
    "PRIVATE_NOTE",
    "PUBLIC_NOTE",
    "TAKE_OVER_PROMPT",
    "claim",
    "play",
    "play_daily",
    "run_game",
]

# How each session ended, as the log says it (from what the player was told).
ENDINGS = {
    SAID_STOPPING: "server stopping",
    SAID_STOPPING_GUEST: "server stopping",
    SAID_TAKEN_OVER: "taken over",
    SAID_TOO_SLOW: "client not reading",
    SAID_UNSAVED: "store unavailable",
    SAID_IDLE: "idle",
}
# Endings said with the game's score in them (serve/ranked.py), known by what precedes it.
SCORED_ENDINGS = (
    (SAID_ENDED, "ranked game ended"),
    (SAID_ASSISTED, "ranked game ended unranked"),
    (SAID_DAY_OVER, "day over"),
)
# The note on a guest's first frame.
GUEST_NOTE = "guest: nothing is kept (connect with an SSH key)"
# Said on the first frame of play --private / --public: that it took effect.
PRIVATE_NOTE = "private: nobody may watch your games (play --public undoes it)"
PUBLIC_NOTE = "public: your games may be watched (play --private undoes it)"
# Said when the player's game is open in another session.
TAKE_OVER_PROMPT = (
    "Your game on this board is open in another session.\r\n"
    "y: play it here (the other session ends); any other key: leave.\r\n"
)
# Seconds the take-over question waits for its answer.
ANSWER_SECONDS = 120
# What the game says it takes to play it again (its farewell).
AGAIN = "connecting again"


async def play(session: SessionChannel, request: PlayRequest) -> None:
    """``play``: the player's game on the board asked for (a guest's: not kept)."""
    store = session.server.store
    player = await session.player()
    prefs = player.prefs if player is not None else Prefs()
    chosen = replace(
        prefs,
        theme=request.theme or prefs.theme,
        color=request.color or prefs.color,
        animation=request.animation if request.animation is not None else prefs.animation,
    )
    if request.private is not None:
        chosen = replace(chosen, private=request.private)
    if player is not None and chosen != prefs:
        await store.set_prefs(player.id, chosen)
    rows, cols = request.rows or DEFAULT_SIZE, request.cols or DEFAULT_SIZE
    goal = request.goal or default_goal(rows, cols)
    keeping: Keeping = GuestKeeping()
    if player is not None:
        board = config_key(rows, cols, goal)
        holder = await claim(session, player, board)
        if holder is None:
            return
        keeping = StoreKeeping(store, player.id, board, holder)
    # Watchers know a player by the store's name (unique: another key's
    # "alice" is "alice-2"), a guest as "guest".
    name = player.name if player is not None else GUEST_NAME
    await run_game(session, keeping, request, chosen, name, player is None, (rows, cols, goal))


async def claim(session: SessionChannel, player: Player, board: str) -> Optional[str]:
    """The claim on the player's game on ``board``: its holder's name;
    None if another session has it and the player chose to leave."""
    server, store = session.server, session.server.store
    holder = server.holder()
    held = await store.claim(player.id, board, holder, CLAIM_SECONDS)
    if held is not None:
        if not server.gone(held.holder) and not await take_over(session):
            return None
        await store.claim(player.id, board, holder, CLAIM_SECONDS, take_over=True)
        server.taken_over(held.holder)
    session.holders.add(holder)
    return holder


async def play_daily(session: SessionChannel) -> None:
    """``daily``: the day's game, ranked or practice (:mod:`.ranked`)."""
    player = await session.player()
    # The ranking's cap per address counts sources as every per-address cap does (limits.source_of).
    opened = await open_daily(session.server, player, session.connection.source, partial(claim, session))
    if opened is None:
        return
    name = player.name if player is not None else GUEST_NAME
    prefs = player.prefs if player is not None else Prefs()
    await run_game(session, opened.keeping, PlayRequest(), prefs, name, player is None, DAILY, opened)


async def take_over(session: SessionChannel) -> bool:
    """Ask whether to take the game over from the session that has it."""
    assert session.link is not None
    session.link.write(TAKE_OVER_PROMPT.encode())
    while True:
        try:
            answer = await asyncio.wait_for(session.incoming.get(), ANSWER_SECONDS)
        except asyncio.TimeoutError:
            session.ended("no answer to take over")
            return False
        if isinstance(answer, Ended) and answer.breach is not None:  # the channel's rules ended it
            session.say(answer.said, stderr=False)  # under the prompt, where a game says its last line
            session.ended(answer.breach.value)
            return False
        if isinstance(answer, Ended):
            session.ended("server stopping" if answer.said == SAID_STOPPING else "disconnected")
            return False
        if not isinstance(answer, Resized):  # a key: the answer
            taking = isinstance(answer, Typed) and answer.data[:1] in (b"y", b"Y")
            if not taking:
                session.ended("declined to take over")
            return taking


async def run_game(
    session: SessionChannel,
    keeping: Keeping,
    request: PlayRequest,
    prefs: Prefs,
    name: str,
    guest: bool,
    board: Tuple[int, int, int],
    daily: Optional[OpenedDaily] = None,
) -> None:
    """The game ``keeping`` holds (or the day's, ``daily``), played on this
    session to its end; watchable unless the player made it private."""
    assert session.chan is not None and session.link is not None
    server = session.server
    rows, cols, goal = board
    opening: List[Write] = []
    if daily is None:
        kept, greeting, opening = await open_game(
            keeping, rows, cols, goal, request.new, server.random_seed, server.now()
        )
    else:
        kept, greeting = daily.session, daily.note
    env = session.client_env()
    animate = wants_motion(Options(animation=prefs.animation is not False), env)
    settings = Settings(animate=animate, can_wait=True, command=AGAIN, guest=guest)
    if daily is not None:
        settings = replace(
            settings, command=f"{AGAIN} (daily)", day=daily.day, day_seed=daily.day_seed, guest=daily.guest
        )
    note = GUEST_NOTE if guest and daily is None else greeting
    if request.private is not None:  # asked for now: say it took effect, first
        note = PRIVATE_NOTE if request.private else PUBLIC_NOTE
    play = Play(kept, settings, session.window, note=note)
    depth = session.color_depth(prefs.color, env)
    frames: List[str] = []

    def write(text: str) -> None:
        # Frames end lines with LF for a terminal whose output processing
        # (ONLCR) makes it CR LF; here there is no such pty in between,
        # and the client's terminal is raw: done here, as a pty would.
        frames.append(text.replace("\n", "\r\n"))

    def sent() -> None:
        screen.sent()
        server.metrics.frame_sent()

    screen = PublishingScreen(write, lambda: game.play.size, depth, env, palette=THEMES[prefs.theme or "classic"]())
    args = (
        play,
        screen,
        frames,
        session.link,
        keeping,
        server.pool,
        session.incoming,
        server.clock,
        server.now,
        sent,
        server.pauses,
    )
    game = PlayerGame(*args, opening=opening) if daily is None else daily.driver(*args)
    if not prefs.private:  # watchable (play --private: not)
        screen.live = server.live.start(name, rows, cols, daily.facts if daily is not None else REGULAR)
        screen.live.on_watchers = lambda count: session.incoming.put_nowait(Warned(watchers_note(count), True))
    kind = GameKind.DAILY if daily is not None else GameKind.GUEST if guest else GameKind.REGULAR
    try:
        with server.metrics.playing(game, kind):
            await game.run()
    finally:
        if screen.live is not None:
            screen.live.end()
        session.connection.keys += game.keys
        session.ended(ending(game.said, game.play.over))


def ending(said: str, over: bool) -> str:
    """How a game's session ended, as the log says it, from what its player
    was told (``said``; nothing: they quit, ``over``, or their client left)."""
    if said in ENDINGS:
        return ENDINGS[said]
    for template, how in SCORED_ENDINGS:
        if said.startswith(template.partition("{")[0]):
            return how
    return "quit" if over else "disconnected"
