"""Swiss AI Apertus: ``<|tools_prefix|>[{"NAME": {args}}, ...]<|tools_suffix|>``.

What the model writes (reasoning when deliberation is enabled, then the calls; each call
is a one-key object whose key is the tool name; shown on three lines, written as one)::

    <|inner_prefix|>Two cities, so two weather lookups.<|inner_suffix|>
    <|tools_prefix|>[{"get_weather": {"city": "Paris"}}, {"get_weather": {"city": "Rome"}}]
    <|tools_suffix|>

Facts this grammar relies on:

- The Apertus chat format (swiss-ai/apertus_format) wraps reasoning in
  ``<|inner_prefix|>`` and ``<|inner_suffix|>`` and tool calls in ``<|tools_prefix|>`` and
  ``<|tools_suffix|>``; the calls are a JSON array of ``{"tool_name": {arguments}}``
  objects.  llama.cpp's APERTUS parser ("short form" calls), vLLM's apertus parser and
  SGLang's apertus2509 detector read the same shape; the name is the object's only key
  (a JSON string, decoded), its value the arguments object.
- vLLM notes the tokenizer maps ``<think>``/``</think>`` to the inner pair on encoding
  only: generated reasoning is always delimited by ``<|inner_prefix|>`` /
  ``<|inner_suffix|>``.  The model opens the block itself (vLLM's parser expects the
  opening token); llama.cpp also handles a template that ends with ``<|inner_prefix|>``,
  hence the "start_in_reasoning" entry.  Reasoning ends only at ``<|inner_suffix|>``
  (call_in_reasoning="text").
- The block needs its ``<|tools_suffix|>`` (llama.cpp and SGLang require it; vLLM also
  takes a block cut off before it).  Text before and after a block is content (vLLM keeps
  both); whitespace after the closing markers is not.
- A call inside the array ends once what follows it is known: a comma (another call) or
  ``]`` and ``<|tools_suffix|>``.  An element that is not a one-key object holding an
  object (``{}``, two keys, a string as arguments) is invalid arguments, and the rest of
  the block is skipped (calls before it stand).
"""

from __future__ import annotations

from ..grammar import (
    Grammar,
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
from ._base import Format, call_array, reasoning_rules, skip_past

THINK_OPEN, THINK_CLOSE = "<|inner_prefix|>", "<|inner_suffix|>"
TOOLS_OPEN, TOOLS_CLOSE = "<|tools_prefix|>", "<|tools_suffix|>"


# {"NAME": {arguments}}: the key is the tool name; cut once it is known, so the
# arguments stream as they arrive
_short_call = seq(
    lit("{"),
    ws(),
    tag("tool_name", json("strict", "string"), decode="json_string"),
    ws(),
    lit(":"),
    cut(),
    ws(),
    tag("tool_args", json("strict", "object")),
    ws(),
    lit("}"),
)

FORMAT = Format(
    name="apertus",
    aliases=("apertus2509",),
    description="Swiss AI Apertus: <|inner_prefix|> reasoning, <|tools_prefix|> JSON array of "
    '{"name": {arguments}} calls',
    families=("Apertus",),
    model_ids=("swiss-ai/Apertus-*",),
    reasoning="optional",
    call_in_reasoning="text",
    markers=(THINK_OPEN, THINK_CLOSE, TOOLS_OPEN, TOOLS_CLOSE),
    call_markers=None,
    grammar=Grammar(
        rules={
            **reasoning_rules(THINK_OPEN, THINK_CLOSE),
            "body": seq(many(choice(ref("tools"), ref("content"))), eof()),
            "tools": seq(
                lit(TOOLS_OPEN),
                cut(),
                recover(seq(ws(), call_array(_short_call, TOOLS_CLOSE)), skip_past(TOOLS_CLOSE)),
                ws(),
            ),
            "content": tag("content", until(TOOLS_OPEN, min1=True, commit=True)),
        },
        entries={"start": "start", "start_in_reasoning": "start_in_reasoning"},
    ),
    examples=(
        "<|inner_prefix|>A weather lookup.<|inner_suffix|>"
        '<|tools_prefix|>[{"get_weather": {"city": "Paris"}}]<|tools_suffix|>',
    ),
)
