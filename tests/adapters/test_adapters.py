"""The adapters' framework-free layer (toolparse.adapters._translate), over every format's
fixtures: what a vLLM or SGLang adapter streams must add up to what toolparse.parse gives.

The text is fed as str pieces (serving frameworks hand parsers decoded text), one
character at a time, in random pieces, and whole.
"""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toolparse
from engines import FIXTURE_IDS, FIXTURES, Fixture, errors_after_reasoning
from toolparse.adapters import _translate as tr
from toolparse.adapters._translate import (
    CallDelta,
    Delta,
    ReasoningEndScanner,
    ReasoningMarkers,
    ReasoningSplitter,
    ResponseTranslator,
    adapter_names,
    reasoning_in_prompt_from,
    reasoning_markers,
    reasoning_prefix_format,
    split_reasoning,
    tools_as_dicts,
)

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]
QWEN3 = (
    "<think>\nParis, then Oslo.\n</think>\n\nLet me check. <tool_call>\n"
    '{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n<tool_call>\n'
    '{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>'
)


def pieces(text: str, mode: str | int) -> Iterator[str]:
    """text in str pieces: "chars" (one character each), "whole", or a random seed."""
    if mode == "whole":
        yield text
    elif mode == "chars":
        yield from text
    else:
        rng = random.Random(mode)
        k = 0
        while k < len(text):
            size = rng.randint(1, 12)
            yield text[k : k + size]
            k += size


@dataclass
class Stream:
    """What a client accumulates from the deltas of one response."""

    reasoning: str = ""
    content: str = ""
    calls: dict[int, dict[str, Any]] = field(default_factory=dict)
    order: list[int] = field(default_factory=list)
    errors: list[toolparse.ParseError] = field(default_factory=list)
    repaired: list[int] = field(default_factory=list)
    rest: str = ""  # what a pair handed the tool side

    def add(self, delta: Delta) -> None:
        self.reasoning += delta.reasoning
        self.content += delta.content
        self.errors += delta.errors
        self.repaired += delta.repaired
        indexes = [piece.index for piece in delta.calls]
        # One piece per call per delta: a client that reads tool_calls[0] of each chunk
        # misses nothing.
        assert len(indexes) == len(set(indexes)), delta.calls
        for piece in delta.calls:
            self.add_call(piece)

    def add_call(self, piece: CallDelta) -> None:
        call = self.calls.get(piece.index)
        if call is None:
            # A call's first piece carries its id and name, and the first arguments
            # where the same feed brought them.
            assert piece.id and piece.name, piece
            self.calls[piece.index] = {"id": piece.id, "name": piece.name, "arguments": ""}
            self.order.append(piece.index)
        else:
            assert piece.id is None and piece.name is None and piece.arguments, piece
        call = self.calls[piece.index]
        call["arguments"] += piece.arguments


def text_of(fixture: Fixture) -> str:
    return fixture.raw.decode("utf-8")


def translate(
    fixture: Fixture, mode: str | int, **options: Any
) -> tuple[Stream, ResponseTranslator]:
    translator = ResponseTranslator(
        fixture.format, tools=fixture.tools, **fixture.options, **options
    )
    stream = Stream()
    for piece in pieces(text_of(fixture), mode):
        stream.add(translator.feed(piece))
    stream.add(translator.finish(fixture.finish))
    return stream, translator


def expected_calls(message: toolparse.Message) -> list[dict[str, Any]]:
    return [{"id": c.id, "name": c.name, "arguments": c.arguments_json} for c in message.tool_calls]


def check_against_message(stream: Stream, translator: ResponseTranslator, held: bool) -> None:
    message = translator.message
    assert stream.content == (message.content or "")
    assert stream.reasoning == (message.reasoning_content or "")
    assert stream.order == list(range(len(stream.calls)))  # numbered in order, no gap
    failed = {r.index for r in translator.calls if r.failed}
    if held:
        assert not failed  # a held call that fails is never sent
    sent = [stream.calls[k] for k in stream.order if k not in failed]
    assert sent == expected_calls(message)
    for k in failed:  # what went out of a failed call is a prefix of nothing more
        assert stream.calls[k]["arguments"] == translator.calls[k].arguments
    assert [e.kind for e in stream.errors] == [e.kind for e in message.errors]
    assert stream.repaired == [k for k, c in enumerate(translator.calls) if c.repaired]
    assert [translator.calls[k].repaired for k in stream.order if k not in failed] == [
        c.repaired for c in message.tool_calls
    ]
    # The bookkeeping the frameworks read at the end: nothing left unsent.
    assert translator.streamed_args_for_tool == [stream.calls[k]["arguments"] for k in stream.order]
    for sent_args, record in zip(
        translator.streamed_args_for_tool, translator.prev_tool_call_arr, strict=True
    ):
        assert record["arguments"] == sent_args
    assert translator.current_tool_id == len(stream.calls) - 1
    assert translator.current_tool_name_sent == bool(stream.calls)


# -- ResponseTranslator over every fixture ------------------------------------------------


@pytest.mark.parametrize("fixture", FIXTURES, ids=FIXTURE_IDS)
def test_streamed_deltas_add_up_to_the_message(fixture: Fixture) -> None:
    whole = summary(fixture.parse("native"))
    for mode in ("chars", "whole", 7):
        stream, translator = translate(fixture, mode)
        check_against_message(stream, translator, held=False)
        assert summary(translator.message) == whole, mode


def summary(message: toolparse.Message) -> tuple[Any, ...]:
    return (
        message.content,
        message.reasoning_content,
        [(c.name, c.arguments_json, c.repaired) for c in message.tool_calls],
        [e.kind for e in message.errors],
    )


@pytest.mark.parametrize("fixture", FIXTURES, ids=FIXTURE_IDS)
def test_held_calls_go_out_whole_and_only_when_complete(fixture: Fixture) -> None:
    for mode in ("chars", 11):
        stream, translator = translate(fixture, mode, stream_arguments=False)
        check_against_message(stream, translator, held=True)


def test_a_call_goes_out_as_name_then_argument_fragments() -> None:
    translator = ResponseTranslator("qwen3", tools=TOOLS)
    deltas = [translator.feed(piece) for piece in pieces(QWEN3, "chars")]
    deltas.append(translator.finish())
    firsts = [p for d in deltas for p in d.calls if p.name is not None]
    assert [(p.index, p.name) for p in firsts] == [(0, "get_weather"), (1, "get_weather")]
    assert all(p.id and p.id.startswith("call_") for p in firsts)
    assert firsts[0].id != firsts[1].id
    fragments = [p.arguments for d in deltas for p in d.calls if p.index == 0]
    assert len(fragments) > 5 and "".join(fragments) == '{"city": "Paris"}'


def test_one_feed_sends_one_call_in_one_entry() -> None:
    """The name and the first arguments of a call that one feed brings go out in one
    entry, and a delta carries one call: two entries in a chunk break a client that reads
    ``delta.tool_calls[0]`` (it would lose the arguments' first characters, or the next
    call).  The next call goes out with the next feed, even an empty one; finish sends
    all that waits, one entry per call."""
    translator = ResponseTranslator("qwen3", tools=TOOLS)
    delta = translator.feed(QWEN3)
    assert [(p.index, p.name, p.arguments) for p in delta.calls] == [
        (0, "get_weather", '{"city": "Paris"}')
    ]
    assert delta.reasoning == "\nParis, then Oslo.\n" and delta.content == "Let me check. "
    assert [(p.index, p.name, p.arguments) for p in translator.feed("").calls] == [
        (1, "get_weather", '{"city": "Oslo"}')
    ]
    assert not translator.finish().calls
    translator = ResponseTranslator("qwen3", tools=TOOLS)
    translator.feed(QWEN3)
    assert [(p.index, p.name, p.arguments) for p in translator.finish().calls] == [
        (1, "get_weather", '{"city": "Oslo"}')
    ]
    three = (
        QWEN3 + '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Rome"}}\n</tool_call>'
    )
    translator = ResponseTranslator("qwen3", tools=TOOLS)
    assert [p.index for p in translator.feed(three).calls] == [0]
    assert [(p.index, p.arguments) for p in translator.finish().calls] == [
        (1, '{"city": "Oslo"}'),
        (2, '{"city": "Rome"}'),
    ]
    translator = ResponseTranslator("qwen3", tools=TOOLS)
    delta = translator.feed('<tool_call>\n{"name": "get_weather", "arguments": {"ci')
    assert [(p.index, p.name, p.arguments) for p in delta.calls] == [(0, "get_weather", '{"ci')]


def test_an_unknown_tool_is_an_error_and_leaves_no_gap() -> None:
    text = (
        '<tool_call>{"name": "launch", "arguments": {}}</tool_call>'
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Rome"}}</tool_call>'
    )
    for held in (False, True):
        translator = ResponseTranslator("hermes", tools=TOOLS, stream_arguments=not held)
        stream = Stream()
        for piece in pieces(text, 3):
            stream.add(translator.feed(piece))
        stream.add(translator.finish())
        assert [e.kind for e in stream.errors] == ["unknown_tool"]
        assert [(k, c["name"]) for k, c in stream.calls.items()] == [(0, "get_weather")]


def test_a_call_cut_off_fails_after_its_name_went_out() -> None:
    text = '<tool_call>{"name": "get_weather", "arguments": {"city": "Pa'
    translator = ResponseTranslator("hermes", tools=TOOLS)
    stream = Stream()
    for piece in pieces(text, "chars"):
        stream.add(translator.feed(piece))
    stream.add(translator.finish("length"))
    assert [e.kind for e in stream.errors] == ["incomplete"]
    assert stream.calls == {
        0: {"id": translator.calls[0].id, "name": "get_weather", "arguments": '{"city": "Pa'}
    }
    assert translator.calls[0].failed and not translator.calls[0].ended
    assert translator.message.tool_calls == []

    held = ResponseTranslator("hermes", tools=TOOLS, stream_arguments=False)
    out = Stream()
    out.add(held.feed(text))
    out.add(held.finish("length"))
    assert out.calls == {} and [e.kind for e in out.errors] == ["incomplete"]


def test_repaired_calls_are_reported() -> None:
    text = '```json\n{"name": "get_weather", "arguments": {\'city\': \'Oslo\',}}\n```'
    translator = ResponseTranslator("markdown_json", tools=TOOLS, repair=True)
    stream = Stream()
    for piece in pieces(text, 5):
        stream.add(translator.feed(piece))
    stream.add(translator.finish())
    assert stream.repaired == [0] == translator.repaired
    assert json.loads(stream.calls[0]["arguments"]) == {"city": "Oslo"}


def test_finish_is_once_and_feeding_after_it_is_an_error() -> None:
    translator = ResponseTranslator("hermes")
    assert translator.feed("Hi").content == "Hi"
    assert not translator.finish()
    assert translator.finished and not translator.finish()
    with pytest.raises(RuntimeError):
        translator.feed("more")


def test_empty_feeds_are_nothing() -> None:
    translator = ResponseTranslator("qwen3")
    assert not translator.feed("")
    assert translator.current_tool_id == -1 and not translator.current_tool_name_sent
    assert translator.prev_tool_call_arr == [] and translator.streamed_args_for_tool == []


@settings(max_examples=60, deadline=None)
@given(
    fixture=st.sampled_from([f for f in FIXTURES if f.expected["message"]["tool_calls"]]),
    cuts=st.lists(st.integers(min_value=0, max_value=10_000), max_size=12),
)
def test_any_split_gives_the_same_stream(fixture: Fixture, cuts: list[int]) -> None:
    text = text_of(fixture)
    bounds = sorted({c % (len(text) + 1) for c in cuts} | {0, len(text)})
    translator = ResponseTranslator(fixture.format, tools=fixture.tools, **fixture.options)
    stream = Stream()
    for a, b in itertools.pairwise(bounds):
        stream.add(translator.feed(text[a:b]))
    stream.add(translator.finish(fixture.finish))
    check_against_message(stream, translator, held=False)


# -- the reasoning block, and the pair (reasoning parser, then tool parser) --------------


def whole_reasoning(fixture: Fixture) -> bool | None:
    value = fixture.options.get("reasoning_in_prompt")
    return None if value is None else bool(value)


def tool_options(fixture: Fixture) -> dict[str, Any]:
    return {k: v for k, v in fixture.options.items() if k != "reasoning_in_prompt"}


@pytest.mark.parametrize("fixture", FIXTURES, ids=FIXTURE_IDS)
def test_the_split_then_the_rest_is_the_whole_parse(fixture: Fixture) -> None:
    """A non-streamed pair: the reasoning parser reports the whole message's reasoning,
    and the tool parser reads the rest it hands on into the message's content and
    calls (a rest with no call is the content itself, so no markup reaches a client
    that gets it unread)."""
    reasoning, rest = split_reasoning(
        text_of(fixture), fixture.format, reasoning_in_prompt=whole_reasoning(fixture)
    )
    tail = toolparse.parse(
        rest or "",
        fixture.format,
        tools=fixture.tools,
        reasoning_in_prompt=False,
        finish_reason=fixture.finish,
        **tool_options(fixture),
    )
    whole = fixture.parse("native")
    assert reasoning == (whole.reasoning_content or None)
    assert tail.content == whole.content
    if not (whole.tool_calls or whole.errors):
        assert rest == whole.content
    assert [(c.name, c.arguments) for c in tail.tool_calls] == [
        (c.name, c.arguments) for c in whole.tool_calls
    ]
    assert [e.kind for e in tail.errors] == errors_after_reasoning(whole, fixture.raw, rest)


def pair(
    fixture: Fixture, mode: str | int, stream_arguments: bool = True
) -> tuple[Stream, ResponseTranslator]:
    """The way vLLM composes a reasoning parser and a tool parser (engine-based, only
    deltas), and SGLang its two detectors: the reasoning side until it has ended, then
    the text after the reasoning to the tool side."""
    splitter = ReasoningSplitter(fixture.format, reasoning_in_prompt=whole_reasoning(fixture))
    translator = ResponseTranslator(
        fixture.format,
        tools=fixture.tools,
        reasoning_in_prompt=False,
        stream_arguments=stream_arguments,
        **tool_options(fixture),
    )
    stream = Stream()

    def tool_side(text: str) -> None:
        stream.rest += text
        stream.add(translator.feed(text))

    for piece in pieces(text_of(fixture), mode):
        if splitter.ended:
            tool_side(piece)
            continue
        delta = splitter.feed(piece)
        stream.reasoning += delta.reasoning
        if splitter.ended:
            tool_side(delta.content + splitter.finish().content)
    if not splitter.ended:
        last = splitter.finish()
        stream.reasoning += last.reasoning
        tool_side(last.content)
    stream.add(translator.finish(fixture.finish))
    return stream, translator


# (the chunkings and both ways of handing calls over in one test per fixture: the work is
# the same, without a test's overhead for each combination)
@pytest.mark.parametrize("fixture", FIXTURES, ids=FIXTURE_IDS)
def test_the_pair_streams_the_whole_message(fixture: Fixture) -> None:
    whole = fixture.parse("native")
    for mode in ("chars", 5, "whole"):
        for held in (False, True):
            way = f"mode={mode} held={held}"
            stream, translator = pair(fixture, mode, stream_arguments=not held)
            assert stream.reasoning == (whole.reasoning_content or ""), way
            assert stream.content == (whole.content or ""), way
            failed = {r.index for r in translator.calls if r.failed}
            assert not (held and failed), way
            sent = [stream.calls[k] for k in stream.order if k not in failed]
            assert [(c["name"], c["arguments"]) for c in sent] == [
                (c.name, c.arguments_json) for c in whole.tool_calls
            ], way
            assert [e.kind for e in stream.errors] == errors_after_reasoning(
                whole, fixture.raw, stream.rest
            ), way


def test_the_splitter_ends_with_the_first_text_after_the_reasoning() -> None:
    splitter = ReasoningSplitter("qwen3")
    assert splitter.feed("<think>a").reasoning == "a" and not splitter.ended
    assert splitter.feed("b</think>\n\n").reasoning == "b" and not splitter.ended
    delta = splitter.feed("<tool_call>")
    assert delta.content == "<tool_call>" and splitter.ended
    assert not splitter.finish() and splitter.finished
    assert not splitter.feed("more")


def test_a_call_marker_ends_unfinished_reasoning_and_stays_with_the_rest() -> None:
    reasoning, rest = split_reasoning("<think>let me call<tool_call>{}</tool_call>", "qwen3")
    assert (reasoning, rest) == ("let me call", "<tool_call>{}</tool_call>")
    # where a call marker is reasoning text, it stays in the reasoning
    reasoning, rest = split_reasoning("<think>x <tool_call> y</think>Hi", "hermes")
    assert (reasoning, rest) == ("x <tool_call> y", "Hi")


def test_reasoning_opened_by_the_template() -> None:
    assert split_reasoning("plan</think>answer", "deepseek_r1") == ("plan", "answer")
    assert split_reasoning("answer", "deepseek_r1", reasoning_in_prompt=False) == (
        None,
        "answer",
    )
    # a format the template never opens a block for ignores the request
    assert split_reasoning("plain", "hermes", reasoning_in_prompt=True) == (None, "plain")


def test_a_format_without_reasoning_passes_everything_on() -> None:
    text = '<|python_tag|>{"name": "f", "parameters": {}}'
    assert split_reasoning(text, "llama3_json") == (None, text)
    assert reasoning_prefix_format("llama3_json").grammar.entries == {"start": "start"}
    assert reasoning_prefix_format("qwen3") is reasoning_prefix_format("qwen3_json")


# -- markers and token ids -----------------------------------------------------------------


def test_reasoning_markers_come_from_the_grammar() -> None:
    assert reasoning_markers("qwen3") == ReasoningMarkers(
        ("<think>",), ("</think>",), ("<tool_call>",)
    )
    assert reasoning_markers("deepseek_r1") == ReasoningMarkers(("<think>",), ("</think>",), ())
    assert reasoning_markers("seed_oss").closing == ("</seed:think>",)
    assert reasoning_markers("mistral").opening == ("[THINK]",)
    assert reasoning_markers("hermes").implicit == ()  # a call there is reasoning text
    assert reasoning_markers("llama3_json") == ReasoningMarkers()
    for fmt in toolparse.formats():
        markers = reasoning_markers(fmt)
        if "think" in fmt.grammar.rules:
            assert markers.opening and markers.closing, fmt.name
            assert not set(markers.opening) & set(markers.closing), fmt.name


def test_the_token_scanner() -> None:
    vocab = {"<think>": 1, "</think>": 2, "<tool_call>": 3, "a": 4}
    scanner = ReasoningEndScanner(reasoning_markers("qwen3"), vocab)
    assert scanner.usable
    assert scanner.is_reasoning_end([4, 1, 4, 2, 4])
    assert not scanner.is_reasoning_end([2, 4, 1, 4])  # a block opened again
    assert not scanner.is_reasoning_end([4, 4])
    assert scanner.ends_in([4, 2]) and scanner.ends_in([3]) and not scanner.ends_in([4, 1])
    assert scanner.content_ids([1, 4, 2, 4, 4]) == [4, 4]
    assert scanner.content_ids([1, 4, 3, 4]) == [3, 4]  # the call marker is content
    assert scanner.content_ids([4, 4]) == [4, 4]
    multi = ReasoningEndScanner(reasoning_markers("qwen3"), {"a": 4})
    assert not multi.usable and not multi.is_reasoning_end([4]) and not multi.ends_in([4])


# -- small pieces ------------------------------------------------------------------------


def test_thinking_switches() -> None:
    assert reasoning_in_prompt_from(None) is None
    assert reasoning_in_prompt_from({"enable_thinking": True}) is None
    assert reasoning_in_prompt_from({"enable_thinking": False}) is False
    assert reasoning_in_prompt_from({"thinking": False}) is False


def test_names_cover_every_format_and_alias() -> None:
    names = adapter_names()
    for fmt in toolparse.formats():
        for name in (fmt.name, *fmt.aliases):
            assert names[tr.PREFIX + name] == fmt.name
    assert names["toolparse_qwen25"] == "hermes"


class Model:
    def __init__(self, **data: Any) -> None:
        self.data = data

    def model_dump(self, exclude_none: bool = False) -> dict[str, Any]:
        return {k: v for k, v in self.data.items() if v is not None or not exclude_none}


def test_tools_as_dicts() -> None:
    assert tools_as_dicts(None) is None and tools_as_dicts([]) is None
    function = {"name": "f", "parameters": {"type": "object"}}
    tools: Sequence[Any] = [Model(type="function", function=function, extra=None), TOOLS[0]]
    assert tools_as_dicts(tools) == [{"type": "function", "function": function}, TOOLS[0]]
    with pytest.raises(TypeError):
        tools_as_dicts([object()])


# -- what a reasoning parser hands on, and whether the template opened the block -------


@pytest.mark.parametrize("fixture", FIXTURES, ids=FIXTURE_IDS)
def test_the_clean_split_is_the_message_without_its_calls(fixture: Fixture) -> None:
    """With no tool parser after it, a reasoning parser hands the client the content as
    the format reads it, never markup; calls are left out (and counted)."""
    splitter = ReasoningSplitter(
        fixture.format, reasoning_in_prompt=whole_reasoning(fixture), mode="clean"
    )
    reasoning = content = ""
    for piece in pieces(text_of(fixture), 5):
        delta = splitter.feed(piece)
        reasoning, content = reasoning + delta.reasoning, content + delta.content
        assert not splitter.ended
    last = splitter.finish()
    whole = toolparse.parse(
        text_of(fixture), fixture.format, reasoning_in_prompt=whole_reasoning(fixture)
    )
    assert reasoning + last.reasoning == (whole.reasoning_content or "")
    assert content + last.content == (whole.content or "")
    starts = toolparse.StreamParser(fixture.format, reasoning_in_prompt=whole_reasoning(fixture))
    events = starts.feed(fixture.raw) + starts.finish()
    assert splitter.calls_left_out == sum(isinstance(e, toolparse.ToolCallStart) for e in events)


@pytest.mark.parametrize("fixture", FIXTURES, ids=FIXTURE_IDS)
def test_the_rest_with_all_reasoning(fixture: Fixture) -> None:
    """For a stack whose tool-parser results have no reasoning field (SGLang): the raw
    rest as the plain split gives it, and the reasoning of the whole output."""
    options = {"reasoning_in_prompt": whole_reasoning(fixture)}
    both = ReasoningSplitter(fixture.format, mode="rest_and_reasoning", **options)
    plain = ReasoningSplitter(fixture.format, **options)
    got = [both.feed(p) for p in pieces(text_of(fixture), 3)] + [both.finish()]
    rest = [plain.feed(p) for p in pieces(text_of(fixture), 3)] + [plain.finish()]
    whole = toolparse.parse(text_of(fixture), fixture.format, **options)
    assert "".join(d.reasoning for d in got) == (whole.reasoning_content or "")
    assert "".join(d.content for d in got) == "".join(d.content for d in rest)


def test_a_tool_parser_alone_passes_a_leading_block_through() -> None:
    text = (
        "<think>\nWeather first.\n</think>\n\nChecking. <tool_call>\n"
        '{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    )
    message = toolparse.parse(text, tr.passthrough_format("qwen3"), tools=TOOLS)
    assert message.content == "<think>\nWeather first.\n</think>\n\nChecking. "
    assert message.reasoning_content is None
    assert [(c.name, c.arguments) for c in message.tool_calls] == [
        ("get_weather", {"city": "Paris"})
    ]
    # a format whose reasoning is structure, not a leading block, is left as it is
    assert tr.passthrough_format("gpt_oss") is toolparse.get_format("gpt_oss")
    assert tr.passthrough_format("llama3_json").name == "llama3_json"


def test_the_prompt_tells_whether_the_template_opened_the_block() -> None:
    assert tr.reasoning_open_at("<|im_start|>assistant\n<think>\n", "qwen3") is True
    assistant = "<\uff5cAssistant\uff5c>"  # DeepSeek's assistant marker
    assert tr.reasoning_open_at(assistant + "<think>", "deepseek_v31") is True
    assert tr.reasoning_open_at(assistant + "</think>", "deepseek_v31") is False
    assert tr.reasoning_open_at("<|im_start|>assistant\n<think>\n\n</think>\n\n", "qwen3") is False
    assert tr.reasoning_open_at("<|im_start|>assistant\n", "qwen3") is False
    # a format whose reasoning is a channel, not a leading block: its own openers
    assert tr.reasoning_open_at("<|start|>assistant<|channel|>analysis<|message|>", "gpt_oss")
    assert tr.reasoning_open_at("<|start|>assistant", "gpt_oss") is False
    assert tr.reasoning_open_at("<|im_start|>assistant\n", "llama3_json") is None


def test_the_strongest_evidence_decides() -> None:
    decide = tr.decide_reasoning_in_prompt
    assert decide() is None
    assert decide(name_default=True) is True
    assert decide(template_kwargs={"thinking": False}, name_default=True) is False
    assert decide(prompt_open=True, template_kwargs={"thinking": False}) is True
    assert decide(forced=False, prompt_open=True) is False
    assert tr.template_default("qwen3-thinking", None) is True
    assert tr.template_default("glm47", {"enable_thinking": False}) is False
    assert tr.template_default("glm47", {"enable_thinking": True}) is True
    assert tr.template_default("qwen3", None) is None


def test_reasoning_tokens_are_counted_by_what_they_became() -> None:
    counter = tr.ReasoningTokenCounter()
    splitter = ReasoningSplitter("qwen3")
    tokens = ["<think>", "\nPlan", " it", "\n</", "think>", "\n\n", "Sure", "."]
    for token in tokens:
        counter.add(1, splitter.feed(token), marker=token == "<think>")
    counter.add(0, splitter.finish())
    # the plan's three tokens are reasoning ("\n</" among them: its newline is
    # reasoning text), the opener a marker; "think>" goes with what follows the closer
    assert (counter.count, counter.tokens) == (3, len(tokens))
