"""JsonScanner throughput (strict dialect), native against reference on the same kind of
document: one feed of the whole buffer, and 4-byte feeds (the per-token case)."""

from __future__ import annotations

import pytest

import data

CASES = tuple(data.JSON_INPUTS)


def _describe(benchmark, group: str, engine, payload: bytes, feeds: int) -> None:
    benchmark.group = group
    benchmark.extra_info.update(engine=engine.name, bytes=len(payload), feeds=feeds)


@pytest.mark.parametrize("case", CASES)
def test_json_whole_buffer(benchmark, engine, make_input, case: str) -> None:
    payload = make_input(data.JSON_INPUTS[case], engine.name, "whole")
    scanner_type = engine.module.JsonScanner

    def run() -> tuple[str, int | None]:
        scanner = scanner_type("strict")
        return scanner.feed(payload), scanner.end

    _describe(benchmark, f"json {case}, whole buffer", engine, payload, feeds=1)
    assert benchmark(run) == ("complete", len(payload))


@pytest.mark.parametrize("case", CASES)
def test_json_4_byte_feeds(benchmark, engine, make_input, case: str) -> None:
    payload = make_input(data.JSON_INPUTS[case], engine.name, "4-byte")
    pieces = data.chunks(payload, 4)
    scanner_type = engine.module.JsonScanner

    def run() -> tuple[str, int | None]:
        scanner = scanner_type("strict")
        feed = scanner.feed
        verdict = "need_more"
        for piece in pieces:
            verdict = feed(piece)
        return verdict, scanner.end

    _describe(benchmark, f"json {case}, 4-byte feeds", engine, payload, feeds=len(pieces))
    assert benchmark(run) == ("complete", len(payload))
