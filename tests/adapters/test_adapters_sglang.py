"""toolparse.adapters.sglang with SGLang's own classes: FunctionCallParser and
ReasoningParser built from the registered names, fed the way its chat serving feeds them
(reasoning first, its normal text to the function-call parser), over every format's
fixtures.  Skipped where SGLang is not importable (docs/adapters.md)."""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from typing import Any

import pytest

import toolparse
from engines import FIXTURE_IDS, FIXTURES, Fixture, errors_after_reasoning

try:
    from sglang.srt.entrypoints.openai.protocol import Tool
    from sglang.srt.function_call.function_call_parser import FunctionCallParser
    from sglang.srt.parser.reasoning_parser import ReasoningParser

    from toolparse.adapters import sglang as adapter
except Exception as error:  # not installed, or an SGLang this adapter does not know
    if os.environ.get("TOOLPARSE_REQUIRE_STACKS") == "1":  # CI installs the stacks
        raise
    pytest.skip(
        f"SGLang is not importable here ({type(error).__name__}: {error}); "
        "see docs/adapters.md to run this group",
        allow_module_level=True,
    )


def pieces(text: str, mode: str | int) -> Iterator[str]:
    if mode == "chars":
        yield from text
    else:
        rng = random.Random(mode)
        k = 0
        while k < len(text):
            size = rng.randint(1, 12)
            yield text[k : k + size]
            k += size


def name_for(fixture: Fixture) -> str:
    """The registered name, or (for fixture options) one registered for this test."""
    name = "toolparse_" + fixture.format
    options = fixture.options
    if not options:
        return name
    variant = f"{name}.{abs(hash(tuple(sorted(options.items()))))}"
    FunctionCallParser.ToolCallParserEnum[variant] = type(
        "Detector",
        (adapter.detector_class(fixture.format),),
        {"repair": bool(options.get("repair"))},
    )
    ReasoningParser.DetectorMap[variant] = type(
        "ReasoningDetector",
        (adapter.reasoning_detector_class(fixture.format),),
        {"toolparse_reasoning_in_prompt": options.get("reasoning_in_prompt")},
    )
    return variant


def expected(fixture: Fixture) -> toolparse.Message:
    # SGLang does not tell its detectors why a stream ended: they finish with "stop".
    return toolparse.parse(
        fixture.raw, fixture.format, tools=fixture.tools, finish_reason="stop", **fixture.options
    )


def tools_of(fixture: Fixture) -> list[Any]:
    return [Tool(**tool) for tool in fixture.tools]


@pytest.mark.parametrize("fixture", FIXTURES, ids=FIXTURE_IDS)
@pytest.mark.parametrize("mode", ["chars", 3])
def test_the_serving_order_streams_the_message(fixture: Fixture, mode: str | int) -> None:
    name = name_for(fixture)
    # As SGLang's chat serving builds them when a tool-call parser reads the request.
    reasoning_parser = ReasoningParser(name, stream_reasoning=True, tool_call_parser_active=True)
    calls_parser = FunctionCallParser(tools_of(fixture), name)
    out: dict[str, Any] = {"reasoning": "", "content": "", "calls": {}}

    def tool_side(normal: str, calls: list[Any]) -> None:
        out["content"] += normal
        for item in calls:
            if item.tool_index not in out["calls"]:
                assert item.name  # the name goes first, with any arguments that came along
                out["calls"][item.tool_index] = {"name": item.name, "arguments": ""}
            else:
                assert item.name is None and item.parameters
            out["calls"][item.tool_index]["arguments"] += item.parameters

    for piece in pieces(fixture.raw.decode("utf-8"), mode):
        reasoning, normal = reasoning_parser.parse_stream_chunk(piece)
        out["reasoning"] += reasoning or ""
        if normal:
            tool_side(*calls_parser.parse_stream_chunk(normal))
    reasoning, normal = reasoning_parser.parse_stream_end()
    out["reasoning"] += reasoning or ""
    if normal:
        tool_side(*calls_parser.parse_stream_chunk(normal))
    tool_side(*calls_parser.parse_stream_end())

    message = expected(fixture)
    # All of it, also reasoning after the opening block (gpt-oss analysis channels
    # between calls), which SGLang's function-call results have no field for.
    assert out["reasoning"] == (message.reasoning_content or "")
    assert out["content"] == (message.content or "")
    streamed = [(c["name"], c["arguments"]) for _, c in sorted(out["calls"].items())]
    delivered = [(c.name, c.arguments_json) for c in message.tool_calls]
    if not message.errors:
        assert streamed == delivered
    else:  # a call that failed after its name went out stays with the client
        it = iter(streamed)
        assert all(call in it for call in delivered)
    detector = calls_parser.detector
    assert detector.streamed_args_for_tool == [c["arguments"] for c in out["calls"].values()]
    assert [c["arguments"] for c in detector.prev_tool_call_arr] == detector.streamed_args_for_tool


@pytest.mark.parametrize("fixture", FIXTURES, ids=FIXTURE_IDS)
def test_the_whole_output_at_once(fixture: Fixture) -> None:
    name = name_for(fixture)
    reasoning_parser = ReasoningParser(name, tool_call_parser_active=True)
    reasoning, text = reasoning_parser.parse_non_stream(fixture.raw.decode("utf-8"))
    calls_parser = FunctionCallParser(tools_of(fixture), name)
    message = expected(fixture)
    assert (reasoning or None) == (message.reasoning_content or None)
    calls = []
    if calls_parser.has_tool_call(text):  # SGLang parses only then
        normal, calls = calls_parser.parse_non_stream(text)
        assert (normal or None) == message.content
    else:  # SGLang hands the text to the client as it is: no markup in it
        assert not message.tool_calls
        assert not errors_after_reasoning(message, fixture.raw, text)
        assert (text or None) == message.content
    assert [(c.tool_index, c.name, c.parameters) for c in calls] == [
        (k, c.name, c.arguments_json) for k, c in enumerate(message.tool_calls)
    ]


def test_every_name_is_registered() -> None:
    for name, format_name in adapter.adapter_names().items():
        assert FunctionCallParser.ToolCallParserEnum[name].toolparse_format == format_name
        assert ReasoningParser.DetectorMap[name].toolparse_format == format_name


def test_required_tool_choice_falls_back_to_the_json_schema() -> None:
    tool = Tool(type="function", function={"name": "f", "parameters": {"type": "object"}})
    parser = FunctionCallParser([tool], "toolparse_hermes")
    assert not parser.owns_tool_format()
    kind, _ = parser.get_structure_constraint("required")
    assert kind == "json_schema"


def test_thinking_off_reads_no_reasoning_block() -> None:
    assert ReasoningParser("toolparse_deepseek_r1").parse_non_stream("plan</think>answer") == (
        "plan",
        "answer",
    )
    off = ReasoningParser("toolparse_deepseek_r1", force_reasoning=False)
    assert off.parse_non_stream("answer") == ("", "answer")


def test_held_reasoning_comes_when_the_block_ends() -> None:
    parser = ReasoningParser("toolparse_qwen3", stream_reasoning=False)
    assert parser.parse_stream_chunk("<think>a") == ("", "")
    assert parser.parse_stream_chunk("b</think>Hi") == ("ab", "Hi")


def test_results_are_built_without_validation_and_equal_validated_ones() -> None:
    result = adapter.to_parse_result(
        adapter.Delta(content="Hi", calls=[adapter.CallDelta(0, name="f", arguments="{")])
    )
    from sglang.srt.function_call.core_types import StreamingParseResult, ToolCallItem

    assert result == StreamingParseResult(
        normal_text="Hi", calls=[ToolCallItem(tool_index=0, name="f", parameters="{")]
    )
    assert result.model_dump() == result.model_validate(result.model_dump()).model_dump()
