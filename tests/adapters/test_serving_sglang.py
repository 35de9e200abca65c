"""toolparse's SGLang detectors inside SGLang's own chat serving, end to end, over every
fixture, served as ``--tool-call-parser toolparse_<fmt> --reasoning-parser toolparse_<fmt>``.

What runs is SGLang's: ``OpenAIServingChat`` (its own ``__init__``), ``handle_request``
(request validation, the chat template rendered by ``_apply_jinja_template`` through the
tokenizer's apply_chat_template, the sampling params), ``_generate_chat_stream`` (the SSE
strings, read from the StreamingResponse) and ``_build_chat_response`` (the body, serialised
by SGLang's ``model_json_response``), with SGLang's ``ReasoningParser`` and
``FunctionCallParser`` around the toolparse detectors.  The server config is SGLang's own
test publication (``get_context().override_server_args()``: the launcher's defaults).

Stand-ins, where SGLang would need a model: the tokenizer manager (its ``generate_request``
yields the cumulative text, one token per step, decoded with tokenizers' DecodeStream and
the request's skip_special_tokens, the stop token trimmed as SGLang's detokenizer trims it,
and the meta_info SGLang's tokenizer manager builds), and the template manager, whose
fields are computed with SGLang's own functions as ``TemplateManager.load_chat_template``
does for a checkpoint that carries its chat template (content format, tool-result
reordering, ``detect_reasoning_pattern``'s force_reasoning and toggle config).
``TemplateManager`` itself does not import here: it imports the tokenizer manager, which
needs uvicorn.

What SGLang hands the detectors, per request (SGLang 0.5.23; test_what_sglang_hands_the_
reasoning_detector and test_what_sglang_hands_the_function_call_detector check it):

- The reasoning detector.  The server builds one when it starts (``ReasoningParser(name,
  stream_reasoning=True, tokenizer=...)``) only to read its ``reasoning_default``.  A
  request's is built per choice of a stream (on its first chunk) and once per non-streamed
  output, by ``ReasoningParser(name, stream_reasoning, force_reasoning, request,
  tokenizer=..., tool_call_parser_active=...)``, which passes the detector keywords only:

  - ``stream_reasoning``: the request's ``stream_reasoning`` when streaming, else False;
  - ``force_reasoning``: always a bool, ``template_manager.force_reasoning or
    _get_reasoning_from_request(request)``.  The first is True only for a template SGLang
    recognises as always thinking (ChatML's ``<|im_start|>assistant\n<think>\n`` with no
    thinking switch, gpt-oss's ``<|channel|>``, GLM-5.3).  The second reads the template's
    switch (``enable_thinking`` / ``thinking`` and its default, from patterns such as
    ``{% if not thinking is defined %}{% set thinking = false %}``) against the request's
    chat_template_kwargs; for a template without one, the server's detector's
    ``reasoning_default`` ("always": True; "thinking" / "enable_thinking": unless the
    request sets that kwarg False; "explicit_*": only if it sets it True; None: False);
  - ``continue_final_message=True`` and ``previous_content`` (the last message's content)
    only when the request continues a final assistant message;
  - ``force_nonempty_content=True`` only when chat_template_kwargs says so;
  - ``tool_call_parser_active`` (True when a function-call detector reads this request's
    normal text) and ``tokenizer``, each only to a class whose ``__init__`` names it
    (toolparse's names the first).

  It is never given the request, its chat_template_kwargs or the prompt (text or ids):
  whether the template opened the reasoning block reaches it only through
  force_reasoning.  Then it gets each step's new text (``parse_streaming_increment``) and
  ``finish()``, or the whole text (``detect_and_parse``).

- The function-call detector is built with no arguments (``tokenizer`` only if its
  ``__init__`` names it) by ``FunctionCallParser(tools, name, ...)``: once while the
  request is prepared (asked for a tool-call constraint: ``supports_structural_tag``,
  ``parses_required_natively``), then once per streamed choice or non-streamed output.
  For required or named tool choice SGLang reads the output with its own
  JsonArrayParser unless the detector owns the format.  It gets the reasoning detector's
  normal text and the request's tools: ``parse_streaming_increment(text, tools)`` every
  step (an empty text too) and ``finish(tools)`` at the end; non-streamed,
  ``has_tool_call(text)`` and, only if that is True, ``detect_and_parse(text, tools)``.
  At the end SGLang reads its ``prev_tool_call_arr`` / ``streamed_args_for_tool`` (unsent
  arguments) and ``incomplete_tool_call_indices`` (whether the finish reason becomes
  "tool_calls").  It is never given the request, the template kwargs or the prompt.

With tools and a tool_choice other than "none", SGLang sets skip_special_tokens=False.

Cases that fail today are marked strict xfail in KNOWN_FAILURES below, each with the
number of the adapter defect it is (D1-D10).
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from types import SimpleNamespace
from typing import Any, ClassVar

import pytest

import serving
from engines import Fixture

serving.require(
    "SGLang",
    "transformers",
    "sglang.srt.entrypoints.openai.serving_chat",
    "toolparse.adapters.sglang",
)

from fastapi.responses import StreamingResponse  # noqa: E402
from jsonschema import Draft202012Validator  # noqa: E402
from pydantic import BaseModel  # noqa: E402
from sglang.srt.entrypoints.openai import serving_chat  # noqa: E402
from sglang.srt.entrypoints.openai.protocol import ChatCompletionRequest  # noqa: E402
from sglang.srt.entrypoints.openai.serving_chat import OpenAIServingChat  # noqa: E402
from sglang.srt.function_call.function_call_parser import FunctionCallParser  # noqa: E402
from sglang.srt.parser.jinja_template_utils import (  # noqa: E402
    detect_jinja_template_content_format,
    jinja_template_may_reorder_tool_results,
)
from sglang.srt.parser.reasoning_parser import ReasoningParser  # noqa: E402
from sglang.srt.parser.template_detection import detect_reasoning_pattern  # noqa: E402
from sglang.srt.runtime_context import get_context  # noqa: E402
from sglang.srt.utils.json_response import model_json_response  # noqa: E402
from tokenizers.decoders import DecodeStream  # noqa: E402

from serving import (  # noqa: E402
    MESSAGES,
    MODEL,
    SCENARIOS,
    WEATHER,
    Cases,
    assert_message,
    assert_streamed,
    body_message,
    chunks_of,
    expected,
    known_cases,
    output_ids,
    prompt_for,
    run_async,
    sdk_stream_message,
)
from toolparse.adapters import sglang as adapter  # noqa: E402

REASONING = "reasoning_content"  # the field SGLang streams and returns reasoning in
MODEL_TYPE = "toolparse_test"

# SGLang's serving code reads the request's deprecated max_tokens when the client sends no
# max_completion_tokens, and warns each time: its warning, not the test's.
pytestmark = pytest.mark.filterwarnings(
    "ignore:max_tokens is deprecated in favor of the max_completion_tokens field:DeprecationWarning"
)

# -- what fails today ---------------------------------------------------------------------

# Strict: a case that starts passing is a fix, and its entry goes.  The reasons use the
# adapter defects' numbers (D4: reasoning the chat template opened, decided per request).


D4_GPT_OSS_CHANNELS = (
    "D4: SGLang forces reasoning for any template with <|channel|> (its gpt-oss rule); "
    "toolparse reads that as an opened analysis channel, so a role header the output "
    "continues (' to=functions...') becomes reasoning"
)
KNOWN_FAILURES: dict[str, dict[str, str]] = {
    kind: known_cases(D4_GPT_OSS_CHANNELS, "gpt_oss/call_in_role_header")
    for kind in ("stream", "body")
}


CASES = Cases(KNOWN_FAILURES)
fixture_cases, scenario_cases = CASES.fixtures, CASES.named


# -- the stack, with its stand-ins -------------------------------------------------------


class SchemaCheckOnce:
    """jsonschema's Draft202012Validator where SGLang's request validation uses it: the same
    check_schema of every tool's parameters, each schema checked once per process (SGLang
    checks them on every request; the metaschema walk is most of a request's time here)."""

    _checked: ClassVar[set[str]] = set()

    @classmethod
    def check_schema(cls, schema: Any) -> None:
        key = json.dumps(schema, sort_keys=True)
        if key not in cls._checked:
            Draft202012Validator.check_schema(schema)
            cls._checked.add(key)


@pytest.fixture(scope="module", autouse=True)
def published_server_config() -> Any:
    """SGLang's serving code reads the server config from its runtime context; this is
    SGLang's own test publication of the launcher's defaults."""
    override = get_context().override_server_args()
    override.install()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(serving_chat, "Draft202012Validator", SchemaCheckOnce)
        yield
    override.restore()


class TokenizerManagerStandIn:
    """SGLang's TokenizerManager where the chat serving reads it, without a model:
    generate_request() yields what SGLang's tokenizer manager yields for the scripted
    tokens, one per step: the text so far (incremental_streaming_output is off by
    default), decoded as SGLang's detokenizer does it (skip_special_tokens from the
    request, an unfinished character held back, the matched stop token trimmed), and the
    meta_info fields it builds.  Non-streamed, only the final output."""

    def __init__(self, fast: Any, config: Mapping[str, str | None]) -> None:
        self.tokenizer = fast
        self.config = config
        self.model_config = SimpleNamespace(
            hf_config=SimpleNamespace(model_type=MODEL_TYPE, architectures=["ToolparseTest"]),
            get_default_sampling_params=dict,
            is_multimodal=False,
            context_len=32768,
        )
        self.server_args = None
        self.served_model_name = MODEL
        self.model_path = MODEL
        self.request_logger = SimpleNamespace(log_requests=False, log_requests_level=0)
        self.script: tuple[list[int], str] = ([], "stop")

    def config_value(self, name: str) -> Any:
        return self.config.get(name)

    def create_abort_task(self, obj: Any) -> None:
        return None

    async def generate_request(self, obj: Any, request: Any = None) -> Any:
        ids, finish = self.script
        eos = self.tokenizer.eos_token_id
        steps = [*ids, eos] if finish == "stop" else list(ids)
        params = obj.sampling_params or {}
        stream = DecodeStream(skip_special_tokens=params.get("skip_special_tokens", True))
        backend = self.tokenizer.backend_tokenizer
        prompt_tokens = len(obj.input_ids) if obj.input_ids is not None else 0
        text = ""
        for k, token in enumerate(steps):
            last = k == len(steps) - 1
            if not (last and finish == "stop"):  # the matched stop token is trimmed
                text += stream.step(backend, token) or ""
            reason = None
            if last:
                reason = (
                    {"type": "stop", "matched": eos}
                    if finish == "stop"
                    else {"type": "length", "length": len(steps)}
                )
            if obj.stream or last:
                yield {
                    "text": text,
                    "output_ids": steps[: k + 1],
                    "meta_info": {
                        "id": "chatcmpl-toolparse",
                        "finish_reason": reason,
                        "prompt_tokens": prompt_tokens,
                        "weight_version": "default",
                        "num_retractions": 0,
                        "reasoning_tokens": 0,
                        "completion_tokens": k + 1,
                        "cached_tokens": 0,
                    },
                }


class TemplateManagerStandIn:
    """SGLang's TemplateManager after load_chat_template for a checkpoint whose tokenizer
    carries the chat template (no --chat-template): its fields from SGLang's own
    detection functions, as _run_template_detection computes them."""

    chat_template_name = None
    completion_template_name = None
    python_chat_template = None

    def __init__(self, template: str) -> None:
        self.jinja_template_content_format = detect_jinja_template_content_format(template)
        self.jinja_template_may_reorder_tool_results = jinja_template_may_reorder_tool_results(
            template
        )
        self.force_reasoning, self.reasoning_config = detect_reasoning_pattern(template)


@dataclass
class Server:
    chat: Any
    manager: TokenizerManagerStandIn
    tokenizer: Any


def tool_parser_name(format: str, repair: bool) -> str:
    """toolparse_<format>, or a subclass with repair=True registered under a name of its
    own, as docs/adapters.md says to set an option."""
    name = f"toolparse_{format}"
    if not repair:
        return name
    variant = f"{name}.repair"
    base = FunctionCallParser.ToolCallParserEnum[name]
    FunctionCallParser.ToolCallParserEnum[variant] = type(
        "RepairingDetector", (base,), {"repair": True}
    )
    return variant


@cache
def server(format: str, template: str, tool_parser: str, reasoning_parser: str) -> Server:
    fast = serving.tokenizer(format, template)
    config = {"tool_call_parser": tool_parser, "reasoning_parser": reasoning_parser}
    manager = TokenizerManagerStandIn(fast, config)
    chat = OpenAIServingChat(manager, TemplateManagerStandIn(template))
    return Server(chat, manager, fast)


@dataclass(frozen=True)
class Exchange:
    events: tuple[str, ...] = ()
    body: bytes = b""

    def chunks(self) -> list[Any]:
        return chunks_of(self.events)


def exchange(
    srv: Server, output: str, *, stream: bool, finish: str = "stop", **fields: Any
) -> Exchange:
    """Sends a chat completion request whose answer is `output` and returns the reply."""
    srv.manager.script = (output_ids(srv.tokenizer, output), finish)
    request = ChatCompletionRequest(
        **({"model": MODEL, "messages": MESSAGES} | fields), stream=stream
    )

    async def go() -> Exchange:
        result = await srv.chat.handle_request(request, None)
        if stream and isinstance(result, StreamingResponse):
            events = [
                e if isinstance(e, str) else bytes(e).decode() async for e in result.body_iterator
            ]
            return Exchange(events=tuple(events))
        if not stream and isinstance(result, BaseModel):
            return Exchange(body=bytes(model_json_response(result).body))
        raise AssertionError(f"the server refused the request: {bytes(result.body)!r}")

    result: Exchange = run_async(go())
    return result


BY_ID = serving.FIXTURES_BY_ID


@cache
def fixture_exchange(fixture_id: str, stream: bool) -> Exchange:
    fixture = BY_ID[fixture_id]
    prompt = prompt_for(fixture)
    tool_parser = tool_parser_name(fixture.format, bool(fixture.options.get("repair")))
    srv = server(fixture.format, prompt.template, tool_parser, f"toolparse_{fixture.format}")
    return exchange(
        srv,
        fixture.raw.decode("utf-8"),
        stream=stream,
        finish=fixture.finish,
        tools=fixture.tools or None,
        tool_choice="auto",
        chat_template_kwargs=prompt.chat_template_kwargs,
    )


# -- every fixture ----------------------------------------------------------------------------


@pytest.mark.parametrize("fixture", fixture_cases("stream"))
def test_the_stream_rebuilds_the_message(fixture: Fixture) -> None:
    """The SSE stream, accumulated by openai's ChatCompletionStreamState and by a client
    that reads only the first tool_calls entry of each chunk, gives parse's message."""
    chunks = fixture_exchange(fixture.id, True).chunks()
    assert_streamed(chunks, expected(fixture), REASONING)


@pytest.mark.parametrize("fixture", fixture_cases("body"))
def test_the_response_body_is_the_message(fixture: Fixture) -> None:
    body = fixture_exchange(fixture.id, False).body
    assert_message(body_message(body, REASONING), expected(fixture), streamed=False)


# -- reasoning that is not one leading block (D5) ---------------------------------------------

CHANNEL_FORMATS = ("gpt_oss", "gemma4", "mistral", "muse")


def _has_reasoning_in_channel_format(fixture: Fixture) -> bool:
    return fixture.format in CHANNEL_FORMATS and bool(expected(fixture).reasoning_content)


@pytest.mark.parametrize(
    "fixture", fixture_cases("stream-reasoning", _has_reasoning_in_channel_format)
)
def test_reasoning_of_channel_formats_arrives_when_streamed(fixture: Fixture) -> None:
    chunks = fixture_exchange(fixture.id, True).chunks()
    got = sdk_stream_message(chunks, REASONING)
    assert (got.reasoning or None) == expected(fixture).reasoning_content


# -- the finish reason of a call that never closed (D10) ----------------------------------------

UNCLOSED_CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Pa'


def _only_call_never_closed(fixture: Fixture) -> bool:
    message = expected(fixture)
    return not message.tool_calls and any(e.index is not None for e in message.errors)


@pytest.mark.parametrize("fixture", fixture_cases("unclosed-finish", _only_call_never_closed))
def test_a_response_whose_only_call_never_closed_does_not_finish_with_tool_calls(
    fixture: Fixture,
) -> None:
    streamed = sdk_stream_message(fixture_exchange(fixture.id, True).chunks(), REASONING)
    whole = body_message(fixture_exchange(fixture.id, False).body, REASONING)
    assert whole.finish_reason != "tool_calls"
    assert streamed.finish_reason != "tool_calls"


@pytest.mark.parametrize("mode", scenario_cases("unclosed-qwen3", ("stream", "body")))
def test_an_unclosed_qwen3_call_does_not_finish_with_tool_calls(mode: str) -> None:
    srv = server("qwen3", serving.base_template("qwen3"), "toolparse_qwen3", "toolparse_qwen3")
    reply = exchange(
        srv, UNCLOSED_CALL, stream=mode == "stream", tools=[WEATHER], tool_choice="auto"
    )
    got = (
        sdk_stream_message(reply.chunks(), REASONING)
        if mode == "stream"
        else body_message(reply.body, REASONING)
    )
    assert got.finish_reason == "stop"


# -- the scenarios users report --------------------------------------------------------------


def scenario_exchange(name: str, stream: bool) -> Exchange:
    scenario = SCENARIOS[name]
    name_ = f"toolparse_{scenario.format}"
    srv = server(scenario.format, scenario.template, name_, name_)
    return exchange(
        srv,
        scenario.output,
        stream=stream,
        tools=list(scenario.tools),
        tool_choice="auto",
        chat_template_kwargs=scenario.chat_template_kwargs,
    )


@pytest.mark.parametrize("name", scenario_cases("scenario-stream", SCENARIOS))
def test_a_template_opened_or_closed_block_streams_as_parsed(name: str) -> None:
    chunks = scenario_exchange(name, True).chunks()
    assert_streamed(chunks, SCENARIOS[name].want(), REASONING)


@pytest.mark.parametrize("name", scenario_cases("scenario-body", SCENARIOS))
def test_a_template_opened_or_closed_block_returns_as_parsed(name: str) -> None:
    body = scenario_exchange(name, False).body
    assert_message(body_message(body, REASONING), SCENARIOS[name].want(), streamed=False)


# -- what SGLang hands the detectors ----------------------------------------------------------

SPY = "toolparse_spy"
# Every keyword ReasoningParser may pass a reasoning detector (tokenizer and
# tool_call_parser_active only where __init__ names them; prefix, grammar_start, tools and
# constrained only to SGLang's response-template detectors).
REASONING_KEYWORDS = {
    "stream_reasoning",
    "force_reasoning",
    "continue_final_message",
    "previous_content",
    "force_nonempty_content",
    "tokenizer",
    "tool_call_parser_active",
}


@dataclass
class Seen:
    """What the spies were given and gave back, in order."""

    reasoning_inits: list[dict[str, Any]] = field(default_factory=list)
    detector_inits: list[dict[str, Any]] = field(default_factory=list)
    calls: list[tuple[str, tuple[Any, ...]]] = field(default_factory=list)
    handed_on: list[str] = field(default_factory=list)  # the reasoning detector's normal text


SEEN = Seen()


@cache
def spy_classes() -> tuple[type, type]:
    """toolparse's qwen3 detectors, wrapped to record what SGLang gives them, registered
    under SPY.  They keep toolparse's __init__ signatures (SGLang reads them to decide what
    to pass); reasoning_default is None, so force_reasoning comes from the template and the
    request alone, not from what toolparse assumes of a template."""
    reasoning_base = adapter.reasoning_detector_class("qwen3")
    detector_base = adapter.detector_class("qwen3")

    class ReasoningSpy(reasoning_base):  # type: ignore[misc, valid-type]
        __signature__ = inspect.signature(reasoning_base)

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            assert not args, "SGLang passes a reasoning detector keywords only"
            SEEN.reasoning_inits.append(kwargs)
            super().__init__(**kwargs)
            # SGLang's base __init__ sets the instance's reasoning_default ("always")
            self.reasoning_default = None

        def parse_streaming_increment(self, new_text: str) -> Any:
            SEEN.calls.append(("reasoning.parse_streaming_increment", (new_text,)))
            result = super().parse_streaming_increment(new_text)
            SEEN.handed_on.append(result.normal_text or "")
            return result

        def finish(self) -> Any:
            SEEN.calls.append(("reasoning.finish", ()))
            result = super().finish()
            SEEN.handed_on.append(result.normal_text or "")
            return result

        def detect_and_parse(self, text: str) -> Any:
            SEEN.calls.append(("reasoning.detect_and_parse", (text,)))
            result = super().detect_and_parse(text)
            SEEN.handed_on.append(result.normal_text or "")
            return result

    class DetectorSpy(detector_base):  # type: ignore[misc, valid-type]
        __signature__ = inspect.signature(detector_base)

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            SEEN.detector_inits.append({"args": args, **kwargs})
            super().__init__(*args, **kwargs)

        def parse_streaming_increment(self, new_text: str, tools: Any) -> Any:
            SEEN.calls.append(("tools.parse_streaming_increment", (new_text, tools)))
            return super().parse_streaming_increment(new_text, tools)

        def finish(self, tools: Any) -> Any:
            SEEN.calls.append(("tools.finish", (tools,)))
            return super().finish(tools)

        def has_tool_call(self, text: str) -> bool:
            SEEN.calls.append(("tools.has_tool_call", (text,)))
            return bool(super().has_tool_call(text))

        def detect_and_parse(self, text: str, tools: Any) -> Any:
            SEEN.calls.append(("tools.detect_and_parse", (text, tools)))
            return super().detect_and_parse(text, tools)

    ReasoningParser.DetectorMap[SPY] = ReasoningSpy
    FunctionCallParser.ToolCallParserEnum[SPY] = DetectorSpy
    return ReasoningSpy, DetectorSpy


SPY_OUTPUT = (
    "<think>\nThe user wants Paris.\n</think>\n\n"
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
)


def spy_exchange(stream: bool, template: str | None = None, **fields: Any) -> Seen:
    """One request through the spies; what they saw (the server's own reasoning detector,
    built once when the server starts, is not the request's and is left out)."""
    spy_classes()
    srv = server("qwen3", template or serving.base_template("qwen3"), SPY, SPY)
    SEEN.__init__()  # type: ignore[misc]
    fields = {"tools": [WEATHER], "tool_choice": "auto"} | fields
    exchange(srv, SPY_OUTPUT, stream=stream, **fields)
    return SEEN


def _names(inits: dict[str, Any], base: type) -> dict[str, Any]:
    # tool_call_parser_active and tokenizer go only to a class whose __init__ names them
    named = inspect.signature(base).parameters
    for keyword in ("tool_call_parser_active", "tokenizer"):
        assert (keyword in inits) == (keyword in named), keyword
    return {k: v for k, v in inits.items() if k not in ("tool_call_parser_active", "tokenizer")}


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "body"])
def test_what_sglang_hands_the_reasoning_detector(stream: bool) -> None:
    reasoning_spy, _ = spy_classes()
    cases: list[tuple[dict[str, Any], dict[str, Any]]] = [
        # a template SGLang sees no thinking in, nothing in the request
        ({}, {"force_reasoning": False}),
        # a template SGLang recognises as always opening <think>
        ({"template": serving.QWEN3_THINKING_TEMPLATE}, {"force_reasoning": True}),
        # a template with a thinking switch (on by default), read against the request
        ({"template": serving.GLM47_TEMPLATE}, {"force_reasoning": True}),
        (
            {
                "template": serving.GLM47_TEMPLATE,
                "chat_template_kwargs": {"enable_thinking": False},
            },
            {"force_reasoning": False},
        ),
        # continuing a final assistant message
        (
            {
                "messages": [*MESSAGES, {"role": "assistant", "content": "<think>\nSo far"}],
                "continue_final_message": True,
            },
            {
                "force_reasoning": False,
                "continue_final_message": True,
                "previous_content": "<think>\nSo far",
            },
        ),
        (
            {"chat_template_kwargs": {"force_nonempty_content": True}},
            {"force_reasoning": False, "force_nonempty_content": True},
        ),
    ]
    if stream:
        cases.append(({"stream_reasoning": False}, {"force_reasoning": False}))
    for fields, handed in cases:
        seen = spy_exchange(stream, **fields)
        assert len(seen.reasoning_inits) == 1, "one reasoning detector per response"
        kwargs = seen.reasoning_inits[0]
        assert set(kwargs) <= REASONING_KEYWORDS
        stream_reasoning = stream and fields.get("stream_reasoning", True)
        assert _names(kwargs, reasoning_spy) == {"stream_reasoning": stream_reasoning, **handed}


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "body"])
def test_what_sglang_hands_the_function_call_detector(stream: bool) -> None:
    _, detector_spy = spy_classes()
    seen = spy_exchange(stream)
    for init in seen.detector_inits:
        assert _names(init, detector_spy) == {"args": ()}, "built with no arguments"
    tool_calls = [(name, args) for name, args in seen.calls if name.startswith("tools.")]
    names = [name for name, _ in tool_calls]
    texts = "".join(args[0] for name, args in tool_calls if name != "tools.finish")
    if stream:
        # each step's normal text from the reasoning detector (empty ones too), then finish
        assert set(names[:-1]) == {"tools.parse_streaming_increment"}
        assert names[-1] == "tools.finish"
        assert [args[0] for _, args in tool_calls[:-1]] == seen.handed_on[: len(tool_calls) - 1]
    else:
        # has_tool_call on the text after the reasoning, then the parse
        assert names[0] == "tools.has_tool_call" and names[-1] == "tools.detect_and_parse"
        assert tool_calls[0][1][0] == tool_calls[-1][1][0] == seen.handed_on[-1]
    assert texts
    tools = [args[-1] for name, args in tool_calls if name != "tools.has_tool_call"]
    assert all([t.function.name for t in each] == ["get_weather"] for each in tools)
