"""Muse Glimmer / Muse Spark: addressed harmony-like messages with ATEM XML calls.

An assistant turn is a sequence of messages ``<|start|>assistant to=RECIPIENT<|message|>``
+ text + ``<|eom|>`` (more messages follow) or ``<|eot|>`` (the turn ends). The prompt
ends with ``<|start|>assistant``, so the first message begins at `` to=``. Reasoning goes
to ``self``, the answer to ``user``, and a call to the tool, as an ATEM block::

     to=self<|message|>Use the weather tool.<|eom|><|start|>assistant to=get_weather\
<|message|><atem:function_calls>
    <atem:invoke name="get_weather">
    <atem:parameter name="city">Paris</atem:parameter>
    </atem:invoke>
    </atem:function_calls><|eom|>

Facts relied on:

- Messages and recipients: llama.cpp's Muse Glimmer parser (common/parsers/
  muse-glimmer.cpp: generation prompt ``<|start|>assistant``, reasoning opened by
  `` to=self<|message|>`` and closed by ``<|eom|>``, the answer `` to=user`` (or no
  recipient) up to ``<|eot|>`` or ``<|eom|>``, a call `` to=ANY<|message|>`` then
  ``<atem:function_calls>``, ``<atem:invoke name="NAME">``, one
  ``<atem:parameter name="KEY">VALUE</atem:parameter>`` per argument, ``</atem:invoke>``,
  ``</atem:function_calls>``, optional whitespace between the tags, and further calls as
  further messages after ``<|eom|>``); vLLM's muse_glimmer parser and SGLang's
  MuseGlimmerDetector (a bare ``<|message|>`` header is the answer; a message also ends
  where the next ``<|start|>`` begins; an ATEM block inside a ``self`` or ``user`` message
  is text, never a call; the call's name is the invoke's ``name``).
- Values are typed by the tool schema (needs_tools), as llama.cpp's grammar types them
  (a string-typed value is raw text, any other is JSON).
- The "start_in_reasoning" entry is for a prompt that already opened the reasoning
  message (llama.cpp's continuation prefill ``<|start|>assistant to=self<|message|>``).

Choices:

- vLLM and SGLang JSON-decode every value whatever its schema type (``"42"`` for a string
  parameter becomes the number 42); here the schema decides, as in llama.cpp.
- A value is kept verbatim; it ends at ``</atem:parameter>`` only where a parameter the
  tool declares or ``</atem:invoke>`` follows, so a value may hold that text and
  undeclared parameter tags; a declared parameter opening inside a value is a missing
  closing tag: an error.
- Several invokes in one block are several calls (vLLM and SGLang read them all).
- Whitespace between messages is dropped; text outside any message is content, and a
  lone end marker there is dropped. A tool message whose body is not an ATEM block is
  reported and skipped to its end; an unknown tool is reported (unknown_tool) and
  dropped. A call ends at its ``</atem:invoke>``; a stream that ends after it, before
  ``</atem:function_calls>`` or the end marker, keeps it.

Not covered: vLLM and SGLang map a doubled name (``get_weather.get_weather``, which the
template's recipient list ``"get_weather.*"`` invites) back to the registered
``get_weather``, and SGLang maps a unique last segment too; renaming a tool by the tool
list is not something the grammar can express, so such a call is reported as
unknown_tool unless the application declares that name.
"""

from __future__ import annotations

from ..grammar import (
    Grammar,
    ahead,
    choice,
    cut,
    declared_param,
    eof,
    lit,
    many,
    opt,
    recover,
    ref,
    seq,
    stop,
    tag,
    until,
    ws,
)
from ._base import Format

START, MESSAGE, EOM, EOT = "<|start|>", "<|message|>", "<|eom|>", "<|eot|>"
CALLS_OPEN, CALLS_CLOSE = "<atem:function_calls>", "</atem:function_calls>"
INVOKE_OPEN, INVOKE_CLOSE = '<atem:invoke name="', "</atem:invoke>"
PARAM_OPEN, PARAM_CLOSE = '<atem:parameter name="', "</atem:parameter>"
HEADER_MARKERS = (START, MESSAGE, EOM, EOT)

# A message's text runs to its end marker, or to the next message when that is missing.
_TEXT_STOPS = (EOM, EOT, START)
# A value ends at its closing tag only where a parameter the tool declares, or the call's
# end, follows; a declared parameter opening inside a value is a missing closing tag.
_VALUE_END = (
    stop(PARAM_CLOSE, followed_by=(INVOKE_CLOSE, declared_param(PARAM_OPEN, '">'))),
    stop(PARAM_OPEN, followed_by=(declared_param(None, '">'),)),
)

FORMAT = Format(
    name="muse",
    aliases=("muse_glimmer", "musespark1x", "muse-glimmer"),
    description="Muse Glimmer / Muse Spark: addressed messages (to=self reasoning, to=user "
    "answer, to=TOOL calls) with <atem:function_calls> invokes typed by the tool schemas",
    families=("Muse Glimmer", "Muse Spark"),
    model_ids=("meta-models/Muse-Glimmer-*",),
    reasoning="optional",
    reasoning_openers=(" to=self<|message|>",),
    call_in_reasoning="text",
    needs_tools=True,
    markers=(
        *HEADER_MARKERS,
        CALLS_OPEN,
        CALLS_CLOSE,
        INVOKE_OPEN,
        INVOKE_CLOSE,
        PARAM_OPEN,
        PARAM_CLOSE,
    ),
    # plain-text tags: a message echoing the format holds them
    text_markers=(CALLS_OPEN, CALLS_CLOSE, INVOKE_OPEN, INVOKE_CLOSE, PARAM_OPEN, PARAM_CLOSE),
    call_markers=(INVOKE_OPEN, INVOKE_CLOSE),
    grammar=Grammar(
        rules={
            # the first header begins with a space: it is not leading whitespace
            "start": seq(choice(ahead(lit(" to=")), ws()), ref("body")),
            "start_in_reasoning": seq(ref("reasoning_text"), ws(), ref("body")),
            "body": seq(many(choice(ref("message"), ref("stray"))), eof()),
            "message": seq(
                choice(
                    seq(
                        lit(START),
                        cut(),
                        recover(seq(lit("assistant"), ref("header")), until(START)),
                    ),
                    ref("header"),
                ),
                ws(),
            ),
            "header": choice(
                seq(lit(" to=self" + MESSAGE), cut(), ref("reasoning_text")),
                seq(lit(" to=user" + MESSAGE), cut(), ref("content_text")),
                seq(lit(MESSAGE), cut(), ref("content_text")),
                seq(
                    lit(" to="),
                    cut(),
                    recover(
                        seq(
                            until(MESSAGE, START, "\n", need_stop=True),
                            lit(MESSAGE),
                            ref("calls"),
                        ),
                        seq(until(*_TEXT_STOPS), ref("text_end")),
                    ),
                ),
            ),
            "calls": seq(
                ws(),
                lit(CALLS_OPEN),
                cut(),
                ws(),
                many(ref("invoke")),
                opt(seq(lit(CALLS_CLOSE), ws())),
                ref("text_end"),
            ),
            "invoke": seq(
                lit(INVOKE_OPEN),
                cut(),
                recover(
                    tag(
                        "tool_call",
                        seq(
                            tag("tool_name", until('"', "\n", "<", need_stop=True)),
                            lit('">'),
                            ws(),
                            many(ref("parameter")),
                            lit(INVOKE_CLOSE),
                        ),
                    ),
                    seq(until(INVOKE_CLOSE, CALLS_CLOSE, *_TEXT_STOPS), opt(lit(INVOKE_CLOSE))),
                ),
                ws(),
            ),
            "parameter": seq(
                lit(PARAM_OPEN),
                cut(),
                tag("param_name", until('"', "\n", "<", need_stop=True)),
                lit('">'),
                tag("param_value", until(*_VALUE_END, need_stop=True)),
                lit(PARAM_CLOSE),
                ws(),
            ),
            "reasoning_text": seq(tag("reasoning", until(*_TEXT_STOPS)), ref("text_end")),
            "content_text": seq(tag("content", until(*_TEXT_STOPS)), ref("text_end")),
            "text_end": opt(choice(lit(EOM), lit(EOT))),
            # outside any message: text is content, a lone marker is dropped
            "stray": choice(
                tag("content", until(*HEADER_MARKERS, min1=True, commit=True)),
                lit(EOM),
                lit(EOT),
            ),
        },
        entries={"start": "start", "start_in_reasoning": "start_in_reasoning"},
    ),
    examples=(
        " to=self<|message|>Use the weather tool.<|eom|><|start|>assistant to=get_weather"
        '<|message|><atem:function_calls>\n<atem:invoke name="get_weather">\n'
        '<atem:parameter name="city">Paris</atem:parameter>\n</atem:invoke>\n'
        "</atem:function_calls><|eom|>",
    ),
)
