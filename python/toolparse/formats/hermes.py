"""Hermes / Qwen2.5 JSON calls: ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``.

llama.cpp parses Xiaomi MiMo-VL (its XIAOMI_MIMO format) as this same shape, and SGLang's
``trinity`` is its Hermes detector under another name, hence the aliases.

Models trained on OpenAI's wire format (Hermes-style fine-tunes, Granite 4) sometimes
write ``"arguments"`` as a JSON string that holds the object, as the API carries it.
The meaning is not in doubt, so the string is decoded once as it streams, and what it
holds must be one JSON object (else invalid_arguments).  vLLM and SGLang pass such a
string through json.dumps again, so the arguments they hand over are a JSON string of
the object, not the object: wrong.  Grammar exports write the object form only.  Qwen3
and Granite 4 share these calls (json_call_body).
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
        "call": call_block(TOOL_OPEN, TOOL_CLOSE, json_call(string_arguments=True)),
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
        "XiaomiMiMo/MiMo-VL-*",
        "speakleash/Bielik-*-v3*",
    ),
    reasoning="optional",
    markers=(TOOL_OPEN, TOOL_CLOSE, THINK_OPEN, THINK_CLOSE),
    # Hermes-style models write think tags as words after their answer has begun: only a
    # leading block is reasoning
    text_markers=(THINK_OPEN, THINK_CLOSE),
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
