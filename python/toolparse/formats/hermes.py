"""Hermes / Qwen2.5 JSON calls: ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``.

llama.cpp parses Xiaomi MiMo-VL (its XIAOMI_MIMO format) as this same shape, and SGLang's
``trinity`` is its Hermes detector under another name, hence the aliases.
"""

from __future__ import annotations

from ..grammar import Grammar, Node, choice, eof, json_call, many, opt, ref, seq, tag, until, ws
from ._base import Format, call_block, think_block

TOOL_OPEN, TOOL_CLOSE = "<tool_call>", "</tool_call>"
THINK_OPEN, THINK_CLOSE = "<think>", "</think>"


def json_call_body() -> dict[str, Node]:
    """The rules after the reasoning block, shared by the JSON `<tool_call>` formats."""
    return {
        "body": seq(many(choice(ref("call"), ref("content"))), eof()),
        "call": call_block(TOOL_OPEN, TOOL_CLOSE, json_call()),
        "content": tag("content", until(TOOL_OPEN, min1=True, commit=True)),
    }


_think, _ = think_block(THINK_OPEN, THINK_CLOSE)

FORMAT = Format(
    name="hermes",
    aliases=("qwen25", "qwen", "trinity", "xiaomi_mimo"),
    description="Hermes 2/3, Qwen2.5 and other <tool_call> JSON models; optional <think> block",
    families=("Hermes 2 Pro", "Hermes 3", "Qwen2.5"),
    model_ids=(
        "NousResearch/Hermes-2-Pro-*",
        "NousResearch/Hermes-3-*",
        "Qwen/Qwen2.5-*",
        "Qwen/Qwen2-*",
    ),
    reasoning="optional",
    markers=(TOOL_OPEN, TOOL_CLOSE, THINK_OPEN, THINK_CLOSE),
    call_markers=(TOOL_OPEN, TOOL_CLOSE),
    grammar=Grammar(
        rules={"start": seq(ws(), opt(ref("think")), ref("body")), "think": _think}
        | json_call_body(),
        entries={"start": "start"},
    ),
    examples=(
        'Let me check.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n'
        "</tool_call>",
    ),
)
