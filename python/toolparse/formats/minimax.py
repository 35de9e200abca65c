"""MiniMax-M1: a ``<tool_calls>`` block holding one JSON call object a line.

What the model writes::

    <think>
    Two cities, so two lookups at once.
    </think>

    I'll check both.
    <tool_calls>
    {"name": "get_weather", "arguments": {"city": "Oslo"}}
    {"name": "get_weather", "arguments": {"city": "Bergen"}}
    </tool_calls>

Facts relied on:

- The MiniMax-M1 chat template (vLLM examples/tool_chat_template_minimax_m1.jinja) asks
  for calls in ``<tool_calls></tool_calls>`` tags, ``{"name": <tool-name>, "arguments":
  <args-json-object>}`` one a line, and renders past calls that way, each object on its
  own line between ``<tool_calls>`` and a newline and ``</tool_calls>``; it writes the
  arguments through ``tojson``, so arguments given as the wire's JSON string come out as
  a JSON string holding the object.  The generation prompt is ``<beginning_of_sentence>ai
  name=MiniMax AI`` and a newline; the model opens its own ``<think>`` block, and ends its
  turn with ``<end_of_sentence>``.
- vLLM's minimax tool parser (SGLang has none for M1): text before the block is content;
  calls inside ``<think>`` ... ``</think>`` are ignored, wherever that block stands; a
  block without ``</tool_calls>`` still gives its calls; a line that is not valid JSON, or
  an object without a name or without arguments, is skipped and the other calls stand.
  Its minimax_m1 reasoning parser takes a ``<think>`` block only where the output starts
  with it.

Choices:

- Each call is read as JSON, so a call may span several lines (vLLM's tests record
  pretty-printed calls as not supported: the call is lost); whitespace between calls is
  layout.  A call ends when its object closes.  ``"parameters"`` is read as
  ``"arguments"``; arguments written as a JSON string are decoded once and must hold one
  object (as hermes); a call without ``"arguments"`` has ``{}`` (a tool without
  parameters; vLLM drops it); one without a name is invalid_arguments.
- A broken call, or text in the block that opens no object, reports its error and is
  skipped, from where it broke, to the next line that opens an object or to
  ``</tool_calls>``; the calls around it stand, as in vLLM (a call whose object never
  closes before the next line's ``{`` takes that line with it).  A block the output ends
  after a complete call loses nothing (vLLM also keeps it); one cut off inside a call is
  incomplete for that call.
- Reasoning: an optional ``<think>`` block at the start (reasoning_in_prompt for a
  template that opens it); a ``<think>`` block later in the output is reasoning too, so
  the calls drafted inside it are reasoning text, never calls (vLLM keeps such a block
  in content).  Text after the block is content (vLLM's content ends at the first block).
- No marker reaches content: a stray ``</tool_calls>`` or ``</think>`` is reported
  (unexpected) and dropped; ``<end_of_sentence>`` is dropped.
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
    recover,
    ref,
    seq,
    tag,
    until,
    ws,
)
from ._base import Format, reasoning_rules
from ._tool_calls import TOOL_CALLS_CLOSE, TOOL_CALLS_OPEN

THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
EOS = "<end_of_sentence>"

FORMAT = Format(
    name="minimax",
    aliases=("minimax_m1", "minimax-m1"),
    description="MiniMax-M1: <tool_calls> blocks of JSON call objects, one a line; optional "
    "<think> reasoning",
    families=("MiniMax-M1",),
    model_ids=("MiniMaxAI/MiniMax-M1-*",),
    reasoning="optional",
    markers=(TOOL_CALLS_OPEN, TOOL_CALLS_CLOSE, THINK_OPEN, THINK_CLOSE, EOS),
    call_markers=None,
    grammar=Grammar(
        rules={
            **reasoning_rules(THINK_OPEN, THINK_CLOSE),
            "body": seq(
                many(
                    choice(
                        ref("block"), ref("think"), ref("end_token"), ref("stray"), ref("content")
                    )
                ),
                eof(),
            ),
            "block": seq(lit(TOOL_CALLS_OPEN), cut(), ws(), ref("calls"), ws()),
            # calls up to the closer (or the end); after anything broken, the block goes
            # on at the next line that opens an object
            "calls": recover(
                seq(
                    many(
                        seq(
                            ahead(lit("{")),
                            tag("tool_call", json_call(string_arguments=True)),
                            ws(),
                        )
                    ),
                    choice(lit(TOOL_CALLS_CLOSE), eof()),
                ),
                ref("resync"),
            ),
            "resync": seq(
                until("\n{", TOOL_CALLS_CLOSE),
                choice(lit(TOOL_CALLS_CLOSE), eof(), seq(lit("\n"), ref("calls"))),
            ),
            "end_token": seq(lit(EOS), ws()),
            "stray": seq(
                choice(lit(TOOL_CALLS_CLOSE), lit(THINK_CLOSE)), cut(), recover(choice(), seq())
            ),
            "content": tag(
                "content",
                until(
                    TOOL_CALLS_OPEN,
                    TOOL_CALLS_CLOSE,
                    THINK_OPEN,
                    THINK_CLOSE,
                    EOS,
                    min1=True,
                    commit=True,
                ),
            ),
        },
        entries={"start": "start", "start_in_reasoning": "start_in_reasoning"},
    ),
    examples=(
        'Checking.\n<tool_calls>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n'
        "</tool_calls>",
    ),
)
