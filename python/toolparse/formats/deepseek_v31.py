# The DeepSeek markers are spelled with U+FF5C FULLWIDTH VERTICAL LINE, on purpose.
# ruff: noqa: RUF001, RUF002
"""DeepSeek-V3.1, V3.1-Terminus and V3.2-Exp: NAME<｜tool▁sep｜>{json} calls, optional thinking.

An output in thinking mode (the template ended the prompt with ``<think>``), in the form of
the V3.1 template and of SGLang's and llama.cpp's V3.1 examples (one line, wrapped here)::

    The user asks for the weather in Tokyo; get_weather takes a city.</think>Let me look.
    <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city": "Tokyo"}
    <｜tool▁call▁end｜><｜tool▁calls▁end｜>

Facts relied on:

- A call is ``<｜tool▁call▁begin｜>`` NAME ``<｜tool▁sep｜>`` raw JSON arguments (no type,
  no fence) ``<｜tool▁call▁end｜>``, inside ``<｜tool▁calls▁begin｜>`` ...
  ``<｜tool▁calls▁end｜>``, calls written back to back (the V3.1 template; vLLM's
  deepseek_v31, SGLang's deepseekv31 and llama.cpp's DeepSeek V3.1 parsers).  The name
  holds no newline and no ``<`` (llama.cpp: ``[^\\n<]+``).  V3.2-Exp uses the V3.1
  template.
- The template ends the prompt with ``<think>`` in thinking mode and with ``</think>``
  otherwise (thinking is off by default), so the model writes neither: reasoning_in_prompt
  defaults to false and is true for thinking requests (vLLM's deepseek_v3 reasoning parser
  reads reasoning only when thinking is on).  A ``<think>`` written anyway is dropped.
- In thinking mode V3.1 sometimes calls a tool before writing ``</think>`` (an output
  quoted in SGLang PR 9446 goes from reasoning straight into
  ``<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_current_weather...``; llama.cpp parses
  such calls once the output ends without ``</think>``).  Here a section opener, or
  ``<｜tool▁call▁begin｜>``, ends unfinished reasoning at once, so the call streams as a
  call.  llama.cpp keeps a call inside reasoning as reasoning when a ``</think>`` follows
  later; a streaming parser cannot wait for that, and this format does not.
- The section opener variants llama.cpp accepts for V3.1 (``<｜tool_calls_begin｜>``,
  ``<｜tool calls begin｜>``, ``<｜tool\\_calls\\_begin｜>``, ``<｜tool▁calls｜>``) are accepted,
  and so is a call opened by ``<｜tool▁call▁begin｜>`` without a section opener (SGLang's
  streaming parser starts a call there).
- The first call of a section may leave out ``<｜tool▁call▁begin｜>`` (llama.cpp's V3.1
  parser makes that marker optional before every call); vLLM then reports no call and
  returns the whole output, markers included, as content.  Here what follows a section
  opener is a call unless it is ``<｜tool▁call▁begin｜>`` or the section closer.

Choices: text before a section is content, whitespace included; whitespace between calls
and after a section is not; text after a section is content; a stray
``<｜tool▁calls▁end｜>`` is dropped; arguments that are not a JSON object report
invalid_arguments and parsing resumes after the call's ``<｜tool▁call▁end｜>``, or at the
next marker where that comes first: a call that breaks off where the next
``<｜tool▁call▁begin｜>`` comes does not take the call after it with it (vLLM's regex reads
everything up to the next ``<｜tool▁call▁end｜>`` as the broken call's arguments).

No marker reaches content.  A section the output cuts off (after its
opener, or inside the name of its first call) is incomplete: vLLM returns such an
output whole as content, the opener with it, a guess that leaks the marker; here the
text before the opener stays content and the opener and name are dropped.  A first call
that breaks (a name followed by a line of prose, no ``<｜tool▁call▁end｜>``) is an error
and is dropped up to the next marker, or up to the line break after its name, so the
line after it stays content.  A ``<｜tool▁sep｜>``, ``<｜tool▁call▁end｜>``, ``<think>`` or
``</think>`` outside any call has no place: it is reported (unexpected) and dropped, and
the text on both sides is kept.
"""

from __future__ import annotations

from ..grammar import Grammar, json, lit, opt, ref, seq, tag, until, ws
from ._base import Format
from ._deepseek import (
    CALL_BEGIN,
    CALL_END,
    THINK_CLOSE,
    THINK_OPEN,
    TOKEN_CALL_STARTS,
    TOKEN_MARKERS,
    TOOL_SEP,
    reasoning_rules,
    token_body,
)

_CALL_BODY = seq(
    tag("tool_name", until(TOOL_SEP, "\n", "<", need_stop=True)),
    lit(TOOL_SEP),
    ws(),
    tag("tool_args", json(kind="object")),
)

FORMAT = Format(
    name="deepseek_v31",
    aliases=("deepseekv31", "deepseek-v3.1"),
    description="DeepSeek-V3.1, V3.1-Terminus and V3.2-Exp: NAME<｜tool▁sep｜>{json} calls in "
    "<｜tool▁calls▁begin｜> sections; thinking mode ends with </think>",
    families=("DeepSeek-V3.1", "DeepSeek-V3.1-Terminus", "DeepSeek-V3.2-Exp"),
    model_ids=("deepseek-ai/DeepSeek-V3.1*", "deepseek-ai/DeepSeek-V3.2-Exp*"),
    reasoning="optional",
    reasoning_in_prompt=False,
    call_in_reasoning="ends_reasoning",
    markers=(*TOKEN_MARKERS, THINK_OPEN, THINK_CLOSE),
    call_markers=(CALL_BEGIN, CALL_END),
    grammar=Grammar(
        rules={"start": seq(ws(), opt(ref("think")), ref("body"))}
        | reasoning_rules(*TOKEN_CALL_STARTS)
        | token_body(_CALL_BODY, text_markers=(THINK_OPEN, THINK_CLOSE)),
        entries={"start": "start", "start_in_reasoning": "start_in_reasoning"},
    ),
    examples=(
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>"
        '{"city": "Tokyo"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
    ),
)
