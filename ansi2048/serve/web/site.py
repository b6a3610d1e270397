"""The browser door's HTTP server (aiohttp, on the SSH server's event
loop): the page and its files, the WebSocket a session plays over
(:mod:`.socket`), the leaderboard's pages (:mod:`.pages`); every response
with the door's security headers; every refused or bad request a 4xx and
one line in the server's log, never a traceback."""

from __future__ import annotations

import logging
import secrets
import time
from dataclasses import dataclass
from importlib import resources
from typing import IO, Awaitable, Callable, Dict, Optional, Tuple, Type

from aiohttp import web

from ...storage.history_file import utc_timestamp
from ..context import ServeContext
from ..names import printable
from ..settings import ServeOptions
from ..store.base import StoreError
from ..takeover import Running, listen_taking_over
from .link_page import BAD_CODE, LINK_SECONDS, TOO_MANY, LinkTries, link_page
from .links import COOKIE, linked_player, normal_code, redeem
from .pages import add_pages
from .protocol import CONTENT_SECURITY_POLICY, same_origin
from .socket import serve_socket

__all__ = ["STATIC_FILES", "Listener", "WebSite", "open_door"]

# The page's files: name -> content type. Only these are served.
STATIC_FILES = {
    "index.html": "text/html; charset=utf-8",
    "door.js": "text/javascript; charset=utf-8",
    "door.css": "text/css; charset=utf-8",
    "favicon.svg": "image/svg+xml",
    "pages.css": "text/css; charset=utf-8",
    "vendor/xterm.js": "text/javascript; charset=utf-8",
    "vendor/xterm.css": "text/css; charset=utf-8",
    "vendor/addon-fit.js": "text/javascript; charset=utf-8",
    "vendor/LICENSE.xterm": "text/plain; charset=utf-8",
    "vendor/LICENSE.addon-fit": "text/plain; charset=utf-8",
}
HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    # same-origin, not no-referrer: with no-referrer a browser sends a form's Origin as "null".
    "Referrer-Policy": "same-origin",
}
# The name a guest's browser plays under (the log's, and watchers' "guest").
GUEST = "browser"
# Seconds the HTTP server's stop waits for its handlers (the sessions are ended by GameServer.stop).
SHUTDOWN_SECONDS = 0.5

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@dataclass(frozen=True)
class _File:
    body: bytes
    content_type: str


def _load_files() -> Dict[str, _File]:
    root = resources.files(__package__).joinpath("static")
    files = {}
    for name, kind in STATIC_FILES.items():
        files[name] = _File(root.joinpath(name).read_bytes(), kind)
    return files


class Listener:
    """An aiohttp app (its ``runner``) served on ``HOST:PORT`` by
    :meth:`start`: the door's, and ``--metrics``'s page's (serve/metrics.py)."""

    def __init__(self, runner: web.AppRunner) -> None:
        self._runner = runner
        self._site: Optional[web.TCPSite] = None

    async def start(self, host: str, port: int, reuse_port: bool = False) -> Tuple[str, int]:
        """Listen on ``host``:``port`` (0: a free one; ``reuse_port``: other
        servers may listen there too); where it listens. Tried again after an
        OSError (a port another server lets go of: serve/takeover.py)."""
        if self._runner.server is None:
            await self._runner.setup()
        self._site = web.TCPSite(self._runner, host, port, backlog=1024, reuse_port=reuse_port or None)
        await self._site.start()
        address = self._runner.addresses[-1]
        return str(address[0]), int(address[1])

    async def stop_listening(self) -> None:
        if self._site is not None:
            await self._site.stop()
            self._site = None

    async def close(self) -> None:
        await self._runner.cleanup()


class WebSite(Listener):
    """The door: made with the server, started on ``HOST:PORT`` by
    :meth:`start`, stopped in two steps by the server's stop (no new
    request, then the rest once the sessions have ended)."""

    def __init__(self, context: ServeContext, secure: bool = False) -> None:
        self.context = context
        self.secure = secure  # the page is served over HTTPS (a proxy in front): cookies say Secure
        self._files = _load_files()
        app = web.Application(middlewares=[self._errors], client_max_size=64 * 1024)
        app.on_response_prepare.append(_with_headers)
        app.router.add_get("/", self._page)
        app.router.add_get("/static/{name:.+}", self._static)
        app.router.add_get("/socket", self._socket)
        app.router.add_get("/link", self._link_form)
        app.router.add_post("/link", self._link)
        add_pages(app, context)
        runner = web.AppRunner(
            app,
            access_log=None,
            handle_signals=False,
            shutdown_timeout=SHUTDOWN_SECONDS,
            logger=_one_line_logger(context.log),  # aiohttp's own errors (a malformed request): one line each
        )
        super().__init__(runner)
        self._link_tries = LinkTries()

    def _form_refused(
        self, request: web.Request, refusal: Type[web.HTTPClientError], reason: str, said: str
    ) -> web.HTTPClientError:
        """The link form again, saying ``said``, as the 4xx ``refusal`` (logged as ``reason``)."""
        return refusal(reason=reason, text=link_page(said, self._ssh(request)), content_type="text/html")

    def _ssh(self, request: web.Request) -> str:
        """How this server is reached over SSH, as the page's visitor knows its host."""
        host = (request.url.host or "HOST")[:100]
        return f"ssh -p {self.context.port} {host}" if self.context.port != 22 else f"ssh {host}"

    def _log(self, request: web.Request, status: int, why: str) -> None:
        path = printable(request.path, 80)
        # Dated by the server's log, as every line of it.
        self.context.log(f"{request.remote or '?'} web {printable(request.method[:8])} {path} {status} {why}")

    # -- handlers -------------------------------------------------------------------

    async def _page(self, request: web.Request) -> web.StreamResponse:
        return self._file("index.html")

    async def _static(self, request: web.Request) -> web.StreamResponse:
        name = request.match_info["name"]
        if name == "index.html" or name not in self._files:
            raise web.HTTPNotFound()
        return self._file(name)

    def _file(self, name: str) -> web.Response:
        found = self._files[name]
        response = web.Response(body=found.body, headers={"Content-Type": found.content_type})
        response.headers["Cache-Control"] = "no-cache"  # revalidated: a new version's files are taken at once
        return response

    async def _socket(self, request: web.Request) -> web.StreamResponse:
        if not same_origin(request.headers.get("Origin"), request.host):
            raise web.HTTPForbidden(reason="WebSocket from another origin")
        if request.headers.get("Upgrade", "").lower() != "websocket":
            raise web.HTTPBadRequest(reason="not a WebSocket upgrade")
        fingerprint, name = None, GUEST
        token = request.cookies.get(COOKIE)
        if token:
            try:
                found = await linked_player(self.context.store, token[:100], self.context.now())
            except StoreError as error:  # played as a guest, said in the log
                self._log(request, 200, f"link not read: {error}")
                found = None
            if found is not None:
                fingerprint, name = found
        # ?command=daily (any command of ssh HOST COMMAND's table): the session runs it, as an exec request.
        return await serve_socket(self.context, request, fingerprint, name, request.query.get("command"))

    async def _link_form(self, request: web.Request) -> web.StreamResponse:
        return web.Response(text=link_page("", self._ssh(request)), content_type="text/html", charset="utf-8")

    async def _link(self, request: web.Request) -> web.StreamResponse:
        """The page's form: a code from ``ssh HOST link`` links this browser."""
        if not same_origin(request.headers.get("Origin"), request.host):
            raise web.HTTPForbidden(reason="link form from another origin")
        address = request.remote or "?"
        if not self._link_tries.allowed(address, self.context.clock()):
            raise self._form_refused(request, web.HTTPTooManyRequests, "too many link codes tried", TOO_MANY)
        form = await request.post()
        code = normal_code(str(form.get("code", ""))[:40])
        token = secrets.token_urlsafe(32)
        label = printable(request.headers.get("User-Agent", ""), 60)
        if code is None or not await redeem(self.context.store, code, token, label, self.context.now()):
            self._link_tries.failed(address, self.context.clock())
            raise self._form_refused(request, web.HTTPBadRequest, "bad link code", BAD_CODE)
        linked = web.HTTPSeeOther("/")  # to the game, played as the player now
        linked.set_cookie(
            COOKIE, token, max_age=LINK_SECONDS, path="/", httponly=True, samesite="Strict", secure=self.secure
        )
        raise linked

    # -- every request ------------------------------------------------------------

    @web.middleware
    async def _errors(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        try:
            return await handler(request)
        except web.HTTPException as error:
            if 400 <= error.status < 500:
                self._log(request, error.status, error.reason)
            raise
        except Exception as error:  # a bug: this request fails, in one line, and nothing else
            self.context.log(f"web request failed: {type(error).__name__}: {error}")
            raise web.HTTPInternalServerError() from None


async def open_door(
    context: ServeContext, options: ServeOptions, replaced: Optional[Running], stderr: IO[str], say: bool, log: bool
) -> Optional[WebSite]:
    """The door (``--http``) started on the server's loop, taking its port
    over from the server ``replaced`` as the SSH port is, and sharing it as
    the SSH port is (``--reuse-port``: the workers); where it listens said on
    ``stderr`` when ``say`` (not a worker's: its parent says nothing of it),
    and in the log when ``log`` (a file: the listening line is there too).
    None when it cannot listen (said on ``stderr``)."""
    assert options.http is not None
    site = WebSite(context, secure=options.behind_https)
    wanted_host, wanted_port = options.http
    try:
        host, port = await listen_taking_over(
            lambda: site.start(wanted_host, wanted_port, options.reuse_port), replaced
        )
    except (OSError, ValueError) as error:
        await site.close()
        why = (error.strerror if isinstance(error, OSError) else None) or str(error)
        stderr.write(f"ansi2048 serve: error: --http: cannot listen on {wanted_host}:{wanted_port}: {why}\n")
        return None
    where = f"browsers: http://{f'[{host}]' if ':' in host else host}:{port}/"
    if log:
        context.log(where)
    if say:
        stderr.write(f"{utc_timestamp(time.time())} {where}\n")
        stderr.flush()
    return site


class _OneLine(logging.Handler):
    """A record of aiohttp's (a request it could not parse, with its
    traceback) as one line of the server's log: what and why, no traceback."""

    def __init__(self, line: Callable[[str], None]) -> None:
        super().__init__()
        self._line = line

    def emit(self, record: logging.LogRecord) -> None:
        error = record.exc_info[1] if record.exc_info else None
        first = (str(error).strip().splitlines() or [""])[0] if error else ""
        why = f": {type(error).__name__}: {printable(first, 120)}" if error else ""
        self._line(f"web: {printable(record.getMessage(), 120)}{why}")


def _one_line_logger(line: Callable[[str], None]) -> logging.Logger:
    logger = logging.Logger("ansi2048.web")  # not the process's registry: this server's alone
    logger.addHandler(_OneLine(line))
    logger.propagate = False
    return logger


async def _with_headers(request: web.Request, response: web.StreamResponse) -> None:
    response.headers.update(HEADERS)
