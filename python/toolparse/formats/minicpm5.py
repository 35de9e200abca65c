"""MiniCPM5 XML calls: ``<function name="...">`` elements with ``<param name="...">`` values.

Calls stand on their own, with no wrapper block, one ``<function>`` element each; a
value may be wrapped in CDATA so that it can hold markup::

    <think>
    The user wants the weather in Beijing.
    </think>

    <function name="get_weather"><param name="city"><![CDATA[北
    京]]></param><param name="date">2024-06-27</param></function>

Facts relied on:

- Markers and layout: llama.cpp's MiniCPM5 parser (common/parsers/minicpm5.cpp:
  ``<function name="NAME">``, ``<param name="KEY">VALUE</param>``, ``</function>``,
  optional whitespace between calls and parameters, ``<think>`` ... ``</think>``
  reasoning the output opens itself, after a generation prompt that ends with
  ``<|im_start|>assistant`` and a newline); vLLM's minicpm5 parser and SGLang's
  MiniCPM5Detector (both also read names in single quotes).
- A value may be ``<![CDATA[`` ... ``]]>``: its inner text is the value, kept as written
  (llama.cpp and vLLM; CDATA cannot hold ``]]>``, so the first one closes it).
- Values are typed by the tool schema (needs_tools): a string-typed value is text, any
  other is read as JSON (the three peers).
- Several calls may follow one another, with text between them (the peers' tests).
- Reasoning: llama.cpp reads reasoning from ``<think>`` up to ``</think>`` only, so a
  ``<function`` inside unfinished reasoning stays reasoning.

Choices:

- A plain value is kept verbatim, as llama.cpp and vLLM's XML reading keep it (SGLang
  strips it); a typed value is trimmed. It ends at ``</param>`` only where
  ``</function>`` or a parameter the tool declares (``<param name=`` and a declared name
  in quotes) follows (optional whitespace between), so a value may hold that text and
  parameters of no declared name; CDATA is the model's own way to the same end. A
  declared parameter's opening inside a plain value is a missing ``</param>``: the value
  ends there, and the call is invalid_arguments.
- Unknown tools are reported (unknown_tool) and dropped; a broken call is reported and
  skipped up to its ``</function>`` (the peers show either as content).

Not covered: vLLM's repairs of mangled output (byte-level ``Ġ``/``Ċ`` characters left by a
wrong decoder, ``<functionname=`` with the space lost, a ``properties`` or ``arguments``
parameter wrapping the real ones, renamed tools); a value in Python-literal notation
(``{'a': 1}``, which vLLM and SGLang also try) fits no JSON type, so it makes the call
invalid_arguments at a parameter that is not a string; XML entities are not decoded
(vLLM's and SGLang's XML readers decode them when the whole call is well-formed XML,
llama.cpp does not); a parameter named twice makes the call invalid_arguments, as in
every format (vLLM and SGLang reject it too), while an unknown parameter name is kept
(they reject the call, with its required parameters checked too).
"""

from __future__ import annotations

from ..grammar import (
    Grammar,
    Node,
    Role,
    choice,
    cut,
    declared_param,
    eof,
    lit,
    many,
    recover,
    ref,
    seq,
    stop,
    tag,
    until,
    ws,
)
from ._base import Format, reasoning_rules, skip_past

FUNCTION_OPEN, FUNCTION_CLOSE = "<function name=", "</function>"
PARAM_OPEN, PARAM_CLOSE = "<param name=", "</param>"
CDATA_OPEN, CDATA_CLOSE = "<![CDATA[", "]]>"
THINK_OPEN, THINK_CLOSE = "<think>", "</think>"

# A plain value ends at </param> only where the end of the call or a parameter the tool
# declares follows (its name in double or single quotes); a declared parameter's opening
# inside a value ends it too, as a missing </param>.
_VALUE_END = (
    stop(
        PARAM_CLOSE,
        followed_by=(
            FUNCTION_CLOSE,
            declared_param(PARAM_OPEN + '"', '"'),
            declared_param(PARAM_OPEN + "'", "'"),
        ),
    ),
    stop(PARAM_OPEN, followed_by=(declared_param('"', '"'), declared_param("'", "'"))),
)


def _name(role: Role) -> Node:
    """A name in double or single quotes after ``name=``, then ``>``."""
    return seq(
        choice(
            seq(lit('"'), tag(role, until('"', "\n", "<", ">", need_stop=True)), lit('"')),
            seq(lit("'"), tag(role, until("'", "\n", "<", ">", need_stop=True)), lit("'")),
        ),
        ws(),
        lit(">"),
    )


FORMAT = Format(
    name="minicpm5",
    description="MiniCPM5: <function name=...> calls with <param name=...> values (CDATA "
    "allowed) typed by the tool schemas; optional <think> block",
    families=("MiniCPM5",),
    model_ids=("openbmb/MiniCPM5-*",),
    reasoning="optional",
    call_in_reasoning="text",
    needs_tools=True,
    markers=(
        FUNCTION_OPEN,
        FUNCTION_CLOSE,
        PARAM_OPEN,
        PARAM_CLOSE,
        THINK_OPEN,
        THINK_CLOSE,
    ),
    call_markers=(FUNCTION_OPEN, FUNCTION_CLOSE),
    grammar=Grammar(
        rules={
            **reasoning_rules(THINK_OPEN, THINK_CLOSE),
            "body": seq(many(choice(ref("call"), ref("content"))), eof()),
            "call": seq(
                lit(FUNCTION_OPEN),
                cut(),
                recover(
                    tag(
                        "tool_call",
                        seq(_name("tool_name"), ws(), many(ref("param")), lit(FUNCTION_CLOSE)),
                    ),
                    skip_past(FUNCTION_CLOSE),
                ),
                ws(),
            ),
            "param": seq(
                lit(PARAM_OPEN),
                cut(),
                _name("param_name"),
                choice(
                    seq(
                        lit(CDATA_OPEN),
                        cut(),
                        tag("param_value", until(CDATA_CLOSE, need_stop=True)),
                        lit(CDATA_CLOSE),
                        ws(),
                    ),
                    tag("param_value", until(*_VALUE_END, need_stop=True)),
                ),
                lit(PARAM_CLOSE),
                ws(),
            ),
            "content": tag("content", until(FUNCTION_OPEN, min1=True, commit=True)),
        },
        entries={"start": "start", "start_in_reasoning": "start_in_reasoning"},
    ),
    examples=(
        '<function name="get_weather"><param name="city">Paris</param></function>',
        '<think>\nA multi-line value needs CDATA.\n</think>\n\n<function name="write_file">'
        '<param name="path">notes.txt</param><param name="content"><![CDATA[line one\n'
        "line two]]></param></function>",
    ),
)
