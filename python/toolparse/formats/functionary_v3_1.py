"""MeetKai Functionary v3.1 (Llama 3.1 based): ``<function=NAME>{json}</function>`` calls.

What the model writes (an answer may come first; calls follow, one after the other)::

    Let me look both up.<function=get_weather>{"city": "Paris"}</function>\
<function=get_weather>{"city": "Rome"}</function>

or, for the built-in code interpreter (a call of ``python`` with arguments
``{"code": "import math\\nprint(math.sqrt(2))"}``)::

    <|python_tag|>import math
    print(math.sqrt(2))

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
  (the template renders a ``python`` call that way, then ``<|eom_id|>``; MeetKai's parser
  takes everything after the tag as the code, and llama.cpp reports a ``python`` call with
  arguments ``{"code": "<the code>"}``).  So does this grammar: the code is streamed as the
  JSON string value of ``"code"``, exactly as written (no whitespace trimmed), and
  ``<function=``, ``</function>`` or a second ``<|python_tag|>`` inside it are code.
- The code ends where the model stopped, or at ``<|eom_id|>`` or ``<|eot_id|>`` (Llama 3.1
  special tokens that end a message; MeetKai's parser strips them from the end of the
  output).  An output cut short (finish reason "length") inside the code is an
  "incomplete" error and no call: the code may be missing its end.  Those two end tokens
  are dropped wherever they appear, never shown as content.  The call is delivered when
  the tools given include ``python``, like any call.
- No reasoning block: the model has none.
"""

from __future__ import annotations

from ..grammar import (
    Grammar,
    ahead,
    choice,
    const,
    cut,
    eof,
    json,
    lit,
    many,
    ref,
    seq,
    stopped,
    tag,
    until,
    ws,
)
from ._base import Format, call_block

FUNCTION_OPEN, FUNCTION_CLOSE = "<function=", "</function>"
PYTHON_TAG = "<|python_tag|>"
EOM, EOT = "<|eom_id|>", "<|eot_id|>"

# <function=NAME>{arguments}</function>: the name ends at ">"; "<", "{", a space or a line
# break before it make the name malformed (checked before the name is taken)
_name = seq(
    ahead(seq(until(">", "<", "{", " ", "\n", need_stop=True), lit(">"))),
    tag("tool_name", until(">", need_stop=True)),
)
_call_body = seq(_name, lit(">"), ws(), ahead(lit("{")), tag("tool_args", json("strict", "object")))

# <|python_tag|>CODE: a call of python with {"code": CODE}; the code ends at an end token or
# where the model stopped
_python_call = seq(
    lit(PYTHON_TAG),
    cut(),
    tag(
        "tool_call",
        seq(
            tag("tool_name", const("python")),
            tag("param_name", const("code")),
            tag("param_value", until(EOM, EOT), decode="string"),
            choice(lit(EOM), lit(EOT), stopped()),
        ),
    ),
)

FORMAT = Format(
    name="functionary_v3_1",
    aliases=("functionary_v3_1_llama_3_1", "functionary-v3.1-llama-3.1"),
    description="MeetKai Functionary v3.1 (Llama 3.1): <function=NAME>{json}</function> calls "
    "after optional content; <|python_tag|> then raw code calls python",
    families=("Functionary v3.1",),
    model_ids=("meetkai/functionary-small-v3.1*", "meetkai/functionary-medium-v3.1*"),
    reasoning="none",
    markers=(FUNCTION_OPEN, FUNCTION_CLOSE, PYTHON_TAG, EOM, EOT),
    call_markers=(FUNCTION_OPEN, FUNCTION_CLOSE),
    grammar=Grammar(
        rules={
            "start": seq(ws(), ref("body")),
            "body": seq(
                many(choice(ref("call"), ref("python"), ref("end_token"), ref("content"))), eof()
            ),
            "call": call_block(FUNCTION_OPEN, FUNCTION_CLOSE, _call_body),
            # raw code for the built-in python tool: see the module docstring
            "python": seq(_python_call, ws()),
            "end_token": seq(choice(lit(EOM), lit(EOT)), ws()),
            "content": tag(
                "content", until(FUNCTION_OPEN, PYTHON_TAG, EOM, EOT, min1=True, commit=True)
            ),
        },
        entries={"start": "start"},
    ),
    examples=(
        'Let me check.<function=get_weather>{"city": "Paris"}</function>',
        '<function=get_weather>{"city": "Paris"}</function>'
        '<function=get_weather>{"city": "Rome"}</function>',
        "<|python_tag|>import math\nprint(math.sqrt(2))",
    ),
)
