"""Google FunctionGemma: ``<start_function_call>call:NAME{...}<end_function_call>`` calls
whose arguments are written in Gemma notation with ``<escape>`` around strings.

What the model writes (in the model turn, after a developer turn that declares the
functions; one line, wrapped here)::

    <start_function_call>call:get_weather{city:<escape>Tokyo, Japan<escape>,
    unit:<escape>celsius<escape>}<end_function_call>

Facts this grammar relies on:

- ``<start_function_call>``, ``<end_function_call>``, ``<escape>``,
  ``<start_function_response>`` and ``<end_of_turn>`` are special tokens of the
  FunctionGemma tokenizer; the serving stack must keep them in the text (vLLM's
  functiongemma parser turns skip_special_tokens off when tools are given).
- A call is ``<start_function_call>call:NAME{key:VALUE,...}<end_function_call>``; parallel
  calls follow each other (Google's FunctionGemma formatting guide; vLLM's functiongemma
  parser and its tests).  A call ends once ``<end_function_call>`` has arrived; after a
  malformed call the input is skipped up to it.
- Keys are bare text up to ``:``.  Values use the notation of the Gemma chat templates'
  format_argument: a string is raw text between two ``<escape>`` tokens, with no escapes
  inside (a quote, a backslash, a newline or a brace is plain data); numbers, ``true`` and
  ``false`` are bare; dicts ``{k:v,...}`` have bare keys; arrays are ``[v,...]`` (Google's
  guide: ``response:get_weather{temperature:15,weather:<escape>sunny<escape>}``).
  ``null`` is accepted as in Gemma 4.  Whitespace may follow ``{``, ``,`` and ``:``.
- ``<start_function_response>`` is the token the model writes after its calls to hand
  over to the tools, and Google lists it as an extra stop sequence; ``<end_of_turn>`` ends
  the turn.  Where a server leaves either in the text, the message ends there and what
  follows is not parsed.
- The model has no reasoning block.

Choices:

- A top-level string value streams as a JSON string; any other value is converted to
  JSON when it ends (decode="functiongemma").  vLLM's parser reads only ``key:<escape>...<escape>``
  pairs and runs json.loads on each string, so it gives ``<escape>42<escape>`` as the
  number 42 and drops bare numbers; this grammar follows the template (an escaped value
  is a string, a bare number a number).
- Content is the text outside calls (vLLM keeps only the text before the first call,
  stripped).  Whitespace right after ``<end_function_call>`` is not content; a stray
  ``<end_function_call>`` is dropped.

Strings nested inside a dict or an array (``filters:{lang:<escape>en<escape>}``) are read
as strings: decode="functiongemma" is the Gemma value converter with ``<escape>`` as the
string delimiter.
"""

from __future__ import annotations

from ..grammar import (
    Grammar,
    choice,
    cut,
    eof,
    lit,
    many,
    ref,
    seq,
    tag,
    until,
    ws,
)
from ._base import Format, skip_rest
from .gemma4 import gemma_call_rules

CALL_OPEN, CALL_CLOSE = "<start_function_call>", "<end_function_call>"
ESCAPE = "<escape>"
RESPONSE_OPEN, TURN_END = "<start_function_response>", "<end_of_turn>"

_CONTENT_ENDS = (CALL_OPEN, CALL_CLOSE, RESPONSE_OPEN, TURN_END)


FORMAT = Format(
    name="functiongemma",
    description="Google FunctionGemma: <start_function_call>call:NAME{key:<escape>text<escape>,"
    "n:1}<end_function_call> calls in Gemma notation",
    families=("FunctionGemma",),
    model_ids=("google/functiongemma-*", "unsloth/functiongemma-*"),
    markers=(CALL_OPEN, CALL_CLOSE, RESPONSE_OPEN, TURN_END),
    call_markers=(CALL_OPEN, CALL_CLOSE),
    argument_notation="Gemma values",
    grammar=Grammar(
        rules={
            "start": seq(ws(), ref("body")),
            "body": seq(
                many(
                    choice(
                        ref("call"),
                        ref("stray_close"),
                        ref("turn_end"),
                        ref("content"),
                    )
                ),
                eof(),
            ),
            **gemma_call_rules(
                CALL_OPEN,
                CALL_CLOSE,
                ESCAPE,
                call_prefixes=("call:",),
                quoted_keys=False,
                string_stops=(),
                decode="functiongemma",
            ),
            "stray_close": lit(CALL_CLOSE),
            "turn_end": seq(choice(lit(TURN_END), lit(RESPONSE_OPEN)), cut(), skip_rest()),
            "content": tag("content", until(*_CONTENT_ENDS, min1=True, commit=True)),
        },
        entries={"start": "start"},
    ),
    examples=(
        "<start_function_call>call:get_weather{city:<escape>Tokyo, Japan<escape>,"
        "unit:<escape>celsius<escape>}<end_function_call>",
        "Let me look that up.<start_function_call>call:get_weather_forecast{"
        "city:<escape>Oslo<escape>,days:3,include_hourly:false}<end_function_call>",
    ),
)
