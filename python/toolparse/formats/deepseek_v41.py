# The DeepSeek markers are spelled with U+FF5C FULLWIDTH VERTICAL LINE, on purpose.
# ruff: noqa: RUF001, RUF002
"""DeepSeek-V4.1 DSML calls: <｜DSML｜ calls> blocks of spaced invokes with typed parameters.

An output in thinking mode (the encoding script ends the prompt with ``<think>``), with
the call block as DeepSeek's V4.1 encoding script renders it::

    The user wants the weather in Hangzhou.</think>Let me check.

    <｜DSML｜ calls>
    <｜DSML｜ invoke name="get_weather">
    <｜DSML｜ parameter name="city" string="true">杭州</｜DSML｜ parameter>
    <｜DSML｜ parameter name="days" string="false">3</｜DSML｜ parameter>
    </｜DSML｜ invoke>
    </｜DSML｜ calls>

Facts relied on:

- V4.1 keeps V4's DSML layout but puts one space between ``｜DSML｜`` and every tag name
  and renames the block: ``<｜DSML｜ calls>`` / ``</｜DSML｜ calls>``, ``<｜DSML｜ invoke
  name="NAME">`` / ``</｜DSML｜ invoke>``, ``<｜DSML｜ parameter name="K"
  string="true|false">VALUE</｜DSML｜ parameter>`` (DeepSeek's V4.1 encoding script,
  whose tag names are " calls", " invoke" and " parameter"; vLLM's deepseek_v41 parser;
  SGLang's deepseekv41 detector and its vendored encoding_dsv41).  The unspaced V4 tags
  are not V4.1 calls (SGLang tests that a V4 block yields no call): here they are text.
- string="true" marks a raw string value, string="false" a JSON one (the encoder writes
  JSON for every non-string value).  A string="false" value that is not valid JSON makes
  the call invalid_arguments, as DeepSeek's script fails the whole call (vLLM keeps a
  string, a guess).
- The script joins the content and the block with a blank line, rendered even when there
  is no content, and its parser reads the content up to ``\\n\\n<｜DSML｜ calls``: that
  blank line is not content.  One parameter or invoke a line, each invoke followed by a
  newline; a call with no arguments is an invoke with an empty body.  SGLang's V4.1
  detector, built on its V3.2 one, also takes an invoke closed in its own tag
  (``<｜DSML｜ invoke name="NAME"/>``, the V4 shape its tests report for tools without
  arguments); the script does not.  It is a call with ``{}`` here.
- Reasoning is ``<think>`` ... ``</think>``.  Thinking is the default (vLLM's V4.1 parser,
  inherited from V4, starts in reasoning unless thinking is turned off; the script ends a
  thinking prompt with ``<think>``), so reasoning_in_prompt defaults to true; a repeated
  ``<think>`` is dropped.  With thinking off the prompt ends with ``</think>``; one the
  output writes first is dropped (vLLM's V4.1 tests).
- The block opener inside unfinished reasoning ends the reasoning (vLLM's state machine
  goes from reasoning to the call; DeepSeek's script also stops reasoning at
  ``\\n\\n<｜DSML｜ calls`` but then rejects the output).
- SGLang's detector takes an invoke whose body is one JSON object of arguments (and a
  version of it constrains V4.1 invokes to that body when its grammar library lacks the
  V4.1 XML style): such an invoke is accepted.

Choices, as deepseek_v4: values end at a ``</｜DSML｜ parameter>`` followed by the next tag
and are not trimmed (vLLM keeps them as written; SGLang strips string values); text
after the block is content (vLLM returns to content; the script rejects it); a broken
invoke reports invalid_arguments and parsing resumes after its ``</｜DSML｜ invoke>``.  No
marker reaches content: an invoke outside a block (content to vLLM and SGLang, which
look for calls after the block opener only) is reported and dropped up to its closer,
any other spaced DSML tag, ``<think>`` or ``</think>`` there is reported and dropped
alone.

Not pinned down: a parameter without its string flag.  DeepSeek's script requires the
flag, and SGLang 0.5.23 drops an invoke holding such a parameter; vLLM 0.33.0 reads it
as string="false" (JSON, else the text), saying the model sometimes leaves it out.  It
is rejected here (invalid_arguments), as in deepseek_v32 and deepseek_v4.  llama.cpp has
no V4.1 parser (its DeepSeek parser knows the V3.2 and V4 block names only).
"""

from __future__ import annotations

from ._base import Format
from ._deepseek import THINK_CLOSE, THINK_OPEN, dsml_grammar, dsml_markers, dsml_tags

_SPACE = " "
_BLOCK_OPEN, _BLOCK_CLOSE, _MARKERS = dsml_markers("calls", _SPACE)
_INVOKE_OPEN, _INVOKE_CLOSE, _PARAM_OPEN, _PARAM_CLOSE = dsml_tags(_SPACE)

FORMAT = Format(
    name="deepseek_v41",
    aliases=("deepseekv41", "deepseek-v4.1"),
    description="DeepSeek-V4.1 DSML: <｜DSML｜ calls> blocks of <｜DSML｜ invoke> calls with "
    'string="true|false" parameters (a space after ｜DSML｜ in every tag); thinking '
    "(opened by the template) by default",
    families=("DeepSeek-V4.1",),
    model_ids=("deepseek-ai/DeepSeek-V4.1", "deepseek-ai/DeepSeek-V4.1-*"),
    reasoning="optional",
    reasoning_in_prompt=True,
    call_in_reasoning="ends_reasoning",
    markers=(*_MARKERS, THINK_OPEN, THINK_CLOSE),
    call_markers=(_INVOKE_OPEN, _INVOKE_CLOSE),
    other_call_closers=("/>",),  # a self-closing invoke, a call without arguments
    grammar=dsml_grammar("calls", _SPACE),
    examples=(
        f'{_BLOCK_OPEN}\n{_INVOKE_OPEN}get_weather">\n'
        f'{_PARAM_OPEN}city" string="true">Paris{_PARAM_CLOSE}\n'
        f"{_INVOKE_CLOSE}\n{_BLOCK_CLOSE}",
    ),
)
