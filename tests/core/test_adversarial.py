"""Hostile output: each case asserts what comes out (time and peak memory are measured in
benchmarks/adversarial.py, not here).  Large cases run on the native engine; the
reference engine gets a smaller size of the same shape, and the engines must agree."""

from __future__ import annotations

import random

import pytest

import toolparse
from engines import ENGINES, FIXTURES, merge_deltas, run_events
from toolparse import (
    ContentDelta,
    End,
    Limits,
    ParseError,
    StreamParser,
    ToolCallEnd,
)

native_only = pytest.mark.skipif("native" not in ENGINES, reason="needs the core")
CHUNK = 1 << 16


def feed_all(parser: StreamParser, data: bytes, chunk: int = CHUNK) -> list:
    events: list = []
    for at in range(0, len(data), chunk):
        events += parser.feed(data[at : at + chunk])
    return events + parser.finish()


def limit_names(events: list) -> list[str]:
    return [e.message.split(":")[0] for e in events if isinstance(e, ParseError)]


def call(arguments: str, name: str = "f") -> str:
    return f'<tool_call>\n{{"name": "{name}", "arguments": {arguments}}}\n</tool_call>'


@native_only
def test_a_million_open_brackets() -> None:
    for prefix in (b'<tool_call>\n{"name": "f", "arguments": {"a": ', b""):
        parser = StreamParser("hermes")
        events = feed_all(parser, prefix + b"[" * 10**6)
        assert not any(isinstance(e, ToolCallEnd) for e in events)
        if prefix:
            assert limit_names(events) == ["max_depth"]
        else:  # outside a call it is text
            assert events[-1].message.content == "[" * 10**6
        assert parser.held_bytes == 0


@native_only
def test_a_100_mb_argument_string() -> None:
    head = b'<tool_call>\n{"name": "f", "arguments": {"text": "'
    body = b"x" * (100 << 20)
    parser = StreamParser("hermes")
    events = feed_all(parser, head + body + b'"}}\n</tool_call>', 1 << 20)
    assert limit_names(events) == ["max_argument_bytes"]
    assert parser.held_bytes == 0
    # raised limits take it whole
    big = Limits(max_argument_bytes=101 << 20, max_pending_bytes=102 << 20)
    message = toolparse.parse(head + body[: 10 << 20] + b'"}}\n</tool_call>', "hermes", limits=big)
    (only,) = message.tool_calls
    assert len(only.arguments["text"]) == 10 << 20


@pytest.mark.parametrize(
    ("fmt", "piece"),
    [
        ("hermes", "<tool_c"),
        ("qwen3_coder", "<tool_call>\n<function=f>\n<parameter=a>\nx</parameter"),
        ("deepseek_v3", "<\uff5ctool\u2581"),
        ("deepseek_v31", "<\uff5ctool\u2581calls\u2581beg"),
        ("kimi_k2", "<|tool_calls_section_beg"),
        ("mistral", "[TOOL_CALL"),
        ("gpt_oss", "<|channel|>comment"),
    ],
)
def test_endless_partial_markers(fmt: str, piece: str) -> None:
    """A marker's start over and over never completes it: the text is what it is (content,
    or the value of a call that stays open), never a finished call, and what is held stays
    within the limits (a value that keeps growing meets max_argument_bytes)."""
    count = 20_000
    bound = Limits().max_argument_bytes + Limits().max_pending_bytes + 4096
    for engine in ENGINES:
        parser = StreamParser(fmt, engine=engine)
        data = (piece * (count if engine == "native" else count // 20)).encode()
        events: list = []
        for at in range(0, len(data), 4096):
            events += parser.feed(data[at : at + 4096])
            assert parser.held_bytes <= bound
        events += parser.finish()
        assert isinstance(events[-1], End)
        assert not any(isinstance(e, ToolCallEnd) for e in events)


def test_markers_split_at_every_byte() -> None:
    """Every fixture with a call, cut in two at every byte: the same events (deltas merged)."""
    chosen: dict[str, object] = {}
    for fixture in FIXTURES:
        if not fixture.options and fixture.expected["message"]["tool_calls"]:
            chosen.setdefault(fixture.format, fixture)
    for fixture in chosen.values():
        engines = ENGINES if fixture.format == "hermes" else ENGINES[:1]
        for engine in engines:
            want = merge_deltas(fixture.events(engine, seed=1))
            for cut in range(1, len(fixture.raw)):
                sizes = [cut, len(fixture.raw) - cut]
                assert merge_deltas(fixture.events(engine, sizes, seed=1)) == want, (
                    fixture.id,
                    cut,
                )


INVALID_UTF8 = [
    b"\xff",  # never valid
    b"\xc0\x80",  # overlong NUL
    b"\xe0\x80\xaf",  # overlong '/'
    b"\xf0\x82\x82\xac",  # overlong euro sign
    b"\xed\xa0\x80",  # a surrogate
    b"\xf4\x90\x80\x80",  # above U+10FFFF
    b"\xe2\x82",  # cut short
]


@pytest.mark.parametrize("bad", INVALID_UTF8, ids=[b.hex() for b in INVALID_UTF8])
@pytest.mark.parametrize("engine", ENGINES)
def test_invalid_utf8(engine: str, bad: bytes) -> None:
    # in text: replaced, the rest intact
    message = toolparse.parse(b"ab" + bad + b"cd", "hermes", engine=engine)
    assert message.content is not None
    assert message.content.startswith("ab") and message.content.endswith("cd")
    assert "\ufffd" in message.content
    message.content.encode("utf-8")  # no lone surrogates
    # inside a JSON argument: not a valid call
    raw = call('{"a": "x' + "\x00" + '"}').encode().replace(b"\x00", bad)
    events = run_events(StreamParser("hermes", engine=engine), raw, [1] * len(raw))
    assert not any(isinstance(e, ToolCallEnd) for e in events)
    assert [e.kind for e in events if isinstance(e, ParseError)] == ["invalid_arguments"]
    # in a name: the call is rejected or named with replacement characters, never a crash
    raw = call("{}", name="f\x00").encode().replace(b"\x00", bad)
    for e in run_events(StreamParser("hermes", engine=engine), raw):
        if isinstance(e, ToolCallEnd):
            e.call.name.encode("utf-8")


@pytest.mark.parametrize("engine", ENGINES)
def test_nul_bytes(engine: str) -> None:
    assert toolparse.parse(b"a\x00b", "hermes", engine=engine).content == "a\x00b"
    raw = call('{"a": "x\x00y"}').encode()  # a raw control character in a JSON string
    message = toolparse.parse(raw, "hermes", engine=engine)
    assert message.tool_calls == [] and message.errors[0].kind == "invalid_arguments"
    escaped = toolparse.parse(call('{"a": "x\\u0000y"}'), "hermes", engine=engine)
    assert escaped.tool_calls[0].arguments == {"a": "x\x00y"}


@pytest.mark.parametrize("engine", ENGINES)
def test_a_call_inside_a_string_inside_a_call(engine: str) -> None:
    inner = call('{"b": 1}', name="g").replace('"', '\\"').replace("\n", "\\n")
    outer = call('{"code": "' + inner + '"}')
    message = toolparse.parse(outer + "Done.", "hermes", engine=engine)
    (only,) = message.tool_calls
    assert only.name == "f" and only.arguments["code"] == call('{"b": 1}', name="g")
    assert message.content == "Done."


@native_only
def test_a_hundred_thousand_calls() -> None:
    data = (call('{"i": 1}') * 100_000).encode()
    many = Limits(max_tool_calls=100_000)
    parser = StreamParser("hermes", limits=many)
    events = feed_all(parser, data)
    assert sum(isinstance(e, ToolCallEnd) for e in events) == 100_000
    assert events[-1].message.errors == []
    capped = feed_all(StreamParser("hermes"), data)
    assert sum(isinstance(e, ToolCallEnd) for e in capped) == 256
    assert limit_names(capped) == ["max_tool_calls"]


@native_only
@pytest.mark.parametrize("fmt", sorted(toolparse.FORMATS))
def test_random_bytes(fmt: str) -> None:
    rng = random.Random(fmt)
    data = rng.randbytes(1 << 18) + b"<tool_call>" + rng.randbytes(1 << 16)
    parser = StreamParser(fmt)
    events: list = []
    for at in range(0, len(data), 1000):
        events += parser.feed(data[at : at + 1000])
        assert parser.held_bytes <= (4 << 20)
    events += parser.finish()
    assert isinstance(events[-1], End)
    for e in events:
        if isinstance(e, ContentDelta):
            e.text.encode("utf-8")


def test_engines_agree_on_hostile_shapes() -> None:
    """Small versions of every shape above, both engines, byte by byte and whole."""
    shapes = [
        b'<tool_call>\n{"name": "f", "arguments": {"a": ' + b"[" * 300,
        b"<tool_c" * 200,
        b'<tool_call>\n{"name": "f", "arguments": {"a": "' + b"\xc0\x80" + b'"}}\n</tool_call>',
        call('{"a": "<tool_call>\\"}"}').encode() + b"after",
        (call("{}") * 300).encode(),
        random.Random(1).randbytes(2000),
    ]
    for data in shapes:
        want = merge_deltas(run_events(StreamParser("hermes", engine=ENGINES[-1], seed=1), data))
        for engine in ENGINES:
            for sizes in (None, [1] * len(data)):
                got = run_events(StreamParser("hermes", engine=engine, seed=1), data, sizes)
                assert merge_deltas(got) == want
