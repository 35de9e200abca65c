"""MiniMax-M2 XML calls: ``<minimax:tool_call>`` blocks of ``<invoke name="...">`` elements.

The chat template's generation prompt ends with ``<think>`` and a newline, so the output
starts inside the reasoning block; a block holds one or more invokes, one call each::

    The user wants news about two companies; I'll search for both at once.
    </think>

    <minimax:tool_call>
    <invoke name="search_web">
    <parameter name="query">OpenAI latest release</parameter>
    </invoke>
    <invoke name="search_web">
    <parameter name="query">Gemini latest release</parameter>
    <parameter name="site">blog.google</parameter>
    </invoke>
    </minimax:tool_call>

Facts relied on:

- Markers and layout: the MiniMax-M2 chat template (llama.cpp
  models/templates/unsloth-MiniMax-M2.jinja: ``<invoke name="NAME">``, each argument as
  ``<parameter name="KEY">VALUE</parameter>``, a string verbatim and anything else as JSON,
  and the generation prompt ``]~b]ai`` + ``<think>`` + newline); llama.cpp's MINIMAX_M2
  format; vLLM's minimax_m2 engine parser and SGLang's MinimaxM2Detector.
- The output does not repeat ``<think>``: vLLM's minimax_m2_append_think reasoning parser and
  the engine parser (which starts in reasoning) exist for that, so reasoning_in_prompt
  defaults to True; a ``<think>`` written anyway at the start is accepted.
- A ``<minimax:tool_call>`` inside unfinished reasoning ends it (vLLM's engine parser).
- Each invoke is one call, delivered at its ``</invoke>`` (vLLM and SGLang end a call there),
  so the call markers are ``<invoke name="`` and ``</invoke>``.
- Values are typed by the tool schema (needs_tools). Peers disagree on whitespace: SGLang
  strips newlines around a value, vLLM's engine parser keeps the value verbatim because
  the template writes it inline between ``>`` and ``</parameter>``; this follows the
  template and vLLM, so a string value keeps its text exactly. A value ends at
  ``</parameter>`` only where a parameter the tool declares or ``</invoke>`` comes next
  (vLLM ends it at the first ``</parameter>``, a guess that cuts markup short); a
  declared parameter opening inside a value is a missing ``</parameter>``: an error (with
  repair, the value ends there, marked ``missing_closer``, as before an ``</invoke>`` that
  came instead, and an ``</invoke>`` left out before the next ``<invoke>`` or
  ``</minimax:tool_call>`` is salvaged alike). Names are
  double-quoted as the template writes them (vLLM also accepts single quotes or none).

Choices: whitespace around blocks, between invokes and parameters and after ``</think>``
is consumed, not content. A broken invoke is reported and skipped up to its ``</invoke>``
(or the end of the block); text inside a block that is not an invoke is reported and the
rest of the block skipped. A stream that ends after a complete invoke, before
``</minimax:tool_call>``, loses nothing: the calls delivered stand and no error is added
(an invoke cut short is the ``incomplete`` error).
"""

from __future__ import annotations

from ..grammar import (
    Grammar,
    Node,
    choice,
    cut,
    declared_param,
    eof,
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

BLOCK_OPEN, BLOCK_CLOSE = "<minimax:tool_call>", "</minimax:tool_call>"
INVOKE_OPEN, INVOKE_CLOSE = '<invoke name="', "</invoke>"
PARAM_OPEN, PARAM_CLOSE = '<parameter name="', "</parameter>"
THINK_OPEN, THINK_CLOSE = "<think>", "</think>"

# A value ends at its closing tag only where a parameter the tool declares, or the call's
# end, follows; a declared parameter opening inside a value is a missing closing tag.
_VALUE_END = (
    stop(PARAM_CLOSE, followed_by=(INVOKE_CLOSE, declared_param(PARAM_OPEN, '">'))),
    stop(PARAM_OPEN, followed_by=(declared_param(None, '">'),)),
)


def invoke_rules(
    block_open: str, block_close: str, invoke_open: str, invoke_close: str, argument: str
) -> dict[str, Node]:
    """The MiniMax call block (M2 and M3): a block of ``<invoke name="NAME">`` calls whose
    arguments are the rule named `argument`; a block the output ends inside is closed by
    the end, and after a broken invoke the input is skipped past its closing tag."""
    return {
        "block": seq(
            lit(block_open),
            cut(),
            recover(
                seq(ws(), many(ref("invoke")), choice(lit(block_close), eof())),
                skip_past(block_close),
            ),
            ws(),
        ),
        "invoke": seq(
            lit(invoke_open),
            cut(),
            recover(
                tag(
                    "tool_call",
                    seq(
                        tag("tool_name", until('"', need_stop=True)),
                        lit('">'),
                        ws(),
                        many(ref(argument)),
                        lit(invoke_close),
                    ),
                ),
                seq(until(invoke_close, block_close), opt(lit(invoke_close))),
            ),
            ws(),
        ),
    }


FORMAT = Format(
    name="minimax_m2",
    aliases=("minimax-m2",),
    description="MiniMax-M2: reasoning opened by the template, <minimax:tool_call> blocks of "
    "<invoke> calls with <parameter> values typed by the tool schemas",
    families=("MiniMax-M2",),
    model_ids=("MiniMaxAI/MiniMax-M2*",),
    reasoning="optional",
    reasoning_in_prompt=True,
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
    call_markers=(INVOKE_OPEN, INVOKE_CLOSE),
    grammar=Grammar(
        rules={
            **reasoning_rules(THINK_OPEN, THINK_CLOSE, BLOCK_OPEN),
            "body": seq(many(choice(ref("block"), ref("content"))), eof()),
            **invoke_rules(BLOCK_OPEN, BLOCK_CLOSE, INVOKE_OPEN, INVOKE_CLOSE, "parameter"),
            "parameter": seq(
                lit(PARAM_OPEN),
                cut(),
                tag("param_name", until('"', need_stop=True)),
                lit('">'),
                tag("param_value", until(*_VALUE_END, need_stop=True)),
                lit(PARAM_CLOSE),
                ws(),
            ),
            "content": tag("content", until(BLOCK_OPEN, min1=True, commit=True)),
        },
        entries={"start": "start", "start_in_reasoning": "start_in_reasoning"},
    ),
    examples=(
        'Checking the weather.\n</think>\n\n<minimax:tool_call>\n<invoke name="get_weather">\n'
        '<parameter name="city">Paris</parameter>\n</invoke>\n</minimax:tool_call>',
    ),
)
