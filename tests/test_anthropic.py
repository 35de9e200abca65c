"""Anthropic Messages shapes: message_to_anthropic, the streaming encoder, and the official
SDK's own accumulation of the events (skipped when the anthropic package is missing)."""

from __future__ import annotations

import hashlib
import hmac
import inspect
import json
import sys
from collections.abc import Sequence
from functools import cache
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engines import ENGINES, FIXTURE_IDS, FIXTURES, Fixture, random_sizes
from helpers import MODEST
from toolparse import (
    ContentDelta,
    End,
    Message,
    ParseError,
    ReasoningDelta,
    ToolCall,
    ToolCallArgsDelta,
    ToolCallEnd,
    ToolCallStart,
)
from toolparse.wire.anthropic import (
    STOP_REASONS,
    AnthropicStreamEncoder,
    message_to_anthropic,
    response_to_anthropic,
    sse,
    stop_reason,
)

try:  # the SDK is an optional test dependency
    import anthropic
    import pydantic
except ImportError:
    anthropic = None
try:  # the SDK's own stream accumulator (what MessageStream runs on each event)
    from anthropic.lib.streaming._messages import accumulate_event
except ImportError:
    accumulate_event = None

needs_sdk = pytest.mark.skipif(
    anthropic is None,
    reason="the anthropic SDK is not installed (pip install anthropic): it checks the shapes",
)
needs_accumulator = pytest.mark.skipif(
    accumulate_event is None,
    reason="anthropic.lib.streaming._messages.accumulate_event is not importable "
    "(no anthropic SDK, or one that moved it)",
)
by_fixture = pytest.mark.parametrize("fixture", FIXTURES, ids=FIXTURE_IDS)

ENGINE = ENGINES[0]
MODEL = "toolparse-test-model"


def call(index: int, name: str, arguments: dict[str, Any], id: str | None = None) -> ToolCall:
    return ToolCall(index, id or f"call_{index}", name, arguments, json.dumps(arguments))


WEATHER = call(0, "get_weather", {"city": "Oslo", "days": [1, 2], "hourly": None})
TIME = call(1, "get_time", {})


def fixture_events(fixture: Fixture, sizes: Sequence[int] | None = None) -> list[Any]:
    if sizes is None:
        sizes = [3] * (len(fixture.raw) // 3)  # a streamed response, not one piece
    return fixture.events(ENGINE, sizes, seed=0)  # the same ids on every run


def encode(events: Sequence[Any], **options: Any) -> list[dict[str, Any]]:
    return AnthropicStreamEncoder(model=MODEL, **options).encode_all(events)


def check_sequence(out: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Checks the event grammar of a Messages stream and rebuilds its content blocks:
    message_start, then blocks (start, deltas of the block's type, stop) with indexes
    0, 1, 2, ..., then message_delta and message_stop."""
    assert out[0]["type"] == "message_start"
    assert out[0]["message"]["content"] == []
    assert out[0]["message"]["stop_reason"] is None
    assert [e["type"] for e in out[-2:]] == ["message_delta", "message_stop"]
    assert out[-2]["delta"]["stop_reason"] in STOP_REASONS
    blocks: list[dict[str, Any]] = []
    open_block: dict[str, Any] | None = None
    partial_json = ""
    allowed = {"text": {"text_delta"}, "thinking": {"thinking_delta", "signature_delta"}}
    allowed["tool_use"] = {"input_json_delta"}
    for event in out[1:-2]:
        kind = event["type"]
        if kind == "content_block_start":
            assert open_block is None, "a block started before the previous one stopped"
            assert event["index"] == len(blocks)
            open_block = json.loads(json.dumps(event["content_block"]))
            partial_json = ""
        elif kind == "content_block_delta":
            assert open_block is not None and event["index"] == len(blocks)
            delta = event["delta"]
            assert delta["type"] in allowed[open_block["type"]]
            if delta["type"] == "text_delta":
                open_block["text"] += delta["text"]
            elif delta["type"] == "thinking_delta":
                open_block["thinking"] += delta["thinking"]
            elif delta["type"] == "signature_delta":
                open_block["signature"] = delta["signature"]
            else:
                partial_json += delta["partial_json"]
        else:
            assert kind == "content_block_stop", kind
            assert open_block is not None and event["index"] == len(blocks)
            if open_block["type"] == "tool_use":
                open_block["input"] = json.loads(partial_json)
            blocks.append(open_block)
            open_block = None
    assert open_block is None
    return blocks


# --- message_to_anthropic ---------------------------------------------------------------


def test_message_to_anthropic_gives_thinking_text_and_tool_use_blocks() -> None:
    message = Message(
        content="Checking.",
        reasoning_content="Need the weather and the time.",
        tool_calls=[WEATHER, TIME],
        finish_reason="tool_calls",
    )
    assert message_to_anthropic(message) == {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "Need the weather and the time.", "signature": ""},
            {"type": "text", "text": "Checking."},
            {
                "type": "tool_use",
                "id": "call_0",
                "name": "get_weather",
                "input": {"city": "Oslo", "days": [1, 2], "hourly": None},
            },
            {"type": "tool_use", "id": "call_1", "name": "get_time", "input": {}},
        ],
    }


def test_message_to_anthropic_leaves_out_empty_parts_and_errors() -> None:
    error = ParseError("incomplete", "cut off", 0, 12)
    empty = Message(content=None, reasoning_content="", errors=[error], finish_reason="length")
    assert message_to_anthropic(empty) == {"role": "assistant", "content": []}
    reasoning_only = Message(reasoning_content="hmm")
    assert message_to_anthropic(reasoning_only, thinking=False)["content"] == []


def test_tool_use_input_is_a_copy_of_the_arguments() -> None:
    block = message_to_anthropic(Message(tool_calls=[WEATHER]))["content"][0]
    block["input"]["days"].append(3)
    assert WEATHER.arguments["days"] == [1, 2]


def test_sign_makes_the_thinking_signature() -> None:
    def sign(text: str) -> str:
        return hmac.new(b"server key", text.encode(), hashlib.sha256).hexdigest()

    message = Message(content="Hi.", reasoning_content="Greet back.")
    block = message_to_anthropic(message, sign=sign)["content"][0]
    assert block == {
        "type": "thinking",
        "thinking": "Greet back.",
        "signature": sign("Greet back."),
    }
    events = [ReasoningDelta("Greet "), ReasoningDelta("back."), ContentDelta("Hi.")]
    out = encode([*events, End("stop", message)], sign=sign)
    deltas = [e["delta"]["type"] for e in out if e["type"] == "content_block_delta"]
    # As the Messages API sends it: the signature just before the thinking block stops.
    assert deltas == ["thinking_delta", "thinking_delta", "signature_delta", "text_delta"]
    assert check_sequence(out) == message_to_anthropic(message, sign=sign)["content"]


@pytest.mark.parametrize(
    ("finish_reason", "has_calls", "expected"),
    [
        ("stop", False, "end_turn"),
        ("stop", True, "tool_use"),
        ("tool_calls", True, "tool_use"),
        ("length", False, "max_tokens"),
        ("length", True, "max_tokens"),
        ("content_filter", False, "refusal"),
        ("end_turn", True, "tool_use"),
        ("stop_sequence", False, "stop_sequence"),
        ("pause_turn", False, "pause_turn"),
        ("abort", False, "end_turn"),
        (None, True, "tool_use"),
    ],
)
def test_stop_reason(finish_reason: str | None, has_calls: bool, expected: str) -> None:
    assert stop_reason(finish_reason, has_calls) == expected


def test_response_to_anthropic_is_a_whole_message_object() -> None:
    message = Message(content="Done.", tool_calls=[TIME], finish_reason="tool_calls")
    body = response_to_anthropic(
        message, model=MODEL, message_id="msg_1", input_tokens=12, output_tokens=7
    )
    assert body == {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": message_to_anthropic(message)["content"],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": 12, "output_tokens": 7},
    }
    assert response_to_anthropic(message, model=MODEL)["id"].startswith("msg_")


# --- the streaming encoder --------------------------------------------------------------


def test_stream_of_a_response_with_reasoning_text_and_a_call() -> None:
    message = Message(
        content="Let me look.",
        reasoning_content="Weather.",
        tool_calls=[WEATHER],
        finish_reason="tool_calls",
    )
    events = [
        ReasoningDelta("Weath"),
        ReasoningDelta("er."),
        ContentDelta("Let me look."),
        ToolCallStart(0, "call_0", "get_weather"),
        ToolCallArgsDelta(0, WEATHER.arguments_json[:5]),
        ToolCallArgsDelta(0, WEATHER.arguments_json[5:]),
        ToolCallEnd(0, WEATHER),
        End("stop", message),
    ]
    encoder = AnthropicStreamEncoder(model=MODEL, message_id="msg_x", input_tokens=30)
    out = encoder.encode_all(events[:-1])
    encoder.output_tokens = 21
    out += encoder.encode(events[-1])
    assert out == [
        {
            "type": "message_start",
            "message": {
                "id": "msg_x",
                "type": "message",
                "role": "assistant",
                "model": MODEL,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 30, "output_tokens": 0},
            },
        },
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "thinking", "thinking": "", "signature": ""},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "thinking_delta", "thinking": "Weath"},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "thinking_delta", "thinking": "er."},
        },
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}},
        {
            "type": "content_block_delta",
            "index": 1,
            "delta": {"type": "text_delta", "text": "Let me look."},
        },
        {"type": "content_block_stop", "index": 1},
        {
            "type": "content_block_start",
            "index": 2,
            "content_block": {
                "type": "tool_use",
                "id": "call_0",
                "name": "get_weather",
                "input": {},
            },
        },
        {
            "type": "content_block_delta",
            "index": 2,
            "delta": {"type": "input_json_delta", "partial_json": WEATHER.arguments_json},
        },
        {"type": "content_block_stop", "index": 2},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use", "stop_sequence": None},
            "usage": {"output_tokens": 21},
        },
        {"type": "message_stop"},
    ]
    assert check_sequence(out) == message_to_anthropic(message)["content"]


@pytest.mark.parametrize("tool_use", ["at_end", "as_completed"])
def test_a_call_that_never_ends_reaches_no_client(tool_use: str) -> None:
    message = Message(
        content="Trying.", errors=[ParseError("incomplete", "cut", 0, 40)], finish_reason="length"
    )
    events = [
        ContentDelta("Trying."),
        ToolCallStart(0, "call_0", "get_weather"),
        ToolCallArgsDelta(0, '{"city": "Os'),
        ParseError("incomplete", "cut", 0, 40),
        End("length", message),
    ]
    out = encode(events, tool_use=tool_use)
    assert "tool_use" not in json.dumps(out)
    assert check_sequence(out) == [{"type": "text", "text": "Trying."}]
    assert out[-2]["delta"]["stop_reason"] == "max_tokens"


def test_nothing_of_a_call_is_sent_before_its_end() -> None:
    encoder = AnthropicStreamEncoder(model=MODEL, tool_use="as_completed")
    assert encoder.start()[0]["type"] == "message_start"
    assert encoder.encode(ToolCallStart(0, "call_0", "get_weather")) == []
    assert encoder.encode(ToolCallArgsDelta(0, WEATHER.arguments_json)) == []
    sent = encoder.encode(ToolCallEnd(0, WEATHER))
    assert [e["type"] for e in sent] == [
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
    ]


def test_at_end_holds_calls_until_end_and_keeps_text_in_one_block() -> None:
    message = Message(content="Checking. Back soon.", tool_calls=[TIME], finish_reason="tool_calls")
    events = [
        ContentDelta("Checking. "),
        ToolCallEnd(1, TIME),
        ContentDelta("Back soon."),
        End("stop", message),
    ]
    encoder = AnthropicStreamEncoder(model=MODEL)
    assert "tool_use" not in json.dumps(encoder.encode_all(events[:-1]))
    assert check_sequence(encode(events)) == message_to_anthropic(message)["content"]
    # As completed, the call goes out at once and the text after it is a block of its own.
    assert check_sequence(encode(events, tool_use="as_completed")) == [
        {"type": "text", "text": "Checking. "},
        {"type": "tool_use", "id": "call_1", "name": "get_time", "input": {}},
        {"type": "text", "text": "Back soon."},
    ]


def test_encoder_edges() -> None:
    encoder = AnthropicStreamEncoder(model=MODEL)
    start = encoder.start()
    assert encoder.start() == []
    assert encoder.encode(ContentDelta("")) == []  # an empty delta opens no block
    end = encoder.encode(End("stop", Message(finish_reason="stop")))
    assert encoder.done
    assert check_sequence(start + end) == []
    assert end[0]["delta"]["stop_reason"] == "end_turn"
    with pytest.raises(RuntimeError):
        encoder.encode(ContentDelta("late"))
    with pytest.raises(ValueError):
        AnthropicStreamEncoder(model=MODEL, tool_use="later")  # type: ignore[arg-type]
    # No message_start twice: the first encode() begins with it when start() was not called.
    first = AnthropicStreamEncoder(model=MODEL).encode(ContentDelta("Hi"))
    assert [e["type"] for e in first] == [
        "message_start",
        "content_block_start",
        "content_block_delta",
    ]
    without = encode(
        [ReasoningDelta("hmm"), ContentDelta("Hi"), End("stop", Message())], thinking=False
    )
    assert check_sequence(without) == [{"type": "text", "text": "Hi"}]


def test_sse_framing() -> None:
    event = {
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "text_delta", "text": "é\n"},
    }
    text = sse(event)
    assert text.endswith("\n\n")
    name, data = text[:-2].split("\n")
    assert name == "event: content_block_delta"
    assert json.loads(data.removeprefix("data: ")) == event


# --- every fixture ----------------------------------------------------------------------


@by_fixture
def test_fixture_stream_rebuilds_message_to_anthropic(fixture: Fixture) -> None:
    events = fixture_events(fixture)
    message = events[-1].message
    out = encode(events)
    assert check_sequence(out) == message_to_anthropic(message)["content"]
    expected_reason = stop_reason(message.finish_reason, bool(message.tool_calls))
    assert out[-2]["delta"]["stop_reason"] == expected_reason
    # Any chunking: the same blocks.
    for seed in range(2):
        sizes = random_sizes(seed, len(fixture.raw))
        assert check_sequence(encode(fixture_events(fixture, sizes))) == check_sequence(out)


def text_or_reasoning_after_a_call(events: Sequence[Any]) -> bool:
    ended = False
    for event in events:
        ended = ended or isinstance(event, ToolCallEnd)
        if ended and isinstance(event, ContentDelta | ReasoningDelta) and event.text:
            return True
    return False


@by_fixture
def test_fixture_stream_as_completed(fixture: Fixture) -> None:
    events = fixture_events(fixture)
    message = events[-1].message
    blocks = check_sequence(encode(events, tool_use="as_completed"))
    expected = message_to_anthropic(message)["content"]
    if not text_or_reasoning_after_a_call(events):
        assert blocks == expected
    else:
        assert [b for b in blocks if b["type"] == "tool_use"] == [
            b for b in expected if b["type"] == "tool_use"
        ]
        assert "".join(b["text"] for b in blocks if b["type"] == "text") == message.content


# --- the official SDK -------------------------------------------------------------------


@cache
def adapter(kind: Any) -> Any:
    return pydantic.TypeAdapter(kind)


def sdk_accumulate(out: Sequence[dict[str, Any]]) -> Any:
    """The SDK's own accumulation of the events, each first validated against the SDK's
    event types (every required field, every literal)."""
    events = adapter(anthropic.types.RawMessageStreamEvent)
    extra: dict[str, Any] = {}
    if "json_bufs" in inspect.signature(accumulate_event).parameters:
        extra["json_bufs"] = {}
    snapshot = None
    for event in out:
        snapshot = accumulate_event(
            event=events.validate_python(event), current_snapshot=snapshot, **extra
        )
    return snapshot


def rebuilt(snapshot: Any) -> dict[str, Any]:
    """The assistant message the SDK rebuilt, without the optional fields it leaves null
    (such as a text block's citations)."""
    blocks = [
        {key: value for key, value in block.to_dict().items() if value is not None}
        for block in snapshot.content
    ]
    return {"role": snapshot.role, "content": blocks}


@needs_accumulator
@by_fixture
def test_sdk_accumulates_fixture_stream_into_message_to_anthropic(fixture: Fixture) -> None:
    events = fixture_events(fixture)
    message = events[-1].message
    encoder = AnthropicStreamEncoder(model=MODEL, input_tokens=5)
    encoder.output_tokens = 9
    snapshot = sdk_accumulate(encoder.encode_all(events))
    expected = message_to_anthropic(message)
    assert rebuilt(snapshot) == expected
    body = response_to_anthropic(
        message, model=MODEL, message_id=encoder.message_id, input_tokens=5, output_tokens=9
    )
    dumped = {**snapshot.to_dict(), **rebuilt(snapshot)}
    assert {key: dumped[key] for key in body} == body
    # The assistant message is a valid request message for the next turn.
    blocks = adapter(list[anthropic.types.ContentBlockParam])
    assert blocks.validate_python(expected["content"]) == expected["content"]


@needs_sdk
def test_sdk_client_reads_the_sse_stream() -> None:
    """The whole client path: the SDK's SSE decoder and MessageStream over a mock transport,
    for the fixtures of every format."""
    # The HTTP package the SDK is built on (httpx, or httpx2 in recent versions).
    base = next(c for c in anthropic.DefaultHttpxClient.__mro__ if c.__name__ == "Client")
    httpx = sys.modules[base.__module__.split(".")[0]]
    body: list[bytes] = []

    def respond(request: Any) -> Any:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body[0])

    client = anthropic.Anthropic(
        api_key="test",
        base_url="http://toolparse.invalid",
        max_retries=0,
        http_client=anthropic.DefaultHttpxClient(transport=httpx.MockTransport(respond)),
    )
    for fixture in FIXTURES:
        events = fixture_events(fixture)
        message = events[-1].message
        body[:] = ["".join(map(sse, encode(events))).encode()]
        with client.messages.stream(
            model=MODEL, max_tokens=64, messages=[{"role": "user", "content": "go"}]
        ) as stream:
            texts = list(stream.text_stream)
            final = stream.get_final_message()
        assert rebuilt(final) == message_to_anthropic(message), fixture.id
        assert "".join(texts) == (message.content or ""), fixture.id
        assert final.stop_reason == stop_reason(message.finish_reason, bool(message.tool_calls))


# --- any event sequence -----------------------------------------------------------------

texts = st.text(alphabet="ab é\n", max_size=4)
tool_calls = st.builds(
    lambda index, city: call(index, "get_weather", {"city": city}),
    st.integers(0, 3),
    texts,
)
event_lists = st.lists(
    st.one_of(
        st.builds(ReasoningDelta, texts),
        st.builds(ContentDelta, texts),
        st.builds(ToolCallEnd, st.integers(0, 3), tool_calls),
        st.builds(ParseError, st.just("incomplete"), st.just("cut"), st.none(), st.just(0)),
    ),
    max_size=12,
)


@MODEST
@given(events=event_lists, tool_use=st.sampled_from(["at_end", "as_completed"]))
def test_any_event_sequence_is_a_well_formed_stream(events: list[Any], tool_use: str) -> None:
    calls = [e.call for e in events if isinstance(e, ToolCallEnd)]
    content = "".join(e.text for e in events if isinstance(e, ContentDelta))
    reasoning = "".join(e.text for e in events if isinstance(e, ReasoningDelta))
    message = Message(content=content or None, reasoning_content=reasoning, tool_calls=calls)
    out = encode([*events, End("stop", message)], tool_use=tool_use)
    blocks = check_sequence(out)
    assert "".join(b["text"] for b in blocks if b["type"] == "text") == content
    assert "".join(b["thinking"] for b in blocks if b["type"] == "thinking") == reasoning
    assert [b for b in blocks if b["type"] == "tool_use"] == [
        b for b in message_to_anthropic(message)["content"] if b["type"] == "tool_use"
    ]
    assert out[-2]["delta"]["stop_reason"] == ("tool_use" if calls else "end_turn")
    if accumulate_event is not None:
        assert rebuilt(sdk_accumulate(out))["content"] == blocks
