"""Meituan LongCat-Flash: one JSON call in each ``<longcat_tool_call>`` block.

What LongCat-Flash-Chat writes (one block per call, blocks back to back)::

    Let me check both cities.
    <longcat_tool_call>
    {"name": "get_weather", "arguments": {"city": "Tokyo"}}
    </longcat_tool_call><longcat_tool_call>
    {"name": "get_weather", "arguments": {"city": "Osaka"}}
    </longcat_tool_call>

and the thinking models (LongCat-Flash-Thinking), whose chat template opens the block::

    The user wants the weather in Tokyo.</longcat_think>
    <longcat_tool_call>
    {"name": "get_weather", "arguments": {"city": "Tokyo"}}
    </longcat_tool_call>

Facts relied on:

- Calls: vLLM's longcat parser is its hermes parser with the two markers changed to
  ``<longcat_tool_call>`` and ``</longcat_tool_call>``: each block holds one JSON object,
  ``name`` and ``arguments``, whitespace allowed around it; text before and after blocks is
  content.  SGLang's longcat detector documents the layout above (a newline inside each tag
  pair, blocks back to back, the LongCat-Flash-Chat model card as its source).
- Reasoning: vLLM's longcat reasoning parser delimits it with ``<longcat_think>`` and
  ``</longcat_think>``; in thinking mode the chat template ends the generation prompt with
  ``<longcat_think>``, so the output starts inside the block (reasoning_in_prompt=True), and
  the parser also takes a block the model opens itself.  The default here follows
  LongCat-Flash-Chat, which does not reason: reasoning_in_prompt=False, with an optional
  ``<longcat_think>`` block at the start.  Reasoning ends only at ``</longcat_think>``
  (call_in_reasoning="text"), as vLLM's reasoning parser reads it.

Choices: a block must be closed to be a call (vLLM's hermes parser also takes an unclosed
last block when the output ends; here it is incomplete); whitespace after blocks and
after ``</longcat_think>`` is not content.
"""

from __future__ import annotations

from ..grammar import Grammar, choice, eof, json_call, many, ref, seq, tag, until
from ._base import Format, call_block, reasoning_rules

TOOL_OPEN, TOOL_CLOSE = "<longcat_tool_call>", "</longcat_tool_call>"
THINK_OPEN, THINK_CLOSE = "<longcat_think>", "</longcat_think>"

FORMAT = Format(
    name="longcat",
    description="Meituan LongCat-Flash: <longcat_tool_call> JSON calls; optional "
    "<longcat_think> reasoning (opened by the template in thinking mode)",
    families=("LongCat-Flash",),
    model_ids=("meituan-longcat/LongCat-Flash-*",),
    reasoning="optional",
    reasoning_in_prompt=False,
    call_in_reasoning="text",
    markers=(TOOL_OPEN, TOOL_CLOSE, THINK_OPEN, THINK_CLOSE),
    call_markers=(TOOL_OPEN, TOOL_CLOSE),
    grammar=Grammar(
        rules={
            **reasoning_rules(THINK_OPEN, THINK_CLOSE),
            "body": seq(many(choice(ref("call"), ref("content"))), eof()),
            "call": call_block(TOOL_OPEN, TOOL_CLOSE, json_call()),
            "content": tag("content", until(TOOL_OPEN, min1=True, commit=True)),
        },
        entries={"start": "start", "start_in_reasoning": "start_in_reasoning"},
    ),
    examples=(
        '<longcat_tool_call>\n{"name": "get_weather", "arguments": {"city": "Tokyo"}}\n'
        "</longcat_tool_call>",
    ),
)
