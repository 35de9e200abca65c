"""Salesforce xLAM-2: a JSON list of ``{"name": ..., "arguments": {...}}`` calls.

What the model writes when it calls tools (the whole output, on one line)::

    [{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "get_weather",
    "arguments": {"city": "Rome"}}]

and plain text when it answers.

Facts this grammar relies on:

- The xLAM-2 chat templates (the Llama based ``Llama-xLAM-2-*-fc-r`` and the Qwen2.5
  based ``xLAM-2-*-fc-r``; vLLM ships both as ``tool_chat_template_xlam_llama.jinja`` and
  ``tool_chat_template_xlam_qwen.jinja``) tell the model to "make calls in a single JSON
  array" of ``{"name", "arguments"}`` objects and to answer in plain text otherwise.  A
  past turn with calls is rendered as that array and nothing else, name first, arguments
  as a JSON object; a past turn with an empty call list and no text as ``[]``.
- vLLM's xlam parser (the only peer with this format) also finds the array in a
  ```` ``` ```` or ```` ```json ```` fence, after ``[TOOL_CALLS]``, between
  ``<tool_call>`` and ``</tool_call>``, and after ``</think>``; each element needs both
  ``"name"`` and ``"arguments"``.  Its tests use each of these forms, with text before
  the call ("I'll check the weather for you.[TOOL_CALLS][...]") kept as content.

Choices:

- A bare array is a call list only where the output (or the text after the reasoning)
  begins with it, as in vLLM: ``[`` then ``{`` and a ``"name"`` (or ``"arguments"``) key,
  or ``[]`` (an empty call list: no calls, no content).  A list anywhere else, or one
  whose first element is not shaped like a call (``[1, 2]``, ``[{"city": ...}]``), is
  content.  Only that much is held back before the list commits, so text streams at once.
- The marked forms, ``[TOOL_CALLS][...]`` and ``<tool_call>[...]</tool_call>``, are calls
  wherever they appear; text before and after them is content.  Inside ``<tool_call>`` a
  single object without the brackets is also a call (Qwen-style; vLLM would take the
  block as content).  A fence is a call list when a list of calls opens it (```` ``` ````
  or ```` ```json ````, whitespace, ``[{"name"``); any other fenced block is content.
- Each call inside a list ends once what follows it is known: a comma (another call) or
  ``]`` (and the closing marker, where the form has one).  ``"parameters"`` is read like
  ``"arguments"``; other keys are ignored.  Arguments that are not a JSON object (a JSON
  string of arguments) are invalid arguments, never a guessed call.  A broken list
  reports the error and its rest is skipped: to its closing marker, or, for the bare and
  ``[TOOL_CALLS]`` lists, to the next marker or the end.
- Reasoning: ``<think>...</think>`` at the start is reasoning (vLLM returns it as part of
  the content, with the tags); a call list inside it is reasoning text.  A ``</think>``
  with no opening tag is dropped and what came before it stays content; a list right
  after it is read as at the start of the output.  With reasoning_in_prompt the output
  starts inside the block.
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
    tag,
    until,
    ws,
)
from ._base import Format, call_array, reasoning_rules, skip_past

THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
TOOL_CALL_OPEN, TOOL_CALL_CLOSE = "<tool_call>", "</tool_call>"
TOOL_CALLS = "[TOOL_CALLS]"
FENCE = "```"

_call = json_call(("name",), ("arguments", "parameters"))


def _list_head(*, empty: bool) -> Node:
    """What opens a list of calls: ``[`` then a call object's first key (or, with empty,
    ``]``).  Used as a lookahead, so nothing is committed before it has matched."""
    first_key = seq(lit("{"), ws(), choice(lit('"name"'), lit('"arguments"')), ws(), lit(":"))
    return seq(lit("["), ws(), choice(lit("]"), first_key) if empty else first_key)


# Blocks without a closing marker resynchronize at the next marker.
_resync = until(TOOL_CALL_OPEN, TOOL_CALLS, FENCE)

FORMAT = Format(
    name="xlam",
    description="Salesforce xLAM-2: a JSON list of {name, arguments} calls, bare at the start, "
    "or fenced, after [TOOL_CALLS], or in <tool_call>; optional <think> block",
    families=("xLAM-2",),
    model_ids=("Salesforce/Llama-xLAM-2-*", "Salesforce/xLAM-2-*"),
    reasoning="optional",
    call_in_reasoning="text",
    markers=(TOOL_CALL_OPEN, TOOL_CALL_CLOSE, TOOL_CALLS, THINK_OPEN, THINK_CLOSE),
    call_markers=None,
    grammar=Grammar(
        rules={
            **reasoning_rules(THINK_OPEN, THINK_CLOSE),
            "body": seq(
                opt(ref("bare_list")),
                many(
                    choice(
                        ref("stray_think_close"),
                        ref("tool_call_block"),
                        ref("tool_calls_list"),
                        ref("fenced_list"),
                        ref("content"),
                    )
                ),
                eof(),
            ),
            # [{"name": ..., "arguments": {...}}, ...] opening the output
            "bare_list": seq(
                ahead(_list_head(empty=True)),
                cut(),
                recover(call_array(_call, None), _resync),
                ws(),
            ),
            "stray_think_close": seq(lit(THINK_CLOSE), ws(), opt(ref("bare_list"))),
            # <tool_call>[...]</tool_call>, or one object: <tool_call>{...}</tool_call>
            "tool_call_block": seq(
                lit(TOOL_CALL_OPEN),
                cut(),
                recover(
                    seq(
                        ws(),
                        choice(
                            call_array(_call, TOOL_CALL_CLOSE),
                            tag("tool_call", seq(_call, ws(), lit(TOOL_CALL_CLOSE))),
                        ),
                    ),
                    skip_past(TOOL_CALL_CLOSE),
                ),
                ws(),
            ),
            # [TOOL_CALLS][...]
            "tool_calls_list": seq(
                lit(TOOL_CALLS),
                cut(),
                recover(seq(ws(), call_array(_call, None)), _resync),
                ws(),
            ),
            # ```json\n[...]\n``` (or a plain fence), when a list of calls opens it
            "fenced_list": seq(
                ahead(seq(lit(FENCE), opt(lit("json")), ws(), _list_head(empty=False))),
                lit(FENCE),
                opt(lit("json")),
                cut(),
                recover(seq(ws(), call_array(_call, FENCE)), skip_past(FENCE)),
                ws(),
            ),
            # A fence that does not open a list of calls is content like the rest.
            "content": tag(
                "content",
                choice(
                    until(TOOL_CALL_OPEN, TOOL_CALLS, FENCE, THINK_CLOSE, min1=True, commit=True),
                    lit(FENCE),
                ),
            ),
        },
        entries={"start": "start", "start_in_reasoning": "start_in_reasoning"},
    ),
    examples=(
        '[{"name": "get_weather", "arguments": {"city": "Paris"}}]',
        'I\'ll check.\n```json\n[{"name": "get_weather", "arguments": {"city": "Paris"}}]\n```',
    ),
)
