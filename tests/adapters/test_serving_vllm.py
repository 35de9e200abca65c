"""toolparse's vLLM parsers inside vLLM's own chat serving, end to end, over every fixture.

What runs is vLLM's: ``OpenAIServingChat`` (built by its own ``__init__``, which composes the
parsers with ``ParserManager.get_parser`` and checks them against the tokenizer), its
``create_chat_completion`` (chat template kwargs, the request's parser, sampling params,
max tokens), ``chat_completion_stream_generator`` (the SSE strings the server sends) and
``chat_completion_full_generator`` (the body, serialised as vLLM's router does), and on the
engine side its ``OutputProcessor`` with the detokenizer vLLM's AsyncLLM runs (tokenizers'
DecodeStream, skip_special_tokens as the request's sampling params say, the stop token
left out of the text), fed one token per step.

Stand-ins, where vLLM would need a model or a GPU: the engine client (a ModelConfig's few
fields, and a ``generate`` that replays the fixture's tokens through the OutputProcessor)
and the renderer's ``render_chat`` (the chat template rendered with apply_chat_template,
then what vLLM's ``preprocess_chat`` does: a parser built for the request reads the prompt
ids and adjusts the request).  The model type is not "gpt_oss", where vLLM would insist on
its own HarmonyParser (tests/adapters/test_adapters_vllm.py checks what the adapter says then).

The client side is the openai SDK's (tests/serving.py).  Cases that fail today are marked
strict xfail in KNOWN_FAILURES below, each with a reason that says what is wrong (D4:
reasoning the template opened, D9: a tool parser on its own); a fix turns one into
XPASS, and then its mark goes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from types import SimpleNamespace
from typing import Any

import pytest

import serving
from engines import Fixture

serving.require(
    "vLLM",
    "transformers",
    "vllm.entrypoints.openai.chat_completion.serving",
    "vllm.v1.engine.output_processor",
    "toolparse.adapters.vllm",
)

from openai.types.chat import ChatCompletion  # noqa: E402
from starlette.responses import JSONResponse  # noqa: E402
from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest  # noqa: E402
from vllm.entrypoints.openai.chat_completion.serving import OpenAIServingChat  # noqa: E402
from vllm.entrypoints.openai.models.protocol import BaseModelPath  # noqa: E402
from vllm.entrypoints.openai.models.serving import OpenAIServingModels  # noqa: E402
from vllm.entrypoints.serve.engine.protocol import ErrorResponse  # noqa: E402
from vllm.inputs.engine import tokens_input  # noqa: E402
from vllm.reasoning import ReasoningParserManager  # noqa: E402
from vllm.tool_parsers import ToolParserManager  # noqa: E402
from vllm.v1.engine import EngineCoreOutput, EngineCoreRequest, FinishReason  # noqa: E402
from vllm.v1.engine.output_processor import OutputProcessor  # noqa: E402

import toolparse  # noqa: E402
from serving import (  # noqa: E402
    MESSAGES,
    MODEL,
    SCENARIOS,
    WEATHER,
    Cases,
    ClientMessage,
    assert_calls,
    assert_message,
    assert_streamed,
    body_message,
    chunks_of,
    expected,
    first_entry_client_message,
    known_cases,
    output_ids,
    plain_answer,
    prompt_for,
    run_async,
    sdk_stream_message,
    vllm_whole,
)

REASONING = "reasoning"  # the field vLLM streams and returns reasoning in
MODEL_TYPE = "toolparse_test"
MAX_MODEL_LEN = 32768

# vLLM's serving code reads the request's deprecated max_tokens when the client sends no
# max_completion_tokens, and warns each time: its warning, not the test's.
pytestmark = pytest.mark.filterwarnings(
    "ignore:max_tokens is deprecated in favor of the max_completion_tokens field:DeprecationWarning"
)

# -- what fails today ---------------------------------------------------------------------

# Strict: a case that starts passing is a fix, and its entry goes.  The reasons use the
# adapter defects' numbers.


D9_DRAFT = (
    "D9: vLLM hands the prompt ids to the reasoning parser only, so a tool parser on its own "
    "does not know that the template opened the block (these formats' default is closed) "
    "and gives a call drafted in it out as a call"
)
D9_START = (
    "D9: the tool parser on its own reads the reasoning the template opened as the answer, "
    "so a JSON list of calls that only the answer's start may hold comes after text"
)
KNOWN_FAILURES: dict[str, dict[str, str]] = {
    "tool-only": known_cases(
        D9_DRAFT,
        """
        hyperclovax_seed_think/tool_call_inside_reasoning_is_reasoning
        gigachat35/block_opener_inside_unclosed_reasoning
        hunyuan/block_inside_unfinished_reasoning_is_reasoning
        longcat/call_draft_inside_reasoning_is_reasoning
        olmo3/block_inside_reasoning_is_text
        poolside_v1/call_inside_unfinished_reasoning_is_reasoning
        """,
    )
    | known_cases(D9_START, "hyperclovax_seed_think/required_json_list_after_reasoning"),
}


CASES = Cases(KNOWN_FAILURES)
fixture_cases, scenario_cases = CASES.fixtures, CASES.named


# -- the stack, with its stand-ins -------------------------------------------------------


class EngineStandIn:
    """vLLM's EngineClient where the serving layer reads it, without a model: generate()
    replays the scripted tokens, one per step, through vLLM's own OutputProcessor, as
    AsyncLLM.generate yields its RequestOutputs (deltas when streaming, the final output
    only otherwise)."""

    errored = False

    def __init__(self, fast: Any) -> None:
        self.tokenizer = fast
        self.model_config = SimpleNamespace(
            model=MODEL,
            hf_config=SimpleNamespace(model_type=MODEL_TYPE),
            generation_config="vllm",
            override_generation_config={},
            max_model_len=MAX_MODEL_LEN,
            get_diff_sampling_param=dict,
            is_encoder_decoder=False,
        )
        self.renderer = SimpleNamespace(tokenizer=fast)
        self.input_processor = None
        self.vllm_config = None
        self.script: tuple[list[int], str] = ([], "stop")

    def check_admission(self, n: int) -> None:
        return None

    async def generate(
        self, engine_input: Any, sampling_params: Any, request_id: str, **kwargs: Any
    ) -> Any:
        ids, finish = self.script
        processor = OutputProcessor(self.tokenizer, log_stats=False)
        request = EngineCoreRequest(
            request_id=request_id,
            prompt_token_ids=engine_input["prompt_token_ids"],
            mm_features=None,
            sampling_params=sampling_params,
            pooling_params=None,
            arrival_time=0.0,
            lora_request=None,
            cache_salt=None,
            data_parallel_rank=None,
            external_req_id=request_id,
        )
        processor.add_request(request, engine_input.get("prompt"))
        # The model ends with its EOS token (a stop), or a token limit cuts it ("length").
        steps = [*ids, self.tokenizer.eos_token_id] if finish == "stop" else list(ids)
        last = FinishReason.STOP if finish == "stop" else FinishReason.LENGTH
        for k, token in enumerate(steps):
            output = EngineCoreOutput(
                request_id=request_id,
                new_token_ids=[token],
                finish_reason=last if k == len(steps) - 1 else None,
            )
            for item in processor.process_outputs([output]).request_outputs:
                yield item


class RendererStandIn:
    """vLLM's OnlineRenderer where OpenAIServingChat calls it (render_chat): the chat
    template rendered for the request, then the tail of vLLM's preprocess_chat, a parser
    built for the request that reads the prompt ids and adjusts the request."""

    def __init__(self, fast: Any, model_config: Any) -> None:
        self.reasoning_effort_map: dict[str, str] = {}
        self.tokenizer = fast
        self.model_config = model_config
        self.parser: Any = None  # the serving class's own parser_cls

    async def render_chat(self, request: Any) -> tuple[list[Any], list[Any]]:
        params = request.build_chat_params(None, "auto", self.reasoning_effort_map)
        template_kwargs = params.with_defaults({}).chat_template_kwargs
        tools = [tool.model_dump() for tool in request.tools] if request.tools else None
        prompt = self.tokenizer.apply_chat_template(
            request.messages, tools=tools, tokenize=False, **template_kwargs
        )
        ids = self.tokenizer.encode(prompt, add_special_tokens=False)
        parser = self.parser
        if parser is not None and (
            parser.always_adjust_request
            or parser.reasoning_parser_cls is not None
            or request.tool_choice != "none"
        ):
            request_parser = parser(
                self.tokenizer,
                request.tools,
                model_config=self.model_config,
                chat_template_kwargs=template_kwargs,
            )
            request_parser.set_prompt_token_ids(ids)
            request_parser.adjust_request(request=request)
        return [], [tokens_input(ids, prompt=prompt)]


@dataclass(frozen=True)
class Setup:
    """How the server was started: which parsers, and --enable-auto-tool-choice."""

    tool_parser: bool
    reasoning_parser: bool
    auto_tools: bool


BOTH = Setup(tool_parser=True, reasoning_parser=True, auto_tools=True)
TOOL_ONLY = Setup(tool_parser=True, reasoning_parser=False, auto_tools=True)
REASONING_ONLY = Setup(tool_parser=False, reasoning_parser=True, auto_tools=False)


@dataclass
class Server:
    chat: Any
    engine: EngineStandIn
    tokenizer: Any


def tool_parser_name(format: str, repair: bool) -> str:
    """toolparse_<format>, or a subclass with repair=True registered under a name of its
    own, as docs/adapters.md says to set an option."""
    name = f"toolparse_{format}"
    if not repair:
        return name
    variant = f"{name}.repair"
    base = ToolParserManager.get_tool_parser(name)
    ToolParserManager.register_module(
        name=variant, module=type("RepairingToolParser", (base,), {"repair": True})
    )
    return variant


@cache
def server(format: str, template: str, setup: Setup, repair: bool = False) -> Server:
    fast = serving.tokenizer(format, template)
    engine = EngineStandIn(fast)
    renderer = RendererStandIn(fast, engine.model_config)
    # the stand-ins where vLLM's types are expected
    engine_client: Any = engine
    online_renderer: Any = renderer
    models = OpenAIServingModels(engine_client, [BaseModelPath(name=MODEL, model_path=MODEL)])
    chat = OpenAIServingChat(
        engine_client,
        models,
        "assistant",
        online_renderer=online_renderer,
        request_logger=None,
        chat_template=None,
        chat_template_content_format="auto",
        reasoning_parser=f"toolparse_{format}" if setup.reasoning_parser else "",
        enable_auto_tools=setup.auto_tools,
        tool_parser=tool_parser_name(format, repair) if setup.tool_parser else None,
    )
    renderer.parser = chat.parser_cls
    return Server(chat, engine, fast)


@dataclass(frozen=True)
class Exchange:
    """One request and what the server sent back."""

    events: tuple[str, ...] = ()  # the SSE strings of a stream
    body: bytes = b""  # a non-streamed response's body

    def chunks(self) -> list[Any]:
        return chunks_of(self.events)


def exchange(
    srv: Server, output: str, *, stream: bool, finish: str = "stop", **fields: Any
) -> Exchange:
    """Sends a chat completion request whose answer is `output` and returns the reply."""
    srv.engine.script = (output_ids(srv.tokenizer, output), finish)
    messages: Any = MESSAGES
    request = ChatCompletionRequest(model=MODEL, messages=messages, stream=stream, **fields)

    async def go() -> Exchange:
        result = await srv.chat.create_chat_completion(request, None)
        if isinstance(result, ErrorResponse):
            raise AssertionError(f"the server refused the request: {result.model_dump_json()}")
        if stream:
            events = tuple([event async for event in result])
            return Exchange(events=events)
        # vLLM's router: JSONResponse(content=response.model_dump())
        body = bytes(JSONResponse(content=result.model_dump()).body)
        return Exchange(body=body)

    result: Exchange = run_async(go())
    return result


BY_ID = serving.FIXTURES_BY_ID


@cache
def fixture_exchange(fixture_id: str, setup: Setup, stream: bool) -> Exchange:
    """The fixture's output served with the setup's parsers (cached: several tests read
    one stream)."""
    fixture = BY_ID[fixture_id]
    prompt = prompt_for(fixture)
    srv = server(fixture.format, prompt.template, setup, bool(fixture.options.get("repair")))
    fields: dict[str, Any] = {"chat_template_kwargs": prompt.chat_template_kwargs}
    if setup.tool_parser:
        fields |= {"tools": fixture.tools or None, "tool_choice": "auto"}
    return exchange(
        srv, fixture.raw.decode("utf-8"), stream=stream, finish=fixture.finish, **fields
    )


# -- every fixture, both parsers -------------------------------------------------------------


@pytest.mark.parametrize("fixture", fixture_cases("stream"))
def test_the_stream_rebuilds_the_message(fixture: Fixture) -> None:
    """The SSE stream, accumulated by openai's ChatCompletionStreamState (what
    client.chat.completions.stream() runs) and by a client that reads only the first
    tool_calls entry of each chunk, gives toolparse.parse's message."""
    chunks = fixture_exchange(fixture.id, BOTH, True).chunks()
    assert_streamed(chunks, expected(fixture), REASONING)


@pytest.mark.parametrize("fixture", fixture_cases("body"))
def test_the_response_body_is_the_message(fixture: Fixture) -> None:
    body = fixture_exchange(fixture.id, BOTH, False).body
    assert_message(body_message(body, REASONING), vllm_whole(expected(fixture)), streamed=False)


# -- the tool parser alone (D9) ---------------------------------------------------------------


def _has_reasoning(fixture: Fixture) -> bool:
    return bool(expected(fixture).reasoning_content)


@pytest.mark.parametrize("fixture", fixture_cases("tool-only", _has_reasoning))
def test_the_tool_parser_alone_streams_what_it_returns_whole(fixture: Fixture) -> None:
    """With --tool-call-parser and no --reasoning-parser, vLLM marks the tool parser
    skip_reasoning_parsing: reasoning markup is plain content then.  Over the outputs with
    reasoning (the others read as with both parsers): streaming and non-streaming agree,
    no reasoning is reported, and the calls are parse's."""
    chunks = fixture_exchange(fixture.id, TOOL_ONLY, True).chunks()
    streamed = first_entry_client_message(chunks, REASONING)
    whole = body_message(fixture_exchange(fixture.id, TOOL_ONLY, False).body, REASONING)
    want = expected(fixture)
    assert not streamed.reasoning and whole.reasoning is None, "reasoning reported"
    assert (streamed.content or None) == (whole.content or None), "content differs"
    assert_calls(whole.tool_calls, want, streamed=False)
    assert_calls(streamed.tool_calls, want, streamed=True)


# -- the reasoning parser alone (D3) ----------------------------------------------------------


def _plain(fixture: Fixture) -> bool:
    return plain_answer(expected(fixture))


@pytest.mark.parametrize("fixture", fixture_cases("reasoning-only", _plain))
def test_the_reasoning_parser_alone_gives_a_plain_answer_without_markup(
    fixture: Fixture,
) -> None:
    """--reasoning-parser without --enable-auto-tool-choice, a request without tools: the
    answer is the message's content, no format markup in it, streamed or not."""
    chunks = fixture_exchange(fixture.id, REASONING_ONLY, True).chunks()
    want = expected(fixture)
    streamed = first_entry_client_message(chunks, REASONING)
    assert_message(streamed, want, streamed=True, client="stream")
    body = fixture_exchange(fixture.id, REASONING_ONLY, False).body
    assert_message(body_message(body, REASONING), want, streamed=False, client="body")


# -- the scenarios users report --------------------------------------------------------------


def scenario_exchange(name: str, stream: bool) -> Exchange:
    scenario = SCENARIOS[name]
    srv = server(scenario.format, scenario.template, BOTH)
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


# tool_choice "required" and a named tool: vLLM's guided decoding forces a JSON array of
# {"name", "parameters"} (required) or the named tool's arguments object, after any
# reasoning; vLLM's own JSON path reads them, re-encoding the arguments.
FORCED_REASONING = "<think>\nThe user wants the weather in Paris.\n</think>\n\n"
FORCED: dict[str, tuple[Any, str]] = {
    "required": (
        "required",
        '[{"name": "get_weather", "parameters": {"city": "Paris"}}, '
        '{"name": "get_weather", "parameters": {"city": "Oslo"}}]',
    ),
    "named": (
        {"type": "function", "function": {"name": "get_weather"}},
        '{"city": "Paris"}',
    ),
}
FORCED_CALLS = {
    "required": [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Oslo"})],
    "named": [("get_weather", {"city": "Paris"})],
}


def forced_exchange(kind: str, stream: bool) -> Exchange:
    tool_choice, answer = FORCED[kind]
    srv = server("qwen3", serving.base_template("qwen3"), BOTH)
    return exchange(
        srv, FORCED_REASONING + answer, stream=stream, tools=[WEATHER], tool_choice=tool_choice
    )


def assert_forced_calls(kind: str, got: ClientMessage) -> None:
    reasoning = toolparse.parse(FORCED_REASONING, "qwen3").reasoning_content
    assert (got.reasoning or None) == reasoning, "reasoning"
    assert not got.content, "content"
    assert [(c.name, json.loads(c.arguments)) for c in got.tool_calls] == FORCED_CALLS[kind]
    assert all(c.id and c.type == "function" for c in got.tool_calls)


@pytest.mark.parametrize("kind", scenario_cases("forced-stream", FORCED))
def test_a_forced_tool_choice_streams_the_call(kind: str) -> None:
    chunks = forced_exchange(kind, True).chunks()
    assert_forced_calls(kind, sdk_stream_message(chunks, REASONING))
    assert_forced_calls(kind, first_entry_client_message(chunks, REASONING))


@pytest.mark.parametrize("kind", scenario_cases("forced-body", FORCED))
def test_a_forced_tool_choice_returns_the_call(kind: str) -> None:
    assert_forced_calls(kind, body_message(forced_exchange(kind, False).body, REASONING))


# usage.completion_tokens_details.reasoning_tokens: the tokens of the reasoning, as vLLM's
# own qwen3 reasoning parser counts them for the same tokens (those inside the block).
USAGE_OUTPUT = "<think>\nTwo plus two is four, a small sum.\n</think>\n\nThe answer is 4."


def reasoning_token_count(srv: Server, output: str) -> int:
    ids = output_ids(srv.tokenizer, output)
    vocab = srv.tokenizer.get_vocab()
    inside = ids.index(vocab["</think>"]) - ids.index(vocab["<think>"]) - 1
    own = ReasoningParserManager.get_reasoning_parser("qwen3")(srv.tokenizer)
    assert own.count_reasoning_tokens(ids) == inside
    return inside


def usage_of(stream: bool) -> tuple[int, Any]:
    srv = server("qwen3", serving.base_template("qwen3"), BOTH)
    fields: dict[str, Any] = {"tools": [WEATHER], "tool_choice": "auto"}
    if stream:
        fields["stream_options"] = {"include_usage": True}
    reply = exchange(srv, USAGE_OUTPUT, stream=stream, **fields)
    if stream:
        usage = reply.chunks()[-1].usage
    else:
        usage = ChatCompletion.model_validate_json(reply.body).usage
    return reasoning_token_count(srv, USAGE_OUTPUT), usage


@pytest.mark.parametrize("mode", scenario_cases("usage", ("stream", "body")))
def test_usage_counts_the_reasoning_tokens(mode: str) -> None:
    count, usage = usage_of(mode == "stream")
    assert usage is not None and usage.completion_tokens_details is not None
    assert usage.completion_tokens_details.reasoning_tokens == count
