"""The whole output as one JSON object (llama.cpp's generic format): a fallback for models
with no tool-call format of their own, whose output a JSON-schema grammar constrains.

What the model writes, one of::

    {"tool_call": {"name": "get_weather", "arguments": {"city": "Paris"}}}
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}},
                    {"name": "get_weather", "arguments": {"city": "Rome"}}]}
    {"response": "Paris is the capital of France."}

Facts this grammar relies on (llama.cpp's GENERIC chat format, which constrains the
output with a schema of exactly these shapes):

- ``tool_call`` holds one call, ``tool_calls`` a list of them (the parallel form); a
  call is ``{"name", "arguments"}``, with an optional ``"id"`` that the call then
  carries (an id written after the arguments comes too late: the call is announced when
  its arguments begin, so it gets a generated id).  ``response`` holds the answer: a
  string is the content (decoded, streamed as it arrives); any other JSON value is
  content as the JSON text the model wrote (llama.cpp re-indents it; this grammar keeps
  it as written).
- The keys may come in any order; other keys are skipped.  Whitespace and line breaks
  anywhere between JSON tokens are layout.

Choices: an output is read as this envelope only when it opens with ``{`` and one of the
three keys; any other output (prose, or JSON of another shape) is content as written, so
a model that ignores the schema still answers.  A call ends once what follows it is
certain (``,`` or the closing bracket), so an output cut short delivers only the calls
already closed.  Arguments written as a string, or a broken envelope, are
``invalid_arguments`` and the rest of the output is dropped, never guessed at.  Text
after the envelope is content.
"""

from __future__ import annotations

import json as _json

from ..grammar import (
    Grammar,
    Node,
    ahead,
    chars,
    choice,
    cut,
    eof,
    json,
    json_call,
    lit,
    many,
    not_ahead,
    opt,
    recover,
    ref,
    seq,
    tag,
    ws,
)
from ._base import Format, call_array, closing, skip_rest

KEYS = ("tool_call", "tool_calls", "response")


def key(name: str) -> Node:
    """A known key and its colon: the value that follows is final."""
    return seq(lit(_json.dumps(name)), ws(), lit(":"), cut(), ws())


def member(repair: bool) -> Node:
    dialect = "lenient" if repair else "strict"
    call = json_call(id_keys=("id",), dialect=dialect, repair=repair)
    follows = [lit(","), lit("}")] + ([tag("repaired", eof())] if repair else [])
    return choice(
        seq(key("tool_call"), tag("tool_call", seq(call, ws(), ahead(choice(*follows))))),
        seq(key("tool_calls"), call_array(call, None, repair=repair)),
        seq(
            key("response"),
            choice(
                # a string streams, decoded, from its opening quote on
                seq(ahead(lit('"')), cut(), tag("content", json(), decode="json_string")),
                tag("content", json()),
            ),
        ),
        seq(json("strict", "string"), ws(), lit(":"), ws(), json()),
    )


def grammar(repair: bool) -> Grammar:
    """The format's grammar; repair: lenient calls, and what the end of the output cuts off
    is closed."""
    close = closing("}", repair)
    envelope = seq(
        lit("{"), ws(), member(repair), many(seq(ws(), lit(","), ws(), member(repair))), ws(), close
    )
    return Grammar(
        rules={
            "start": seq(ws(), choice(ref("envelope_output"), ref("content")), eof()),
            "envelope_output": seq(
                ahead(seq(lit("{"), ws(), choice(*(lit(_json.dumps(k)) for k in KEYS)))),
                cut(),
                recover(seq(envelope, ws()), skip_rest()),
                opt(ref("content")),
            ),
            # the rest of the output, streamed: committed once one byte of it has come
            "content": seq(not_ahead(eof()), cut(), tag("content", chars("\x00-\xff"))),
        },
        entries={"start": "start"},
    )


FORMAT = Format(
    name="generic",
    aliases=("json_envelope",),
    description='Fallback: the whole output is one JSON object, {"tool_call": ...}, '
    '{"tool_calls": [...]} or {"response": "..."} (llama.cpp\'s generic format)',
    families=("any model constrained to the generic JSON envelope",),
    markers=(),
    call_markers=None,
    carries_ids=True,
    fallback=True,
    grammar=grammar(repair=False),
    repair_grammar=grammar(repair=True),
    examples=('{"tool_call": {"name": "get_weather", "arguments": {"city": "Paris"}}}',),
)
