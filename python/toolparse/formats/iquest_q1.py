"""IQuest Q1: ``<iquest_tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value>...``
calls closed by ``</iquest_tool_call>``, GLM-4.7 style, after reasoning the prompt opened.

What the model writes (the generation prompt ends with ``<|iquest_assistant|><think>``;
shown on two lines, written as one)::

    The user wants the weather in Paris.</think><iquest_tool_call>get_weather
    <arg_key>city</arg_key><arg_value>Paris</arg_value></iquest_tool_call>

(with no newline after the name: the newline above only wraps the line).

Facts relied on:

- SGLang's iquest_q1 detector (the only peer; vLLM and llama.cpp have none) is its GLM-4.7
  detector with the call markers changed to ``<iquest_tool_call>`` and
  ``</iquest_tool_call>``: the name is the text before the first ``<arg_key>`` (stripped),
  then ``<arg_key>KEY</arg_key><arg_value>VALUE</arg_value>`` pairs; whitespace between the
  tags is allowed.  A value of a parameter whose schema type is string is kept verbatim
  (surrounding whitespace included); any other value is read as JSON when it parses, and
  stays a string when it does not.  So the values are typed by the tool schemas
  (needs_tools).  Text around and between blocks is content.
- Not JSON: contrary to a one-line summary of SGLang's formats that lists IQuest Q1 with
  JSON bodies, the detector parses key/value pairs; a block holding a JSON object is not a
  call there (SGLang gives it back as text), and invalid_arguments here.
- Reasoning: not from the three peers (none pairs a reasoning parser with iquest_q1 in the
  versions read), but from another public serving project's IQuest-Q1 support (its tests
  and notes): the generation prompt is ``<|iquest_assistant|><think>``, closed in the
  prompt (``<think></think>``) when thinking is off, and reasoning runs up to
  ``</think>``.  So reasoning_in_prompt defaults to True; pass False with thinking off.  A
  ``<think>`` the model writes anyway is accepted.

Choices: a value ends at ``</arg_value>`` only where a declared ``<arg_key>`` or
``</iquest_tool_call>`` comes next, so a value may contain that text; the name ends at
whitespace, ``<arg_key>`` or ``</iquest_tool_call>`` (a call without arguments).  Not
pinned down: what a ``<iquest_tool_call>`` inside unfinished reasoning means (no peer says);
it is reasoning text here (call_in_reasoning="text"), which never runs a draft.
"""

from __future__ import annotations

from ..grammar import (
    Grammar,
    choice,
    eof,
    many,
    ref,
    seq,
    tag,
    until,
)
from ._base import Format, reasoning_rules
from .glm45 import KEY_CLOSE, KEY_OPEN, VALUE_CLOSE, VALUE_OPEN, glm_call_rules

TOOL_OPEN, TOOL_CLOSE = "<iquest_tool_call>", "</iquest_tool_call>"
THINK_OPEN, THINK_CLOSE = "<think>", "</think>"

FORMAT = Format(
    name="iquest_q1",
    description="IQuest Q1: <think> reasoning (opened by the template), <iquest_tool_call>NAME "
    "with <arg_key>/<arg_value> pairs typed by the tool schemas",
    families=("IQuest Q1",),
    model_ids=("IQuestLab/IQuest-Q1*",),
    reasoning="optional",
    reasoning_in_prompt=True,
    call_in_reasoning="text",
    needs_tools=True,
    markers=(
        TOOL_OPEN,
        TOOL_CLOSE,
        THINK_OPEN,
        THINK_CLOSE,
        KEY_OPEN,
        KEY_CLOSE,
        VALUE_OPEN,
        VALUE_CLOSE,
    ),
    call_markers=(TOOL_OPEN, TOOL_CLOSE),
    grammar=Grammar(
        rules={
            **reasoning_rules(THINK_OPEN, THINK_CLOSE),
            **glm_call_rules(TOOL_OPEN, TOOL_CLOSE),
            "body": seq(many(choice(ref("call"), ref("content"))), eof()),
            "content": tag("content", until(TOOL_OPEN, min1=True, commit=True)),
        },
        entries={"start": "start", "start_in_reasoning": "start_in_reasoning"},
    ),
    examples=(
        "The user wants the weather in Paris.</think><iquest_tool_call>get_weather"
        "<arg_key>city</arg_key><arg_value>Paris</arg_value></iquest_tool_call>",
    ),
)
