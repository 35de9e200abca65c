"""Baidu ERNIE 4.5: ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` calls; the
thinking models reason first (the template opens the block) and may wrap the reply in
``<response>``.

What ERNIE-4.5-21B-A3B-Thinking writes (the output starts inside the reasoning)::

    I need to call two tools to handle these two issues separately.
    </think>

    <tool_call>
    {"name": "get_weather", "arguments": {"city": "Beijing"}}
    </tool_call>
    <tool_call>
    {"name": "get_weather", "arguments": {"city": "Guangzhou", "unit": "celsius"}}
    </tool_call>

and a reply without calls::

    The user greets me.
    </think>

    <response>
    Hello! How can I help you today?
    </response>

Facts relied on:

- Calls: vLLM's ernie45 tool parser reads each ``<tool_call>`` ... ``</tool_call>`` block as
  one JSON object (whitespace allowed around it), ``name`` and ``arguments``; several
  blocks are several calls; ``<tool_call>``, ``</tool_call>``, ``<response>``,
  ``</response>``, ``<think>`` and ``</think>`` are tokens of the ERNIE 4.5 tokenizer.  Its
  tests (with the ERNIE-4.5-21B-A3B-Thinking tokenizer) hold the layout above: a newline
  after ``<tool_call>``, before ``</tool_call>`` and after it.
- Reasoning: vLLM's ernie45 reasoning parser documents the output as
  ``abc\\n</think>\\n\\n<response>\\ndef\\n</response>\\n`` or ``abc\\n</think>\\ndef``, and its
  tests give an output without ``</think>`` as reasoning only: the template opens the
  block, so reasoning_in_prompt defaults to True (pass False for the non-thinking ERNIE 4.5
  models).  A ``<think>`` the model writes anyway is accepted.  Reasoning ends only at
  ``</think>`` (the tool parser sees the reasoning parser's content):
  call_in_reasoning="text".
- ``<response>`` and ``</response>`` are dropped and what they hold is content; vLLM strips
  the newlines after ``</think>``, ``<response>`` and ``</response>``; here whitespace after
  those three markers and one newline before ``</response>`` are layout.

Choices: text before and after calls is content (vLLM keeps the text before a call,
without its trailing newlines; this keeps the newline, as the other ``<tool_call>`` formats
do); whitespace after ``</tool_call>`` is not content.
"""

from __future__ import annotations

from ..grammar import Grammar, choice, eof, json_call, lit, many, opt, ref, seq, tag, until, ws
from ._base import Format, call_block, reasoning_rules

TOOL_OPEN, TOOL_CLOSE = "<tool_call>", "</tool_call>"
THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
RESPONSE_OPEN, RESPONSE_CLOSE = "<response>", "</response>"

FORMAT = Format(
    name="ernie45",
    description="Baidu ERNIE 4.5: <tool_call> JSON calls; thinking models reason first "
    "(opened by the template) and may wrap the reply in <response>",
    families=("ERNIE 4.5",),
    model_ids=("baidu/ERNIE-4.5-*-Thinking*",),
    reasoning="optional",
    reasoning_in_prompt=True,
    call_in_reasoning="text",
    markers=(TOOL_OPEN, TOOL_CLOSE, THINK_OPEN, THINK_CLOSE, RESPONSE_OPEN, RESPONSE_CLOSE),
    call_markers=(TOOL_OPEN, TOOL_CLOSE),
    grammar=Grammar(
        rules={
            **reasoning_rules(THINK_OPEN, THINK_CLOSE),
            "body": seq(
                many(
                    choice(ref("call"), ref("response_open"), ref("response_close"), ref("content"))
                ),
                eof(),
            ),
            "call": call_block(TOOL_OPEN, TOOL_CLOSE, json_call()),
            "response_open": seq(lit(RESPONSE_OPEN), ws()),
            "response_close": seq(opt(lit("\n")), lit(RESPONSE_CLOSE), ws()),
            "content": tag(
                "content",
                until(
                    TOOL_OPEN,
                    RESPONSE_OPEN,
                    "\n" + RESPONSE_CLOSE,
                    RESPONSE_CLOSE,
                    min1=True,
                    commit=True,
                ),
            ),
        },
        entries={"start": "start", "start_in_reasoning": "start_in_reasoning"},
    ),
    examples=(
        "The user wants the weather in Beijing.\n</think>\n\n<tool_call>\n"
        '{"name": "get_weather", "arguments": {"city": "Beijing"}}\n</tool_call>\n',
    ),
)
