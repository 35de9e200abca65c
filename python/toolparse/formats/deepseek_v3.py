# The DeepSeek markers are spelled with U+FF5C FULLWIDTH VERTICAL LINE, on purpose.
# ruff: noqa: RUF001, RUF002
"""DeepSeek-V3, V3-0324 and V2.5 tool calls: a section of fenced JSON calls between tokens.

Two parallel calls, as the V3-0324 chat template writes them and SGLang's deepseekv3
parser documents them::

    <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_current_weather
    ```json
    {"location": "Tokyo"}
    ```<｜tool▁call▁end｜>
    <｜tool▁call▁begin｜>function<｜tool▁sep｜>get_current_weather
    ```json
    {"location": "Paris"}
    ```<｜tool▁call▁end｜><｜tool▁calls▁end｜>

Facts relied on:

- The markers are written with U+FF5C (｜) and U+2581 (▁).  A call is
  ``<｜tool▁call▁begin｜>``, the tool type (``function``), ``<｜tool▁sep｜>``, the name, a
  newline, the arguments in a ```` ```json ```` fence, ``<｜tool▁call▁end｜>``; calls after
  the first are preceded by a newline; the template writes the content right before
  ``<｜tool▁calls▁begin｜>`` (the V3-0324 template; vLLM's deepseek_v3 and SGLang's
  deepseekv3 parsers; llama.cpp's DeepSeek R1 handler, which also serves V3 and V2.5).
- Section openers that models really write besides ``<｜tool▁calls▁begin｜>``:
  ``<｜tool_calls_begin｜>``, ``<｜tool calls begin｜>``, ``<｜tool\\_calls\\_begin｜>`` and
  ``<｜tool▁calls｜>``; the first call after an opener may leave out
  ``<｜tool▁call▁begin｜>`` (llama.cpp accepts all of these and tests
  ``<｜tool▁calls｜>function<｜tool▁sep｜>...``).  A call opened by
  ``<｜tool▁call▁begin｜>`` without a section opener is a call too (SGLang's streaming
  parser starts a call there).
- An output may stop after its last ``<｜tool▁call▁end｜>`` without
  ``<｜tool▁calls▁end｜>`` (llama.cpp's tests note it of the original R1 template): the
  section closer is optional.

Choices: text before a section is content, whitespace included (vLLM and llama.cpp keep
it); whitespace between calls and after a section is not content; text after a section is
content (llama.cpp keeps it, vLLM drops it); a stray ``<｜tool▁calls▁end｜>`` is dropped.
A call ends at its ``<｜tool▁call▁end｜>``; arguments that are not a JSON object report
invalid_arguments and parsing resumes after that marker, or at the next marker where that
comes first, so a call that breaks off where the next ``<｜tool▁call▁begin｜>`` comes does
not take that call with it.  V3 does not reason (see
deepseek_r1 for the <think> models).

No marker reaches content.  What follows a section opener is its first call unless it
is ``<｜tool▁call▁begin｜>`` or the section closer: a section the output cuts off is
incomplete, and an opener followed by something else (a bare name, as vLLM's V3.1
tests show of a cut-off output) is an error, the opener and that text dropped up to the
next marker, never glued onto the content.  A
``<｜tool▁sep｜>`` or ``<｜tool▁call▁end｜>`` outside any call is reported (unexpected) and
dropped; the text around it stays content.
"""

from __future__ import annotations

from ..grammar import Grammar, ref, seq, ws
from ._base import Format
from ._deepseek import (
    CALL_BEGIN,
    CALL_END,
    TOKEN_MARKERS,
    fenced_call_body,
    token_body,
)

FORMAT = Format(
    name="deepseek_v3",
    aliases=("deepseekv3", "deepseek-v3"),
    description="DeepSeek-V3, V3-0324 and V2.5: <｜tool▁calls▁begin｜> sections of "
    "function<｜tool▁sep｜>NAME calls with ```json fenced arguments",
    families=("DeepSeek-V3", "DeepSeek-V3-0324", "DeepSeek-V2.5"),
    model_ids=(
        "deepseek-ai/DeepSeek-V3",
        "deepseek-ai/DeepSeek-V3-*",
        "deepseek-ai/DeepSeek-V2.5*",
    ),
    reasoning="none",
    markers=TOKEN_MARKERS,
    call_markers=(CALL_BEGIN, CALL_END),
    grammar=Grammar(
        rules={"start": seq(ws(), ref("body"))} | token_body(fenced_call_body()),
        entries={"start": "start"},
    ),
    examples=(
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n"
        '```json\n{"city": "Paris"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
    ),
)
