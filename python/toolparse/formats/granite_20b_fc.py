"""IBM Granite-20B-FunctionCalling: ``<function_call> {"name": ..., "arguments": {...}}``.

What the model writes (one ``<function_call>`` per call, no closing marker: a call ends
where its JSON object closes)::

    Let me check the weather for you.
    <function_call> {"name": "get_weather", "arguments": {"city": "Tokyo"}}
    <function_call> {"name": "get_time", "arguments": {"timezone": "Asia/Tokyo"}}

Facts this grammar relies on:

- vLLM's granite-20b-fc parser and the chat template it ships for the model
  (examples/tool_chat_template_granite20b_fc.jinja): past calls are rendered as
  ``<function_call> `` and then ``{"name": NAME, "arguments": ARGS}`` (one per call, back
  to back), and the system prompt tells the model to write ``<function_call> {"name":
  "no_function", "arguments": {}}`` when no function fits.
- vLLM reads a JSON object after each ``<function_call>`` (whitespace after the marker
  skipped), the name from ``"name"`` and the arguments from ``"arguments"``; the text
  before the first marker is content.  Its tests put a space after the marker, a newline
  between calls, pretty-printed objects, and keep as not-a-call an object without the
  marker, an array after the marker, and ``{"name": 123}``.

Choices:

- A call is committed at ``<function_call>`` (a marker nowhere else in the template), and
  ends when its object closes.  The arguments are the ``"arguments"`` member (the
  template's and vLLM's key), or ``"parameters"`` (the key of the tool list in the
  prompt, which the model could echo; read rather than silently dropped); other members
  are skipped, and a call with neither has no arguments (``{}``).  Anything after the marker that
  is not a call object (an array, a name that is not a string, text) reports an
  error and the output up to the next ``<function_call>`` is skipped.
- Text before, between and after calls is content (vLLM keeps only the text before the
  first call); whitespace right after a call is not.
- ``no_function`` is an ordinary tool name: unknown_tool unless a tool of that name is
  given (the template's "no call" answer is therefore not a call).
- The model's end token ``<|endoftext|>`` is the stop token and not part of the output.

Not pinned down: whether the model writes text after its calls (the template never
shows any), and whether it ever writes ``"parameters"`` (never seen in the peers).
"""

from __future__ import annotations

from ..grammar import (
    Grammar,
    choice,
    cut,
    eof,
    json_call,
    lit,
    many,
    recover,
    ref,
    seq,
    tag,
    until,
    ws,
)
from ._base import Format

FUNCTION_CALL = "<function_call>"

FORMAT = Format(
    name="granite_20b_fc",
    aliases=("granite-20b-fc",),
    description='IBM Granite-20B-FunctionCalling: <function_call> {"name": ..., "arguments": '
    "{...}} per call, no closing marker",
    families=("Granite-20B-FunctionCalling",),
    model_ids=("ibm-granite/granite-20b-functioncalling*",),
    reasoning="none",
    markers=(FUNCTION_CALL,),
    call_markers=None,
    grammar=Grammar(
        rules={
            "start": seq(ws(), ref("body")),
            "body": seq(many(choice(ref("call"), ref("content"))), eof()),
            "call": seq(
                lit(FUNCTION_CALL),
                cut(),
                ws(),
                recover(
                    tag("tool_call", json_call()),
                    until(FUNCTION_CALL),
                ),
                ws(),
            ),
            "content": tag("content", until(FUNCTION_CALL, min1=True, commit=True)),
        },
        entries={"start": "start"},
    ),
    examples=(
        '<function_call> {"name": "get_weather", "arguments": {"city": "Tokyo"}}',
        'Let me check.\n<function_call> {"name": "get_weather", "arguments": {"city": "Tokyo"}}'
        '\n<function_call> {"name": "get_weather", "arguments": {"city": "Paris"}}',
    ),
)
