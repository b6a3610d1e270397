"""What the door serves without a terminal: the daily leaderboard as plain
HTML that needs no JavaScript (``/leaderboard``, ``/leaderboard/DAY``), as
``leaderboard --json``'s document (``/leaderboard.json``,
``/leaderboard/DAY.json``), and a finished day's games: played back in the
page (``/?command=replay ID``) and their keys (``/keys/ID``, what ``keys ID``
gives). Every string a
player chose (a name) is escaped."""

from __future__ import annotations

import datetime
import json
from html import escape
from typing import TYPE_CHECKING, List, Sequence

from aiohttp import web

from ..daily import FINISHED, TOP, clock_text, day_of, leaderboard_document, parse_day, removed_line
from ..names import display_name
from ..secrecy import Deal, GameFacts, Refused, Shown, keys_for, shown
from ..store.base import Removed, Standing

if TYPE_CHECKING:
    from ..context import ServeContext

__all__ = ["SHOWN", "add_pages", "leaderboard_html"]

SHOWN = 100  # the page's length (the JSON document keeps the command's TOP)
HEADER = ("rank", "name", "score", "tile", "moves", "time", "state", "game")


def leaderboard_html(day: str, table: Sequence[Standing], over: bool, removed: Sequence[Removed] = ()) -> str:
    """The board of ``day`` as a page (``over``: the day has ended, and its
    games' keys may be had)."""
    rows: List[str] = []
    for standing in table[:SHOWN]:
        entry = standing.entry
        state = "finished" if over or entry.status == FINISHED else "playing"
        # Once the day is over: the game played back in the page's terminal (replay ID), and its keys.
        keys = (
            f'{entry.id}: <a href="/?command=replay%20{entry.id}">replay</a> <a href="/keys/{entry.id}">keys</a>'
            if over
            else str(entry.id)
        )
        mark = ' <abbr title="key timing no person types">*</abbr>' if standing.machine else ""
        cells = (
            str(standing.rank),
            escape(display_name(entry.name)) + mark,
            str(entry.score),
            str(entry.biggest),
            str(entry.moves),
            clock_text(entry.seconds),
            state,
            keys,
        )
        rows.append("<tr>" + "".join(f"<td>{cell}</td>" for cell in cells) + "</tr>")
    previous = _shifted(day, -1)
    body = (
        f"<table><thead><tr>{''.join(f'<th>{name}</th>' for name in HEADER)}</tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
        if rows
        else "<p>No ranked game yet.</p>"
    )
    body += "".join(f'<p class="removed">{escape(removed_line(game))}</p>' for game in removed)
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>ansi2048: the daily game of {day}</title>
<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/static/pages.css">
</head>
<body>
<h1>The daily game of {day} (UTC)</h1>
<p>{len(table)} ranked. <a href="/leaderboard/{previous}">{previous}</a> ·
<a href="/leaderboard">today</a> · <a href="/leaderboard/{day}.json">JSON</a> · <a href="/">play</a></p>
{body}
<p class="note">{"Each game&#39;s keys replay it: <code>ansi2048 &lt; FILE</code>." if over and rows else ""}</p>
</body>
</html>
"""


def _shifted(day: str, days: int) -> str:
    return (datetime.date.fromisoformat(day) + datetime.timedelta(days=days)).isoformat()


def add_pages(app: web.Application, context: ServeContext) -> None:
    """The pages' routes on the door's application."""

    def day_asked(request: web.Request) -> str:
        asked = request.match_info.get("day")
        if asked is None:
            return day_of(context.now())
        try:
            return parse_day(asked)
        except ValueError as error:
            raise web.HTTPNotFound(reason=str(error)) from None

    async def page(request: web.Request) -> web.StreamResponse:
        day = day_asked(request)
        over = shown(GameFacts(Deal.RANKED, day), None, day_of(context.now())) is Shown.EVERYTHING  # the one rule
        board = await context.store.daily_board(day, None, SHOWN)
        text = leaderboard_html(day, board.top, over, board.removed)
        return web.Response(text=text, content_type="text/html", charset="utf-8")

    async def document(request: web.Request) -> web.StreamResponse:
        day = day_asked(request)
        over = shown(GameFacts(Deal.RANKED, day), None, day_of(context.now())) is Shown.EVERYTHING  # the one rule
        board = await context.store.daily_board(day, None, TOP)
        text = json.dumps(leaderboard_document(day, board, over), indent=1) + "\n"
        return web.Response(text=text, content_type="application/json", charset="utf-8")

    async def keys(request: web.Request) -> web.StreamResponse:
        wanted = request.match_info["id"]
        if not wanted.isdigit() or len(wanted) > 12:
            raise web.HTTPNotFound(reason="no such game")
        entry = await context.store.daily_by_id(int(wanted))
        try:
            recording = keys_for(entry, int(wanted), context.now(), None)  # a page names nobody: what anyone may see
        except Refused as refused:
            raise web.HTTPNotFound(reason=str(refused)) from None
        return web.Response(body=recording, content_type="text/plain", charset="utf-8")

    app.router.add_get("/leaderboard", page)
    app.router.add_get("/leaderboard.json", document)
    app.router.add_get(r"/leaderboard/{day:[^/]+}.json", document)
    app.router.add_get(r"/leaderboard/{day:[^/]+}", page)
    app.router.add_get(r"/keys/{id}", keys)
