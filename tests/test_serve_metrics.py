"""``--metrics`` (issue 39): the server's numbers in Prometheus's text
format, read by prometheus-client's own parser while players play, each
moving as it should; ``/health`` answering 503 while the store is away and
200 once it is back; the option's errors."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Dict, Tuple

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the server is for POSIX hosts (asyncssh, signals)")

asyncssh = pytest.importorskip("asyncssh", reason="the server's tests need ansi2048[serve]", exc_type=ImportError)
pytest.importorskip("aiohttp", reason="--metrics serves its page with aiohttp", exc_type=ImportError)

from prometheus_client.parser import text_string_to_metric_families  # noqa: E402

from ansi2048.serve.limits import DEFAULT_LIMITS  # noqa: E402
from ansi2048.serve.metrics_page import MetricsSite  # noqa: E402
from ansi2048.serve.saving import SAID_PAUSED  # noqa: E402
from ansi2048.serve.store import open_store  # noqa: E402

from .serve_support import MemoryStore, ServerThread  # noqa: E402
from .test_serve import client_key, connect, open_terminal, run  # noqa: E402
from .test_serve_pauses import WAIT, Failing  # noqa: E402

Samples = Dict[Tuple[str, Tuple[Tuple[str, str], ...]], float]


def fetch(url: str) -> Tuple[int, str, str]:
    """GET ``url``: its status, content type and body (a 503's too)."""
    try:
        with urllib.request.urlopen(url, timeout=WAIT) as response:
            return response.status, response.headers["Content-Type"], response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.headers["Content-Type"], error.read().decode()


def metrics_site(served: ServerThread) -> str:
    """``served``'s metrics page listening on a free loopback port: its address."""
    site = MetricsSite(served.server.context)
    host, port = served.call(site.start("127.0.0.1", 0))
    return f"http://{host}:{port}"


async def scrape(url: str) -> Samples:
    """The page parsed by prometheus-client's parser: each sample's value by
    its name and labels."""
    status, kind, text = await asyncio.to_thread(fetch, url + "/metrics")
    assert status == 200 and kind.startswith("text/plain; version=")
    samples: Samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples[(name, tuple(sorted(labels.items())))]


def test_the_page_counts_players_sessions_keys_frames_and_refusals_as_they_play(tmp_path: Path) -> None:
    limits = DEFAULT_LIMITS.__class__(**{**DEFAULT_LIMITS.__dict__, "sessions_per_identity": 1})
    with ServerThread(tmp_path, MemoryStore(), seeds=[7, 8], limits=limits) as served:
        url = metrics_site(served)
        key = client_key()

        async def scenario() -> None:
            before = await scrape(url)
            assert value(before, "ansi2048_players", kind="regular") == 0
            assert value(before, "ansi2048_keys_total") == 0
            async with await connect(served.port, key) as conn, await connect(served.port) as guest_conn:
                chan, terminal = await open_terminal(conn, "play --no-animation")
                await terminal.shows("Score", WAIT)
                guest, guest_terminal = await open_terminal(guest_conn, "play --no-animation")
                await guest_terminal.shows("Score", WAIT)
                for moves, typed in enumerate(b"ad", 1):  # seed 7: two moves that change the board
                    chan.write(bytes([typed]))
                    await terminal.shows(f"Moves {moves}", WAIT)
                # Over the limit of one session per key: refused, and counted by its limit's name.
                with pytest.raises(asyncssh.ChannelOpenError):
                    await open_terminal(conn, "play --no-animation")
                playing = await scrape(url)
                assert value(playing, "ansi2048_players", kind="regular") == 1
                assert value(playing, "ansi2048_players", kind="guest") == 1
                assert value(playing, "ansi2048_players", kind="daily") == 0
                assert value(playing, "ansi2048_sessions", kind="play") == 2
                assert value(playing, "ansi2048_sessions", kind="watch") == 0
                assert value(playing, "ansi2048_keys_total") == 2
                assert value(playing, "ansi2048_frames_total") > value(before, "ansi2048_frames_total")
                assert value(playing, "ansi2048_key_to_frame_seconds_count") == 2
                assert value(playing, "ansi2048_key_to_frame_seconds_bucket", le="+Inf") == 2
                assert value(playing, "ansi2048_store_append_seconds_count") >= 2
                assert value(playing, "ansi2048_refusals_total", limit="sessions_per_identity") == 1
                assert value(playing, "ansi2048_saving_paused") == 0
                assert value(playing, "ansi2048_ai_queue") == 0
                chan.write(b"q")
                guest.write(b"q")
                await terminal.closed.wait()
                await guest_terminal.closed.wait()
            for _ in range(100):  # the sessions end a moment after their clients see them close
                after = await scrape(url)
                if value(after, "ansi2048_sessions", kind="play") == 0:
                    break
                await asyncio.sleep(0.05)
            assert value(after, "ansi2048_players", kind="regular") == 0
            assert value(after, "ansi2048_players", kind="guest") == 0
            assert value(after, "ansi2048_keys_total") == 4  # the two moves and each q: a counter never goes back

        run(scenario())


def test_health_is_503_while_the_store_is_unreachable_and_200_once_it_is_back(tmp_path: Path, store_url: str) -> None:
    store = Failing(open_store(store_url, str(tmp_path)), "best")
    with ServerThread(tmp_path, store) as served:
        url = metrics_site(served)
        assert fetch(url + "/health")[::2] == (200, "ok\n")
        store.down = True
        status, _, said = fetch(url + "/health")
        assert status == 503 and said.startswith("store unreachable: disk full")
        assert "\x1b" not in said and said.count("\n") == 1  # the store's words made one printable line
        store.down = False
        assert fetch(url + "/health")[::2] == (200, "ok\n")


def test_health_is_503_while_a_games_saving_is_paused(tmp_path: Path, store_url: str) -> None:
    store = Failing(open_store(store_url, str(tmp_path)), "append")
    with ServerThread(tmp_path, store, seeds=[7]) as served:
        url = metrics_site(served)

        async def scenario() -> None:
            async with await connect(served.port, client_key()) as conn:
                chan, terminal = await open_terminal(conn, "play --no-animation")
                await terminal.shows("Score", WAIT)
                store.down = True
                chan.write(b"a")
                await terminal.shows(SAID_PAUSED, WAIT)
                status, _, said = await asyncio.to_thread(fetch, url + "/health")
                assert (status, said) == (503, "saving paused: 1 games wait for the store\n")
                assert value(await scrape(url), "ansi2048_saving_paused") == 1
                store.down = False
                await terminal.shows("Moves 1", WAIT)
                assert (await asyncio.to_thread(fetch, url + "/health"))[::2] == (200, "ok\n")
                samples = await scrape(url)
                assert value(samples, "ansi2048_saving_paused") == 0
                assert value(samples, "ansi2048_saving_pauses_total") == 1
                chan.write(b"q")
                await terminal.closed.wait()

        run(scenario())


def serve(*options: str, data: Path) -> Any:
    return subprocess.run(
        [sys.executable, "-m", "ansi2048", "serve", "--data-dir", str(data), *options],
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    ("options", "said"),
    [
        (["--metrics", "nowhere"], "argument --metrics: expected HOST:PORT"),
        (["--metrics", "127.0.0.1:9", "--workers", "2"], "--metrics counts one process"),
    ],
)
def test_a_bad_metrics_option_is_one_line_and_status_2(tmp_path: Path, options: Any, said: str) -> None:
    ended = serve(*options, data=tmp_path)
    assert ended.returncode == 2
    assert ended.stderr.count("\n") == 1 and said in ended.stderr


def test_the_served_page_answers_from_the_command(tmp_path: Path) -> None:
    from .serve_support import ServeProcess

    log = tmp_path / "serve.log"
    served = ServeProcess(tmp_path, options=["--metrics", "127.0.0.1:0", "--log", str(log)])
    try:
        for _ in range(200):
            where = [line for line in log.read_text().splitlines() if " metrics: http://" in line]
            if where:
                break
            run(asyncio.sleep(0.05))
        url = where[0].split("metrics: ")[1].removesuffix("/metrics")
        assert fetch(url + "/health")[::2] == (200, "ok\n")
        assert "ansi2048_sessions" in fetch(url + "/metrics")[2]
    finally:
        assert served.kill(15) == 0
