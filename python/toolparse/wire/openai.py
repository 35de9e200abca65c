"""OpenAI chat-completion shapes: the assistant message and the streamed chunks.

- ``message_to_openai(message)``: a Message as a chat-completion assistant message.
- ``ChunkEncoder`` / ``to_chunks()``: the events of one response (what
  ``StreamParser.feed`` and ``finish`` return, End last) as ``chat.completion.chunk``
  dicts, the way OpenAI-compatible servers stream them.
- ``ChunkAccumulator`` / ``from_chunks()``: such chunks (dicts, or the openai SDK's
  ``ChatCompletionChunk`` objects) back into a Message.

A tool call is sent only once it is complete.  An OpenAI client takes whatever fragments
it received for an index as that call: a chunk cannot take a call back.  So the encoder
holds a call from its ToolCallStart until its ToolCallEnd and then sends it in two
chunks (id, type and name with empty arguments; then the whole arguments); a call that
ends in a ParseError instead is never sent, and the error is kept in
``ChunkEncoder.errors`` (and, for a caller who opts in with ``error_field``, written
into the finishing chunk).  The cost is that a client sees a call's arguments at once
when the call is complete rather than while they are generated; text and reasoning
still stream as they come.  Calls are numbered (the chunks' ``index``) in the order
they are delivered, so a failed call leaves no gap.

The accumulator keys tool-call fragments by their ``index`` alone (never by position or
arrival order), takes an id and a name from whichever fragment carries them, and checks
a call when its response has finished: a call without a name, with two different ids,
or whose arguments are not a JSON object becomes a ParseError in ``Message.errors``,
never a guessed call.  Text within one response is kept exactly as it came, text after
tool calls included (as the model wrote it, as every OpenAI client joins it, and as
``parse()`` gives it).  A stream that goes on after a ``finish_reason`` carries the next
round of the same turn (a proxy streaming several completions of one turn); the texts
of two rounds are joined with a paragraph break (``round_separator``) so they do not
run together, and each round numbers its tool calls from 0 again.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..events import (
    ContentDelta,
    End,
    Event,
    ReasoningDelta,
    ToolCallArgsDelta,
    ToolCallEnd,
    ToolCallStart,
)
from ..message import Message, ParseError, ToolCall
from ..stream import id_generator

__all__ = [
    "ChunkAccumulator",
    "ChunkEncoder",
    "error_to_dict",
    "from_chunks",
    "message_to_openai",
    "to_chunks",
]

CHUNK_OBJECT = "chat.completion.chunk"


def message_to_openai(message: Message) -> dict[str, Any]:
    """The chat-completion assistant message: role, content (None when there is none),
    reasoning_content when there is some, and tool_calls when there are calls (each with
    its arguments as the JSON string the model wrote)."""
    out: dict[str, Any] = {"role": "assistant", "content": message.content or None}
    if message.reasoning_content:
        out["reasoning_content"] = message.reasoning_content
    if message.tool_calls:
        out["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments_json},
            }
            for call in message.tool_calls
        ]
    return out


def error_to_dict(error: ParseError) -> dict[str, Any]:
    """A ParseError as JSON: kind, message, index (the call's index in the model output, or
    None) and offset."""
    return {
        "kind": error.kind,
        "message": error.message,
        "index": error.index,
        "offset": error.offset,
    }


class ChunkEncoder:
    """Turns the events of one response into ``chat.completion.chunk`` dicts.

    Feed it each list of events as the parser returns them: ``encode()`` gives the chunks
    to send.  The first call starts with the role chunk (``role: "assistant"`` and empty
    content); adjacent text deltas of one kind in one list share a chunk; End gives the
    finishing chunk, an empty delta with the ``finish_reason`` ("tool_calls" when calls
    were delivered and the output stopped; "length" when it was cut; any other reason
    as it is).  ``usage_chunk()`` then gives the optional usage chunk.

    A tool call's chunks are held until its ToolCallEnd (see the module docstring), so a
    call that fails is never sent.  Every ParseError is kept in ``errors``.  With
    ``error_field`` set, the finishing chunk's choice also carries that (non-standard)
    key with the errors as dicts (kind, message, index, offset) when there were any.

    reasoning_key: the delta key for reasoning: "reasoning_content" (DeepSeek's API,
    SGLang, vLLM before its rename) or "reasoning" (newer vLLM, OpenRouter).  created:
    Unix seconds, now when None.
    """

    def __init__(
        self,
        *,
        id: str,
        model: str,
        created: int | None = None,
        reasoning_key: str = "reasoning_content",
        error_field: str | None = None,
    ) -> None:
        self.id = id
        self.model = model
        self.created = int(time.time()) if created is None else created
        self.reasoning_key = reasoning_key
        self.error_field = error_field
        self.errors: list[ParseError] = []
        self.finish_reason: str | None = None
        self._started = False
        self._delivered = 0

    @property
    def delivered(self) -> int:
        """How many tool calls have been sent."""
        return self._delivered

    def chunk(self, delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        """One chunk of this response with the given delta."""
        return {
            "id": self.id,
            "object": CHUNK_OBJECT,
            "created": self.created,
            "model": self.model,
            "choices": [
                {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
            ],
        }

    def encode(self, events: Iterable[Event]) -> list[dict[str, Any]]:
        """The chunks that these events (the next ones of the response) make."""
        chunks: list[dict[str, Any]] = []
        if not self._started:
            self._started = True
            # no "content" yet: a message of calls only then accumulates to content None
            chunks.append(self.chunk({"role": "assistant"}))
        text_key: str | None = None
        text: list[str] = []

        def flush() -> None:
            nonlocal text_key
            if text_key is not None:
                chunks.append(self.chunk({text_key: "".join(text)}))
                text_key = None
                text.clear()

        for event in events:
            if self.finish_reason is not None:
                raise ValueError("events after End: use a new ChunkEncoder per response")
            if isinstance(event, ContentDelta | ReasoningDelta):
                key = "content" if isinstance(event, ContentDelta) else self.reasoning_key
                if key != text_key:
                    flush()
                    text_key = key
                text.append(event.text)
            elif isinstance(event, ToolCallStart | ToolCallArgsDelta):
                pass  # held: ToolCallEnd carries the whole call; a ParseError drops it
            elif isinstance(event, ToolCallEnd):
                flush()
                chunks.extend(self._call_chunks(event.call))
            elif isinstance(event, ParseError):
                self.errors.append(event)
            elif isinstance(event, End):
                flush()
                chunks.append(self._finish_chunk(event.finish_reason))
            else:
                raise TypeError(f"not a toolparse event: {event!r}")
        flush()
        return chunks

    def usage_chunk(self, usage: Mapping[str, Any]) -> dict[str, Any]:
        """The usage chunk, sent last: empty choices and the token counts."""
        return {
            "id": self.id,
            "object": CHUNK_OBJECT,
            "created": self.created,
            "model": self.model,
            "choices": [],
            "usage": dict(usage),
        }

    def _call_chunks(self, call: ToolCall) -> list[dict[str, Any]]:
        index = self._delivered
        self._delivered += 1
        head = {
            "index": index,
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        arguments = {"index": index, "function": {"arguments": call.arguments_json}}
        return [self.chunk({"tool_calls": [head]}), self.chunk({"tool_calls": [arguments]})]

    def _finish_chunk(self, reason: str) -> dict[str, Any]:
        if reason == "stop" and self._delivered:
            reason = "tool_calls"
        self.finish_reason = reason
        chunk = self.chunk({}, reason)
        if self.error_field is not None and self.errors:
            chunk["choices"][0][self.error_field] = [error_to_dict(e) for e in self.errors]
        return chunk


def to_chunks(
    events: Iterable[Event],
    *,
    id: str,
    model: str,
    created: int | None = None,
    usage: Mapping[str, Any] | None = None,
    reasoning_key: str = "reasoning_content",
    error_field: str | None = None,
) -> list[dict[str, Any]]:
    """All the chunks of one response's events (End last), then the usage chunk if given.
    See ChunkEncoder."""
    encoder = ChunkEncoder(
        id=id, model=model, created=created, reasoning_key=reasoning_key, error_field=error_field
    )
    chunks = encoder.encode(events)
    if usage is not None:
        chunks.append(encoder.usage_chunk(usage))
    return chunks


# -- from chunks ---------------------------------------------------------------------------


def _as_dict(value: Any) -> Mapping[str, Any]:
    """A chunk or a part of one as a mapping: dicts as they are, pydantic models (the
    openai SDK's objects) through model_dump(), which keeps the fields a server adds."""
    if isinstance(value, Mapping):
        return value
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        dumped = dump()
        if isinstance(dumped, Mapping):
            return dumped
    raise TypeError(f"not a chat.completion.chunk: {value!r}")


def _carries_output(delta: Mapping[str, Any]) -> bool:
    """Whether a delta has text or a tool call fragment in it."""
    return bool(
        delta.get("content")
        or delta.get("reasoning_content")
        or delta.get("reasoning")
        or delta.get("tool_calls")
    )


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


@dataclass
class _Call:
    """The fragments of one tool call so far."""

    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)
    conflict: str | None = None


@dataclass
class _Round:
    """One response of the stream: up to and including its finish_reason."""

    content: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    calls: dict[int, _Call] = field(default_factory=dict)
    errors: list[ParseError] = field(default_factory=list)
    finish_reason: str | None = None
    finished_at: int = 0  # chunks received when the finish_reason came


class ChunkAccumulator:
    """Builds a Message from the chunks of a stream, fed one at a time to add().

    Chunks are dicts (parsed JSON) or objects with ``model_dump()`` (the openai SDK's
    ChatCompletionChunk); only choice ``choice`` is read.  ``message`` is the message so
    far: the text received, and the tool calls of finished responses only (a call is
    checked once its response's finish_reason arrives).  ``finish()`` ends the stream:
    the calls of a response without a finish_reason are ParseError(kind="incomplete"),
    and so is a stream that just stops.

    Tool-call fragments are keyed by ``index``; a fragment may bring the id, the name
    (pieces of it are joined, as the delta format means) and arguments in any order of
    chunks.  A checked call becomes a ToolCall whose ``index`` counts all the calls of
    the stream (in order of response, then wire index), or a ParseError with that index:
    kind "invalid_arguments" for a call with no name, two different ids, or arguments
    that are not a JSON object (a fragment without an index is kind "unexpected").  A
    call without an id gets one from ``id_factory``.
    Reasoning is read from ``reasoning_content`` or, failing that, ``reasoning`` (a server
    that sends both, with the same text, is read once).

    finish_reason: the last response's, made to agree with its calls as toolparse's own
    Message does ("stop" with delivered calls is "tool_calls", "tool_calls" without any
    is "stop").  Errors the sender put under ``error_field`` (see ChunkEncoder) are added
    to ``errors``.  Errors the accumulator finds have ``offset`` = the number of chunks
    received when they were found (for a call: when its response finished).  ``usage``
    is the last usage seen; ``id``, ``model`` and ``created`` are the first chunk's.
    """

    def __init__(
        self,
        *,
        choice: int = 0,
        round_separator: str = "\n\n",
        error_field: str | None = None,
        id_factory: Callable[[], str] | None = None,
    ) -> None:
        self.choice = choice
        self.round_separator = round_separator
        self.error_field = error_field
        self._new_id = id_factory or id_generator()
        self.id: str | None = None
        self.model: str | None = None
        self.created: int | None = None
        self.usage: dict[str, Any] | None = None
        self.chunks = 0
        self._rounds: list[_Round] = []
        self._finished = False

    def add(self, chunk: Any) -> None:
        """Takes the next chunk."""
        data = _as_dict(chunk)
        self.chunks += 1
        if self.id is None and isinstance(data.get("id"), str):
            self.id = data["id"]
            self.model = data.get("model")
            self.created = data.get("created")
        usage = data.get("usage")
        if usage is not None:
            self.usage = dict(_as_dict(usage))
        for choice_value in data.get("choices") or ():
            choice = _as_dict(choice_value)
            if choice.get("index", 0) != self.choice:
                continue
            delta = _as_dict(choice.get("delta") or {})
            round_ = self._round_for(delta)
            content = delta.get("content")
            if isinstance(content, str):
                round_.content.append(content)
            reasoning = delta.get("reasoning_content")
            if reasoning is None:
                reasoning = delta.get("reasoning")
            if isinstance(reasoning, str):
                round_.reasoning.append(reasoning)
            for fragment in delta.get("tool_calls") or ():
                self._add_fragment(round_, _as_dict(fragment))
            reason = choice.get("finish_reason")
            if isinstance(reason, str) and reason:
                if round_.finish_reason is None:
                    round_.finished_at = self.chunks
                round_.finish_reason = reason
            if self.error_field is not None:
                for error in choice.get(self.error_field) or ():
                    round_.errors.append(self._error_from(_as_dict(error)))

    def _round_for(self, delta: Mapping[str, Any]) -> _Round:
        """The round a choice belongs to: a new one when the last has finished and the
        delta carries output (text or a tool call; a role chunk, empty text or a repeated
        finishing chunk stays with the finished round)."""
        if not self._rounds or (
            self._rounds[-1].finish_reason is not None and _carries_output(delta)
        ):
            self._rounds.append(_Round())
        return self._rounds[-1]

    def _add_fragment(self, round_: _Round, fragment: Mapping[str, Any]) -> None:
        index = fragment.get("index")
        if not isinstance(index, int) or isinstance(index, bool):
            round_.errors.append(
                ParseError("unexpected", "a tool call fragment without an index", None, self.chunks)
            )
            return
        call = round_.calls.setdefault(index, _Call())
        call_id = fragment.get("id")
        if isinstance(call_id, str) and call_id:
            if not call.id:
                call.id = call_id
            elif call.id != call_id and call.conflict is None:
                call.conflict = (
                    f"tool call fragments of one index with two ids: {call.id!r}, {call_id!r}"
                )
        function = fragment.get("function")
        if function is not None:
            function = _as_dict(function)
            name = function.get("name")
            if isinstance(name, str):
                call.name += name
            arguments = function.get("arguments")
            if isinstance(arguments, str) and arguments:
                call.arguments.append(arguments)

    def _error_from(self, data: Mapping[str, Any]) -> ParseError:
        index = data.get("index")
        offset = data.get("offset")
        return ParseError(
            str(data.get("kind", "unexpected")),
            str(data.get("message", "")),
            index if isinstance(index, int) else None,
            offset if isinstance(offset, int) else self.chunks,
        )

    def _check(self, call: _Call, number: int, offset: int) -> ToolCall | ParseError:
        def invalid(message: str) -> ParseError:
            return ParseError("invalid_arguments", message, number, offset)

        if call.conflict is not None:
            return invalid(call.conflict)
        if not call.name:
            return invalid("a tool call without a name")
        arguments_json = "".join(call.arguments)
        try:
            arguments = json.loads(arguments_json, parse_constant=_reject_constant)
        except ValueError as exc:
            return invalid(f"the arguments of {call.name!r} are not valid JSON: {exc}")
        if not isinstance(arguments, dict):
            return invalid(f"the arguments of {call.name!r} are not a JSON object")
        if not call.id:
            call.id = self._new_id()
        return ToolCall(number, call.id, call.name, arguments, arguments_json)

    def _build(self, final: bool) -> Message:
        calls: list[ToolCall] = []
        errors: list[ParseError] = []
        number = 0
        last_delivered = 0
        for round_ in self._rounds:
            errors.extend(round_.errors)
            finished = round_.finish_reason is not None
            last_delivered = 0
            for wire_index in sorted(round_.calls):
                if finished:
                    checked = self._check(round_.calls[wire_index], number, round_.finished_at)
                    if isinstance(checked, ToolCall):
                        calls.append(checked)
                        last_delivered += 1
                    else:
                        errors.append(checked)
                elif final:
                    errors.append(
                        ParseError(
                            "incomplete",
                            "the stream ended before the call's response finished",
                            number,
                            self.chunks,
                        )
                    )
                number += 1
            if final and not finished and not round_.calls:
                errors.append(
                    ParseError(
                        "incomplete", "the stream ended without a finish_reason", None, self.chunks
                    )
                )
        reason = self._rounds[-1].finish_reason if self._rounds else None
        if reason == "stop" and last_delivered:
            reason = "tool_calls"
        elif reason == "tool_calls" and not last_delivered:
            reason = "stop"
        sep = self.round_separator
        content = sep.join(text for r in self._rounds if (text := "".join(r.content)))
        reasoning = sep.join(text for r in self._rounds if (text := "".join(r.reasoning)))
        return Message(
            content=content or None,
            reasoning_content=reasoning or None,
            tool_calls=calls,
            errors=errors,
            finish_reason=reason,
        )

    @property
    def message(self) -> Message:
        """The message so far (see the class docstring); after finish(), the final one."""
        return self._build(self._finished)

    def finish(self) -> Message:
        """Ends the stream and gives the final message."""
        self._finished = True
        return self._build(True)


def from_chunks(
    chunks: Iterable[Any],
    *,
    choice: int = 0,
    round_separator: str = "\n\n",
    error_field: str | None = None,
    id_factory: Callable[[], str] | None = None,
) -> Message:
    """The Message that a whole stream of chunks adds up to.  See ChunkAccumulator."""
    accumulator = ChunkAccumulator(
        choice=choice,
        round_separator=round_separator,
        error_field=error_field,
        id_factory=id_factory,
    )
    for chunk in chunks:
        accumulator.add(chunk)
    return accumulator.finish()
