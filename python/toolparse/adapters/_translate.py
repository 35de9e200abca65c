"""What the serving adapters share, with no serving framework imported.

- ``ResponseTranslator``: one response's toolparse state (one StreamParser, fed only the
  new text), its events turned into framework-neutral deltas (``Delta``, ``CallDelta``),
  and the bookkeeping vLLM and SGLang read at the end of a stream.
- ``ReasoningSplitter`` / ``split_reasoning``: the reasoning block at the start of an
  output, and the raw text after it (what a reasoning parser hands to a tool parser).
- ``reasoning_markers`` / ``ReasoningEndScanner``: where reasoning ends, read from token
  ids alone (what a constrained-decoding gate asks on every step).
- ``adapter_names``: the names the adapters register, ``toolparse_<format>``.

Policies (the same for every framework):

- A call's name goes out once its ``ToolCallStart`` arrives (with its id), then its
  arguments as the model writes them; the fragments add up to ``call.arguments_json``.
  With ``stream_arguments=False`` a call is held until its ``ToolCallEnd`` and goes out
  whole (name first, then all its arguments), so a call that fails never reaches the
  client.
- Calls are numbered 0, 1, 2 ... in the order they go out, so a call toolparse dropped
  (an unknown tool, a broken call that never started) leaves no gap.
- A ``ParseError`` is kept in ``errors`` and returned in the delta for the adapter to
  log.  A call it ends gets no further fragment: a fragment already sent cannot be taken
  back, so the client holds what was sent (hold calls with ``stream_arguments=False`` to
  avoid that).
- A call salvaged by ``repair=True`` (an explicit opt-in) goes out like any other call;
  its index is in ``Delta.repaired`` and ``ResponseTranslator.repaired`` for the adapter
  to log.
- A delta carries the entries of one call, one entry per call (its id and name with its
  first fragment): where one piece of output ends a call and starts the next (a repair
  that found a closing tag left out decides both at once), the next call's entries wait
  for the next feed, as a client that reads only ``tool_calls[0]`` of each chunk (what
  OpenAI's API streams) would otherwise miss them; ``finish`` sends all that waits.
- ``finish(reason)`` ends the response once: "stop" when the model ended it, "length"
  when a token limit cut it (a call still open is then an error, never a call).
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Literal, TypeVar

from ..events import (
    ContentDelta,
    Event,
    ReasoningDelta,
    ToolCallArgsDelta,
    ToolCallEnd,
    ToolCallStart,
)
from ..formats import FORMATS, Format, get_format
from ..formats._base import call_array
from ..grammar import (
    Ahead,
    Choice,
    Cut,
    Grammar,
    Lit,
    Many,
    Node,
    Opt,
    Recover,
    Ref,
    Seq,
    Tag,
    Until,
    Ws,
    chars,
    cut,
    eof,
    json_call,
    seq,
    tag,
    ws,
)
from ..message import Message, ParseError
from ..stream import StreamParser, parse

__all__ = [
    "FORCED_CALLS",
    "PREFIX",
    "TEMPLATE_OPENS_REASONING",
    "CallDelta",
    "CallRecord",
    "Delta",
    "ReasoningEndScanner",
    "ReasoningMarkers",
    "ReasoningSplitter",
    "ReasoningTokenCounter",
    "ResponseTranslator",
    "SplitMode",
    "adapter_names",
    "decide_reasoning_in_prompt",
    "entry_option",
    "named_call_envelope",
    "passthrough_format",
    "reasoning_after_start",
    "reasoning_in_prompt_from",
    "reasoning_markers",
    "reasoning_open_at",
    "reasoning_prefix_format",
    "split_reasoning",
    "template_default",
    "tools_as_dicts",
    "unvalidated",
    "unvalidated_holds",
    "warn_calls_left_out",
]

T = TypeVar("T")

PREFIX = "toolparse_"
Engine = Literal["native", "reference"]
# chat_template_kwargs keys that turn thinking off (Qwen3, DeepSeek V3.1+ templates).
THINKING_FLAGS = ("enable_thinking", "thinking")


@dataclass
class CallDelta:
    """One tool call's piece of a delta: the first carries id and name, the next ones
    argument text.  `index` numbers the calls of the response from 0."""

    index: int
    id: str | None = None
    name: str | None = None
    arguments: str = ""


@dataclass
class Delta:
    """What one feed (or the finish) adds to the response."""

    reasoning: str = ""
    content: str = ""
    calls: list[CallDelta] = field(default_factory=list)
    errors: list[ParseError] = field(default_factory=list)
    repaired: list[int] = field(default_factory=list)

    def __bool__(self) -> bool:
        """Whether there is anything to send (errors and repairs are for the log)."""
        return bool(self.reasoning or self.content or self.calls)


class CallRecord:
    """A call that went out: what was sent of it so far."""

    __slots__ = ("_parts", "ended", "failed", "id", "index", "name", "repaired")

    def __init__(self, index: int, id: str, name: str) -> None:
        self.index = index
        self.id = id
        self.name = name
        self.ended = False
        self.failed = False
        self.repaired = False
        self._parts: list[str] = []

    def add(self, text: str) -> None:
        self._parts.append(text)

    @property
    def arguments(self) -> str:
        """The argument text sent so far (joined on read, so appending stays linear)."""
        parts = self._parts
        if len(parts) > 1:
            parts[:] = ["".join(parts)]
        return parts[0] if parts else ""

    def __repr__(self) -> str:
        return (
            f"CallRecord(index={self.index}, id={self.id!r}, name={self.name!r}, "
            f"arguments={self.arguments!r}, ended={self.ended}, failed={self.failed})"
        )


class ResponseTranslator:
    """One response: a StreamParser fed only the new text, and what went out of it.

    Create one per response (per choice); it is not reused.  ``feed`` and ``finish``
    return a ``Delta``; ``calls`` and ``errors`` tell what happened so far, and
    ``prev_tool_call_arr`` / ``streamed_args_for_tool`` / ``current_tool_id`` /
    ``current_tool_name_sent`` give the same in the shape vLLM's and SGLang's serving
    layers read (their "unstreamed arguments" check then finds nothing missing).
    """

    def __init__(
        self,
        format: str | Format,
        *,
        tools: list[dict[str, Any]] | None = None,
        reasoning_in_prompt: bool | None = None,
        stream_arguments: bool = True,
        repair: bool = False,
        id_factory: Callable[[], str] | None = None,
        engine: Engine = "native",
        envelope: tuple[str, str] = ("", ""),
    ) -> None:
        self.parser = StreamParser(
            format,
            tools=tools,
            reasoning_in_prompt=reasoning_in_prompt,
            engine=engine,
            id_factory=id_factory,
            repair=repair,
        )
        # Text the output is read inside of (named_call_envelope): the first part goes
        # before the first piece, the second before the end.
        self._before, self._after = envelope
        self.stream_arguments = stream_arguments
        self.calls: list[CallRecord] = []
        self.errors: list[ParseError] = []
        self.repaired: list[int] = []
        self.finished = False
        self._out: dict[int, CallRecord] = {}  # toolparse call index -> record sent
        self._held: dict[int, ToolCallStart] = {}  # calls held until they end
        self._waiting: list[CallDelta] = []  # entries of calls after the one sent last

    @property
    def format(self) -> Format:
        return self.parser.format

    @property
    def message(self) -> Message:
        return self.parser.message

    def feed(self, text: str | bytes) -> Delta:
        """The next piece of output (only the new text, never the text so far)."""
        if self.finished:
            raise RuntimeError("the response has finished")
        if not text:
            return self._one_call(Delta())
        if self._before:
            text, self._before = self._before + _as_str(text), ""
        return self._one_call(self._translate(self.parser.feed(text)))

    def _one_call(self, delta: Delta, every: bool = False) -> Delta:
        """The delta with the entries of its first call (every: of all its calls), one
        entry per call; the next calls' entries wait."""
        entries = self._waiting + delta.calls
        if not entries:
            return delta
        if every:
            self._waiting = []
        else:
            first = entries[0].index
            count = next((k for k, e in enumerate(entries) if e.index != first), len(entries))
            entries, self._waiting = entries[:count], entries[count:]
        merged: dict[int, CallDelta] = {}
        for entry in entries:
            into = merged.setdefault(entry.index, CallDelta(entry.index, entry.id, entry.name))
            if into is not entry:
                into.arguments += entry.arguments
        delta.calls = list(merged.values())
        return delta

    def finish(self, reason: str = "stop") -> Delta:
        """Ends the response ("stop", or "length" when a token limit cut it); a second
        call returns an empty delta."""
        if self.finished:
            return Delta()
        self.finished = True
        events = self.parser.feed(self._before + self._after) if self._after else []
        return self._one_call(self._translate([*events, *self.parser.finish(reason)]), True)

    # -- bookkeeping in the frameworks' shapes ----------------------------------------

    @property
    def prev_tool_call_arr(self) -> list[dict[str, Any]]:
        return [{"name": c.name, "arguments": c.arguments} for c in self.calls]

    @property
    def streamed_args_for_tool(self) -> list[str]:
        return [c.arguments for c in self.calls]

    @property
    def current_tool_id(self) -> int:
        return len(self.calls) - 1

    @property
    def current_tool_name_sent(self) -> bool:
        return bool(self.calls)

    # -- events -> delta --------------------------------------------------------------

    def _translate(self, events: Iterable[Event]) -> Delta:
        delta = Delta()
        reasoning: list[str] = []
        content: list[str] = []
        for event in events:
            if isinstance(event, ContentDelta):
                content.append(event.text)
            elif isinstance(event, ToolCallArgsDelta):
                self._arguments(delta, event.index, event.text)
            elif isinstance(event, ReasoningDelta):
                reasoning.append(event.text)
            elif isinstance(event, ToolCallStart):
                self._start(delta, event)
            elif isinstance(event, ToolCallEnd):
                self._end(delta, event)
            elif isinstance(event, ParseError):
                self._error(delta, event)
        delta.reasoning = "".join(reasoning)
        delta.content = "".join(content)
        return delta

    def _send(self, delta: Delta, event: ToolCallStart) -> CallRecord:
        record = CallRecord(len(self.calls), event.id, event.name)
        self.calls.append(record)
        self._out[event.index] = record
        delta.calls.append(CallDelta(record.index, id=event.id, name=event.name))
        return record

    def _start(self, delta: Delta, event: ToolCallStart) -> None:
        if self.stream_arguments:
            self._send(delta, event)
        else:
            self._held[event.index] = event

    def _arguments(self, delta: Delta, index: int, text: str) -> None:
        record = self._out.get(index)
        if record is None or record.failed or not text:
            return  # a held call (its arguments go out whole at its end)
        record.add(text)
        last = delta.calls[-1] if delta.calls else None
        if last is not None and last.index == record.index:
            # One entry per call per delta, its name entry included: a client that
            # reads tool_calls[0] of each chunk must not miss the first fragment.
            last.arguments += text
        else:
            delta.calls.append(CallDelta(record.index, arguments=text))

    def _end(self, delta: Delta, event: ToolCallEnd) -> None:
        call = event.call
        record = self._out.get(event.index)
        if record is None:  # held, or (defensively) never started
            start = self._held.pop(event.index, None) or ToolCallStart(
                event.index, call.id, call.name
            )
            record = self._send(delta, start)
        sent = record.arguments
        if call.arguments_json != sent and call.arguments_json.startswith(sent):
            self._arguments(delta, event.index, call.arguments_json[len(sent) :])
        record.ended = True
        if call.repaired:
            record.repaired = True
            self.repaired.append(record.index)
            delta.repaired.append(record.index)

    def _error(self, delta: Delta, error: ParseError) -> None:
        self.errors.append(error)
        delta.errors.append(error)
        if error.index is not None:
            self._held.pop(error.index, None)
            record = self._out.get(error.index)
            if record is not None and not record.ended:
                record.failed = True


def _as_str(text: str | bytes) -> str:
    return text if isinstance(text, str) else text.decode("utf-8", "surrogateescape")


# What vLLM's guided decoding makes a model write for tool_choice="required" (its JSON
# Schema constraint of a parser that takes its JSON form): an array of
# {"name", "parameters"} objects, nothing before or after but whitespace.  A named tool
# choice constrains the output to that tool's arguments object alone, which is read
# inside the envelope named_call_envelope gives.
FORCED_CALLS = Format(
    name="forced_calls",
    description="vLLM's constrained output for tool_choice required or a named tool",
    grammar=Grammar(
        rules={
            "start": seq(ws(), call_array(json_call(("name",), ("parameters",)), None), ws(), eof())
        },
        entries={"start": "start"},
    ),
)


def named_call_envelope(name: str) -> tuple[str, str]:
    """The text around a named tool choice's arguments that makes them one call of
    FORCED_CALLS."""
    return '[{"name": ' + json.dumps(name) + ', "parameters": ', "}]"


# -- the reasoning block at the start of an output -------------------------------------


def format_class(
    base: type, suffix: str, fmt: Format, *, label: str | None = None, **attributes: Any
) -> Any:
    """A subclass of an adapter class bound to one format: named Toolparse<Label><suffix>
    (the label is the registered name, the format's by default), in base's module, with
    toolparse_format (and any other class attributes) set."""
    words = (label or fmt.name).replace("-", "_").split("_")
    name = "".join(word.capitalize() for word in words)
    namespace = {"__module__": base.__module__, "toolparse_format": fmt.name, **attributes}
    return type(f"Toolparse{name}{suffix}", (base,), namespace)


class ServedFields:
    """The four fields vLLM's and SGLang's serving layers read from a tool parser at the
    end of a stream (prev_tool_call_arr, streamed_args_for_tool, current_tool_id,
    current_tool_name_sent), mirrored from the response's translator so that they follow
    what was sent.  The frameworks' base classes assign them in __init__: the setters keep
    those values until a response starts."""

    _toolparse_state: ResponseTranslator | None = None

    def _get(self, name: str) -> Any:
        state = self._toolparse_state
        if state is not None:
            return getattr(state, name)
        return self.__dict__.get("_toolparse_shadow", {}).get(name)

    def _set(self, name: str, value: Any) -> None:
        self.__dict__.setdefault("_toolparse_shadow", {})[name] = value

    @property
    def prev_tool_call_arr(self) -> list[dict[str, Any]]:
        value: list[dict[str, Any]] = self._get("prev_tool_call_arr") or []
        return value

    @prev_tool_call_arr.setter
    def prev_tool_call_arr(self, value: list[dict[str, Any]]) -> None:
        self._set("prev_tool_call_arr", value)

    @property
    def streamed_args_for_tool(self) -> list[str]:
        value: list[str] = self._get("streamed_args_for_tool") or []
        return value

    @streamed_args_for_tool.setter
    def streamed_args_for_tool(self, value: list[str]) -> None:
        self._set("streamed_args_for_tool", value)

    @property
    def current_tool_id(self) -> int:
        value = self._get("current_tool_id")
        return -1 if value is None else int(value)

    @current_tool_id.setter
    def current_tool_id(self, value: int) -> None:
        self._set("current_tool_id", value)

    @property
    def current_tool_name_sent(self) -> bool:
        return bool(self._get("current_tool_name_sent"))

    @current_tool_name_sent.setter
    def current_tool_name_sent(self, value: bool) -> None:
        self._set("current_tool_name_sent", value)


def per_format(build: Callable[[Format], T]) -> Callable[[str | Format], T]:
    """build(format) for a format or its name: computed once per registered format (by
    name), and each time for any other (one built by hand or from a response template)."""

    @cache
    def registered(name: str) -> T:
        return build(FORMATS[name])

    @functools.wraps(build)
    def of(format: str | Format) -> T:
        fmt = get_format(format)
        return registered(fmt.name) if FORMATS.get(fmt.name) is fmt else build(fmt)

    return of


def _raw_rest() -> Node:
    return seq(cut(), tag("content", chars("\x00-\xff")))


@per_format
def reasoning_prefix_format(fmt: Format) -> Format:
    """The format with everything after its opening reasoning block read as raw content.

    The format's own rules decide where the reasoning ends (its closing marker, or a
    call marker that ends unfinished reasoning); the text after it comes out verbatim,
    markers and all, for a tool parser to read.  A format without a reasoning block (or
    whose reasoning is not a prefix, such as gpt-oss channels) gives its whole output as
    content."""
    rules = dict(fmt.written_grammar.rules)  # the variant is guarded anew
    if fmt.reasoning == "none" or "body" not in rules:
        rules = {"start": _raw_rest()}
        entries = {"start": "start"}
    else:
        rules["body"] = _raw_rest()
        entries = dict(fmt.grammar.entries)
    return _variant(fmt, "reasoning", Grammar(rules, entries))


def _variant(fmt: Format, suffix: str, grammar: Grammar, **fields: Any) -> Format:
    fields.setdefault("repair_grammar", None)
    return dataclasses.replace(
        fmt, name=f"{fmt.name}.{suffix}", aliases=(), grammar=grammar, **fields
    )


@per_format
def reasoning_after_start(fmt: Format) -> bool:
    """Whether the format's reasoning may come after its opening block (gpt-oss analysis
    channels between calls, Cohere's reasoning after an action, Gemma 4's thought
    channels): then only a parse of the whole output finds all of it."""
    if fmt.reasoning == "none":
        return False
    rules = fmt.grammar.rules
    root = rules["body"] if "body" in rules else rules[fmt.grammar.entries["start"]]
    return any(
        isinstance(node, Tag) and node.role == "reasoning" for node in _walk(root, rules, set())
    )


@per_format
def passthrough_format(fmt: Format) -> Format:
    """The format for a tool parser that no reasoning parser precedes: an opening
    reasoning block is read by the format's own rules but given out as content,
    verbatim with its markers (vLLM's contract for a tool parser on its own,
    ``skip_reasoning_parsing``), so a call drafted inside it stays text where the
    format says so, and a call marker that ends unfinished reasoning still begins a
    call.  A format whose reasoning is structure rather than a leading block (gpt-oss
    channels) is unchanged: the adapter leaves its reasoning out instead, as a
    non-streamed tool-parser result has no place for it."""
    rules = fmt.grammar.rules
    if fmt.reasoning == "none" or "think" not in rules or "body" not in rules:
        return fmt
    # from the grammar as written: the block given out as content keeps its markers (the
    # variant's body is guarded anew)
    repair = fmt.written_repair_grammar
    return _variant(
        fmt,
        "passthrough",
        _block_as_content(fmt.written_grammar),
        repair_grammar=_block_as_content(repair) if repair else None,
    )


def _block_as_content(grammar: Grammar) -> Grammar:
    """The grammar with what each entry reads before the format's "body" (the opening
    reasoning block, or the rest of one the template opened) given out as content."""
    rules = dict(grammar.rules)
    for name in ("think", "reasoning_rest"):
        if name in rules:
            rules[name] = _untagged(rules[name], "reasoning")
    for entry in grammar.entries.values():
        node = rules[entry]
        if not isinstance(node, Seq):
            continue
        *before, last = node.items
        if isinstance(last, Ref) and last.name == "body":
            rules[entry] = seq(tag("content", _untagged(seq(*before), "reasoning")), last)
    return Grammar(rules, dict(grammar.entries))


def _untagged(node: Node, role: str) -> Node:
    """node with its tags of `role` taken out (what they matched is still matched)."""
    if isinstance(node, Tag):
        item = _untagged(node.item, role)
        return item if node.role == role else dataclasses.replace(node, item=item)
    if isinstance(node, Seq):
        return dataclasses.replace(node, items=tuple(_untagged(i, role) for i in node.items))
    if isinstance(node, Choice):
        return dataclasses.replace(node, alts=tuple(_untagged(a, role) for a in node.alts))
    if isinstance(node, (Opt, Many, Ahead)):
        return dataclasses.replace(node, item=_untagged(node.item, role))
    if isinstance(node, Recover):
        return dataclasses.replace(
            node, item=_untagged(node.item, role), handler=_untagged(node.handler, role)
        )
    return node


def entry_option(fmt: Format, reasoning_in_prompt: bool | None) -> bool | None:
    """reasoning_in_prompt as the format can take it (a format without a block that the
    template opens cannot start in one)."""
    if reasoning_in_prompt and "start_in_reasoning" not in fmt.grammar.entries:
        return None
    return reasoning_in_prompt


# What a reasoning parser hands on after the reasoning: the raw rest of the output for
# a tool parser to read ("rest"), the same with reasoning found anywhere in the output
# ("rest_and_reasoning": a stack that feeds its reasoning parser every chunk and whose
# tool-parser results have no reasoning field), or the content as the format reads it
# when no tool parser follows ("clean": markup never reaches the client).
SplitMode = Literal["rest", "rest_and_reasoning", "clean"]


class ReasoningSplitter:
    """The reasoning of one response, streamed; then what follows it (``SplitMode``).

    ``feed`` returns a Delta with reasoning and content only.  In the "rest" modes,
    ``ended`` turns true with the first content, once the opening reasoning block is
    certainly over, and the content is the output after it, verbatim (tool-call markers
    included).  In "clean" mode the content is the message's content (markup left out,
    calls left out and counted in ``calls_left_out``) and ``ended`` stays false: the
    splitter reads the whole output.  ``reasoning_over`` turns true in every mode once
    something other than reasoning came."""

    def __init__(
        self,
        format: str | Format,
        *,
        reasoning_in_prompt: bool | None = None,
        mode: SplitMode = "rest",
        engine: Engine = "native",
    ) -> None:
        full = get_format(format)
        in_prompt = entry_option(full, reasoning_in_prompt)
        self.mode = mode
        if mode == "clean":
            self.parser = StreamParser(full, reasoning_in_prompt=in_prompt, engine=engine)
        else:
            prefix = reasoning_prefix_format(full)
            self.parser = StreamParser(prefix, reasoning_in_prompt=in_prompt, engine=engine)
        # The whole output's reasoning, where the opening block does not hold all of it.
        self._reasoning: StreamParser | None = None
        if mode == "rest_and_reasoning" and reasoning_after_start(full):
            self._reasoning = StreamParser(full, reasoning_in_prompt=in_prompt, engine=engine)
        self.ended = False
        self.reasoning_over = False  # content (or a call) came after the reasoning
        self.finished = False
        self.calls_left_out = 0

    def feed(self, text: str | bytes) -> Delta:
        if self.finished or not text:
            return Delta()
        delta = self._split(self.parser.feed(text))
        if self._reasoning is not None:
            delta.reasoning = _reasoning_text(self._reasoning.feed(text))
        return delta

    def finish(self, reason: str = "stop") -> Delta:
        if self.finished:
            return Delta()
        self.finished = True
        delta = self._split(self.parser.finish(reason))
        if self._reasoning is not None:
            delta.reasoning = _reasoning_text(self._reasoning.finish(reason))
        return delta

    def _split(self, events: Iterable[Event]) -> Delta:
        reasoning: list[str] = []
        content: list[str] = []
        for event in events:
            if isinstance(event, ReasoningDelta):
                reasoning.append(event.text)
            elif isinstance(event, ContentDelta):
                content.append(event.text)
            elif isinstance(event, ToolCallStart):
                self.calls_left_out += 1
        if content or self.calls_left_out:
            self.reasoning_over = True
            self.ended = self.mode != "clean"
        return Delta(reasoning="".join(reasoning), content="".join(content))


def warn_calls_left_out(log: Any, splitter: ReasoningSplitter, what: str, name: str) -> None:
    """Logs the calls a "clean" split left out, with the flags that would parse them
    (`what` says what is missing, as the stack names it)."""
    if splitter.calls_left_out:
        log.warning(
            "toolparse: %d tool call(s) in the output were left out: %s (--tool-call-parser %s%s)",
            splitter.calls_left_out,
            what,
            PREFIX,
            name,
        )


def _reasoning_text(events: Iterable[Event]) -> str:
    return "".join(e.text for e in events if isinstance(e, ReasoningDelta))


def split_reasoning(
    text: str | bytes,
    format: str | Format,
    *,
    reasoning_in_prompt: bool | None = None,
    mode: SplitMode = "rest",
    engine: Engine = "native",
) -> tuple[str | None, str | None]:
    """(the reasoning, what follows it) of a whole output; None for an empty part.  The
    reasoning is the whole message's (a non-streamed response reports all of it, also
    blocks after the opening one).  In the "rest" modes, an output the format reads with
    no call and no error comes back as its clean content: a tool parser would find
    nothing in the raw rest, and a stack that hands the rest to the client unread when
    it sees no call (SGLang) then shows no markup either."""
    fmt = get_format(format)
    in_prompt = entry_option(fmt, reasoning_in_prompt)
    whole = parse(text, fmt, reasoning_in_prompt=in_prompt, engine=engine)
    content = whole.content
    if mode != "clean" and (whole.tool_calls or whole.errors):
        splitter = ReasoningSplitter(fmt, reasoning_in_prompt=in_prompt, engine=engine)
        content = splitter.feed(text).content + splitter.finish().content
    return whole.reasoning_content or None, content or None


# Aliases that name a model family whose chat template opens the reasoning block, and
# the chat_template_kwargs switch that turns thinking off there (None: always open).
# They decide where a request brings no evidence of its own (no prompt ids, no switch).
TEMPLATE_OPENS_REASONING: Mapping[str, str | None] = {
    "qwen3-thinking": None,  # Qwen3-*-Thinking-2507
    "glm47": "enable_thinking",  # GLM-4.7
    "step3p5": None,
    "hy_v4": None,
    "granite_thinking_parser": "enable_thinking",  # Granite 4.2
    "holo2": "enable_thinking",
    "nemotron_v3": "enable_thinking",
    "nemotron_3": "enable_thinking",
}


def template_default(name: str, template_kwargs: Mapping[str, Any] | None) -> bool | None:
    """Whether the template behind a registered name opens the reasoning block for this
    request, from the name alone (TEMPLATE_OPENS_REASONING); None when it does not say."""
    if name not in TEMPLATE_OPENS_REASONING:
        return None
    switch = TEMPLATE_OPENS_REASONING[name]
    return not (switch and template_kwargs and template_kwargs.get(switch) is False)


def reasoning_in_prompt_from(template_kwargs: Mapping[str, Any] | None) -> bool | None:
    """False when the chat template was told not to think (``enable_thinking=False`` or
    ``thinking=False``): no reasoning block then; else None (no evidence)."""
    for key in THINKING_FLAGS:
        if template_kwargs and template_kwargs.get(key) is False:
            return False
    return None


def reasoning_open_at(prompt_tail: str, format: str | Format) -> bool | None:
    """Whether a rendered prompt that ends with prompt_tail leaves the format's reasoning
    open: True when its last text opens the reasoning (an opening marker, such as
    Qwen3-Thinking's ``<think>\\n`` or DeepSeek V3.1's Assistant marker then ``<think>``,
    or one of the format's reasoning_openers, such as gpt-oss's analysis channel),
    False otherwise (no block opened, or one the template closed empty to turn thinking
    off; a block the model writes itself is still read).  None for a format that has
    neither."""
    fmt = get_format(format)
    openers = (*reasoning_markers(fmt).opening, *fmt.reasoning_openers)
    if not openers:
        return None
    return prompt_tail.rstrip().endswith(tuple(o.rstrip() for o in openers))


def decide_reasoning_in_prompt(
    *,
    forced: bool | None = None,
    prompt_open: bool | None = None,
    template_kwargs: Mapping[str, Any] | None = None,
    name_default: bool | None = None,
) -> bool | None:
    """One request's reasoning_in_prompt, from the strongest evidence there is: an
    adapter class that forces it, then the prompt itself, then the template's thinking
    switch turned off, then what the registered name says of its template; else None
    (the format's default)."""
    for evidence in (forced, prompt_open, reasoning_in_prompt_from(template_kwargs)):
        if evidence is not None:
            return evidence
    return name_default


class ReasoningTokenCounter:
    """How many generated tokens are reasoning, counted as a response streams: the
    tokens of a feed go to the kind of text the parser gives out next (a token held
    back, such as the start of a marker, counts with the text that follows it), and a
    token that is a reasoning marker itself counts as none (as vLLM's own parsers
    count the tokens inside the block)."""

    __slots__ = ("_pending", "count", "tokens")

    def __init__(self) -> None:
        self.count = 0
        self.tokens = 0
        self._pending = 0

    def add(self, tokens: int, delta: Delta, *, marker: bool = False) -> None:
        self.tokens += tokens
        if not marker:
            self._pending += tokens
        if delta.reasoning:
            self.count += self._pending
            self._pending = 0
        elif delta.content or delta.calls:
            self._pending = 0


# -- where reasoning ends, by token id -------------------------------------------------


@dataclass(frozen=True)
class ReasoningMarkers:
    """A format's reasoning markers: what opens the block, what closes it, and the call
    markers that end unfinished reasoning implicitly (formats where a call ends it)."""

    opening: tuple[str, ...] = ()
    closing: tuple[str, ...] = ()
    implicit: tuple[str, ...] = ()


def _walk(node: Node, rules: Mapping[str, Node], seen: set[str]) -> Iterable[Node]:
    """Every node reachable from node, following references once."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, Ref):
            if current.name not in seen:
                seen.add(current.name)
                stack.append(rules[current.name])
            continue
        yield current
        for name in ("items", "alts"):
            stack.extend(reversed(getattr(current, name, ())))
        for name in ("item", "handler"):
            child = getattr(current, name, None)
            if isinstance(child, Node):
                stack.append(child)


def _first_literals(node: Node, rules: Mapping[str, Node]) -> list[str]:
    """The literals a node's match may begin with (the opening markers of a "think"
    rule: kimi_k3's whole ``<|open|>think<|sep|>``, never a ``<|sep|>`` further in)."""
    if isinstance(node, Lit):
        return [node.text.decode()]
    if isinstance(node, Ref):
        return _first_literals(rules[node.name], rules)
    if isinstance(node, Choice):
        return [text for alt in node.alts for text in _first_literals(alt, rules)]
    if isinstance(node, Seq):
        for item in node.items:
            if not isinstance(item, (Cut, Ws)):
                return _first_literals(item, rules)
    return []


@per_format
def reasoning_markers(fmt: Format) -> ReasoningMarkers:
    """The markers of a format's opening reasoning block, read from its grammar (the
    "think" rule and the stops of its reasoning text).  Empty for a format without such
    a block (its reasoning, if any, is not delimited by markers of its own)."""
    grammar = fmt.written_grammar  # the markers that stray in reasoning end nothing
    rules = grammar.rules
    if fmt.reasoning == "none" or "think" not in rules:
        return ReasoningMarkers()
    stops: list[str] = []
    for node in _walk(rules[grammar.entries["start"]], rules, set()):
        if isinstance(node, Tag) and node.role == "reasoning":
            for inner in _walk(node.item, rules, set()):
                if isinstance(inner, Until):
                    stops += [s.marker.decode() for s in inner.stops]
    stops = list(dict.fromkeys(stops))
    literals = [n.text.decode() for n in _walk(rules["think"], rules, set()) if isinstance(n, Lit)]
    opening = tuple(dict.fromkeys(_first_literals(rules["think"], rules)))
    closing = tuple(dict.fromkeys(t for t in literals if t in stops))
    implicit = tuple(dict.fromkeys(s for s in stops if s not in closing))
    return ReasoningMarkers(opening, closing, implicit)


class ReasoningEndScanner:
    """Whether reasoning has ended, from token ids alone, for the markers that are single
    tokens of the vocabulary (the usual case for ``<think>`` / ``</think>``).

    A pure function of the ids it is given, as a constrained-decoding gate needs (it
    asks again with fewer ids when it rolls back speculative tokens)."""

    def __init__(self, markers: ReasoningMarkers, vocab: Mapping[str, int]) -> None:
        def ids(texts: Sequence[str]) -> frozenset[int]:
            return frozenset(vocab[t] for t in texts if t in vocab)

        self.opening = ids(markers.opening)
        self.closing = ids(markers.closing)
        self.ending = self.closing | ids(markers.implicit)

    @property
    def usable(self) -> bool:
        """Whether the closing marker is a single token here."""
        return bool(self.closing)

    def is_reasoning_end(self, ids: Sequence[int]) -> bool:
        """Whether the last reasoning marker in ids closes a block."""
        for token in reversed(ids):
            if token in self.closing:
                return True
            if token in self.opening:
                return False
        return False

    def ends_in(self, delta_ids: Iterable[int]) -> bool:
        """Whether these new ids end the reasoning (a closing or implicit-end marker)."""
        return any(token in self.ending for token in delta_ids)

    def content_ids(self, ids: Sequence[int]) -> list[int]:
        """The ids after the last closing or implicit-end marker (all ids if none); an
        implicit end is a call marker, so it is kept with the content."""
        for k in range(len(ids) - 1, -1, -1):
            if ids[k] in self.closing:
                return list(ids[k + 1 :])
            if ids[k] in self.ending:
                return list(ids[k:])
        return list(ids)


# -- the frameworks' pydantic models, built without validation ----------------------------

_new = object.__new__
_set = object.__setattr__


def unvalidated(cls: Any, values: dict[str, Any], unset: dict[str, Any]) -> Any:
    """A framework's pydantic model `cls` with exactly `values` set (its other fields
    from `unset`), built as pydantic's model_construct builds it but without its walk
    over the fields on every call: the values are the adapter's own, already of the
    fields' types, and one or three of these go out per token (a vLLM DeltaMessage: 0.7
    µs, against 1.3 validated and 1.9 through model_construct)."""
    obj = _new(cls)
    _set(obj, "__dict__", unset | values)
    _set(obj, "__pydantic_fields_set__", set(values))
    _set(obj, "__pydantic_extra__", {} if cls.model_config.get("extra") == "allow" else None)
    _set(obj, "__pydantic_private__", None)
    return obj


def unvalidated_holds(built: Callable[[], Any], validated: Callable[[], Any]) -> bool:
    """Whether a sample built by `unvalidated` equals the validated one, on the wire
    too (a pydantic or framework release could change what a model holds)."""
    try:
        got, want = built(), validated()
        wire = got.model_dump_json(exclude_unset=True)
        return bool(got == want and wire == want.model_dump_json(exclude_unset=True))
    except Exception:
        return False


# -- names and tools ----------------------------------------------------------------------


def adapter_names() -> dict[str, str]:
    """``toolparse_<name>`` -> format name, for every format and alias."""
    names: dict[str, str] = {}
    for fmt in FORMATS.values():
        for name in (fmt.name, *fmt.aliases):
            names[PREFIX + name] = fmt.name
    return names


def tools_as_dicts(tools: Iterable[Any] | None) -> list[dict[str, Any]] | None:
    """A framework's tool objects (pydantic models or dicts, Chat Completions or
    Responses shape) as OpenAI tool dicts; None when there are none."""
    out: list[dict[str, Any]] = []
    for tool in tools or ():
        if isinstance(tool, Mapping):
            out.append(dict(tool))
            continue
        dump = getattr(tool, "model_dump", None)
        if dump is None:
            raise TypeError(f"cannot read the tool {tool!r}")
        out.append(dump(exclude_none=True))
    return out or None
