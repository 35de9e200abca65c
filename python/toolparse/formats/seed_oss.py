"""ByteDance Seed-OSS: ``<seed:think>`` reasoning, ``<seed:tool_call>`` blocks of one function.

The model opens its own reasoning block (the generation prompt is ``<seed:bos>assistant``
and a newline), may report its thinking budget inside it, then calls::

    <seed:think>
    The user wants the weather in Barcelona. I should call get_weather.
    </seed:think>
    <seed:tool_call>
    <function=get_weather>
    <parameter=city>Barcelona</parameter>
    <parameter=unit>celsius</parameter>
    </function>
    </seed:tool_call>

Facts relied on:

- Markers and layout: the Seed-OSS chat template (llama.cpp
  models/templates/ByteDance-Seed-OSS.jinja): ``<seed:tool_call>`` then ``<function=NAME>``,
  each argument ``<parameter=KEY>VALUE</parameter>`` on its own line, ``</function>``, and
  ``</seed:tool_call>``, one function per block; a string value is written verbatim.
  llama.cpp's SEED_OSS format, vLLM's seed_oss parsers (the legacy one and the engine one,
  which reuses the Qwen3 XML grammar with the four wrapper markers changed).
- Values are typed by the tool schema (needs_tools); one newline right after
  ``<parameter=KEY>`` and one right before ``</parameter>`` are layout and removed, as vLLM
  does (the same rule as qwen3_coder). A value ends at ``</parameter>`` only where
  a parameter the tool declares (``<parameter=NAME>``), ``</function>`` or
  ``</seed:tool_call>`` comes next, as in qwen3_coder: vLLM ends it at the first
  ``</parameter>`` (a guess that cuts code holding the tag short); a declared parameter
  opening inside a value is a missing ``</parameter>``, an error, where vLLM swallows it.
  With repair the value ends there (``missing_closer``), as before a ``</function>`` that
  came instead of ``</parameter>``; a ``</function>`` left out before
  ``</seed:tool_call>`` is salvaged alike.
- Reasoning: ``<seed:think>`` ... ``</seed:think>``, opened by the model; with a thinking
  budget of 0 the template itself opens it (``<seed:think><seed:cot_budget_reflect>``), so
  use reasoning_in_prompt=True there (a ``<seed:think>`` written anyway is accepted). The
  budget reports ``<seed:cot_budget_reflect>...</seed:cot_budget_reflect>``, sometimes
  unbalanced ("The user's current thinking budget is 512.</seed:cot_budget_reflect>"), are
  part of the reasoning and stay in its text verbatim, as peers keep them.
- Non-string values: the template writes them with Jinja's ``string`` filter, i.e. as
  Python text (``True``, ``['a', 'b']``, ``{'k': 1}``). Booleans in any case and numbers are
  typed; a list or dict is typed only when written as JSON, a Python-literal one stays a
  string (vLLM reads it with ast.literal_eval; the engine converts no Python literals).
- A ``<seed:tool_call>`` inside unfinished reasoning is reasoning text. Peers disagree:
  vLLM's engine parser ends the reasoning there, its legacy parser and seed_oss reasoning
  parser end it only at ``</seed:think>``. The model writes drafts of its calls while it
  thinks (vLLM's Seed-OSS parser tests hold such an output: "The format is
  <seed:tool_call>...</seed:tool_call>. Wait, ..." before ``</seed:think>`` and the real
  call), so ending the reasoning there would run a draft; this follows the model.

Choices: a bare ``<function=...>`` outside a ``<seed:tool_call>`` block is content (vLLM
falls back to it, but the template never writes it); a block holds one function, as the
template writes it. Whitespace around blocks and after ``</seed:think>`` is consumed, not
content.
"""

from __future__ import annotations

from ..grammar import (
    Grammar,
    choice,
    cut,
    declared_param,
    eof,
    lit,
    many,
    opt,
    ref,
    seq,
    stop,
    tag,
    until,
    ws,
)
from ._base import Format, call_block, reasoning_rules

TOOL_OPEN, TOOL_CLOSE = "<seed:tool_call>", "</seed:tool_call>"
THINK_OPEN, THINK_CLOSE = "<seed:think>", "</seed:think>"
FUNCTION_OPEN, FUNCTION_CLOSE = "<function=", "</function>"
PARAM_OPEN, PARAM_CLOSE = "<parameter=", "</parameter>"

# A value ends at </parameter> only where a parameter the tool declares, or the call's
# end, follows; a declared parameter opening inside a value is a missing </parameter>.
_NEXT_TAG = (FUNCTION_CLOSE, TOOL_CLOSE, declared_param(PARAM_OPEN, ">"))
_VALUE_END = (
    stop("\n" + PARAM_CLOSE, followed_by=_NEXT_TAG),
    stop(PARAM_CLOSE, followed_by=_NEXT_TAG),
    stop(PARAM_OPEN, followed_by=(declared_param(None, ">"),)),
)


FORMAT = Format(
    name="seed_oss",
    description="ByteDance Seed-OSS: <seed:think> reasoning, <seed:tool_call> blocks with "
    "<function=...> and <parameter=...> values typed by the tool schemas",
    families=("Seed-OSS",),
    model_ids=("ByteDance-Seed/Seed-OSS-*",),
    reasoning="optional",
    call_in_reasoning="text",
    needs_tools=True,
    markers=(
        TOOL_OPEN,
        TOOL_CLOSE,
        THINK_OPEN,
        THINK_CLOSE,
        FUNCTION_OPEN,
        FUNCTION_CLOSE,
        PARAM_OPEN,
        PARAM_CLOSE,
    ),
    # plain-text tags: prose that explains the format holds them outside a block
    text_markers=(FUNCTION_OPEN, FUNCTION_CLOSE, PARAM_OPEN, PARAM_CLOSE),
    call_markers=(TOOL_OPEN, TOOL_CLOSE),
    grammar=Grammar(
        rules={
            **reasoning_rules(THINK_OPEN, THINK_CLOSE),
            "body": seq(many(choice(ref("call"), ref("content"))), eof()),
            "call": call_block(
                TOOL_OPEN,
                TOOL_CLOSE,
                seq(
                    lit(FUNCTION_OPEN),
                    tag("tool_name", until(">", need_stop=True)),
                    lit(">"),
                    ws(),
                    many(ref("parameter")),
                    lit(FUNCTION_CLOSE),
                ),
            ),
            "parameter": seq(
                lit(PARAM_OPEN),
                cut(),
                tag("param_name", until(">", need_stop=True)),
                lit(">"),
                opt(lit("\n")),
                tag("param_value", until(*_VALUE_END, need_stop=True)),
                choice(lit("\n" + PARAM_CLOSE), lit(PARAM_CLOSE)),
                ws(),
            ),
            "content": tag("content", until(TOOL_OPEN, min1=True, commit=True)),
        },
        entries={"start": "start", "start_in_reasoning": "start_in_reasoning"},
    ),
    examples=(
        "<seed:think>\nThe user wants the weather in Barcelona.\n</seed:think>\n"
        "<seed:tool_call>\n<function=get_weather>\n<parameter=city>Barcelona</parameter>\n"
        "</function>\n</seed:tool_call>",
    ),
)
