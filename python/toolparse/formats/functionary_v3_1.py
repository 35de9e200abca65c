"""MeetKai Functionary v3.1 (Llama 3.1 based): ``<function=NAME>{json}</function>`` calls.

What the model writes (an answer may come first; calls follow, one after the other)::

    Let me look both up.<function=get_weather>{"city": "Paris"}</function>\
<function=get_weather>{"city": "Rome"}</function>

Facts this grammar relies on:

- The v3-llama3.1 chat template (MeetKai/functionary, used by functionary-small-v3.1 and
  functionary-medium-v3.1) renders an assistant turn as its content followed by one
  ``<function=NAME>ARGUMENTS</function>`` per call, with nothing in between, and ends the
  prompt with ``<|start_header_id|>assistant<|end_header_id|>\\n\\n``, so the output starts
  with the text or the first call.  The system prompt asks for JSON arguments.
- The name runs up to the first ``>`` (MeetKai's own parser and llama.cpp's
  FUNCTIONARY_V3_1_LLAMA_3_1 parser).  A name that meets ``<``, ``{``, a space or a line
  break before its ``>`` is malformed: invalid arguments, and the input up to the next
  ``</function>`` is dropped.
- Whitespace around the arguments object is accepted; a call ends at ``</function>``.  Text
  between and after calls is content (llama.cpp keeps it); whitespace right after
  ``</function>`` and at the start of the output is not content.
- The built-in code interpreter is called as ``<|python_tag|>`` followed by raw Python code
  to the end of the output (the template renders python calls that way; MeetKai's parser
  and llama.cpp take everything after the tag as the code, and llama.cpp reports a
  ``python`` call with arguments ``{"code": "<the code>"}``).  Those arguments hold a key
  the output never writes, which the engine cannot produce yet: until it can, the code
  after ``<|python_tag|>`` is reported as an error of kind "unexpected" and dropped, never
  shown as content nor delivered as a call with other arguments.
- No reasoning block: the model has none.
"""

from __future__ import annotations

from ..grammar import (
    Grammar,
    ahead,
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
from ._base import Format, call_block

FUNCTION_OPEN, FUNCTION_CLOSE = "<function=", "</function>"
PYTHON_TAG = "<|python_tag|>"

# <function=NAME>{arguments}</function>: the name ends at ">"; "<", "{", a space or a line
# break before it make the name malformed (checked before the name is taken)
_name = seq(
    ahead(seq(until(">", "<", "{", " ", "\n", need_stop=True), lit(">"))),
    tag("tool_name", until(">", need_stop=True)),
)
_call_body = seq(_name, lit(">"), ws(), ahead(lit("{")), tag("tool_args", json("strict", "object")))

FORMAT = Format(
    name="functionary_v3_1",
    aliases=("functionary_v3_1_llama_3_1", "functionary-v3.1-llama-3.1"),
    description="MeetKai Functionary v3.1 (Llama 3.1): <function=NAME>{json}</function> calls "
    "after optional content",
    families=("Functionary v3.1",),
    model_ids=("meetkai/functionary-small-v3.1*", "meetkai/functionary-medium-v3.1*"),
    reasoning="none",
    markers=(FUNCTION_OPEN, FUNCTION_CLOSE, PYTHON_TAG),
    call_markers=(FUNCTION_OPEN, FUNCTION_CLOSE),
    grammar=Grammar(
        rules={
            "start": seq(ws(), ref("body")),
            "body": seq(many(choice(ref("call"), ref("python"), ref("content"))), eof()),
            "call": call_block(FUNCTION_OPEN, FUNCTION_CLOSE, _call_body),
            # raw code for the built-in python tool: see the module docstring
            "python": seq(lit(PYTHON_TAG), cut(), recover(choice(), until(PYTHON_TAG))),
            "content": tag("content", until(FUNCTION_OPEN, PYTHON_TAG, min1=True, commit=True)),
        },
        entries={"start": "start"},
    ),
    examples=(
        'Let me check.<function=get_weather>{"city": "Paris"}</function>',
        '<function=get_weather>{"city": "Paris"}</function>'
        '<function=get_weather>{"city": "Rome"}</function>',
    ),
)
