"""Anthropic Messages API shapes: a Message as an assistant message, and the events of one
response as the Messages streaming events.

``message_to_anthropic(message)`` gives the assistant message a client sends back in the
next request (``{"role": "assistant", "content": [blocks]}``), ``response_to_anthropic``
the whole non-streaming response body, and ``AnthropicStreamEncoder`` turns the events of
one response (``StreamParser`` events, ``End`` last) into the streaming events the Messages
API sends: ``message_start``; per content block ``content_block_start``,
``content_block_delta`` (``text_delta``, ``thinking_delta``, ``input_json_delta`` with
``partial_json``, ``signature_delta``) and ``content_block_stop``, with increasing block
indexes; ``message_delta`` with the ``stop_reason``; ``message_stop``.  ``sse(event)``
writes one event as a server-sent event (``event:`` line and ``data:`` line).

The blocks, in this order (the order the Messages API itself gives them):

- ``thinking``: the reasoning text.  Its ``signature`` is, in the Messages API, an opaque
  value the server makes so that it can verify a thinking block passed back to it.  This
  server cannot make Anthropic's, so it is ``""`` unless a ``sign`` function is given
  (for example an HMAC of the thinking text, which the server can check when the block
  comes back); a signature is sent as a ``signature_delta`` just before the block's
  ``content_block_stop``, as the Messages API sends it.  Such a block is for a server built
  on toolparse: Anthropic's own API checks signatures and would not take it back.
  ``thinking=False`` leaves reasoning out altogether.
- ``text``: the visible content.
- ``tool_use`` per complete call, in call order: ``id`` (the call's id as toolparse
  gives it: generated ``call_...`` or carried by the output, never rewritten to
  Anthropic's ``toolu_...``), ``name``, and ``input``, the parsed arguments.

A tool call reaches the client only once it is complete: ``ToolCallStart`` and
``ToolCallArgsDelta`` are held, and the call's block is sent from its ``ToolCallEnd``
(``content_block_start`` with ``"input": {}``, one ``input_json_delta`` carrying the whole
``arguments_json``, ``content_block_stop``).  A call that started but never ended (a
``ParseError``, "incomplete" when the output was cut short, "invalid_arguments", ...)
sends nothing at all, so a client never sees part of an input as a whole one; the error
stays in toolparse's own events and Message, which the Messages API has no place for.  A
repaired call (``call.repaired``) is sent like any other; the flag has no place either.

Where the calls go (``tool_use``):

- ``"at_end"`` (the default): every ``tool_use`` block is sent after the last text, when
  ``End`` arrives.  Text and reasoning still stream as they come.  The blocks are then
  always the ones ``message_to_anthropic`` gives, whatever followed a call: many formats
  let text follow the calls ("I'll let you know once I have the results."), and the
  Message joins all the text into one ``content``.
- ``"as_completed"``: each ``tool_use`` block as soon as its ``ToolCallEnd`` arrives, so
  a client can act on a call before the response ends.  Text (or reasoning) after a call
  then opens a new block after it, so the blocks are those of ``message_to_anthropic``
  only when nothing but calls follows the first call; the text blocks still join into
  ``message.content``.

In either mode, reasoning that arrives after text opens a second thinking block (the
Message joins both into ``reasoning_content``); no built-in format does this.

``stop_reason``: ``"max_tokens"`` for a response cut short (``finish("length")``),
``"tool_use"`` when the message has complete calls, else ``"end_turn"``; an OpenAI-style
``"content_filter"`` is ``"refusal"``, and the Messages API's own reasons pass through.
``usage`` carries the token counts the caller gives (``input_tokens``, and
``output_tokens``, which a serving loop may update while it streams); ``stop_sequence`` is
always null.  No ``ping`` events are sent.
"""

from __future__ import annotations

import json
import secrets
import string
from collections.abc import Callable, Iterable
from typing import Any, Literal

from ..events import ContentDelta, End, Event, ReasoningDelta, ToolCallEnd
from ..message import Message, ToolCall

ToolUsePlacement = Literal["at_end", "as_completed"]
Signer = Callable[[str], str]
AnthropicEvent = dict[str, Any]

STOP_REASONS = frozenset(
    {
        "end_turn",
        "max_tokens",
        "stop_sequence",
        "tool_use",
        "pause_turn",
        "refusal",
        "model_context_window_exceeded",
    }
)
_FINISH_TO_STOP = {"length": "max_tokens", "tool_calls": "tool_use", "content_filter": "refusal"}
_ID_ALPHABET = string.ascii_letters + string.digits


def stop_reason(finish_reason: str | None, has_tool_calls: bool) -> str:
    """The Messages API ``stop_reason`` for a toolparse finish reason."""
    if finish_reason in _FINISH_TO_STOP:
        return _FINISH_TO_STOP[finish_reason]
    if finish_reason in STOP_REASONS and finish_reason != "end_turn":
        return finish_reason
    return "tool_use" if has_tool_calls else "end_turn"


def new_message_id() -> str:
    """A random message id: ``msg_`` and 24 letters and digits."""
    return "msg_" + "".join(secrets.choice(_ID_ALPHABET) for _ in range(24))


def thinking_block(thinking: str, signature: str = "") -> dict[str, Any]:
    return {"type": "thinking", "thinking": thinking, "signature": signature}


def text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def tool_use_block(call: ToolCall) -> dict[str, Any]:
    """A complete call as a ``tool_use`` block; ``input`` is a fresh copy of the arguments."""
    return {
        "type": "tool_use",
        "id": call.id,
        "name": call.name,
        "input": json.loads(call.arguments_json),
    }


def message_to_anthropic(
    message: Message, *, thinking: bool = True, sign: Signer | None = None
) -> dict[str, Any]:
    """The assistant message of a Message: ``{"role": "assistant", "content": [...]}`` with
    a thinking block (the reasoning), a text block (the content) and a tool_use block per
    complete call, each only when there is something to put in it."""
    content: list[dict[str, Any]] = []
    if thinking and message.reasoning_content:
        reasoning = message.reasoning_content
        content.append(thinking_block(reasoning, sign(reasoning) if sign else ""))
    if message.content:
        content.append(text_block(message.content))
    content.extend(tool_use_block(call) for call in message.tool_calls)
    return {"role": "assistant", "content": content}


def response_to_anthropic(
    message: Message,
    *,
    model: str,
    message_id: str | None = None,
    input_tokens: int = 0,
    output_tokens: int = 0,
    thinking: bool = True,
    sign: Signer | None = None,
) -> dict[str, Any]:
    """The whole non-streaming response body (a Messages API ``Message`` object)."""
    return {
        "id": message_id or new_message_id(),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": message_to_anthropic(message, thinking=thinking, sign=sign)["content"],
        "stop_reason": stop_reason(message.finish_reason, bool(message.tool_calls)),
        "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
    }


def sse(event: AnthropicEvent) -> str:
    """One streaming event as a server-sent event, the way the Messages API frames it."""
    data = json.dumps(event, ensure_ascii=False, separators=(",", ":"))
    return f"event: {event['type']}\ndata: {data}\n\n"


class AnthropicStreamEncoder:
    """Turns the events of one response into Messages API streaming events.

    Feed every event of the response, ``End`` last, to ``encode()``; each call returns the
    streaming events it makes (possibly none).  ``start()`` gives ``message_start`` early,
    before the first token; otherwise the first ``encode()`` begins with it.  Set
    ``output_tokens`` (the count so far) before ``End`` to report it in ``message_delta``.
    See the module docstring for the blocks, the held calls and ``tool_use`` placement.
    """

    def __init__(
        self,
        *,
        model: str,
        message_id: str | None = None,
        input_tokens: int = 0,
        tool_use: ToolUsePlacement = "at_end",
        thinking: bool = True,
        sign: Signer | None = None,
    ) -> None:
        if tool_use not in ("at_end", "as_completed"):
            raise ValueError(f"unknown tool_use placement {tool_use!r}")
        self.model = model
        self.message_id = message_id or new_message_id()
        self.input_tokens = input_tokens
        self.output_tokens = 0
        self.tool_use: ToolUsePlacement = tool_use
        self.thinking = thinking
        self.sign = sign
        self._started = False
        self._done = False
        self._next_index = 0
        self._open: Literal["thinking", "text"] | None = None
        self._thinking: list[str] = []
        self._held: list[ToolCall] = []
        self._sent_tool_use = False

    @property
    def done(self) -> bool:
        """Whether End has been encoded (the stream is over)."""
        return self._done

    def start(self) -> list[AnthropicEvent]:
        """``message_start``, once; an empty list after that."""
        if self._started:
            return []
        self._started = True
        return [
            {
                "type": "message_start",
                "message": {
                    "id": self.message_id,
                    "type": "message",
                    "role": "assistant",
                    "model": self.model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": self.input_tokens, "output_tokens": 0},
                },
            }
        ]

    def encode(self, event: Event) -> list[AnthropicEvent]:
        """The streaming events one toolparse event makes."""
        if self._done:
            raise RuntimeError("the response has already ended (End was encoded)")
        out = self.start()
        if isinstance(event, ContentDelta):
            if event.text:
                self._delta(out, "text", event.text)
        elif isinstance(event, ReasoningDelta):
            if event.text and self.thinking:
                self._delta(out, "thinking", event.text)
        elif isinstance(event, ToolCallEnd):
            if self.tool_use == "as_completed":
                self._close(out)
                self._tool_use(out, event.call)
            else:
                self._held.append(event.call)
        elif isinstance(event, End):
            self._close(out)
            for call in self._held:
                self._tool_use(out, call)
            self._held.clear()
            reason = stop_reason(event.finish_reason, self._sent_tool_use)
            out.append(
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": reason, "stop_sequence": None},
                    "usage": {"output_tokens": self.output_tokens},
                }
            )
            out.append({"type": "message_stop"})
            self._done = True
        # ToolCallStart and ToolCallArgsDelta are held (a call is sent whole from its
        # ToolCallEnd); ParseError has no place in the Messages API.
        return out

    def encode_all(self, events: Iterable[Event]) -> list[AnthropicEvent]:
        """The streaming events of a sequence of events."""
        return [item for event in events for item in self.encode(event)]

    def _delta(
        self, out: list[AnthropicEvent], kind: Literal["thinking", "text"], text: str
    ) -> None:
        if self._open != kind:
            self._close(out)
            block = thinking_block("") if kind == "thinking" else text_block("")
            out.append(
                {"type": "content_block_start", "index": self._next_index, "content_block": block}
            )
            self._open = kind
        if kind == "thinking":
            self._thinking.append(text)
            delta = {"type": "thinking_delta", "thinking": text}
        else:
            delta = {"type": "text_delta", "text": text}
        out.append({"type": "content_block_delta", "index": self._next_index, "delta": delta})

    def _close(self, out: list[AnthropicEvent]) -> None:
        if self._open is None:
            return
        if self._open == "thinking":
            signature = self.sign("".join(self._thinking)) if self.sign else ""
            self._thinking.clear()
            if signature:
                out.append(
                    {
                        "type": "content_block_delta",
                        "index": self._next_index,
                        "delta": {"type": "signature_delta", "signature": signature},
                    }
                )
        out.append({"type": "content_block_stop", "index": self._next_index})
        self._open = None
        self._next_index += 1

    def _tool_use(self, out: list[AnthropicEvent], call: ToolCall) -> None:
        index = self._next_index
        block = {"type": "tool_use", "id": call.id, "name": call.name, "input": {}}
        delta = {"type": "input_json_delta", "partial_json": call.arguments_json}
        out.append({"type": "content_block_start", "index": index, "content_block": block})
        out.append({"type": "content_block_delta", "index": index, "delta": delta})
        out.append({"type": "content_block_stop", "index": index})
        self._next_index += 1
        self._sent_tool_use = True
