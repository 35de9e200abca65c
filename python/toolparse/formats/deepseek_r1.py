# The DeepSeek markers are spelled with U+FF5C FULLWIDTH VERTICAL LINE, on purpose.
# ruff: noqa: RUF001, RUF002
"""DeepSeek-R1, R1-0528 and the R1 distills: <think> reasoning, then DeepSeek-V3 calls.

An output after a prompt that ends with ``<think>\\n`` (the updated R1 template and the
distills' templates), in the shape of llama.cpp's DeepSeek R1 test cases::

    The user wants the weather in Paris. get_weather takes a city.
    </think>

    <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather
    ```json
    {"city": "Paris"}
    ```<｜tool▁call▁end｜><｜tool▁calls▁end｜>

Facts relied on:

- Reasoning is ``<think>`` ... ``</think>``.  The updated R1 chat template and those of
  the R1 distills end the prompt with ``<think>\\n``, so the output starts inside the
  reasoning (llama.cpp sets thinking_forced_open for them); reasoning_in_prompt therefore
  defaults to true.  R1-0528 may write ``<think>`` itself: a ``<think>`` at the start of
  an output that began inside reasoning is dropped, as vLLM's deepseek_r1 reasoning
  parser does.  Without ``</think>`` the whole output is reasoning.
- A call marker inside the reasoning is reasoning text: R1 reasons about the syntax ("It
  starts with <｜tool▁calls▁begin｜> and ends with", a case llama.cpp's tests keep as
  reasoning); calls come after ``</think>``.
- The calls are DeepSeek-V3's (see deepseek_v3): ``function<｜tool▁sep｜>NAME`` and a
  ```` ```json ```` fence, with the section openers the distills really write
  (``<｜tool▁calls｜>``, ``<｜tool_calls_begin｜>``, ``<｜tool calls begin｜>``,
  ``<｜tool\\_calls\\_begin｜>``; llama.cpp: the Distill Qwen 7B and 32B models "seem
  confused re/ syntax of their tool call opening tag") and a first call without
  ``<｜tool▁call▁begin｜>``.

Choices: the whitespace after ``</think>`` is not content; otherwise as deepseek_v3,
also for a section cut off or followed by something that is not a call, and for a
stray ``<｜tool▁sep｜>`` or ``<｜tool▁call▁end｜>``.  After the reasoning, a ``<think>`` or
``</think>`` in the content is reported (unexpected) and dropped, never content.
"""

from __future__ import annotations

from ..grammar import Grammar, opt, ref, seq, ws
from ._base import Format
from ._deepseek import (
    CALL_BEGIN,
    CALL_END,
    THINK_CLOSE,
    THINK_OPEN,
    TOKEN_MARKERS,
    fenced_call_body,
    reasoning_rules,
    token_body,
)

FORMAT = Format(
    name="deepseek_r1",
    aliases=("deepseekr1", "deepseek-r1"),
    description="DeepSeek-R1, R1-0528 and the R1 distills: <think> reasoning (usually opened "
    "by the template), then DeepSeek-V3 fenced JSON calls",
    families=("DeepSeek-R1", "DeepSeek-R1-0528", "DeepSeek-R1-Distill"),
    model_ids=("deepseek-ai/DeepSeek-R1*",),
    reasoning="optional",
    reasoning_in_prompt=True,
    call_in_reasoning="text",
    markers=(*TOKEN_MARKERS, THINK_OPEN, THINK_CLOSE),
    call_markers=(CALL_BEGIN, CALL_END),
    grammar=Grammar(
        rules={"start": seq(ws(), opt(ref("think")), ref("body"))}
        | reasoning_rules()
        | token_body(fenced_call_body(), text_markers=(THINK_OPEN, THINK_CLOSE)),
        entries={"start": "start", "start_in_reasoning": "start_in_reasoning"},
    ),
    examples=(
        "The user wants the weather.\n</think>\n\n<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>"
        'function<｜tool▁sep｜>get_weather\n```json\n{"city": "Paris"}\n```<｜tool▁call▁end｜>'
        "<｜tool▁calls▁end｜>",
    ),
)
