"""MeetKai Functionary v3.2 (and medium v3.0): ``>>>RECIPIENT\\n`` segments.

What the model writes (the prompt ends with ``>>>``, so the output starts right at the
first recipient; ``all`` addresses the user, any other recipient is a tool)::

    all
    Let me look both up.>>>get_weather
    {"city": "Paris"}>>>get_weather
    {"city": "Rome"}

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
  ``python`` followed by anything else is raw code for the built-in code interpreter, up to
  the next ``>>>`` (MeetKai's state machine; llama.cpp's legacy parser takes the rest of the
  output), which llama.cpp reports as a ``python`` call with arguments
  ``{"code": "<the code>"}``.  Those arguments hold a key the output never writes, which
  the engine cannot produce yet: until it can, raw code is reported as an error of kind
  "unexpected" and dropped, never shown as content nor delivered with other arguments.
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
    not_ahead,
    recover,
    ref,
    seq,
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

FORMAT = Format(
    name="functionary_v3_2",
    aliases=("functionary-v3.2",),
    description="MeetKai Functionary v3.2 / medium v3.0: >>>all\\n text and >>>NAME\\n{json} "
    "calls (the first >>> is in the prompt)",
    families=("Functionary v3.2", "Functionary medium v3.0"),
    model_ids=(
        "meetkai/functionary-small-v3.2*",
        "meetkai/functionary-medium-v3.2*",
        "meetkai/functionary-medium-v3.0*",
    ),
    reasoning="none",
    markers=(SEPARATOR,),
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
            "python_code": recover(choice(), until(SEPARATOR)),
            "content": tag("content", until(SEPARATOR, min1=True, commit=True)),
        },
        entries={"start": "start"},
    ),
    examples=(
        'all\nLet me check.>>>get_weather\n{"city": "Paris"}',
        'get_weather\n{"city": "Paris"}>>>get_weather\n{"city": "Rome"}',
    ),
)
