# The GCML markers are spelled with U+FF5C FULLWIDTH VERTICAL LINE, on purpose.
# ruff: noqa: RUF001, RUF002
"""GigaChat 3.5 GCML calls: a <｜GCML｜tool_calls> block of invokes with typed parameters.

The answer text, a blank line, then the block; each parameter says whether its value is
a raw string or JSON::

    Сейчас узнаю погоду.

    <｜GCML｜tool_calls>
    <｜GCML｜invoke name="get_weather">
    <｜GCML｜parameter name="city" string="true">Москва</｜GCML｜parameter>
    <｜GCML｜parameter name="days" string="false">3</｜GCML｜parameter>
    </｜GCML｜invoke>
    </｜GCML｜tool_calls>

Facts relied on:

- Layout: the GigaChat 3.5 chat template (llama.cpp models/templates/GigaChat3.5.jinja):
  an assistant turn is ``<think>REASONING</think>``, the text and the block joined by a
  blank line; the block is ``<｜GCML｜tool_calls>``, a newline, the invokes one per line,
  a newline and ``</｜GCML｜tool_calls>``; an invoke is ``<｜GCML｜invoke name="NAME">``, a
  newline, its parameters one per line (then a newline), ``</｜GCML｜invoke>``; a
  parameter is ``<｜GCML｜parameter name="K" string="true">`` + the raw string, or
  ``string="false">`` + the value as JSON, then ``</｜GCML｜parameter>``. The turn ends
  with ``<|message_sep|>`` or the end-of-sequence token ``</s>``.
- The generation prompt is ``assistant<|role_sep|>`` and a newline, followed by
  ``<think>`` when the template's ``reasoning`` option is on (it is off by default, and
  llama.cpp's GigaChat 3.5 parser, common_chat_params_init_gigachat35, turns it off
  unless asked; it notes that the reasoning model's template always opens the block), so
  reasoning_in_prompt defaults to false and "start_in_reasoning" serves the reasoning
  mode and model; a ``<think>`` block the output opens itself is read too, and the
  blank line after ``</think>`` is not content (llama.cpp).
- Parsing: llama.cpp's parser (content up to the block opener, then the block),
  SGLang's gigachat35 detector and vLLM's gigachat35 parser: the text before the block
  is content (SGLang drops the newlines right before it), a ``string="false"`` value
  that is not valid JSON makes the call invalid_arguments (SGLang and vLLM keep the raw
  string, a guess), and a trailing
  ``<|message_sep|>`` or ``</s>`` is not content (SGLang; vLLM strips ``</s>``). vLLM reads
  a parameter with no ``string`` attribute as a string; that is accepted too.

Choices:

- Values are kept exactly as written (the template writes them inline). A value ends at
  ``</｜GCML｜parameter>`` only where the next parameter, ``</｜GCML｜invoke>`` or the block
  closer follows (optional whitespace between), so a value may hold that text.
- The block opener inside unfinished reasoning is reasoning text: the peers read
  reasoning up to ``</think>`` only.
- Text after the block is content (the peers drop or refuse it). A ``</s>`` or ``<|message_sep|>``
  elsewhere in the text stays content. An unknown tool is reported (unknown_tool) and
  dropped; a broken invoke is reported and skipped up to its ``</｜GCML｜invoke>``. A
  stream that ends after a complete invoke, before the block closer, keeps that call.
"""

from __future__ import annotations

from ..grammar import (
    Grammar,
    choice,
    eof,
    lit,
    many,
    ref,
    seq,
    tag,
    until,
    ws,
)
from ._base import Format, reasoning_rules
from ._deepseek import dsml_call_rules, dsml_markers, dsml_tags

GCML = "｜GCML｜"
BLOCK_OPEN, BLOCK_CLOSE, _ = dsml_markers("tool_calls", ns=GCML)
INVOKE_OPEN, INVOKE_CLOSE, PARAM_OPEN, PARAM_CLOSE = dsml_tags(ns=GCML)
THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
MESSAGE_SEP, EOS = "<|message_sep|>", "</s>"

# The text before the block ends at the opener; the blank line before it is not content.
_BLOCK_STARTS = (f"\n\n{BLOCK_OPEN}", f"\n{BLOCK_OPEN}", BLOCK_OPEN)


FORMAT = Format(
    name="gigachat35",
    description="GigaChat 3.5: <｜GCML｜tool_calls> blocks of <｜GCML｜invoke> calls with "
    'string="true|false" parameters; optional <think> block',
    families=("GigaChat 3.5",),
    model_ids=("ai-sage/GigaChat3.5-*", "ai-sage/GigaChat-3.5*"),
    reasoning="optional",
    call_in_reasoning="text",
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
    call_markers=(INVOKE_OPEN, INVOKE_CLOSE),
    grammar=Grammar(
        rules={
            **reasoning_rules(THINK_OPEN, THINK_CLOSE),
            "body": seq(
                many(choice(ref("block"), ref("trailer"), ref("content"), ref("end_text"))),
                eof(),
            ),
            **dsml_call_rules("tool_calls", ns=GCML, json_body=False, untyped_parameters=True),
            # the end of the turn, when the server leaves it in the text
            "trailer": seq(choice(lit(MESSAGE_SEP), lit(EOS)), ws(), eof()),
            "content": tag(
                "content", until(*_BLOCK_STARTS, MESSAGE_SEP, EOS, min1=True, commit=True)
            ),
            "end_text": tag("content", choice(lit(MESSAGE_SEP), lit(EOS))),
        },
        entries={"start": "start", "start_in_reasoning": "start_in_reasoning"},
    ),
    examples=(
        f'{BLOCK_OPEN}\n{INVOKE_OPEN}get_weather">\n'
        f'{PARAM_OPEN}city" string="true">Paris{PARAM_CLOSE}\n'
        f"{INVOKE_CLOSE}\n{BLOCK_CLOSE}",
    ),
)
