"""The stream API: StreamParser (feed, finish, message, reset), parse(), ids, formats and
options, and the event values themselves."""

from __future__ import annotations

import itertools
import json
import re
from typing import Any

import pytest

import toolparse
from engines import ENGINES, FIXTURE_IDS, FIXTURES, Fixture, run_events
from toolparse import (
    FORMATS,
    ContentDelta,
    End,
    Format,
    Message,
    ParseError,
    ReasoningDelta,
    StreamParser,
    ToolCall,
    ToolCallArgsDelta,
    ToolCallEnd,
    ToolCallStart,
    get_format,
)
from toolparse.formats._deepseek import (
    CALL_BEGIN,
    CALLS_BEGIN,
    DSML,
    INVOKE_OPEN,
    PARAM_OPEN,
    TOOL_SEP,
)
from toolparse.grammar import Grammar, lit, tag

by_engine = pytest.mark.parametrize("engine", ENGINES)
by_format = pytest.mark.parametrize("format_name", sorted(FORMATS))

HERMES_TWO_CALLS = (
    "Checking both.\n"
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>\n'
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Rome"}}\n</tool_call>'
)
# An output cut inside a call, per format: what finish("length") sees.
# An output cut inside a call, per format (formats not listed are covered by the
# truncation properties of tests/formats/test_format_properties.py).
CUT_INSIDE_A_CALL = {
    "hermes": '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Os',
    "qwen3": '<think>\nweather\n</think>\n\n<tool_call>\n{"name": "get_weather", "arguments": {',
    "qwen3_coder": "<tool_call>\n<function=get_weather>\n<parameter=city>\nOs",
    "glm45": "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Os",
    "ling3": "\nweather\n</think>\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Os",
    "minimax_m2": (
        'weather\n</think>\n\n<minimax:tool_call>\n<invoke name="get_weather">\n'
        '<parameter name="city">Os'
    ),
    "seed_oss": "<seed:tool_call>\n<function=get_weather>\n<parameter=city>Os",
    "mistral": '[TOOL_CALLS]get_weather[ARGS]{"city": "Os',
    "pythonic": '[get_weather(city="Os',
    "lfm2": '<|tool_call_start|>[get_weather(city="Os',
    "gemma4": '<|tool_call>call:get_weather{city:<|"|>Os',
    "functionary_v3_1": '<function=get_weather>{"city": "Os',
    "functionary_v3_2": 'get_weather\n{"city": "Os',
    "firefunction_v2": ' functools[{"name": "get_weather", "arguments": {"city": "Os',
    "phi4_mini": 'functools[{"name": "get_weather", "arguments": {"city": "Os',
    "xlam": '[{"name": "get_weather", "arguments": {"city": "Os',
    "cohere_command": (
        '<|START_ACTION|>[\n    {"tool_call_id": "0", "tool_name": "get_weather", '
        '"parameters": {"city": "Os'
    ),
    "llama3_json": '{"name": "get_weather", "parameters": {"city": "Os',
    "generic": '{"tool_call": {"name": "get_weather", "arguments": {"city": "Os',
    "gpt_oss": (
        '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city": "Os'
    ),
    "deepseek_v3": f"{CALLS_BEGIN}{CALL_BEGIN}function{TOOL_SEP}get_weather\n```json\n"
    + '{"city": "Os',
    "deepseek_r1": (
        f"weather\n</think>\n\n{CALLS_BEGIN}{CALL_BEGIN}function{TOOL_SEP}get_weather\n"
        '```json\n{"city": "Os'
    ),
    "deepseek_v31": f"{CALLS_BEGIN}{CALL_BEGIN}get_weather{TOOL_SEP}" + '{"city": "Os',
    "deepseek_v32": (
        f'weather</think>\n\n<{DSML}function_calls>\n{INVOKE_OPEN}get_weather">\n'
        f'{PARAM_OPEN}city" string="true">Os'
    ),
    "deepseek_v4": (
        f'weather</think>\n\n<{DSML}tool_calls>\n{INVOKE_OPEN}get_weather">\n'
        f'{PARAM_OPEN}city" string="true">Os'
    ),
}
CUT_FORMATS = sorted(name for name in CUT_INSIDE_A_CALL if name in FORMATS)
CALL_ID = re.compile(r"call_[A-Za-z0-9]{24}")


def starts(events: list[Any]) -> list[ToolCallStart]:
    return [e for e in events if isinstance(e, ToolCallStart)]


# --- feed, finish, message, reset -----------------------------------------------------------


@by_engine
def test_message_grows_while_feeding(engine: str) -> None:
    parser = StreamParser("hermes", engine=engine)
    assert parser.message == Message()
    first_call_end = HERMES_TWO_CALLS.index("</tool_call>") + len("</tool_call>")
    events = parser.feed(HERMES_TWO_CALLS[:first_call_end])
    assert [type(e) for e in events] == [
        ContentDelta,
        ToolCallStart,
        ToolCallArgsDelta,
        ToolCallEnd,
    ]
    so_far = parser.message
    assert so_far.content == "Checking both.\n"
    assert [c.arguments for c in so_far.tool_calls] == [{"city": "Oslo"}]
    assert so_far.finish_reason is None
    parser.feed(HERMES_TWO_CALLS[first_call_end:])
    assert [c.arguments for c in parser.message.tool_calls] == [{"city": "Oslo"}, {"city": "Rome"}]
    assert parser.message.finish_reason is None


@by_engine
def test_feed_never_returns_end_and_finish_ends_with_it(engine: str) -> None:
    parser = StreamParser("hermes", engine=engine)
    fed = [event for ch in HERMES_TWO_CALLS for event in parser.feed(ch)]
    assert not any(isinstance(e, End) for e in fed)
    finished = parser.finish()
    assert isinstance(finished[-1], End)
    assert not any(isinstance(e, End) for e in finished[:-1])


@by_engine
@pytest.mark.parametrize("fixture", FIXTURES, ids=FIXTURE_IDS)
def test_end_carries_the_final_message(fixture: Fixture, engine: str) -> None:
    parser = fixture.parser(engine, seed=4)
    events = run_events(parser, fixture.raw, [7] * (len(fixture.raw) // 7), fixture.finish)
    end = events[-1]
    assert isinstance(end, End)
    assert end.message == parser.message == fixture.parse(engine, seed=4)
    assert end.message.errors == [e for e in events if isinstance(e, ParseError)]
    assert end.message.tool_calls == [e.call for e in events if isinstance(e, ToolCallEnd)]


@by_engine
def test_str_and_bytes_feed_the_same(engine: str) -> None:
    text = "Voilà 🙂 " + HERMES_TWO_CALLS
    from_str = StreamParser("hermes", engine=engine, seed=1)
    events = from_str.feed(text) + from_str.finish()
    assert events == run_events(StreamParser("hermes", engine=engine, seed=1), text.encode())
    from_bytearray = StreamParser("hermes", engine=engine, seed=1)
    from_bytearray.feed(bytearray(text.encode()))
    from_bytearray.finish()
    assert from_bytearray.message == from_str.message


@by_engine
def test_feed_refuses_what_is_not_text(engine: str) -> None:
    parser = StreamParser("hermes", engine=engine)
    with pytest.raises(TypeError):
        parser.feed(42)  # type: ignore[arg-type]


@by_engine
def test_feed_after_finish_raises(engine: str) -> None:
    parser = StreamParser("hermes", engine=engine)
    parser.feed("Hello")
    parser.finish()
    with pytest.raises(ValueError, match="reset"):
        parser.feed(" again")
    with pytest.raises(ValueError, match="reset"):
        parser.finish()


@by_engine
def test_reset_starts_a_new_response(engine: str) -> None:
    parser = StreamParser("hermes", engine=engine, seed=9)
    first = run_events(parser, HERMES_TWO_CALLS.encode())
    parser.reset()
    assert parser.message == Message()
    second = run_events(parser, HERMES_TWO_CALLS.encode())
    fresh = run_events(StreamParser("hermes", engine=engine, seed=9), HERMES_TWO_CALLS.encode())
    assert first == second == fresh


def test_parsers_with_the_same_tools_share_one_tool_table() -> None:
    """A parser per request, mostly with the same tools: the C core's table is built once
    per list (by its JSON text) and shared; a changed list gets its own, and a list that
    is not JSON is still read."""
    tool = {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"days": {"type": "integer"}}},
        },
    }
    first = StreamParser("qwen3_coder", tools=[tool])
    second = StreamParser("qwen3_coder", tools=[json.loads(json.dumps(tool))])
    assert first._native_tools is second._native_tools
    changed = json.loads(json.dumps(tool))
    changed["function"]["parameters"]["properties"]["days"]["type"] = "string"
    third = StreamParser("qwen3_coder", tools=[changed])
    assert third._native_tools is not first._native_tools
    call = (
        "<tool_call>\n<function=get_weather>\n<parameter=days>\n2\n</parameter>\n"
        "</function>\n</tool_call>"
    )
    assert toolparse.parse(call, first.format, tools=[tool]).tool_calls[0].arguments == {"days": 2}
    typed = toolparse.parse(call, first.format, tools=[changed]).tool_calls[0].arguments
    assert typed == {"days": "2"}
    not_json = {**tool, "function": {**tool["function"], "tags": {"a"}}}  # a set
    parser = StreamParser("qwen3_coder", tools=[not_json])
    assert (parser.feed(call) + parser.finish())[-1].message.tool_calls[0].arguments == {"days": 2}
    assert StreamParser("qwen3_coder", tools=[tool], engine="reference")._native_tools is None


def test_the_reference_tables_and_repair_coercion_are_shared_by_tools_list() -> None:
    """The reference engine's tool table and repair mode's stated types are built once per
    tools list too; a changed list is read anew, so its own types apply."""
    from toolparse.reference.emitter import ToolTable
    from toolparse.stream import shared_stated_schemas

    def tool(kind: str) -> dict[str, Any]:
        properties = {"days": {"type": kind}}
        return {
            "type": "function",
            "function": {"name": "f", "parameters": {"properties": properties}},
        }

    assert ToolTable.of([tool("integer")]) is ToolTable.of([tool("integer")])
    assert ToolTable.of([tool("integer")]) is not ToolTable.of([tool("string")])
    assert shared_stated_schemas([tool("number")]) is shared_stated_schemas([tool("number")])
    # lenient repair: a single-quoted JSON value, coerced to what the schema states
    call = (
        "<tool_call>\n<function=f>\n<parameter=days>\n'2'\n</parameter>\n</function>\n</tool_call>"
    )
    for engine in ENGINES:
        for kind, expected in (("integer", 2), ("string", "'2'"), ("integer", 2)):
            message = toolparse.parse(
                call, "qwen3_coder", tools=[tool(kind)], engine=engine, repair=True
            )
            assert message.tool_calls[0].arguments == {"days": expected}, (engine, kind)


@by_engine
def test_reset_in_the_middle_drops_the_unfinished_response(engine: str) -> None:
    parser = StreamParser("hermes", engine=engine)
    parser.feed('Hi <tool_call>\n{"name": "get_wea')
    parser.reset()
    events = parser.feed("Plain answer.") + parser.finish()
    assert events[-1].message.content == "Plain answer."
    assert events[-1].message.errors == []
    assert events[-1].message.tool_calls == []


@by_engine
@by_format
def test_parse_equals_feeding_and_finishing(engine: str, format_name: str) -> None:
    for example in FORMATS[format_name].examples:
        parser = StreamParser(format_name, engine=engine, seed=2)
        for character in example:
            parser.feed(character)
        parser.finish()
        message = toolparse.parse(example, format_name, engine=engine, seed=2)
        assert parser.message == message
        fmt = FORMATS[format_name]
        assert bool(message.tool_calls) == fmt.tool_calls, "an example makes a call if it can"


# --- finish reasons and truncation ----------------------------------------------------------


@by_engine
@pytest.mark.parametrize("format_name", CUT_FORMATS)
def test_finish_length_inside_a_call_is_incomplete(engine: str, format_name: str) -> None:
    parser = StreamParser(format_name, engine=engine)
    events = parser.feed(CUT_INSIDE_A_CALL[format_name]) + parser.finish("length")
    assert not any(isinstance(e, ToolCallEnd) for e in events)
    errors = [e for e in events if isinstance(e, ParseError)]
    assert [e.kind for e in errors] == ["incomplete"]
    assert errors[0].offset == len(CUT_INSIDE_A_CALL[format_name].encode())
    assert [(s.index, s.name) for s in starts(events)] == [(0, "get_weather")]
    assert errors[0].index == 0
    end = events[-1]
    assert isinstance(end, End)
    assert end.finish_reason == "length"
    assert end.message.finish_reason == "length"
    assert end.message.tool_calls == []


@by_engine
def test_finish_reason_is_tool_calls_after_a_stop_with_calls(engine: str) -> None:
    assert toolparse.parse(HERMES_TWO_CALLS, "hermes", engine=engine).finish_reason == "tool_calls"
    assert toolparse.parse("Just text.", "hermes", engine=engine).finish_reason == "stop"
    parser = StreamParser("hermes", engine=engine)
    parser.feed(HERMES_TWO_CALLS)
    assert parser.finish("length")[-1].message.finish_reason == "length"


# --- ids ------------------------------------------------------------------------------------


def call_ids(engine: str, **options: Any) -> list[str]:
    events = run_events(StreamParser("hermes", engine=engine, **options), HERMES_TWO_CALLS.encode())
    return [s.id for s in starts(events)]


@by_engine
def test_seed_makes_ids_reproducible(engine: str) -> None:
    ids = call_ids(engine, seed=123)
    assert len(ids) == 2 and ids[0] != ids[1]
    assert all(CALL_ID.fullmatch(i) for i in ids)
    assert call_ids(engine, seed=123) == ids
    message = toolparse.parse(HERMES_TWO_CALLS, "hermes", engine=engine, seed=123)
    assert [c.id for c in message.tool_calls] == ids


@by_engine
def test_different_seeds_give_different_ids(engine: str) -> None:
    assert call_ids(engine, seed=1) != call_ids(engine, seed=2)
    assert call_ids(engine) != call_ids(engine)


@by_engine
def test_id_factory_makes_the_ids(engine: str) -> None:
    counter = itertools.count()
    parser = StreamParser("hermes", engine=engine, id_factory=lambda: f"tool-{next(counter)}")
    events = run_events(parser, HERMES_TWO_CALLS.encode())
    assert [s.id for s in starts(events)] == ["tool-0", "tool-1"]
    assert [c.id for c in parser.message.tool_calls] == ["tool-0", "tool-1"]
    message = toolparse.parse(HERMES_TWO_CALLS, "hermes", engine=engine, id_factory=lambda: "x")
    assert [c.id for c in message.tool_calls] == ["x", "x"]


# --- formats and options --------------------------------------------------------------------


@by_engine
def test_reasoning_in_prompt_needs_a_format_that_can_start_in_reasoning(engine: str) -> None:
    with pytest.raises(ValueError, match="'hermes' has no reasoning block to start in"):
        StreamParser("hermes", engine=engine, reasoning_in_prompt=True)
    with pytest.raises(ValueError, match="no reasoning block"):
        toolparse.parse("text", "hermes", engine=engine, reasoning_in_prompt=True)
    plain = Format(
        name="plain",
        grammar=Grammar({"start": tag("content", lit("x"))}, {"start": "start"}),
        description="no reasoning at all",
    )
    assert plain.reasoning == "none"
    with pytest.raises(ValueError, match="'plain' has no reasoning block"):
        StreamParser(plain, engine=engine, reasoning_in_prompt=True)
    assert StreamParser(plain, engine=engine, reasoning_in_prompt=False).feed("x") == [
        ContentDelta("x")
    ]


@by_engine
@pytest.mark.parametrize("format_name", ["qwen3", "qwen3_coder"])
def test_reasoning_in_prompt_starts_in_reasoning(engine: str, format_name: str) -> None:
    text = "thinking\n</think>\n\nAnswer."
    opened = toolparse.parse(text, format_name, engine=engine, reasoning_in_prompt=True)
    assert (opened.reasoning_content, opened.content) == ("thinking\n", "Answer.")
    opened_by_the_model = toolparse.parse("<think>" + text, format_name, engine=engine)
    assert opened_by_the_model == opened


def test_unknown_format_names_the_closest() -> None:
    """A mistyped name's error names the three closest names (not all 150)."""
    with pytest.raises(ValueError, match="unknown format 'qwen3_codr'") as raised:
        StreamParser("qwen3_codr", engine=ENGINES[0])
    message = str(raised.value)
    suggested = message.split("did you mean ")[1].split("?")[0].split(", ")
    assert "qwen3_coder" in suggested and len(suggested) == 3
    assert all(toolparse.get_format(name) for name in suggested)
    assert "toolparse formats" in message and len(message) < 160
    with pytest.raises(ValueError, match="unknown format 'gpt-17'"):
        toolparse.parse("x", "gpt-17", engine=ENGINES[0])


def test_unknown_engine() -> None:
    with pytest.raises(ValueError, match="unknown engine 'turbo'"):
        StreamParser("hermes", engine="turbo")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("alias", "name"),
    [(alias, name) for name, fmt in sorted(FORMATS.items()) for alias in fmt.aliases],
)
def test_get_format_resolves_aliases(alias: str, name: str) -> None:
    assert get_format(alias) is FORMATS[name]
    assert StreamParser(alias, engine=ENGINES[0]).format is FORMATS[name]


def test_get_format_knows_the_vllm_names_and_aliases() -> None:
    assert {"hermes", "qwen3", "qwen3_coder"} <= set(FORMATS)
    assert {"qwen25", "qwen", "qwen3_xml"} <= {a for f in FORMATS.values() for a in f.aliases}
    for name, fmt in FORMATS.items():
        assert get_format(name) is fmt
        assert get_format(fmt) is fmt
        assert fmt.name == name


@by_engine
def test_alias_parses_like_its_format(engine: str) -> None:
    assert toolparse.parse(HERMES_TWO_CALLS, "qwen25", engine=engine, seed=1) == toolparse.parse(
        HERMES_TWO_CALLS, "hermes", engine=engine, seed=1
    )


@by_engine
def test_tools_restrict_the_names(engine: str) -> None:
    tools = [{"type": "function", "function": {"name": "get_time", "parameters": {}}}]
    message = toolparse.parse(HERMES_TWO_CALLS, "hermes", tools=tools, engine=engine)
    assert message.tool_calls == []
    assert [e.kind for e in message.errors] == ["unknown_tool", "unknown_tool"]


# --- the events -----------------------------------------------------------------------------

EVENT_TYPE_STRINGS = {
    ReasoningDelta: "reasoning.delta",
    ContentDelta: "content.delta",
    ToolCallStart: "tool_call.start",
    ToolCallArgsDelta: "tool_call.arguments.delta",
    ToolCallEnd: "tool_call.end",
    ParseError: "error",
    End: "end",
}
SAMPLE_CALL = ToolCall(0, "call_1", "get_weather", {"city": "Oslo"}, '{"city": "Oslo"}')
SAMPLE_EVENTS = [
    ReasoningDelta("hmm"),
    ContentDelta("Hi 🙂"),
    ToolCallStart(0, "call_1", "get_weather"),
    ToolCallArgsDelta(0, '{"city": "Oslo"}'),
    ToolCallEnd(0, SAMPLE_CALL),
    ParseError("incomplete", "the stream ended inside a tool call", 1, 42),
    End("stop", Message(content="Hi", tool_calls=[SAMPLE_CALL], finish_reason="tool_calls")),
]


@pytest.mark.parametrize(("event_type", "type_string"), list(EVENT_TYPE_STRINGS.items()))
def test_event_type_strings(event_type: type, type_string: str) -> None:
    assert event_type.type == type_string
    sample = next(e for e in SAMPLE_EVENTS if type(e) is event_type)
    assert sample.type == type_string


def kind_and_fields(event: Any) -> tuple:
    match event:
        case ReasoningDelta(text):
            return ("reasoning", text)
        case ContentDelta(text):
            return ("content", text)
        case ToolCallStart(index, call_id, name):
            return ("start", index, call_id, name)
        case ToolCallArgsDelta(index, text):
            return ("args", index, text)
        case ToolCallEnd(index, ToolCall(name=name, arguments=arguments)):
            return ("end", index, name, arguments)
        case ParseError(kind, message, index, offset):
            return ("error", kind, message, index, offset)
        case End(finish_reason, Message(content=content)):
            return ("done", finish_reason, content)
    return ("no match",)


def test_events_are_pattern_matchable() -> None:
    assert [kind_and_fields(e) for e in SAMPLE_EVENTS] == [
        ("reasoning", "hmm"),
        ("content", "Hi 🙂"),
        ("start", 0, "call_1", "get_weather"),
        ("args", 0, '{"city": "Oslo"}'),
        ("end", 0, "get_weather", {"city": "Oslo"}),
        ("error", "incomplete", "the stream ended inside a tool call", 1, 42),
        ("done", "stop", "Hi"),
    ]


@by_engine
def test_engine_events_are_pattern_matchable(engine: str) -> None:
    events = run_events(StreamParser("qwen3", engine=engine), CUT_INSIDE_A_CALL["qwen3"].encode())
    shapes = [kind_and_fields(e)[0] for e in events]
    assert shapes == ["reasoning", "start", "args", "error", "done"]


def repr_namespace() -> dict[str, Any]:
    return {name: getattr(toolparse, name) for name in toolparse.__all__}


@pytest.mark.parametrize("event", SAMPLE_EVENTS, ids=lambda e: type(e).__name__)
def test_event_repr_reads_as_its_constructor(event: Any) -> None:
    text = repr(event)
    assert text.startswith(f"{type(event).__name__}(")
    for field in type(event).__match_args__:
        assert f"{field}=" in text
    assert eval(text, repr_namespace()) == event


@by_engine
@pytest.mark.parametrize("fixture", FIXTURES[::5], ids=FIXTURE_IDS[::5])
def test_engine_event_reprs_read_back(fixture: Fixture, engine: str) -> None:
    for event in fixture.events(engine):
        assert eval(repr(event), repr_namespace()) == event


@pytest.mark.parametrize("event", SAMPLE_EVENTS, ids=lambda e: type(e).__name__)
def test_events_compare_and_hash_by_value(event: Any) -> None:
    copy = eval(repr(event), repr_namespace())
    assert copy == event
    assert hash(copy) == hash(event)
    assert event != ContentDelta("something else")


@pytest.mark.parametrize("event", SAMPLE_EVENTS, ids=lambda e: type(e).__name__)
def test_events_are_immutable(event: Any) -> None:
    field = type(event).__match_args__[0]
    before = getattr(event, field)
    with pytest.raises(AttributeError):
        setattr(event, field, None)
    assert getattr(event, field) == before


@by_engine
def test_an_id_after_the_announcement_does_not_change_the_call_id(engine: str) -> None:
    from toolparse.formats import Format
    from toolparse.grammar import Grammar, cut, eof, json_call, seq

    body = seq(lit("<c>"), cut(), tag("tool_call", seq(json_call(id_keys=("id",)), lit("</c>"))))
    fmt = Format(name="ids_last", grammar=Grammar({"start": seq(body, eof())}, {"start": "start"}))
    text = '<c>{"name": "f", "arguments": {"a": 1}, "id": "ID7"}</c>'
    events = run_events(StreamParser(fmt, engine=engine, seed=3), text.encode())
    start = next(e for e in events if isinstance(e, ToolCallStart))
    end = next(e for e in events if isinstance(e, ToolCallEnd))
    assert start.id == end.call.id
    assert start.id.startswith("call_")  # generated: the carried id came after the arguments


# --- cancellation ---------------------------------------------------------------------------


@by_engine
@pytest.mark.parametrize("cut", [0, 5, 20, 45, 60])
def test_cancel_gives_what_was_emitted_and_never_an_open_call(engine: str, cut: int) -> None:
    parser = StreamParser("hermes", engine=engine)
    emitted = parser.feed(HERMES_TWO_CALLS[:cut])
    events = parser.finish("cancelled")
    end = events[-1]
    assert isinstance(end, End)
    assert end.finish_reason == end.message.finish_reason == "cancelled"
    shown = "".join(e.text for e in emitted + events if isinstance(e, ContentDelta))
    assert (end.message.content or "") == shown
    ended = [e.call for e in emitted + events if isinstance(e, ToolCallEnd)]
    assert end.message.tool_calls == ended
    started = {e.index for e in emitted + events if isinstance(e, ToolCallStart)}
    open_calls = started - {c.index for c in ended}
    errors = [e for e in events if isinstance(e, ParseError)]
    # an announced call that never ended is reported with its index (one not yet
    # announced, without): never delivered either way
    assert [e.index for e in errors if e.index is not None] == sorted(open_calls)
    assert all(e.kind == "incomplete" for e in errors)


@by_engine
def test_cancel_inside_code_that_runs_to_the_end_is_incomplete(engine: str) -> None:
    parser = StreamParser("functionary_v3_1", engine=engine)
    parser.feed("<|python_tag|>print(sum(range(10)))")
    assert parser.finish("cancelled")[-1].message.tool_calls == []
    assert [e.kind for e in parser.message.errors] == ["incomplete"]
    parser.reset()
    parser.feed("<|python_tag|>print(sum(range(10)))")
    (call,) = parser.finish("stop")[-1].message.tool_calls
    assert call.arguments == {"code": "print(sum(range(10)))"}
