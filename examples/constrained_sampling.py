"""Constrained sampling: llguidance keeps the model inside the format and each tool's JSON
Schema, and toolparse parses the same tokens into events as they come.

Runs anywhere (pip install toolparse llguidance):  python examples/constrained_sampling.py
The model here is a toy with one token per byte that means to write a call with "days"
as a string; the grammar lets only an integer through.  With a real model, the mask
applies to the logits of its forward pass (docs/export.md has that loop with numpy).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import ClassVar

import llguidance

import toolparse
import toolparse.export

TOOLS = json.loads((Path(__file__).parent / "tools.json").read_text(encoding="utf-8"))
EOS = 256  # one token per byte, then end of sequence
# what the toy model means to write: "days" is an integer in the tool's schema
PLAN = (
    b'<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo", "days": "3"}}\n'
    b"</tool_call>"
)


class ByteTokenizer:
    """What llguidance needs to know of a tokenizer: its tokens and end token."""

    tokens = [bytes([b]) for b in range(256)] + [b"<eos>"]
    eos_token_id = EOS
    bos_token_id = None
    special_token_ids: ClassVar[list[int]] = [EOS]

    def __call__(self, text: str | bytes) -> list[int]:
        return list(text.encode() if isinstance(text, str) else text)


class ToyModel:
    """Plans its output byte by byte and takes the best token the mask allows: its next
    planned byte, or the one after it when that is forbidden, then the end."""

    def __init__(self, plan: bytes) -> None:
        self.plan, self.at = plan, 0

    def sample(self, allowed: bytes) -> int:
        while self.at < len(self.plan):
            token = self.plan[self.at]
            self.at += 1
            if allowed[token // 8] >> (token % 8) & 1:
                return token
        return EOS


def constrained_call(plan: bytes) -> toolparse.Message:
    fmt = toolparse.get_format("hermes")
    tokenizer = llguidance.LLTokenizer(llguidance.TokenizerWrapper(ByteTokenizer()))
    matcher = llguidance.LLMatcher(
        tokenizer, toolparse.export.lark(fmt, TOOLS, tool_choice="required")
    )
    vocab = toolparse.Vocab([*ByteTokenizer.tokens[:EOS], b""])  # the end token adds no text
    parser = toolparse.StreamParser(fmt, tools=TOOLS, vocab=vocab)
    model = ToyModel(plan)
    while not matcher.is_stopped():
        token = model.sample(matcher.compute_bitmask())  # the mask: one bit per token
        assert matcher.consume_token(token), matcher.get_error()
        if token == EOS:
            break
        for event in parser.feed_tokens([token]):
            if isinstance(event, toolparse.ToolCallStart):
                print(f"[call {event.name}] ", end="")
            elif isinstance(event, toolparse.ToolCallArgsDelta):
                print(event.text, end="", flush=True)
    parser.finish()
    print()
    return parser.message


if __name__ == "__main__":
    message = constrained_call(PLAN)
    print("arguments:", message.tool_calls[0].arguments)
