"""MarkerMatcher throughput, native against reference on the same kind of input: one feed of
the whole buffer, and 4-byte feeds (what a token-by-token stream costs per call)."""

from __future__ import annotations

import pytest

import data
from toolparse.primitives import MarkerTrie

CASES = tuple(data.TRIE_INPUTS)


def _describe(benchmark, group: str, engine, payload: bytes, feeds: int) -> None:
    benchmark.group = group
    benchmark.extra_info.update(engine=engine.name, bytes=len(payload), feeds=feeds)


def _expected(payload: bytes) -> list[tuple[int, int, int]]:
    # The native engine is fast enough to give the answer both engines must agree on.
    return MarkerTrie(list(data.MARKERS)).find_all(payload)


@pytest.mark.parametrize("case", CASES)
def test_trie_whole_buffer(benchmark, engine, make_input, case: str) -> None:
    payload = make_input(data.TRIE_INPUTS[case], engine.name, "whole")
    trie = engine.module.MarkerTrie(list(data.MARKERS))

    def run() -> list[tuple[int, int, int]]:
        matcher = trie.matcher()
        return matcher.feed(payload) + matcher.finish()

    _describe(benchmark, f"trie {case}, whole buffer", engine, payload, feeds=1)
    matches = benchmark(run)
    assert matches == _expected(payload)
    assert bool(matches) == (case == "prose")


@pytest.mark.parametrize("case", CASES)
def test_trie_4_byte_feeds(benchmark, engine, make_input, case: str) -> None:
    payload = make_input(data.TRIE_INPUTS[case], engine.name, "4-byte")
    pieces = data.chunks(payload, 4)
    trie = engine.module.MarkerTrie(list(data.MARKERS))

    def run() -> list[tuple[int, int, int]]:
        matcher = trie.matcher()
        feed = matcher.feed
        matches = []
        for piece in pieces:
            matches += feed(piece)
        return matches + matcher.finish()

    _describe(benchmark, f"trie {case}, 4-byte feeds", engine, payload, feeds=len(pieces))
    assert benchmark(run) == _expected(payload)
