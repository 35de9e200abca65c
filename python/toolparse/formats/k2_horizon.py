"""K2 Horizon (IFM): ``<ifm|tool_calls>`` blocks of ``<ifm|tool_call>NAME`` key/value calls.

What the model writes (its own reasoning block first, at the effort the request asked for;
one piece per line here)::

    <ifm|think>
    The user wants the weather in Paris.</ifm|think>
    <ifm|tool_calls>
    <ifm|tool_call>get_weather
    <ifm|arg_key>city</ifm|arg_key><ifm|arg_value>Paris</ifm|arg_value>
    </ifm|tool_call>
    </ifm|tool_calls>

The chat template has three call notations (``tool_call_format``): ``xml`` (the default,
above), ``xml_typed``, where each key is followed by its type
(``<ifm|arg_key>days</ifm|arg_key><ifm|arg_type>integer</ifm|arg_type><ifm|arg_value>3
</ifm|arg_value>``), and ``json`` (``<ifm|tool_call>{"name": "get_weather", "arguments":
{"city": "Paris"}}</ifm|tool_call>``). All three are read, in any mix.

Facts relied on:

- Markers and layout: vLLM's k2_horizon tool and reasoning parsers, SGLang's k2_horizon
  detector (K2V3Detector) and llama.cpp's K2 Horizon PEG parser (common/parsers/
  k2-horizon.cpp). The name ends at whitespace (llama.cpp writes a newline after it), at
  the first ``<ifm|arg_key>`` or at ``</ifm|tool_call>`` (a call without arguments); the
  name cannot hold whitespace (vLLM rejects it). Whitespace between the tags is layout.
- Calls are read only inside ``<ifm|tool_calls>`` ... ``</ifm|tool_calls>`` (vLLM and
  llama.cpp; SGLang also takes a bare ``<ifm|tool_call>``, which is content here). Text
  before and after a block is content (vLLM keeps both).
- Values: strings are written raw, other types as JSON; without a type tag the value is
  typed by the tool schema (needs_tools), a string parameter keeping its text verbatim
  and other values read with surrounding whitespace ignored (vLLM strips non-string
  values). With ``<ifm|arg_type>``, the type the output states decides: ``string`` keeps
  the text; ``integer``, ``number``, ``boolean``, ``array``, ``object`` and ``null``
  (also with a parameter such as ``array[string]``, whose base type counts, as in vLLM)
  read the value as JSON (a value that is not JSON makes the call invalid_arguments); any other type
  (``any``, an unknown name) falls back to the schema. vLLM differs in one case: where
  the schema gives a single type, it wins over a conflicting stated type.
- llama.cpp notes that the models leave out ``<ifm|arg_type>`` even in ``xml_typed`` mode:
  every argument may or may not carry one.
- JSON calls: an object with ``name`` and ``arguments`` (``parameters`` also taken, as
  SGLang does).
- Reasoning: ``<ifm|think>`` (high effort), ``<ifm|think_fast>`` (medium) or
  ``<ifm|think_faster>`` (low), each closed by its own end tag; llama.cpp notes that the
  3.7B model ends medium and low effort reasoning with ``</ifm|think>``, so any of the
  three end tags closes the block. The generation prompt ends with
  ``<|ifm|im_start|>assistant`` and a newline (llama.cpp), so the model opens the block
  itself; with thinking off the template writes an empty ``<ifm|think></ifm|think>``.
  vLLM's reasoning parser ends unfinished reasoning at ``<ifm|tool_calls>``, which is
  followed here (call_in_reasoning="ends_reasoning"; llama.cpp waits for the end tag).

Choices: whitespace right after the opening think tag (llama.cpp skips it) and after the
closing one is layout; a value ends at ``</ifm|arg_value>`` only where whitespace and
``<ifm|arg_key>`` or ``</ifm|tool_call>`` follow, so a value may hold that text (peers end
it at the first ``</ifm|arg_value>``); the block's closing tag may be missing at the end of
the output. vLLM returns the whole output as content when one call of a block is
malformed; here the other calls of the block still parse and the bad one is an error.
Text inside a block that is not a call (``<ifm|tool_calls>junk</ifm|tool_calls>``, or
argument tags between two calls) is an unexpected error and is dropped up to the next
``<ifm|tool_call>`` or the block's end: vLLM returns the whole output as content then, its
markers included; here the block's markers never reach content and the calls after the
text in the same block are read. Text after the calls of a block that is never closed is
inside the block too, so it is the same error.
"""

from __future__ import annotations

from typing import Literal

from ..grammar import (
    Grammar,
    Node,
    ahead,
    choice,
    cut,
    eof,
    json_call,
    lit,
    many,
    not_ahead,
    opt,
    recover,
    ref,
    seq,
    stop,
    tag,
    until,
    ws,
)
from ._base import Format, call_block

THINK_OPENS = ("<ifm|think>", "<ifm|think_fast>", "<ifm|think_faster>")
THINK_CLOSES = ("</ifm|think>", "</ifm|think_fast>", "</ifm|think_faster>")
BLOCK_OPEN, BLOCK_CLOSE = "<ifm|tool_calls>", "</ifm|tool_calls>"
CALL_OPEN, CALL_CLOSE = "<ifm|tool_call>", "</ifm|tool_call>"
KEY_OPEN, KEY_CLOSE = "<ifm|arg_key>", "</ifm|arg_key>"
TYPE_OPEN, TYPE_CLOSE = "<ifm|arg_type>", "</ifm|arg_type>"
VALUE_OPEN, VALUE_CLOSE = "<ifm|arg_value>", "</ifm|arg_value>"

# the stated types read as JSON; "string" keeps the text; anything else defers to the schema
JSON_TYPES = ("integer", "number", "boolean", "array", "object", "null")

_NAME_END = ("\n", "\r", "\t", " ", KEY_OPEN, CALL_CLOSE)
_VALUE_END = stop(VALUE_CLOSE, followed_by=(KEY_OPEN, CALL_CLOSE))


def _any(markers: tuple[str, ...]) -> Node:
    return choice(*(lit(m) for m in markers))


def _stated_type(names: Node) -> Node:
    """<ifm|arg_type>NAME</ifm|arg_type> for one of `names`, a ``[...]`` parameter allowed."""
    return seq(
        lit(TYPE_OPEN),
        ws(),
        names,
        opt(seq(lit("["), until(TYPE_CLOSE, "\n", need_stop=True))),
        ws(),
        lit(TYPE_CLOSE),
    )


def _value(decode: Literal["raw", "string", "json"]) -> Node:
    return seq(
        cut(),
        ws(),
        lit(VALUE_OPEN),
        tag("param_value", until(_VALUE_END, need_stop=True), decode=decode),
    )


MARKERS = (
    *THINK_OPENS,
    *THINK_CLOSES,
    BLOCK_OPEN,
    BLOCK_CLOSE,
    CALL_OPEN,
    CALL_CLOSE,
    KEY_OPEN,
    KEY_CLOSE,
    TYPE_OPEN,
    TYPE_CLOSE,
    VALUE_OPEN,
    VALUE_CLOSE,
)

_REASONING_REST = seq(
    tag("reasoning", until(*THINK_CLOSES, BLOCK_OPEN)),
    opt(seq(_any(THINK_CLOSES), ws())),
)

FORMAT = Format(
    name="k2_horizon",
    description="K2 Horizon (IFM): <ifm|think> reasoning, <ifm|tool_calls> blocks of "
    "<ifm|tool_call>NAME calls with <ifm|arg_key>/<ifm|arg_value> pairs (an optional "
    "<ifm|arg_type>) or a JSON object; untyped values typed by the tool schemas",
    families=("K2 Horizon",),
    model_ids=("IFM/K2-Horizon*",),
    reasoning="optional",
    call_in_reasoning="ends_reasoning",
    needs_tools=True,
    markers=MARKERS,
    call_markers=(CALL_OPEN, CALL_CLOSE),
    grammar=Grammar(
        rules={
            "start": seq(ws(), opt(ref("think")), ref("body")),
            "start_in_reasoning": seq(
                opt(seq(ws(), _any(THINK_OPENS), ws())), ref("reasoning_rest"), ref("body")
            ),
            "think": seq(_any(THINK_OPENS), cut(), ws(), ref("reasoning_rest")),
            "reasoning_rest": _REASONING_REST,
            "body": seq(many(choice(ref("block"), ref("content"))), eof()),
            "content": tag("content", until(BLOCK_OPEN, min1=True, commit=True)),
            "block": seq(
                lit(BLOCK_OPEN),
                cut(),
                ws(),
                many(choice(ref("call"), ref("junk"))),
                opt(seq(lit(BLOCK_CLOSE), ws())),
            ),
            # text in a block that is not a call: an error, dropped up to the next call or
            # the block's end
            "junk": seq(
                not_ahead(choice(lit(BLOCK_CLOSE), eof())),
                recover(lit(CALL_OPEN), until(CALL_OPEN, BLOCK_CLOSE, min1=True)),
            ),
            "call": call_block(
                CALL_OPEN,
                CALL_CLOSE,
                choice(
                    seq(ahead(lit("{")), cut(), json_call()),
                    seq(
                        tag("tool_name", until(*_NAME_END, need_stop=True)),
                        ws(),
                        many(ref("argument")),
                    ),
                ),
            ),
            "other_type": seq(lit(TYPE_OPEN), until(TYPE_CLOSE), lit(TYPE_CLOSE)),
            "argument": seq(
                lit(KEY_OPEN),
                cut(),
                tag("param_name", until(KEY_CLOSE, need_stop=True)),
                lit(KEY_CLOSE),
                ws(),
                choice(
                    seq(_stated_type(lit("string")), _value("string")),
                    seq(_stated_type(_any(JSON_TYPES)), _value("json")),
                    # no type tag, or a type that is neither string nor JSON: the schema types it
                    seq(opt(ref("other_type")), _value("raw")),
                ),
                lit(VALUE_CLOSE),
                ws(),
            ),
        },
        entries={"start": "start", "start_in_reasoning": "start_in_reasoning"},
    ),
    examples=(
        "<ifm|tool_calls>\n<ifm|tool_call>get_weather\n<ifm|arg_key>city</ifm|arg_key>"
        "<ifm|arg_value>Paris</ifm|arg_value>\n</ifm|tool_call>\n</ifm|tool_calls>",
        "<ifm|think>Weather lookup.</ifm|think>\n<ifm|tool_calls>\n<ifm|tool_call>get_weather\n"
        "<ifm|arg_key>city</ifm|arg_key><ifm|arg_type>string</ifm|arg_type>"
        "<ifm|arg_value>Paris</ifm|arg_value>\n</ifm|tool_call>\n</ifm|tool_calls>",
        '<ifm|tool_calls><ifm|tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}'
        "</ifm|tool_call></ifm|tool_calls>",
    ),
)
