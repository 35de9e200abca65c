"""Cohere Command R7B: ``<|START_ACTION|>[{"tool_call_id", "tool_name", "parameters"}, ...]``.

What the model writes when it uses tools (a plan, then one action with every call)::

    <|START_THINKING|>I will look up the weather in both cities.<|END_THINKING|><|START_ACTION|>[
        {"tool_call_id": "0", "tool_name": "get_weather", "parameters": {"city": "Paris"}},
        {"tool_call_id": "1", "tool_name": "get_weather", "parameters": {"city": "Rome"}}
    ]<|END_ACTION|>

and when it answers::

    <|START_RESPONSE|>It is sunny in Paris today.<|END_RESPONSE|>

Facts this grammar relies on:

- The tool-use chat template (c4ai-command-r7b-12-2024) describes the steps: an optional
  plan between ``<|START_THINKING|>`` and ``<|END_THINKING|>``, then an action,
  ``<|START_ACTION|>`` with a JSON list of calls that each carry ``"tool_call_id"``,
  ``"tool_name"`` and ``"parameters"``, closed by ``<|END_ACTION|>``; or the answer
  between ``<|START_RESPONSE|>`` and ``<|END_RESPONSE|>``.  It renders past calls with
  ids "0", "1", ... in that key order, so the id arrives before the arguments and is the
  call's id (carries_ids).  llama.cpp's COMMAND_R7B parser and vLLM's Cohere parsers
  read the same shapes.
- The template does not open the thinking block; the model writes it (a
  "start_in_reasoning" entry serves llama.cpp's forced-open mode).  Reasoning ends only at
  ``<|END_THINKING|>`` (llama.cpp): call_in_reasoning="text".  Whitespace after a closing
  marker is not content.
- The response wrappers are dropped and what they hold is content; text outside any
  wrapper is content too (llama.cpp keeps it).  The template pretty-prints the action
  list across lines; any JSON whitespace is accepted.
- A call inside the list ends once what follows it is known: a comma (another call) or
  ``]`` and ``<|END_ACTION|>``.  A bad element reports an error and the rest of the
  action is skipped (calls before it stand).  ``"arguments"`` is accepted in place of
  ``"parameters"``.
- ``<|CHATBOT_TOKEN|>`` is the role token of the model's turn: the template's generation
  prompt ends with ``<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>``, and a serving stack that
  echoes it puts it at the start of the output.  There it is dropped (before the
  whitespace and the thinking block that may follow); anywhere else in the body it is an
  unexpected error and is skipped, never content.  The peers have no rule for it (their
  tests do not feed it), so it would reach their content.
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
    not_ahead,
    opt,
    recover,
    ref,
    seq,
    tag,
    until,
    ws,
)
from ._base import Format, call_array, reasoning_rules, skip_past

THINK_OPEN, THINK_CLOSE = "<|START_THINKING|>", "<|END_THINKING|>"
ACTION_OPEN, ACTION_CLOSE = "<|START_ACTION|>", "<|END_ACTION|>"
RESPONSE_OPEN, RESPONSE_CLOSE = "<|START_RESPONSE|>", "<|END_RESPONSE|>"
CHATBOT = "<|CHATBOT_TOKEN|>"


def role_token_rules(think_open: str) -> dict[str, Node]:
    """The entry rules with a leading ``<|CHATBOT_TOKEN|>`` dropped (over those of
    reasoning_rules), and "stray_role": that token anywhere else, an unexpected error."""
    return {
        "start": seq(ws(), opt(seq(lit(CHATBOT), ws())), opt(ref("think")), ref("body")),
        "start_in_reasoning": seq(
            opt(seq(ws(), lit(CHATBOT))),
            opt(seq(ws(), lit(think_open))),
            ref("reasoning_rest"),
            ref("body"),
        ),
        "stray_role": seq(
            ahead(lit(CHATBOT)),
            recover(seq(not_ahead(lit(CHATBOT)), lit(CHATBOT)), lit(CHATBOT)),
        ),
    }


_call = json_call(("tool_name",), ("parameters", "arguments"), ("tool_call_id",))

FORMAT = Format(
    name="command_r7b",
    aliases=("command-r7b",),
    description="Cohere Command R7B: <|START_THINKING|> plan, <|START_ACTION|> JSON list of "
    "calls with ids, <|START_RESPONSE|> answer",
    families=("Command R7B",),
    model_ids=("CohereLabs/c4ai-command-r7b*", "CohereForAI/c4ai-command-r7b*"),
    reasoning="optional",
    call_in_reasoning="text",
    carries_ids=True,
    markers=(
        THINK_OPEN,
        THINK_CLOSE,
        ACTION_OPEN,
        ACTION_CLOSE,
        RESPONSE_OPEN,
        RESPONSE_CLOSE,
        CHATBOT,
    ),
    call_markers=None,
    grammar=Grammar(
        rules={
            **reasoning_rules(THINK_OPEN, THINK_CLOSE),
            **role_token_rules(THINK_OPEN),
            "body": seq(
                many(choice(ref("action"), ref("wrapper"), ref("stray_role"), ref("content"))),
                eof(),
            ),
            "action": seq(
                lit(ACTION_OPEN),
                cut(),
                recover(seq(ws(), call_array(_call, ACTION_CLOSE)), skip_past(ACTION_CLOSE)),
                ws(),
            ),
            "wrapper": choice(lit(RESPONSE_OPEN), seq(lit(RESPONSE_CLOSE), ws())),
            "content": tag(
                "content",
                until(ACTION_OPEN, RESPONSE_OPEN, RESPONSE_CLOSE, CHATBOT, min1=True, commit=True),
            ),
        },
        entries={"start": "start", "start_in_reasoning": "start_in_reasoning"},
    ),
    examples=(
        "<|START_THINKING|>I will look up the weather.<|END_THINKING|><|START_ACTION|>[\n"
        '    {"tool_call_id": "0", "tool_name": "get_weather", "parameters": {"city": "Paris"}}\n'
        "]<|END_ACTION|>",
    ),
)
