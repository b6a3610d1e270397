"""The games a client plays: the ``play`` and ``daily`` commands
(:func:`play_command`, :func:`daily_command`: the player's game on a board,
or a guest's; the day's game, :mod:`.ranked`), from the claim on the game
(asking to take it over from another session) to the end of play, each a
:class:`~.game.GameDriver` on the client's channel, published to watchers
(:mod:`.live`) unless private. Each part is given the server's context and
the :class:`~.link.Client`, nothing else."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from functools import partial
from typing import Dict, List, Optional, Tuple

from ..game.engine import default_goal
from ..game.limits import DEFAULT_SIZE
from ..loop.events import Resized, Warned
from ..loop.state import Play, Settings
from ..options.context import Options
from ..options.parser import EXIT_OK
from ..play.screen import wants_motion
from ..records.history import config_key
from ..render.style import ColorDepth, choose_depth, fit_text, shorter_wordings
from ..render.themes import THEMES
from .context import ServeContext
from .daily import DAILY
from .game import (
    SAID_DRAINED,
    SAID_IDLE,
    SAID_STOPPING,
    SAID_STOPPING_GUEST,
    SAID_TOO_SLOW,
    ChannelSide,
    GameDriver,
    ServerSide,
)
from .keeping import CLAIM_SECONDS, GuestKeeping, Keeping, StoreKeeping, open_game
from .link import Client, Ended, Typed, for_terminal, incoming_within
from .live import REGULAR, PublishingScreen, watchers_note
from .metrics import GameKind
from .names import folded, reserved
from .pauses import Write
from .ranked import OpenedDaily, open_daily
from .requests import COLOR_DEPTHS, NEEDS_TERMINAL, NO_TERMINAL, Daily, PlayRequest
from .saving import SAID_TAKEN_OVER, SAID_UNSAVED
from .store.base import Player, Prefs

__all__ = [
    "AGAIN",
    "GUEST_NOTE",
    "OFFERS",
    "PRIVATE_NOTE",
    "PUBLIC_NOTE",
    "claim",
    "color_depth",
    "daily_command",
    "first_note",
    "play_command",
    "run_game",
    "take_over_prompt",
    "who_note",
]

# How each session ended, as the log says it (from what the player was told).
ENDINGS = {
    SAID_STOPPING: "server stopping",
    SAID_STOPPING_GUEST: "server stopping",
    SAID_TAKEN_OVER: "taken over",
    SAID_TOO_SLOW: "client not reading",
    SAID_UNSAVED: "store unavailable",
    SAID_IDLE: "idle",
    SAID_DRAINED: "game over while the server drained",
}
# The note on a guest's first frame.
GUEST_NOTE = "guest: nothing is kept (connect with an SSH key)"
# Said on the first frame of play --private / --public: that it took effect.
PRIVATE_NOTE = "private: nobody may watch your games (play --public undoes it)"
PUBLIC_NOTE = "public: your games may be watched (play --private undoes it)"
# What else the server offers, on a session's first screen (its last
# clause: the first a narrow window leaves off) and in the help (``?``).
OFFERED = "also here: daily, race, watch, leaderboard, stats (? lists them)"
OFFERS = (
    ("daily", "the day's game, the same tiles for all (your first ranked)"),
    ("race", "race others on one deal, live"),
    ("watch", "the games played now, live"),
    ("leaderboard", "the day's top 10, and your rank"),
    ("stats", "your records, your last games' ids"),
    ("help", "every command, and how to give it"),
)
GUEST_ROW = "a guest (no SSH key): your game goes when you leave"
# Said when the player's game is open in another session: what is
# happening, then the two answers, each a line in the longest of its
# wordings that fits the window (a narrow one wrapped them mid-word).
_TAKEN_WORDINGS = (
    "Your game on this board is open in another session.",
    "Your game is open in another session.",
    "Your game is open elsewhere.",
    "Open elsewhere.",
    "In use.",
)
_ANSWERS = "y: play it here (the other session ends); any other key: leave."  # one line where it fits
_YES_WORDINGS = (*shorter_wordings("y: play it here (the other session ends)"), "y: here")
_NO_WORDINGS = ("any other key: leave.", "other keys: leave.", "else: leave.", "n: leave", "n: no")
# Seconds the take-over question waits for its answer.
ANSWER_SECONDS = 120
# Seconds a player coming back waits for the session their dropped
# connection left to finish writing (then, still held, they are asked).
LEAVING_SECONDS = 10.0
# What the game says it takes to play it again (its farewell).
AGAIN = "connecting again"


async def play_command(context: ServeContext, client: Client, request: PlayRequest) -> int:
    """``play``: the player's game on the board asked for (a guest's: not
    kept), on a terminal; it says how it ended itself (:func:`run_game`)."""
    if not client.has_terminal:
        return client.refuse(NEEDS_TERMINAL, NO_TERMINAL)
    store = context.store
    player = await context.player(client.identity)
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
        holder = await claim(context, client, player, board)
        if holder is None:
            return EXIT_OK
        keeping = StoreKeeping(store, player.id, board, holder)
    # Watchers know a player by the store's name (unique: another key's
    # "alice" is "alice-2"), a guest as guest-N (live.LiveGames.start).
    name = player.name if player is not None else None
    await run_game(context, client, keeping, request, chosen, name, (rows, cols, goal))
    return EXIT_OK


async def claim(context: ServeContext, client: Client, player: Player, board: str) -> Optional[str]:
    """The claim on the player's game on ``board``: its holder's name;
    None if another session has it and the player chose to leave."""
    store, sessions = context.store, context.sessions
    holder = sessions.holder()
    held = await store.claim(player.id, board, holder, CLAIM_SECONDS)
    leaving = sessions.leaving(held.holder) if held is not None else None
    if leaving is not None:
        # The session that has it lost its client (a dropped connection,
        # seen before this one came back): it is writing the moves its
        # player saw. Resume them once it has let go, asking nothing.
        await asyncio.wait([leaving], timeout=LEAVING_SECONDS)
        held = await store.claim(player.id, board, holder, CLAIM_SECONDS)
    if held is not None:
        if not sessions.gone(held.holder) and not await take_over(client):
            return None
        await store.claim(player.id, board, holder, CLAIM_SECONDS, take_over=True)
        if not sessions.taken_over(held.holder, SAID_TAKEN_OVER) and context.far is not None:
            context.far.tell_taken_over(held.holder)  # another server's session: it ends it at once too
    client.claimed(holder)
    return holder


async def daily_command(context: ServeContext, client: Client, request: Daily) -> int:
    """``daily``: the day's game, ranked or practice (:mod:`.ranked`), on a terminal."""
    if not client.has_terminal:
        return client.refuse(NEEDS_TERMINAL, NO_TERMINAL)
    player = await context.player(client.identity)
    # The ranking's cap per address counts sources as every per-address cap does (limits.source_of).
    opened = await open_daily(context, player, client.source, partial(claim, context, client))
    if opened is None:
        return EXIT_OK
    name = player.name if player is not None else None
    prefs = player.prefs if player is not None else Prefs()
    await run_game(context, client, opened.keeping, PlayRequest(), prefs, name, DAILY, opened)
    return EXIT_OK


def take_over_prompt(width: int) -> List[str]:
    """The take-over question's lines for a window ``width`` columns wide
    (the last column left free, as a frame leaves it): whole wordings, each
    the longest that fits; no word cut in two even where none fits."""
    limit = max(1, width - 1)
    said = fit_text(_TAKEN_WORDINGS, limit)
    if len(_ANSWERS) <= limit:
        return [said, _ANSWERS]
    return [said, fit_text(_YES_WORDINGS, limit), fit_text(_NO_WORDINGS, limit)]


async def take_over(client: Client) -> bool:
    """Ask whether to take the game over from the session that has it."""
    prompt = "".join(f"{line}\n" for line in take_over_prompt(client.window[0]))
    client.link.write(for_terminal(prompt).encode())
    while True:
        answer = await incoming_within(client.incoming, ANSWER_SECONDS)
        if answer is None:
            client.ended("no answer to take over")
            return False
        if isinstance(answer, Ended) and answer.breach is not None:  # the channel's rules ended it
            client.say(answer.said, stderr=False)  # under the prompt, where a game says its last line
            client.ended(answer.breach.value)
            return False
        if not isinstance(answer, Resized):  # a key (or the end): the answer
            taken = isinstance(answer, Typed) and answer.data[:1] in (b"y", b"Y")
            if not taken:  # the log says how the session ended, as a game's does
                client.ended("did not take over" if isinstance(answer, Typed) else _left(answer))
            return taken


def who_note(asked: str, name: str) -> str:
    """Who the player of a key is, as a session's first screen says it:
    ``name`` (the store's); why it is not ``asked`` (the SSH user name,
    reduced) when it is not: a key keeps the name it first came with, and a
    name another key holds, or a reserved one, is not given."""
    if folded(name) == folded(asked):
        return f"you are {name}"
    if reserved(asked):
        why = f"{asked} is for players without a key"
    elif folded(name).startswith(folded(asked)) and name[len(asked) :].lstrip("-").isdigit():  # bob2
        why = f"{asked} is another player"
    else:
        why = f"this key's name, not {asked}"  # the name it first came with
    return f"you are {name} ({why})"


def first_note(greeting: str, who: str, last: str = "") -> str:
    """A session's first note: who the player is (a guest's is said by the
    greeting), the game's greeting, what else the server offers, and
    ``last``; a narrow window leaves off from the end, so a surprise (the
    name is not the one asked for) goes first."""
    surprise = who.endswith(")")
    clauses = [who if surprise else "", greeting, "" if surprise else who, OFFERED, last]
    return "; ".join(clause for clause in clauses if clause)


def color_depth(chosen: Optional[str], env: Dict[str, str]) -> ColorDepth:
    """The colour depth frames are drawn in: the player's choice
    (``chosen``), else what the client's terminal (``env``) says."""
    return COLOR_DEPTHS[chosen] if chosen in COLOR_DEPTHS else choose_depth("auto", True, env)


async def run_game(
    context: ServeContext,
    client: Client,
    keeping: Keeping,
    request: PlayRequest,
    prefs: Prefs,
    name: Optional[str],
    board: Tuple[int, int, int],
    daily: Optional[OpenedDaily] = None,
) -> None:
    """The game ``keeping`` holds (or the day's, ``daily``) of the player
    ``name`` (None: a guest), played on this client's channel to its end;
    watchable unless the player made it private."""
    rows, cols, goal = board
    guest = name is None
    opening: List[Write] = []
    if daily is None:
        kept, greeting, opening = await open_game(
            keeping, rows, cols, goal, request.new, context.random_seed, context.now()
        )
    else:
        kept, greeting = daily.session, daily.note
    env = client.client_env()
    animate = wants_motion(Options(animation=prefs.animation is not False), env)
    you = ("you", GUEST_ROW if guest else f"{name}: your games are kept under this key")
    settings = Settings(animate=animate, can_wait=True, command=AGAIN, guest=guest, offers=(you, *OFFERS))
    if daily is not None:
        settings = replace(
            settings, command=f"{AGAIN} (daily)", day=daily.day, day_seed=daily.day_seed, guest=daily.guest
        )
    # A guest's watchable game is listed as guest-N: named now (no await before it is listed), and told so.
    listed = name if name is not None or prefs.private else context.live.next_guest()
    note = GUEST_NOTE if guest and daily is None else greeting
    if request.private is not None:  # asked for now: say it took effect, first
        note = PRIVATE_NOTE if request.private else PUBLIC_NOTE
    who = "" if name is None else who_note(client.identity.name, name)
    watched_as = f"watched as {listed}" if guest and listed else ""  # its name in the watch list, said last
    play = Play(kept, settings, client.window, note=first_note(note, who, watched_as))
    depth = color_depth(prefs.color, env)
    frames: List[str] = []

    def write(text: str) -> None:
        # Frames end lines with LF for a terminal whose output processing
        # makes it CR LF: the client's terminal is raw.
        frames.append(for_terminal(text))

    metrics = context.metrics

    def sent() -> None:
        screen.sent()
        metrics.frame_sent()

    screen = PublishingScreen(write, lambda: game.play.size, depth, env, palette=THEMES[prefs.theme or "classic"]())
    channel = ChannelSide(screen, frames, client.link, client.incoming, sent)
    parts = ServerSide(
        context.pool,
        context.clock,
        context.now,
        context.pauses,
        answered=metrics.key_to_frame.observe,
        appended=metrics.store_append.observe,
        draining=lambda: context.sessions.draining,
    )
    if daily is None:
        game = GameDriver(play, keeping, channel, parts, opening=opening)
    else:
        game = GameDriver(play, keeping, channel, parts, rules=daily.rules, opening=daily.opening)
    if not prefs.private:  # watchable (play --private: not)
        screen.live = context.live.start(listed, rows, cols, daily.facts if daily is not None else REGULAR)
        screen.live.on_watchers = lambda count: client.incoming.put_nowait(Warned(watchers_note(count), True))
    kind = GameKind.DAILY if daily is not None else GameKind.GUEST if guest else GameKind.REGULAR
    try:
        with metrics.playing(game, kind):
            await game.run()
    finally:
        if screen.live is not None:
            screen.live.end()
        client.played(game.keys)
        client.ended(game.how or ending(game.said, game.play.over))


def ending(said: str, over: bool) -> str:
    """How a game's session ended, as the log says it, from what its player
    was told (``said``; nothing: they quit, ``over``, or their client left)."""
    return ENDINGS.get(said, "quit" if over else "disconnected")


def _left(answer: object) -> str:
    """How a take-over's question ended when no key answered it."""
    return (
        "server stopping"
        if isinstance(answer, Ended) and answer.said in (SAID_STOPPING, SAID_STOPPING_GUEST)
        else "disconnected"
    )
