"""IBM Granite 3.x: ``<|tool_call|>[{"name": ..., "arguments": {...}}, ...]``.

What the model writes when it calls tools (no closing marker: the array's ``]`` ends
the calls)::

    <|tool_call|>[{"name": "get_weather", "arguments": {"city": "Paris"}},
    {"name": "get_weather", "arguments": {"city": "Rome"}}]

and in thinking mode (Granite 3.3, ``thinking=True``)::

    <think>The user asks for a two-line poem about tea.</think>
    <response>Steam curls from the cup,
    the afternoon slows to sips.</response>

Facts this grammar relies on:

- The Granite 3.x templates tell the model to "respond only with <|tool_call|> followed
  by a JSON list of tools used", and render past calls as ``<|tool_call|>[{"name": ...,
  "arguments": ...}, ...]`` after any content.  llama.cpp's GRANITE parser and vLLM's
  granite parser read that array; vLLM notes that Granite 3.1 may write the plain text
  ``<tool_call>`` instead of the ``<|tool_call|>`` token, so both open a call here (the
  text form only where ``[`` follows; otherwise it stays content).
- Reasoning: Granite 3.3's thinking prompt asks for ``<think></think>`` then
  ``<response></response>`` (llama.cpp parses both wrappers and holds back their
  partial tokens).  The ``<response>`` wrappers are dropped and what they hold is
  content; whitespace after ``</think>`` and ``</response>`` is not content.  Granite 3.2
  wrote plain-text section headers instead, "Here is my thought process:" and "Here is my
  response:" (or "Here's"; vLLM's granite reasoning parser): they open and close the
  reasoning only at the very start of the output, and are not listed as markers since
  elsewhere they are ordinary text.
- Reasoning ends only at its closing marker (llama.cpp reads it up to ``</think>``):
  call_in_reasoning="text".  The template does not open the block; a
  "start_in_reasoning" entry serves templates that do (llama.cpp's forced-open mode).
- A call inside the array ends once what follows it is known: a comma (another call) or
  the ``]`` that closes the array.  An array that breaks reports an error, and the rest of
  the output up to the next call marker is skipped (calls before the break stand).  Text
  before a call is content (llama.cpp; vLLM's older parser only read arrays at the very
  start).
"""

from __future__ import annotations

from ..grammar import (
    Grammar,
    ahead,
    choice,
    cut,
    eof,
    json_call,
    lit,
    many,
    opt,
    recover,
    ref,
    seq,
    tag,
    until,
    ws,
)
from ._base import Format, call_array, reopened, think_block

TOOL_TOKEN, TOOL_TEXT = "<|tool_call|>", "<tool_call>"
THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
RESPONSE_OPEN, RESPONSE_CLOSE = "<response>", "</response>"
# Granite 3.2's plain-text section headers (only at the start of the output)
THOUGHTS_HEADERS = ("Here is my thought process:", "Here's my thought process:")
RESPONSE_HEADERS = ("Here is my response:", "Here's my response:")

_think, _reasoning_rest = think_block(THINK_OPEN, THINK_CLOSE)

FORMAT = Format(
    name="granite",
    description="IBM Granite 3.x: <|tool_call|> then a JSON array of calls; optional <think> "
    "reasoning and <response> wrapper",
    families=("Granite 3.0", "Granite 3.1", "Granite 3.2", "Granite 3.3"),
    model_ids=("ibm-granite/granite-3*",),
    reasoning="optional",
    call_in_reasoning="text",
    markers=(TOOL_TOKEN, TOOL_TEXT, THINK_OPEN, THINK_CLOSE, RESPONSE_OPEN, RESPONSE_CLOSE),
    text_markers=(TOOL_TEXT,),  # plain text where no array follows (the "stray" rule)
    call_markers=None,
    grammar=Grammar(
        rules={
            "start": seq(ws(), opt(choice(ref("think"), ref("thoughts"))), ref("body")),
            "start_in_reasoning": seq(reopened(THINK_OPEN), ref("body")),
            "think": _think,
            "reasoning_rest": _reasoning_rest,
            "thoughts": seq(
                choice(*(lit(h) for h in THOUGHTS_HEADERS)),
                cut(),
                tag("reasoning", until(*RESPONSE_HEADERS)),
                opt(seq(choice(*(lit(h) for h in RESPONSE_HEADERS)), ws())),
            ),
            "body": seq(
                many(choice(ref("call"), ref("wrapper"), ref("content"), ref("stray"))), eof()
            ),
            "call": seq(
                choice(lit(TOOL_TOKEN), seq(lit(TOOL_TEXT), ws(), ahead(lit("[")))),
                cut(),
                recover(seq(ws(), call_array(json_call(), None)), until(TOOL_TOKEN, TOOL_TEXT)),
                ws(),
            ),
            "wrapper": choice(lit(RESPONSE_OPEN), seq(lit(RESPONSE_CLOSE), ws())),
            "content": tag(
                "content",
                until(TOOL_TOKEN, TOOL_TEXT, RESPONSE_OPEN, RESPONSE_CLOSE, min1=True, commit=True),
            ),
            # the text <tool_call> where no array follows is ordinary text
            "stray": tag("content", lit(TOOL_TEXT)),
        },
        entries={"start": "start", "start_in_reasoning": "start_in_reasoning"},
    ),
    examples=('<|tool_call|>[{"name": "get_weather", "arguments": {"city": "Paris"}}]',),
)
