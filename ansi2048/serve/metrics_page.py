"""``--metrics HOST:PORT``: the server's numbers at ``/metrics`` (Prometheus's
text format: :mod:`.metrics`) and ``/health``, over HTTP.

Served by aiohttp on the server's own event loop, not by prometheus-client's
HTTP server: that one runs on a thread of its own, which would walk the
server's sessions while the loop changes them, and ``/health`` asks the
store, whose calls are the loop's. Imported only for ``--metrics``."""

from __future__ import annotations

from typing import IO, Optional, Tuple

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST

from .context import ServeContext
from .metrics import health
from .takeover import Running, listen_taking_over
from .web.site import Listener

__all__ = ["MetricsSite", "open_metrics"]


class MetricsSite(Listener):
    """``--metrics``'s HTTP server on the server's loop: ``/metrics`` and ``/health``."""

    def __init__(self, context: ServeContext) -> None:
        self._context = context
        app = web.Application()
        app.router.add_get("/metrics", self._metrics)
        app.router.add_get("/health", self._health)
        super().__init__(web.AppRunner(app, access_log=None, handle_signals=False))

    async def _metrics(self, request: web.Request) -> web.Response:
        response = web.Response(body=self._context.metrics.page())
        response.headers["Content-Type"] = CONTENT_TYPE_LATEST
        return response

    async def _health(self, request: web.Request) -> web.Response:
        healthy, said = await health(self._context.store, self._context.pauses)
        return web.Response(status=200 if healthy else 503, text=said + "\n")


async def open_metrics(
    context: ServeContext, where: Tuple[str, int], reuse_port: bool, replaced: Optional[Running], stderr: IO[str]
) -> Optional[MetricsSite]:
    """``--metrics``'s page listening at ``where`` (taking the port over from
    the server ``replaced``, as the SSH port is: serve/takeover.py); where it
    listens is in the log. None when it cannot listen (said on ``stderr``)."""
    site = MetricsSite(context)
    wanted_host, wanted_port = where
    try:
        host, port = await listen_taking_over(lambda: site.start(wanted_host, wanted_port, reuse_port), replaced)
    except (OSError, ValueError) as error:
        await site.close()
        why = (error.strerror if isinstance(error, OSError) else None) or str(error)
        stderr.write(f"ansi2048 serve: error: --metrics: cannot listen on {wanted_host}:{wanted_port}: {why}\n")
        return None
    url = f"http://{f'[{host}]' if ':' in host else host}:{port}/metrics"
    context.log(f"metrics: {url}", "metrics", url=url)
    return site
