"""Fireworks FireFunction v2: content, then `` functools[{"name": ..., "arguments": {...}}]``.

What the model writes (the calls are one JSON list after the word ``functools``, which the
Llama 3 tokenizer writes with its leading space)::

    I'll check both cities. functools[{"name": "get_weather", "arguments": {"city": "Paris"}},
    {"name": "get_weather", "arguments": {"city": "Rome"}}]

Facts this grammar relies on:

- The model's chat template (fireworks-ai/llama-3-firefunction-v2) renders an assistant
  turn as its content followed by `` functools`` and the JSON list of its calls; llama.cpp's
  FIREFUNCTION_V2 handler renders a call as `` functools[{"name": "special_function",
  "arguments": {"arg1": 1}}]`` and triggers on `` functools[``.
- llama.cpp takes the space before ``functools`` as part of the marker (its parser matches
  `` functools[`` and keeps only the text before it as content).  So does this grammar; a
  ``functools[`` without the space (at the start of the output, or right after other text)
  is a marker too, and so is ``functools`` with whitespace before the ``[``.  ``functools``
  followed by anything else is text.
- Each list element is ``{"name", "arguments"}`` (``"parameters"`` is accepted too; other
  keys are skipped).  A call ends once what follows it is known: a comma (another call) or
  the closing ``]``.  There is no closing marker, so a list cut off before its ``]``
  delivers only the calls already followed by a comma.  A bad element reports an error and
  the input up to the next marker is dropped (the calls before it stand).
- Text before the list is content.  The model ends its turn after the list (llama.cpp's
  parser accepts nothing after it); text that does follow is content, and whitespace right
  after the ``]`` is not.
- vLLM and SGLang have no parser for this model.  No reasoning block.
"""

from __future__ import annotations

from ..grammar import (
    Grammar,
    ahead,
    choice,
    cut,
    eof,
    json_call,
    lit,
    many,
    opt,
    recover,
    ref,
    seq,
    stop,
    tag,
    until,
    ws,
)
from ._base import Format, call_array

FUNCTOOLS = "functools"

# " functools[" (leftmost, so the space is the marker's) or "functools[", with optional
# whitespace before the "["
_STOPS = (stop(" " + FUNCTOOLS, followed_by=("[",)), stop(FUNCTOOLS, followed_by=("[",)))

FORMAT = Format(
    name="firefunction_v2",
    aliases=("firefunction-v2",),
    description="Fireworks FireFunction v2: content, then a functools[...] JSON list of calls",
    families=("FireFunction v2",),
    model_ids=("fireworks-ai/llama-3-firefunction-v2*",),
    reasoning="none",
    markers=(FUNCTOOLS + "[",),
    text_markers=(FUNCTOOLS + "[",),  # a word: a call only where the output begins with it
    call_markers=None,
    grammar=Grammar(
        rules={
            "start": seq(ws(), ref("body")),
            "body": seq(many(choice(ref("calls"), ref("content"))), eof()),
            "calls": seq(
                opt(lit(" ")),
                lit(FUNCTOOLS),
                ws(),
                ahead(lit("[")),
                cut(),
                recover(call_array(json_call(), None), until(*_STOPS)),
                ws(),
            ),
            "content": tag("content", until(*_STOPS, min1=True, commit=True)),
        },
        entries={"start": "start"},
    ),
    examples=(
        'I\'ll check. functools[{"name": "get_weather", "arguments": {"city": "Paris"}}]',
        ' functools[{"name": "get_weather", "arguments": {"city": "Paris"}}, '
        '{"name": "get_weather", "arguments": {"city": "Rome"}}]',
    ),
)
