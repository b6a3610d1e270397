"""The PostgreSQL store's own faults: the database stopped under load."""

from __future__ import annotations

import asyncio
from typing import List

from ansi2048.serve.store.base import StoreUnavailable

from .databases import Cluster, run

BOARD = "4x4-2048"


def test_a_database_stopped_under_appends_pauses_saving_and_loses_nothing(postgres_cluster: Cluster) -> None:
    from ansi2048.serve.store.postgres import PostgresStore

    url = postgres_cluster.new_schema()
    sessions, items = 6, 60
    paused: List[StoreUnavailable] = []

    async def scenario() -> List[bytes]:
        store = PostgresStore(url, timeout=0.5)
        await store.open()
        try:
            players = []
            for n in range(sessions):
                player = (await store.player(f"SHA256:{n}", "p")).id
                assert await store.claim(player, BOARD, f"s{n}", ttl=600) is None
                await store.rewrite(player, BOARD, f"s{n}", b"h\n")
                players.append(player)
            halfway = asyncio.Event()

            async def play(n: int, player: int) -> None:
                # As a session does: a key is kept until it is stored, then the next one.
                for item in range(items):
                    for _ in range(400):  # bounded: 400 tries at 50 ms, 20 s
                        try:
                            await store.append(player, BOARD, f"s{n}", b"%d;" % item)
                            break
                        except StoreUnavailable as error:
                            paused.append(error)
                            await asyncio.sleep(0.05)
                    else:
                        raise AssertionError("saving never resumed")
                    if item == items // 3:
                        halfway.set()
                    await asyncio.sleep(0.01)

            async def restart() -> None:
                await halfway.wait()
                await asyncio.to_thread(postgres_cluster.stop)
                await asyncio.sleep(0.5)
                await asyncio.to_thread(postgres_cluster.start)

            await asyncio.gather(restart(), *(play(n, player) for n, player in enumerate(players)))
            return [await store.load(player, BOARD) or b"" for player in players]
        finally:
            await store.close()

    try:
        recordings = run(scenario())
    finally:
        postgres_cluster.start_if_stopped()
    assert paused, "the stop was not noticed"
    assert all("\n" not in str(error) for error in paused)
    expected = b"h\n" + b"".join(b"%d;" % item for item in range(items))
    assert recordings == [expected] * sessions
