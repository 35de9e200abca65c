"""MarkerTrie / MarkerMatcher: leftmost-longest, non-overlapping matching with holdback.

The expected answers come from a brute-force oracle written here, independently of both
engines: it rescans the whole input from scratch for every question it is asked.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers import (
    MODEST,
    byte_by_byte,
    every_split,
    feed_chunks,
    partitions,
    random_partition,
    whole,
)

Match = tuple[int, int, int]

# --- brute-force oracle ----------------------------------------------------------------


def encode_all(markers: Sequence[str | bytes]) -> list[bytes]:
    return [m.encode("utf-8") if isinstance(m, str) else m for m in markers]


def first_match(markers: Sequence[bytes], text: bytes, pos: int) -> Match | None:
    """The match with the smallest start at or after pos, the longest among those."""
    for start in range(pos, len(text)):
        hits = [(len(m), i) for i, m in enumerate(markers) if text.startswith(m, start)]
        if hits:
            length, marker_id = max(hits)
            return (marker_id, start, start + length)
    return None


def oracle_matches(markers: Sequence[bytes], text: bytes) -> list[Match]:
    """All matches of the complete input: leftmost-longest, restarting after each match."""
    found: list[Match] = []
    pos = 0
    while (hit := first_match(markers, text, pos)) is not None:
        found.append(hit)
        pos = hit[2]
    return found


def is_proper_prefix_of_marker(markers: Sequence[bytes], piece: bytes) -> bool:
    return any(len(m) > len(piece) and m.startswith(piece) for m in markers)


def certain_matches(markers: Sequence[bytes], text: bytes) -> list[Match]:
    """The matches of `text` that no continuation can change.

    A match is displaced by a continuation exactly when some marker could still complete
    at a start between the resume point and the match's own start (an earlier start, or
    the same start and longer): that is, when the input from there on is a proper prefix
    of a marker.
    """
    found: list[Match] = []
    pos = 0
    while (hit := first_match(markers, text, pos)) is not None:
        if any(is_proper_prefix_of_marker(markers, text[s:]) for s in range(pos, hit[1] + 1)):
            break
        found.append(hit)
        pos = hit[2]
    return found


def expected_holdback(markers: Sequence[bytes], text: bytes, after: int) -> int:
    """Longest suffix of text[after:] that is a proper prefix of some marker."""
    return max(
        length
        for length in range(len(text) - after + 1)
        if is_proper_prefix_of_marker(markers, text[len(text) - length :])
    )


def check_stream(impl, markers: Sequence[str | bytes], text: bytes, chunks: Sequence[int]):
    """Feeds text in the given chunks and checks every feed against the oracle.

    After each feed: the matches reported so far are exactly the certain ones, `position`
    is the bytes fed, `holdback` is the brute-force value, every match the oracle sees but
    cannot yet confirm lies inside the holdback, and no later match starts before the
    point `position - holdback` reached at that time.
    """
    encoded = encode_all(markers)
    matcher = impl.MarkerTrie(list(markers)).matcher()
    reported: list[Match] = []
    safe_before = 0  # bytes before this offset were promised never to be part of a match
    steps = feed_chunks(matcher, text, chunks, observe=lambda m: (m.position, m.holdback))
    for step in steps:
        prefix = text[: step.fed]
        assert all(match[1] >= safe_before for match in step.result), (prefix, step.result)
        reported += step.result
        assert reported == certain_matches(encoded, prefix), prefix
        last_end = reported[-1][2] if reported else 0
        position, holdback = step.seen
        assert position == step.fed
        assert holdback == expected_holdback(encoded, prefix, last_end), prefix
        pending = oracle_matches(encoded, prefix)[len(reported) :]
        assert all(match[1] >= position - holdback for match in pending), prefix
        safe_before = position - holdback
    rest = matcher.finish()
    assert all(match[1] >= safe_before for match in rest)
    assert reported + rest == oracle_matches(encoded, text)
    assert (matcher.position, matcher.holdback) == (len(text), 0)
    return reported + rest


def chunkings(length: int, seed: int = 0) -> list[list[int]]:
    """Whole, byte by byte, every two-way split, and a few random partitions."""
    rng = random.Random(seed)
    return [
        whole(length),
        byte_by_byte(length),
        *every_split(length),
        *(random_partition(rng, length, max_piece=5) for _ in range(5)),
    ]


# --- examples from the specification ---------------------------------------------------


def test_spec_example(impl):
    trie = impl.MarkerTrie(["<tool_call>", "</tool_call>", "<think>"])
    matcher = trie.matcher()
    assert matcher.feed(b"Hi <tool_") == []
    assert matcher.holdback == 6
    assert matcher.position == 9
    assert matcher.feed(b"call>{...") == [(0, 3, 14)]
    assert matcher.holdback == 0
    assert matcher.finish() == []
    assert matcher.position == 18


def test_leftmost_longest_prefers_longer_marker_at_same_start(impl):
    trie = impl.MarkerTrie(["abcd", "bc"])
    assert trie.find_all(b"abcd") == [(0, 0, 4)]
    assert trie.find_all(b"abcx") == [(1, 1, 3)]


def test_leftmost_longest_held_until_input_decides(impl):
    trie = impl.MarkerTrie(["abcd", "bc"])
    matcher = trie.matcher()
    assert matcher.feed(b"abc") == []  # "bc" is complete but "abcd" starts earlier
    assert matcher.holdback == 3
    assert matcher.feed(b"x") == [(1, 1, 3)]
    assert matcher.holdback == 0

    matcher = trie.matcher()
    assert matcher.feed(b"abc") == []
    assert matcher.feed(b"d") == [(0, 0, 4)]


def test_marker_that_is_prefix_of_another_waits(impl):
    trie = impl.MarkerTrie(["<think>", "<think>\n"])
    matcher = trie.matcher()
    assert matcher.feed("<think>") == []
    assert matcher.holdback == 7
    assert matcher.feed("\n") == [(1, 0, 8)]
    assert matcher.holdback == 0

    matcher = trie.matcher()
    assert matcher.feed("<think>") == []
    assert matcher.feed("x") == [(0, 0, 7)]
    assert matcher.holdback == 0


def test_marker_that_is_prefix_of_another_decided_by_finish(impl):
    matcher = impl.MarkerTrie(["<think>", "<think>\n"]).matcher()
    assert matcher.feed("<think>") == []
    assert matcher.finish() == [(0, 0, 7)]
    assert matcher.holdback == 0
    assert matcher.position == 7


def test_markers_sharing_a_prefix(impl):
    # "<tool_call" is common to both; the byte after it decides which one it is.
    trie = impl.MarkerTrie(["<tool_call>", "<tool_call_x>"])
    matcher = trie.matcher()
    assert matcher.feed("<tool_call") == []
    assert matcher.holdback == 10
    assert matcher.feed(">") == [(0, 0, 11)]  # certain at once: no marker extends it

    matcher = trie.matcher()
    assert matcher.feed("<tool_call_x") == []
    assert matcher.holdback == 12
    assert matcher.feed(">") == [(1, 0, 13)]

    matcher = trie.matcher()
    assert matcher.feed("<tool_call_y") == []
    assert matcher.holdback == 0
    assert matcher.finish() == []


def test_leftmost_wins_over_longer_later_match(impl):
    trie = impl.MarkerTrie(["ab", "bcdef"])
    matcher = trie.matcher()
    assert matcher.feed(b"ab") == [(0, 0, 2)]
    assert matcher.feed(b"cdef") == []
    assert matcher.finish() == []


def test_longest_of_nested_markers(impl):
    trie = impl.MarkerTrie(["a", "ab", "abc"])
    assert trie.find_all(b"abcab") == [(2, 0, 3), (1, 3, 5)]
    assert trie.find_all(b"aab") == [(0, 0, 1), (1, 1, 3)]


def test_non_overlapping_restart_after_match(impl):
    assert impl.MarkerTrie(["aa"]).find_all(b"aaaaa") == [(0, 0, 2), (0, 2, 4)]
    assert impl.MarkerTrie(["aba"]).find_all(b"ababa") == [(0, 0, 3)]
    assert impl.MarkerTrie(["ab", "ba"]).find_all(b"aba") == [(0, 0, 2)]
    assert impl.MarkerTrie(["ab", "b"]).find_all(b"abb") == [(0, 0, 2), (1, 2, 3)]
    assert impl.MarkerTrie(["<a>", "a"]).find_all(b"<a>a") == [(0, 0, 3), (1, 3, 4)]


def test_overlapping_markers_every_chunking(impl):
    markers = ["abab", "bab", "ab", "b<", "<>"]
    text = b"ababab<>abb<<>>"
    for chunks in chunkings(len(text)):
        check_stream(impl, markers, text, chunks)


@pytest.mark.parametrize(
    ("markers", "text"),
    [
        (["<tool_call>", "</tool_call>", "<think>"], b"Hi <tool_call>{...}</tool_call> <thin"),
        (["<think>", "<think>\n", "</think>"], b"<think>\n...</think><think>x<think>"),
        (["abcd", "bc"], b"abcabcdabcx"),
        (["<tool_call>", "<tool_call_x>"], b"<tool_call_x><tool_call><tool_call_"),
    ],
)
def test_holdback_at_every_split_point(impl, markers, text):
    for chunks in chunkings(len(text)):
        check_stream(impl, markers, text, chunks)


# DeepSeek's markers use U+FF5C FULLWIDTH VERTICAL LINE and U+2581 LOWER ONE EIGHTH BLOCK.
BAR, LOW = "\uff5c", "\u2581"
DEEPSEEK_MARKERS = [
    f"<{BAR}tool{LOW}calls{LOW}begin{BAR}>",
    f"<{BAR}tool{LOW}call{LOW}begin{BAR}>",
    f"<{BAR}tool{LOW}sep{BAR}>",
    f"<{BAR}tool{LOW}call{LOW}end{BAR}>",
    f"<{BAR}tool{LOW}calls{LOW}end{BAR}>",
]


def test_multibyte_marker_offsets_are_in_bytes(impl):
    trie = impl.MarkerTrie(DEEPSEEK_MARKERS)
    begin = DEEPSEEK_MARKERS[0].encode("utf-8")
    assert len(begin) == 28
    assert trie.max_length == max(len(m.encode("utf-8")) for m in DEEPSEEK_MARKERS)
    assert trie.find_all("é" + DEEPSEEK_MARKERS[0] + "x") == [(0, 2, 30)]


def test_multibyte_marker_split_at_every_byte(impl):
    calls_begin, call_begin, sep, call_end, calls_end = DEEPSEEK_MARKERS
    text = (
        f"ok {calls_begin}{call_begin}function{sep}get{call_end}{calls_end} {call_begin[:-3]}"
    ).encode()
    matches = check_stream(impl, DEEPSEEK_MARKERS, text, whole(len(text)))
    assert [m[0] for m in matches] == [0, 1, 2, 3, 4]
    for chunks in chunkings(len(text)):
        check_stream(impl, DEEPSEEK_MARKERS, text, chunks)


def test_markers_diverging_inside_a_multibyte_character(impl):
    # U+FF5C and U+FF5D share their first two UTF-8 bytes.
    markers = ["<\uff5ca", "<\uff5da"]
    text = "<\uff5c<\uff5da<\uff5ca<\uff5d".encode()
    for chunks in chunkings(len(text)):
        check_stream(impl, markers, text, chunks)


def test_str_feed_is_utf8(impl):
    matcher = impl.MarkerTrie(["<think>"]).matcher()
    assert matcher.feed("é<think>") == [(0, 2, 9)]
    assert matcher.position == 9


def test_empty_feed_changes_nothing(impl):
    matcher = impl.MarkerTrie(["<think>"]).matcher()
    assert matcher.feed(b"") == []
    assert (matcher.position, matcher.holdback) == (0, 0)
    assert matcher.feed(b"<th") == []
    assert matcher.feed(b"") == []
    assert (matcher.position, matcher.holdback) == (3, 3)


# --- finish, reset, lifecycle ----------------------------------------------------------


def test_finish_decides_held_matches_and_drops_holdback(impl):
    matcher = impl.MarkerTrie(["ab", "abcde", "cd"]).matcher()
    assert matcher.feed(b"abcd") == []
    assert matcher.holdback == 4
    assert matcher.finish() == [(0, 0, 2), (2, 2, 4)]
    assert (matcher.position, matcher.holdback) == (4, 0)


def test_finish_with_only_a_partial_marker(impl):
    matcher = impl.MarkerTrie(["<think>"]).matcher()
    assert matcher.feed(b"text <thi") == []
    assert matcher.holdback == 4
    assert matcher.finish() == []
    assert matcher.holdback == 0


def test_feed_after_finish_raises(impl):
    matcher = impl.MarkerTrie(["<think>"]).matcher()
    matcher.feed(b"<think>")
    matcher.finish()
    with pytest.raises(ValueError):
        matcher.feed(b"x")
    with pytest.raises(ValueError):
        matcher.feed(b"")


def test_reset_makes_the_matcher_new(impl):
    matcher = impl.MarkerTrie(["<think>", "<think>\n"]).matcher()
    assert matcher.feed(b"abc<think>") == []
    assert matcher.finish() == [(0, 3, 10)]
    matcher.reset()
    assert (matcher.position, matcher.holdback) == (0, 0)
    assert matcher.feed(b"<think>\n") == [(1, 0, 8)]
    matcher.reset()  # also mid-stream, with a held match
    assert matcher.feed(b"xx<think>") == []
    matcher.reset()
    assert (matcher.position, matcher.holdback) == (0, 0)
    assert matcher.feed(b"<think>x") == [(0, 0, 7)]


def test_matchers_of_one_trie_are_independent(impl):
    trie = impl.MarkerTrie(["<tool_call>"])
    first, second = trie.matcher(), trie.matcher()
    assert first.feed(b"<tool_") == []
    assert second.feed(b"xx<tool_call>") == [(0, 2, 13)]
    assert first.feed(b"call>") == [(0, 0, 11)]
    assert (first.position, second.position) == (11, 13)


def test_find_all_is_a_fresh_matcher_fed_then_finished(impl):
    trie = impl.MarkerTrie(["<think>", "<think>\n", "</think>"])
    text = b"<think>\nhmm</think>answer<think>"
    matcher = trie.matcher()
    expected = matcher.feed(text) + matcher.finish()
    assert trie.find_all(text) == expected == [(1, 0, 8), (2, 11, 19), (0, 25, 32)]
    assert trie.find_all(text.decode()) == expected
    assert trie.find_all(text) == expected  # no state carried between calls


# --- construction ----------------------------------------------------------------------


def test_attributes(impl):
    trie = impl.MarkerTrie(["<think>", b"</think>", "é"])
    assert trie.markers == (b"<think>", b"</think>", "é".encode())
    assert isinstance(trie.markers, tuple)
    assert trie.max_length == 8
    assert len(trie) == 3


def test_limits_are_inclusive(impl):
    assert impl.MarkerTrie([b"x" * 256]).max_length == 256
    markers = [f"<m{i}>" for i in range(4096)]
    trie = impl.MarkerTrie(markers)
    assert len(trie) == 4096
    assert trie.find_all("a<m4095>b<m7><m40") == [(4095, 1, 8), (7, 9, 13)]


@pytest.mark.parametrize(
    "markers",
    [
        pytest.param([], id="empty-list"),
        pytest.param([""], id="empty-str-marker"),
        pytest.param(["a", b""], id="empty-bytes-marker"),
        pytest.param([b"x" * 257], id="marker-over-256-bytes"),
        pytest.param(["é" * 128 + "x"], id="str-marker-over-256-bytes-encoded"),
        pytest.param(["a", "b", "a"], id="duplicate"),
        pytest.param(["é", "é".encode()], id="duplicate-after-encoding"),
        pytest.param([f"m{i}" for i in range(4097)], id="over-4096-markers"),
    ],
)
def test_bad_construction_raises_value_error(impl, markers):
    with pytest.raises(ValueError):
        impl.MarkerTrie(markers)


@pytest.mark.parametrize("bad", [1, None, 2.5, ["a"]])
def test_non_str_bytes_marker_raises_type_error(impl, bad):
    with pytest.raises(TypeError):
        impl.MarkerTrie(["ok", bad])


# --- properties against the oracle -----------------------------------------------------


def byte_strings(alphabet: bytes, min_size: int, max_size: int) -> st.SearchStrategy[bytes]:
    return st.lists(st.sampled_from(alphabet), min_size=min_size, max_size=max_size).map(bytes)


SMALL_ALPHABET = b"ab<>"
# Includes the leading bytes of a 3-byte character so markers diverge mid-character.
UTF8_ALPHABET = "a<\uff5c\uff5d\u2581".encode()


@MODEST
@given(
    markers=st.lists(byte_strings(SMALL_ALPHABET, 1, 4), min_size=1, max_size=5, unique=True),
    text=byte_strings(SMALL_ALPHABET, 0, 40),
    data=st.data(),
)
def test_matches_oracle_on_small_alphabet(impl, markers, text, data):
    chunks = data.draw(partitions(len(text)), label="chunks")
    check_stream(impl, markers, text, chunks)
    assert impl.MarkerTrie(markers).find_all(text) == oracle_matches(markers, text)


@MODEST
@given(
    markers=st.lists(byte_strings(UTF8_ALPHABET, 1, 7), min_size=1, max_size=4, unique=True),
    text=byte_strings(UTF8_ALPHABET, 0, 40),
    data=st.data(),
)
def test_matches_oracle_on_utf8_bytes(impl, markers, text, data):
    chunks = data.draw(partitions(len(text)), label="chunks")
    check_stream(impl, markers, text, chunks)


@MODEST
@given(
    markers=st.lists(byte_strings(SMALL_ALPHABET, 1, 4), min_size=1, max_size=5, unique=True),
    text=byte_strings(SMALL_ALPHABET, 0, 24),
)
def test_byte_by_byte_matches_oracle(impl, markers, text):
    check_stream(impl, markers, text, byte_by_byte(len(text)))
