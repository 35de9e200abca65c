"""MeetKai Functionary v3.2 (and medium v3.0): ``>>>RECIPIENT\\n`` segments.

What the model writes (the prompt ends with ``>>>``, so the output starts right at the
first recipient; ``all`` addresses the user, any other recipient is a tool)::

    all
    Let me look both up.>>>get_weather
    {"city": "Paris"}>>>get_weather
    {"city": "Rome"}

or, for the built-in code interpreter (a call of ``python`` with arguments
``{"code": "import math\\nprint(math.sqrt(2))"}``)::

    python
    import math
    print(math.sqrt(2))

Facts this grammar relies on:

- The v3.llama3 chat template (MeetKai/functionary; functionary-small-v3.2,
  functionary-medium-v3.2 and functionary-medium-v3.0) renders an assistant turn as
  ``>>>all\\n`` + its content, then ``>>>NAME\\n`` + the JSON arguments for each call, with
  nothing in between, and ends the generation prompt with ``>>>``.  So the first recipient
  comes without ``>>>`` (llama.cpp's FUNCTIONARY_V3_2 parsers match it at the start
  without the marker); an output that does start with ``>>>`` is accepted too.
- The recipient is the text up to the line break.  ``all`` opens text for the user:
  content up to the next ``>>>`` (MeetKai's parser and llama.cpp).  It may come before the
  calls or after them (MeetKai's generation state machine allows it anywhere).
- Any other recipient is a call whose arguments are the JSON object after the line break
  (whitespace before it is accepted).  The call is announced once its arguments begin and
  ends when the object closes: there is no closing marker.  Text after the object, up to
  the next ``>>>``, is content, as in llama.cpp's legacy parser (MeetKai's would make it
  part of the arguments, and a call whose object has closed is not taken back by what
  follows); whitespace there is not content.  Arguments that are not a JSON object are
  invalid arguments, and the rest of that segment is dropped.
- A recipient is a name: a first line that is empty, or that holds a space, a tab, a quote,
  a brace or ``<`` (or runs into ``>>>``) before its line break, is not one.  Such an output
  start is content (llama.cpp's legacy parser does the same), and a ``>>>`` followed by
  such a line is content too, so a Python prompt (``>>> print(1)``) inside an answer stays
  text (MeetKai's parser splits on every ``>>>``).  An output that ends inside a line that
  could still be a recipient (``...>>>get_wea``) ends with an "incomplete" error, and that
  line is not content.  Whitespace at the start of the output is not content.
- ``python`` followed by ``{`` is a call of a tool named python with JSON arguments.
  ``python`` followed by anything else is raw code for the built-in code interpreter
  (MeetKai's generation state machine switches to code after ``python\\n``; the template
  renders a python call as ``>>>python\\n`` + the code), which llama.cpp reports as a
  ``python`` call with arguments ``{"code": "<the code>"}``, and so does this grammar: the
  code streams as the JSON string value of ``"code"``, exactly as written.
- The code ends at a ``>>>`` that opens a recipient line (MeetKai's state machine ends it
  at ``>>>``; llama.cpp's legacy parser takes the rest of the output), or where the model
  stopped.  A ``>>>`` followed by a line that cannot be a recipient stays in the code, as it
  stays in text: a doctest prompt (``>>> f(2)``) or a string such as ``">>>"``.  An output
  cut short (finish reason "length") inside the code, or right after a ``>>>`` whose line
  is not finished, is an "incomplete" error and no call.  The call is delivered when the
  tools given include ``python``, like any call.
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
    not_ahead,
    recover,
    ref,
    seq,
    stopped,
    tag,
    until,
    ws,
)
from ._base import Format

SEPARATOR = ">>>"
ALL, PYTHON = "all\n", "python\n"

# A recipient name: at least one byte, ended by the line break; any of the other stops
# means the line is not a recipient.
_NAME_STOPS = ("\n", SEPARATOR, " ", "\t", "\r", '"', "{", "}", "<")
_name = tag("tool_name", until(*_NAME_STOPS, min1=True, need_stop=True))
# What follows is certainly not a recipient: an empty first line, or a first line that
# holds a byte a name cannot hold.  (A line cut off by the end of the output is neither.)
_not_a_recipient = ahead(
    choice(lit("\n"), seq(until(*_NAME_STOPS, need_stop=True), not_ahead(lit("\n"))))
)

# Raw code: up to a >>> that opens a recipient line (a >>> before a line that cannot be one
# is code).  It ends at such a >>>, or where the model stopped, also at a >>> whose line the
# end of the output cut off; an output cut short there may have gone on with the code, so
# that call is incomplete.
_code = seq(until(SEPARATOR), many(seq(lit(SEPARATOR), _not_a_recipient, until(SEPARATOR))))
_code_end = choice(
    ahead(
        seq(
            lit(SEPARATOR),
            choice(
                seq(until(*_NAME_STOPS, min1=True, need_stop=True), lit("\n")),
                seq(until(*_NAME_STOPS), stopped()),
            ),
        )
    ),
    stopped(),
)

FORMAT = Format(
    name="functionary_v3_2",
    aliases=("functionary-v3.2",),
    description="MeetKai Functionary v3.2 / medium v3.0: >>>all\\n text and >>>NAME\\n{json} "
    "calls, python\\n raw code (the first >>> is in the prompt)",
    families=("Functionary v3.2", "Functionary medium v3.0"),
    model_ids=(
        "meetkai/functionary-small-v3.2*",
        "meetkai/functionary-medium-v3.2*",
        "meetkai/functionary-medium-v3.0*",
    ),
    reasoning="none",
    markers=(SEPARATOR,),
    text_markers=(SEPARATOR,),  # a REPL prompt in text: a call only at a message's start
    call_markers=None,
    grammar=Grammar(
        rules={
            # the first recipient, usually without its >>> (the prompt holds it)
            "start": seq(
                ws(), choice(ref("marked"), ref("segment"), eof(), _not_a_recipient), ref("body")
            ),
            "body": seq(many(choice(ref("marked"), ref("content"))), eof()),
            # >>> and a recipient; without one, the >>> is text
            "marked": choice(
                seq(lit(SEPARATOR), ref("segment")),
                seq(tag("content", lit(SEPARATOR)), _not_a_recipient),
            ),
            "segment": choice(
                seq(lit(ALL), cut()),
                seq(lit(PYTHON), not_ahead(seq(ws(), lit("{"))), cut(), ref("python_code")),
                ref("call"),
            ),
            "call": seq(
                tag(
                    "tool_call",
                    seq(
                        _name,
                        lit("\n"),
                        cut(),
                        recover(
                            seq(ws(), ahead(lit("{")), tag("tool_args", json("strict", "object"))),
                            until(SEPARATOR),
                        ),
                    ),
                ),
                ws(),
            ),
            # raw code for the built-in python tool: see the module docstring
            "python_code": tag(
                "tool_call",
                seq(
                    tag("tool_name", const("python")),
                    tag("param_name", const("code")),
                    tag("param_value", _code, decode="string"),
                    _code_end,
                ),
            ),
            "content": tag("content", until(SEPARATOR, min1=True, commit=True)),
        },
        entries={"start": "start"},
    ),
    examples=(
        'all\nLet me check.>>>get_weather\n{"city": "Paris"}',
        'get_weather\n{"city": "Paris"}>>>get_weather\n{"city": "Rome"}',
        "python\nimport math\nprint(math.sqrt(2))",
    ),
)
