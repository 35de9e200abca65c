"""Prompted XML calls: ``<tool_call><name>NAME</name><args>{json}</args></tool_call>``.

A raw-text convention, not a model's native format: an application that serves a model
without a tool-call format of its own describes this shape in the system prompt and reads
the calls out of the text.  An output in this shape::

    I'll look that up.
    <tool_call>
    <name>search_web</name>
    <args>{"query": "ESA Hera mission launch date", "recency_days": 30}</args>
    </tool_call>

Facts relied on:

- The shape is the one llama.cpp's PEG parser tests take as their worked example of a
  model format: an optional ``<think>`` block, content, then ``<tool_call>``, ``<name>``
  with the raw tool name up to ``</name>``, ``<args>`` with a JSON object, ``</args>``,
  ``</tool_call>``; the arguments stream while the object arrives.  The example is
  documented one tag per line and tested with no whitespace between the tags.
- Agent loops that prompt models for this shape read it with whitespace allowed between
  the tags (``<tool_call>\\s*<name>...</name>\\s*<args>...</args>\\s*</tool_call>``).
- Reasoning models prompted for a raw-text call convention still open their output with
  their ``<think>`` block (vLLM's xLAM parser, for prompted JSON calls, looks for the
  calls after ``</think>`` for that reason).

Choices: whitespace between the tags, inside ``<name>`` around the name and inside
``<args>`` around the object is layout; a name is the text up to whitespace or ``<`` (a
name with a space in it is a broken call); ``<args>`` may be left out for a tool without
parameters (arguments ``{}``); a ``<tool_call>`` with another body (a Hermes-style JSON
object, say) is a broken call, not a guess at one.  The arguments are strict JSON, so
code, quotes and backticks in them are JSON string data, and a marker inside a string is
data too; a value that is not valid JSON (unescaped quotes, raw code) is
``invalid_arguments``, and parsing resumes after that call's ``</tool_call>``.  Text
before, between and after calls is content; the whitespace right after a call is not.  A
``<tool_call>`` inside the reasoning is reasoning text (a draft of the call), not a
call.  With reasoning_in_prompt the output starts inside the reasoning (a template that
pre-opens ``<think>``).
"""

from __future__ import annotations

from ..grammar import (
    Grammar,
    ahead,
    choice,
    cut,
    eof,
    json,
    lit,
    many,
    opt,
    ref,
    seq,
    tag,
    until,
    ws,
)
from ._base import Format, call_block, closing, reasoning_rules

TOOL_OPEN, TOOL_CLOSE = "<tool_call>", "</tool_call>"
NAME_OPEN, NAME_CLOSE = "<name>", "</name>"
ARGS_OPEN, ARGS_CLOSE = "<args>", "</args>"
THINK_OPEN, THINK_CLOSE = "<think>", "</think>"


def grammar(repair: bool) -> Grammar:
    """The format's grammar; repair: lenient arguments, and a call the end of the output
    cuts off is closed there (never one cut off inside its name)."""
    return Grammar(
        rules={
            **reasoning_rules(THINK_OPEN, THINK_CLOSE),
            "body": seq(many(choice(ref("call"), ref("content"))), eof()),
            "call": call_block(
                TOOL_OPEN, TOOL_CLOSE, seq(ref("name"), ws(), opt(ref("args"))), repair=repair
            ),
            "name": seq(
                lit(NAME_OPEN),
                ws(),
                # The name closes only where </name> follows, so a name with a space in
                # it is one broken call, not a call to the name's first word.
                tag(
                    "tool_name",
                    seq(
                        until("<", " ", "\t", "\r", "\n", need_stop=True),
                        ahead(seq(ws(), lit(NAME_CLOSE))),
                    ),
                ),
                ws(),
                lit(NAME_CLOSE),
            ),
            # The cut after <args> lets the arguments stream as they arrive.
            "args": seq(
                lit(ARGS_OPEN),
                cut(),
                ws(),
                tag(
                    "tool_args",
                    json("lenient" if repair else "strict", "object", close_at_end=repair),
                ),
                ws(),
                closing(ARGS_CLOSE, repair),
            ),
            "content": tag("content", until(TOOL_OPEN, min1=True, commit=True)),
        },
        entries={"start": "start", "start_in_reasoning": "start_in_reasoning"},
    )


FORMAT = Format(
    name="generic_xml",
    aliases=("generic-xml",),
    description="Prompted XML calls for models without a native tool-call format: "
    "<tool_call><name>NAME</name><args>{json}</args></tool_call> amid prose; "
    "optional <think> block",
    families=("any model without a native tool-call format",),
    fallback=True,
    reasoning="optional",
    call_in_reasoning="text",
    markers=(
        TOOL_OPEN,
        TOOL_CLOSE,
        NAME_OPEN,
        NAME_CLOSE,
        ARGS_OPEN,
        ARGS_CLOSE,
        THINK_OPEN,
        THINK_CLOSE,
    ),
    call_markers=(TOOL_OPEN, TOOL_CLOSE),
    grammar=grammar(repair=False),
    repair_grammar=grammar(repair=True),
    examples=(
        "Let me check.\n<tool_call>\n<name>get_weather</name>\n"
        '<args>{"city": "Paris"}</args>\n</tool_call>',
    ),
)
