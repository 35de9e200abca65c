# The Step3 markers are spelled with U+FF5C FULLWIDTH VERTICAL LINE, on purpose.
# ruff: noqa: RUF001, RUF002
"""Step3 calls: DeepSeek-style token envelopes around ``<steptml:invoke>`` XML.

The chat template opens the reasoning, so the output starts inside it; calls come in a
section after ``</think>``, one ``<｜tool_call_begin｜>`` envelope per call::

    The user wants the weather in Paris.</think>
    <｜tool_calls_begin｜>
    <｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="get_weather">
    <steptml:parameter name="city">Paris</steptml:parameter>
    </steptml:invoke><｜tool_call_end｜>
    <｜tool_calls_end｜>

Facts relied on:

- Markers and layout: vLLM's step3 tool parser and SGLang's Step3Detector (and its
  streaming tests): the section ``<｜tool_calls_begin｜>`` ... ``<｜tool_calls_end｜>``,
  each call ``<｜tool_call_begin｜>`` TYPE ``<｜tool_sep｜>`` INVOKE ``<｜tool_call_end｜>``
  where TYPE must be ``function``, the invoke ``<steptml:invoke name="NAME">`` with one
  ``<steptml:parameter name="KEY">VALUE</steptml:parameter>`` per argument and
  ``</steptml:invoke>``; whitespace and newlines between the pieces. The markers are
  those of DeepSeek's token form, but spelled with ASCII underscores (no ``▁``).
- Values are typed by the tool schema (needs_tools): both peers keep a string-typed value
  as text and read others as JSON (integer, number, boolean in vLLM).
- Reasoning: vLLM's step3 reasoning parser and SGLang's (DeepSeek R1 detector, forced)
  read everything before the first ``</think>`` as reasoning, so reasoning_in_prompt
  defaults to true; an output without ``</think>`` is all reasoning, calls included
  (call_in_reasoning "text"). A ``<think>`` written anyway at the start is dropped.
- Text after ``<｜tool_calls_end｜>`` is content (vLLM and SGLang).

Choices:

- Both peers strip the whitespace around a value; a streamed string value cannot be
  trimmed at its end before the end arrives, so one newline right after the opening tag
  and one right before the closing tag are dropped and any other whitespace is kept.
  Typed (non-string) values are trimmed whole.
- A value ends at ``</steptml:parameter>`` only where a parameter the tool declares or
  ``</steptml:invoke>`` follows, so a value may hold that text and undeclared parameter
  tags (vLLM stops values at the first ``<``, which SGLang's tests show to be a bug).  A
  declared parameter opening inside a value is a missing closing tag: an error.  With
  repair the value ends there (``missing_closer``), as before a ``</steptml:invoke>`` that
  came instead, and a ``</steptml:invoke>`` left out before ``<｜tool_call_end｜>`` is
  salvaged alike.
- Each call is delivered at its ``<｜tool_call_end｜>``. A call opened without the section
  opener, and a section the output never closes, are accepted; a stray section closer
  is dropped. A call whose type is not ``function``, or whose body is broken, is reported
  and skipped up to its ``<｜tool_call_end｜>``; an unknown tool is reported and dropped.
"""

from __future__ import annotations

from ..grammar import (
    Grammar,
    choice,
    cut,
    declared_param,
    eof,
    lit,
    many,
    opt,
    ref,
    seq,
    stop,
    tag,
    until,
    ws,
)
from ._base import Format, call_block, reasoning_rules

CALLS_BEGIN, CALLS_END = "<｜tool_calls_begin｜>", "<｜tool_calls_end｜>"
CALL_BEGIN, CALL_END = "<｜tool_call_begin｜>", "<｜tool_call_end｜>"
TOOL_SEP = "<｜tool_sep｜>"
INVOKE_OPEN, INVOKE_CLOSE = '<steptml:invoke name="', "</steptml:invoke>"
PARAM_OPEN, PARAM_CLOSE = '<steptml:parameter name="', "</steptml:parameter>"
THINK_OPEN, THINK_CLOSE = "<think>", "</think>"

# A value ends at its closing tag only where a parameter the tool declares, or the call's
# end, follows; a declared parameter opening inside a value is a missing closing tag.
_NEXT = (INVOKE_CLOSE, declared_param(PARAM_OPEN, '">'))
_VALUE_END = (
    stop("\n" + PARAM_CLOSE, followed_by=_NEXT),
    stop(PARAM_CLOSE, followed_by=_NEXT),
    stop(PARAM_OPEN, followed_by=(declared_param(None, '">'),)),
)

FORMAT = Format(
    name="step3",
    description="Step3: reasoning opened by the template, <｜tool_calls_begin｜> sections of "
    "function<｜tool_sep｜><steptml:invoke> calls with parameters typed by the tool schemas",
    families=("Step3",),
    model_ids=("stepfun-ai/step3", "stepfun-ai/step3-*"),
    reasoning="optional",
    reasoning_in_prompt=True,
    call_in_reasoning="text",
    needs_tools=True,
    markers=(
        CALLS_BEGIN,
        CALLS_END,
        CALL_BEGIN,
        CALL_END,
        TOOL_SEP,
        INVOKE_OPEN,
        INVOKE_CLOSE,
        PARAM_OPEN,
        PARAM_CLOSE,
        THINK_OPEN,
        THINK_CLOSE,
    ),
    call_markers=(CALL_BEGIN, CALL_END),
    grammar=Grammar(
        rules={
            **reasoning_rules(THINK_OPEN, THINK_CLOSE),
            "body": seq(
                many(choice(ref("section"), ref("call"), ref("stray_end"), ref("content"))),
                eof(),
            ),
            "section": seq(
                lit(CALLS_BEGIN),
                cut(),
                ws(),
                many(ref("call")),
                opt(seq(lit(CALLS_END), ws())),
            ),
            "call": call_block(CALL_BEGIN, CALL_END, ref("call_body")),
            "call_body": seq(
                lit("function"),
                ws(),
                lit(TOOL_SEP),
                ws(),
                lit(INVOKE_OPEN),
                tag("tool_name", until('"', "\n", "<", need_stop=True)),
                lit('">'),
                ws(),
                many(ref("parameter")),
                lit(INVOKE_CLOSE),
            ),
            "parameter": seq(
                lit(PARAM_OPEN),
                cut(),
                tag("param_name", until('"', "\n", "<", need_stop=True)),
                lit('">'),
                opt(lit("\n")),
                tag("param_value", until(*_VALUE_END, need_stop=True)),
                choice(lit("\n" + PARAM_CLOSE), lit(PARAM_CLOSE)),
                ws(),
            ),
            "stray_end": seq(lit(CALLS_END), ws()),
            "content": tag(
                "content", until(CALLS_BEGIN, CALL_BEGIN, CALLS_END, min1=True, commit=True)
            ),
        },
        entries={"start": "start", "start_in_reasoning": "start_in_reasoning"},
    ),
    examples=(
        "Checking the weather.</think>\n<｜tool_calls_begin｜>\n<｜tool_call_begin｜>function"
        '<｜tool_sep｜><steptml:invoke name="get_weather">\n'
        '<steptml:parameter name="city">Paris</steptml:parameter>\n'
        "</steptml:invoke><｜tool_call_end｜>\n<｜tool_calls_end｜>",
    ),
)
