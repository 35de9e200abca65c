"""ServiceNow Apriel 1.5 / 1.6 Thinker: plain-text reasoning up to ``[BEGIN FINAL RESPONSE]``,
then the reply and ``<tool_calls>[{"name": ..., "arguments": {...}}, ...]</tool_calls>``.

What Apriel 1.6 writes (the chat template ends the prompt with "Here are my reasoning
steps:" and a newline, so the output starts inside the reasoning)::

    The user wants the weather in Paris; I should call get_weather.
    [BEGIN FINAL RESPONSE]
    Let me check.
    <tool_calls>[{"name": "get_weather", "arguments": {"city": "Paris"}}]</tool_calls>

and a plain reply, which the model may close with ``[END FINAL RESPONSE]`` and ``<|end|>``::

    Simple arithmetic.
    [BEGIN FINAL RESPONSE]
    2 + 2 = 4.
    [END FINAL RESPONSE]
    <|end|>

Facts relied on:

- Calls: the Apriel 1.5 and 1.6 chat templates (llama.cpp models/templates
  unsloth-Apriel-1.5.jinja and Apriel-1.6-15b-Thinker-fixed.jinja) ask for "a list of JSON
  objects within <tool_calls></tool_calls>", each with a function name and arguments, and
  render past calls as a newline, ``<tool_calls>[``, the objects joined by ``, `` and
  ``]</tool_calls>``, each object followed by ``"id"`` in older turns.  llama.cpp's
  APRIEL_1_5 parser reads ``<tool_calls>[{"name": "...", "arguments": {...}}, ...]
  </tool_calls>``.  The model sees ids in its history, so an ``id`` key is read: it is the
  call's id when it comes before the arguments; written after them, as the templates do,
  the call was already announced with a generated id and the key is skipped (so ids are
  generated in practice: carries_ids is False).
- Reasoning: the 1.6 template prefills "Here are my reasoning steps:" and a newline, and
  renders a past turn's reasoning as the reasoning, a newline and ``[BEGIN FINAL
  RESPONSE]`` before the reply; its system prompt asks for the final response after that
  marker.  Apriel reasoning parsers for vLLM (public plugins; vLLM itself ships none) read
  everything before ``[BEGIN FINAL RESPONSE]`` as reasoning, with no start marker needed
  (an optional "Here are my reasoning steps:"), and clean ``[END FINAL RESPONSE]``,
  ``<|end|>`` and ``</s>`` from the reply.  So reasoning_in_prompt defaults to True.
  Apriel 1.5's instructions ask for the reasoning between ``<thinking>`` and
  ``</thinking>`` (llama.cpp's APRIEL_1_5 parser reads those), and 1.5 also uses the
  ``[BEGIN FINAL RESPONSE] ... [END FINAL RESPONSE]`` frame: either closing marker ends
  the reasoning, and a leading ``<thinking>`` or "Here are my reasoning steps:" is dropped.
  With reasoning_in_prompt=False a block opened by either of them is still reasoning.
- Reasoning ends only at ``[BEGIN FINAL RESPONSE]`` or ``</thinking>``: llama.cpp reads
  calls only outside reasoning (call_in_reasoning="text").

Choices: one newline before ``[BEGIN FINAL RESPONSE]``, ``[END FINAL RESPONSE]`` and
``<|end|>`` is layout, as is whitespace after those markers, after ``</thinking>`` and after
``</tool_calls>``; the markers never reach the content.  Text around a block is content.
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
    ref,
    seq,
    tag,
    until,
    ws,
)
from ._base import Format
from ._tool_calls import TOOL_CALLS_CLOSE, TOOL_CALLS_OPEN, tool_calls_block

THINKING_OPEN, THINKING_CLOSE = "<thinking>", "</thinking>"
BEGIN_FINAL, END_FINAL = "[BEGIN FINAL RESPONSE]", "[END FINAL RESPONSE]"
END_TURN = "<|end|>"
STEPS_HEADER = "Here are my reasoning steps:"

_opener = choice(lit(THINKING_OPEN), lit(STEPS_HEADER))

FORMAT = Format(
    name="apriel",
    aliases=("apriel_1_5",),
    description="ServiceNow Apriel 1.5 / 1.6 Thinker: reasoning up to [BEGIN FINAL RESPONSE] "
    "(or <thinking>), then <tool_calls> JSON array of calls",
    families=("Apriel 1.5", "Apriel 1.6"),
    model_ids=("ServiceNow-AI/Apriel-1.5-*", "ServiceNow-AI/Apriel-1.6-*"),
    reasoning="optional",
    reasoning_in_prompt=True,
    call_in_reasoning="text",
    markers=(
        THINKING_OPEN,
        THINKING_CLOSE,
        BEGIN_FINAL,
        END_FINAL,
        END_TURN,
        TOOL_CALLS_OPEN,
        TOOL_CALLS_CLOSE,
    ),
    call_markers=None,
    grammar=Grammar(
        rules={
            "start": seq(ws(), opt(seq(_opener, cut(), ws(), ref("reasoning_rest"))), ref("body")),
            "start_in_reasoning": seq(ws(), opt(_opener), ws(), ref("reasoning_rest"), ref("body")),
            "reasoning_rest": seq(
                tag("reasoning", until("\n" + BEGIN_FINAL, BEGIN_FINAL, THINKING_CLOSE)),
                opt(seq(opt(lit("\n")), choice(lit(BEGIN_FINAL), lit(THINKING_CLOSE)), ws())),
            ),
            "body": seq(many(choice(ref("tools"), ref("frame"), ref("content"))), eof()),
            "tools": tool_calls_block(json_call(id_keys=("id",))),
            # the response frame and the end of the turn are not content
            "frame": seq(
                opt(lit("\n")), choice(lit(BEGIN_FINAL), lit(END_FINAL), lit(END_TURN)), ws()
            ),
            "content": tag(
                "content",
                until(
                    TOOL_CALLS_OPEN,
                    "\n" + BEGIN_FINAL,
                    BEGIN_FINAL,
                    "\n" + END_FINAL,
                    END_FINAL,
                    "\n" + END_TURN,
                    END_TURN,
                    min1=True,
                    commit=True,
                ),
            ),
        },
        entries={"start": "start", "start_in_reasoning": "start_in_reasoning"},
    ),
    examples=(
        "The user wants the weather in Paris.\n[BEGIN FINAL RESPONSE]\n"
        '<tool_calls>[{"name": "get_weather", "arguments": {"city": "Paris"}}]</tool_calls>',
    ),
)
