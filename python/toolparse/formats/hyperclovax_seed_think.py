"""NAVER HyperCLOVA X SEED Think: ``<tool_call>NAME`` with ``<arg_key>``/``<arg_value>`` pairs
whose values are JSON.

What the model writes with thinking on (the prompt ends with ``<think>`` and a newline)::

    Two cities were asked for; one call each.</think>

    Checking both.<tool_call>get_weather
    <arg_key>city</arg_key>
    <arg_value>"Seoul"</arg_value>
    </tool_call>
    <tool_call>get_weather
    <arg_key>city</arg_key>
    <arg_value>"Busan"</arg_value>
    </tool_call><|im_end|>

Facts relied on:

- vLLM's hyperclovax_seed_think tool and reasoning parsers and their tests (the only
  peer): a call is ``<tool_call>``, the name on the first line, then ``<arg_key>K</arg_key>``
  and ``<arg_value>V</arg_value>`` pairs one a line, then ``</tool_call>``; calls follow
  each other separated by a newline; each value is JSON (strings quoted, as in the
  tests); the turn ends with ``<|im_end|>``.  The generation prompt is ``<think>`` and a
  newline with thinking on (the output is reasoning, ``</think>``, a blank line, the
  answer) and a closed ``<think>\\n\\n</think>\\n\\n`` with thinking off, the default.
- With tool_choice "required" or a named tool, vLLM's JSON schema makes the model write
  ``[{"name": ..., "parameters": {...}}]`` (or one such object) after the reasoning
  instead; vLLM's parser reads that too, ``"arguments"`` as well as ``"parameters"``.

Choices:

- Values are read as the JSON they are written in (the output states the types, so the
  schema does not type them).  A value that is not JSON is invalid_arguments: vLLM keeps
  its raw text as a string (its test "falls back to raw string"), a guess at what an
  unquoted value meant.  A key named twice is invalid_arguments.  A value ends at
  ``</arg_value>`` only where the next ``<arg_key>`` or ``</tool_call>`` follows.
- The name is the first line, ending at whitespace (or at ``<arg_key>`` or
  ``</tool_call>``); an empty one is invalid_arguments (vLLM hands the block back as
  content).  A broken call is reported and skipped to its ``</tool_call>``; a call the
  output cuts off is incomplete.
- Reasoning: reasoning_in_prompt defaults to False (thinking off, vLLM's default); with
  thinking on pass True.  An optional ``<think>`` block at the start is reasoning too.  A
  ``<tool_call>`` inside unfinished reasoning is reasoning text (vLLM's reasoning parser
  ends it only at ``</think>``).
- The JSON form is read where the answer starts with it (after the reasoning and
  whitespace): a list whose first element opens with ``{"name"`` or one object that does;
  each call ends once what follows it is certain.  Anywhere else JSON is content.
- Text before, between and after calls is content (vLLM drops the whitespace between
  calls, as this does, and keeps other text); the whitespace after ``</think>`` and after
  each call is dropped.  No marker reaches content: a stray ``</tool_call>``, argument tag,
  ``<think>`` or ``</think>`` is reported (unexpected) and dropped; ``<|im_end|>`` is
  dropped.
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
from ._base import Format, call_array, call_block, reasoning_rules, skip_rest
from ._guard import stray

TOOL_OPEN, TOOL_CLOSE = "<tool_call>", "</tool_call>"
THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
KEY_OPEN, KEY_CLOSE = "<arg_key>", "</arg_key>"
VALUE_OPEN, VALUE_CLOSE = "<arg_value>", "</arg_value>"
IM_END = "<|im_end|>"
_TAGS = (TOOL_CLOSE, KEY_OPEN, KEY_CLOSE, VALUE_OPEN, VALUE_CLOSE, THINK_OPEN, THINK_CLOSE)

_VALUE_END = stop(VALUE_CLOSE, followed_by=(KEY_OPEN, TOOL_CLOSE))
# how a JSON call opens: {"name"
_JSON_HEAD = seq(lit("{"), ws(), lit('"name"'))

FORMAT = Format(
    name="hyperclovax_seed_think",
    aliases=("hyperclovax-seed-think",),
    description="HyperCLOVA X SEED Think: <think> reasoning, <tool_call>NAME with <arg_key> / "
    "<arg_value> pairs of JSON values, or a JSON list of calls",
    families=("HyperCLOVA X SEED Think",),
    model_ids=("naver-hyperclovax/HyperCLOVAX-SEED-Think-*",),
    reasoning="optional",
    markers=(TOOL_OPEN, *_TAGS, IM_END),
    call_markers=(TOOL_OPEN, TOOL_CLOSE),
    other_call_closers=("}",),  # a call of the JSON form ends after its object closes
    grammar=Grammar(
        rules={
            **reasoning_rules(THINK_OPEN, THINK_CLOSE),
            "body": seq(
                ws(),
                opt(choice(ref("json_list"), ref("json_object"))),
                many(choice(ref("call"), ref("end_token"), ref("stray"), ref("content"))),
                eof(),
            ),
            "json_list": seq(
                ahead(seq(lit("["), ws(), _JSON_HEAD)),
                cut(),
                recover(call_array(json_call(string_arguments=True), None), skip_rest()),
                ws(),
            ),
            "json_object": seq(
                ahead(_JSON_HEAD),
                cut(),
                recover(tag("tool_call", json_call(string_arguments=True)), skip_rest()),
                ws(),
            ),
            "call": call_block(
                TOOL_OPEN,
                TOOL_CLOSE,
                seq(
                    tag(
                        "tool_name",
                        until("\n", "\r", "\t", " ", KEY_OPEN, TOOL_CLOSE, need_stop=True),
                    ),
                    ws(),
                    many(ref("argument")),
                ),
            ),
            "argument": seq(
                lit(KEY_OPEN),
                cut(),
                tag("param_name", until(KEY_CLOSE, need_stop=True)),
                lit(KEY_CLOSE),
                ws(),
                lit(VALUE_OPEN),
                tag("param_value", until(_VALUE_END, need_stop=True), decode="json"),
                lit(VALUE_CLOSE),
                ws(),
            ),
            "end_token": seq(lit(IM_END), ws()),
            "stray": stray(*_TAGS),
            "content": tag("content", until(TOOL_OPEN, *_TAGS, IM_END, min1=True, commit=True)),
        },
        entries={"start": "start", "start_in_reasoning": "start_in_reasoning"},
    ),
    # the JSON form first: the agent's call templates write each value of an XML-style
    # parameter as the schema's text, not as JSON
    examples=(
        '[{"name": "get_weather", "arguments": {"city": "Seoul"}}]',
        '<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>"Seoul"</arg_value>\n'
        "</tool_call>",
    ),
)
