"""Resource limits (toolparse.Limits): each one, on both engines and at every chunking.

A limit met ends the parse with one ParseError(kind="limit") whose message starts with the
limit's name; nothing is emitted after it, later input is ignored, the memory held for
undecided input and the open call is given back, and finish() still gives the message.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

import toolparse
from engines import ENGINES, FIXTURES, Fixture, merge_deltas, random_sizes, run_events
from toolparse import (
    BatchParser,
    ContentDelta,
    End,
    Limits,
    ParseError,
    StreamParser,
    ToolCallArgsDelta,
    ToolCallEnd,
    Vocab,
)
from toolparse.stream import native_program

by_engine = pytest.mark.parametrize("engine", ENGINES)


def call(arguments: str, name: str = "f") -> str:
    return f'<tool_call>\n{{"name": "{name}", "arguments": {arguments}}}\n</tool_call>'


def parse_events(
    data: str | bytes, engine: str, limits: Limits, fmt: str = "hermes", sizes: Any = None
) -> list[Any]:
    raw = data.encode() if isinstance(data, str) else data
    return run_events(StreamParser(fmt, engine=engine, limits=limits, seed=1), raw, sizes)


def the_limit_error(events: list[Any]) -> ParseError:
    errors = [e for e in events if isinstance(e, ParseError)]
    assert len(errors) == 1, errors
    assert errors[0].kind == "limit"
    assert events[-1].message.errors == errors
    return errors[0]


def chunkings(length: int) -> list[Any]:
    return [None, [1] * length, random_sizes(3, length), random_sizes(4, length, 300)]


def same_at_every_chunking(data: str, limits: Limits, fmt: str = "hermes") -> list[Any]:
    """The events, which must be the same (deltas merged) on both engines at any chunking."""
    raw = data.encode()
    want = merge_deltas(parse_events(raw, ENGINES[-1], limits, fmt))
    for engine in ENGINES:
        for sizes in chunkings(len(raw)):
            got = merge_deltas(parse_events(raw, engine, limits, fmt, sizes))
            assert got == want, (engine, sizes and sizes[:8])
    return want


# --- each limit --------------------------------------------------------------------------------


def test_depth() -> None:
    limits = Limits(max_depth=8)
    nested = '{"a": ' + "[" * 7 + "]" * 7 + "}"  # the object and 7 arrays: 8 levels
    ok = same_at_every_chunking(call(nested) + "After.", limits)
    assert ok[-1].message.tool_calls[0].arguments == {"a": [[[[[[[]]]]]]]}
    deeper = '{"a": ' + "[" * 8 + "]" * 8 + "}"
    events = same_at_every_chunking("Before. " + call(deeper) + "After.", limits)
    error = the_limit_error(events)
    assert error.message == "max_depth: the arguments nest deeper than 8 levels"
    assert error.index == 0 and not any(isinstance(e, ToolCallEnd) for e in events)
    assert events[-1].message.content == "Before. "  # nothing after the limit


def test_argument_bytes_stream_what_fits() -> None:
    limits = Limits(max_argument_bytes=20)
    events = same_at_every_chunking(call('{"a": "0123456789abcdefghijklmnop"}') + "After.", limits)
    error = the_limit_error(events)
    assert error.message.startswith("max_argument_bytes:") and "20 bytes" in error.message
    (delta,) = [e for e in events if isinstance(e, ToolCallArgsDelta)]
    assert delta.text == '{"a": "0123456789abc'  # exactly 20 bytes
    assert events[-1].message.tool_calls == [] and events[-1].message.content is None


def test_argument_bytes_cut_between_characters() -> None:
    """The part that fits ends on a whole character (3-byte characters, 20-byte limit)."""
    events = same_at_every_chunking(call('{"a": "€€€€€€€€"}'), Limits(max_argument_bytes=20))
    (delta,) = [e for e in events if isinstance(e, ToolCallArgsDelta)]
    assert delta.text == '{"a": "€€€€' and len(delta.text.encode()) == 19
    the_limit_error(events)


def test_argument_bytes_bound_xml_parameters_and_names() -> None:
    limits = Limits(max_argument_bytes=32)
    value = (
        "<tool_call>\n<function=f>\n<parameter=a>\n"
        + "x" * 40
        + "\n</parameter>\n</function>\n</tool_call>"
    )
    events = same_at_every_chunking(value, limits, "qwen3_coder")
    assert the_limit_error(events).message.startswith("max_argument_bytes:")
    long_name = same_at_every_chunking(call("{}", name="n" * 40), limits)
    error = the_limit_error(long_name)
    assert error.message.startswith("max_argument_bytes:") and error.index is None


def test_tool_calls() -> None:
    events = same_at_every_chunking(call("{}") * 3 + "After.", Limits(max_tool_calls=2))
    assert [e.call.index for e in events if isinstance(e, ToolCallEnd)] == [0, 1]
    error = the_limit_error(events)
    assert error.message == "max_tool_calls: more than 2 tool calls in one message"
    assert len(events[-1].message.tool_calls) == 2


def test_pending_bytes_open_alternative() -> None:
    """A bare JSON object (llama3_json) is a call or text: undecided until its name has
    been read, so a long name keeps it open past the limit, and none of it is emitted."""
    data = '{"type": "function", "name": "' + "f" * 100 + '", "parameters": {}}'
    limits = Limits(max_pending_bytes=64)
    events = same_at_every_chunking(data, limits, "llama3_json")
    error = the_limit_error(events)
    assert error.message.startswith("max_pending_bytes:") and error.offset == 0
    assert not any(isinstance(e, ContentDelta) for e in events)
    fine = same_at_every_chunking(data, Limits(max_pending_bytes=4096), "llama3_json")
    assert [c.name for c in fine[-1].message.tool_calls] == ["f" * 100]


def test_pending_bytes_whitespace_after_a_marker() -> None:
    """`</parameter>` counts as the end of a value only before the next tag: whitespace
    after it is held, up to the limit, and checked once (not again on every feed)."""
    head = "<tool_call>\n<function=f>\n<parameter=a>\nxyz</parameter>"
    tail = "<parameter=b>\ny</parameter>\n</function>\n</tool_call>"
    limits = Limits(max_pending_bytes=100)
    ok = same_at_every_chunking(head + " " * 99 + "\n" + tail, limits, "qwen3_coder")
    assert ok[-1].message.tool_calls[0].arguments == {"a": "xyz", "b": "y"}
    events = same_at_every_chunking(head + " " * 100 + "\n" + tail, limits, "qwen3_coder")
    assert the_limit_error(events).message.startswith("max_pending_bytes:")
    assert [e.text for e in events if isinstance(e, ToolCallArgsDelta)] == ['{"a": "xyz']


def test_stream_bytes() -> None:
    data = "Hello there. " + call('{"a": 1}') + " More text."
    cut = len("Hello there. ") + 10
    events = same_at_every_chunking(data, Limits(max_stream_bytes=cut))
    error = the_limit_error(events)
    assert error.message == f"max_stream_bytes: the output exceeds {cut} bytes"
    assert error.offset == cut
    assert events[-1].message.content == "Hello there. "
    whole = same_at_every_chunking(data, Limits(max_stream_bytes=len(data.encode())))
    assert whole[-1].message.errors == []  # exactly at the limit is within it


def test_no_stream_limit_by_default() -> None:
    assert Limits().max_stream_bytes is None
    message = toolparse.parse("x" * 3_000_000, "hermes")
    assert message.errors == [] and len(message.content or "") == 3_000_000


# --- after a limit -------------------------------------------------------------------------


@by_engine
def test_after_a_limit_input_is_ignored_and_memory_given_back(engine: str) -> None:
    parser = StreamParser("hermes", engine=engine, limits=Limits(max_argument_bytes=1000))
    events = parser.feed('Hi <tool_call>\n{"name": "f", "arguments": {"a": "')
    assert parser.held_bytes > 0
    events += parser.feed("y" * 5000)
    assert [e.kind for e in events if isinstance(e, ParseError)] == ["limit"]
    assert parser.held_bytes == 0
    assert parser.feed("more " * 1000) == []
    assert parser.feed(call('{"b": 2}')) == []
    assert parser.held_bytes == 0
    (end,) = parser.finish()
    assert isinstance(end, End)
    assert end.message.content == "Hi " and end.message.tool_calls == []
    assert end.message.finish_reason == "stop"


@by_engine
def test_held_bytes_stay_within_the_limits(engine: str) -> None:
    limits = Limits(max_argument_bytes=4096, max_pending_bytes=4096)
    rng = random.Random(5)
    data = ("text " * 50 + call('{"a": "' + "z" * 3000 + '"}')) * 4 + '{"name"' + " " * 5000
    parser = StreamParser("hermes", engine=engine, limits=limits)
    at = 0
    while at < len(data):
        size = rng.randint(1, 64)
        parser.feed(data[at : at + size])
        at += size
        assert parser.held_bytes <= limits.max_argument_bytes + limits.max_pending_bytes + 64


@by_engine
def test_held_bytes_count_the_arguments_at_any_chunking(engine: str) -> None:
    """The open call's arguments count as held however they came: the C event builder
    keeps small pieces back before writing them to the call (emit.c)."""
    opening = 'Hi <tool_call>\n{"name": "f", "arguments": {"a": "'
    held = []
    for size in (1, 3, 33, 40, 1000):
        parser = StreamParser("hermes", engine=engine)
        parser.feed(opening)
        value = "v" * 100
        for at in range(0, len(value), size):
            parser.feed(value[at : at + size])
        held.append(parser.held_bytes)
    assert len(set(held)) == 1 and held[0] >= len('{"a": "') + 100


# --- the options ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "options",
    [
        {"max_depth": 0},
        {"max_depth": 513},  # deeper arguments than json.loads can build under Python's limit
        {"max_depth": (1 << 20) + 1},
        {"max_argument_bytes": 0},
        {"max_pending_bytes": -1},
        {"max_tool_calls": 1.5},
        {"max_stream_bytes": 0},
        {"max_tool_calls": True},
    ],
)
def test_bad_limits_are_refused(options: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match=next(iter(options))):
        Limits(**options)


def test_limits_reach_parse_and_batches() -> None:
    limits = Limits(max_tool_calls=1)
    message = toolparse.parse(call("{}") * 2, "hermes", limits=limits)
    assert len(message.tool_calls) == 1 and message.errors[0].kind == "limit"
    batch = BatchParser("hermes", vocab=Vocab([bytes([b]) for b in range(256)]), limits=limits)
    batch.add("r")
    for byte in (call("{}") * 2).encode():
        batch.feed(["r"], [byte])
    end = batch.finish("r")[-1]
    assert len(end.message.tool_calls) == 1 and end.message.errors[0].kind == "limit"


def test_the_defaults() -> None:
    limits = Limits()
    assert (limits.max_depth, limits.max_argument_bytes, limits.max_pending_bytes) == (
        128,
        1 << 20,
        2 << 20,
    )
    assert limits.max_tool_calls == 256
    deep = '{"a": ' + "[" * 128 + "]" * 128 + "}"
    for engine in ENGINES:
        error = the_limit_error(parse_events(call(deep), engine, limits))
        assert error.message.startswith("max_depth:")


def test_the_deepest_limit_holds_on_both_engines() -> None:
    """Arguments as deep as the deepest limit allows are a call on both engines (the
    native check of a whole call once stopped at its own default depth, 512, below the
    machine's); one level more is the limit."""
    limits = Limits(max_depth=512)
    for depth, is_call in ((511, True), (512, True), (513, False)):
        deep = "[" * (depth - 1) + "]" * (depth - 1)
        for engine in ENGINES:
            events = parse_events(call('{"a": ' + deep + "}"), engine, limits)
            message = events[-1].message
            assert bool(message.tool_calls) == is_call, (depth, engine)
            if not is_call:
                assert the_limit_error(events).message.startswith("max_depth:")


@pytest.mark.skipif("native" not in ENGINES, reason="the C core's own ceiling")
def test_the_core_takes_a_deeper_limit_than_python() -> None:
    """Through the C API a limit past 512 holds for the whole call too."""
    from types import SimpleNamespace

    from toolparse._native import NativeStream
    from toolparse.formats import get_format

    limits = SimpleNamespace(**{**vars(Limits()), "max_depth": 800})
    stream = NativeStream(
        native_program(get_format("hermes")), "start", None, lambda: "id", False, limits
    )
    deep = "[" * 700 + "]" * 700
    stream.feed(call('{"a": ' + deep + "}"))
    stream.finish()
    assert len(stream.tool_calls) == 1 and not stream.errors


# --- every fixture under tight limits ---------------------------------------------------------

TIGHT = {
    "depth": Limits(max_depth=2),
    "arguments": Limits(max_argument_bytes=12),
    "pending": Limits(max_pending_bytes=24),
    "calls": Limits(max_tool_calls=1),
}
PLAIN = [f for f in FIXTURES if not f.options]


@pytest.mark.parametrize("name", [*TIGHT, "stream"])
@pytest.mark.parametrize("fixture", PLAIN, ids=[f.id for f in PLAIN])
def test_fixtures_under_tight_limits_agree_at_any_chunking(fixture: Fixture, name: str) -> None:
    """Whatever a fixture's output meets, both engines and all chunkings agree."""
    limits = TIGHT.get(name) or Limits(max_stream_bytes=max(1, len(fixture.raw) // 2))
    want = merge_deltas(fixture.events("reference", limits=limits, seed=1))
    runs = [("native", None), ("native", [1] * len(fixture.raw))]
    runs += [(engine, random_sizes(7, len(fixture.raw))) for engine in ENGINES]
    for engine, sizes in runs:
        got = fixture.events(engine, sizes, limits=limits, seed=1)
        assert merge_deltas(got) == want, engine
    limit_errors = [e for e in want if isinstance(e, ParseError) and e.kind == "limit"]
    assert len(limit_errors) <= 1
    if limit_errors:  # it is the last thing before End
        assert want[-2] is limit_errors[0] or want[-2] == limit_errors[0]
