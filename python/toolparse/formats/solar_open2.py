"""Upstage Solar Open 2: ``<|tool_call:start|>NAME`` calls of ``<|tool_arg:...|>`` arguments.

The chat template ends the prompt with ``<|think:start|>``, so the output starts inside
the reasoning; what the model writes::

    The user wants the weather in two cities; one call each.<|think:end|>Checking both.
    <|tool_call:start|>get_weather
    <|tool_arg:start|>city<|tool_arg:value|>Seoul<|tool_arg:end|>
    <|tool_call:end|><|tool_call:start|>get_weather
    <|tool_arg:start|>city<|tool_arg:value|>Busan<|tool_arg:end|>
    <|tool_call:end|>

Facts relied on:

- Markers (single special tokens): a call is ``<|tool_call:start|>``, the tool name as
  the rest of that line, then each argument as ``<|tool_arg:start|>KEY<|tool_arg:value|>
  VALUE<|tool_arg:end|>`` and a newline, then ``<|tool_call:end|>``; a call without
  arguments is the name line alone (vLLM's and SGLang's solar_open2 parsers and tests).
  Values are raw text typed by the tool schema (both peers coerce by the schema).
- Reasoning: ``<|think:start|>`` ... ``<|think:end|>``; the template always puts the
  opener in the generation prompt and leaves it open at the default effort, so
  reasoning_in_prompt defaults to True (with a closed effort, set it to False: a
  ``<|think:start|>...<|think:end|>`` block the output writes is then reasoning too).  vLLM's
  reasoning parser ends the reasoning at a ``<|tool_call:start|>`` as well; so does this.
- Both peers take ``<|tool_call:`` inside a value as text (only a whole marker counts),
  an empty name line as an empty name, and SGLang a body that is one JSON object
  instead of argument markers.

Choices (where the peers guess, this reports an error):

- A value ends at its ``<|tool_arg:end|>``; a call ends at its ``<|tool_call:end|>``.  A
  call whose ``<|tool_call:end|>`` is missing before the next ``<|tool_call:start|>``, or an
  argument whose ``<|tool_arg:end|>`` is missing before ``<|tool_call:end|>``, is an error
  and dropped (both peers close it and keep the call); the next call stands.  A name or
  key that another marker interrupts is an error too, the call dropped up to its
  ``<|tool_call:end|>`` or the next call.  A call the output cuts off is incomplete (the
  peers hand the whole output back as content).  An empty name is invalid_arguments.
- Typing follows the engine: a value that fits none of its schema's types is
  invalid_arguments (peers keep the string), ``null`` only where the schema allows null
  (peers give null for any type), booleans are ``true``/``false`` in any case (SGLang and
  vLLM also read ``1``/``0``, SGLang ``yes``/``no``), and a number keeps its written form
  (vLLM turns ``7.0`` into ``7``).  A key named twice is invalid_arguments (peers keep the
  first value); an unknown tool is unknown_tool (peers emit the call).
- A body that is one JSON object is the arguments, as in SGLang.
- Text between and after calls is content (vLLM keeps only the text before the first
  call); whitespace after a call is dropped.  SGLang's markdown-fence call
  ("```NAME" then argument markers) is not read: the fence is text and the argument
  markers outside a call are unexpected.
- No marker reaches content: an argument marker, ``<|tool_call:end|>`` or a think marker
  outside its place is reported (unexpected) and dropped; ``<|im:end|>`` is dropped.
"""

from __future__ import annotations

from ..grammar import (
    Grammar,
    ahead,
    choice,
    cut,
    eof,
    json,
    lit,
    many,
    opt,
    recover,
    ref,
    seq,
    tag,
    until,
    ws,
)
from ._base import Format, reasoning_rules

CALL_OPEN, CALL_CLOSE = "<|tool_call:start|>", "<|tool_call:end|>"
ARG_OPEN, ARG_VALUE, ARG_CLOSE = "<|tool_arg:start|>", "<|tool_arg:value|>", "<|tool_arg:end|>"
THINK_OPEN, THINK_CLOSE = "<|think:start|>", "<|think:end|>"
TURN_END = "<|im:end|>"
_CALL_MARKERS = (CALL_OPEN, CALL_CLOSE, ARG_OPEN, ARG_VALUE, ARG_CLOSE)
_MARKERS = (*_CALL_MARKERS, THINK_OPEN, THINK_CLOSE, TURN_END)

FORMAT = Format(
    name="solar_open2",
    aliases=("solar-open2",),
    description="Upstage Solar Open 2: reasoning opened by the template, <|tool_call:start|> "
    "calls of <|tool_arg:start|> arguments typed by the tool schemas",
    families=("Solar Open 2",),
    model_ids=("upstage/Solar-Open2-*",),
    reasoning="optional",
    reasoning_in_prompt=True,
    call_in_reasoning="ends_reasoning",
    needs_tools=True,
    markers=_MARKERS,
    call_markers=(CALL_OPEN, CALL_CLOSE),
    grammar=Grammar(
        rules={
            **reasoning_rules(THINK_OPEN, THINK_CLOSE, CALL_OPEN),
            "body": seq(
                many(choice(ref("call"), ref("turn_end"), ref("stray"), ref("content"))), eof()
            ),
            "call": seq(
                lit(CALL_OPEN),
                cut(),
                recover(
                    tag(
                        "tool_call",
                        seq(
                            # the name is the rest of the line, known once its newline came
                            ahead(seq(until("\n", *_MARKERS, need_stop=True), lit("\n"))),
                            tag("tool_name", until("\n", *_MARKERS, need_stop=True)),
                            lit("\n"),
                            ws(),
                            choice(ref("json_body"), many(ref("argument"))),
                            lit(CALL_CLOSE),
                        ),
                    ),
                    seq(until(CALL_OPEN, CALL_CLOSE), opt(lit(CALL_CLOSE))),
                ),
                ws(),
            ),
            "json_body": seq(ahead(lit("{")), tag("tool_args", json(kind="object")), ws()),
            "argument": seq(
                lit(ARG_OPEN),
                cut(),
                tag("param_name", until(*_MARKERS, need_stop=True)),
                lit(ARG_VALUE),
                tag("param_value", until(*_MARKERS, need_stop=True)),
                lit(ARG_CLOSE),
                ws(),
            ),
            "turn_end": seq(lit(TURN_END), ws()),
            "stray": seq(
                choice(
                    *(
                        lit(m)
                        for m in (
                            CALL_CLOSE,
                            ARG_OPEN,
                            ARG_VALUE,
                            ARG_CLOSE,
                            THINK_OPEN,
                            THINK_CLOSE,
                        )
                    )
                ),
                cut(),
                recover(choice(), seq()),
            ),
            "content": tag("content", until(*_MARKERS, min1=True, commit=True)),
        },
        entries={"start": "start", "start_in_reasoning": "start_in_reasoning"},
    ),
    examples=(
        "Checking.<|think:end|><|tool_call:start|>get_weather\n"
        "<|tool_arg:start|>city<|tool_arg:value|>Seoul<|tool_arg:end|>\n<|tool_call:end|>",
    ),
)
