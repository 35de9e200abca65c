"""toolparse as vLLM tool-call and reasoning parsers (docs/adapters.md).

Importing this module registers, for every toolparse format and alias, a tool parser and
a reasoning parser named ``toolparse_<format>`` with vLLM's ``ToolParserManager`` and
``ReasoningParserManager``::

    vllm serve Qwen/Qwen3-8B --enable-auto-tool-choice \\
        --tool-parser-plugin toolparse.adapters.vllm --tool-call-parser toolparse_qwen3 \\
        --reasoning-parser-plugin toolparse.adapters.vllm --reasoning-parser toolparse_qwen3

(``register`` is also the ``vllm.general_plugins`` entry point, which loads it without
the plugin options.)

Lifetime.  vLLM builds one ``Parser`` per choice of each request, and that ``Parser``
builds its own tool parser and reasoning parser, so an instance sees one response.  The
tool parser still keys its state on the request object it is handed: a different
request starts a fresh ``ResponseTranslator`` (one ``StreamParser``), so an instance
reused for another request never mixes two streams.  The reasoning parser's streaming
calls carry no request; its state is the instance's, begun on the first delta and ended
by ``finish_streaming``.

Streaming.  Both set ``engine_based_streaming``: vLLM then hands them only the new text
(no accumulated ``current_text`` is built), the reasoning parser reports the end of the
reasoning with ``has_engine_confirmed_reasoning_end``, and ``finish_streaming`` flushes
each at the end of the stream.  Deltas are vLLM's own ``DeltaMessage`` objects: a call's
first ``DeltaToolCall`` carries index, id, type and the function name, the next ones
argument fragments that add up to the arguments toolparse delivers.

Split.  The reasoning parser streams the reasoning block at the start of the output and
then hands the raw text after it to the tool parser (vLLM passes it on), which parses it
with the format's grammar; where reasoning opens again later (Cohere after an action),
the tool parser streams that as reasoning too.  Without a reasoning parser, the tool
parser reads the whole output: reasoning still goes to ``DeltaMessage.reasoning`` when
streaming, while the non-streaming result has no place for it and drops it.
"""

from __future__ import annotations

import importlib
import logging
import sys
from collections.abc import Iterable, Sequence
from functools import cache
from types import FrameType, ModuleType
from typing import Any

from ..formats import get_format
from ..stream import parse
from ._translate import (
    FORCED_CALLS,
    PREFIX,
    TEMPLATE_OPENS_REASONING,
    CallDelta,
    Delta,
    ReasoningEndScanner,
    ReasoningSplitter,
    ReasoningTokenCounter,
    ResponseTranslator,
    ServedFields,
    SplitMode,
    adapter_names,
    decide_reasoning_in_prompt,
    entry_option,
    format_class,
    named_call_envelope,
    passthrough_format,
    reasoning_markers,
    reasoning_open_at,
    split_reasoning,
    template_default,
    tools_as_dicts,
    unvalidated,
    unvalidated_holds,
    warn_calls_left_out,
)

__all__ = [
    "CallDelta",
    "Delta",
    "ToolparseReasoningParser",
    "ToolparseToolParser",
    "reasoning_parser_class",
    "register",
    "to_delta_message",
    "tool_parser_class",
]

logger = logging.getLogger(__name__)


def _first(*modules: str) -> ModuleType:
    """The first of these modules that imports (vLLM moved them between releases)."""
    for name in modules[:-1]:
        try:
            return importlib.import_module(name)
        except ImportError:
            pass
    return importlib.import_module(modules[-1])


_tools_module = _first(
    "vllm.tool_parsers.abstract_tool_parser",
    "vllm.entrypoints.openai.tool_parsers.abstract_tool_parser",
)
_reasoning_module = _first("vllm.reasoning.abs_reasoning_parsers", "vllm.reasoning")
_protocol = _first("vllm.entrypoints.generate.base.protocol", "vllm.entrypoints.openai.protocol")
_parser_module = _first("vllm.parser.abstract_parser", "vllm.parser")

ToolParser: Any = _tools_module.ToolParser
ToolParserManager: Any = _tools_module.ToolParserManager
ReasoningParser: Any = _reasoning_module.ReasoningParser
ReasoningParserManager: Any = _reasoning_module.ReasoningParserManager
Parser: Any = _parser_module.Parser
DeltaMessage: Any = _protocol.DeltaMessage
DeltaToolCall: Any = _protocol.DeltaToolCall
DeltaFunctionCall: Any = _protocol.DeltaFunctionCall
ExtractedToolCallInformation: Any = _protocol.ExtractedToolCallInformation
ToolCall: Any = _protocol.ToolCall
FunctionCall: Any = _protocol.FunctionCall


# vLLM's models with only the fields set that carry something: vLLM serialises with
# exclude_unset, so a fragment never says "id": null or "type": null, which the openai
# SDK's stream accumulator copies over the call's id and type.
def _message(values: dict[str, Any]) -> Any:
    return unvalidated(
        DeltaMessage, values, {"role": None, "content": None, "reasoning": None, "tool_calls": []}
    )


def _tool_call(index: int, id: str | None, name: str | None, arguments: str) -> Any:
    function: dict[str, Any] = {}
    if name is not None:
        function["name"] = name
    if arguments:
        function["arguments"] = arguments
    values: dict[str, Any] = {
        "index": index,
        "function": unvalidated(DeltaFunctionCall, function, {"name": None, "arguments": None}),
    }
    if id is not None:
        values["id"] = id
        values["type"] = "function"
    return unvalidated(DeltaToolCall, values, {"id": None, "type": None})


def _validated_sample() -> Any:
    function = DeltaFunctionCall(name="f", arguments="{")
    call = DeltaToolCall(index=0, id="c", type="function", function=function)
    return DeltaMessage(content="a", tool_calls=[call])


def _built_sample() -> Any:
    return _message({"content": "a", "tool_calls": [_tool_call(0, "c", "f", "{")]})


if not unvalidated_holds(_built_sample, _validated_sample):  # pragma: no cover
    # a pydantic or vLLM release this was not built for: validate

    def _message(values: dict[str, Any]) -> Any:
        return DeltaMessage(**values)

    def _tool_call(index: int, id: str | None, name: str | None, arguments: str) -> Any:
        function: dict[str, Any] = {"name": name} if name is not None else {}
        if arguments:
            function["arguments"] = arguments
        extra = {"id": id, "type": "function"} if id is not None else {}
        return DeltaToolCall(index=index, function=DeltaFunctionCall(**function), **extra)


def to_delta_message(delta: Delta) -> Any:
    """A toolparse Delta as vLLM's DeltaMessage, or None when there is nothing to send."""
    if delta.errors or delta.repaired:
        _log(delta)
    if not delta:
        return None
    values: dict[str, Any] = {}
    if delta.content:
        values["content"] = delta.content
    if delta.reasoning:
        values["reasoning"] = delta.reasoning
    if delta.calls:
        values["tool_calls"] = [_tool_call(c.index, c.id, c.name, c.arguments) for c in delta.calls]
    return _message(values)


def _merge(into: Any, more: Any) -> None:
    """Adds a DeltaMessage's text and call entries to another, one entry per call."""
    for field in ("content", "reasoning"):
        if getattr(more, field):
            setattr(into, field, (getattr(into, field) or "") + getattr(more, field))
    entries = {entry.index: entry for entry in into.tool_calls}
    for entry in more.tool_calls:
        same = entries.get(entry.index)
        if same is None:
            into.tool_calls = [*into.tool_calls, entry]
        elif entry.function.arguments:
            arguments = (same.function.arguments or "") + entry.function.arguments
            same.function.arguments = arguments


def _log(delta: Delta) -> None:
    for error in delta.errors:
        logger.warning("toolparse: %s (call %s): %s", error.kind, error.index, error.message)
    for index in delta.repaired:
        logger.warning("toolparse: tool call %d was repaired (repair=True)", index)


def _special_tokens(tokenizer: Any) -> set[str]:
    return set(getattr(tokenizer, "all_special_tokens", None) or ())


def _forced_choice(request: Any) -> str | None:
    """ "required", the name of a named tool choice, or None (auto, none)."""
    choice = getattr(request, "tool_choice", None)
    if choice is None or isinstance(choice, str):
        return "required" if choice == "required" else None
    function = getattr(choice, "function", None)
    name = getattr(function, "name", None) or getattr(choice, "name", None)
    return name if isinstance(name, str) else None


class _TakesVllmJson:
    """What vLLM's own ToolParser.adjust_request reads of a parser that takes its JSON
    form of required and named tool choice (it then sets that JSON Schema constraint)."""

    supports_required_and_named = True


def _calling_parser() -> Any:
    """The vLLM Parser whose method called the adapter method that asks (vLLM does not
    tell a reasoning parser whether a tool parser reads what it hands on), or None when
    the caller is not one (a direct call, a constrained-decoding gate)."""
    frame: FrameType | None = sys._getframe(2)
    for _ in range(8):
        if frame is None:
            return None
        owner = frame.f_locals.get("self")
        if isinstance(owner, Parser):
            return owner
        frame = frame.f_back
    return None


_HarmonyParser: Any = getattr(importlib.import_module("vllm.parser"), "HarmonyParser", None)
HARMONY = (
    "toolparse: vLLM parses gpt-oss checkpoints (model_type gpt_oss) with its own "
    "HarmonyParser, which takes only vLLM's gpt-oss parsers: start the server with "
    "--tool-call-parser openai --reasoning-parser openai_gptoss.  toolparse_gpt_oss "
    "serves harmony output where vLLM does not force its HarmonyParser (another "
    "model_type, SGLang, or toolparse.StreamParser on the generated text)."
)


def _refuse_harmony() -> None:
    """Says what works when vLLM composes this parser into its HarmonyParser, which then
    refuses it (its own error names only the tokenizer)."""
    if _HarmonyParser is not None and isinstance(_calling_parser(), _HarmonyParser):
        logger.error(HARMONY)


class _ToolMixin(ServedFields):
    """The ToolParser methods; subclasses name the format in ``toolparse_format``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _refuse_harmony()

    toolparse_format: str = ""
    # Send arguments as they are generated (False: each call whole once it ended).
    stream_arguments: bool = True
    # Salvage broken calls (the raw-text fallback formats); such calls are logged.
    repair: bool = False
    engine_based_streaming: bool = True
    # vLLM's own path for tool_choice "required" needs the text so far, which an
    # engine-based parser is not given: this parser reads required and named tool
    # choice itself (FORCED_CALLS), under the JSON constraint adjust_request sets.
    supports_required_and_named: bool = False
    # vLLM sets it when no reasoning parser is configured: the output then starts here,
    # and reasoning markup passes through as content (passthrough_format).
    skip_reasoning_parsing: bool = False
    # Without a reasoning parser: whether the template opened the reasoning block of a
    # format whose reasoning is not a leading block (None: the format's default).
    toolparse_reasoning_in_prompt: bool | None = None

    tools: Any
    model_tokenizer: Any
    _toolparse_request: Any = None
    _toolparse_counter: ReasoningTokenCounter | None = None
    # The delta of the latest step (vLLM calls the tool parser on every step of the
    # tool phase, so at the end of a stream this is the step that flushes).
    _toolparse_last: Any = None

    def _tool_dicts(self, request: Any) -> list[dict[str, Any]] | None:
        return tools_as_dicts(getattr(request, "tools", None) or self.tools)

    def _format(self) -> Any:
        fmt = get_format(self.toolparse_format)
        return passthrough_format(fmt) if self.skip_reasoning_parsing else fmt

    def _reasoning_in_prompt(self, request: Any) -> bool | None:
        # After a reasoning parser, the text given here begins after the reasoning.
        if not self.skip_reasoning_parsing:
            return False
        # On its own (no prompt ids reach a tool parser): a class that forces it, a
        # thinking switch turned off, or the format's default.
        decided = decide_reasoning_in_prompt(
            forced=self.toolparse_reasoning_in_prompt,
            template_kwargs=getattr(request, "chat_template_kwargs", None),
        )
        return entry_option(self._format(), decided)

    def _reading(self, request: Any) -> dict[str, Any]:
        """The format, its options and the envelope this request's output is read with."""
        forced = _forced_choice(request)
        if forced is None:
            fmt = self._format()
            return {"format": fmt, "reasoning_in_prompt": self._reasoning_in_prompt(request)}
        envelope = ("", "") if forced == "required" else named_call_envelope(forced)
        return {"format": FORCED_CALLS, "envelope": envelope}

    def _toolparse_state_for(self, request: Any) -> ResponseTranslator:
        state = self._toolparse_state
        if state is None or state.finished or self._toolparse_request is not request:
            state = ResponseTranslator(
                tools=self._tool_dicts(request),
                stream_arguments=self.stream_arguments,
                repair=self.repair and _forced_choice(request) is None,
                **self._reading(request),
            )
            self._toolparse_state = state
            self._toolparse_request = request
            self._toolparse_counter = ReasoningTokenCounter()
        return state

    def _delta(self, delta: Delta) -> Any:
        if self.skip_reasoning_parsing:
            # No reasoning parser: vLLM's non-streamed result has no place for the
            # reasoning a format reads as structure (gpt-oss channels), so neither has
            # the stream; a leading block passed through as content already.
            delta.reasoning = ""
        return to_delta_message(delta)

    def adjust_request(self, request: Any) -> Any:
        request = super().adjust_request(request)  # type: ignore[misc]
        if request.tools and _forced_choice(request) is not None:
            # vLLM's JSON form for required and named tool choice, as its own parsers
            # that take it get it (read back with FORCED_CALLS).
            request = ToolParser.adjust_request(_TakesVllmJson(), request)
        if request.tools and request.tool_choice != "none":
            # Markers that are special tokens must reach the parser.
            request.skip_special_tokens = False
        return request

    def extract_tool_calls(self, model_output: str, request: Any) -> Any:
        reading = self._reading(request)
        before, after = reading.pop("envelope", ("", ""))
        message = parse(
            before + model_output + after,
            tools=self._tool_dicts(request),
            repair=self.repair and _forced_choice(request) is None,
            **reading,
        )
        if message.errors:
            _log(Delta(errors=list(message.errors)))
        calls = [
            ToolCall(
                id=call.id,
                type="function",
                function=FunctionCall(name=call.name, arguments=call.arguments_json),
            )
            for call in message.tool_calls
        ]
        return ExtractedToolCallInformation(
            tools_called=bool(calls), tool_calls=calls, content=message.content
        )

    def extract_tool_calls_streaming(
        self,
        previous_text: str,
        current_text: str,
        delta_text: str,
        previous_token_ids: Sequence[int],
        current_token_ids: Sequence[int],
        delta_token_ids: Sequence[int],
        request: Any,
    ) -> Any:
        state = self._toolparse_state_for(request)
        delta = state.feed(delta_text)
        counter = self._toolparse_counter
        if counter is not None:
            counter.add(len(delta_token_ids), delta)
        self._toolparse_last = self._delta(delta)
        return self._toolparse_last

    def finish_streaming(self) -> Any:
        state = self._toolparse_state
        if state is None or state.finished:
            return None
        # vLLM does not tell its parsers why the stream ended: read as "stop".
        flushed = self._delta(state.finish("stop"))
        last, self._toolparse_last = self._toolparse_last, None
        if flushed is None or last is None:
            return flushed
        # vLLM flushes in the same step as the last delta and appends the flush's entries
        # to it: merged here, the chunk keeps one entry per call.
        _merge(last, flushed)
        return None

    def toolparse_reasoning_tokens(self) -> int:
        """The reasoning tokens this parser saw streamed (reasoning after the opening
        block, such as gpt-oss analysis channels between calls)."""
        counter = self._toolparse_counter
        return counter.count if counter is not None else 0


class _ReasoningMixin:
    """The ReasoningParser methods; subclasses name the format in ``toolparse_format``.

    Whether the chat template opened the reasoning block is decided per request
    (decide_reasoning_in_prompt): a class that sets ``toolparse_reasoning_in_prompt``
    forces it; else the prompt vLLM hands over (``set_prompt_token_ids``) tells; else a
    thinking switch turned off in ``chat_template_kwargs``; else what the registered
    name says of its template (``toolparse_qwen3-thinking``, ``toolparse_glm47``: open)."""

    toolparse_format: str = ""
    # The name this class is registered under (a format or an alias of it).
    toolparse_name: str = ""
    # None: decided per request; True or False: forced.
    toolparse_reasoning_in_prompt: bool | None = None
    engine_based_streaming: bool = True

    model_tokenizer: Any
    vocab: dict[str, int]

    def __init__(self, tokenizer: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(tokenizer, *args, **kwargs)  # type: ignore[call-arg]
        _refuse_harmony()
        self._toolparse_template_kwargs = kwargs.get("chat_template_kwargs")
        self._toolparse_prompt_open: bool | None = None
        self._toolparse_mode: SplitMode | None = None
        self._toolparse_owner: Any = None
        self._toolparse_splitter: ReasoningSplitter | None = None
        self._toolparse_scanner: ReasoningEndScanner | None = None
        self._toolparse_counter = ReasoningTokenCounter()

    def _reasoning_in_prompt(self) -> bool | None:
        kwargs = self._toolparse_template_kwargs
        return decide_reasoning_in_prompt(
            forced=self.toolparse_reasoning_in_prompt,
            prompt_open=self._toolparse_prompt_open,
            template_kwargs=kwargs,
            name_default=template_default(self.toolparse_name, kwargs),
        )

    def _mode(self) -> SplitMode:
        """ "rest" when a tool parser reads what this parser hands on, "clean" when the
        client gets it unread (vLLM with --reasoning-parser alone)."""
        if self._toolparse_mode is None:
            owner = _calling_parser()
            self._toolparse_owner = owner
            alone = owner is not None and owner.tool_parser is None
            self._toolparse_mode = "clean" if alone else "rest"
        return self._toolparse_mode

    def _splitter(self) -> ReasoningSplitter:
        splitter = self._toolparse_splitter
        if splitter is None or splitter.finished:
            splitter = ReasoningSplitter(
                self.toolparse_format,
                reasoning_in_prompt=self._reasoning_in_prompt(),
                mode=self._mode(),
            )
            self._toolparse_splitter = splitter
            self._toolparse_counter = ReasoningTokenCounter()
        return splitter

    def _scanner(self) -> ReasoningEndScanner:
        if self._toolparse_scanner is None:
            self._toolparse_scanner = ReasoningEndScanner(
                reasoning_markers(self.toolparse_format), self.vocab
            )
        return self._toolparse_scanner

    @property
    def reasoning_start_str(self) -> str | None:
        opening = reasoning_markers(self.toolparse_format).opening
        return opening[0] if opening else None

    @property
    def reasoning_end_str(self) -> str | None:
        closing = reasoning_markers(self.toolparse_format).closing
        return closing[0] if closing else None

    def adjust_request(self, request: Any) -> Any:
        request = super().adjust_request(request)  # type: ignore[misc]
        markers = reasoning_markers(self.toolparse_format)
        if _special_tokens(self.model_tokenizer) & {*markers.opening, *markers.closing}:
            request.skip_special_tokens = False
        return request

    # -- the prompt -------------------------------------------------------------------

    def set_prompt_token_ids(self, prompt_token_ids: Sequence[int]) -> None:
        """Reads whether the rendered prompt leaves the reasoning block open (its last
        text is the opening marker): vLLM calls it once per response, before the first
        delta of a stream and before a non-streamed parse."""
        tail = list(prompt_token_ids[-16:])
        try:
            text = self.model_tokenizer.decode(tail, skip_special_tokens=False)
        except Exception:  # a tokenizer that cannot decode here: no evidence
            logger.debug("toolparse: the prompt's end could not be decoded", exc_info=True)
            return
        self._toolparse_prompt_open = reasoning_open_at(text, self.toolparse_format)

    def adjust_initial_state_from_prompt(self, prompt_token_ids: Sequence[int]) -> None:
        if self._toolparse_prompt_open is None:
            self.set_prompt_token_ids(prompt_token_ids)

    # -- token ids (also the constrained-decoding gate, on its own instance) ----------

    def is_reasoning_end(self, input_ids: Sequence[int]) -> bool:
        return self._scanner().is_reasoning_end(input_ids)

    def is_reasoning_end_streaming(
        self, input_ids: Sequence[int], delta_ids: Iterable[int]
    ) -> bool:
        return self._scanner().ends_in(delta_ids)

    def extract_content_ids(self, input_ids: list[int]) -> list[int]:
        return self._scanner().content_ids(input_ids)

    def count_reasoning_tokens(self, token_ids: Sequence[int]) -> int:
        """The generated tokens that are reasoning, its markers left out: counted as they
        streamed (with the tool parser's, which reads reasoning after the opening
        block), or, for a non-streamed response, by feeding the tokens' texts through
        the format."""
        counter = self._toolparse_counter
        if counter.tokens and counter.tokens == len(token_ids):
            tool = getattr(self._toolparse_owner, "tool_parser", None)
            later = getattr(tool, "toolparse_reasoning_tokens", None)
            return counter.count + (later() if later is not None else 0)
        return self._count_from_ids(token_ids)

    def _count_from_ids(self, token_ids: Sequence[int]) -> int:
        decode = self.model_tokenizer.decode
        texts: dict[int, str] = {}
        splitter = ReasoningSplitter(
            self.toolparse_format, reasoning_in_prompt=self._reasoning_in_prompt(), mode="clean"
        )
        counter = ReasoningTokenCounter()
        markers = self._markers()
        for token in token_ids:
            text = texts.get(token)
            if text is None:
                text = texts[token] = decode([token], skip_special_tokens=False)
            counter.add(1, splitter.feed(text), marker=text.strip() in markers)
        counter.add(0, splitter.finish())
        return counter.count

    # -- text -------------------------------------------------------------------------

    def extract_reasoning(self, model_output: str, request: Any) -> tuple[str | None, str | None]:
        return split_reasoning(
            model_output,
            self.toolparse_format,
            reasoning_in_prompt=self._reasoning_in_prompt(),
            mode=self._mode(),
        )

    def extract_reasoning_streaming(
        self,
        previous_text: str,
        current_text: str,
        delta_text: str,
        previous_token_ids: Sequence[int],
        current_token_ids: Sequence[int],
        delta_token_ids: Sequence[int],
    ) -> Any:
        delta = self._splitter().feed(delta_text)
        marker = delta_text.strip() in self._markers()
        self._toolparse_counter.add(len(delta_token_ids), delta, marker=marker)
        return to_delta_message(delta)

    def _markers(self) -> frozenset[str]:
        markers = reasoning_markers(self.toolparse_format)
        return frozenset((*markers.opening, *markers.closing))

    def has_engine_confirmed_reasoning_end(self) -> bool:
        splitter = self._toolparse_splitter
        return splitter is not None and splitter.ended

    def finish_streaming(self) -> Any:
        splitter = self._toolparse_splitter
        if splitter is None or splitter.finished:
            return None
        delta = splitter.finish()
        self._toolparse_counter.add(0, delta)
        name = self.toolparse_name or self.toolparse_format
        missing = "no tool parser is configured (--enable-auto-tool-choice)"
        warn_calls_left_out(logger, splitter, missing, name)
        return to_delta_message(delta)


ToolparseToolParser: Any = type(
    "ToolparseToolParser", (_ToolMixin, ToolParser), {"__module__": __name__}
)
ToolparseReasoningParser: Any = type(
    "ToolparseReasoningParser", (_ReasoningMixin, ReasoningParser), {"__module__": __name__}
)


@cache
def tool_parser_class(format: str) -> Any:
    """The ToolParser subclass for a format (or alias), e.g. ``tool_parser_class("qwen3")``."""
    fmt = get_format(format)
    if fmt.name != format:
        return tool_parser_class(fmt.name)
    return format_class(ToolparseToolParser, "ToolParser", fmt)


@cache
def reasoning_parser_class(name: str) -> Any:
    """The ReasoningParser subclass for a format or alias; an alias whose template opens
    the reasoning block (TEMPLATE_OPENS_REASONING) has a class of its own."""
    fmt = get_format(name)
    if fmt.name != name and name not in TEMPLATE_OPENS_REASONING:
        return reasoning_parser_class(fmt.name)
    return format_class(
        ToolparseReasoningParser, "ReasoningParser", fmt, label=name, toolparse_name=name
    )


def register() -> None:
    """Registers ``toolparse_<format>`` for every format and alias with vLLM's tool and
    reasoning parser managers (idempotent; also the ``vllm.general_plugins`` entry)."""
    for registered, format_name in adapter_names().items():
        ToolParserManager.register_module(name=registered, module=tool_parser_class(format_name))
        ReasoningParserManager.register_module(
            name=registered, module=reasoning_parser_class(registered[len(PREFIX) :])
        )


register()
