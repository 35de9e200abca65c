"""What the end-to-end tests through vLLM's and SGLang's serving code share.

tests/adapters/test_serving_vllm.py and tests/adapters/test_serving_sglang.py run the
stacks' own chat serving classes over every fixture.  This module holds the parts that are
not one stack's:

- ``require``: the stack's modules, or a skip (a failure under TOOLPARSE_REQUIRE_STACKS=1).
- The tokens: a small byte-level BPE trained here, offline, on generated text, with the
  format's markers added as tokens and wrapped in transformers' PreTrainedTokenizerFast
  (nothing comes from a model hub); ``output_ids`` is a fixture's output as token ids.
- The prompt: the format's chat template from tests/templates (a plain one where there is
  none), and for a fixture whose reasoning block the template opens (or must not), the
  same template with a thinking switch, as real templates have it (``Prompt``).
- The client side: the SSE ``data:`` lines a server sent (``sse_data``), parsed with the
  openai SDK's own types and accumulated by the SDK's ``ChatCompletionStreamState`` (what
  ``client.chat.completions.stream()`` runs) or by a minimal client that reads only the
  first entry of ``delta.tool_calls`` in each chunk; and a non-streamed body, validated
  with the SDK's ``ChatCompletion``.
- ``expected`` and ``assert_message``: what the client must end up with, toolparse.parse's
  message with ``finish_reason="stop"`` (neither stack tells its parsers why a stream
  ended).
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import os
import random
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import pytest

import toolparse
from engines import FIXTURES, Fixture

# CI sets it where the stacks are installed: a stack that does not import is then an error.
REQUIRE_STACKS = os.environ.get("TOOLPARSE_REQUIRE_STACKS") == "1"

FIXTURES_BY_ID = {f.id: f for f in FIXTURES}
MODEL = "toolparse-test"
# The conversation every request sends; the fixture's output is the model's answer to it.
MESSAGES: list[dict[str, Any]] = [{"role": "user", "content": "Please help me with this."}]


def require(stack: str, *modules: str) -> None:
    """Imports the modules a stack's serving tests use; when one is missing, skips the
    calling test module, or fails it with TOOLPARSE_REQUIRE_STACKS=1 set."""
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception as error:  # not installed, or an install that does not import
            message = (
                f"{stack}'s serving code is not importable here ({name}: "
                f"{type(error).__name__}: {error}); docs/adapters.md says how to install it"
            )
            if REQUIRE_STACKS:
                pytest.fail(f"{message} (TOOLPARSE_REQUIRE_STACKS=1)", pytrace=False)
            pytest.skip(message, allow_module_level=True)


# -- tokens ---------------------------------------------------------------------------

EOS = "<|endoftext|>"
VOCAB_SIZE = 3000
_WORDS = (
    "the a an to of and in is it you that for on with as was be this are have not at from "
    "or by one all we can but what if there your which when do time will about how up out "
    "so some would make like into has look two more write go see number no way could people "
    "my than first water been call who its now find long down day did get come made may part "
    "user wants weather city forecast current file path read search query result results "
    "answer question think need check tool function name arguments value values first then "
    "convert amount currency temperature days unit location list directory content error "
    "true false null let me should because since I will use get set send open close start end "
    "here is are was were they them their there these those other another each every both "
    "only also just still even very much many most more less few little big small large new "
    "old good great best right left high low next last same different important possible "
    "please thanks hello sure okay yes help want know tell ask give take run test build code "
    "data text string type key message email date today tomorrow week month year hour minute "
    "second price total count size limit page title note notes example parameter parameters "
    "request response image create update delete add remove move copy save load find show "
    "calculate compute report summary status order item items account address phone capital "
    "country language english french paris london tokyo berlin rome madrid oslo new york "
    "first second third after before while until during without within between across over "
    "under again already always never often sometimes usually because therefore however "
    "call calls called calling function functions argument tool tools reasoning answer"
).split()


def _sentence(rng: random.Random) -> str:
    words = [rng.choice(_WORDS) for _ in range(rng.randint(3, 24))]
    words[0] = words[0].capitalize()
    return " ".join(words) + rng.choice((".", ".", "?", "!", ":", ",", ".\n", ".\n\n"))


def _value(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(7 if depth < 2 else 4)
    if kind == 0:
        return rng.randint(-50, 5000)
    if kind == 1:
        return round(rng.uniform(-100, 100), rng.randint(0, 3))
    if kind == 2:
        return rng.choice((True, False, None))
    if kind == 3:
        return " ".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 5)))
    if kind == 4:
        return [_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return {rng.choice(_WORDS): _value(rng, depth + 1) for _ in range(rng.randint(1, 3))}


def training_text(seed: int = 0, lines: int = 4000) -> Iterator[str]:
    """Generated text the BPE is trained on: prose, JSON calls and tagged lines, the kinds of
    text the fixtures hold (none of the fixtures themselves)."""
    rng = random.Random(seed)
    for _ in range(lines):
        kind = rng.random()
        if kind < 0.45:
            yield "".join(_sentence(rng) for _ in range(rng.randint(1, 3)))
        elif kind < 0.8:
            call = {"name": "_".join(rng.sample(_WORDS, 2)), "arguments": _value(rng, 1)}
            indent = rng.choice((None, None, 2))
            yield json.dumps(call, ensure_ascii=rng.random() < 0.5, indent=indent)
        else:
            tag = rng.choice(_WORDS)
            yield f"<{tag}>{_sentence(rng)}</{tag}>\n"


@cache
def _trained_tokenizer() -> str:
    """The byte-level BPE, trained once per process, as tokenizers' JSON."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=[EOS],
        show_progress=False,
    )
    tokenizer.train_from_iterator(training_text(), trainer)
    return str(tokenizer.to_str())


@cache
def tokenizer(format: str, chat_template: str) -> Any:
    """A transformers PreTrainedTokenizerFast for the format: the trained BPE, the format's
    markers as added tokens (not special: they reach the parsers whatever
    skip_special_tokens says), EOS as the one special token, and the chat template."""
    from tokenizers import AddedToken, Tokenizer
    from transformers import PreTrainedTokenizerFast

    fast = PreTrainedTokenizerFast(
        tokenizer_object=Tokenizer.from_str(_trained_tokenizer()), eos_token=EOS
    )
    markers = toolparse.get_format(format).markers
    fast.add_tokens([AddedToken(m, normalized=False, special=False) for m in markers])
    fast.chat_template = chat_template
    return fast


def output_ids(fast: Any, text: str) -> list[int]:
    """The output as the model would have generated it: its token ids (a decode of them
    gives the text back, checked here so that the test feeds what the fixture holds)."""
    ids: list[int] = fast.encode(text, add_special_tokens=False)
    decoded = fast.decode(ids, skip_special_tokens=False, clean_up_tokenization_spaces=False)
    assert decoded == text, f"the tokenizer does not give the output back: {decoded!r}"
    return ids


# -- prompts ----------------------------------------------------------------------------

TEMPLATES = Path(__file__).parent / "templates"
# Formats with no template of their own in tests/templates: a plain turn-by-turn prompt.
PLAIN_TEMPLATE = (
    "{%- for message in messages %}{{- message.role + ': ' + message.content + '\\n' }}"
    "{%- endfor %}{%- if add_generation_prompt %}{{- 'assistant: ' }}{%- endif %}"
)
# How a chat template that opens the format's reasoning block ends its generation prompt
# (the text the output then continues inside the block).
OPENED_BY_TEMPLATE: dict[str, str] = {
    "apertus": "<|inner_prefix|>",
    "apriel": "Here are my reasoning steps:\n",
    "cohere_command": "<|START_THINKING|>",
    "command_r7b": "<|START_THINKING|>",
    "cwm": "<think>",
    "deepseek_r1": "<think>\n",
    "deepseek_v31": "<think>",
    "deepseek_v32": "<think>",
    "deepseek_v4": "<think>",
    "deepseek_v41": "<think>",
    "dots": "<think>",
    "ernie45": "<think>\n",
    "gemma4": "<|channel>thought\n",
    "generic_xml": "<think>\n",
    "gigachat35": "<think>",
    "glm45": "<think>",
    "gpt_oss": "<|channel|>analysis<|message|>",
    "granite": "<think>",
    "hunyuan": "<think>",
    "hyperclovax_seed_think": "<think>",
    "hyperclovax_seed_think_14b": "<|im_start|>assistant/think\n",
    "inkling": "<|content_thinking|>",
    "iquest_coder_v2": "<think>",
    "iquest_q1": "<think>",
    "kimi": "◁think▷",
    "kimi_k2": "<think>",
    "kimi_k3": "<|open|>think<|sep|>",
    "lfm2": "<think>",
    "ling3": "<think>",
    "llmjp_harmony": "<|channel|>analysis<|message|>",
    "longcat": "<longcat_think>",
    "markdown_json": "<think>\n",
    "minimax": "<think>",
    "minimax_m2": "<think>\n",
    "minimax_m3": "<mm:think>",
    "mistral": "[THINK]",
    "muse": " to=self<|message|>",
    "nemotron_v2": "<think>\n",
    "olmo3": "<think>",
    "plamo3": "<|plamo:begin_think:plamo|>",
    "poolside_v1": "<think>",
    "qwen3": "<think>\n",
    "qwen3_coder": "<think>\n",
    "rwkv": "<think>",
    "seed_oss": "<seed:think>",
    "solar_open2": "<|think:start|>",
    "step3": "<think>\n",
    "step5": "<think>\n",
    "xlam": "<think>\n",
}
# How a template with thinking off ends it where it closes an empty block there.
CLOSED_BY_TEMPLATE: dict[str, str] = {"deepseek_v31": "</think>", "deepseek_v32": "</think>"}
# The chat_template_kwargs switch of the family's templates (enable_thinking elsewhere).
THINKING_SWITCH: dict[str, str] = {
    name: "thinking" for name in ("deepseek_v31", "deepseek_v32", "deepseek_v4", "deepseek_v41")
}


def base_template(format: str) -> str:
    path = TEMPLATES / f"{format}.jinja"
    return path.read_text(encoding="utf-8") if path.exists() else PLAIN_TEMPLATE


def render(
    format: str, template: str, tools: Sequence[dict[str, Any]] | None, **kwargs: Any
) -> str:
    """The prompt the template renders for MESSAGES, through the format's tokenizer's own
    apply_chat_template (transformers' Jinja environment and special-token variables)."""
    fast = tokenizer(format, template)
    text = fast.apply_chat_template(MESSAGES, tools=tools, tokenize=False, **kwargs)
    return str(text)


def generation_prompt(format: str, template: str, tools: Sequence[dict[str, Any]] | None) -> str:
    """What the template adds for add_generation_prompt=True."""
    whole = render(format, template, tools, add_generation_prompt=True)
    turns = render(format, template, tools, add_generation_prompt=False)
    assert whole.startswith(turns), "the generation prompt is not a suffix of the turns"
    return whole[len(turns) :]


def _jinja_string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


@dataclass(frozen=True)
class Prompt:
    """The chat template a fixture is served with and what the request tells it.

    ``opens`` says whether the prompt ends inside the format's reasoning block: the
    fixture's reasoning_in_prompt option, else the format's default.  Where the format's
    template renders it otherwise, or the fixture sets the option, the template gets a
    thinking switch as real ones have (``enable_thinking``, DeepSeek's ``thinking``),
    defaulting to the format's default, and the request sets it when the fixture differs:
    the generation prompt then ends with the opened block, or without it."""

    template: str
    chat_template_kwargs: dict[str, Any] | None
    opens: bool


def prompt_for(fixture: Fixture) -> Prompt:
    return _prompt(fixture.format, fixture.options.get("reasoning_in_prompt"), bool(fixture.tools))


@cache
def _prompt(format: str, option: bool | None, with_tools: bool) -> Prompt:
    fmt = toolparse.get_format(format)
    opens = fmt.reasoning_in_prompt if option is None else option
    template = base_template(format)
    tools = [_PROBE_TOOL] if with_tools else None
    generation = generation_prompt(format, template, tools)
    opener = OPENED_BY_TEMPLATE.get(format)
    already = opener is not None and generation.rstrip().endswith(opener.rstrip())
    if option is None and opens == already:
        return Prompt(template, None, opens)
    if opener is None:
        raise AssertionError(f"{format}: no OPENED_BY_TEMPLATE entry for a prompt that opens")
    closer = CLOSED_BY_TEMPLATE.get(format, "")
    stem = generation.rstrip()
    for tail in (opener.rstrip(), closer):
        if tail and stem.endswith(tail):
            stem = stem[: -len(tail)]
            break
    else:
        stem = generation
    switch = THINKING_SWITCH.get(format, "enable_thinking")
    default = fmt.reasoning_in_prompt
    if default:  # the toggle patterns real templates use (SGLang's detection reads them)
        toggle = f"{{%- set {switch} = {switch} if {switch} is defined else true %}}"
    else:
        toggle = f"{{% if not {switch} is defined %}}{{% set {switch} = false %}}{{% endif %}}"
    variant = (
        "{%- set toolparse_generation = add_generation_prompt %}"
        "{%- set add_generation_prompt = false %}"
        f"{toggle}\n{template}"
        f"{{%- if toolparse_generation %}}{{{{- {_jinja_string(stem)} }}}}"
        f"{{%- if {switch} %}}{{{{- {_jinja_string(opener)} }}}}"
        f"{{%- else %}}{{{{- {_jinja_string(closer)} }}}}{{%- endif %}}{{%- endif %}}"
    )
    kwargs = None if opens == default else {switch: opens}
    rendered = render(format, variant, tools, add_generation_prompt=True, **(kwargs or {}))
    assert rendered.endswith(opener) == opens, rendered
    return Prompt(variant, kwargs, opens)


# A tool for probing what a template renders before the request's own tools are known.
_PROBE_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {"name": "probe", "parameters": {"type": "object", "properties": {}}},
}


# -- the client side ------------------------------------------------------------------


def sse_data(events: Iterable[str | bytes]) -> list[str]:
    """The data of each server-sent event up to ``[DONE]``, as a client reads the stream
    (events are separated by a blank line; a data field may span several data lines)."""
    text = "".join(e.decode("utf-8") if isinstance(e, bytes) else e for e in events)
    out: list[str] = []
    for event in text.split("\n\n"):
        data = [
            line[5:].removeprefix(" ") for line in event.split("\n") if line.startswith("data:")
        ]
        if not data:
            continue
        payload = "\n".join(data)
        if payload == "[DONE]":
            return out
        out.append(payload)
    raise AssertionError("the stream did not end with data: [DONE]")


def chunks_of(events: Iterable[str | bytes]) -> list[Any]:
    """The stream's chunks as the openai SDK's ChatCompletionChunk (validated)."""
    from openai.types.chat import ChatCompletionChunk

    chunks = []
    for data in sse_data(events):
        if '"error"' in data and "error" in json.loads(data):  # the server's error event
            raise AssertionError(f"the server sent an error: {data}")
        chunks.append(ChatCompletionChunk.model_validate_json(data))
    return chunks


@dataclass(frozen=True)
class ClientCall:
    id: str | None
    type: str | None
    name: str | None
    arguments: str


@dataclass(frozen=True)
class ClientMessage:
    """What a client ends up with: the message and the choice's finish reason."""

    content: str | None
    reasoning: str | None
    tool_calls: tuple[ClientCall, ...]
    finish_reason: str | None


def _reasoning_of(message: Any, field: str) -> str | None:
    # The stacks name the extra field differently: vLLM "reasoning", SGLang
    # "reasoning_content"; the SDK keeps unknown fields as attributes.
    value = getattr(message, field, None)
    return value if isinstance(value, str) else None


def sdk_stream_message(chunks: Sequence[Any], reasoning_field: str) -> ClientMessage:
    """The message openai's ChatCompletionStreamState accumulates from the chunks."""
    from openai.lib.streaming.chat import ChatCompletionStreamState

    state: ChatCompletionStreamState[Any] = ChatCompletionStreamState()
    for chunk in chunks:
        state.handle_chunk(chunk)
    snapshot = state.current_completion_snapshot
    finish = snapshot.choices[0].finish_reason
    # get_final_completion() raises LengthFinishReasonError by design on "length".
    completion = snapshot if finish == "length" else state.get_final_completion()
    message = completion.choices[0].message
    calls = tuple(
        ClientCall(c.id, c.type, c.function.name, c.function.arguments)
        for c in message.tool_calls or ()
    )
    return ClientMessage(message.content, _reasoning_of(message, reasoning_field), calls, finish)


def first_entry_client_message(chunks: Sequence[Any], reasoning_field: str) -> ClientMessage:
    """What a minimal client accumulates that reads only ``delta.tool_calls[0]`` of each
    chunk (as OpenAI's own API streams one entry per chunk): texts are appended, a call is
    keyed by its index, its id and type taken when present, name and arguments appended."""
    content: list[str] = []
    reasoning: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    finish: str | None = None
    for chunk in chunks:
        for choice in chunk.choices:
            delta = choice.delta
            content.append(delta.content or "")
            reasoning.append(_reasoning_of(delta, reasoning_field) or "")
            if delta.tool_calls:
                entry = delta.tool_calls[0]
                call = calls.setdefault(
                    entry.index, {"id": None, "type": None, "name": None, "arguments": ""}
                )
                call["id"] = entry.id or call["id"]
                call["type"] = entry.type or call["type"]
                if entry.function is not None:
                    if entry.function.name:
                        call["name"] = (call["name"] or "") + entry.function.name
                    call["arguments"] += entry.function.arguments or ""
            finish = choice.finish_reason or finish
    ordered = tuple(ClientCall(**calls[k]) for k in sorted(calls))
    return ClientMessage("".join(content), "".join(reasoning), ordered, finish)


def body_message(body: bytes | str, reasoning_field: str) -> ClientMessage:
    """A non-streamed response body, validated with the openai SDK's ChatCompletion."""
    from openai.types.chat import ChatCompletion

    completion = ChatCompletion.model_validate_json(body)
    choice = completion.choices[0]
    message = choice.message
    calls = tuple(
        ClientCall(c.id, c.type, c.function.name, c.function.arguments)  # type: ignore[union-attr]
        for c in message.tool_calls or ()
    )
    return ClientMessage(
        message.content, _reasoning_of(message, reasoning_field), calls, choice.finish_reason
    )


# -- what the client must get -------------------------------------------------------------


def expected(fixture: Fixture) -> toolparse.Message:
    """The fixture's message as toolparse.parse reads the whole output; "stop", since
    neither stack tells its parsers why a stream ended."""
    return _expected(fixture.id)


@cache
def _expected(fixture_id: str) -> toolparse.Message:
    fixture = FIXTURES_BY_ID[fixture_id]
    return toolparse.parse(
        fixture.raw, fixture.format, tools=fixture.tools, finish_reason="stop", **fixture.options
    )


def vllm_whole(message: toolparse.Message) -> toolparse.Message:
    """The message as vLLM's non-streamed parse returns it: content that is only whitespace
    is dropped where calls were made (its abstract parser does so for every tool parser;
    a format that keeps whitespace, step5's, still streams it)."""
    content = message.content
    if message.tool_calls and content is not None and not content.strip():
        return dataclasses.replace(message, content=None)
    return message


def assert_message(
    got: ClientMessage, want: toolparse.Message, *, streamed: bool, client: str = ""
) -> None:
    """The client's message is the parsed one: content and reasoning (an empty text and no
    text are one: the stacks open a stream with ``content: ""``), and the calls."""
    where = f" ({client})" if client else ""
    assert (got.content or None) == (want.content or None), f"content{where}"
    assert (got.reasoning or None) == (want.reasoning_content or None), f"reasoning{where}"
    assert_calls(got.tool_calls, want, streamed=streamed, client=client)


def assert_calls(
    got: Sequence[ClientCall], want: toolparse.Message, *, streamed: bool, client: str = ""
) -> None:
    """Every call has an id and type "function", and the names and arguments are the parsed
    calls'.  A streamed call that failed after its name went out stays with the client
    (docs/adapters.md): the delivered calls must then come out whole and in order among the
    streamed ones."""
    where = f" ({client})" if client else ""
    for call in got:
        assert call.id, f"a call without an id{where}: {call}"
        assert call.type == "function", f"a call whose type is not 'function'{where}: {call}"
    received = [(c.name, c.arguments) for c in got]
    delivered = [(c.name, c.arguments_json) for c in want.tool_calls]
    if streamed and want.errors:
        remaining = iter(received)
        assert all(call in remaining for call in delivered), f"tool calls{where}"
    else:
        assert received == delivered, f"tool calls{where}"


def assert_streamed(chunks: Sequence[Any], want: toolparse.Message, field: str) -> None:
    """Both clients rebuild want from the chunks: openai's ChatCompletionStreamState
    (what client.chat.completions.stream() runs) and one that reads only the first
    tool_calls entry of each chunk."""
    assert_message(sdk_stream_message(chunks, field), want, streamed=True, client="sdk")
    got = first_entry_client_message(chunks, field)
    assert_message(got, want, streamed=True, client="first tool_calls entry")


# -- what fails today: strict xfails by case ------------------------------------------------


def known_cases(reason: str, ids: str) -> dict[str, str]:
    """{case id: reason} for whitespace-separated case ids."""
    return dict.fromkeys(ids.split(), reason)


class Cases:
    """Parametrize cases of one stack's tests, each a strict xfail where the known
    failures (kind -> {case id: reason}) list it: a case that starts passing is a fix,
    and its entry goes."""

    def __init__(self, known: dict[str, dict[str, str]]) -> None:
        self.known = known

    def marks(self, kind: str, case_id: str) -> list[pytest.MarkDecorator]:
        reason = self.known.get(kind, {}).get(case_id)
        return [pytest.mark.xfail(strict=True, reason=reason)] if reason else []

    def fixtures(self, kind: str, keep: Callable[[Fixture], bool] = lambda f: True) -> list[Any]:
        return [pytest.param(f, id=f.id, marks=self.marks(kind, f.id)) for f in FIXTURES if keep(f)]

    def named(self, kind: str, ids: Iterable[str]) -> list[Any]:
        return [pytest.param(i, id=i, marks=self.marks(kind, i)) for i in ids]


def plain_answer(message: toolparse.Message) -> bool:
    """A message with no call in it, none attempted."""
    return not message.tool_calls and not message.errors


def run_async(awaitable: Any) -> Any:
    """Runs a coroutine to its end on this process's one event loop (one loop and one
    default executor for all the requests, as in a server)."""
    return _event_loop().run_until_complete(awaitable)


@cache
def _event_loop() -> Any:
    import asyncio

    return asyncio.new_event_loop()


# -- the scenarios users report (both stacks) -----------------------------------------------

_DEEPSEEK_MARKER = re.compile(r"<\|([^|>]*)\|>")


def deepseek_spelling(text: str) -> str:
    """DeepSeek's markers written with ASCII: ``<|tool_calls_begin|>`` stands for
    ``<\uff5ctool\u2581calls\u2581begin\uff5c>`` (U+FF5C bars, U+2581 between words)."""
    return _DEEPSEEK_MARKER.sub(
        lambda m: "<\uff5c" + m.group(1).replace("_", "\u2581") + "\uff5c>", text
    )


WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}


@dataclass(frozen=True)
class Scenario:
    """A model family's template, what the request says, the output, and how toolparse
    reads that output (the options give the truth: where the template opened reasoning)."""

    format: str
    template: str
    output: str
    chat_template_kwargs: dict[str, Any] | None = None
    options: dict[str, Any] = field(default_factory=dict)
    tools: tuple[dict[str, Any], ...] = (WEATHER,)

    def want(self) -> toolparse.Message:
        return toolparse.parse(
            self.output, self.format, tools=list(self.tools), finish_reason="stop", **self.options
        )


# Qwen3-*-Thinking-2507: the generation prompt opens <think>; the output holds no opener.
QWEN3_THINKING_TEMPLATE = (
    "{%- for message in messages %}"
    "{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n<think>\\n' }}{%- endif %}"
)
# DeepSeek V3.1: thinking off unless chat_template_kwargs says thinking=True.
DEEPSEEK_V31_TEMPLATE = deepseek_spelling(
    "{% if not thinking is defined %}{% set thinking = false %}{% endif %}"
    "{{- bos_token }}{%- for message in messages %}"
    "{{- '<|User|>' + message.content }}{%- endfor %}"
    "{%- if add_generation_prompt %}{%- if thinking %}{{- '<|Assistant|><think>' }}"
    "{%- else %}{{- '<|Assistant|></think>' }}{%- endif %}{%- endif %}"
)
# GLM-4.7: the generation prompt opens <think> unless enable_thinking is false.
GLM47_TEMPLATE = (
    "[gMASK]<sop>{%- for message in messages %}"
    "{{- '<|' + message.role + '|>\\n' + message.content }}{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|assistant|>' }}"
    "{{- '</think>' if (enable_thinking is defined and not enable_thinking) else '<think>' }}"
    "{%- endif %}"
)

SCENARIOS: dict[str, Scenario] = {
    "qwen3-thinking-2507": Scenario(
        "qwen3",
        QWEN3_THINKING_TEMPLATE,
        "The user wants the weather in Paris; get_weather gives it.\n</think>\n\n"
        "Let me check.\n<tool_call>\n"
        '{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
        options={"reasoning_in_prompt": True},
    ),
    "deepseek-v31-thinking": Scenario(
        "deepseek_v31",
        DEEPSEEK_V31_TEMPLATE,
        "2 plus 2 is 4.</think>The answer is 4.",
        chat_template_kwargs={"thinking": True},
        options={"reasoning_in_prompt": True},
    ),
    "deepseek-v31-not-thinking": Scenario(
        "deepseek_v31",
        DEEPSEEK_V31_TEMPLATE,
        deepseek_spelling(
            "Let me check.<|tool_calls_begin|><|tool_call_begin|>get_weather<|tool_sep|>"
            '{"city": "Paris"}<|tool_call_end|><|tool_calls_end|>'
        ),
        chat_template_kwargs={"thinking": False},
    ),
    "glm47": Scenario(
        "glm45",
        GLM47_TEMPLATE,
        "The user wants the weather in Paris.</think>\n<tool_call>get_weather\n"
        "<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>",
        options={"reasoning_in_prompt": True},
    ),
}
