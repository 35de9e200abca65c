"""Meta Llama 3.1 / 3.2 / 3.3 JSON calls: ``{"name": ..., "parameters": {...}}``.

What the model writes when it calls a tool it was given as JSON: the whole output is the
object, bare or between ``<|python_tag|>`` and ``<|eom_id|>`` (the template puts
``Environment: ipython`` in the system prompt whenever tools are given, and Meta's guide
shows the tag and ``<|eom_id|>`` in that case)::

    {"name": "get_weather", "parameters": {"city": "Paris"}}
    <|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}}<|eom_id|>

Facts this grammar relies on:

- The Llama 3.1 / 3.2 / 3.3 chat templates ask for "a JSON for a function call" in the
  format ``{"name": function name, "parameters": dictionary of argument name and its
  value}`` and render past calls that way, name first.  Meta's prompt-format guide shows
  the same call written ``<|python_tag|>{"type": "function", "name": ..., "parameters":
  {...}}<|eom_id|>``, pretty-printed, and Meta's reference decoder (llama-models,
  ``decode_assistant_message_from_content``) strips a leading ``<|python_tag|>`` and a
  trailing ``<|eot_id|>`` or ``<|eom_id|>`` before reading the JSON.
- vLLM's llama3_json (also llama4_json) parser reads ``"arguments"`` as well as
  ``"parameters"`` and several objects separated by ``;``; while streaming it reads calls
  only when the output starts with ``{`` or ``<|python_tag|>``.  SGLang's llama3 detector
  splits at ``<|python_tag|>`` wherever it is (the text before is content) or reads an
  output that starts with ``{``, with ``;`` between calls.  llama.cpp's Llama 3.x handler
  takes a call only at the very start of the output (``{`` with an optional ``"type":
  "function"`` key, then ``"name"`` and ``"parameters"``); anywhere else it is content.
- The templates support one call per turn; several calls joined by ``;`` come from
  fine-tunes and prompts that ask for them (vLLM's and SGLang's separator).

Choices (where the peers differ):

- ``<|python_tag|>`` opens calls wherever it appears (a special token, so never text);
  text before it is content, as in SGLang.
- Without the tag, only an object that opens the output is a call, and only when it
  starts like one: ``{``, optionally ``"type": "function",``, then ``"name"`` with a
  string, then a ``"parameters"`` or ``"arguments"`` key.  That much is held back; from
  there the call is committed and its arguments stream (arguments that are not an
  object, such as a JSON string, are then invalid arguments).  Anything else is content:
  prose, an object later in the text, JSON the user asked for such as ``{"name": "Ada",
  "born": 1815}``, and an output cut off before those keys have arrived.  What the
  grammar cannot check is whether the name is one of the given tools: with tools given,
  an object of the call's shape with an unknown name reports ``unknown_tool`` (the call
  is dropped, not guessed) rather than being returned as content.
- After a call, ``;`` and another object is another call (for an object after ``;`` no
  shape test is made: it must be a call).  A call ends when its object closes.
  ``<|eom_id|>`` and ``<|eot_id|>`` are dropped wherever they appear, and text after the
  calls is content.  A broken call reports an error and the rest up to the next
  ``<|python_tag|>`` or end token is skipped.
- Meta's built-in tools are not read here: ``<|python_tag|>brave_search.call(query="...")``
  and ``wolfram_alpha.call(...)``, and code-interpreter output (raw Python after
  ``<|python_tag|>``).  After ``<|python_tag|>``, input that is not a JSON object is an
  error (``unexpected``) and is skipped; the ``tagged_body`` rule is where a built-in call
  alternative goes.
"""

from __future__ import annotations

from ..grammar import (
    Grammar,
    ahead,
    choice,
    cut,
    eof,
    json,
    json_call,
    lit,
    many,
    opt,
    recover,
    ref,
    seq,
    tag,
    until,
    ws,
)
from ._base import Format

PYTHON_TAG = "<|python_tag|>"
EOM, EOT = "<|eom_id|>", "<|eot_id|>"


# How a call object opens: {"name": "...", "parameters":   (with an optional leading
# "type": "function" member).  Checked as a lookahead before a bare object is committed.
_call_head = seq(
    lit("{"),
    ws(),
    opt(seq(lit('"type"'), ws(), lit(":"), ws(), lit('"function"'), ws(), lit(","), ws())),
    lit('"name"'),
    ws(),
    lit(":"),
    ws(),
    json("strict", "string"),
    ws(),
    lit(","),
    ws(),
    choice(lit('"parameters"'), lit('"arguments"')),
    ws(),
    lit(":"),
)

# Skipped after a broken call: up to the next tag or end token.
_resync = until(PYTHON_TAG, EOM, EOT)

FORMAT = Format(
    name="llama3_json",
    aliases=("llama3", "llama4_json", "llama-3.x"),
    description='Meta Llama 3.1/3.2/3.3 JSON calls: {"name": ..., "parameters": {...}} opening '
    "the output or after <|python_tag|>, several joined by ;",
    families=("Llama 3.1", "Llama 3.2", "Llama 3.3"),
    model_ids=(
        "meta-llama/Llama-3.1-*",
        "meta-llama/Meta-Llama-3.1-*",
        "meta-llama/Llama-3.2-*",
        "meta-llama/Llama-3.3-*",
    ),
    reasoning="none",
    markers=(PYTHON_TAG, EOM, EOT),
    call_markers=None,
    grammar=Grammar(
        rules={
            "start": seq(ws(), opt(ref("bare_calls")), ref("body")),
            "body": seq(many(choice(ref("tagged"), ref("end_token"), ref("content"))), eof()),
            # {"name": ..., "parameters": {...}} opening the output
            "bare_calls": seq(ahead(_call_head), cut(), ref("calls")),
            # <|python_tag|>{...}; {...}
            "tagged": seq(
                lit(PYTHON_TAG),
                cut(),
                ws(),
                recover(ref("tagged_body"), _resync),
            ),
            # The built-in tools' NAME.call(...) form would be a second alternative here.
            "tagged_body": seq(ahead(lit("{")), ref("calls")),
            # a ; not followed by an object ends the calls (a trailing ; is dropped)
            "calls": seq(
                ref("call"),
                many(seq(ws(), lit(";"), ws(), ahead(lit("{")), ref("call"))),
                opt(seq(ws(), lit(";"))),
                ws(),
            ),
            "call": recover(tag("tool_call", json_call()), _resync),
            "end_token": seq(choice(lit(EOM), lit(EOT)), ws()),
            "content": tag("content", until(PYTHON_TAG, EOM, EOT, min1=True, commit=True)),
        },
        entries={"start": "start"},
    ),
    examples=(
        '{"name": "get_weather", "parameters": {"city": "Paris"}}',
        '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}}<|eom_id|>',
    ),
)
