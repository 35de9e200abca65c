"""Qwen3-Coder XML calls: ``<function=NAME>`` with ``<parameter=P>`` values typed by the schema.

vLLM and SGLang parse Xiaomi MiMo-V2, StepFun Step-3.5 and Nanbeige 4 outputs with this
same parser (their ``mimo``, ``step3p5`` and ``nanbeige`` names), and vLLM's
``mimov2_flash`` (MiMo-V2-Flash) and ``iquest_coder`` (IQuest Coder) parsers read the same
calls, hence the aliases.  Against those two: mimov2_flash keeps every value as a string
and takes ``<parameter=...>`` written before ``<function=...>`` (a guess: here that block
is invalid_arguments); iquest_coder drops whitespace-only text around calls, as this
grammar does.

A string parameter keeps its text; any other is read as the first of its schema's types
the text fits, and a value that fits none of them makes the call invalid_arguments (vLLM
and SGLang keep it as a string, a guess at what the model meant).

A value ends at ``</parameter>`` only where a parameter the call's tool declares, or the
call's end, comes next (the schema decides, through the grammar's declared_param()).
vLLM and SGLang end it at the first ``</parameter>``, so a string holding code or XML
that mentions the tags is cut short and its tail becomes an undeclared key: they guess,
and toolparse keeps the text.  An undeclared parameter after a value is therefore text
of that value (refused where the value is typed); only the first parameter of a call may
be one the schema does not declare.  A declared ``<parameter=NAME>`` inside a value
means the value's ``</parameter>`` is missing: the peers swallow the next parameter into
the value; toolparse reports the call as an error.  With repair the value ends there and
the call is marked ``missing_closer``; so it is where ``</function>`` comes instead of a
value's ``</parameter>``, and where ``</tool_call>`` is left out before the next call.

A call may be opened with ``<function=NAME>`` directly, without ``<tool_call>``; a
``</tool_call>`` right after its ``</function>`` is then that call's closing marker and is
dropped, never content.  vLLM reads such a call only when the output has no
``<tool_call>`` at all (its content ends at the first ``<function=``); beside a call
written in full it loses the bare call and leaves it, markers included, in content.
"""

from __future__ import annotations

from ..grammar import (
    Grammar,
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
from ._base import Format, call_block, reasoning_rules, skip_past
from .hermes import THINK_CLOSE, THINK_OPEN, TOOL_CLOSE, TOOL_OPEN

# A value ends at </parameter> only where a parameter the call's tool declares, or the
# call's end, follows: a value may hold "</parameter>" and even "<parameter=x>" (code or
# XML that mentions them).  A declared parameter opening inside a value means its
# </parameter> is missing: the value ends there and the call is an error, never a value
# that swallowed the next parameter.
_NEXT_TAG = ("</function>", TOOL_CLOSE, declared_param("<parameter=", ">"))
_VALUE_END = (
    stop("\n</parameter>", followed_by=_NEXT_TAG),
    stop("</parameter>", followed_by=_NEXT_TAG),
    stop("<parameter=", followed_by=(declared_param(None, ">"),)),
)

FUNCTION_OPEN = "<function="
# Some outputs open a call with <function=NAME> directly, without <tool_call>.

FORMAT = Format(
    name="qwen3_coder",
    aliases=(
        "qwen3_xml",
        "qwen3-coder",
        "mimo",
        "step3p5",
        "nanbeige",
        "mimov2_flash",
        "iquest_coder",
    ),
    description="Qwen3-Coder and Qwen3.5 XML calls; parameter values typed by the tool schemas",
    families=("Qwen3-Coder", "Qwen3.5", "MiMo-V2", "Step-3.5", "Nanbeige 4", "IQuest Coder"),
    model_ids=(
        "Qwen/Qwen3-Coder-*",
        "Qwen/Qwen3.5-*",
        "XiaomiMiMo/MiMo-V2-*",
        "stepfun-ai/Step-3.5-*",
        "Nanbeige/Nanbeige4*",
        "stepfun-ai/Step-3.7-*",
        "nvidia/NVIDIA-Nemotron-3-Nano-*",
        "nvidia/Nemotron-3-Nano-*",
        "IQuestLab/IQuest-Coder-V1*",
    ),
    reasoning="optional",
    call_in_reasoning="ends_reasoning",
    needs_tools=True,
    markers=(TOOL_OPEN, TOOL_CLOSE, THINK_OPEN, THINK_CLOSE, FUNCTION_OPEN, "</function>"),
    call_markers=(TOOL_OPEN, TOOL_CLOSE),
    other_call_closers=("</function>",),  # a call opened by <function= alone ends there
    grammar=Grammar(
        rules={
            **reasoning_rules(THINK_OPEN, THINK_CLOSE, TOOL_OPEN, FUNCTION_OPEN),
            "body": seq(many(choice(ref("call"), ref("bare_call"), ref("content"))), eof()),
            "call": call_block(TOOL_OPEN, TOOL_CLOSE, seq(lit(FUNCTION_OPEN), ref("function"))),
            # a </tool_call> after a call opened without <tool_call> closes that call
            "bare_call": seq(
                lit(FUNCTION_OPEN),
                cut(),
                recover(
                    tag("tool_call", seq(ref("function"), ws(), opt(lit(TOOL_CLOSE)))),
                    skip_past("</function>"),
                ),
                ws(),
            ),
            "function": seq(
                tag("tool_name", until(">", need_stop=True)),
                lit(">"),
                ws(),
                many(ref("parameter")),
                lit("</function>"),
            ),
            "parameter": seq(
                lit("<parameter="),
                cut(),
                tag("param_name", until(">", need_stop=True)),
                lit(">"),
                opt(lit("\n")),
                tag("param_value", until(*_VALUE_END, need_stop=True)),
                choice(lit("\n</parameter>"), lit("</parameter>")),
                ws(),
            ),
            "content": tag("content", until(TOOL_OPEN, FUNCTION_OPEN, min1=True, commit=True)),
        },
        entries={"start": "start", "start_in_reasoning": "start_in_reasoning"},
    ),
    examples=(
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
        "</function>\n</tool_call>",
    ),
)
