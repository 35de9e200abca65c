"""Moonshot Kimi K2: ``<|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>...``.

What the model writes (Kimi-K2-Thinking: reasoning, then content, then a section of
calls; shown here one piece per line, while the model writes the special tokens back to
back with no whitespace)::

    <think>Two cities; I'll fetch both at once.</think>Let me check.
    <|tool_calls_section_begin|>
    <|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>
    {"city": "Paris"}<|tool_call_end|>
    <|tool_call_begin|>functions.get_weather:1<|tool_call_argument_begin|>
    {"city": "Rome"}<|tool_call_end|>
    <|tool_calls_section_end|>

Facts this grammar relies on:

- Calls: the Kimi-K2 chat templates render each past call as ``<|tool_call_begin|>``,
  its id, ``<|tool_call_argument_begin|>``, the JSON arguments, ``<|tool_call_end|>``,
  inside ``<|tool_calls_section_begin|>`` ... ``<|tool_calls_section_end|>``.  The id is
  ``functions.NAME:IDX`` (IDX counts the calls of the conversation) and is the call's id:
  a tool_id tag encloses the tool_name tag, the name being the text between
  ``functions.`` and ``:`` (llama.cpp captures the same pair; SGLang and vLLM also take an
  id without the ``functions.`` prefix, as here).  Whitespace around the id and the
  arguments is skipped, as vLLM's and SGLang's parsers do.
- The section markers are optional: llama.cpp's PEG parser makes them optional and the
  peers document outputs that open ``<|tool_call_begin|>`` directly; vLLM also accepts
  the singular ``<|tool_call_section_begin|>`` / ``<|tool_call_section_end|>``.  A section
  marker is never content; a call ends only at its own ``<|tool_call_end|>``.
- Reasoning (Kimi-K2-Thinking): the template ends the prompt with
  ``<|im_assistant|>assistant<|im_middle|>`` and the model writes ``<think>`` itself.  The
  model may start calling without closing its reasoning: the reasoning ends at
  ``</think>``, at a section marker or at ``<|tool_call_begin|>`` (llama.cpp's parser,
  vLLM's and SGLang's kimi_k2 reasoning parsers), so call_in_reasoning="ends_reasoning".
  Kimi K2.5's template opens ``<think>`` itself when thinking is on: use
  reasoning_in_prompt=True there.  Kimi-K2-Instruct writes no reasoning.
- Text before, between and after sections is content; whitespace after a closing marker
  is not.  A call without an index (``functions.NAME`` straight before
  ``<|tool_call_argument_begin|>``) is invalid, as for every peer.
"""

from __future__ import annotations

from ..grammar import (
    Grammar,
    choice,
    eof,
    json,
    lit,
    many,
    opt,
    ref,
    seq,
    tag,
    until,
    ws,
)
from ._base import Format, call_block, reasoning_rules

SECTION_BEGIN, SECTION_END = "<|tool_calls_section_begin|>", "<|tool_calls_section_end|>"
# the singular spelling vLLM also accepts
SECTION_BEGIN_1, SECTION_END_1 = "<|tool_call_section_begin|>", "<|tool_call_section_end|>"
CALL_BEGIN, ARGS_BEGIN, CALL_END = (
    "<|tool_call_begin|>",
    "<|tool_call_argument_begin|>",
    "<|tool_call_end|>",
)
THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
SECTION_MARKERS = (SECTION_BEGIN, SECTION_BEGIN_1, SECTION_END, SECTION_END_1)

# the id's parts end at the next marker too, so a malformed id never runs into the next call
_ID_STOPS = (ARGS_BEGIN, CALL_END, CALL_BEGIN)

FORMAT = Format(
    name="kimi_k2",
    aliases=("kimik2",),
    description="Moonshot Kimi K2 / K2-Thinking / K2.5: <think> reasoning, then "
    "<|tool_call_begin|>functions.NAME:IDX JSON calls, the id carried",
    families=("Kimi K2", "Kimi K2 Thinking", "Kimi K2.5"),
    model_ids=("moonshotai/Kimi-K2*",),
    reasoning="optional",
    call_in_reasoning="ends_reasoning",
    carries_ids=True,
    markers=(*SECTION_MARKERS, CALL_BEGIN, ARGS_BEGIN, CALL_END, THINK_OPEN, THINK_CLOSE),
    call_markers=(CALL_BEGIN, CALL_END),
    grammar=Grammar(
        rules={
            **reasoning_rules(THINK_OPEN, THINK_CLOSE, SECTION_BEGIN, SECTION_BEGIN_1, CALL_BEGIN),
            "body": seq(many(choice(ref("call"), ref("section"), ref("content"))), eof()),
            "section": seq(choice(*(lit(m) for m in SECTION_MARKERS)), ws()),
            "call": call_block(
                CALL_BEGIN,
                CALL_END,
                seq(
                    tag(
                        "tool_id",
                        seq(
                            opt(lit("functions.")),
                            tag("tool_name", until(":", *_ID_STOPS, need_stop=True)),
                            lit(":"),
                            until(" ", "\t", "\n", "\r", *_ID_STOPS, need_stop=True),
                        ),
                    ),
                    ws(),
                    lit(ARGS_BEGIN),
                    ws(),
                    tag("tool_args", json("strict", "object")),
                ),
            ),
            "content": tag("content", until(*SECTION_MARKERS, CALL_BEGIN, min1=True, commit=True)),
        },
        entries={"start": "start", "start_in_reasoning": "start_in_reasoning"},
    ),
    examples=(
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0"
        '<|tool_call_argument_begin|>{"city": "Paris"}<|tool_call_end|>'
        "<|tool_calls_section_end|>",
    ),
)
