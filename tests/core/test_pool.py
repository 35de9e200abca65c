"""Streams kept in a pool (csrc/pool.h): a batch's streams hold their fixed state in one
block each, side by side.  A stream in a pool must parse exactly as one on the heap,
whatever the pool's block size, and give its block back when it goes, in any thread and
in any order with its batch."""

from __future__ import annotations

import gc
import random
import threading
from typing import Any

import pytest

from engines import ENGINES, FIXTURES, merge_deltas
from toolparse import BatchParser, Limits, ParseError, StreamParser, Vocab

pytestmark = pytest.mark.skipif("native" not in ENGINES, reason="pools are the core's")

if "native" in ENGINES:
    from toolparse._native import NativePool

VOCAB = Vocab([bytes([b]) for b in range(256)])
CALL = b'<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>'


def alone(text: bytes, **options: Any) -> list[Any]:
    parser = StreamParser("hermes", seed=3, **options)
    return merge_deltas(parser.feed(text) + parser.finish())


def test_a_batch_keeps_its_streams_in_one_pool_and_takes_blocks_back() -> None:
    batch = BatchParser("hermes", vocab=VOCAB, seed=3)
    for k in range(40):
        batch.add(k)
    pools = {id(batch.parser(k)._stream.pool) for k in range(40)}  # type: ignore[union-attr]
    assert len(pools) == 1
    pool = batch.parser(0)._stream.pool  # type: ignore[union-attr]
    assert pool is not None and pool.live == 40
    assert pool.block_size > 0 and pool.block_size % 64 == 0 and pool.block_size // 64 % 2 == 1
    for k in range(0, 40, 2):
        batch.cancel(k)
    gc.collect()
    assert pool.live == 20
    for k in range(40, 60):  # the blocks given back are used again
        batch.add(k)
    assert pool.live == 40


def test_streams_in_more_slabs_than_one_parse_as_alone() -> None:
    """More streams than a 2 MiB slab holds, each with its own text, fed together."""
    rng = random.Random(5)
    n = 1200
    texts = [f"Stream {k}: ".encode() * rng.randint(1, 3) + CALL for k in range(n)]
    batch = BatchParser("hermes", vocab=VOCAB, seed=3)
    for k in range(n):
        batch.add(k)
    pool = batch.parser(0)._stream.pool  # type: ignore[union-attr]
    assert pool is not None and pool.live * pool.block_size > 2 << 20
    got: dict[int, list[Any]] = {k: [] for k in range(n)}
    for t in range(max(map(len, texts))):
        step = [k for k in range(n) if t < len(texts[k])]
        for k, events in batch.feed(step, [texts[k][t] for k in step]):
            got[k] += events
    for k in range(n):
        assert merge_deltas(got[k] + batch.finish(k)) == alone(texts[k]), k


def test_a_parser_outlives_its_batch() -> None:
    batch = BatchParser("hermes", vocab=VOCAB, seed=3)
    batch.add("a")
    batch.add("b")
    events: list[Any] = []
    for b in CALL[:40]:
        for request_id, step_events in batch.feed(["a", "b"], [b, b]):
            events += step_events if request_id == "a" else []
    parser = batch.parser("a")
    del batch
    gc.collect()
    events += parser.feed_tokens(list(CALL[40:])) + parser.finish()
    assert merge_deltas(events) == alone(CALL)


def test_reset_keeps_a_parser_in_its_pool() -> None:
    pool = NativePool()
    parser = StreamParser.in_pool(pool, "hermes", seed=3)
    parser.feed(CALL[:30])
    parser.reset()
    gc.collect()
    assert parser._stream.pool is pool and pool.live == 1  # type: ignore[union-attr]
    assert merge_deltas(parser.feed(CALL) + parser.finish()) == alone(CALL)


def test_limits_deeper_than_a_block_holds() -> None:
    """A stream's block holds JSON stacks for the default depth; a deeper limit puts its
    scanners on the heap, and a shallower one keeps them in place."""
    for depth in (40, 512):
        nested = b"[" * (depth - 1) + b"1" + b"]" * (depth - 1)
        for extra in (0, 1):  # at the limit, and one past it
            inner = b"[" * extra + nested + b"]" * extra
            text = b'<tool_call>\n{"name": "f", "arguments": {"x": ' + inner + b"}}\n</tool_call>"
            limits = Limits(max_depth=depth)
            batch = BatchParser("hermes", vocab=VOCAB, seed=3, limits=limits)
            batch.add(0)
            got: list[Any] = []
            for b in text:
                for _, events in batch.feed([0], [b]):
                    got += events
            got += batch.finish(0)
            assert merge_deltas(got) == alone(text, limits=limits)
            errors = got[-1].message.errors
            assert bool(errors) == bool(extra)
            if extra:
                assert isinstance(errors[0], ParseError) and errors[0].kind == "limit"


def first_fixtures() -> list[Any]:
    seen: dict[str, Any] = {}
    for fixture in FIXTURES:
        seen.setdefault(fixture.format, fixture)
    return list(seen.values())


def test_every_format_in_a_pool_sized_for_another() -> None:
    """One pool, its block size learnt from the first format: the formats whose state is
    larger put what does not fit on the heap, and every one parses as alone."""
    pool = NativePool()
    fixtures = first_fixtures()
    parsers = [
        StreamParser.in_pool(pool, f.format, tools=f.tools, seed=7, **f.options) for f in fixtures
    ]
    assert pool.live == len(fixtures)
    for fixture, parser in zip(fixtures, parsers, strict=True):
        got = [e for b in fixture.raw for e in parser.feed(bytes([b]))]
        got += parser.finish(fixture.finish)
        want = fixture.parser("reference", seed=7)
        assert merge_deltas(got) == merge_deltas(
            want.feed(fixture.raw) + want.finish(fixture.finish)
        )
    del parsers, parser
    gc.collect()
    assert pool.live == 0


def test_streams_come_and_go_in_threads() -> None:
    """Streams of one pool made, fed and dropped in several threads at once."""
    pool = NativePool()
    want = alone(CALL)
    errors: list[BaseException] = []

    def churn(seed: int) -> None:
        rng = random.Random(seed)
        try:
            held: list[StreamParser] = []
            for _ in range(150):
                held.append(StreamParser.in_pool(pool, "hermes", seed=3))
                if rng.random() < 0.5:
                    parser = held.pop(rng.randrange(len(held)))
                    assert merge_deltas(parser.feed(CALL) + parser.finish()) == want
        except BaseException as error:  # surfaced in the main thread
            errors.append(error)

    threads = [threading.Thread(target=churn, args=(k,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    gc.collect()
    assert pool.live == 0
