"""Poolside Laguna (poolside_v1): ``<tool_call>NAME`` with ``<arg_key>``/``<arg_value>`` pairs.

What the model writes (the name on the first line of the call, then each argument; the
model may open a ``<think>`` block first)::

    <think>The user wants the weather in Paris.</think>
    <tool_call>get_weather
    <arg_key>city</arg_key>
    <arg_value>Paris</arg_value>
    </tool_call>

Compact outputs leave out the line breaks or put a space after the name
(``<tool_call>get_weather <arg_key>city</arg_key><arg_value>Paris</arg_value></tool_call>``);
a call without arguments is ``<tool_call>get_current_time</tool_call>``.

Facts relied on:

- Markers and layout: vLLM's poolside_v1 parser and its tests (the name ends at a newline,
  at ``<arg_key>`` or at ``</tool_call>`` and is stripped; ``<arg_key>K</arg_key>``,
  optional whitespace, ``<arg_value>V</arg_value>``; no newline needed after the name), and
  SGLang's poolside_v1 detector (poolside Laguna-XS.2: the name, a newline, one pair per
  line, ``</tool_call>``). Calls are not wrapped in a block; text before, between and after
  calls is content.
- SGLang's spark25 detector (Spark-X2.5) reads the same wire format, with one pair per line
  after the name: spark25 is an alias here. It reads a value ``null`` as null for any type;
  here a string parameter keeps the text ``null``.
- Values: strings are written raw and other types as JSON, so values are typed by the tool
  schema (needs_tools). vLLM keeps a string value verbatim (its tests pin leading
  indentation and a trailing newline) and strips other values before reading them; that is
  what is done here (a value that parses as none of its types makes the call invalid_arguments; the
  peers keep a string, a guess). SGLang strips
  one newline on each side of every value instead; no chat template was available to say
  whether the model writes such newlines, so vLLM's reading is followed.
- Reasoning: ``<think>`` ... ``</think>``. vLLM's poolside_v1 reasoning parser is the
  DeepSeek-V3 one (R1 behaviour with thinking on: reasoning ends only at ``</think>``), so a
  ``<tool_call>`` inside unfinished reasoning is reasoning text. That parser also looks for
  a ``<think>`` or ``</think>`` the template put after ``<assistant>``: where the template
  opens the block (Spark-X2.5's template does, per its qwen3 reasoning setup), pass
  reasoning_in_prompt=True; a ``<think>`` the output writes anyway is accepted then.

Choices: the call grammar is GLM-4.7's (glm45): the name ends at any whitespace (tool names
cannot hold spaces in the OpenAI API, so vLLM's acceptance of ``get weather`` is not
followed), and a value ends at ``</arg_value>`` only where a declared ``<arg_key>`` or
``</tool_call>`` follows (peers end it at the first ``</arg_value>``; the two agree on every
value that does not hold that text). Whitespace around calls and after ``</think>`` is
layout, not content.
"""

from __future__ import annotations

from ..grammar import Grammar, choice, eof, many, ref, seq, tag, until
from ._base import Format, reasoning_rules
from .glm45 import (
    KEY_CLOSE,
    KEY_OPEN,
    THINK_CLOSE,
    THINK_OPEN,
    TOOL_CLOSE,
    TOOL_OPEN,
    VALUE_CLOSE,
    VALUE_OPEN,
    glm_call_rules,
)

FORMAT = Format(
    name="poolside_v1",
    aliases=("spark25",),
    description="Poolside Laguna (and Spark-X2.5): <think> reasoning, <tool_call>NAME with "
    "<arg_key>/<arg_value> pairs, no wrapping block; values typed by the tool schemas",
    families=("Poolside Laguna", "Spark-X2.5"),
    model_ids=("poolside/Laguna*",),
    reasoning="optional",
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
            "body": seq(many(choice(ref("call"), ref("content"))), eof()),
            "content": tag("content", until(TOOL_OPEN, min1=True, commit=True)),
        }
        | glm_call_rules(),
        entries={"start": "start", "start_in_reasoning": "start_in_reasoning"},
    ),
    examples=(
        "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n"
        "</tool_call>",
        "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value></tool_call>",
    ),
)
