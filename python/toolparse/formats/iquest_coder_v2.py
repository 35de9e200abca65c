"""IQuest Coder V2: ``<iquestcoder_tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value>...``
calls closed by ``</iquestcoder_tool_call>``, after reasoning the prompt opened.

What the model writes (thinking on; shown on two lines, written as one)::

    The user wants the weather in Paris.</think><iquestcoder_tool_call>get_weather
    <arg_key>city</arg_key><arg_value>Paris</arg_value></iquestcoder_tool_call>

Facts relied on (vLLM's iquest_coder_v2 tool and reasoning parsers and their tests):

- A call is ``<iquestcoder_tool_call>``, the tool name (the text before the first
  ``<arg_key>``, stripped), then ``<arg_key>KEY</arg_key><arg_value>VALUE</arg_value>``
  pairs, whitespace allowed between the tags, then ``</iquestcoder_tool_call>``: IQuest
  Q1's key/value pairs (see iquest_q1) under the Coder V2 markers.  A call without pairs
  has no arguments.  Calls follow one another directly (parallel calls).
- A value of a parameter whose schema type is string is kept verbatim (a number-looking
  ``12345`` stays a string); any other is typed by the schema (needs_tools).
- Reasoning: thinking is on unless the template's ``thinking``/``enable_thinking`` switch
  turns it off, and then the output starts inside the reasoning, which runs to
  ``</think>``; a ``<think>`` the model writes anyway is dropped.  So reasoning_in_prompt
  defaults to True; pass False with thinking off.
- Text before, between and after calls is content; a marker outside a call (a closing
  marker, an ``<arg_key>``, a ``</think>`` after the reasoning) is reported (unexpected)
  and dropped, never content.

Choices against vLLM:

- A value that fits none of its schema's types makes the call invalid_arguments; vLLM
  tries JSON and keeps the text as a string when it does not parse (a guess).
- A call vLLM cannot read (an ``<arg_value>`` never closed, pairs out of order) is
  dropped there in the full-output path and put back into content, markers included, when
  streaming; here it is an error (unexpected or incomplete) and its text never reaches
  content.  A name not among the tools is unknown_tool (vLLM delivers it), and a key
  written twice makes the call invalid_arguments (vLLM keeps the last value).
- A ``<iquestcoder_tool_call>`` inside unfinished reasoning is reasoning text (vLLM's
  reasoning parser reads reasoning up to ``</think>`` whatever it holds).
- As in iquest_q1, a value ends at ``</arg_value>`` only where ``<arg_key>`` or the
  closing marker comes next, so a value may contain that text.  With repair, a value
  whose ``</arg_value>`` was left out ends at the call's closing marker or at the next
  call's opener (``missing_closer``).
"""

from __future__ import annotations

from ..grammar import Grammar, choice, eof, many, ref, seq, tag, until
from ._base import Format, reasoning_rules
from ._guard import stray
from .glm45 import KEY_CLOSE, KEY_OPEN, VALUE_CLOSE, VALUE_OPEN, glm_call_rules

TOOL_OPEN, TOOL_CLOSE = "<iquestcoder_tool_call>", "</iquestcoder_tool_call>"
THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
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
# outside a call, every marker but the call opener has no place: reported and dropped
_STRAY = MARKERS[1:]

FORMAT = Format(
    name="iquest_coder_v2",
    aliases=("iquest-coder-v2",),
    description="IQuest Coder V2: <think> reasoning (opened by the template), "
    "<iquestcoder_tool_call>NAME with <arg_key>/<arg_value> pairs typed by the tool schemas",
    families=("IQuest Coder V2",),
    model_ids=("IQuestLab/IQuest-Coder-V2*",),
    reasoning="optional",
    reasoning_in_prompt=True,
    call_in_reasoning="text",
    needs_tools=True,
    markers=MARKERS,
    call_markers=(TOOL_OPEN, TOOL_CLOSE),
    grammar=Grammar(
        rules={
            **reasoning_rules(THINK_OPEN, THINK_CLOSE),
            **glm_call_rules(TOOL_OPEN, TOOL_CLOSE),
            "body": seq(many(choice(ref("call"), ref("stray"), ref("content"))), eof()),
            "stray": stray(*_STRAY),
            "content": tag("content", until(*MARKERS, min1=True, commit=True)),
        },
        entries={"start": "start", "start_in_reasoning": "start_in_reasoning"},
    ),
    examples=(
        "The user wants the weather in Paris.</think><iquestcoder_tool_call>get_weather"
        "<arg_key>city</arg_key><arg_value>Paris</arg_value></iquestcoder_tool_call>",
    ),
)
