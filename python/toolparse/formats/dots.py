"""dots XML calls: ``<dots_function_call>`` blocks of ``<invoke name="...">`` elements.

A block holds one or more invokes, one call each, with one ``<parameter>`` per argument::

    Let me look that up.
    <dots_function_call>
    <invoke name="search">
    <parameter name="query">weather in Shanghai</parameter>
    </invoke>
    </dots_function_call>

Facts relied on:

- Markers and layout: vLLM's dots tool parser and SGLang's DotsToolDetector (the same
  design in both, with the same tests): the block ``<dots_function_call>`` ...
  ``</dots_function_call>``, any number of blocks per output, any number of invokes per
  block, ``<invoke name=NAME>`` ... ``</invoke>`` and ``<parameter name=KEY>VALUE</parameter>``.
  Both read the name after ``name=`` in double quotes, single quotes or none, with
  optional whitespace around ``=``; names are accepted here in those three spellings
  (without the whitespace around ``=``).
- A block whose body is one JSON object ``{"name": ..., "arguments": {...}}`` instead of
  invokes is a call too (both peers accept it as a fallback, and SGLang's structural tag
  is written in that form); such a call ends at ``</dots_function_call>``.
- Values are typed by the tool schema (needs_tools): both peers keep a string value as
  text and convert integers, numbers, booleans and JSON values by the schema.
- Reasoning is a ``<think>`` ... ``</think>`` block (SGLang maps ``dots`` to its Qwen3
  reasoning detector, and its test feeds the output of a template that opened the block,
  so the "start_in_reasoning" entry exists too).
- A ``</dots_function_call>`` outside a block is dropped from the content (vLLM's
  streaming path removes it).

Choices:

- Both peers strip all whitespace around a value; a streamed string value cannot be
  trimmed at its end before the end arrives, so one newline right after the opening tag
  and one right before ``</parameter>`` are dropped (the layout with the value on its own
  lines) and any other whitespace is kept. Typed (non-string) values are trimmed whole.
- A value ends at ``</parameter>`` only where ``</invoke>`` or a parameter the tool
  declares (``<parameter name=`` and a declared name, in any of the three spellings)
  follows, so a value may hold that text and parameters of no declared name (code or
  XML that mentions them). A declared parameter's opening inside a value is a missing
  ``</parameter>``: the value ends there, and the call is invalid_arguments. Both peers
  end a value at the first ``</parameter>``: a value holding one is cut short and its
  tail read as another parameter (they guess; toolparse keeps the text).
- A ``<dots_function_call>`` inside unfinished reasoning ends the reasoning, as for the
  other ``<think>`` formats whose calls follow the block.
- An unknown tool is reported (unknown_tool) and dropped; the peers drop it silently or
  show the block as content. A block whose body is neither invokes nor a JSON call is
  reported and skipped up to its closer (the peers show its text as content).
- Each invoke is delivered at its ``</invoke>``, a JSON-form call at the block closer; as
  the two forms close at different markers, the format declares no call markers. A
  stream that ends after a complete invoke, before the block closer, keeps that call.

Not pinned down: no chat template with these markers was found, so the model ids are
patterns over the dots chat models' names (dots-studio, rednote-hilab), the layout of
whitespace between the tags is taken from the peers' docstrings, and whether
``</dots_function_call>`` is a stop token is unknown.
"""

from __future__ import annotations

from ..grammar import (
    Grammar,
    Node,
    Role,
    ahead,
    choice,
    cut,
    declared_param,
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
from ._base import Format, reasoning_rules, skip_past

BLOCK_OPEN, BLOCK_CLOSE = "<dots_function_call>", "</dots_function_call>"
INVOKE_OPEN, INVOKE_CLOSE = "<invoke name=", "</invoke>"
PARAM_OPEN, PARAM_CLOSE = "<parameter name=", "</parameter>"
THINK_OPEN, THINK_CLOSE = "<think>", "</think>"

# A value ends at </parameter> only where the end of the invoke or a parameter the tool
# declares follows (its name in any of the three spellings); a declared parameter's
# opening inside a value ends it too, as a missing </parameter>.
_NAMED = (declared_param('"', '"'), declared_param("'", "'"), declared_param(None, ">"))
_NEXT = (
    INVOKE_CLOSE,
    declared_param(PARAM_OPEN + '"', '"'),
    declared_param(PARAM_OPEN + "'", "'"),
    declared_param(PARAM_OPEN, ">"),
)
_VALUE_END = (
    stop("\n" + PARAM_CLOSE, followed_by=_NEXT),
    stop(PARAM_CLOSE, followed_by=_NEXT),
    stop("\n" + PARAM_OPEN, followed_by=_NAMED),
    stop(PARAM_OPEN, followed_by=_NAMED),
)


def _name(role: Role) -> Node:
    """A name after ``name=``: in double quotes, in single quotes or bare, then ``>``."""
    return seq(
        choice(
            seq(lit('"'), tag(role, until('"', "\n", "<", ">", need_stop=True)), lit('"')),
            seq(lit("'"), tag(role, until("'", "\n", "<", ">", need_stop=True)), lit("'")),
            tag(role, until(">", "\n", "<", " ", need_stop=True)),
        ),
        ws(),
        lit(">"),
    )


FORMAT = Format(
    name="dots",
    description="dots chat models: <dots_function_call> blocks of <invoke> calls with "
    "<parameter> values typed by the tool schemas (or one JSON call); optional <think> block",
    families=("dots",),
    model_ids=("dots-studio/dots-*", "rednote-hilab/dots-*"),
    reasoning="optional",
    call_in_reasoning="ends_reasoning",
    needs_tools=True,
    markers=(
        BLOCK_OPEN,
        BLOCK_CLOSE,
        INVOKE_OPEN,
        INVOKE_CLOSE,
        PARAM_OPEN,
        PARAM_CLOSE,
        THINK_OPEN,
        THINK_CLOSE,
    ),
    call_markers=None,
    grammar=Grammar(
        rules={
            **reasoning_rules(THINK_OPEN, THINK_CLOSE, BLOCK_OPEN),
            "body": seq(many(choice(ref("block"), ref("stray_end"), ref("content"))), eof()),
            "block": seq(
                lit(BLOCK_OPEN),
                cut(),
                recover(
                    seq(ws(), choice(ref("json_call"), ref("invokes"))),
                    skip_past(BLOCK_CLOSE),
                ),
                ws(),
            ),
            "json_call": seq(
                ahead(lit("{")),
                cut(),
                tag("tool_call", seq(json_call(), ws(), lit(BLOCK_CLOSE))),
            ),
            "invokes": seq(many(ref("invoke")), choice(lit(BLOCK_CLOSE), eof())),
            "invoke": seq(
                lit(INVOKE_OPEN),
                cut(),
                recover(
                    tag(
                        "tool_call",
                        seq(_name("tool_name"), ws(), many(ref("parameter")), lit(INVOKE_CLOSE)),
                    ),
                    seq(until(INVOKE_CLOSE, BLOCK_CLOSE), opt(lit(INVOKE_CLOSE))),
                ),
                ws(),
            ),
            "parameter": seq(
                lit(PARAM_OPEN),
                cut(),
                _name("param_name"),
                opt(lit("\n")),
                tag("param_value", until(*_VALUE_END, need_stop=True)),
                choice(lit("\n" + PARAM_CLOSE), lit(PARAM_CLOSE)),
                ws(),
            ),
            "stray_end": seq(lit(BLOCK_CLOSE), ws()),
            "content": tag("content", until(BLOCK_OPEN, BLOCK_CLOSE, min1=True, commit=True)),
        },
        entries={"start": "start", "start_in_reasoning": "start_in_reasoning"},
    ),
    examples=(
        'Let me look that up.\n<dots_function_call>\n<invoke name="get_weather">\n'
        '<parameter name="city">Paris</parameter>\n</invoke>\n</dots_function_call>',
    ),
)
