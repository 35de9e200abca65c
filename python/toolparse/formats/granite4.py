"""IBM Granite 4.0: Hermes-style ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``.

What the model writes (content, then one block per call, as its chat template renders
past calls)::

    I'll check both cities.
    <tool_call>
    {"name": "get_weather", "arguments": {"city": "Paris"}}
    </tool_call>
    <tool_call>
    {"name": "get_weather", "arguments": {"city": "Rome"}}
    </tool_call>

Facts this grammar relies on:

- Granite 4.0 dropped Granite 3's ``<|tool_call|>[...]`` array.  Its chat template tells
  the model to "return a json object with function name and arguments within
  <tool_call></tool_call> XML tags" and renders each past call as
  ``<tool_call>\\n{"name": ..., "arguments": ...}\\n</tool_call>``, separated by newlines
  and after any content; vLLM's granite4 parser reads exactly that, with text around the
  blocks as content.  A call ends at its ``</tool_call>``.
- Granite 4.0 instruct models do not reason: no reasoning block (reasoning="none"); a
  ``<think>`` would be content.  (The later Granite 4.2 thinking models write
  ``<think>`` and Qwen3-Coder-style XML calls, another format, so the model ids here
  are the 4.0 ones.)
- The template tells the model that ``"arguments"`` must never be stringified JSON, yet
  the model sometimes writes a JSON string holding the object (OpenAI's wire form, which
  it was trained on): the string is decoded once, as in hermes, since its meaning is not
  in doubt; a string that holds anything but one JSON object is invalid arguments.
  Whitespace between blocks is not content.
"""

from __future__ import annotations

from ..grammar import Grammar, ref, seq, ws
from ._base import Format
from .hermes import TOOL_CLOSE, TOOL_OPEN, json_call_body

FORMAT = Format(
    name="granite4",
    description="IBM Granite 4.0: <tool_call> JSON calls (Hermes style), no reasoning",
    families=("Granite 4.0",),
    model_ids=("ibm-granite/granite-4.0-*", "ibm-granite/granite-4.1-*"),
    reasoning="none",
    markers=(TOOL_OPEN, TOOL_CLOSE),
    call_markers=(TOOL_OPEN, TOOL_CLOSE),
    grammar=Grammar(
        rules={"start": seq(ws(), ref("body"))} | json_call_body(),
        entries={"start": "start"},
    ),
    examples=(
        'I\'ll check.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n'
        "</tool_call>",
    ),
)
