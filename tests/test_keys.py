"""The key decoder: bytes in any chunking -> the same actions."""

from __future__ import annotations

import itertools
from typing import Sequence

import pytest
from hypothesis import given, settings, strategies as st

from ansi2048.game.engine import Direction
from ansi2048.game.keys import Action, KeyDecoder, move_action

UP, DOWN, LEFT, RIGHT = Action.UP, Action.DOWN, Action.LEFT, Action.RIGHT
ESC = b"\x1b"

# The README's key table: WASD, hjkl, u r q (and Ctrl-C); the recording's canonical keys.
KEY_TABLE = {
    "w": UP,
    "a": LEFT,
    "s": DOWN,
    "d": RIGHT,
    "k": UP,
    "h": LEFT,
    "j": DOWN,
    "l": RIGHT,
    "u": Action.UNDO,
    "r": Action.RESTART,
    "q": Action.QUIT,
}
# Final byte of an arrow key (ECMA-48 / xterm): A up, B down, C right, D left.
ARROW_FINALS = {b"A": UP, b"B": DOWN, b"C": RIGHT, b"D": LEFT}


def decode(data: bytes, comments: bool = True) -> list[Action]:
    return KeyDecoder(comments=comments).feed(data)


def decode_chunks(chunks: Sequence[bytes], comments: bool = True) -> tuple[list[Action], bool]:
    decoder = KeyDecoder(comments=comments)
    actions: list[Action] = []
    for chunk in chunks:
        actions += decoder.feed(chunk)
    return actions, decoder.pending


@pytest.mark.parametrize("key, action", sorted(KEY_TABLE.items()))
def test_action_keys_in_both_cases(key: str, action: Action) -> None:
    assert decode(key.encode()) == [action]
    assert decode(key.upper().encode()) == [action]


def test_action_values_and_directions() -> None:
    # The canonical recording characters are WASD + u r q; the keyboard's own
    # keys (help, the AI's) are never recorded.
    assert {a.value for a in Action if a.game} == set("wasdurq")
    assert UP.direction is Direction.UP and DOWN.direction is Direction.DOWN
    assert LEFT.direction is Direction.LEFT and RIGHT.direction is Direction.RIGHT
    for action in (Action.UNDO, Action.RESTART, Action.QUIT):
        assert action.direction is None
    for action in Action:  # a recording's character decodes to its action
        if action.game:
            assert decode(action.value.encode()) == [action]
        else:  # not from a pipe or a recording
            assert decode(action.value.encode()) == []


def test_the_ais_keys_only_on_the_keyboard() -> None:
    keys = b"tTpP+=-"
    expected = [Action.HINT] * 2 + [Action.AUTOPLAY] * 2 + [Action.FASTER] * 2 + [Action.SLOWER]
    assert KeyDecoder(comments=False, assist=True).feed(keys + b"w") == [*expected, Action.UP]
    # A pipe, a recording, a save: they are nothing, like any other stray key.
    assert decode(keys + b"w") == [Action.UP]
    # Config bindings still apply on top of them.
    bound = KeyDecoder(comments=False, extra=[(b"t", Action.UP)], assist=True)
    assert bound.feed(b"tp") == [Action.UP, Action.AUTOPLAY]


def test_move_action_is_the_key_of_each_direction() -> None:
    for direction in Direction:
        assert move_action(direction).direction is direction


@pytest.mark.parametrize("final, action", sorted(ARROW_FINALS.items()))
def test_arrow_forms(final: bytes, action: Action) -> None:
    forms = [
        ESC + b"[" + final,  # CSI (normal cursor keys)
        ESC + b"O" + final,  # SS3 (application cursor keys)
        ESC + b"[1;5" + final,  # Ctrl+arrow
        ESC + b"[1;2" + final,  # Shift+arrow
        ESC + b"[1;3" + final,  # Alt+arrow
    ]
    for form in forms:
        assert decode(form) == [action], form
        assert decode(b"u" + form + b"q") == [Action.UNDO, action, Action.QUIT], form


def test_wasd_hjkl_arrows_spell_the_same_moves() -> None:
    moves = [UP, UP, LEFT, DOWN, RIGHT, LEFT, DOWN, DOWN, RIGHT, UP]
    letters = {UP: "w", DOWN: "s", LEFT: "a", RIGHT: "d"}
    vim = {UP: "k", DOWN: "j", LEFT: "h", RIGHT: "l"}
    finals = {v: k for k, v in ARROW_FINALS.items()}
    spellings = [
        "".join(letters[m] for m in moves).encode(),
        "".join(letters[m] for m in moves).upper().encode(),
        "".join(vim[m] for m in moves).encode(),
        b"".join(ESC + b"[" + finals[m] for m in moves),
        b"".join(ESC + b"O" + finals[m] for m in moves),
        b"".join(ESC + b"[1;5" + finals[m] for m in moves),
    ]
    for spelling in spellings:
        assert decode(spelling) == moves, spelling


def test_ctrl_c_is_quit() -> None:
    assert decode(b"\x03") == [Action.QUIT]
    assert decode(b"w\x03d") == [UP, Action.QUIT, RIGHT]


GARBAGE = [
    b"\x00",  # NUL
    b"\x01",
    b"\x02",
    b"\x04",  # Ctrl-D
    b"\x07",
    b"\x08",
    b"\t",
    b"\n",
    b"\r",
    b"\x1a",  # Ctrl-Z
    b"\x1c",
    b"\x7f",  # DEL
    b" ",
    b"x",
    b"1",
    b"\x80",
    b"\x9b",  # 8-bit CSI: not decoded, ignored
    b"\xc3",  # truncated UTF-8
    b"\xff",  # never valid UTF-8
    b"\xe2\x82",  # truncated 3-byte sequence
    "é".encode(),  # valid UTF-8, not a key
    ESC + b"[2~",  # Insert
    ESC + b"[3~",  # Delete
    ESC + b"[15~",  # F5
    ESC + b"[H",  # Home
    ESC + b"[F",  # End
    ESC + b"[Z",  # Shift-Tab
    ESC + b"OP",  # F1 (SS3)
    ESC + b"OQ",  # F2
    ESC + b"[1;5H",  # Ctrl-Home
    ESC + b"[?1;2c",  # a device attributes reply
    ESC + b"[200~",  # bracketed paste start marker
]


@pytest.mark.parametrize("junk", GARBAGE)
def test_garbage_is_ignored_key_by_key(junk: bytes) -> None:
    assert decode(junk) == []
    assert decode(junk + b"w") == [UP]
    assert decode(b"a" + junk + b"d") == [LEFT, RIGHT]
    assert decode(junk * 3 + ESC + b"[B" + junk) == [DOWN]


@pytest.mark.parametrize(
    "broken, after, expected",
    [
        (ESC + b"[1;", ESC + b"[A", [UP]),  # a CSI cut short by another arrow
        (ESC + b"[12", b"\x03", [Action.QUIT]),  # ... by Ctrl-C
        (ESC + b"[", ESC + b"OB", [DOWN]),
        (ESC + b"O", ESC + b"[C", [RIGHT]),  # a broken SS3
        (ESC + b"[" + b"1" * 40, ESC + b"[D", [LEFT]),  # an endless CSI is given up on
        # ... and the key after it counts: w (0x77) would be the final byte of
        # a CSI that was never given up on, and swallowed with it.
        (ESC + b"[" + b"1" * 40, b"w", [UP]),
        (ESC + b"[1\n", b"w", [UP]),  # a control byte breaks the sequence
    ],
)
def test_broken_escape_sequence_then_a_key(broken: bytes, after: bytes, expected: list[Action]) -> None:
    assert decode(broken + after) == expected
    assert decode(b"s" + broken + after + b"d") == [DOWN, *expected, RIGHT]


def test_alt_key_and_double_escape() -> None:
    # ESC followed by a plain key (Alt+w, or a lone ESC then w): the key counts.
    assert decode(ESC + b"w") == [UP]
    assert decode(ESC + ESC + b"w") == [UP]
    assert decode(ESC + ESC + b"[A") == [UP]


def test_comments_to_end_of_line() -> None:
    data = b"w # this is a comment with wasd and \x1b[A inside\nd#x\ns#"
    assert decode(data, comments=True) == [UP, RIGHT, DOWN]

    # Without comments every action key in it counts, including the arrow.
    def letters(text: str) -> list[Action]:
        return [KEY_TABLE[c] for c in text if c in KEY_TABLE]

    expected = [UP, *letters("this is a comment with wasd and "), UP, *letters("inside"), RIGHT, DOWN]
    assert decode(data, comments=False) == expected


def test_comment_spans_chunks() -> None:
    decoder = KeyDecoder(comments=True)
    assert decoder.feed(b"a# wasd") == [LEFT]
    assert decoder.feed(b" more wasd") == []
    assert decoder.feed(b" end\nd") == [RIGHT]
    assert not decoder.pending


def test_pending_and_flush() -> None:
    decoder = KeyDecoder()
    assert not decoder.pending
    assert decoder.feed(ESC) == []
    assert decoder.pending
    decoder.flush()
    assert not decoder.pending
    assert decoder.feed(b"w") == [UP]

    for partial in (ESC + b"[", ESC + b"O", ESC + b"[1;5"):
        decoder = KeyDecoder()
        assert decoder.feed(partial) == []
        assert decoder.pending, partial
        decoder.flush()
        assert not decoder.pending
        assert decoder.feed(b"s") == [DOWN]

    decoder = KeyDecoder()
    decoder.feed(ESC + b"[A")
    assert not decoder.pending
    decoder.flush()  # nothing pending: flush changes nothing
    assert decoder.feed(b"d") == [RIGHT]


def test_lone_escape_then_a_key_later() -> None:
    # No flush in between (the caller may not have timed out yet): the w counts.
    decoder = KeyDecoder()
    assert decoder.feed(ESC) == []
    assert decoder.feed(b"w") == [UP]
    assert not decoder.pending


def test_arrow_split_across_chunks() -> None:
    decoder = KeyDecoder()
    assert decoder.feed(ESC) == []
    assert decoder.feed(b"[") == []
    assert decoder.feed(b"1;") == []
    assert decoder.feed(b"5") == []
    assert decoder.pending
    assert decoder.feed(b"A") == [UP]
    assert not decoder.pending


# --------------------------------------------------------------------------
# Any chunking gives the same actions
# --------------------------------------------------------------------------

TOKENS = [
    *(k.encode() for k in KEY_TABLE),
    *(k.upper().encode() for k in KEY_TABLE),
    *GARBAGE,
    *(ESC + b"[" + f for f in ARROW_FINALS),
    *(ESC + b"O" + f for f in ARROW_FINALS),
    *(ESC + b"[1;5" + f for f in ARROW_FINALS),
    ESC,
    ESC + b"[",
    ESC + b"O",
    ESC + b"[1;",
    b"[",
    b"O",
    b";",
    b"#",
    b"# comment w\n",
    b"\x03",
]


@st.composite
def split(draw: st.DrawFn) -> tuple[bytes, list[bytes]]:
    parts = draw(st.lists(st.sampled_from(TOKENS) | st.binary(max_size=4), max_size=40))
    data = b"".join(parts)
    cuts = sorted(draw(st.lists(st.integers(0, len(data)), max_size=12)))
    bounds = [0, *cuts, len(data)]
    return data, [data[a:b] for a, b in zip(bounds, bounds[1:])]


@settings(max_examples=400, deadline=None)
@given(split(), st.booleans())
def test_property_any_chunking_same_actions(case: tuple[bytes, list[bytes]], comments: bool) -> None:
    data, chunks = case
    assert b"".join(chunks) == data
    whole = decode_chunks([data], comments)
    assert decode_chunks(chunks, comments) == whole
    assert decode_chunks([data[i : i + 1] for i in range(len(data))], comments) == whole


def all_splits(data: bytes) -> list[list[bytes]]:
    result = []
    for mask in itertools.product((False, True), repeat=len(data) - 1):
        chunks, start = [], 0
        for i, cut in enumerate(mask, start=1):
            if cut:
                chunks.append(data[start:i])
                start = i
        chunks.append(data[start:])
        result.append(chunks)
    return result


@pytest.mark.parametrize(
    "data, expected",
    [
        (ESC + b"[1;5Aw" + ESC + b"OB", [UP, UP, DOWN]),
        (b"#x\n" + ESC + ESC + b"[Cq", [RIGHT, Action.QUIT]),
        (ESC + b"[2~" + ESC + b"OPh\x03", [LEFT, Action.QUIT]),
    ],
)
def test_every_possible_split(data: bytes, expected: list[Action]) -> None:
    splits = all_splits(data)
    assert len(splits) == 2 ** (len(data) - 1)
    for chunks in splits:
        assert decode_chunks(chunks) == (expected, False), chunks


@settings(max_examples=300, deadline=None)
@given(split(), st.booleans(), st.sampled_from([(), ((b"#", Action.UNDO),), ((b"x", Action.UP), (b"[", Action.DOWN))]))
def test_runs_of_plain_keys_decode_as_key_by_key(
    case: tuple[bytes, list[bytes]], comments: bool, extra: tuple[tuple[bytes, Action], ...]
) -> None:
    # A run of plain keys is decoded in one go; fed a byte at a time the same
    # input goes through the state machine: both must agree, bindings included
    # (a bound '#' is a key, not a comment).
    data, _ = case
    whole = KeyDecoder(comments=comments, extra=extra).feed(data)
    one_by_one = KeyDecoder(comments=comments, extra=extra)
    assert [action for byte in data for action in one_by_one.feed(bytes([byte]))] == whole


def test_a_bound_hash_is_a_key_even_where_hash_starts_comments() -> None:
    decoder = KeyDecoder(comments=True, extra=[(b"#", Action.UNDO)])
    assert decoder.feed(b"w#a\nd") == [UP, Action.UNDO, LEFT, RIGHT]
