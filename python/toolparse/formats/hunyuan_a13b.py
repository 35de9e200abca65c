"""Tencent Hunyuan-A13B: ``<think>`` reasoning, an ``<answer>`` block holding the reply or
``<tool_calls>[{"name": ..., "arguments": {...}}, ...]</tool_calls>``.

What the model writes (slow thinking, the default; the tool-calls array is one line)::

    <think>
    The user wants the weather in Shenzhen.
    </think>
    <answer>
    <tool_calls>[{"name": "get_weather", "arguments": {"city": "Shenzhen"}}]</tool_calls>
    </answer>

and a plain reply, which the tool prompt asks to open with "助手" and a full-width colon
(U+FF1A; "Assistant:"), written here as ``助手:``::

    <think>
    Nothing to look up.
    </think>
    <answer>
    助手:Hello! How can I help?
    </answer>

Facts relied on:

- Calls: the Hunyuan-A13B chat template (tokenizer_config.json) tells the model to format
  calls as ``<tool_calls>[{"name": "func_name1", "arguments": {...}},...]</tool_calls>`` and
  renders past calls the same way (``, `` between elements); Tencent's agent guide shows the
  output above.  vLLM's hunyuan_a13b tool parser reads the JSON array between
  ``<tool_calls>`` and ``</tool_calls>``, keeps the text before the block as content, and
  skips a block that lies inside ``<think>...</think>`` (call_in_reasoning="text").
- Reasoning and answer: vLLM's hunyuan_a13b reasoning parser treats ``<think>\\n``,
  ``\\n</think>\\n<answer>\\n`` and ``\\n</answer>`` as the markers, so the newline inside
  each tag pair is layout, not text; here one newline after ``<think>`` and ``<answer>``
  and before ``</think>`` and ``</answer>`` is dropped, and so is whitespace after
  ``</think>``, ``<answer>``, ``</answer>`` and ``</tool_calls>``.  The ``<answer>`` tags
  never reach the content.
- Fast thinking (``enable_thinking=False`` or ``/no_think``): the template itself appends
  ``<think>\\n\\n</think>\\n``, so the output starts at ``<answer>``; the default entry reads
  that too (a ``<think>`` block is optional).
- The reply prefix (``助手`` and U+FF1A): the tool prompt asks for plain replies to start
  with it; vLLM removes it from content when there is no call.  Here it is dropped where
  the reply starts (right after ``<answer>`` or at the start of the body), and kept
  anywhere else.

Choices: text around a block is content (vLLM drops text after it); several blocks are
all parsed.  Not pinned down: the exact whitespace the model writes around
``<tool_calls>`` inside ``<answer>`` (the agent guide shows a newline on each side; the
training samples none); both parse the same.
"""

from __future__ import annotations

from ..grammar import Grammar, choice, cut, eof, lit, many, opt, ref, seq, tag, until, ws
from ._base import Format
from ._tool_calls import TOOL_CALLS_CLOSE, TOOL_CALLS_OPEN, tool_calls_block

THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
ANSWER_OPEN, ANSWER_CLOSE = "<answer>", "</answer>"
REPLY_PREFIX = "\u52a9\u624b\uff1a"  # 助手 and a full-width colon

_reasoning_rest = seq(
    tag("reasoning", until("\n" + THINK_CLOSE, THINK_CLOSE)),
    opt(seq(opt(lit("\n")), lit(THINK_CLOSE), ws())),
)

FORMAT = Format(
    name="hunyuan_a13b",
    description="Tencent Hunyuan-A13B: <think> reasoning, <answer> reply or <tool_calls> JSON "
    "array of calls",
    families=("Hunyuan-A13B",),
    model_ids=("tencent/Hunyuan-A13B-*",),
    reasoning="optional",
    call_in_reasoning="text",
    markers=(THINK_OPEN, THINK_CLOSE, ANSWER_OPEN, ANSWER_CLOSE, TOOL_CALLS_OPEN, TOOL_CALLS_CLOSE),
    call_markers=None,
    grammar=Grammar(
        rules={
            "start": seq(ws(), opt(ref("think")), ref("body")),
            "start_in_reasoning": seq(
                opt(seq(ws(), lit(THINK_OPEN))), ref("reasoning_rest"), ref("body")
            ),
            "think": seq(lit(THINK_OPEN), cut(), opt(lit("\n")), ref("reasoning_rest")),
            "reasoning_rest": _reasoning_rest,
            "body": seq(
                opt(lit(REPLY_PREFIX)),
                many(choice(ref("tools"), ref("answer_open"), ref("answer_close"), ref("content"))),
                eof(),
            ),
            "tools": tool_calls_block(),
            "answer_open": seq(lit(ANSWER_OPEN), ws(), opt(lit(REPLY_PREFIX))),
            "answer_close": seq(opt(lit("\n")), lit(ANSWER_CLOSE), ws()),
            "content": tag(
                "content",
                until(
                    TOOL_CALLS_OPEN,
                    ANSWER_OPEN,
                    "\n" + ANSWER_CLOSE,
                    ANSWER_CLOSE,
                    min1=True,
                    commit=True,
                ),
            ),
        },
        entries={"start": "start", "start_in_reasoning": "start_in_reasoning"},
    ),
    examples=(
        "<think>\nThe user wants the weather in Shenzhen.\n</think>\n<answer>\n"
        '<tool_calls>[{"name": "get_weather", "arguments": {"city": "Shenzhen"}}]</tool_calls>\n'
        "</answer>",
    ),
)
