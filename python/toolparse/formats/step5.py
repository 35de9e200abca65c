"""StepFun Step-5: Qwen3-Coder XML calls after DeepSeek-R1-style reasoning, with the text
around them kept byte for byte.

What the model writes (the generation prompt has opened ``<think>``)::

    The user wants the weather in Paris.
    </think>

    <tool_call>
    <function=get_weather>
    <parameter=city>
    Paris
    </parameter>
    </function>
    </tool_call>

Facts relied on:

- The calls are Qwen3-Coder's (see qwen3_coder, which Step-3.5 already uses):
  ``<tool_call>``, ``<function=NAME>``, ``<parameter=P>`` values typed by the tool
  schemas (needs_tools), one newline trimmed on each side of a value, ``</function>``,
  ``</tool_call>``; a call opened by ``<function=`` alone is read too.
- The reasoning is DeepSeek-R1's (see deepseek_r1): the template opens ``<think>``, so the
  output starts inside the reasoning (reasoning_in_prompt defaults to True; pass False
  when thinking is off); a ``<think>`` the model writes anyway is dropped; reasoning ends
  only at ``</think>``, so a call marker inside it is reasoning text, and an output with
  no ``</think>`` is all reasoning.
- Whitespace is kept: what follows ``</think>`` (its newlines included) and what lies
  between and after calls is content as written, where qwen3_coder and deepseek_r1 drop
  the whitespace after their markers.  Only the whitespace inside a call's markers (after
  the name, between parameters, before ``</tool_call>``) belongs to the call.

Choices: as qwen3_coder for values that fit no type of their schema (invalid_arguments),
unknown tools, keys written twice and calls cut off (incomplete).  After the reasoning,
a ``<think>``, ``</think>``, ``</tool_call>`` or ``</function>`` outside any call is
reported (unexpected) and dropped, never content.
"""

from __future__ import annotations

from ..grammar import (
    Grammar,
    choice,
    cut,
    eof,
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
from ._base import Format, skip_past
from ._guard import stray
from .hermes import THINK_CLOSE, THINK_OPEN, TOOL_CLOSE, TOOL_OPEN
from .qwen3_coder import FORMAT as QWEN3_CODER
from .qwen3_coder import FUNCTION_OPEN

FUNCTION_CLOSE = "</function>"
MARKERS = (TOOL_OPEN, TOOL_CLOSE, THINK_OPEN, THINK_CLOSE, FUNCTION_OPEN, FUNCTION_CLOSE)
_CALL_RULES = QWEN3_CODER.grammar.rules

FORMAT = Format(
    name="step5",
    aliases=("step-5",),
    description="StepFun Step-5: <think> reasoning (opened by the template), then Qwen3-Coder "
    "XML calls typed by the tool schemas; whitespace around them kept as content",
    families=("Step-5",),
    model_ids=("stepfun-ai/Step-5*",),
    reasoning="optional",
    reasoning_in_prompt=True,
    call_in_reasoning="text",
    needs_tools=True,
    markers=MARKERS,
    call_markers=(TOOL_OPEN, TOOL_CLOSE),
    other_call_closers=(FUNCTION_CLOSE,),  # a call opened by <function= alone ends there
    grammar=Grammar(
        rules={
            # whitespace before a <think> the model writes goes with it; else it is content
            "start": seq(opt(seq(ws(), ref("think"))), ref("body")),
            "start_in_reasoning": seq(
                opt(seq(ws(), lit(THINK_OPEN))), ref("reasoning_rest"), ref("body")
            ),
            "think": seq(lit(THINK_OPEN), cut(), ref("reasoning_rest")),
            "reasoning_rest": seq(tag("reasoning", until(THINK_CLOSE)), opt(lit(THINK_CLOSE))),
            "body": seq(
                many(choice(ref("call"), ref("bare_call"), ref("stray"), ref("content"))), eof()
            ),
            "call": seq(
                lit(TOOL_OPEN),
                cut(),
                recover(
                    tag(
                        "tool_call",
                        seq(ws(), lit(FUNCTION_OPEN), ref("function"), ws(), lit(TOOL_CLOSE)),
                    ),
                    skip_past(TOOL_CLOSE),
                ),
            ),
            # a </tool_call> after a call opened without <tool_call> closes that call
            "bare_call": seq(
                lit(FUNCTION_OPEN),
                cut(),
                recover(
                    tag("tool_call", seq(ref("function"), opt(seq(ws(), lit(TOOL_CLOSE))))),
                    skip_past(FUNCTION_CLOSE),
                ),
            ),
            "function": _CALL_RULES["function"],
            "parameter": _CALL_RULES["parameter"],
            "stray": stray(TOOL_CLOSE, FUNCTION_CLOSE, THINK_OPEN, THINK_CLOSE),
            "content": tag("content", until(*MARKERS, min1=True, commit=True)),
        },
        entries={"start": "start", "start_in_reasoning": "start_in_reasoning"},
    ),
    examples=(
        "The user wants the weather in Paris.\n</think>\n\n<tool_call>\n<function=get_weather>\n"
        "<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>",
    ),
)
