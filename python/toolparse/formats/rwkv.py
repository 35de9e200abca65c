"""RWKV (RWKV-7 "G" models): a ``**Tool Call:**`` line, then the call as one JSON object
in a ```` ```json ```` fence.

What the model writes::

    Checking.
    **Tool Call:**
    ```json
    {
      "name": "get_weather",
      "arguments": {"city": "Paris"}
    }
    ```

Facts relied on (vLLM's rwkv tool and reasoning parsers and their tests):

- A call is ``**Tool Call:**``, optional whitespace, a ```` ```json ```` fence holding one
  ``{"name", "arguments"}`` object (pretty-printed or not, keys in any order, other keys
  such as ``"id"`` or ``"type"`` skipped), and the closing ```` ``` ````.  Several such
  blocks, one after another, are parallel calls.
- ``"arguments"`` may be written as a JSON string that holds the object; it is decoded
  once, as vLLM does.
- Text before, between and after the blocks is content; whitespace right after a block
  is not.
- Reasoning is ``<think>`` ... ``</think>`` (vLLM's rwkv reasoning parser).  Thinking is
  off unless the template's ``enable_thinking`` turns it on, and then the prompt has opened
  the block: reasoning_in_prompt defaults to False; pass True with thinking on.  A call
  marker inside unfinished reasoning is reasoning text.

Choices against vLLM:

- Only the marked form is a call.  vLLM also reads, when tools are given, a
  ```` ```json ```` fence without the marker, a bare ``{"name": ...}`` object or a
  ``{"tool_calls": [...]}`` envelope anywhere in the text, an OpenAI-style
  ``{"function": {...}}`` object, and an older ``<tool_call>`` line holding a Python dict:
  guesses, since a JSON sample in an answer looks the same.  They are content here.
- vLLM rewrites some arguments by tool name (``filePath`` becomes ``path``, a ``read``
  call keeps only ``path``, ``offset`` and ``limit``, an ``edit`` call's text pairs are
  regrouped under ``edits``): wrong, the arguments are delivered as written.
- A marked block that holds no call (broken JSON, no fence) is an error and dropped up to
  its closing fence (or the next ``**Tool Call:**``); vLLM then hands the whole output
  back as content, markers included.
  A name not among the tools is unknown_tool (vLLM leaves the text as content); a key
  written twice is invalid_arguments.
- An earlier vLLM RWKV parser read ``<tool_call><invoke name="..."><parameter
  name="...">`` XML; the current one and the chat template use the form above, so the
  XML form is not read.
- A ``<think>`` or ``</think>`` after the reasoning is reported (unexpected) and dropped;
  vLLM's tool parser leaves a ``</think>`` in content when reasoning parsing is off.
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
    opt,
    recover,
    ref,
    seq,
    tag,
    until,
    ws,
)
from ._base import Format, reasoning_rules
from ._guard import stray

CALL_MARKER = "**Tool Call:**"
FENCE_OPEN, FENCE_CLOSE = "```json", "```"
THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
MARKERS = (CALL_MARKER, THINK_OPEN, THINK_CLOSE)

FORMAT = Format(
    name="rwkv",
    description="RWKV-7: optional <think> reasoning, then **Tool Call:** lines each followed "
    "by a ```json fence holding one JSON call",
    families=("RWKV-7",),
    model_ids=("BlinkDL/rwkv7-g*", "fla-hub/rwkv7-*"),
    reasoning="optional",
    call_in_reasoning="text",
    markers=MARKERS,
    call_markers=None,
    grammar=Grammar(
        rules={
            **reasoning_rules(THINK_OPEN, THINK_CLOSE),
            "body": seq(many(choice(ref("call"), ref("stray"), ref("content"))), eof()),
            "call": seq(
                lit(CALL_MARKER),
                cut(),
                recover(
                    seq(
                        ws(),
                        lit(FENCE_OPEN),
                        ws(),
                        tag(
                            "tool_call",
                            seq(json_call(string_arguments=True), ws(), lit(FENCE_CLOSE)),
                        ),
                    ),
                    # up to the block's closing fence, or to the next marker
                    seq(until(CALL_MARKER, FENCE_CLOSE), opt(lit(FENCE_CLOSE))),
                ),
                ws(),
            ),
            "stray": stray(THINK_OPEN, THINK_CLOSE),
            "content": tag("content", until(*MARKERS, min1=True, commit=True)),
        },
        entries={"start": "start", "start_in_reasoning": "start_in_reasoning"},
    ),
    examples=(
        'Checking.\n**Tool Call:**\n```json\n{"name": "get_weather", "arguments": '
        '{"city": "Paris"}}\n```',
    ),
)
