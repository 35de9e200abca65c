"""Streams in several threads at once.  A format's compiled program (and a vocab) is shared
by every stream; each stream is independent.  Feeds of 4 KiB and more run in the core
with the GIL released, so these threads really parse at the same time.  (BatchParser in
threads: tests/core/test_batch.py.)"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from typing import Any

import pytest

from engines import ENGINES, FIXTURES, merge_deltas
from toolparse import StreamParser, Vocab

pytestmark = pytest.mark.skipif("native" not in ENGINES, reason="needs the core")
THREADS = 4
BIG = 1 << 13  # pieces above the size that releases the GIL


def run_in_threads(jobs: list[Callable[[], Any]]) -> list[Any]:
    """Runs the jobs on THREADS threads at once, started together; their results in order."""
    results: list[Any] = [None] * len(jobs)
    errors: list[BaseException] = []
    start = threading.Barrier(THREADS)

    def worker(k: int) -> None:
        try:
            start.wait()
            for j in range(k, len(jobs), THREADS):
                results[j] = jobs[j]()
        except BaseException as error:  # surfaced in the main thread
            errors.append(error)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    return results


def long_outputs() -> list[tuple[str, bytes, Any]]:
    """Fixture outputs padded with long content so each feed is big: (format, bytes, tools)."""
    rng = random.Random(9)
    chosen = [f for f in FIXTURES if not f.options][::7]
    padding = "Some visible text before the answer. " * 400
    out = []
    for fixture in chosen:
        head = padding.encode() if rng.random() < 0.5 else b""
        out.append((fixture.format, head + fixture.raw, fixture.tools))
    return out


def parse_in_pieces(fmt: str, data: bytes, tools: Any, piece: int) -> list[Any]:
    parser = StreamParser(fmt, tools=tools, seed=4)
    events: list[Any] = []
    for at in range(0, len(data), piece):
        events += parser.feed(data[at : at + piece])
    return merge_deltas(events + parser.finish())


def test_streams_of_shared_programs_in_threads() -> None:
    outputs = long_outputs()
    want = [parse_in_pieces(fmt, data, tools, len(data) or 1) for fmt, data, tools in outputs]
    jobs = [
        (lambda f=fmt, d=data, t=tools: parse_in_pieces(f, d, t, BIG))
        for fmt, data, tools in outputs
    ]
    for _ in range(3):
        assert run_in_threads(jobs) == want


def test_one_stream_per_thread_interleaved_feeds() -> None:
    """Threads that each own a stream of the same format feed in turns with no order."""
    text = ("Lorem ipsum dolor sit amet. " * 2000).encode()
    call = b'<tool_call>\n{"name": "f", "arguments": {"a": "' + b"z" * 50_000 + b'"}}\n</tool_call>'
    data = text + call

    def job() -> list[Any]:
        return parse_in_pieces("hermes", data, None, BIG)

    results = run_in_threads([job] * (THREADS * 3))
    assert all(r == results[0] for r in results)
    (end,) = [e for e in results[0] if type(e).__name__ == "ToolCallEnd"]
    assert end.call.arguments == {"a": "z" * 50_000}


def test_token_ids_from_a_shared_vocab_in_threads() -> None:
    vocab = Vocab([bytes([b]) for b in range(256)] + [b"<tool_call>", b"</tool_call>"])
    body = b'\n{"name": "f", "arguments": {"n": 1}}\n'
    ids = [*b"Hello. " * 3000, 256, *body, 257, *b" bye"]

    def job() -> list[Any]:
        parser = StreamParser("hermes", vocab=vocab, seed=2)
        events: list[Any] = []
        for at in range(0, len(ids), BIG):
            events += parser.feed_tokens(ids[at : at + BIG])
        return merge_deltas(events + parser.finish())

    want = job()
    assert run_in_threads([job] * (THREADS * 2)) == [want] * (THREADS * 2)
