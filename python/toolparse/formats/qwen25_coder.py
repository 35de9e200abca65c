"""Qwen2.5-Coder: ``<tools>`` blocks holding one JSON call object or an array of them,
beside the Hermes ``<tool_call>`` blocks of its chat template.

What the model writes::

    Let me check.
    <tools>
    {"name": "get_weather", "arguments": {"city": "Paris"}}
    </tools>

or, for parallel calls, one array in one block (or one block per call)::

    <tools>[{"name": "get_weather", "arguments": {"city": "Paris"}},
    {"name": "get_weather", "arguments": {"city": "Rome"}}]</tools>

Facts relied on (vLLM's qwen25_coder / qwen2_5_coder parsers and their tests):

- Qwen2.5-Coder writes its calls between ``<tools>`` and ``</tools>`` (the word its
  system prompt wraps the tool list in) rather than the ``<tool_call>`` its chat template
  asks for.  A block holds one ``{"name", "arguments"}`` object or a JSON array of them
  (``"parameters"`` is taken for ``"arguments"``, keys in any order); several blocks in
  one output are all parsed.
- The chat template's own form, Hermes ``<tool_call>{...}</tool_call>`` (see hermes), is
  read too, so format_for_model can give this format for every Qwen2.5-Coder model.
- Text before, between and after blocks is content; whitespace right after a block is
  not.  There is no reasoning block.

Choices against vLLM:

- A call ends with its block's ``</tools>`` (or, in an array, once a comma or ``]`` and
  ``</tools>`` follow it); vLLM's full-output path also reads a block the end of the
  output cuts off (``<tools>(.*)`` without the closer), a guess: here such a call is
  incomplete, and an array cut short delivers the calls a comma already closed.
- A block that holds no call (``<tools></tools>``, text that is not JSON, a broken
  object) is an error, and its text is dropped up to ``</tools>``; vLLM hands the whole
  output back as content, markers included.  A stray ``</tools>`` is reported
  (unexpected) and dropped, never content.
- A name not among the tools is unknown_tool (vLLM delivers it); a key written twice is
  invalid_arguments (vLLM keeps the last); arguments written as a JSON string holding the
  object are decoded once, as in hermes (vLLM encodes the string again).
- vLLM strips the content before the first block; here it is delivered as written.
"""

from __future__ import annotations

from ..grammar import (
    Grammar,
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
from ._base import Format, call_array, call_block, skip_past
from ._guard import stray
from .hermes import TOOL_CLOSE, TOOL_OPEN

TOOLS_OPEN, TOOLS_CLOSE = "<tools>", "</tools>"
MARKERS = (TOOLS_OPEN, TOOLS_CLOSE, TOOL_OPEN, TOOL_CLOSE)

FORMAT = Format(
    name="qwen25_coder",
    aliases=("qwen2_5_coder", "qwen2.5-coder"),
    description="Qwen2.5-Coder: <tools> blocks of one JSON call or an array of calls, and "
    "Hermes <tool_call> blocks",
    families=("Qwen2.5-Coder",),
    model_ids=("Qwen/Qwen2.5-Coder-*",),
    markers=MARKERS,
    call_markers=None,
    grammar=Grammar(
        rules={
            "start": seq(ws(), ref("body")),
            "body": seq(
                many(choice(ref("block"), ref("call"), ref("stray"), ref("content"))), eof()
            ),
            "block": seq(
                lit(TOOLS_OPEN),
                cut(),
                recover(
                    seq(
                        ws(),
                        choice(
                            call_array(json_call(string_arguments=True), TOOLS_CLOSE),
                            tag(
                                "tool_call",
                                seq(json_call(string_arguments=True), ws(), lit(TOOLS_CLOSE)),
                            ),
                        ),
                    ),
                    skip_past(TOOLS_CLOSE),
                ),
                ws(),
            ),
            "call": call_block(TOOL_OPEN, TOOL_CLOSE, json_call(string_arguments=True)),
            "stray": stray(TOOLS_CLOSE, TOOL_CLOSE),
            "content": tag("content", until(*MARKERS, min1=True, commit=True)),
        },
        entries={"start": "start"},
    ),
    examples=(
        'Let me check.\n<tools>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tools>',
    ),
)
