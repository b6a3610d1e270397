"""A served game's snapshot (serve/snapshot.py): resuming from it gives the
game its recording replays to, exactly; one that is not of exactly that
recording is ignored (the recording is replayed); the keeping carries it on
as keys are appended and keeps it when the game is let go; and a store
written before snapshots (schema 6) is upgraded, its games still resumed."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional, Sequence, Tuple

import pytest
from hypothesis import given, settings, strategies as st

from ansi2048 import __version__
from ansi2048.game.keys import Action
from ansi2048.records.history import config_key
from ansi2048.records.recording import ASSISTED, Item, Reseed, format_header
from ansi2048.serve import keeping as keeping_module
from ansi2048.serve.keeping import StoreKeeping, open_game
from ansi2048.serve.snapshot import Snapshot, Tracked, decoded, digest, encoded, resumed
from ansi2048.serve.store import open_store
from ansi2048.serve.store.base import ClaimLost, Store
from ansi2048.serve.store.links import Statement
from ansi2048.storage.save_file import Loaded, SaveFile, finish, saved_bytes

from .databases import run
from .test_store import opened

KEYS = [Action.UP, Action.LEFT, Action.DOWN, Action.RIGHT, Action.UNDO, Action.RESTART]
items_strategy = st.lists(
    st.one_of(st.sampled_from(KEYS), st.builds(Reseed, st.integers(0, 2**64 - 1)), st.just(ASSISTED)),
    max_size=120,
)


def recording_of(rows: int, cols: int, seed: int, items: Sequence[Item]) -> bytes:
    header = format_header(seed, rows, cols, 2048, __version__).encode("ascii")
    return header + b"".join(saved_bytes(item) for item in items)


def replayed(rows: int, cols: int, recording: bytes) -> Loaded:
    loaded = SaveFile("", rows, cols, 2048, recording).load()
    assert loaded is not None
    return loaded


def facts(loaded: Loaded) -> Tuple[object, ...]:
    """All a resumed game is: the game whole (undo's history, the generator), its runs, what compaction needs."""
    return (
        loaded.game.state(),
        loaded.game.over,
        loaded.runs,
        loaded.seed,
        loaded.best_seen,
        loaded.restarts_end,
        loaded.seed_after_restart,
        loaded.items,
    )


def snapshot_of(rows: int, cols: int, recording: bytes, every: int = 3) -> bytes:
    loaded = replayed(rows, cols, recording)
    return finish(encoded(Snapshot(rows, cols, 2048, len(recording), digest(recording), loaded), every))


@settings(max_examples=60, deadline=None)
@given(
    st.integers(2, 5),
    st.integers(2, 5),
    st.integers(0, 2**64 - 1),
    items_strategy,
    st.integers(0, 120),
    st.integers(1, 40),
)
def test_a_game_resumed_from_its_snapshot_equals_it_replayed_from_its_recording(
    rows: int, cols: int, seed: int, items: List[Item], cut: int, every: int
) -> None:
    """The snapshot of a recording's first part, carried on through the rest
    as the keeping carries it (appended in pieces), resumes the game the
    whole recording replays to: the board, the generator, undo's history,
    the runs undo brings back, the best reached, the counts compaction needs.
    So does the first part's own snapshot, the rest replayed after it (keys
    that came after the last snapshot kept: a server killed mid-game)."""
    cut = min(cut, len(items))
    first = recording_of(rows, cols, seed, items[:cut])
    whole = recording_of(rows, cols, seed, items)
    tracked = Tracked(snapshot_of(rows, cols, first, every), first, every)
    for item in items[cut:]:
        tracked.appended(saved_bytes(item))
    snapshot = finish(tracked.snapshot())
    expected = replayed(rows, cols, whole)
    resumed_game = finish(resumed(whole, snapshot, rows, cols, 2048, every))
    assert resumed_game is not None and resumed_game[1]  # of the whole recording
    assert facts(resumed_game[0]) == facts(expected)
    from_head = finish(resumed(whole, snapshot_of(rows, cols, first, every), rows, cols, 2048, every))
    assert from_head is not None and from_head[1] == (cut == len(items))  # else of its beginning
    assert facts(from_head[0]) == facts(expected)


def test_a_snapshot_is_used_only_for_its_recording_or_that_recording_s_beginning() -> None:
    items: List[Item] = [Action.LEFT, Action.UP, Action.RIGHT, Action.DOWN] * 5
    recording = recording_of(4, 4, 9, items)
    snapshot = snapshot_of(4, 4, recording)
    resumed_game = finish(resumed(recording, snapshot, 4, 4, 2048, 10))
    assert resumed_game is not None and facts(resumed_game[0]) == facts(replayed(4, 4, recording))
    # As long, other keys (a recording rewritten and played on to the same length).
    other = recording[:-1] + (b"a" if recording.endswith(b"w") else b"w")
    assert len(other) == len(recording)
    assert finish(resumed(other, snapshot, 4, 4, 2048, 10)) is None
    # Longer, but not this one's beginning; shorter than the snapshot's.
    assert finish(resumed(other + b"w", snapshot, 4, 4, 2048, 10)) is None
    assert finish(resumed(recording[:-1], snapshot, 4, 4, 2048, 10)) is None
    # Followed by what appended items never begin with: it could read otherwise alone.
    assert finish(resumed(recording + b"#w", snapshot, 4, 4, 2048, 10)) is None
    # Another board, a damaged or a later format's snapshot, or none.
    assert finish(resumed(recording, snapshot, 5, 5, 2048, 10)) is None
    assert finish(resumed(recording, snapshot[:-5], 4, 4, 2048, 10)) is None
    later = snapshot.replace(b'"ansi2048 snapshot":1', b'"ansi2048 snapshot":2')
    assert later != snapshot and finish(resumed(recording, later, 4, 4, 2048, 10)) is None
    assert finish(resumed(recording, None, 4, 4, 2048, 10)) is None
    with pytest.raises(ValueError):
        finish(decoded(b"\x00not json", 10))


def test_a_snapshot_the_store_holds_is_written_again_only_once_keys_came() -> None:
    recording = recording_of(4, 4, 9, [Action.LEFT, Action.UP])
    stored = snapshot_of(4, 4, recording)
    assert finish(Tracked(stored, recording, 10, kept=True).snapshot()) is None  # resumed and left: as it was
    tracked = Tracked(stored, recording, 10, kept=True)
    tracked.appended(b"d")
    longer = finish(tracked.snapshot())
    assert longer is not None and longer != stored
    resumed_game = finish(resumed(recording + b"d", longer, 4, 4, 2048, 10))
    assert resumed_game is not None and facts(resumed_game[0]) == facts(replayed(4, 4, recording + b"d"))


# -- the keeping, on each database ---------------------------------------------------

BOARD = (10, 10, 2048)
KEY = config_key(*BOARD)


async def held(store: Store, holder: str) -> Tuple[StoreKeeping, int]:
    """The player's game on BOARD, claimed by ``holder``: its keeping, and the player."""
    player = (await store.player("SHA256:snap", "snap")).id
    assert await store.claim(player, KEY, holder, 60, take_over=True) is None
    return StoreKeeping(store, player, KEY, holder), player


async def resumed_in(keeping: StoreKeeping) -> Tuple[Loaded, str]:
    """The game ``keeping`` holds, opened as a session opens it (its opening writes done)."""
    session, note, writes = await open_game(keeping, *BOARD, False, lambda: 11, 0.0)
    for write in writes:
        await write()
    game, runs = session.game, session.runs()
    return Loaded(game, 0, 0, 0, 0, False, runs), note


def test_a_game_left_is_resumed_from_its_snapshot_and_a_stale_one_is_replayed(
    store_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def scenario() -> None:
        async with opened(store_url, tmp_path) as store:
            first, player = await held(store, "s1")
            await resumed_in(first)  # a new game
            keys = b"wasdwwaassddwdsa" * 8
            for start in range(0, len(keys), 5):
                await first.append(keys[start : start + 5])
            await first.release()  # its snapshot kept
            saved = await store.load_saved(player, KEY)
            assert saved is not None and saved.snapshot is not None
            expected = replayed(10, 10, saved.recording)

            replays: List[bytes] = []
            real_replay = keeping_module.load_recording

            async def counted(save: SaveFile) -> Optional[Loaded]:
                assert save.recording is not None
                replays.append(save.recording)
                return await real_replay(save)

            monkeypatch.setattr(keeping_module, "load_recording", counted)
            second, _ = await held(store, "s2")
            game, _ = await resumed_in(second)
            assert replays == []  # from the snapshot: no replay
            assert (game.game.state(), game.runs) == (expected.game.state(), expected.runs)
            # Keys appended that the snapshot has not seen (a server killed mid-game): only they are replayed.
            await second.append(b"ss")
            third, _ = await held(store, "s3")
            game, _ = await resumed_in(third)
            assert replays == []
            again = replayed(10, 10, saved.recording + b"ss")
            assert (game.game.state(), game.runs) == (again.game.state(), again.runs)
            # Played on and left: the snapshot it keeps is of all of it, those keys too.
            await third.append(b"aw")
            await third.release()
            fourth, _ = await held(store, "s4")
            game, _ = await resumed_in(fourth)
            assert replays == []
            later = replayed(10, 10, saved.recording + b"ssaw")
            assert (game.game.state(), game.runs) == (later.game.state(), later.runs)
            # A recording that is not the snapshot's, nor begins with it: replayed whole.
            await fourth.rewrite(saved.recording[:-3])
            await store.keep_snapshot(player, KEY, "s4", saved.snapshot)  # the longer one's
            fifth, _ = await held(store, "s5")
            game, _ = await resumed_in(fifth)
            assert replays == [saved.recording[:-3]]
            shorter = replayed(10, 10, saved.recording[:-3])
            assert (game.game.state(), game.runs) == (shorter.game.state(), shorter.runs)

    run(scenario())


def test_a_game_compacted_as_it_resumes_keeps_the_snapshot_of_its_shorter_recording(
    store_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def scenario() -> None:
        async with opened(store_url, tmp_path) as store:
            first, player = await held(store, "s1")
            before_restart: List[Item] = [Action.LEFT, Action.UP, Action.RIGHT] * 10
            after_restart: List[Item] = [Action.DOWN, Action.LEFT] * 10
            await first.rewrite(recording_of(10, 10, 5, [*before_restart, Action.RESTART, *after_restart]))
            await first.release()
            second, _ = await held(store, "s2")
            await resumed_in(second)  # replayed, then compacted: the games before the restart go
            await second.append(b"wd")
            await second.release()
            saved = await store.load_saved(player, KEY)
            assert saved is not None and saved.snapshot is not None
            assert b"r" not in saved.recording.split(b"\n", 1)[1]  # compacted

            async def no_replay(save: SaveFile) -> Optional[Loaded]:
                raise AssertionError("replayed")

            monkeypatch.setattr(keeping_module, "load_recording", no_replay)
            third, _ = await held(store, "s3")
            game, _ = await resumed_in(third)
            expected = replayed(10, 10, saved.recording)
            assert (game.game.state(), game.runs) == (expected.game.state(), expected.runs)

    run(scenario())


def test_the_store_keeps_a_snapshot_under_the_claim_and_drops_it_with_the_recording(
    store_url: str, tmp_path: Path
) -> None:
    async def scenario() -> None:
        async with opened(store_url, tmp_path) as store:
            _, player = await held(store, "s1")
            await store.rewrite(player, KEY, "s1", b"header\n")
            await store.keep_snapshot(player, KEY, "s1", b"one")
            await store.append(player, KEY, "s1", b"wa")
            saved = await store.load_saved(player, KEY)
            assert saved is not None and (saved.recording, saved.snapshot) == (b"header\nwa", b"one")
            assert await store.load(player, KEY) == b"header\nwa"
            with pytest.raises(ClaimLost):  # another session's
                await store.keep_snapshot(player, KEY, "s2", b"two")
            await store.rewrite(player, KEY, "s1", b"other\n")
            saved = await store.load_saved(player, KEY)
            assert saved is not None and (saved.recording, saved.snapshot) == (b"other\n", None)
            await store.keep_snapshot(player, KEY, "s1", b"three")
            await store.discard(player, KEY, "s1")
            assert await store.load_saved(player, KEY) is None
            await store.rewrite(player, KEY, "s1", b"again\n")
            saved = await store.load_saved(player, KEY)
            assert saved is not None and saved.snapshot is None

    run(scenario())


def test_a_store_of_schema_6_is_upgraded_and_its_games_still_resume(store_url: str, tmp_path: Path) -> None:
    async def scenario() -> None:
        items: List[Item] = [Action.LEFT, Action.UP, Action.RIGHT, Action.DOWN] * 30
        recording = recording_of(*BOARD[:2], 21, items)
        old = open_store(store_url, str(tmp_path))
        old.migrations = old.migrations[:6]  # type: ignore[attr-defined]
        await old.open()
        _, player = await held(old, "old")
        # As version 6 kept a game: a recording, no snapshot column.
        write = "UPDATE games SET recording = %s WHERE player = %s AND board = %s"
        await old.run_script([Statement(write, (recording, player, KEY))])
        await old.release(player, KEY, "old")
        await old.close()

        async with opened(store_url, tmp_path) as store:
            saved = await store.load_saved(player, KEY)
            assert saved is not None and (saved.recording, saved.snapshot) == (recording, None)
            resumer, _ = await held(store, "new")
            game, note = await resumed_in(resumer)
            expected = replayed(10, 10, recording)
            assert (game.game.state(), game.runs) == (expected.game.state(), expected.runs)
            assert note == f"resumed your game: {expected.game.moves} moves"
            await resumer.release()
            saved = await store.load_saved(player, KEY)
            assert saved is not None and saved.snapshot is not None  # kept from now on
            assert finish(resumed(recording, saved.snapshot, *BOARD, 50)) is not None

    run(scenario())
