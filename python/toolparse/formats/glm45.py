"""GLM-4.5 / 4.6 / 4.7 XML calls: ``<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value>``.

What GLM-4.5 and GLM-4.6 emit (the chat template writes the name, then each argument on its
own line; the model opens its own ``<think>`` block)::

    <think>The user wants the weather in Paris and Tokyo.</think>
    I'll check both cities.
    <tool_call>get_weather
    <arg_key>city</arg_key>
    <arg_value>Paris</arg_value>
    </tool_call>
    <tool_call>get_weather
    <arg_key>city</arg_key>
    <arg_value>Tokyo</arg_value>
    </tool_call>

What GLM-4.7 changed (its chat template): no newline after the name nor between the tags,
calls follow each other directly, a call may have no argument at all, and the generation
prompt ends with ``<|assistant|><think>`` (``</think>`` when thinking is off). One line in
the output, wrapped here before ``<tool_call>``::

    Ok.</think><tool_call>read_file<arg_key>path</arg_key><arg_value>a.md</arg_value></tool_call>
    <tool_call>get_current_time</tool_call>

Facts relied on:

- Markers and layout: the GLM-4.5 and GLM-4.6 chat templates (llama.cpp
  models/templates/glm_4_5.jinja, GLM-4.6.jinja) and the GLM-4.7 template; llama.cpp's
  GLM_4_5 format; vLLM's glm4_moe and glm47 parsers; SGLang's glm4_moe and glm47 detectors.
- The name ends at a newline (GLM-4.5/4.6), directly at ``<arg_key>`` (GLM-4.7) or at
  ``</tool_call>`` (GLM-4.7 calls without arguments, SGLang and rtp-llm accept them). GLM-4.5-Air
  has been seen writing ``<tool_call>ls <arg_key>dirPath</arg_key> <arg_value>backend``
  (ik_llama.cpp discussion #753): any whitespace ends the name, and whitespace between the
  tags is skipped.
- Values: the templates write a string verbatim and anything else as JSON, so a value is
  typed by the tool schema (needs_tools): a string parameter keeps its text exactly (vLLM
  keeps string values verbatim, surrounding whitespace included), other types are read as
  JSON (a value that parses as none of its types makes the call invalid_arguments; the
  peers keep a string, a guess). A value ends at
  ``</arg_value>`` only where a key the tool declares (``<arg_key>NAME</arg_key>``) or
  ``</tool_call>`` comes next, so a value may contain that text and undeclared keys (code
  that mentions them, for instance); a declared key inside a value is a missing
  ``</arg_value>``: an error, where the peers swallow the next argument.  With repair the
  value ends there (``missing_closer``), as it does before a ``</tool_call>`` that came
  instead of ``</arg_value>``; a ``</tool_call>`` left out before the next
  ``<tool_call>`` is salvaged the same way.
- Reasoning: ``<think>`` ... ``</think>``; an empty ``<think></think>`` (the templates put
  one in every turn without reasoning) gives empty reasoning. A ``<tool_call>`` inside
  unfinished reasoning ends it. Peers disagree: vLLM's older glm45 reasoning parser ends
  reasoning only at ``</think>``, its newer GLM-4.7 engine parser ends it at the call; no
  GLM output drafting a call inside its reasoning is known, so this follows the engine.
- GLM-4.7 (and the GLM-5 templates) pre-open the reasoning block: the output starts inside
  it. This format's default follows GLM-4.5/4.6, whose output opens the block itself, so
  pass reasoning_in_prompt=True for GLM-4.7 with thinking on. A ``<think>`` the model writes
  anyway at the start is accepted in that mode too.

Choices: whitespace around calls, after ``</think>`` and between tags is consumed, not
content; text before, between and after calls is content; ``<think>`` tags after content
are content.
"""

from __future__ import annotations

from ..grammar import (
    Grammar,
    Node,
    choice,
    cut,
    declared_param,
    eof,
    lit,
    many,
    ref,
    seq,
    stop,
    tag,
    until,
    ws,
)
from ._base import Format, call_block, reasoning_rules

TOOL_OPEN, TOOL_CLOSE = "<tool_call>", "</tool_call>"
THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
KEY_OPEN, KEY_CLOSE = "<arg_key>", "</arg_key>"
VALUE_OPEN, VALUE_CLOSE = "<arg_value>", "</arg_value>"

# The name ends at whitespace (GLM-4.5/4.6 write a newline after it), or directly at the
# first argument or the end of the call (GLM-4.7).  A value ends at </arg_value> only where
# an argument the tool declares or the end of the call follows; a declared argument's key
# inside a value is a missing </arg_value>: the value ends there, and the call is an error.
_WHITESPACE = ("\n", "\r", "\t", " ")


def glm_call_rules(open_marker: str = TOOL_OPEN, close_marker: str = TOOL_CLOSE) -> dict[str, Node]:
    """The call rules shared by the GLM-style formats (GLM-4.5 to 4.7, Ling 3, Poolside,
    IQuest Q1): the call between open_marker and close_marker."""
    name_end = (*_WHITESPACE, KEY_OPEN, close_marker)
    value_end = (
        stop(VALUE_CLOSE, followed_by=(close_marker, declared_param(KEY_OPEN, KEY_CLOSE))),
        stop(KEY_OPEN, followed_by=(declared_param(None, KEY_CLOSE),)),
    )
    return {
        "call": call_block(
            open_marker,
            close_marker,
            seq(
                tag("tool_name", until(*name_end, need_stop=True)),
                ws(),
                many(ref("argument")),
            ),
        ),
        "argument": seq(
            lit(KEY_OPEN),
            cut(),
            tag("param_name", until(KEY_CLOSE, need_stop=True)),
            lit(KEY_CLOSE),
            ws(),
            lit(VALUE_OPEN),
            tag("param_value", until(*value_end, need_stop=True)),
            lit(VALUE_CLOSE),
            ws(),
        ),
    }


MARKERS = (
    TOOL_OPEN,
    TOOL_CLOSE,
    THINK_OPEN,
    THINK_CLOSE,
    KEY_OPEN,
    KEY_CLOSE,
    VALUE_OPEN,
    VALUE_CLOSE,
)


FORMAT = Format(
    name="glm45",
    aliases=("glm", "glm47", "glm4_moe"),
    description="GLM-4.5, 4.6 and 4.7: <think> reasoning, <tool_call>NAME with <arg_key> and "
    "<arg_value> pairs; values typed by the tool schemas",
    families=("GLM-4.5", "GLM-4.6", "GLM-4.7"),
    model_ids=("zai-org/GLM-4.5*", "zai-org/GLM-4.6*", "zai-org/GLM-4.7*"),
    reasoning="optional",
    call_in_reasoning="ends_reasoning",
    needs_tools=True,
    markers=MARKERS,
    call_markers=(TOOL_OPEN, TOOL_CLOSE),
    grammar=Grammar(
        rules={
            **reasoning_rules(THINK_OPEN, THINK_CLOSE, TOOL_OPEN),
            "body": seq(many(choice(ref("call"), ref("content"))), eof()),
            "content": tag("content", until(TOOL_OPEN, min1=True, commit=True)),
        }
        | glm_call_rules(),
        entries={"start": "start", "start_in_reasoning": "start_in_reasoning"},
    ),
    examples=(
        "<think>The user wants the weather in Paris.</think>\n<tool_call>get_weather\n"
        "<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>",
        "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value></tool_call>",
    ),
)
