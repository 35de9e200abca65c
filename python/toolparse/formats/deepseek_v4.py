# The DeepSeek markers are spelled with U+FF5C FULLWIDTH VERTICAL LINE, on purpose.
# ruff: noqa: RUF001, RUF002
"""DeepSeek-V4 DSML calls: <｜DSML｜tool_calls> blocks of invokes with typed parameters.

An output in thinking mode (DeepSeek's encoding script ends the prompt with ``<think>``),
with the call block of the DSML example in a V4 template test::

    The user wants a search with three results.</think>Need data.

    <｜DSML｜tool_calls>
    <｜DSML｜invoke name="search">
    <｜DSML｜parameter name="q" string="true">weather</｜DSML｜parameter>
    <｜DSML｜parameter name="limit" string="false">3</｜DSML｜parameter>
    </｜DSML｜invoke>
    </｜DSML｜tool_calls>

Facts relied on:

- V4 keeps V3.2's DSML invoke and parameter tags but names the block ``tool_calls``
  instead of ``function_calls`` (DeepSeek's encoding_dsv4 script, vLLM's deepseek_v4
  parser, llama.cpp's DeepSeek V3.2/V4 parser).  string="true" marks a raw string value,
  string="false" a JSON one; a string="false" value that is not valid JSON stays a string.
- The script writes a blank line before the block and nothing after it, and DeepSeek's
  parser reads the content up to ``\\n\\n<｜DSML｜tool_calls``: that blank line is not
  content.
- Thinking is the default (vLLM's V4 parser starts in reasoning unless thinking is turned
  off), so reasoning_in_prompt defaults to true; a repeated ``<think>`` is dropped.  With
  thinking off the prompt ends with a bare ``</think>`` (llama.cpp); one the output writes
  first is dropped (vLLM absorbs it).
- The block opener inside unfinished reasoning ends the reasoning (vLLM's V4 parser goes
  from reasoning straight to the call; llama.cpp ends reasoning at the opener too).
- A call without arguments: the encoder writes an invoke with an empty body; SGLang's
  tests say V4 writes ``<｜DSML｜invoke name="NAME"/>`` for such tools, and its parser takes
  it (DeepSeek's own parser does not).  It is a call with ``{}`` here.
- V4.1 writes spaced tags (``<｜DSML｜ invoke``, vLLM's deepseek_v41): not this format, and
  the model ids name V4 and its -Flash and -Pro releases only.

Choices: as deepseek_v32 (values end at a ``</｜DSML｜parameter>`` followed by the next tag
and are not trimmed; a JSON object as the whole invoke body and a self-closed invoke
are accepted; text after the block is content; a broken invoke reports invalid_arguments
and parsing resumes after its ``</｜DSML｜invoke>``; no marker reaches content: an invoke
outside a block, which vLLM and SGLang hand on as content, is reported and dropped up to
its closer, any other DSML tag, ``<think>`` or ``</think>`` there is reported and dropped
alone).
"""

from __future__ import annotations

from ._base import Format
from ._deepseek import (
    INVOKE_CLOSE,
    INVOKE_OPEN,
    THINK_CLOSE,
    THINK_OPEN,
    dsml_grammar,
    dsml_markers,
)

_, _, _MARKERS = dsml_markers("tool_calls")

FORMAT = Format(
    name="deepseek_v4",
    aliases=("deepseekv4", "deepseek-v4"),
    description="DeepSeek-V4 DSML: <｜DSML｜tool_calls> blocks of <｜DSML｜invoke> calls with "
    'string="true|false" parameters; thinking (opened by the template) by default',
    families=("DeepSeek-V4",),
    model_ids=("deepseek-ai/DeepSeek-V4", "deepseek-ai/DeepSeek-V4-*"),
    reasoning="optional",
    reasoning_in_prompt=True,
    call_in_reasoning="ends_reasoning",
    markers=(*_MARKERS, THINK_OPEN, THINK_CLOSE),
    call_markers=(INVOKE_OPEN, INVOKE_CLOSE),
    other_call_closers=("/>",),  # a self-closing invoke, a call without arguments
    grammar=dsml_grammar("tool_calls"),
    examples=(
        '<｜DSML｜tool_calls>\n<｜DSML｜invoke name="search">\n'
        '<｜DSML｜parameter name="query" string="true">weather</｜DSML｜parameter>\n'
        "</｜DSML｜invoke>\n</｜DSML｜tool_calls>",
    ),
)
