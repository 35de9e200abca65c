"""NAVER HyperCLOVA X SEED Think 14B: a JSON list of calls in an ``assistant -> tool/function_call``
turn.

The generation prompt ends with ``<|im_start|>assistant``; the model's first bytes pick the
turn: ``/think`` and a newline for reasoning, a newline for an answer, or ``->
tool/function_call`` and a newline for calls.  After reasoning it ends that turn and opens
the next one itself::

    /think
    The user wants Seoul's weather; get_weather takes a city.<|im_end|>
    <|im_start|>assistant -> tool/function_call
    [{"name": "get_weather", "arguments": {"city": "Seoul"}}]<|im_end|>

Facts relied on:

- vLLM's hyperclovax_seed_think_14b tool and reasoning parsers and their tests (the only
  peer): the reasoning starts with ``/think`` and a newline (or the prompt ends with
  ``<|im_start|>assistant/think`` and a newline, force_reasoning) and ends at
  ``<|im_end|>`` followed by a newline and ``<|im_start|>assistant``; the calls are a JSON
  array of ``{"name", "arguments"}`` objects (``"parameters"`` also read) after `` ->
  tool/function_call`` and a newline, ended by ``<|im_end|>``; an answer before calls ends
  its turn the same way (``...<|im_end|>\\n<|im_start|>assistant -> tool/function_call\\n[...]``).
  ``<|stop|>`` and ``<|endofturn|>`` also end a turn.  The tool parser also takes a bare
  array (a header already stripped by the reasoning parser) when tools are given; an
  abbreviated ``-> tool/NAME`` and a bare object is content, not a call.

Choices:

- Each turn is read by its role: ``/think`` (reasoning), `` -> tool/function_call``
  (calls), or text (content, after the role's newline).  A ``-> tool/function_call`` that
  follows content in the same turn also opens calls (vLLM's tool parser splits at it
  anywhere).  An array at the very start of the output, ``[`` and ``{"name"``, is calls
  too, as in vLLM.
- A call in the array ends once what follows it is certain (a comma, or ``]``); a list
  cut short delivers only the calls before its last comma, and the cut-off call is
  incomplete (vLLM parses the array only whole).  Arguments written as a JSON string are
  decoded once (vLLM passes the string on as the arguments).  A broken array reports its
  error and is skipped to the turn's ``<|im_end|>``; the calls before it stand (vLLM loses
  them all).  A call with an unknown tool is unknown_tool (vLLM's bare-array path refuses
  the whole array, its header path keeps the call).
- reasoning_in_prompt defaults to False (the model writes its own role suffix); with a
  prompt ending in ``assistant/think`` and a newline pass True.  The reasoning keeps its
  text as written (vLLM strips the newlines around it).
- No marker reaches content: ``<|im_end|>``, ``<|stop|>`` and ``<|endofturn|>`` end a turn
  and are dropped, ``<|im_start|>assistant`` opens the next; a turn of any other role, or a
  stray ``<|im_start|>``, is reported (unexpected) and the rest of the output dropped.
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
    tag,
    until,
    ws,
)
from ._base import Format, call_array, skip_rest

IM_START, IM_END = "<|im_start|>", "<|im_end|>"
TURN_ENDS = (IM_END, "<|stop|>", "<|endofturn|>")
CALL_ROLE = "-> tool/function_call"
ASSISTANT = "assistant"
THINK_ROLE = "/think"
_STOPS = (*TURN_ENDS, IM_START, CALL_ROLE)

FORMAT = Format(
    name="hyperclovax_seed_think_14b",
    aliases=("hyperclovax-seed-think-14b",),
    description="HyperCLOVA X SEED Think 14B: /think reasoning turn, then a JSON list of calls "
    "in an 'assistant -> tool/function_call' turn or an answer turn",
    families=("HyperCLOVA X SEED Think 14B",),
    model_ids=("naver-hyperclovax/HyperCLOVAX-SEED-Think-14B*",),
    reasoning="optional",
    reasoning_openers=(f"{IM_START}{ASSISTANT}{THINK_ROLE}\n",),
    markers=(IM_START, *TURN_ENDS, CALL_ROLE),
    call_markers=None,
    grammar=Grammar(
        rules={
            # the opening turn: reasoning (then the turns after it), or an answer
            "start": seq(
                opt(seq(lit(THINK_ROLE), cut(), opt(lit("\n")), ref("reasoning"))), ref("body")
            ),
            "start_in_reasoning": seq(ref("reasoning"), ref("body")),
            "body": seq(ref("answer"), many(ref("next_turn")), eof()),
            # what follows a role: reasoning, or an answer of calls or text
            "turn": choice(
                seq(lit(THINK_ROLE), cut(), opt(lit("\n")), ref("reasoning")), ref("answer")
            ),
            "answer": choice(
                ref("calls"),
                seq(ahead(seq(lit("["), ws(), lit("{"), ws(), lit('"name"'))), ref("call_list")),
                seq(opt(lit("\n")), opt(ref("content")), opt(ref("calls"))),
            ),
            "reasoning": tag("reasoning", until(*TURN_ENDS, IM_START)),
            "calls": seq(
                opt(lit(" ")), lit(CALL_ROLE), cut(), opt(lit("\n")), ws(), ref("call_list")
            ),
            "call_list": seq(
                recover(
                    call_array(json_call(string_arguments=True), None),
                    until(*TURN_ENDS, IM_START),
                ),
                ws(),
            ),
            "next_turn": seq(
                choice(*(lit(m) for m in TURN_ENDS)),
                ws(),
                opt(
                    seq(
                        lit(IM_START),
                        cut(),
                        recover(seq(lit(ASSISTANT), ref("turn")), skip_rest()),
                    )
                ),
            ),
            "content": tag("content", until(*_STOPS, min1=True, commit=True)),
        },
        entries={"start": "start", "start_in_reasoning": "start_in_reasoning"},
    ),
    examples=(
        "/think\nSeoul weather.<|im_end|>\n<|im_start|>assistant -> tool/function_call\n"
        '[{"name": "get_weather", "arguments": {"city": "Seoul"}}]<|im_end|>',
    ),
)
