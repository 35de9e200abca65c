"""Microsoft Phi-4-mini-instruct: ``functools[...]`` or ``<|tool_call|>[...]<|/tool_call|>``.

What the model writes depends on how it was told about the tools.  With vLLM's example
chat template (tool_chat_template_phi4_mini.jinja, which asks for the ``functools``
marker)::

    functools[{"name": "get_weather", "arguments": {"city": "Paris"}}]

and with its own chat template (the tools listed between ``<|tool|>`` and ``<|/tool|>`` in
the system message, as the model card describes), in its special tokens::

    <|tool_call|>[{"name": "get_weather", "arguments": {"city": "Paris"}}]<|/tool_call|>

Facts this grammar relies on:

- vLLM's phi4_mini_json parser finds ``functools[`` and reads a JSON list of
  ``{"name", "arguments"}`` (or ``"parameters"``) objects; SGLang's phi4mini detector (in
  some versions) does the same.  ``functools`` is plain text, not a special token: it is a
  marker only where ``[`` follows (after optional whitespace).
- Phi-4-mini's tokenizer has the special tokens ``<|tool_call|>`` and ``<|/tool_call|>``.
  The Berkeley function-calling leaderboard's handler for the model (run with its own
  template) reads ``<|tool_call|>[...]<|/tool_call|>``, and notes that the model often
  leaves out the closing ``<|/tool_call|>`` and sometimes writes the objects without the
  list brackets, separated by commas.  So the closing marker is optional, and so are the
  brackets; a ``functools`` inside the block is skipped.  llama.cpp has no handler for this
  model (a Phi-4 pull request, #12288, was not merged).
- In a list, a call ends once what follows it is known: a comma (another call) or the
  closing ``]``.  Objects without brackets end when they close.  A bad element reports an
  error and the input up to the next marker is dropped (the calls before it stand).
- Text before and after the calls is content: vLLM drops it when it parses a call (and
  streams the text before as content), SGLang keeps both; nothing the model wrote is lost
  here.  Whitespace after the calls is not content.
- No reasoning block: Phi-4-mini-instruct has none.
"""

from __future__ import annotations

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
TOOL_CALL_OPEN, TOOL_CALL_CLOSE = "<|tool_call|>", "<|/tool_call|>"

_FUNCTOOLS_STOP = stop(FUNCTOOLS, followed_by=("[",))


def _calls() -> Node:
    """A JSON list of calls, or call objects separated by commas (no brackets)."""
    bare_call = tag("tool_call", json_call())
    return choice(
        call_array(json_call(), None),
        seq(bare_call, many(seq(ws(), lit(","), ws(), bare_call))),
    )


FORMAT = Format(
    name="phi4_mini",
    aliases=("phi4_mini_json",),
    description="Microsoft Phi-4-mini-instruct: functools[...] or <|tool_call|>[...]"
    "<|/tool_call|> JSON lists of calls",
    families=("Phi-4-mini",),
    model_ids=("microsoft/Phi-4-mini-instruct*",),
    reasoning="none",
    markers=(FUNCTOOLS + "[", TOOL_CALL_OPEN, TOOL_CALL_CLOSE),
    text_markers=(FUNCTOOLS + "[",),  # a word: a call only where the output begins with it
    call_markers=None,
    grammar=Grammar(
        rules={
            "start": seq(ws(), ref("body")),
            "body": seq(
                many(choice(ref("functools"), ref("block"), ref("stray_close"), ref("content"))),
                eof(),
            ),
            # functools[...]
            "functools": seq(
                lit(FUNCTOOLS),
                ws(),
                ahead(lit("[")),
                cut(),
                recover(call_array(json_call(), None), until(_FUNCTOOLS_STOP, TOOL_CALL_OPEN)),
                ws(),
            ),
            # <|tool_call|>[...]<|/tool_call|>, the closing marker and the brackets optional
            "block": seq(
                lit(TOOL_CALL_OPEN),
                cut(),
                recover(
                    seq(ws(), opt(seq(lit(FUNCTOOLS), ws())), _calls()),
                    until(TOOL_CALL_CLOSE, _FUNCTOOLS_STOP, TOOL_CALL_OPEN),
                ),
                ws(),
                opt(seq(lit(TOOL_CALL_CLOSE), ws())),
            ),
            # a closing marker with no open block is dropped
            "stray_close": seq(lit(TOOL_CALL_CLOSE), ws()),
            "content": tag(
                "content",
                until(_FUNCTOOLS_STOP, TOOL_CALL_OPEN, TOOL_CALL_CLOSE, min1=True, commit=True),
            ),
        },
        entries={"start": "start"},
    ),
    examples=(
        'functools[{"name": "get_weather", "arguments": {"city": "Paris"}}]',
        '<|tool_call|>[{"name": "get_weather", "arguments": {"city": "Paris"}}]<|/tool_call|>',
    ),
)
