"""Sber GigaChat 3: content, then ``<|message_sep|>``, then one call in a ``function call`` turn::

    I'll check that for you.<|message_sep|>

    function call<|role_sep|>
    {"name": "get_weather", "arguments": {"city": "Moscow"}}

(the generation prompt is ``assistant<|role_sep|>`` and a newline; the call is the only
thing in its turn, and the output ends after it, with ``</s>`` where special tokens are
kept).  GigaChat 3.1 writes ``<|function_call|>`` in place of the separator and the role
header: ``I'll check that for you.<|function_call|>{"name": ...}``.

Facts relied on:

- The GigaChat 3 chat template (llama.cpp models/templates/GigaChat3-10B-A1.8B.jinja)
  renders every turn as ``ROLE<|role_sep|>\\nCONTENT<|message_sep|>\\n\\n`` and a call as a
  turn of its own, role ``function call``, content ``{"name": "...", "arguments": ...}``;
  it renders only the first of an assistant message's calls.  llama.cpp's gigachat-v3
  parser reads content up to ``<|message_sep|>\\n\\n``, then at most one call after
  ``function call<|role_sep|>\\n`` (parallel calls are not supported); its arguments are a
  JSON object.  vLLM's gigachat3 parser and SGLang's gigachat3 detector read the JSON after
  ``function call<|role_sep|>\\n``, require ``name`` and an object ``arguments``, take the
  content before the first ``<|message_sep|>`` and drop a trailing ``</s>``.  vLLM's tests
  also hold the GigaChat 3.1 header ``<|function_call|>`` right after the content.
- vLLM and SGLang decode the call with ``json.loads(strict=False)``, which also takes raw
  control characters (a raw newline) inside strings.  The engine's strict JSON does not,
  so such a call is invalid_arguments here; a strict-plus-control-characters dialect
  outside repair mode does not exist.

Choices: ``function call<|role_sep|>`` opens the call with or without the separator
before it (vLLM and SGLang find it anywhere; llama.cpp wants the separator); the call ends
at ``<|message_sep|>`` or where the model stopped (an output cut off by the length limit
right after the JSON leaves it incomplete); text after the content's ``<|message_sep|>``
that is not a call, and anything after the call, are dropped (the peers drop them too);
``</s>`` ends the message.
"""

from __future__ import annotations

from ..grammar import (
    Grammar,
    choice,
    cut,
    eof,
    json_call,
    lit,
    opt,
    recover,
    ref,
    seq,
    stopped,
    tag,
    until,
    ws,
)
from ._base import Format, skip_rest

ROLE_SEP, MESSAGE_SEP = "<|role_sep|>", "<|message_sep|>"
CALL_HEADER = "function call" + ROLE_SEP
CALL_TOKEN = "<|function_call|>"  # GigaChat 3.1
EOS = "</s>"

_call_body = recover(
    tag(
        "tool_call",
        seq(ws(), json_call(), ws(), opt(lit(EOS)), ws(), choice(lit(MESSAGE_SEP), stopped())),
    ),
    skip_rest(),
)

FORMAT = Format(
    name="gigachat3",
    description="Sber GigaChat 3 / 3.1: content, <|message_sep|>, then one JSON call in a "
    "'function call<|role_sep|>' turn (3.1: after <|function_call|>)",
    families=("GigaChat 3", "GigaChat 3.1"),
    model_ids=("ai-sage/GigaChat3-*", "ai-sage/GigaChat3.1-*"),
    reasoning="none",
    markers=(ROLE_SEP, MESSAGE_SEP, CALL_TOKEN, EOS),
    call_markers=None,
    parallel_calls=False,
    grammar=Grammar(
        rules={
            "start": seq(opt(ref("content")), choice(ref("call"), ref("end"), eof()), eof()),
            "content": tag(
                "content",
                until(MESSAGE_SEP, CALL_HEADER, CALL_TOKEN, EOS, min1=True, commit=True),
            ),
            "call": choice(
                seq(
                    opt(seq(lit(MESSAGE_SEP), ws())),
                    lit(CALL_HEADER),
                    cut(),
                    _call_body,
                    skip_rest(),
                ),
                seq(lit(CALL_TOKEN), cut(), _call_body, skip_rest()),
            ),
            # the end of the message: what follows is not this message's content
            "end": seq(choice(lit(MESSAGE_SEP), lit(EOS)), skip_rest()),
        },
        entries={"start": "start"},
    ),
    examples=(
        "I'll check that for you.<|message_sep|>\n\nfunction call<|role_sep|>\n"
        '{"name": "get_weather", "arguments": {"city": "Moscow"}}',
    ),
)
