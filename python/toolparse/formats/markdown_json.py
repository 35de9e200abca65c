"""Prompted calls in fenced JSON: a ```` ```json ```` block holding ``{"name", "arguments"}``.

A raw-text convention, not a model's native format: an application that serves a model
without a tool-call format of its own asks it to answer a tool call with a markdown JSON
block, and reads the calls out of the text.  An output in this shape::

    Let me check the forecast for you.

    ```json
    {"name": "get_weather_forecast", "arguments": {"city": "Lisbon", "days": 3}}
    ```

Facts relied on:

- Models put JSON they are asked for in a ```` ```json ```` fence by habit: llama.cpp's
  Ministral 3 parser expects ``response_format`` output in one, Command-R+ writes its
  calls as a fenced JSON list after ``Action:``, and DeepSeek V3 and R1 fence each
  call's arguments in ```` ```json ```` inside their native call tokens.
- vLLM's xLAM parser, for prompted JSON calls, looks for them in a fence with or without
  the ``json`` language tag (a JSON list of ``{"name", "arguments"}`` objects there),
  anywhere in the output, treats the text outside the fence as content, and looks after
  ``</think>`` first, since reasoning models open their output with a ``<think>`` block.

Choices:

- A call is a ```` ```json ```` opener, one JSON object with a string ``"name"`` and an
  object ``"arguments"`` (or ``"parameters"``), in either order and nothing else, then
  the closing ```` ``` ````.  The closing fence is part of the call: a call ends only
  once it has arrived.  Whitespace around the object is layout.
- A block that is not such an object stays content exactly as written: other JSON, an
  object without a name, without arguments (``{"name": "my-app"}`` is as likely a
  package manifest as a call, so a tool without parameters is called with
  ``"arguments": {}``) or with other keys, arguments that are not an object (a JSON
  string of arguments, say), a list of calls, invalid JSON.  Nothing of a block is
  emitted until its object has closed, since until then it may still turn out to be
  content; from there it is a call, so the arguments arrive at once.
- A truncated block is content while its object is unfinished (it might not have been a
  call); once the whole call object has arrived, the block is a call, and an output that
  ends before the closing fence (or has other text before it) reports the call as
  ``incomplete`` (or ``invalid_arguments``).
- A fence with no language, or another language (``JSON`` in capitals too), or of four
  backticks or more, is content even if it holds a call object: a plain fence is how a
  model quotes text, and an action needs the marker the prompt asked for (xLAM also
  takes a plain fence; this format does not).  Every ```` ```json ```` opener is tried
  wherever it is, also one quoted inside another fenced block: the fences of other
  blocks are not tracked.
- Text around the blocks is content; the whitespace right after a call is not.  A
  ```` ```json ```` block inside the reasoning is reasoning text.  With
  reasoning_in_prompt the output starts inside the reasoning.
"""

from __future__ import annotations

from ..grammar import (
    Grammar,
    Node,
    choice,
    cut,
    eof,
    json,
    lit,
    many,
    recover,
    ref,
    seq,
    tag,
    until,
    ws,
)
from ._base import Format, closing, reasoning_rules, skip_past

FENCE_OPEN, FENCE_CLOSE = "```json", "```"
LONG_FENCE = "````"
THINK_OPEN, THINK_CLOSE = "<think>", "</think>"


def _member(*keys: str) -> Node:
    """A key (one of `keys`) and its colon."""
    return seq(choice(*(lit(f'"{k}"') for k in keys)), ws(), lit(":"), ws())


def grammar(repair: bool) -> Grammar:
    """The format's grammar; repair: lenient arguments, and a call the end of the output
    cuts off is closed there (the name must have come whole)."""
    return Grammar(
        rules={
            **reasoning_rules(THINK_OPEN, THINK_CLOSE),
            "body": seq(many(choice(ref("call"), ref("content"))), eof()),
            # No cut before the object has closed: until then the content alternative
            # may still take the block.
            "call": seq(
                lit(FENCE_OPEN),
                tag(
                    "tool_call",
                    seq(
                        ws(),
                        ref("call_object"),
                        cut(),
                        recover(seq(ws(), closing(FENCE_CLOSE, repair)), skip_past(FENCE_CLOSE)),
                    ),
                ),
                ws(),
            ),
            # Written out rather than json_call(): both keys are required, and an object
            # with any other key is not a call.
            "call_object": seq(
                lit("{"),
                ws(),
                choice(
                    seq(ref("name"), ws(), lit(","), ws(), ref("arguments")),
                    seq(ref("arguments"), ws(), lit(","), ws(), ref("name")),
                ),
                ws(),
                closing("}", repair),
            ),
            "name": seq(
                _member("name"), tag("tool_name", json(kind="string"), decode="json_string")
            ),
            "arguments": seq(
                _member("arguments", "parameters"),
                tag(
                    "tool_args",
                    json("lenient" if repair else "strict", "object", close_at_end=repair),
                ),
            ),
            # A ```json opener that did not start a call is content like the rest, and so
            # is a longer fence: ````json opens a block that quotes, not a call.
            "content": tag(
                "content",
                choice(
                    until(FENCE_OPEN, LONG_FENCE, min1=True, commit=True),
                    lit(FENCE_OPEN),
                    lit(LONG_FENCE),
                ),
            ),
        },
        entries={"start": "start", "start_in_reasoning": "start_in_reasoning"},
    )


FORMAT = Format(
    name="markdown_json",
    aliases=("markdown-json",),
    description="Prompted calls for models without a native tool-call format: "
    '```json fenced {"name": ..., "arguments": {...}} blocks amid prose; other fenced '
    "blocks stay content; optional <think> block",
    families=("any model without a native tool-call format",),
    fallback=True,
    reasoning="optional",
    call_in_reasoning="text",
    markers=(FENCE_OPEN, FENCE_CLOSE, THINK_OPEN, THINK_CLOSE),
    call_markers=(FENCE_OPEN, FENCE_CLOSE),
    grammar=grammar(repair=False),
    repair_grammar=grammar(repair=True),
    examples=(
        'Let me check.\n```json\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n```',
    ),
)
