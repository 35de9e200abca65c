"""Qwen3: hermes calls after a ``<think>`` block; a call before ``</think>`` ends the reasoning.

Reka Edge writes the same: ``<tool_call>`` JSON blocks, after reasoning that its template
opens with ``<think>`` when thinking is on (llama.cpp's Reka-Edge template tests: the output
starts inside the block and closes it with ``</think>``); pass reasoning_in_prompt=True
there.  llama.cpp keeps a ``<tool_call>`` inside unfinished reasoning as reasoning text;
here it ends the reasoning, as for Qwen3.
"""

from __future__ import annotations

from ..grammar import Grammar
from ._base import Format, reasoning_rules
from .hermes import THINK_CLOSE, THINK_OPEN, TOOL_CLOSE, TOOL_OPEN, json_call_body

# A <tool_call> inside unfinished reasoning ends it: some models never close the block
# before calling, and treating the call as reasoning stalls the agent.

FORMAT = Format(
    name="qwen3",
    aliases=("qwen3_json", "qwen3-thinking"),
    description="Qwen3 and QwQ: <think> reasoning (opened by the model or by the template), "
    "then <tool_call> JSON calls",
    families=("Qwen3", "QwQ", "Reka Edge"),
    model_ids=("Qwen/Qwen3-*", "Qwen/QwQ-*", "RekaAI/reka-edge-*"),
    reasoning="optional",
    call_in_reasoning="ends_reasoning",
    markers=(TOOL_OPEN, TOOL_CLOSE, THINK_OPEN, THINK_CLOSE),
    call_markers=(TOOL_OPEN, TOOL_CLOSE),
    grammar=Grammar(
        rules={
            **reasoning_rules(THINK_OPEN, THINK_CLOSE, TOOL_OPEN),
        }
        | json_call_body(),
        entries={"start": "start", "start_in_reasoning": "start_in_reasoning"},
    ),
    examples=(
        "<think>\nThe user wants the weather.\n</think>\n\n<tool_call>\n"
        '{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
    ),
)
