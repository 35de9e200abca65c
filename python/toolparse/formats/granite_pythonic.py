"""Granite pythonic calls: bare Python calls, one a line, with no list and no markers.

What the model writes (Granite 3.3 and Granite 4.0 served with a pythonic tool prompt)::

    Let me look both up.
    get_weather(location="Paris", unit="celsius")
    search_web(query="Paris museums open on Monday")

Facts relied on:

- vLLM's granite_pythonic parser and its tests (the only peer): a line that is, once
  stripped, ``NAME(ARGS)`` (NAME an identifier, ARGS up to the line's last ``)``) is a
  call; its arguments are keyword arguments with Python literal values (read with
  Python's ast); every other line is content.  A call may end without a newline at the
  end of the output.  Content is the other lines joined by newlines and stripped.

Choices:

- A line is a call where it starts (after spaces or tabs) with a name (an identifier, also
  with ``.`` and ``-``) directly followed by ``(``, and its last character before the line
  break (or the end) is ``)``, spaces aside.  That is checked before anything of the
  line is emitted, so such a line is held back until its end has come; any other line is
  content at once.  A line that starts like a call and is cut off by the end of an output
  cut short (finish "length") is an incomplete call, not content.
- The arguments are read as Python literals (strings in either quote with Python's
  escapes, numbers, True/False/None and JSON's true/false/null, lists, tuples, dicts);
  the call's line break is the end of the call.  A positional argument, a bare name or
  an expression as a value is invalid_arguments: vLLM hands over ``{"_raw": <the
  argument text>}``, a guess.  A key named twice is invalid_arguments.  A name that is
  not among the given tools is unknown_tool (vLLM emits the call).  Since the format has
  no markers, a line of prose or code shaped like a call (``print("hi")``) is read as one
  and, refused, is not content either (vLLM makes it a call).
- Content keeps its lines as written, line breaks included; a call's line, its line
  break with it, is not content (vLLM strips the content and drops its empty lines).
- Markers: the Granite end of text ``<|end_of_text|>`` is dropped; a role token
  (``<|start_of_role|>``, ``<|end_of_role|>``) in the output cannot be placed and is
  reported (unexpected) and dropped.
- format_for_model() never picks this format (its model ids are granite's and granite4's
  own patterns, which those formats take first): it is chosen by name, as vLLM's
  ``--tool-call-parser granite_pythonic``.
"""

from __future__ import annotations

from ..grammar import (
    Grammar,
    ahead,
    chars,
    choice,
    cut,
    eof,
    lit,
    many,
    not_ahead,
    opt,
    recover,
    ref,
    seq,
    stopped,
    tag,
    until,
    ws,
)
from ._base import Format
from ._guard import stray
from ._pythonic import function_name, python_call

END_OF_TEXT = "<|end_of_text|>"
ROLE_OPEN, ROLE_CLOSE = "<|start_of_role|>", "<|end_of_role|>"
_MARKERS = (END_OF_TEXT, ROLE_OPEN, ROLE_CLOSE)

_blank = chars(" \t")
# any byte but a parenthesis closing, a line break or the "<" a marker begins with
_TEXT = "\x00-\t\x0b-(*-;=-\xff"
# the end of a call's line: a line break, or the end of an output that was not cut short
_line_end = seq(chars(" \t\r"), choice(lit("\n"), stopped()))
# a line shaped like a call: NAME( ... ) and the line's end
_call_shape = seq(
    _blank,
    function_name(),
    lit("("),
    many(choice(chars(_TEXT, min1=True), lit("<"), seq(lit(")"), not_ahead(_line_end)))),
    lit(")"),
    _line_end,
)
# a line that starts like a call and runs to the end of an output cut short
_cut_short = seq(_blank, function_name(), lit("("), until("\n"), eof(), not_ahead(stopped()))
# after a broken call: the rest of its line
_rest_of_line = choice(seq(until("\n", min1=True), choice(lit("\n"), eof())), lit("\n"))

FORMAT = Format(
    name="granite_pythonic",
    description="Granite pythonic: bare Python calls NAME(key=value, ...), one a line, no "
    "list and no markers; other lines are content",
    families=("Granite 3.3 (pythonic prompt)", "Granite 4.0 (pythonic prompt)"),
    model_ids=("ibm-granite/granite-3*", "ibm-granite/granite-4.0-*"),
    argument_notation="Python literals",
    markers=_MARKERS,
    call_markers=None,
    grammar=Grammar(
        rules={
            "start": seq(many(ref("line")), eof()),
            "line": choice(
                ref("call"), ref("cut_short_call"), ref("end_of_text"), ref("stray"), ref("text")
            ),
            "call": seq(
                ahead(_call_shape),
                cut(),
                recover(
                    tag(
                        "tool_call",
                        # the shape checked that the line ends here
                        seq(_blank, python_call(), chars(" \t\r"), opt(lit("\n"))),
                    ),
                    _rest_of_line,
                ),
            ),
            # the output was cut short inside a line that starts like a call: incomplete
            "cut_short_call": seq(
                ahead(_cut_short),
                cut(),
                tag("tool_call", seq(_blank, python_call(), chars(" \t\r"), stopped())),
            ),
            "end_of_text": seq(lit(END_OF_TEXT), ws()),
            "stray": stray(ROLE_OPEN, ROLE_CLOSE),
            "text": choice(
                tag("content", lit("\n")),
                seq(
                    tag("content", until("\n", *_MARKERS, min1=True, commit=True)),
                    choice(
                        tag("content", lit("\n")), ahead(choice(*(lit(m) for m in _MARKERS))), eof()
                    ),
                ),
            ),
        },
        entries={"start": "start"},
    ),
    examples=('get_weather(location="Paris", unit="celsius")',),
)
