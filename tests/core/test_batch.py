"""BatchParser: many streams, one call into the core per decode step.

Every fixture of every format runs as one of many concurrent streams and must give what
the reference engine gives for it alone; then the step's result (BatchEvents), the checks
that refuse a step before anything is fed, and streams in several threads."""

from __future__ import annotations

import array
import random
import threading
from collections import defaultdict
from typing import Any

import pytest

from engines import ENGINES, FIXTURES, Fixture, merge_deltas
from toolparse import (
    BatchParser,
    ContentDelta,
    End,
    StreamParser,
    ToolCallArgsDelta,
    ToolCallEnd,
    ToolCallStart,
    Vocab,
)

pytestmark = pytest.mark.skipif("native" not in ENGINES, reason="BatchParser needs the core")

# Token i < 256 is byte i; the rest are pieces a tokenizer would have.
PIECES = [b"<tool_call>", b"</tool_call>", b'{"name": "', b'", "arguments": ', b"Oslo", b"\n"]
VOCAB = Vocab([bytes([b]) for b in range(256)] + PIECES)
CALL = b'<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>'


def tokenize(data: bytes, rng: random.Random) -> list[int]:
    """data as token ids: a known piece where one starts (mostly), else one byte."""
    ids, at = [], 0
    while at < len(data):
        for k, piece in enumerate(PIECES):
            if data.startswith(piece, at) and rng.random() < 0.8:
                ids.append(256 + k)
                at += len(piece)
                break
        else:
            ids.append(data[at])
            at += 1
    return ids


def groups() -> dict[tuple[str, str], list[Fixture]]:
    """Fixtures that can share a BatchParser: same format and options."""
    by_options: dict[tuple[str, str], list[Fixture]] = defaultdict(list)
    for fixture in FIXTURES:
        by_options[(fixture.format, repr(sorted(fixture.options.items())))].append(fixture)
    return by_options


GROUPS = groups()


@pytest.mark.parametrize("key", list(GROUPS), ids=[f"{f}{o}" for f, o in GROUPS])
def test_every_fixture_as_one_of_many_streams(key: tuple[str, str]) -> None:
    fixtures = GROUPS[key]
    rng = random.Random(key[0])
    first = fixtures[0]
    batch = BatchParser(first.format, vocab=VOCAB, tools=first.tools, seed=7, **first.options)
    tokens = {f.name: tokenize(f.raw, rng) for f in fixtures}
    got: dict[str, list[Any]] = {f.name: [] for f in fixtures}
    for fixture in fixtures:
        batch.add(fixture.name)
    position = dict.fromkeys(tokens, 0)
    while any(position[n] < len(ids) for n, ids in tokens.items()):
        step = [n for n, ids in tokens.items() if position[n] < len(ids) and rng.random() < 0.7]
        rng.shuffle(step)
        ids = [tokens[n][position[n]] for n in step]
        for name in step:
            position[name] += 1
        for name, events in batch.feed(step, ids):
            assert events, "only streams with events come back"
            got[name] += events
    for fixture in fixtures:
        got[fixture.name] += batch.finish(fixture.name, fixture.finish)
        alone = fixture.parser("reference", seed=7)
        want = alone.feed(fixture.raw) + alone.finish(fixture.finish)
        assert merge_deltas(got[fixture.name]) == merge_deltas(want), fixture.id
    assert len(batch) == 0


def hermes_batch(*request_ids: str) -> BatchParser:
    batch = BatchParser("hermes", vocab=VOCAB, seed=3)
    for request_id in request_ids:
        batch.add(request_id)
    return batch


def test_a_step_result_holds_only_streams_with_events() -> None:
    batch = hermes_batch("a", "b", "c")
    batch.feed(["a"], [256])  # "<tool_call>": held back until the call is known
    result = batch.feed(["a", "b", "c"], [ord("\n"), ord("H"), ord("i")])
    assert len(result) == 2
    assert list(result.positions) == [1, 2]
    assert list(result) == [("b", [ContentDelta("H")]), ("c", [ContentDelta("i")])]
    assert result[-1] == result[1] == ("c", [ContentDelta("i")])
    with pytest.raises(IndexError):
        result[2]
    assert len(batch.feed([], [])) == 0
    assert "2 streams" in repr(result)


def test_a_result_stays_readable_after_later_steps() -> None:
    batch = hermes_batch("a")
    held = [batch.feed(["a"], [b]) for b in b"Hello"]
    for _ in range(50):
        batch.feed(["a"], [ord("!")])
    assert [events for r in held for _, events in r] == [[ContentDelta(c)] for c in "Hello"]


def test_calls_reach_the_message_whether_or_not_a_step_is_read() -> None:
    """Call starts and ends change their stream at the step: reading is optional."""
    read, unread = hermes_batch("x"), hermes_batch("x")
    seen: list[Any] = []
    for token in tokenize(CALL, random.Random(0)):
        for _, events in read.feed(["x"], [token]):
            seen += events
        unread.feed(["x"], [token])
    (start,) = [e for e in seen if isinstance(e, ToolCallStart)]
    (end,) = [e for e in seen if isinstance(e, ToolCallEnd)]
    for batch in (read, unread):
        (call,) = batch.message("x").tool_calls
        assert call.arguments == {"city": "Oslo"} and call.id == start.id == end.call.id
    assert unread.finish("x")[-1].message.tool_calls == read.finish("x")[-1].message.tool_calls


def test_reading_a_step_twice_gives_the_same_events() -> None:
    batch = hermes_batch("x")
    results = [batch.feed(["x"], [token]) for token in tokenize(CALL, random.Random(1))]

    def step_with(kind: type) -> Any:
        """The first step with an event of this kind whose events are all text pieces
        (ToolCallArgsDelta) or not."""
        text_only = kind is ToolCallArgsDelta
        return next(
            r
            for r in results
            if any(isinstance(e, kind) for _, es in r for e in es)
            and all(isinstance(e, ToolCallArgsDelta) == text_only for _, es in r for e in es)
        )

    (_, first), (_, again) = step_with(ToolCallEnd)[0], step_with(ToolCallEnd)[0]
    assert first is again  # made once, at the step: the call is recorded once
    (_, text), (_, text_again) = step_with(ToolCallArgsDelta)[0], step_with(ToolCallArgsDelta)[0]
    assert text == text_again and text is not text_again  # text pieces are made on reading


@pytest.mark.parametrize(
    ("slots", "tokens", "message"),
    [
        ([0, 0], [72, 72], "slot 0 is given twice"),
        ([0, 5], [72, 72], "no stream in slot 5"),
        ([0, 1], [72, 9999], "token id 9999 is not in the vocab"),
        ([0, 1], [72], "2 slots but 1 tokens"),
    ],
)
def test_a_bad_step_feeds_no_stream(slots: list[int], tokens: list[int], message: str) -> None:
    batch = hermes_batch("a", "b")
    with pytest.raises(ValueError, match=message):
        batch.feed_slots(slots, tokens)
    for request_id in ("a", "b"):  # nothing was fed: the next token is the first
        assert batch.finish(request_id)[-1].message.content is None


def test_slots_are_reused_and_requests_checked() -> None:
    batch = hermes_batch("a", "b")
    assert (batch.slot("a"), batch.slot("b")) == (0, 1)
    with pytest.raises(ValueError, match="already"):
        batch.add("a")
    with pytest.raises(KeyError, match="zzz"):
        batch.feed(["zzz"], [1])
    batch.cancel("a")
    assert "a" not in batch and batch.add("c") == 0
    with pytest.raises(ValueError, match="no stream in slot 7"):
        batch.feed_slots([7], [1])


def test_a_finished_stream_refuses_tokens() -> None:
    batch = hermes_batch("a", "b")
    batch.parser("a").finish()
    with pytest.raises(ValueError, match="slot 0 was already finished"):
        batch.feed(["b", "a"], [72, 72])
    assert batch.finish("b")[-1].message.content is None


def test_cancel_one_stream_leaves_the_others() -> None:
    batch = hermes_batch("x", "y")
    ids = tokenize(CALL, random.Random(2))
    half = len(ids) // 2
    for token in ids[:half]:
        batch.feed(["x", "y"], [token, token])
    cancelled = batch.cancel("x")
    assert cancelled[-1].message.finish_reason == "cancelled"
    assert cancelled[-1].message.tool_calls == []
    for token in ids[half:]:
        batch.feed(["y"], [token])
    (call,) = batch.finish("y")[-1].message.tool_calls
    assert call.arguments == {"city": "Oslo"}


def test_a_parser_reset_in_a_batch_is_what_the_batch_feeds() -> None:
    """reset() on a batch's parser starts its request over: the batch feeds the new
    stream, and a parser of a removed request no longer reaches the slot's next owner."""
    batch = hermes_batch("a", "b")
    for token in b"Some text first. ":
        batch.feed(["a", "b"], [token, token])
    batch.parser("a").reset()
    for token in tokenize(CALL, random.Random(3)):
        batch.feed(["a"], [token])
    message = batch.finish("a")[-1].message
    assert message.content is None
    (call,) = message.tool_calls
    assert call.arguments == {"city": "Oslo"}
    removed = batch.parser("b")
    batch.remove("b")
    batch.add("c")
    assert batch.slot("c") in (0, 1)
    removed.reset()  # its own new stream; c's slot stays c's
    for token in b"hello":
        batch.feed(["c"], [token])
    assert batch.finish("c")[-1].message.content == "hello"
    assert removed.finish()[-1].message.content is None


def test_any_integer_buffer_is_a_step() -> None:
    numpy = pytest.importorskip("numpy")
    batch = hermes_batch("a", "b", "c")
    text = {0: b"abc", 1: b"def", 2: b"ghi"}
    for k in range(3):
        slots = numpy.arange(6, dtype=numpy.int64)[::2] // 2  # not contiguous, not uint32
        tokens = array.array("I", [text[s][k] for s in range(3)])
        assert len(batch.feed_slots(slots, tokens)) == 3
    for s, request_id in enumerate("abc"):
        assert batch.finish(request_id)[-1].message.content == text[s].decode()


def test_streams_in_threads_match_streams_alone() -> None:
    """Batches in several threads at once (each feeds with the GIL released) and plain
    streams alongside give what each stream gives alone."""
    rng = random.Random(4)
    texts = [b"Let me check. " * rng.randint(1, 30) + CALL for _ in range(48)]
    streams = [tokenize(t, rng) for t in texts]
    want = []
    for text in texts:
        alone = StreamParser("hermes", seed=3)
        want.append(merge_deltas(alone.feed(text) + alone.finish()))
    got: dict[int, list[Any]] = defaultdict(list)
    errors: list[BaseException] = []

    def drive(members: list[int]) -> None:
        try:
            batch = hermes_batch(*map(str, members))
            longest = max(len(streams[m]) for m in members)
            for t in range(longest):
                step = [m for m in members if t < len(streams[m])]
                for name, events in batch.feed(
                    [str(m) for m in step], [streams[m][t] for m in step]
                ):
                    got[int(name)] += events
            for m in members:
                got[m] += batch.finish(str(m))
        except BaseException as error:  # surfaced in the main thread
            errors.append(error)

    threads = [threading.Thread(target=drive, args=(list(range(k, 48, 4)),)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    for k in range(48):
        assert merge_deltas(got[k]) == want[k]
        assert isinstance(got[k][-1], End)
