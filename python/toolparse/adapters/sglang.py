"""toolparse as SGLang function-call and reasoning detectors (docs/adapters.md).

Importing this module (or calling ``register``, the ``sglang.srt.plugins`` entry point)
adds, for every toolparse format and alias, a function-call detector to
``FunctionCallParser.ToolCallParserEnum`` and a reasoning detector to
``ReasoningParser.DetectorMap``, both named ``toolparse_<format>``::

    python -m sglang.launch_server --model-path Qwen/Qwen3-8B \\
        --tool-call-parser toolparse_qwen3 --reasoning-parser toolparse_qwen3

Lifetime.  SGLang builds a ``FunctionCallParser`` (and so a detector) and a
``ReasoningParser`` per choice of each streamed request, and a fresh one for each
non-streamed output: a detector sees one response.  Its toolparse state (one
``StreamParser``) begins with the first increment, which brings the request's tools, and
ends with ``finish``.

Streaming.  ``parse_streaming_increment`` is fed only the new text; each call's first
``ToolCallItem`` has the call's index and name with empty parameters, the next ones
argument fragments that add up to the arguments toolparse delivers.  ``tool_index`` is
the call's position in the response (SGLang sends it as the OpenAI ``index``).  SGLang
makes the call ids.

Split.  The reasoning detector streams the reasoning block at the start of the output
and passes the raw text after it on, which SGLang feeds to the function-call detector.
SGLang's function-call results have no reasoning field: reasoning the function-call
detector itself finds (formats whose reasoning is not a block at the start, such as
gpt-oss channels) is not returned.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable
from functools import cache
from typing import Any

from ..formats import get_format
from ..stream import parse
from ._translate import (
    PREFIX,
    TEMPLATE_OPENS_REASONING,
    CallDelta,
    Delta,
    ReasoningSplitter,
    ResponseTranslator,
    ServedFields,
    SplitMode,
    adapter_names,
    decide_reasoning_in_prompt,
    format_class,
    reasoning_markers,
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
    "ToolparseDetector",
    "ToolparseReasoningDetector",
    "detector_class",
    "reasoning_detector_class",
    "register",
]

logger = logging.getLogger(__name__)

_base = importlib.import_module("sglang.srt.function_call.base_format_detector")
_core = importlib.import_module("sglang.srt.function_call.core_types")
_reasoning = importlib.import_module("sglang.srt.parser.reasoning_parser")

BaseFormatDetector: Any = _base.BaseFormatDetector
StreamingParseResult: Any = _core.StreamingParseResult
ToolCallItem: Any = _core.ToolCallItem
BaseReasoningFormatDetector: Any = _reasoning.BaseReasoningFormatDetector
ReasoningResult: Any = _reasoning.StreamingParseResult


def _log(delta: Delta) -> None:
    for error in delta.errors:
        logger.warning("toolparse: %s (call %s): %s", error.kind, error.index, error.message)
    for index in delta.repaired:
        logger.warning("toolparse: tool call %d was repaired (repair=True)", index)


def _item(index: int, name: str | None, parameters: str) -> Any:
    values = {"tool_index": index, "name": name, "parameters": parameters}
    return unvalidated(ToolCallItem, values, {})


def _parse_result(normal_text: str, calls: list[Any]) -> Any:
    values = {"normal_text": normal_text, "calls": calls}
    return unvalidated(StreamingParseResult, values, {})


if not unvalidated_holds(
    lambda: _parse_result("a", [_item(0, "f", "{")]),
    lambda: StreamingParseResult(
        normal_text="a", calls=[ToolCallItem(tool_index=0, name="f", parameters="{")]
    ),
):  # pragma: no cover - a pydantic or SGLang release this was not built for: validate

    def _item(index: int, name: str | None, parameters: str) -> Any:
        return ToolCallItem(tool_index=index, name=name, parameters=parameters)

    def _parse_result(normal_text: str, calls: list[Any]) -> Any:
        return StreamingParseResult(normal_text=normal_text, calls=calls)


def to_parse_result(delta: Delta) -> Any:
    """A toolparse Delta as SGLang's function-call StreamingParseResult."""
    if delta.errors or delta.repaired:
        _log(delta)
    calls = [_item(call.index, call.name, call.arguments) for call in delta.calls]
    return _parse_result(delta.content, calls)


class _DetectorMixin(ServedFields):
    """The BaseFormatDetector methods; subclasses name the format in toolparse_format."""

    toolparse_format: str = ""
    # Send arguments as they are generated (False: each call whole once it ended).
    stream_arguments: bool = True
    # Salvage broken calls (the raw-text fallback formats); such calls are logged.
    repair: bool = False

    def _toolparse_state_for(self, tools: Any) -> ResponseTranslator:
        state = self._toolparse_state
        if state is None or state.finished:
            state = ResponseTranslator(
                self.toolparse_format,
                tools=tools_as_dicts(tools),
                # After a reasoning detector, the text begins after the reasoning; on
                # its own, the format's "start" rule still reads a leading block.
                reasoning_in_prompt=False,
                stream_arguments=self.stream_arguments,
                repair=self.repair,
            )
            self._toolparse_state = state
        return state

    def has_tool_call(self, text: str) -> bool:
        """Whether the text needs this detector: it holds a call (a complete one or a
        broken one; the request's tools are not known here, so any name counts) or any
        of the format's markup, which SGLang would otherwise hand the client as content
        (detect_and_parse then gives the content without it)."""
        message = parse(text, self.toolparse_format, reasoning_in_prompt=False, repair=self.repair)
        return bool(message.tool_calls or message.errors or (message.content or "") != text)

    @property
    def incomplete_tool_call_indices(self) -> set[int]:
        """The calls that went out but never ended (SGLang then reports no "tool_calls"
        finish reason for a response whose calls did not all close)."""
        state = self._toolparse_state
        if state is None:
            return set()
        return {c.index for c in state.calls if c.failed or (state.finished and not c.ended)}

    def detect_and_parse(self, text: str, tools: Any) -> Any:
        message = parse(
            text,
            self.toolparse_format,
            tools=tools_as_dicts(tools),
            reasoning_in_prompt=False,
            repair=self.repair,
        )
        _log(Delta(errors=list(message.errors)))
        calls = [
            ToolCallItem(tool_index=k, name=call.name, parameters=call.arguments_json)
            for k, call in enumerate(message.tool_calls)
        ]
        return StreamingParseResult(normal_text=message.content or "", calls=calls)

    def parse_streaming_increment(self, new_text: str, tools: Any) -> Any:
        return to_parse_result(self._toolparse_state_for(tools).feed(new_text))

    def finish(self, tools: Any) -> Any:
        state = self._toolparse_state
        if state is None or state.finished:
            return StreamingParseResult()
        # SGLang does not tell its detectors why the stream ended: read as "stop".
        return to_parse_result(state.finish("stop"))

    def supports_structural_tag(self) -> bool:
        # No begin/schema/end triple is derived from toolparse grammars: SGLang then
        # constrains required and named tool choice with its JSON-array schema.
        return False

    def structure_info(self) -> Callable[[str], Any]:
        def info(name: str) -> Any:
            raise NotImplementedError(f"{type(self).__name__} has no structural tag for {name!r}")

        return info


class _ReasoningDetectorMixin:
    """The BaseReasoningFormatDetector methods; subclasses name the format.

    SGLang feeds its reasoning detector every chunk and hands what it returns as normal
    text to the function-call detector when one parses this request
    (``tool_call_parser_active``), else to the client.  So with a function-call
    detector the text after the opening reasoning block goes on raw (and reasoning
    anywhere in the output is found here: the function-call results have no field for
    it); without one the client gets the content as the format reads it."""

    toolparse_format: str = ""
    # The name this class is registered under (a format or an alias of it).
    toolparse_name: str = ""
    # None: SGLang's force_reasoning decides per request; True or False: forced.
    toolparse_reasoning_in_prompt: bool | None = None
    # What SGLang assumes where it cannot read the template's thinking switch (set per
    # format by reasoning_detector_class; None: no reasoning forced).
    reasoning_default: str | None = None

    def __init__(
        self,
        stream_reasoning: bool = True,
        force_reasoning: bool | None = None,
        continue_final_message: bool = False,
        previous_content: str = "",
        tool_call_parser_active: bool = False,
        **options: Any,
    ) -> None:
        markers = reasoning_markers(self.toolparse_format)
        opening = markers.opening[0] if markers.opening else ""
        closing = markers.closing[0] if markers.closing else ""
        super().__init__(  # type: ignore[call-arg]
            opening,
            closing,
            force_reasoning=bool(force_reasoning),
            stream_reasoning=stream_reasoning,
            tool_start_token=markers.implicit[0] if markers.implicit else None,
            # the base sets "always" on the instance otherwise, and SGLang's serving then
            # forces reasoning on every request of a template whose switch it cannot read
            reasoning_default=type(self).reasoning_default,
        )
        # force_reasoning is SGLang's reading of the template and the request: True
        # when the output starts in reasoning (the template opened the block, or
        # thinking is on and a block it does not open is dropped when written).
        evidence = force_reasoning
        if continue_final_message and previous_content and opening:
            # Continuing an assistant message that left a block open.
            evidence = previous_content.rfind(opening) > previous_content.rfind(closing or opening)
        self._toolparse_in_prompt = decide_reasoning_in_prompt(
            forced=self.toolparse_reasoning_in_prompt,
            prompt_open=evidence,
            name_default=template_default(self.toolparse_name, None),
        )
        self._toolparse_mode: SplitMode = (
            "rest_and_reasoning" if tool_call_parser_active else "clean"
        )
        self._toolparse_stream = stream_reasoning
        self._toolparse_splitter: ReasoningSplitter | None = None
        self._toolparse_held: list[str] = []

    def _splitter(self) -> ReasoningSplitter:
        splitter = self._toolparse_splitter
        if splitter is None or splitter.finished:
            splitter = ReasoningSplitter(
                self.toolparse_format,
                reasoning_in_prompt=self._toolparse_in_prompt,
                mode=self._toolparse_mode,
            )
            self._toolparse_splitter = splitter
            self._toolparse_held = []
        return splitter

    def _result(self, delta: Delta, ended: bool) -> Any:
        reasoning = delta.reasoning
        if not self._toolparse_stream:  # reasoning held until the block is over
            self._toolparse_held.append(reasoning)
            reasoning = "".join(self._toolparse_held) if ended else ""
            if ended:
                self._toolparse_held = []
        return ReasoningResult(normal_text=delta.content, reasoning_text=reasoning)

    def detect_and_parse(self, text: str) -> Any:
        reasoning, content = split_reasoning(
            text,
            self.toolparse_format,
            reasoning_in_prompt=self._toolparse_in_prompt,
            mode=self._toolparse_mode,
        )
        return ReasoningResult(normal_text=content or "", reasoning_text=reasoning or "")

    def parse_streaming_increment(self, new_text: str) -> Any:
        splitter = self._splitter()
        delta = splitter.feed(new_text)
        return self._result(delta, splitter.reasoning_over)

    def finish(self) -> Any:
        splitter = self._toolparse_splitter
        if splitter is None or splitter.finished:
            return ReasoningResult()
        delta = splitter.finish()
        name = self.toolparse_name or self.toolparse_format
        warn_calls_left_out(logger, splitter, "no tool-call parser reads this request", name)
        return self._result(delta, True)


ToolparseDetector: Any = type(
    "ToolparseDetector", (_DetectorMixin, BaseFormatDetector), {"__module__": __name__}
)
ToolparseReasoningDetector: Any = type(
    "ToolparseReasoningDetector",
    (_ReasoningDetectorMixin, BaseReasoningFormatDetector),
    {"__module__": __name__},
)


@cache
def detector_class(format: str) -> Any:
    """The function-call detector class for a format (or alias)."""
    fmt = get_format(format)
    if fmt.name != format:
        return detector_class(fmt.name)
    return format_class(ToolparseDetector, "Detector", fmt)


@cache
def reasoning_detector_class(name: str) -> Any:
    """The reasoning detector class for a format or alias; an alias whose template opens
    the reasoning block (TEMPLATE_OPENS_REASONING) has a class of its own."""
    fmt = get_format(name)
    if fmt.name != name and name not in TEMPLATE_OPENS_REASONING:
        return reasoning_detector_class(fmt.name)
    if name in TEMPLATE_OPENS_REASONING:
        # SGLang's fallback where it cannot read the template's switch: open always,
        # or unless the named chat_template_kwargs switch turns thinking off.
        default: str | None = TEMPLATE_OPENS_REASONING[name] or "always"
    else:
        default = "always" if fmt.reasoning_in_prompt else None
    return format_class(
        ToolparseReasoningDetector,
        "ReasoningDetector",
        fmt,
        label=name,
        toolparse_name=name,
        reasoning_default=default,
    )


def register() -> None:
    """Adds ``toolparse_<format>`` for every format and alias to SGLang's detector
    tables (idempotent; also the ``sglang.srt.plugins`` entry point)."""
    function_call = importlib.import_module("sglang.srt.function_call.function_call_parser")
    tools = function_call.FunctionCallParser.ToolCallParserEnum
    reasoning = _reasoning.ReasoningParser.DetectorMap
    for registered, format_name in adapter_names().items():
        tools[registered] = detector_class(format_name)
        reasoning[registered] = reasoning_detector_class(registered[len(PREFIX) :])


register()
