"""Kimi-VL Thinking: ``◁think▷`` reasoning ``◁/think▷`` then the answer; no tool calls.

What the model writes (Kimi-VL-A3B-Thinking and Kimi-VL-A3B-Thinking-2506)::

    ◁think▷The image shows a tabby cat with an M on its forehead.◁/think▷Tabby.

Facts this grammar relies on:

- SGLang's ``kimi`` reasoning parser (KimiDetector, for the Kimi-VL Thinking models):
  reasoning opens with ``◁think▷`` and closes with ``◁/think▷`` (U+25C1 and U+25B7 around
  the words); without the opening marker the output is plain content (it does not force
  reasoning), an unclosed block is reasoning to the end (the output was cut inside it),
  and the whitespace around the answer is trimmed.  Moonshot's own example code for
  Kimi-VL-A3B-Thinking-2506 splits the output the same way.
- No tool-call syntax is documented for these models (SGLang pairs the ``kimi`` reasoning
  parser with no tool parser), so the format has no calls.

Choices:

- A reasoning block counts only where it opens the output (after optional whitespace),
  as in hermes; whitespace after ``◁/think▷`` is not content.  The markers never reach
  the text: one written later in the answer is dropped (SGLang removes the opening
  marker wherever it appears).
- A "start_in_reasoning" entry serves a prompt that already opened the block (SGLang's
  force_reasoning); an opening marker written anyway is then dropped.

Not pinned down: whether the models ever write a second block later in the answer (it
would be dropped markers around content here).
"""

from __future__ import annotations

from ..grammar import Grammar, choice, eof, lit, many, ref, seq, tag, until, ws
from ._base import Format, reasoning_rules

THINK_OPEN, THINK_CLOSE = "\u25c1think\u25b7", "\u25c1/think\u25b7"

FORMAT = Format(
    name="kimi",
    description="Kimi-VL Thinking: ◁think▷ reasoning ◁/think▷, then the answer; no tool calls",
    families=("Kimi-VL Thinking",),
    model_ids=("moonshotai/Kimi-VL-A3B-Thinking*",),
    reasoning="optional",
    call_in_reasoning="text",
    markers=(THINK_OPEN, THINK_CLOSE),
    call_markers=None,
    parallel_calls=False,
    tool_calls=False,
    grammar=Grammar(
        rules={
            **reasoning_rules(THINK_OPEN, THINK_CLOSE),
            "body": seq(many(choice(ref("stray"), ref("content"))), eof()),
            "stray": seq(choice(lit(THINK_OPEN), lit(THINK_CLOSE)), ws()),
            "content": tag("content", until(THINK_OPEN, THINK_CLOSE, min1=True, commit=True)),
        },
        entries={"start": "start", "start_in_reasoning": "start_in_reasoning"},
    ),
    examples=("\u25c1think\u25b7The image shows a tabby cat.\u25c1/think\u25b7Tabby.",),
)
