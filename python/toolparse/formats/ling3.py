"""Ling 3 / Ring 3 (Bailing V3): GLM-style ``<tool_call>`` calls after template-opened reasoning.

The generation prompt ends with ``<role>ASSISTANT</role>`` and ``<think>``, so the output
starts inside the reasoning block; a call may come before the block is closed, and the turn
ends with ``<|role_end|>``::

    The user wants a forecast. I will call the tool.
    </think>
    Let me look that up.
    <tool_call>get_weather_forecast
    <arg_key>city</arg_key>
    <arg_value>Hangzhou</arg_value>
    <arg_key>days</arg_key>
    <arg_value>3</arg_value>
    </tool_call><|role_end|>

Facts relied on:

- llama.cpp's dedicated parser (common/parsers/ling3.cpp, PR #28682, which fixes issue #27462:
  calls swallowed by unclosed reasoning): the generation prompt pre-opens ``<think>``;
  reasoning ends at ``</think>`` or at ``<tool_call>``; an opening ``<think>`` written anyway
  is accepted; content may come between the reasoning and the first call and after the last
  one; a trailing ``<|role_end|>`` is consumed (the model sometimes spells it out as text,
  so it is also a stop string there); calls are separated by optional whitespace; the name
  may be followed by a newline, directly by ``<arg_key>``, or by ``</tool_call>``; string
  parameters are raw text, other types JSON.
- vLLM's ling3 parser (the GLM-4.7 engine with thinking on by default) and SGLang's
  Ling3Detector (the GLM-4.5 detector accepting a newline, ``<arg_key>`` or
  ``</tool_call>`` after the name) agree on the call form; see glm45 for the argument rules.

Choices: with reasoning_in_prompt=False (thinking off: the template pre-closes the block)
the output is content and calls, and a ``<think>`` block at its start is still reasoning.
``<|role_end|>`` is consumed wherever it comes outside a call (it also ends unfinished
reasoning); text after it is parsed as usual. Whitespace around calls and after
``</think>`` is consumed, not content. vLLM turns a response that is only unclosed
reasoning (no ``</think>``, no call) into content after the fact; a stream cannot take back
what it has delivered, so here that text stays reasoning.
"""

from __future__ import annotations

from ..grammar import Grammar, choice, eof, lit, many, ref, seq, tag, until, ws
from ._base import Format, reasoning_rules
from .glm45 import MARKERS, THINK_CLOSE, THINK_OPEN, TOOL_CLOSE, TOOL_OPEN, glm_call_rules

ROLE_END = "<|role_end|>"

FORMAT = Format(
    name="ling3",
    description="Ling 3 and Ring 3: reasoning opened by the template, GLM-style <tool_call> "
    "calls with <arg_key>/<arg_value> pairs, <|role_end|> consumed",
    families=("Ling 3", "Ring 3"),
    model_ids=("inclusionAI/Ling-3*", "inclusionAI/Ring-3*"),
    reasoning="optional",
    reasoning_in_prompt=True,
    call_in_reasoning="ends_reasoning",
    needs_tools=True,
    markers=(*MARKERS, ROLE_END),
    call_markers=(TOOL_OPEN, TOOL_CLOSE),
    grammar=Grammar(
        rules={
            **reasoning_rules(THINK_OPEN, THINK_CLOSE, TOOL_OPEN, ROLE_END),
            "body": seq(many(choice(ref("call"), ref("role_end"), ref("content"))), eof()),
            "role_end": seq(lit(ROLE_END), ws()),
            "content": tag("content", until(TOOL_OPEN, ROLE_END, min1=True, commit=True)),
        }
        | glm_call_rules(),
        entries={"start": "start", "start_in_reasoning": "start_in_reasoning"},
    ),
    examples=(
        "The user wants the weather.\n</think>\n<tool_call>get_weather\n"
        "<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call><|role_end|>",
    ),
)
