"""NVIDIA Nemotron Nano v2: ``<TOOLCALL>[{"name": ..., "arguments": {...}}, ...]</TOOLCALL>``.

What the model writes (the chat template has already opened ``<think>\\n\\n``)::

    The user wants the weather in two cities; one call per city.
    </think>

    <TOOLCALL>[{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "get_weather",
    "arguments": {"city": "Rome"}}]</TOOLCALL>

Facts this grammar relies on:

- The chat template (NVIDIA-Nemotron-Nano-v2.jinja, as llama.cpp ships it) ends the
  generation prompt with ``<think>\\n\\n`` when reasoning is on (the default; ``/think`` in
  a system or user message) and with ``<think></think>`` when it is off (``/no_think``).
  So the output normally starts inside the reasoning block: reasoning_in_prompt defaults
  to True; pass reasoning_in_prompt=False with ``/no_think``.  A ``<think>`` the model
  writes itself is still accepted at the start of the output.
- Calls are one JSON array of ``{"name", "arguments"}`` objects between ``<TOOLCALL>``
  and ``</TOOLCALL>`` (the template's tool instructions, llama.cpp's NEMOTRON_V2 parser,
  vLLM's nemotron_json / nemotron_nano_v2 parsers, hence the aliases).  vLLM also
  accepts a bare object without the brackets; so does this grammar.  vLLM's
  nemotron_nano_v2 passes string-encoded arguments through as they are and delivers a
  name not among the tools; here they are invalid_arguments and unknown_tool.  Several
  blocks in one output are parsed.
- Reasoning ends only at ``</think>``: llama.cpp and vLLM treat a ``<TOOLCALL>`` inside
  unfinished reasoning as reasoning text (call_in_reasoning="text").
- Text before and after a block is content (llama.cpp keeps both; vLLM drops the text
  after).  Whitespace right after ``</think>`` and after ``</TOOLCALL>`` is not content.
- A call inside the array ends once what follows it is known: a comma (another call) or
  ``]`` and ``</TOOLCALL>``; a bad element reports an error and the rest of the block is
  skipped (the calls before it stand).  String-encoded arguments
  (``"arguments": "{...}"``) are invalid arguments, never a guessed call.
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
from ._base import Format, call_array, reasoning_rules, skip_past

TOOLCALL_OPEN, TOOLCALL_CLOSE = "<TOOLCALL>", "</TOOLCALL>"
THINK_OPEN, THINK_CLOSE = "<think>", "</think>"


FORMAT = Format(
    name="nemotron_v2",
    aliases=("nemotron_json", "nemotron_nano_v2"),
    description="NVIDIA Nemotron Nano v2: <think> reasoning (opened by the template), then "
    "<TOOLCALL>[...]</TOOLCALL> JSON arrays of calls",
    families=("Nemotron Nano v2",),
    model_ids=("nvidia/NVIDIA-Nemotron-Nano-*-v2*", "nvidia/Llama-3_3-Nemotron-Super-*"),
    reasoning="optional",
    reasoning_in_prompt=True,
    call_in_reasoning="text",
    markers=(TOOLCALL_OPEN, TOOLCALL_CLOSE, THINK_OPEN, THINK_CLOSE),
    call_markers=None,
    grammar=Grammar(
        rules={
            **reasoning_rules(THINK_OPEN, THINK_CLOSE),
            "body": seq(many(choice(ref("block"), ref("content"))), eof()),
            "block": seq(
                lit(TOOLCALL_OPEN),
                cut(),
                recover(
                    seq(
                        ws(),
                        choice(
                            call_array(json_call(), TOOLCALL_CLOSE),
                            # a bare object, without the array's brackets
                            tag("tool_call", seq(json_call(), ws(), lit(TOOLCALL_CLOSE))),
                        ),
                    ),
                    skip_past(TOOLCALL_CLOSE),
                ),
                ws(),
            ),
            "content": tag("content", until(TOOLCALL_OPEN, min1=True, commit=True)),
        },
        entries={"start": "start", "start_in_reasoning": "start_in_reasoning"},
    ),
    examples=(
        "The user wants the weather in Paris.\n</think>\n\n"
        '<TOOLCALL>[{"name": "get_weather", "arguments": {"city": "Paris"}}]</TOOLCALL>',
    ),
)
