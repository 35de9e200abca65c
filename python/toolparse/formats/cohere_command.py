"""Cohere Command A and Command R / R+: action blocks of ``tool_name`` / ``parameters`` calls.

Command A (and its Reasoning, Vision and Plus variants, and the North models) write a plan,
then one action with every call::

    <|START_THINKING|>I will look up the weather in both cities.<|END_THINKING|><|START_ACTION|>[
        {"tool_call_id": "0", "tool_name": "get_weather", "parameters": {"city": "Paris"}},
        {"tool_call_id": "1", "tool_name": "get_weather", "parameters": {"city": "Rome"}}
    ]<|END_ACTION|>

and answer between ``<|START_RESPONSE|>`` and ``<|END_RESPONSE|>`` (Command A) or
``<|START_TEXT|>`` and ``<|END_TEXT|>`` (Command A Plus, North).  Command R and R+ write
plain-text actions in a fenced block::

    Action: ```json
    [
        {
            "tool_name": "get_weather",
            "parameters": {
                "city": "Paris"
            }
        }
    ]
    ```

Facts this grammar relies on, and where they come from:

- Command A shares Command R7B's grammar (command_r7b.py, whose markers and call object
  this module imports): Cohere's own output parser, the ``cohere_melody`` library that
  vLLM's cohere_command3 / cohere_command4 parsers call, reads its "cmd3" outputs with
  ``<|START_THINKING|>`` / ``<|END_THINKING|>`` (reasoning), ``<|START_ACTION|>`` /
  ``<|END_ACTION|>`` (a JSON list of calls with ``"tool_call_id"``, ``"tool_name"`` and
  ``"parameters"``) and ``<|START_RESPONSE|>`` / ``<|END_RESPONSE|>`` (the answer); its
  "cmd4" outputs alike, with ``<|START_TEXT|>`` / ``<|END_TEXT|>`` for the answer.  Its
  cmd3 template renders past calls in that key order, the list spread over lines, ids
  "0", "1", ...; so the id arrives before the arguments and is the call's id.
- vLLM's documentation lists cohere_command3 for Command A Reasoning; the Command A Plus
  and North model cards serve them with cohere_command4.  SGLang's cohere_command4
  detector reads the same action block (and also a lone object without the brackets, as
  this grammar does).
- The model writes ``<|START_THINKING|>`` itself: melody's cmd3 and cmd4 templates end
  the prompt at ``<|CHATBOT_TOKEN|>``, and its reasoning preamble tells the model to start
  with ``<|START_THINKING|>``.  llama.cpp's Cohere2 MoE (North) handler says that model's
  template opens the block itself when reasoning is on; the "start_in_reasoning" entry
  serves it (reasoning_in_prompt=True).  Reasoning ends at ``<|END_THINKING|>``, and also
  where an action or an answer opens inside it: melody switches mode on each of its
  special tokens whatever the current mode, and llama.cpp's Cohere2 MoE reasoning stops
  at ``<|START_ACTION|>`` and ``<|START_TEXT|>`` (call_in_reasoning="ends_reasoning").
- Text after ``<|END_THINKING|>`` outside any wrapper is content: melody's
  ``<|END_THINKING|>`` switches to answer mode, and its tests note that the answer
  marker is lost when special tokens are skipped in decoding.
- Command R / R+ (c4ai-command-r-v01, c4ai-command-r-plus and their 08-2024 updates): the
  tool-use chat template asks for "Action:" followed by a JSON list of
  ``{"tool_name", "parameters"}`` objects in a ```` ```json ```` fence, and renders past
  calls as the message text, then ``Action:``, a newline and the fenced list.
  llama.cpp's test for Command-R+ reads ``Action:``, a newline and a ```` ```json ````
  fenced list as calls; vLLM and SGLang have no parser for it.  melody's "multi-hop" mode
  for these older models also knows the plain-text prefixes ``Plan:``, ``Reflection:``,
  ``Answer:`` and ``Grounded answer:``.

Choices:

- ``Action:`` opens a call list only where optional whitespace and ```` ```json ```` follow
  it; anywhere else it is text.  Text before it (a ``Plan:`` line, or any message text)
  is content, as the template renders it; so are ``Answer:`` and ``Grounded answer:``
  lines: these prefixes are plain text, and stay in the content as written.  Grounding
  tags in answers (``<co>...</co: 0:[1]>``) are kept in the content as written too.
- A call inside a list ends once what follows it is known: a comma (another call) or
  ``]`` and the closing marker (``<|END_ACTION|>``, or the closing fence).  A bad element
  reports an error and the rest of the block is skipped (calls before it stand).
  ``"arguments"`` is read like ``"parameters"``.  ``directly-answer`` / ``directly_answer``
  (the R models' way of saying no tool is needed) is a call like any other: a tool the
  application did not give is an unknown tool.
- The answer wrappers, ``<|END_OF_TURN_TOKEN|>`` and a ``<|END_THINKING|>`` with no open
  block are dropped, with the whitespace after the closing ones; a later
  ``<|START_THINKING|>`` opens reasoning again.  Text after ``<|END_ACTION|>`` or
  ``<|END_RESPONSE|>`` is content (melody drops it; the model ends its turn there).
- A ``<|CHATBOT_TOKEN|>`` opening the output (the turn's role token, which the prompt
  ends with and a serving stack may echo) is dropped; anywhere else in the body it is an
  unexpected error and skipped, never content (as in command_r7b.py).
"""

from __future__ import annotations

from ..grammar import (
    Grammar,
    choice,
    cut,
    eof,
    lit,
    many,
    recover,
    ref,
    seq,
    stop,
    tag,
    until,
    ws,
)
from ._base import Format, call_array, reasoning_rules, skip_past
from .command_r7b import (
    ACTION_CLOSE,
    ACTION_OPEN,
    CHATBOT,
    RESPONSE_CLOSE,
    RESPONSE_OPEN,
    THINK_CLOSE,
    THINK_OPEN,
    role_token_rules,
)
from .command_r7b import _call as _action_call

TEXT_OPEN, TEXT_CLOSE = "<|START_TEXT|>", "<|END_TEXT|>"
TURN_END = "<|END_OF_TURN_TOKEN|>"
ACTION_WORD, FENCE_JSON, FENCE = "Action:", "```json", "```"

FORMAT = Format(
    name="cohere_command",
    aliases=("cohere_command3", "cohere_command4", "cohere2moe", "command-a", "command-r"),
    description="Cohere Command A (<|START_ACTION|> JSON list of calls with ids, "
    "<|START_THINKING|> plan, <|START_RESPONSE|>/<|START_TEXT|> answer) and Command R/R+ "
    "(Action: ```json fenced list)",
    families=("Command A", "Command A Reasoning", "Command A Plus", "North", "Command R"),
    model_ids=(
        "CohereLabs/c4ai-command-a-*",
        "CohereLabs/command-a-*",
        "CohereLabs/North-*",
        "CohereLabs/c4ai-command-r-*",
        "CohereForAI/c4ai-command-a-*",
        "CohereForAI/c4ai-command-r-*",
    ),
    reasoning="optional",
    call_in_reasoning="ends_reasoning",
    carries_ids=True,
    markers=(
        THINK_OPEN,
        THINK_CLOSE,
        ACTION_OPEN,
        ACTION_CLOSE,
        RESPONSE_OPEN,
        RESPONSE_CLOSE,
        TEXT_OPEN,
        TEXT_CLOSE,
        TURN_END,
        CHATBOT,
    ),
    call_markers=None,
    grammar=Grammar(
        rules={
            **reasoning_rules(THINK_OPEN, THINK_CLOSE, ACTION_OPEN, RESPONSE_OPEN, TEXT_OPEN),
            **role_token_rules(THINK_OPEN),
            "body": seq(
                many(
                    choice(
                        ref("think"),
                        ref("action"),
                        ref("fenced_action"),
                        ref("wrapper"),
                        ref("stray_role"),
                        ref("content"),
                    )
                ),
                eof(),
            ),
            # <|START_ACTION|>[{"tool_call_id": "0", "tool_name": ..., "parameters": {...}}]
            # <|END_ACTION|>, or one object without the brackets
            "action": seq(
                lit(ACTION_OPEN),
                cut(),
                recover(
                    seq(
                        ws(),
                        choice(
                            call_array(_action_call, ACTION_CLOSE),
                            tag("tool_call", seq(_action_call, ws(), lit(ACTION_CLOSE))),
                        ),
                    ),
                    skip_past(ACTION_CLOSE),
                ),
                ws(),
            ),
            # Action: ```json\n[{"tool_name": ..., "parameters": {...}}]\n```
            "fenced_action": seq(
                lit(ACTION_WORD),
                ws(),
                lit(FENCE_JSON),
                cut(),
                recover(seq(ws(), call_array(_action_call, FENCE)), skip_past(FENCE)),
                ws(),
            ),
            "wrapper": choice(
                lit(RESPONSE_OPEN),
                lit(TEXT_OPEN),
                seq(choice(lit(RESPONSE_CLOSE), lit(TEXT_CLOSE), lit(TURN_END)), ws()),
                seq(lit(THINK_CLOSE), ws()),
            ),
            "content": tag(
                "content",
                until(
                    THINK_OPEN,
                    THINK_CLOSE,
                    ACTION_OPEN,
                    RESPONSE_OPEN,
                    RESPONSE_CLOSE,
                    TEXT_OPEN,
                    TEXT_CLOSE,
                    TURN_END,
                    CHATBOT,
                    stop(ACTION_WORD, followed_by=(FENCE_JSON,)),
                    min1=True,
                    commit=True,
                ),
            ),
        },
        entries={"start": "start", "start_in_reasoning": "start_in_reasoning"},
    ),
    examples=(
        "<|START_THINKING|>I will look up the weather.<|END_THINKING|><|START_ACTION|>[\n"
        '    {"tool_call_id": "0", "tool_name": "get_weather", "parameters": {"city": "Paris"}}\n'
        "]<|END_ACTION|>",
        'Action: ```json\n[\n    {\n        "tool_name": "get_weather",\n'
        '        "parameters": {\n            "city": "Paris"\n        }\n    }\n]\n```',
    ),
)
