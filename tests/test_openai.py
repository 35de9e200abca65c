"""OpenAI shapes: message_to_openai(), the chunk encoder (events -> chat.completion.chunk)
and the chunk accumulator (chunks -> Message), over every format's fixtures, and against
the openai SDK's own stream accumulation where the SDK is installed."""

from __future__ import annotations

import json
import random
import zlib
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engines import ENGINES, FIXTURE_IDS, FIXTURES, Fixture, random_sizes, run
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
from toolparse.wire.openai import (
    ChunkAccumulator,
    ChunkEncoder,
    from_chunks,
    message_to_openai,
    to_chunks,
)

by_fixture = pytest.mark.parametrize("fixture", FIXTURES, ids=FIXTURE_IDS)
by_engine = pytest.mark.parametrize("engine", ENGINES)

CHUNK_KEYS = {"id", "object", "created", "model", "choices"}
USAGE = {"prompt_tokens": 12, "completion_tokens": 34, "total_tokens": 46}
ERRORS = "toolparse_errors"


def fixture_sizes(fixture: Fixture) -> list[int]:
    """A reproducible random chunking of the fixture's output, per fixture."""
    return random_sizes(zlib.crc32(fixture.id.encode()), len(fixture.raw), 7)


def stream_chunks(
    fixture: Fixture,
    engine: str = "native",
    *,
    usage: dict[str, int] | None = USAGE,
    error_field: str | None = None,
) -> tuple[Message, list[dict[str, Any]], ChunkEncoder]:
    """The fixture fed in random pieces, each feed's events encoded as a server would: the
    parsed Message, every chunk sent, and the encoder."""
    encoder = ChunkEncoder(
        id="chatcmpl-test", model="test-model", created=1700000000, error_field=error_field
    )
    chunks: list[dict[str, Any]] = []
    message: Message | None = None
    for feed in run(fixture.parser(engine), fixture.raw, fixture_sizes(fixture), fixture.finish):
        chunks.extend(encoder.encode(feed.events))
        for event in feed.events:
            if isinstance(event, End):
                message = event.message
    assert message is not None
    if usage is not None:
        chunks.append(encoder.usage_chunk(usage))
    return message, chunks, encoder


def call_view(message: Message) -> list[tuple[str, str, dict[str, Any], str]]:
    return [(c.id, c.name, c.arguments, c.arguments_json) for c in message.tool_calls]


def assert_same_message(got: Message, want: Message) -> None:
    """What a chunk stream carries: content, reasoning, the calls (id, name, arguments,
    renumbered in delivery order) and the finish_reason.  An empty part is None on both
    sides (a Message never holds "", nor does a round trip make one)."""
    assert got.content == want.content
    assert got.reasoning_content == want.reasoning_content
    assert call_view(got) == call_view(want)
    assert [c.index for c in got.tool_calls] == list(range(len(want.tool_calls)))
    assert got.finish_reason == want.finish_reason


# -- message_to_openai ---------------------------------------------------------------------


def test_message_to_openai_with_everything() -> None:
    call = ToolCall(0, "call_1", "get_time", {"tz": "UTC"}, '{"tz": "UTC"}')
    message = Message("It is late.", "Think.", [call], [], "tool_calls")
    assert message_to_openai(message) == {
        "role": "assistant",
        "content": "It is late.",
        "reasoning_content": "Think.",
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "get_time", "arguments": '{"tz": "UTC"}'},
            }
        ],
    }


def test_message_to_openai_leaves_out_what_is_not_there() -> None:
    assert message_to_openai(Message()) == {"role": "assistant", "content": None}
    assert message_to_openai(Message(content="", reasoning_content="")) == {
        "role": "assistant",
        "content": None,
    }


@by_fixture
def test_message_to_openai_on_fixtures(fixture: Fixture) -> None:
    message = fixture.parse("native")
    out = json.loads(json.dumps(message_to_openai(message)))
    assert out["role"] == "assistant"
    assert out["content"] == message.content
    assert out.get("reasoning_content") == (message.reasoning_content or None)
    assert ("tool_calls" in out) == bool(message.tool_calls)
    for wire, call in zip(out.get("tool_calls", []), message.tool_calls, strict=True):
        assert wire["id"] == call.id and wire["type"] == "function"
        assert wire["function"]["name"] == call.name
        assert json.loads(wire["function"]["arguments"]) == call.arguments


# -- the encoder, on every fixture ------------------------------------------------------------


@by_engine
@by_fixture
def test_round_trip(fixture: Fixture, engine: str) -> None:
    message, chunks, _ = stream_chunks(fixture, engine)
    assert_same_message(from_chunks(chunks), message)
    # and through JSON, as the chunks travel
    assert_same_message(from_chunks(json.loads(json.dumps(chunks))), message)


@by_fixture
def test_round_trip_of_one_batch(fixture: Fixture) -> None:
    """to_chunks() over the whole event list (adjacent deltas share chunks)."""
    events = fixture.events("native")
    chunks = to_chunks(events, id="chatcmpl-1", model="m", created=1)
    assert_same_message(from_chunks(chunks), events[-1].message)


@by_fixture
def test_the_openai_sdk_accumulates_the_chunks(fixture: Fixture) -> None:
    """The openai SDK's own stream helper (client.chat.completions.stream()) builds the
    same message from the chunks: an empty content or reasoning is None there too."""
    from openai.lib.streaming.chat import ChatCompletionStreamState
    from openai.types.chat import ChatCompletionChunk

    message, chunks, _ = stream_chunks(fixture, usage=None)
    state: Any = ChatCompletionStreamState()
    for chunk in chunks:
        state.handle_chunk(ChatCompletionChunk.model_validate(chunk))
    got = state.current_completion_snapshot.choices[0]
    assert got.message.content == message.content
    assert getattr(got.message, "reasoning_content", None) == message.reasoning_content
    assert [
        (c.id, c.type, c.function.name, json.loads(c.function.arguments))
        for c in got.message.tool_calls or []
    ] == [(c.id, "function", c.name, c.arguments) for c in message.tool_calls]
    assert got.finish_reason == message.finish_reason


@by_fixture
def test_chunk_shape(fixture: Fixture) -> None:
    message, chunks, encoder = stream_chunks(fixture)
    *body, usage = chunks
    assert usage == {
        "id": "chatcmpl-test",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": "test-model",
        "choices": [],
        "usage": USAGE,
    }
    for chunk in body:
        assert set(chunk) == CHUNK_KEYS
        assert (chunk["id"], chunk["object"], chunk["created"], chunk["model"]) == (
            "chatcmpl-test",
            "chat.completion.chunk",
            1700000000,
            "test-model",
        )
        [choice] = chunk["choices"]
        assert set(choice) == {"index", "delta", "logprobs", "finish_reason"}
        assert choice["index"] == 0 and choice["logprobs"] is None
    deltas = [c["choices"][0]["delta"] for c in body]
    reasons = [c["choices"][0]["finish_reason"] for c in body]
    assert deltas[0] == {"role": "assistant"}
    assert all("role" not in d for d in deltas[1:])
    # the finish_reason comes alone, in the last chunk, with an empty delta
    assert deltas[-1] == {} and reasons[-1] == message.finish_reason
    assert reasons[:-1] == [None] * (len(body) - 1)
    assert all(d for d in deltas[1:-1])
    for delta in deltas[1:-1]:
        assert len(delta) == 1
        [(key, value)] = delta.items()
        assert key in ("content", "reasoning_content", "tool_calls")
        if key != "tool_calls":
            assert isinstance(value, str) and value
    # tool calls: indexes 0, 1, ... in order; a head (id, type, name, "") then arguments
    fragments = [f for d in deltas for f in d.get("tool_calls", [])]
    assert len(fragments) == 2 * len(message.tool_calls) == 2 * encoder.delivered
    for index, call in enumerate(message.tool_calls):
        head, arguments = fragments[2 * index : 2 * index + 2]
        assert head == {
            "index": index,
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        assert arguments == {"index": index, "function": {"arguments": call.arguments_json}}
    json.dumps(chunks)


def sent_items(chunks: Sequence[dict[str, Any]]) -> list[tuple[str, str]]:
    """What chunks say, in order: (text key, text) and ("call", id) at a call's head."""
    items = []
    for c in chunks:
        for choice in c["choices"]:
            for key, value in choice["delta"].items():
                if key == "tool_calls":
                    items += [("call", f["id"]) for f in value if "id" in f]
                elif key != "role" and value:
                    items.append((key, value))
    return items


@by_fixture
def test_chunks_follow_the_events(fixture: Fixture) -> None:
    """Each feed's text goes out in that feed's chunks (adjacent text of one kind in one
    chunk), and a call where its ToolCallEnd is, in order."""
    encoder = ChunkEncoder(id="x", model="m", created=0)
    for feed in run(fixture.parser("native"), fixture.raw, fixture_sizes(fixture), fixture.finish):
        want: list[tuple[str, str]] = []
        for event in feed.events:
            if isinstance(event, ContentDelta | ReasoningDelta):
                key = "content" if isinstance(event, ContentDelta) else "reasoning_content"
                if want and want[-1][0] == key:
                    want[-1] = (key, want[-1][1] + event.text)
                else:
                    want.append((key, event.text))
            elif isinstance(event, ToolCallEnd):
                want.append(("call", event.call.id))
        assert sent_items(encoder.encode(feed.events)) == want


@by_fixture
def test_failed_calls_never_reach_the_client(fixture: Fixture) -> None:
    """A call that started and then failed sends nothing; its error is the encoder's."""
    message, chunks, encoder = stream_chunks(fixture, error_field=ERRORS)
    assert encoder.errors == message.errors
    ids = {
        f["id"]
        for c in chunks
        for choice in c["choices"]
        for f in choice["delta"].get("tool_calls", [])
        if "id" in f
    }
    assert ids == {call.id for call in message.tool_calls}
    last = chunks[-2]["choices"][0]
    if message.errors:
        assert last[ERRORS] == [
            {"kind": e.kind, "message": e.message, "index": e.index, "offset": e.offset}
            for e in message.errors
        ]
        assert from_chunks(chunks, error_field=ERRORS).errors == message.errors
    else:
        assert ERRORS not in last
    # without the opt-in the chunks are plain
    _, plain, _ = stream_chunks(fixture)
    assert all(ERRORS not in c["choices"][0] for c in plain if c["choices"])
    assert from_chunks(plain).errors == []


def test_started_call_that_fails_sends_nothing() -> None:
    events = [
        ContentDelta("Checking."),
        ToolCallStart(0, "call_a", "get_time"),
        ToolCallArgsDelta(0, '{"tz": '),
        ParseError("incomplete", "the output ended inside a call", 0, 30),
        End("stop", Message(content="Checking.", finish_reason="stop")),
    ]
    chunks = to_chunks(events, id="c", model="m", created=0)
    deltas = [c["choices"][0]["delta"] for c in chunks]
    assert deltas == [{"role": "assistant"}, {"content": "Checking."}, {}]
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"


def test_delivered_calls_are_numbered_without_gaps() -> None:
    good = ToolCall(1, "call_b", "get_time", {}, "{}")
    encoder = ChunkEncoder(id="c", model="m", created=0)
    chunks = encoder.encode([ToolCallStart(0, "call_a", "x"), ToolCallArgsDelta(0, "{")])
    assert chunks == [encoder.chunk({"role": "assistant"})]  # held
    chunks = encoder.encode(
        [
            ParseError("invalid_arguments", "bad", 0, 5),
            ToolCallStart(1, "call_b", "get_time"),
            ToolCallArgsDelta(1, "{}"),
        ]
    )
    assert chunks == []
    chunks = encoder.encode([ToolCallEnd(1, good)])
    assert [c["choices"][0]["delta"]["tool_calls"][0]["index"] for c in chunks] == [0, 0]
    [finish] = encoder.encode([End("stop", Message(tool_calls=[good]))])
    assert finish["choices"][0]["finish_reason"] == "tool_calls"
    assert [e.kind for e in encoder.errors] == ["invalid_arguments"]
    with pytest.raises(ValueError, match="after End"):
        encoder.encode([ContentDelta("more")])


def test_length_and_reasoning_key() -> None:
    events = [ReasoningDelta("hm"), ContentDelta("cut"), End("length", Message())]
    chunks = to_chunks(events, id="c", model="m", created=0, reasoning_key="reasoning")
    assert [c["choices"][0]["delta"] for c in chunks[1:]] == [
        {"reasoning": "hm"},
        {"content": "cut"},
        {},
    ]
    assert chunks[-1]["choices"][0]["finish_reason"] == "length"
    assert from_chunks(chunks) == Message("cut", "hm", [], [], "length")


# -- the accumulator -------------------------------------------------------------------------


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish}],
    }


def fragment(index: int, **parts: Any) -> dict[str, Any]:
    """A tool call fragment: id and type at the top, name and arguments in function."""
    out: dict[str, Any] = {"index": index}
    function = {k: parts.pop(k) for k in ("name", "arguments") if k in parts}
    out.update(parts)
    if function:
        out["function"] = function
    return out


def calls(*fragments: dict[str, Any]) -> dict[str, Any]:
    return chunk({"tool_calls": list(fragments)})


CALL_SPECS = st.lists(
    st.tuples(
        st.from_regex(r"[a-z_]{1,12}", fullmatch=True),
        st.dictionaries(
            st.text(max_size=5),
            st.none() | st.booleans() | st.integers() | st.text(max_size=8),
            max_size=4,
        ),
    ),
    min_size=1,
    max_size=4,
)


@MODEST
@given(specs=CALL_SPECS, data=st.data())
def test_fragments_are_keyed_by_index(
    specs: list[tuple[str, dict[str, Any]]], data: st.DataObject
) -> None:
    """Calls' fragments in any interleaving, the indexes in any order and not contiguous,
    the id and the name in any fragment of their call: each call comes back whole."""
    indexes = sorted(
        data.draw(st.sets(st.integers(0, 50), min_size=len(specs), max_size=len(specs)))
    )
    rng = random.Random(data.draw(st.integers(0, 2**32)))
    queues: list[list[dict[str, Any]]] = []
    want = []
    for wire, (name, arguments) in zip(indexes, specs, strict=True):
        text = json.dumps(arguments)
        cuts = sorted(rng.sample(range(1, len(text)), min(len(text) - 1, rng.randint(0, 4))))
        pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
        pieces += [""] * rng.randint(0, 2)
        frags = [fragment(wire, arguments=piece) for piece in pieces]
        frags[rng.randrange(len(frags))]["id"] = f"call_{wire}"
        # the name in one fragment or in two pieces, before, among or after the arguments
        first = rng.randrange(len(frags))
        second = rng.randrange(first, len(frags))
        cut = rng.randint(0, len(name)) if second > first else len(name)
        frags[first].setdefault("function", {})["name"] = name[:cut]
        if second > first:
            frags[second].setdefault("function", {})["name"] = name[cut:]
        queues.append(frags)
        want.append((f"call_{wire}", name, arguments, text))
    stream = [chunk({"role": "assistant", "content": ""})]
    while any(queues):
        # one chunk may carry fragments of several calls, in any index order
        waiting = [q for q in queues if q]
        batch = [q.pop(0) for q in rng.sample(waiting, rng.randint(1, len(waiting)))]
        stream.append(calls(*batch))
    stream.append(chunk({}, "tool_calls"))
    got = from_chunks(stream)
    assert call_view(got) == want
    assert [c.index for c in got.tool_calls] == list(range(len(specs)))
    assert got.errors == [] and got.finish_reason == "tool_calls"


def test_late_id_and_name_and_out_of_order_indexes() -> None:
    stream = [
        calls(fragment(1, arguments='{"b"')),
        calls(fragment(0, arguments='{"a": 1}')),
        calls(fragment(1, arguments=": 2}", name="second"), fragment(0, name="fir")),
        calls(fragment(0, name="st", id="id0", type="function"), fragment(1, id="id1")),
        chunk({}, "tool_calls"),
    ]
    got = from_chunks(stream)
    assert call_view(got) == [
        ("id0", "first", {"a": 1}, '{"a": 1}'),
        ("id1", "second", {"b": 2}, '{"b": 2}'),
    ]


def test_a_repeated_id_is_one_call_and_two_ids_are_an_error() -> None:
    same = from_chunks(
        [
            calls(fragment(0, id="a", name="f", arguments="{")),
            calls(fragment(0, id="a", arguments="}")),
            chunk({}, "tool_calls"),
        ]
    )
    assert call_view(same) == [("a", "f", {}, "{}")]
    two = from_chunks(
        [
            calls(fragment(0, id="a", name="f", arguments="{}")),
            calls(fragment(0, id="b", name="g", arguments="{}")),
            chunk({}, "tool_calls"),
        ]
    )
    assert two.tool_calls == [] and [e.kind for e in two.errors] == ["invalid_arguments"]
    assert two.finish_reason == "stop"


@pytest.mark.parametrize(
    "arguments",
    ['{"a": ', "not json", "[1, 2]", '"{}"', '{"a": NaN}', "", '{"a": 1} x'],
)
def test_invalid_arguments_are_an_error_not_a_call(arguments: str) -> None:
    got = from_chunks(
        [
            chunk({"role": "assistant", "content": ""}),
            calls(fragment(0, id="bad", type="function", name="f", arguments=arguments)),
            calls(fragment(1, id="good", type="function", name="g", arguments="{}")),
            chunk({}, "tool_calls"),
        ]
    )
    assert call_view(got) == [("good", "g", {}, "{}")]
    assert got.tool_calls[0].index == 1
    [error] = got.errors
    assert (error.kind, error.index) == ("invalid_arguments", 0)


def test_calls_without_name_or_index_or_id() -> None:
    got = from_chunks(
        [
            calls(fragment(0, arguments="{}")),
            calls({"id": "x", "function": {"name": "f", "arguments": "{}"}}),
            calls(fragment(1, name="g", arguments="{}")),
            chunk({}, "tool_calls"),
        ],
        id_factory=lambda: "made",
    )
    assert call_view(got) == [("made", "g", {}, "{}")]
    assert sorted((e.kind, e.index) for e in got.errors) == [
        ("invalid_arguments", 0),
        ("unexpected", None),
    ]


def test_finish_reason_usage_and_metadata() -> None:
    acc = ChunkAccumulator()
    acc.add(chunk({"role": "assistant", "content": ""}))
    acc.add(chunk({"content": "Hi"}))
    acc.add(chunk({}, "stop"))
    acc.add({"id": "c", "object": "chat.completion.chunk", "choices": [], "usage": USAGE})
    assert acc.finish() == Message("Hi", None, [], [], "stop")
    assert acc.usage == USAGE
    assert (acc.id, acc.model, acc.created, acc.chunks) == ("c", "m", 0, 4)


def test_finish_reason_agrees_with_the_calls() -> None:
    call = calls(fragment(0, id="a", name="f", arguments="{}"))
    assert from_chunks([call, chunk({}, "stop")]).finish_reason == "tool_calls"
    for reason in ("length", "content_filter"):
        assert from_chunks([chunk({"content": "x"}, reason)]).finish_reason == reason


def test_reasoning_under_either_name_once() -> None:
    got = from_chunks(
        [
            chunk({"reasoning": "a"}),
            chunk({"reasoning_content": "b"}),
            chunk({"reasoning_content": "c", "reasoning": "c"}),  # both: one text, not two
            chunk({"content": "d"}, "stop"),
        ]
    )
    assert (got.reasoning_content, got.content) == ("abc", "d")


def test_text_around_calls_in_one_response_is_kept_as_it_came() -> None:
    got = from_chunks(
        [
            chunk({"content": "Let me check."}),
            calls(fragment(0, id="a", name="f", arguments="{}")),
            chunk({"content": "Done."}),
            chunk({}, "tool_calls"),
        ]
    )
    assert got.content == "Let me check.Done."


def test_rounds_of_one_turn_are_paragraphs() -> None:
    """After a finish_reason, output starts the next round: its text joins with a blank line
    and its calls are numbered after the first round's."""
    stream = [
        chunk({"role": "assistant", "content": ""}),
        chunk({"reasoning_content": "plan"}),
        chunk({"content": "Let me check."}),
        calls(fragment(0, id="a", name="f", arguments="{}")),
        chunk({}, "tool_calls"),
        chunk({}, "tool_calls"),  # a repeated finish stays in its round
        {"id": "c", "choices": [], "usage": USAGE},
        chunk({"role": "assistant", "content": ""}),
        chunk({"reasoning_content": "again"}),
        chunk({"content": "It is noon."}),
        calls(fragment(0, id="b", name="g", arguments="{}")),
        chunk({}, "stop"),
    ]
    got = from_chunks(stream)
    assert got.content == "Let me check.\n\nIt is noon."
    assert got.reasoning_content == "plan\n\nagain"
    assert [(c.index, c.id) for c in got.tool_calls] == [(0, "a"), (1, "b")]
    assert got.finish_reason == "tool_calls"
    assert from_chunks(stream, round_separator="").content == "Let me check.It is noon."


def test_message_so_far_and_a_stream_that_stops() -> None:
    acc = ChunkAccumulator()
    acc.add(chunk({"content": "Hi"}))
    acc.add(calls(fragment(0, id="a", name="f", arguments='{"x": 1}')))
    # the call looks whole, but its response has not finished
    assert acc.message == Message("Hi", None, [], [], None)
    final = acc.finish()
    assert final.tool_calls == [] and final.finish_reason is None
    assert [(e.kind, e.index) for e in final.errors] == [("incomplete", 0)]
    assert acc.message == final
    text_only = from_chunks([chunk({"content": "Hi"})])
    assert [(e.kind, e.index) for e in text_only.errors] == [("incomplete", None)]
    assert from_chunks([]) == Message()


def test_other_choices_are_ignored() -> None:
    two = chunk({"content": "zero"})
    two["choices"].append({"index": 1, "delta": {"content": "one"}, "finish_reason": None})
    assert from_chunks([two, chunk({}, "stop")]).content == "zero"
    assert from_chunks([two], choice=1).content == "one"


def test_not_a_chunk() -> None:
    with pytest.raises(TypeError):
        from_chunks([42])


# -- the openai SDK --------------------------------------------------------------------------


def sdk_chunks(chunks: Sequence[dict[str, Any]]) -> list[Any]:
    """The chunks as the SDK reads them off the wire: JSON, then its ChatCompletionChunk."""
    types = pytest.importorskip("openai.types.chat", reason="the openai SDK is not installed")
    return [types.ChatCompletionChunk.model_validate(json.loads(json.dumps(c))) for c in chunks]


@by_fixture
def test_openai_sdk_accumulates_our_chunks(fixture: Fixture) -> None:
    openai = pytest.importorskip("openai", reason="the openai SDK is not installed")
    streaming = pytest.importorskip("openai.lib.streaming.chat")
    if not hasattr(streaming, "ChatCompletionStreamState"):  # added in openai 1.56
        pytest.skip(f"openai {openai.__version__} has no ChatCompletionStreamState")
    message, chunks, _ = stream_chunks(fixture, error_field=ERRORS)
    state = streaming.ChatCompletionStreamState()  # the SDK's own chunk accumulation
    for sdk_chunk in sdk_chunks(chunks):
        state.handle_chunk(sdk_chunk)
    try:
        completion = state.get_final_completion()
    except openai.LengthFinishReasonError as cut:
        # the SDK's parse step refuses an output cut short; the accumulation is still there
        assert message.finish_reason == "length"
        completion = cut.completion
    assert completion.id == "chatcmpl-test" and completion.model == "test-model"
    assert completion.usage.model_dump(exclude_none=True) == USAGE
    [choice] = completion.choices
    assert choice.finish_reason == message.finish_reason
    got = choice.message
    assert got.role == "assistant"
    assert (got.content or None) == message.content
    assert (getattr(got, "reasoning_content", None) or None) == (message.reasoning_content or None)
    assert [
        (c.id, c.type, c.function.name, c.function.arguments) for c in got.tool_calls or []
    ] == [(c.id, "function", c.name, c.arguments_json) for c in message.tool_calls]


@by_fixture
def test_from_chunks_reads_sdk_objects(fixture: Fixture) -> None:
    message, chunks, _ = stream_chunks(fixture, error_field=ERRORS)
    objects = sdk_chunks(chunks)
    assert_same_message(from_chunks(objects), message)
    assert from_chunks(objects, error_field=ERRORS).errors == message.errors
