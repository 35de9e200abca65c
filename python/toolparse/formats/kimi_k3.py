"""Moonshot Kimi K3 (XTML): ``<|open|>tools<|sep|>`` channels of typed ``call`` elements.

What the model writes (the chat template ends the prompt with ``<|open|>think<|sep|>``, so
the output starts inside the reasoning; the special tokens come back to back, shown here
one element per line)::

    The user wants the weather in Paris.<|close|>think<|sep|>
    <|open|>response<|sep|>Let me check.<|close|>response<|sep|>
    <|open|>tools<|sep|>
    <|open|>call tool="get_weather" index="1"<|sep|>
    <|open|>argument key="city" type="string"<|sep|>Paris<|close|>argument<|sep|>
    <|open|>argument key="days" type="integer"<|sep|>3<|close|>argument<|sep|>
    <|close|>call<|sep|>
    <|close|>tools<|sep|>
    <|close|>message<|sep|><|end_of_msg|>

Facts relied on:

- Layout: llama.cpp's Kimi K3 parser (common/parsers/kimi-k3.cpp): an assistant message
  is an optional think channel, an optional response channel, an optional tools channel,
  then ``<|close|>message<|sep|>`` and ``<|end_of_msg|>``; ``<|open|>``, ``<|close|>``,
  ``<|sep|>`` and ``<|end_of_msg|>`` are the special tokens, the element names are plain
  text. vLLM's kimi_k3 tool and reasoning parsers and SGLang's kimi_k3 detector read the
  same channels.
- Calls: ``<|open|>call`` then whitespace and the attributes ``tool="NAME"`` and
  ``index="N"`` (the template writes the tool first; llama.cpp relies on that order and
  skips the rest up to ``<|sep|>``), the arguments, ``<|close|>call<|sep|>``. The index is
  not an id the API knows: ids are generated, as vLLM and SGLang do.
- Arguments: ``<|open|>argument key="K" type="T"<|sep|>VALUE<|close|>argument<|sep|>``.
  The template writes a ``string`` value raw (no escaping) and every other type as JSON;
  vLLM and SGLang read ``type="string"`` as the text and any other type as JSON (the raw
  text where it is not JSON, a guess); here the stated type decides, and a value that is
  not JSON makes the call invalid_arguments. An argument
  without a type attribute is typed by the tool schema (needs_tools; llama.cpp always
  types by the schema, vLLM and SGLang would read it as a string).
- Attribute values are escaped by the template (``&amp;``, ``&quot;``); tool and key
  names are read as written, without unescaping (names with those characters are not
  valid tool or parameter names for the OpenAI API).
- Reasoning: the think channel, closed by ``<|close|>think<|sep|>``; llama.cpp also ends
  it at ``<|open|>response<|sep|>``, which is followed. With thinking on (vLLM's default)
  the template opens it, so reasoning_in_prompt defaults to True; with thinking off the
  template opens the response channel instead: pass reasoning_in_prompt=False (the output
  then starts with content). A think opener written by the output is accepted in both
  modes. Reasoning ends at neither ``<|open|>tools<|sep|>`` nor a call (vLLM), so a call
  inside unfinished reasoning is reasoning text.
- Content: the response channel's text, byte for byte (vLLM keeps it exact); the
  response, message and end-of-message markers are dropped, also where the template
  already opened the response channel and only its closer appears.

Choices: a value ends at ``<|close|>argument<|sep|>`` only where the next argument or
``<|close|>call<|sep|>`` follows (vLLM documents the first closer as a known limitation);
the tools channel's closer may be missing at the end of the output; an optional
``<|open|>message role="assistant"<|sep|>`` at the start is skipped (llama.cpp). Element
names with spaces inside the markers (``<|open|> tools <|sep|>``, which vLLM tolerates
for detokenizers that add spaces) are not accepted: toolparse reads the text as generated.
"""

from __future__ import annotations

from typing import Literal

from ..grammar import (
    Grammar,
    Node,
    choice,
    cut,
    eof,
    lit,
    many,
    opt,
    ref,
    seq,
    stop,
    tag,
    until,
    ws,
)
from ._base import Format, call_block

SEP = "<|sep|>"
THINK_OPEN, THINK_CLOSE = "<|open|>think<|sep|>", "<|close|>think<|sep|>"
RESPONSE_OPEN, RESPONSE_CLOSE = "<|open|>response<|sep|>", "<|close|>response<|sep|>"
TOOLS_OPEN, TOOLS_CLOSE = "<|open|>tools<|sep|>", "<|close|>tools<|sep|>"
MESSAGE_OPEN = '<|open|>message role="assistant"<|sep|>'
MESSAGE_CLOSE, END_OF_MESSAGE = "<|close|>message<|sep|>", "<|end_of_msg|>"
CALL_OPEN, CALL_CLOSE = "<|open|>call", "<|close|>call<|sep|>"
ARG_OPEN, ARG_CLOSE = "<|open|>argument", "<|close|>argument<|sep|>"

_VALUE_END = stop(ARG_CLOSE, followed_by=(ARG_OPEN, CALL_CLOSE))


def _value(decode: Literal["raw", "string", "json"]) -> Node:
    """The attributes left up to <|sep|>, then the value."""
    return seq(
        until(SEP, need_stop=True),
        lit(SEP),
        tag("param_value", until(_VALUE_END, need_stop=True), decode=decode),
    )


MARKERS = (
    THINK_OPEN,
    THINK_CLOSE,
    RESPONSE_OPEN,
    RESPONSE_CLOSE,
    TOOLS_OPEN,
    TOOLS_CLOSE,
    MESSAGE_OPEN,
    MESSAGE_CLOSE,
    END_OF_MESSAGE,
    CALL_OPEN,
    CALL_CLOSE,
    ARG_OPEN,
    ARG_CLOSE,
)

FORMAT = Format(
    name="kimi_k3",
    description="Moonshot Kimi K3 XTML: a think channel (opened by the template), a response "
    'channel, and a tools channel of <|open|>call tool="NAME"<|sep|> elements whose '
    "arguments state their type",
    families=("Kimi K3",),
    model_ids=("moonshotai/Kimi-K3*",),
    reasoning="optional",
    reasoning_in_prompt=True,
    call_in_reasoning="text",
    needs_tools=True,
    markers=MARKERS,
    call_markers=(CALL_OPEN, CALL_CLOSE),
    grammar=Grammar(
        rules={
            "start": seq(
                ws(), opt(seq(lit(MESSAGE_OPEN), ws())), choice(ref("think"), ref("body"))
            ),
            "start_in_reasoning": seq(opt(seq(ws(), lit(THINK_OPEN))), ref("reasoning_rest")),
            "think": seq(lit(THINK_OPEN), cut(), ref("reasoning_rest")),
            # the reasoning ends at its closer, at the response channel or at the end of
            # the output, and nowhere else: said so, the grammar exports do not let a
            # call marker inside it begin the tools channel
            "reasoning_rest": seq(
                tag("reasoning", until(THINK_CLOSE, RESPONSE_OPEN)),
                choice(
                    seq(lit(THINK_CLOSE), ws(), ref("body")),
                    seq(lit(RESPONSE_OPEN), ref("body")),
                    eof(),
                ),
            ),
            "body": seq(many(choice(ref("tools"), ref("wrapper"), ref("content"))), eof()),
            # the response channel's markers and the message's end: not content
            "wrapper": choice(
                lit(RESPONSE_OPEN),
                seq(choice(lit(RESPONSE_CLOSE), lit(MESSAGE_CLOSE), lit(END_OF_MESSAGE)), ws()),
            ),
            "content": tag(
                "content",
                until(
                    RESPONSE_OPEN,
                    RESPONSE_CLOSE,
                    TOOLS_OPEN,
                    MESSAGE_CLOSE,
                    END_OF_MESSAGE,
                    min1=True,
                    commit=True,
                ),
            ),
            "tools": seq(
                lit(TOOLS_OPEN),
                cut(),
                ws(),
                many(ref("call")),
                opt(seq(lit(TOOLS_CLOSE), ws())),
            ),
            "call": call_block(
                CALL_OPEN,
                CALL_CLOSE,
                seq(
                    lit('tool="'),
                    tag("tool_name", until('"', SEP, need_stop=True)),
                    lit('"'),
                    until(SEP, need_stop=True),
                    lit(SEP),
                    ws(),
                    many(ref("argument")),
                ),
            ),
            "argument": seq(
                lit(ARG_OPEN),
                cut(),
                ws(),
                lit('key="'),
                tag("param_name", until('"', SEP, need_stop=True)),
                lit('"'),
                ws(),
                choice(
                    seq(lit('type="string"'), cut(), _value("string")),
                    seq(lit('type="'), cut(), _value("json")),
                    _value("raw"),
                ),
                lit(ARG_CLOSE),
                ws(),
            ),
        },
        entries={"start": "start", "start_in_reasoning": "start_in_reasoning"},
    ),
    examples=(
        'The user wants the weather.<|close|>think<|sep|><|open|>tools<|sep|><|open|>call tool="'
        'get_weather" index="1"<|sep|><|open|>argument key="city" type="string"<|sep|>Paris'
        "<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|><|close|>message<|sep|>"
        "<|end_of_msg|>",
    ),
)
