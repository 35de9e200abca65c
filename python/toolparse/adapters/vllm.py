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
from collections.abc import Iterable, Sequence
from functools import cache
from types import ModuleType
from typing import Any

from ..formats import get_format
from ..stream import parse
from ._translate import (
    Delta,
    ReasoningEndScanner,
    ReasoningSplitter,
    ResponseTranslator,
    ServedFields,
    adapter_names,
    format_class,
    reasoning_in_prompt_from,
    reasoning_markers,
    split_reasoning,
    tools_as_dicts,
)

__all__ = [
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

ToolParser: Any = _tools_module.ToolParser
ToolParserManager: Any = _tools_module.ToolParserManager
ReasoningParser: Any = _reasoning_module.ReasoningParser
ReasoningParserManager: Any = _reasoning_module.ReasoningParserManager
DeltaMessage: Any = _protocol.DeltaMessage
DeltaToolCall: Any = _protocol.DeltaToolCall
DeltaFunctionCall: Any = _protocol.DeltaFunctionCall
ExtractedToolCallInformation: Any = _protocol.ExtractedToolCallInformation
ToolCall: Any = _protocol.ToolCall
FunctionCall: Any = _protocol.FunctionCall


def to_delta_message(delta: Delta) -> Any:
    """A toolparse Delta as vLLM's DeltaMessage, or None when there is nothing to send."""
    _log(delta)
    if not delta:
        return None
    calls = [
        DeltaToolCall(
            index=call.index,
            id=call.id,
            type="function" if call.id is not None else None,
            function=DeltaFunctionCall(name=call.name, arguments=call.arguments or None),
        )
        for call in delta.calls
    ]
    return DeltaMessage(
        content=delta.content or None, reasoning=delta.reasoning or None, tool_calls=calls
    )


def _log(delta: Delta) -> None:
    for error in delta.errors:
        logger.warning("toolparse: %s (call %s): %s", error.kind, error.index, error.message)
    for index in delta.repaired:
        logger.warning("toolparse: tool call %d was repaired (repair=True)", index)


def _special_tokens(tokenizer: Any) -> set[str]:
    return set(getattr(tokenizer, "all_special_tokens", None) or ())


class _ToolMixin(ServedFields):
    """The ToolParser methods; subclasses name the format in ``toolparse_format``."""

    toolparse_format: str = ""
    # Send arguments as they are generated (False: each call whole once it ended).
    stream_arguments: bool = True
    # Salvage broken calls (the raw-text fallback formats); such calls are logged.
    repair: bool = False
    engine_based_streaming: bool = True
    # vLLM sets it when no reasoning parser is configured: the output then starts here.
    skip_reasoning_parsing: bool = False
    # Without a reasoning parser: whether the template opened the reasoning block (None:
    # the format's default).
    toolparse_reasoning_in_prompt: bool | None = None

    tools: Any
    model_tokenizer: Any
    _toolparse_request: Any = None

    def _tool_dicts(self, request: Any) -> list[dict[str, Any]] | None:
        return tools_as_dicts(getattr(request, "tools", None) or self.tools)

    def _reasoning_in_prompt(self) -> bool | None:
        # After a reasoning parser, the text given here begins after the reasoning.
        return self.toolparse_reasoning_in_prompt if self.skip_reasoning_parsing else False

    def _toolparse_state_for(self, request: Any) -> ResponseTranslator:
        state = self._toolparse_state
        if state is None or state.finished or self._toolparse_request is not request:
            state = ResponseTranslator(
                self.toolparse_format,
                tools=self._tool_dicts(request),
                reasoning_in_prompt=self._reasoning_in_prompt(),
                stream_arguments=self.stream_arguments,
                repair=self.repair,
            )
            self._toolparse_state = state
            self._toolparse_request = request
        return state

    def adjust_request(self, request: Any) -> Any:
        request = super().adjust_request(request)  # type: ignore[misc]
        if request.tools and request.tool_choice != "none":
            # Markers that are special tokens must reach the parser.
            request.skip_special_tokens = False
        return request

    def extract_tool_calls(self, model_output: str, request: Any) -> Any:
        message = parse(
            model_output,
            self.toolparse_format,
            tools=self._tool_dicts(request),
            reasoning_in_prompt=self._reasoning_in_prompt(),
            repair=self.repair,
        )
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
        return to_delta_message(self._toolparse_state_for(request).feed(delta_text))

    def finish_streaming(self) -> Any:
        state = self._toolparse_state
        if state is None or state.finished:
            return None
        # vLLM does not tell its parsers why the stream ended: read as "stop".
        return to_delta_message(state.finish("stop"))


class _ReasoningMixin:
    """The ReasoningParser methods; subclasses name the format in ``toolparse_format``."""

    toolparse_format: str = ""
    # None: the format's default, or off when chat_template_kwargs turn thinking off.
    toolparse_reasoning_in_prompt: bool | None = None
    engine_based_streaming: bool = True

    model_tokenizer: Any
    vocab: dict[str, int]

    def __init__(self, tokenizer: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(tokenizer, *args, **kwargs)  # type: ignore[call-arg]
        self._toolparse_template_kwargs = kwargs.get("chat_template_kwargs")
        self._toolparse_splitter: ReasoningSplitter | None = None
        self._toolparse_scanner: ReasoningEndScanner | None = None

    def _reasoning_in_prompt(self) -> bool | None:
        if self.toolparse_reasoning_in_prompt is not None:
            return self.toolparse_reasoning_in_prompt
        return reasoning_in_prompt_from(self._toolparse_template_kwargs)

    def _splitter(self) -> ReasoningSplitter:
        splitter = self._toolparse_splitter
        if splitter is None or splitter.finished:
            splitter = ReasoningSplitter(
                self.toolparse_format, reasoning_in_prompt=self._reasoning_in_prompt()
            )
            self._toolparse_splitter = splitter
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

    # -- token ids (also the constrained-decoding gate, on its own instance) ----------

    def is_reasoning_end(self, input_ids: Sequence[int]) -> bool:
        return self._scanner().is_reasoning_end(input_ids)

    def is_reasoning_end_streaming(
        self, input_ids: Sequence[int], delta_ids: Iterable[int]
    ) -> bool:
        return self._scanner().ends_in(delta_ids)

    def extract_content_ids(self, input_ids: list[int]) -> list[int]:
        return self._scanner().content_ids(input_ids)

    # -- text -------------------------------------------------------------------------

    def extract_reasoning(self, model_output: str, request: Any) -> tuple[str | None, str | None]:
        return split_reasoning(
            model_output,
            self.toolparse_format,
            reasoning_in_prompt=self._reasoning_in_prompt(),
            all_reasoning=True,
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
        return to_delta_message(self._splitter().feed(delta_text))

    def has_engine_confirmed_reasoning_end(self) -> bool:
        splitter = self._toolparse_splitter
        return splitter is not None and splitter.ended

    def finish_streaming(self) -> Any:
        splitter = self._toolparse_splitter
        if splitter is None or splitter.finished:
            return None
        return to_delta_message(splitter.finish())


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
def reasoning_parser_class(format: str) -> Any:
    """The ReasoningParser subclass for a format (or alias)."""
    fmt = get_format(format)
    if fmt.name != format:
        return reasoning_parser_class(fmt.name)
    return format_class(ToolparseReasoningParser, "ReasoningParser", fmt)


def register() -> None:
    """Registers ``toolparse_<format>`` for every format and alias with vLLM's tool and
    reasoning parser managers (idempotent; also the ``vllm.general_plugins`` entry)."""
    for registered, format_name in adapter_names().items():
        ToolParserManager.register_module(name=registered, module=tool_parser_class(format_name))
        ReasoningParserManager.register_module(
            name=registered, module=reasoning_parser_class(format_name)
        )


register()
