"""AI21 Jamba 1.5-1.7: ``<tool_calls>[{"name": ..., "arguments": {...}}, ...]</tool_calls>``.

What the model writes (the chat template's generation prompt is ``<|bom|><|assistant|>``;
the output often starts with a space, and the array may be pretty-printed)::

     Sure! Let me check.<tool_calls>[
        {"name": "get_weather", "arguments": {"city": "Dallas", "unit": "fahrenheit"}},
        {"name": "get_weather", "arguments": {"city": "Orlando", "unit": "fahrenheit"}}
    ]</tool_calls>

Facts relied on:

- vLLM's jamba tool parser: ``<tool_calls>`` and ``</tool_calls>`` are special tokens of
  the Jamba tokenizer (the parser refuses a tokenizer without them and turns
  skip_special_tokens off so they reach the text); between them is one JSON array of
  ``{"name", "arguments"}`` objects; the text before the block is content.  Its tests (with
  the ai21labs/Jamba-tiny-dev tokenizer) hold the outputs above: a leading space, content
  directly before ``<tool_calls>``, and an array written with newlines and a 4-space indent.
- SGLang and llama.cpp have no Jamba parser.

Same block as hunyuan_a13b, kept apart because the peers name them separately and the
rest differs: Jamba has no reasoning block and no ``<answer>`` wrapper.

Choices: whitespace at the start of the output and after ``</tool_calls>`` is not content
(vLLM's non-streaming parser also treats a lone leading space as no content); text after
a block is content (vLLM drops it); several blocks are all parsed.  A call in the array
ends once what follows it is certain (a comma, or ``]`` and ``</tool_calls>``).  Not
covered: AI21-Jamba-Reasoning-3B's reasoning output (no peer pairs a reasoning parser with
jamba).
"""

from __future__ import annotations

from ..grammar import Grammar, choice, eof, many, ref, seq, tag, until, ws
from ._base import Format
from ._tool_calls import TOOL_CALLS_CLOSE, TOOL_CALLS_OPEN, tool_calls_block

FORMAT = Format(
    name="jamba",
    description="AI21 Jamba: <tool_calls> JSON array of calls </tool_calls>",
    families=("Jamba 1.5", "Jamba 1.6", "Jamba 1.7"),
    model_ids=("ai21labs/AI21-Jamba-*", "ai21labs/Jamba-*"),
    reasoning="none",
    markers=(TOOL_CALLS_OPEN, TOOL_CALLS_CLOSE),
    call_markers=None,
    grammar=Grammar(
        rules={
            "start": seq(ws(), ref("body")),
            "body": seq(many(choice(ref("tools"), ref("content"))), eof()),
            "tools": tool_calls_block(),
            "content": tag("content", until(TOOL_CALLS_OPEN, min1=True, commit=True)),
        },
        entries={"start": "start"},
    ),
    examples=(
        ' <tool_calls>[\n    {"name": "get_weather", "arguments": {"city": "Dallas"}}\n]'
        "</tool_calls>",
    ),
)
