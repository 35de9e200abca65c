"""toolparse.adapters.vllm with vLLM's own classes: its parser managers, the Parser it
composes per request, and the per-chunk serving path (ChatStreamProcessor), over every
format's fixtures.  Skipped where vLLM is not installed (docs/adapters.md says how to
install its parsers on a CPU machine)."""

from __future__ import annotations

import dataclasses
import json
import os
import random
from collections.abc import Iterator
from typing import Any

import pytest

import toolparse
from engines import FIXTURE_IDS, FIXTURES, Fixture
from serving import vllm_whole

try:
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
    from vllm.entrypoints.openai.chat_completion.stream_processor import ChatStreamProcessor
    from vllm.parser import DelegatingParser, ParserManager
    from vllm.reasoning import ReasoningParserManager
    from vllm.tool_parsers import ToolParserManager

    from toolparse.adapters import vllm as adapter
    from toolparse.adapters._translate import passthrough_format
except Exception as error:  # not installed, or a vLLM this adapter does not know
    if os.environ.get("TOOLPARSE_REQUIRE_STACKS") == "1":  # CI installs the stacks
        raise
    pytest.skip(
        f"vLLM is not importable here ({type(error).__name__}: {error}); "
        "see docs/adapters.md to run this group",
        allow_module_level=True,
    )


TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
MESSAGES = [{"role": "user", "content": "a"}]


class Tokenizer:
    """What the parsers ask of a tokenizer: a vocabulary and the special tokens."""

    all_special_tokens = ("<|im_end|>", "<|python_tag|>")

    def get_vocab(self) -> dict[str, int]:
        return {"<think>": 1, "</think>": 2, "<tool_call>": 3, "a": 4}


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


def request_for(fixture: Fixture) -> Any:
    return ChatCompletionRequest(
        model="m",
        messages=[{"role": "user", "content": "hi"}],
        tools=fixture.tools or None,
        tool_choice="auto",
    )


def parser_class(fixture: Fixture, with_reasoning: bool) -> Any:
    """The Parser vLLM composes for --tool-call-parser / --reasoning-parser
    toolparse_<format>, with the fixture's options set on subclasses."""
    name = "toolparse_" + fixture.format
    options = fixture.options
    if not options:
        return ParserManager.get_parser(
            tool_parser_name=name,
            reasoning_parser_name=name if with_reasoning else None,
            enable_auto_tools=True,
        )
    in_prompt = options.get("reasoning_in_prompt")
    tool_cls = type(
        "Tool",
        (ToolParserManager.get_tool_parser(name),),
        {"repair": bool(options.get("repair")), "toolparse_reasoning_in_prompt": in_prompt},
    )
    attributes: dict[str, Any] = {"tool_parser_cls": tool_cls, "reasoning_parser_cls": None}
    if with_reasoning:
        attributes["reasoning_parser_cls"] = type(
            "Reasoning",
            (ReasoningParserManager.get_reasoning_parser(name),),
            {"toolparse_reasoning_in_prompt": in_prompt},
        )
    return type("Parser", (DelegatingParser,), attributes)


def expected(fixture: Fixture, with_reasoning: bool = True) -> toolparse.Message:
    """What the client gets.  vLLM does not tell its parsers why a stream ended: they
    finish with "stop".  A tool parser with no reasoning parser before it passes an
    opening reasoning block through as content (vLLM's skip_reasoning_parsing) and
    reports no reasoning (a non-streamed tool-parser result has no place for it)."""
    if with_reasoning:
        return toolparse.parse(
            fixture.raw,
            fixture.format,
            tools=fixture.tools,
            finish_reason="stop",
            **fixture.options,
        )
    fmt = passthrough_format(fixture.format)
    options = fixture.options
    message = toolparse.parse(
        fixture.raw, fmt, tools=fixture.tools, finish_reason="stop", **options
    )
    return dataclasses.replace(message, reasoning_content=None)


def stream(fixture: Fixture, with_reasoning: bool, mode: str | int) -> dict[str, Any]:
    """The deltas of vLLM's per-chunk serving path, accumulated the way a client does."""
    cls = parser_class(fixture, with_reasoning)
    request = request_for(fixture)
    parser = cls(Tokenizer(), request.tools)
    processor = ChatStreamProcessor(request, parser, enable_auto_tools=True, parser_cls=cls)
    chunks = list(pieces(fixture.raw.decode("utf-8"), mode))
    out: dict[str, Any] = {"reasoning": "", "content": "", "calls": {}}
    for k, chunk in enumerate(chunks):
        last = k == len(chunks) - 1
        step = processor.step(chunk, [4], "stop" if last else None, [7, 8])
        delta = step.delta
        if delta is None:
            continue
        out["reasoning"] += delta.reasoning or ""
        out["content"] += delta.content or ""
        for call in delta.tool_calls:
            function = call.function
            if call.index not in out["calls"]:
                # The first piece of a call: index, id, type and name (and the first
                # arguments where the same chunk brought them).
                assert call.id and call.type == "function" and function.name
                out["calls"][call.index] = {"id": call.id, "name": function.name, "arguments": ""}
            else:
                assert call.id is None and function.name is None
                # only set fields go on the wire: a fragment never says "id": null
                assert set(call.model_dump(exclude_unset=True)) == {"index", "function"}
            out["calls"][call.index]["arguments"] += function.arguments or ""
    assert parser.tool_parser.get_remaining_unstreamed_args() == ""
    return out


@pytest.mark.parametrize("fixture", FIXTURES, ids=FIXTURE_IDS)
@pytest.mark.parametrize("with_reasoning", [True, False], ids=["pair", "tool-only"])
def test_the_serving_path_streams_the_message(fixture: Fixture, with_reasoning: bool) -> None:
    message = expected(fixture, with_reasoning)
    for mode in ("chars", 3):  # in one test: the same work, one test's overhead
        out = stream(fixture, with_reasoning, mode)
        assert out["reasoning"] == (message.reasoning_content or ""), mode
        assert out["content"] == (message.content or ""), mode
        calls = list(out["calls"].values())
        assert sorted(out["calls"]) == list(range(len(calls))), mode
        # Calls that failed after their name went out are the client's to drop: the
        # delivered ones come out whole and in order.
        delivered = [(c.name, c.arguments_json) for c in message.tool_calls]
        streamed = [(c["name"], c["arguments"]) for c in calls]
        if not message.errors:
            assert streamed == delivered, mode
        else:
            it = iter(streamed)
            assert all(call in it for call in delivered), mode


@pytest.mark.parametrize("fixture", FIXTURES, ids=FIXTURE_IDS)
@pytest.mark.parametrize("with_reasoning", [True, False], ids=["pair", "tool-only"])
def test_the_whole_output_at_once(fixture: Fixture, with_reasoning: bool) -> None:
    cls = parser_class(fixture, with_reasoning)
    request = request_for(fixture)
    reasoning, content, calls = cls(Tokenizer(), request.tools).parse(
        fixture.raw.decode("utf-8"), request, enable_auto_tools=True
    )
    message = vllm_whole(expected(fixture, with_reasoning))
    assert reasoning == (message.reasoning_content or None)
    assert content == message.content
    assert [(c.name, json.loads(c.arguments)) for c in calls or []] == [
        (c.name, c.arguments) for c in message.tool_calls
    ]
    for got, want in zip(calls or [], message.tool_calls, strict=True):
        # the output's own id where it carries one, else a generated one
        assert got.id == want.id or (got.id.startswith("call_") and want.id.startswith("call_"))


def test_every_name_is_registered_with_both_managers() -> None:
    ToolParserManager.import_tool_parser("toolparse.adapters.vllm")  # --tool-parser-plugin
    for name, format_name in adapter.adapter_names().items():
        tool = ToolParserManager.get_tool_parser(name)
        reasoning = ReasoningParserManager.get_reasoning_parser(name)
        assert tool.toolparse_format == format_name == reasoning.toolparse_format
        assert tool.engine_based_streaming and reasoning.engine_based_streaming
    assert ToolParserManager.get_tool_parser("toolparse_qwen25").toolparse_format == "hermes"


def test_a_parser_reused_for_another_request_starts_over() -> None:
    parser = adapter.tool_parser_class("hermes")(Tokenizer(), None)
    first = ChatCompletionRequest(model="m", messages=MESSAGES, tools=TOOLS)
    second = first.model_copy()
    parser.extract_tool_calls_streaming("", "", '<tool_call>{"name": "f", "ar', [], [], [], first)
    delta = parser.extract_tool_calls_streaming("", "", "Hello", [], [], [], second)
    assert delta.content == "Hello" and not delta.tool_calls
    assert parser.prev_tool_call_arr == [] and parser.current_tool_id == -1


def test_the_bookkeeping_follows_what_was_sent() -> None:
    parser = adapter.tool_parser_class("hermes")(Tokenizer(), None)
    request = ChatCompletionRequest(model="m", messages=[{"role": "user", "content": "a"}])
    text = '<tool_call>{"name": "f", "arguments": {"x": 1}}</tool_call>'
    for piece in pieces(text, "chars"):
        parser.extract_tool_calls_streaming("", "", piece, [], [], [], request)
    assert parser.prev_tool_call_arr == [{"name": "f", "arguments": '{"x": 1}'}]
    assert parser.streamed_args_for_tool == ['{"x": 1}']
    assert parser.current_tool_id == 0 and parser.current_tool_name_sent
    assert parser.finish_streaming() is None and parser.finish_streaming() is None


def test_adjust_request_keeps_special_tokens_for_calls() -> None:
    request = ChatCompletionRequest(model="m", messages=MESSAGES, tools=TOOLS)
    assert request.skip_special_tokens is not False
    parser = adapter.tool_parser_class("llama3_json")(Tokenizer(), request.tools)
    assert parser.adjust_request(request).skip_special_tokens is False


def test_reasoning_end_from_token_ids_with_a_real_tokenizer() -> None:
    tokenizers = pytest.importorskip("tokenizers")
    transformers = pytest.importorskip("transformers")
    words = ["a", "b", "[UNK]"]
    model = tokenizers.models.WordLevel({w: k for k, w in enumerate(words)}, unk_token="[UNK]")
    raw = tokenizers.Tokenizer(model)
    raw.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    tokenizer = transformers.PreTrainedTokenizerFast(tokenizer_object=raw, unk_token="[UNK]")
    tokenizer.add_tokens(["<think>", "</think>", "<tool_call>"])
    parser = adapter.reasoning_parser_class("qwen3")(tokenizer)
    ids = tokenizer.encode("a <think> b </think> a")
    assert parser.is_reasoning_end(ids)
    assert not parser.is_reasoning_end(tokenizer.encode("a <think> b"))
    assert parser.is_reasoning_end_streaming(ids, tokenizer.encode("</think>"))
    assert parser.is_reasoning_end_streaming(ids, tokenizer.encode("<tool_call>"))
    assert parser.extract_content_ids(ids) == tokenizer.encode("a")
    assert (parser.reasoning_start_str, parser.reasoning_end_str) == ("<think>", "</think>")


def test_thinking_turned_off_reads_no_reasoning_block() -> None:
    cls = adapter.reasoning_parser_class("deepseek_r1")
    on = cls(Tokenizer())
    off = cls(Tokenizer(), chat_template_kwargs={"thinking": False})
    request = ChatCompletionRequest(model="m", messages=[{"role": "user", "content": "a"}])
    assert on.extract_reasoning("plan</think>answer", request) == ("plan", "answer")
    assert off.extract_reasoning("answer", request) == (None, "answer")


# -- what reaches the client, through vLLM's own serving path --------------------------


def sdk_message(deltas: list[Any]) -> Any:
    """The message the openai SDK's stream helper (client.chat.completions.stream())
    builds from these deltas, serialised as vLLM's server sends them."""
    from openai.lib.streaming.chat import ChatCompletionStreamState
    from openai.types.chat import ChatCompletionChunk

    state: Any = ChatCompletionStreamState()
    for k, delta in enumerate(deltas):
        last = k == len(deltas) - 1
        chunk = {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": "m",
            "choices": [
                {
                    "index": 0,
                    "delta": json.loads(delta.model_dump_json(exclude_unset=True)),
                    "finish_reason": "tool_calls" if last else None,
                }
            ],
        }
        state.handle_chunk(ChatCompletionChunk.model_validate(chunk))
    return state.current_completion_snapshot.choices[0].message


def test_the_openai_stream_helper_accumulates_the_deltas() -> None:
    """A fragment carries no "id": null / "type": null / "name": null, which the SDK's
    accumulator would copy over the call's id and type (it then asserts, or hands back
    a call of type None)."""
    parser = adapter.tool_parser_class("qwen3_coder")(Tokenizer(), None)
    request = ChatCompletionRequest(model="m", messages=MESSAGES, tools=TOOLS)
    text = "<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n</function>\n</tool_call>"
    deltas = [parser.extract_tool_calls_streaming("", "", c, [], [], [], request) for c in text]
    deltas = [d for d in deltas if d is not None]
    fragment = deltas[-1].tool_calls[0].model_dump(exclude_unset=True)
    assert fragment.keys() == {"index", "function"} and fragment["function"].keys() == {"arguments"}
    assert '"content"' not in deltas[-1].model_dump_json(exclude_unset=True)
    (call,) = sdk_message(deltas).tool_calls
    assert (call.type, call.function.name, json.loads(call.function.arguments)) == (
        "function",
        "f",
        {"a": "1"},
    )


def real_tokenizer(*words: str) -> Any:
    """A transformers fast tokenizer over these words plus the markers as added tokens
    (built here: nothing comes from a model hub)."""
    tokenizers = pytest.importorskip("tokenizers")
    transformers = pytest.importorskip("transformers")
    vocab = {w: k for k, w in enumerate(["[UNK]", "a", "b", *words])}
    raw = tokenizers.Tokenizer(tokenizers.models.WordLevel(vocab, unk_token="[UNK]"))
    raw.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    tokenizer = transformers.PreTrainedTokenizerFast(tokenizer_object=raw, unk_token="[UNK]")
    tokenizer.add_tokens(["<think>", "</think>", "<tool_call>", "<|Assistant|>"])
    return tokenizer


@pytest.mark.parametrize(
    ("prompt", "output", "reasoning", "content"),
    [
        # DeepSeek V3.1 with thinking on: the template opens the block
        ("a <|Assistant|><think>", "2 plus 2 is 4.</think>It is 4.", "2 plus 2 is 4.", "It is 4."),
        # thinking off: the template closes it empty; the answer is content
        ("a <|Assistant|></think>", "It is 4.", None, "It is 4."),
        # no block opened: one the model writes itself is still read
        ("a <|Assistant|>", "<think>plan</think>It is 4.", "plan", "It is 4."),
    ],
)
def test_the_prompt_decides_whether_reasoning_opened(
    prompt: str, output: str, reasoning: str | None, content: str
) -> None:
    tokenizer = real_tokenizer()
    ids = tokenizer.encode(prompt)
    cls = ParserManager.get_parser(
        tool_parser_name="toolparse_deepseek_v31",
        reasoning_parser_name="toolparse_deepseek_v31",
        enable_auto_tools=True,
    )
    request = ChatCompletionRequest(model="m", messages=MESSAGES)
    whole = cls(tokenizer, None)
    whole.set_prompt_token_ids(ids)  # what vLLM's non-streamed path does first
    assert whole.parse(output, request, enable_auto_tools=True)[:2] == (reasoning, content)
    parser = cls(tokenizer, None)
    processor = ChatStreamProcessor(request, parser, enable_auto_tools=True, parser_cls=cls)
    out = {"reasoning": "", "content": ""}
    for k, piece in enumerate(pieces(output, 3)):
        step = processor.step(piece, [1], None, ids if k == 0 else None)
        for field in out:
            out[field] += getattr(step.delta, field, None) or "" if step.delta else ""
    step = processor.step("", [], "stop", None)
    for field in out:
        out[field] += getattr(step.delta, field, None) or "" if step.delta else ""
    assert (out["reasoning"] or None, out["content"]) == (reasoning, content)


def test_a_name_for_a_template_that_opens_reasoning() -> None:
    """toolparse_qwen3-thinking (Qwen3-*-Thinking-2507) and toolparse_glm47 start in the
    reasoning where the request brings no evidence of its own."""
    request = ChatCompletionRequest(model="m", messages=MESSAGES)
    thinking = ReasoningParserManager.get_reasoning_parser("toolparse_qwen3-thinking")
    assert thinking(Tokenizer()).extract_reasoning("plan</think>Hi", request) == ("plan", "Hi")
    plain = ReasoningParserManager.get_reasoning_parser("toolparse_qwen3")
    assert plain(Tokenizer()).extract_reasoning("Hi", request) == (None, "Hi")
    glm = ReasoningParserManager.get_reasoning_parser("toolparse_glm47")
    off = glm(Tokenizer(), chat_template_kwargs={"enable_thinking": False})
    assert off.extract_reasoning("Hi", request) == (None, "Hi")
    assert glm(Tokenizer()).extract_reasoning("plan</think>Hi", request) == ("plan", "Hi")


PLAIN_ANSWERS = [
    f
    for f in FIXTURES
    if not (f.expected["message"]["tool_calls"] or f.expected["errors"] or f.options)
]


@pytest.mark.parametrize("fixture", PLAIN_ANSWERS, ids=[f.id for f in PLAIN_ANSWERS])
def test_a_reasoning_parser_alone_hands_clean_content(fixture: Fixture) -> None:
    """--reasoning-parser without a tool parser: no markup reaches the client (the whole
    gpt-oss analysis channel, <|START_RESPONSE|>, <response>, ...), streamed or not."""
    name = "toolparse_" + fixture.format
    cls = ParserManager.get_parser(reasoning_parser_name=name)
    request = ChatCompletionRequest(model="m", messages=MESSAGES)
    message = expected(fixture)
    reasoning, content, _ = cls(Tokenizer()).parse(fixture.raw.decode("utf-8"), request)
    assert (reasoning, content) == (message.reasoning_content or None, message.content)
    parser = cls(Tokenizer())
    processor = ChatStreamProcessor(request, parser, enable_auto_tools=False, parser_cls=cls)
    chunks = list(pieces(fixture.raw.decode("utf-8"), 3))
    got = {"reasoning": "", "content": ""}
    for k, chunk in enumerate(chunks):
        step = processor.step(chunk, [4], "stop" if k == len(chunks) - 1 else None, [7, 8])
        for field in got:
            got[field] += (getattr(step.delta, field) or "") if step.delta else ""
    assert got == {"reasoning": message.reasoning_content or "", "content": message.content or ""}


def test_reasoning_tokens_are_counted() -> None:
    tokenizer = real_tokenizer("plan", "it", "well", "Sure")
    cls = ParserManager.get_parser(
        tool_parser_name="toolparse_qwen3",
        reasoning_parser_name="toolparse_qwen3",
        enable_auto_tools=True,
    )
    output = "<think> plan it well </think> Sure"
    ids = tokenizer.encode(output)
    request = ChatCompletionRequest(model="m", messages=MESSAGES)
    parser = cls(tokenizer, None)
    processor = ChatStreamProcessor(request, parser, enable_auto_tools=True, parser_cls=cls)
    for k, token in enumerate(ids):
        text = tokenizer.decode([token]) + " "
        processor.step(text, [token], "stop" if k == len(ids) - 1 else None, [1])
    streamed = parser.count_reasoning_tokens(tuple(ids))
    whole = cls(tokenizer, None)
    whole.parse(output, request, enable_auto_tools=True)
    # the three words of the plan, as vLLM's own parsers count (the markers left out)
    assert streamed == whole.count_reasoning_tokens(ids) == 3


WEATHER = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]


@pytest.mark.parametrize(
    ("tool_choice", "output"),
    [
        (
            "required",
            '<think>\nx\n</think>\n\n[{"name": "get_weather", "parameters": {"city": "Paris"}}, '
            '{"name": "get_weather", "parameters": {"city": "Oslo"}}]',
        ),
        (
            {"type": "function", "function": {"name": "get_weather"}},
            '<think>\nx\n</think>\n\n{"city": "Paris"}',
        ),
    ],
    ids=["required", "named"],
)
def test_a_forced_tool_choice_streams_its_calls(tool_choice: Any, output: str) -> None:
    """vLLM's JSON form of required and named tool choice (the constraint
    adjust_request sets), read by the adapter itself: streamed, vLLM's own path for
    "required" needs the text so far, which an engine-based parser is not given."""
    cls = ParserManager.get_parser(
        tool_parser_name="toolparse_qwen3",
        reasoning_parser_name="toolparse_qwen3",
        enable_auto_tools=True,
    )
    request = ChatCompletionRequest(
        model="m", messages=MESSAGES, tools=WEATHER, tool_choice=tool_choice
    )
    request = cls(Tokenizer(), request.tools).adjust_request(request)
    assert request.structured_outputs is not None and request.structured_outputs.json
    cities = ["Paris", "Oslo"] if tool_choice == "required" else ["Paris"]
    parser = cls(Tokenizer(), request.tools)
    processor = ChatStreamProcessor(request, parser, enable_auto_tools=True, parser_cls=cls)
    deltas = []
    chunks = list(pieces(output, 3))
    for k, chunk in enumerate(chunks):
        step = processor.step(chunk, [4], "stop" if k == len(chunks) - 1 else None, [7, 8])
        if step.delta is not None:
            deltas.append(step.delta)
    # as OpenAI does, vLLM reports "stop" for a forced named tool
    assert step.finish_reason == ("tool_calls" if tool_choice == "required" else "stop")
    message = sdk_message(deltas)
    assert message.reasoning == "\nx\n" and not message.content
    assert [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls] == [
        ("get_weather", {"city": city}) for city in cities
    ]
    reasoning, content, calls = cls(Tokenizer(), request.tools).parse(
        output, request, enable_auto_tools=True
    )
    assert (reasoning, content) == ("\nx\n", None)
    assert [(c.name, json.loads(c.arguments)) for c in calls or []] == [
        ("get_weather", {"city": city}) for city in cities
    ]


def test_gpt_oss_checkpoints_say_what_works(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """vLLM composes its HarmonyParser for any gpt_oss checkpoint, and that refuses
    every parser class but its own: the adapter says at start-up what to run instead."""
    from vllm.parser import HarmonyParser

    for name in ("reasoning_parser_cls", "tool_parser_cls", "tool_strict_level"):
        # get_parser sets them on the class itself: put them back afterwards
        monkeypatch.setattr(HarmonyParser, name, getattr(HarmonyParser, name))
    cls = ParserManager.get_parser(
        tool_parser_name="toolparse_gpt_oss",
        reasoning_parser_name="toolparse_gpt_oss",
        enable_auto_tools=True,
        is_harmony=True,
    )
    with pytest.raises(ValueError, match="Harmony requires"):
        cls(Tokenizer(), None)
    assert adapter.HARMONY in caplog.text
    assert "--tool-call-parser openai --reasoning-parser openai_gptoss" in adapter.HARMONY
    caplog.clear()
    plain = ParserManager.get_parser(
        tool_parser_name="toolparse_gpt_oss",
        reasoning_parser_name="toolparse_gpt_oss",
        enable_auto_tools=True,
    )
    plain(Tokenizer(), None)  # elsewhere it is an ordinary pair, and says nothing
    assert adapter.HARMONY not in caplog.text


def test_deltas_are_built_without_validation_and_equal_validated_ones() -> None:
    from toolparse.adapters._translate import unvalidated_holds

    assert unvalidated_holds(adapter._built_sample, adapter._validated_sample)
    delta = adapter.to_delta_message(
        adapter.Delta(reasoning="r", calls=[adapter.CallDelta(1, arguments='{"a')])
    )
    assert json.loads(delta.model_dump_json(exclude_unset=True)) == {
        "reasoning": "r",
        "tool_calls": [{"index": 1, "function": {"arguments": '{"a'}}],
    }
