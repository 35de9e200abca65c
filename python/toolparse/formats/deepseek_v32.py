# The DeepSeek markers are spelled with U+FF5C FULLWIDTH VERTICAL LINE, on purpose.
# ruff: noqa: RUF001, RUF002
"""DeepSeek-V3.2 DSML calls: <｜DSML｜function_calls> blocks of invokes with typed parameters.

An output in thinking mode (the template ended the prompt with ``<think>``), with a call
in the form quoted from the model in minja PR 11 and documented by vLLM's deepseek_v32
parser::

    The user wants the time in Shanghai; get_datetime takes a timezone.</think>Let me check.

    <｜DSML｜function_calls>
    <｜DSML｜invoke name="get_datetime">
    <｜DSML｜parameter name="timezone" string="true">Asia/Shanghai</｜DSML｜parameter>
    </｜DSML｜invoke>
    </｜DSML｜function_calls>

Facts relied on:

- The block is ``<｜DSML｜function_calls>`` ... ``</｜DSML｜function_calls>`` (V4 renamed
  it, see deepseek_v4); each call is ``<｜DSML｜invoke name="NAME">``, one parameter a
  line, ``</｜DSML｜invoke>``; a parameter is ``<｜DSML｜parameter name="K"
  string="true|false">VALUE</｜DSML｜parameter>``, where string="true" means VALUE is the
  raw string and string="false" that it is JSON (the V3.2 template, DeepSeek's encoding
  script, vLLM's deepseek_v32 and llama.cpp's DeepSeek V3.2 parser).  A string="false"
  value that is not valid JSON makes the call invalid_arguments: vLLM keeps it as a
  string, a guess at what the model meant.
- The template writes a blank line before the block and nothing after it; llama.cpp and
  DeepSeek's own parser do not count that blank line as content.
- Thinking is on by default (the template's enable_thinking defaults to true): the prompt
  ends with ``<think>``, so reasoning_in_prompt defaults to true; a ``<think>`` the output
  writes again is dropped (vLLM's V4 parser does so).  With thinking off the prompt ends
  with ``</think>``; a bare ``</think>`` the output writes first is dropped.
- The block may begin before ``</think>``: llama.cpp ends reasoning at ``</think>`` or at
  the block opener (with or without the blank line), and V3.2 is documented to call
  tools while thinking.  The opener ends unfinished reasoning.
- SGLang's deepseekv32 parser also takes an invoke whose body is one JSON object of
  arguments instead of parameters; that is accepted too.
- A call without arguments is an invoke with an empty body in DeepSeek's encoder; SGLang
  also takes one closed in its own tag, ``<｜DSML｜invoke name="NAME"/>`` (its tests say V4
  writes it for tools without arguments), which DeepSeek's own parser refuses.  Its
  meaning is not in doubt: it is a call with ``{}``.

Choices: a value ends at a ``</｜DSML｜parameter>`` followed (after optional whitespace) by
a parameter the tool declares, ``</｜DSML｜invoke>`` or the block closer, so a value may
contain the closing text and undeclared parameter tags (a declared parameter opening
inside a value is a missing closing tag: an error, for V3.2, V4 and V4.1 alike);
values are not trimmed (DeepSeek's parser keeps them as written).  Text after the block
is content (vLLM's engine parser returns to content there).  A broken
invoke reports invalid_arguments and parsing resumes after its ``</｜DSML｜invoke>``.

No marker reaches content.  An invoke outside a block is not a call: vLLM and SGLang
look for calls only after the block opener and hand such an invoke on as content, its
tags with it; here it is reported (unexpected) and dropped up to its
``</｜DSML｜invoke>``.  Any other DSML tag, ``<think>`` or ``</think>`` in the content (a
second block closer, say) is reported and dropped alone; the text around it is kept.
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

_, _, _MARKERS = dsml_markers("function_calls")

FORMAT = Format(
    name="deepseek_v32",
    aliases=("deepseekv32", "deepseek-v3.2"),
    description="DeepSeek-V3.2 DSML: <｜DSML｜function_calls> blocks of <｜DSML｜invoke> calls "
    'with string="true|false" parameters; thinking (opened by the template) by default',
    families=("DeepSeek-V3.2", "DeepSeek-V3.2-Speciale"),
    model_ids=("deepseek-ai/DeepSeek-V3.2", "deepseek-ai/DeepSeek-V3.2-*"),
    reasoning="optional",
    reasoning_in_prompt=True,
    call_in_reasoning="ends_reasoning",
    needs_tools=False,
    markers=(*_MARKERS, THINK_OPEN, THINK_CLOSE),
    call_markers=(INVOKE_OPEN, INVOKE_CLOSE),
    other_call_closers=("/>",),  # a self-closing invoke, a call without arguments
    grammar=dsml_grammar("function_calls"),
    examples=(
        '<｜DSML｜function_calls>\n<｜DSML｜invoke name="get_weather">\n'
        '<｜DSML｜parameter name="city" string="true">Paris</｜DSML｜parameter>\n'
        "</｜DSML｜invoke>\n</｜DSML｜function_calls>",
    ),
)
