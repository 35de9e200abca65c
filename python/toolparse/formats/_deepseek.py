# The DeepSeek markers are spelled with U+FF5C FULLWIDTH VERTICAL LINE, on purpose.
# ruff: noqa: RUF001, RUF002, RUF003
"""Marker strings and grammar pieces shared by the DeepSeek formats.

The markers are written with U+FF5C FULLWIDTH VERTICAL LINE (｜) and U+2581 LOWER ONE
EIGHTH BLOCK (▁), as the DeepSeek tokenizers spell their special tokens.
"""

from __future__ import annotations

from typing import Literal

from ..grammar import (
    Grammar,
    Node,
    ahead,
    choice,
    cut,
    declared_param,
    eof,
    json,
    lit,
    many,
    not_ahead,
    opt,
    recover,
    ref,
    seq,
    stop,
    tag,
    until,
    ws,
)
from ._base import think_block
from ._guard import stray

THINK_OPEN, THINK_CLOSE = "<think>", "</think>"

# -- the token form of V3, R1 and V3.1 -----------------------------------------------------

CALLS_BEGIN = "<｜tool▁calls▁begin｜>"
CALLS_END = "<｜tool▁calls▁end｜>"
CALL_BEGIN = "<｜tool▁call▁begin｜>"
CALL_END = "<｜tool▁call▁end｜>"
TOOL_SEP = "<｜tool▁sep｜>"
# Openers of the calls section that models really write besides the right one: ASCII
# underscores, spaces, markdown-escaped underscores, and a short <｜tool▁calls｜> (seen from
# the R1 distills; llama.cpp accepts all four in its DeepSeek R1 and V3.1 parsers).
CALLS_BEGIN_VARIANTS = (
    CALLS_BEGIN,
    "<｜tool_calls_begin｜>",
    "<｜tool calls begin｜>",
    "<｜tool\\_calls\\_begin｜>",
    "<｜tool▁calls｜>",
)
TOKEN_MARKERS = (*CALLS_BEGIN_VARIANTS, CALLS_END, CALL_BEGIN, CALL_END, TOOL_SEP)
# What ends the text before a call: a section opener, or a call opened without one.
TOKEN_CALL_STARTS = (*CALLS_BEGIN_VARIANTS, CALL_BEGIN)


def fenced_call_body() -> Node:
    """V3 and R1: function<｜tool▁sep｜>NAME, a newline, and the arguments in a json fence."""
    return seq(
        lit("function"),
        lit(TOOL_SEP),
        tag("tool_name", until("\n", CALL_END, need_stop=True)),
        ws(),
        lit("```json"),
        ws(),
        tag("tool_args", json(kind="object")),
        ws(),
        lit("```"),
    )


def token_body(call_body: Node, text_markers: tuple[str, ...] = ()) -> dict[str, Node]:
    """The rules after the reasoning block of the token form.

    body: content, calls sections, calls opened without a section, and a stray section
    closer, in any order.  A section is an opener, calls separated by whitespace, and
    <｜tool▁calls▁end｜> (optional: some outputs stop after the last call's end).
    call_body: what lies between <｜tool▁call▁begin｜> and <｜tool▁call▁end｜>.
    The first call of a section may leave out <｜tool▁call▁begin｜>: whatever follows the
    opener that is neither that marker nor the section closer is read as the first call,
    so a section the output cuts off is incomplete and one followed by something else is
    an error, its opener and name never content.  A broken call is dropped up to the
    next marker (a <｜tool▁call▁end｜> with it), so a call after it stands; a broken first
    call whose name a line break ends, up to that line break.
    text_markers: other markers of the format that content never holds (<think> and
    </think>).  A <｜tool▁sep｜> or <｜tool▁call▁end｜> (or one of text_markers) that stands
    outside a call is reported as unexpected and dropped.
    """
    markers = (*TOKEN_MARKERS, *text_markers)
    skip = seq(until(*markers), opt(lit(CALL_END)))
    first = recover(
        seq(tag("tool_call", seq(call_body, ws(), lit(CALL_END))), ws()),
        choice(ahead(lit("\n")), skip),
    )
    return {
        "body": seq(
            many(
                choice(ref("section"), ref("call"), ref("stray_end"), ref("stray"), ref("content"))
            ),
            eof(),
        ),
        "section": seq(
            choice(*(lit(m) for m in CALLS_BEGIN_VARIANTS)),
            cut(),
            ws(),
            opt(ref("first_call")),
            many(ref("call")),
            opt(seq(lit(CALLS_END), ws())),
        ),
        "first_call": seq(not_ahead(choice(lit(CALL_BEGIN), lit(CALLS_END))), cut(), first),
        "call": seq(
            lit(CALL_BEGIN),
            cut(),
            recover(tag("tool_call", seq(ws(), call_body, ws(), lit(CALL_END))), skip),
            ws(),
        ),
        "stray_end": seq(lit(CALLS_END), ws()),
        "stray": stray(CALL_END, TOOL_SEP, *text_markers),
        "content": tag("content", until(*markers, min1=True, commit=True)),
    }


# -- the DSML form of V3.2, V4 and V4.1 -----------------------------------------------------

DSML = "｜DSML｜"
INVOKE_OPEN = f'<{DSML}invoke name="'
INVOKE_CLOSE = f"</{DSML}invoke>"
PARAM_OPEN = f'<{DSML}parameter name="'
PARAM_CLOSE = f"</{DSML}parameter>"


def dsml_tags(space: str = "", ns: str = DSML) -> tuple[str, str, str, str]:
    """(invoke opener up to the name, invoke closer, parameter opener up to the name,
    parameter closer); `space` is what stands between ｜DSML｜ and the tag name (V4.1
    writes one space there, V3.2 and V4 nothing); `ns` is the namespace token (GigaChat
    3.5 writes the same form with ｜GCML｜)."""
    return (
        f'<{ns}{space}invoke name="',
        f"</{ns}{space}invoke>",
        f'<{ns}{space}parameter name="',
        f"</{ns}{space}parameter>",
    )


def dsml_markers(block: str, space: str = "", ns: str = DSML) -> tuple[str, str, tuple[str, ...]]:
    """(block opener, block closer, every marker) for the <｜DSML｜block> wrapper."""
    block_open, block_close = f"<{ns}{space}{block}>", f"</{ns}{space}{block}>"
    return block_open, block_close, (block_open, block_close, *dsml_tags(space, ns))


def _value(
    block_close: str, decode: Literal["string", "json"], space: str = "", ns: str = DSML
) -> Node:
    """A parameter value up to </｜DSML｜parameter>, which ends it only where a parameter
    the tool declares or the invoke's end follows: a value may hold that text (a file
    that documents the format, say).  A declared parameter opening inside a value is a
    missing closing tag: the value ends there and the call is an error."""
    _, invoke_close, param_open, param_close = dsml_tags(space, ns)
    next_tag = (invoke_close, block_close, declared_param(param_open, '"'))
    ends = (
        stop(param_close, followed_by=next_tag),
        stop(param_open, followed_by=(declared_param(None, '"'),)),
    )
    return tag("param_value", until(*ends, need_stop=True), decode=decode)


def dsml_body(block: str, space: str = "") -> dict[str, Node]:
    """The rules after the reasoning block of the DSML form.

    body: content, then a block of invokes, then (rarely) more content.  The whitespace
    right before the block opener (the template's blank line) is not content.  No other
    marker is content: an invoke outside a block is reported (unexpected) and dropped up
    to its closer, any other marker there (a closer, a parameter tag, <think>, </think>)
    is reported and dropped alone.
    """
    block_open, block_close, markers = dsml_markers(block, space)
    invoke_open, invoke_close, param_open, param_close = dsml_tags(space)
    return {
        "body": seq(
            many(choice(ref("block"), ref("stray_invoke"), ref("stray"), ref("content"))), eof()
        ),
        **dsml_call_rules(block, space, self_closing=True),
        "stray_invoke": seq(
            lit(invoke_open),
            cut(),
            recover(
                choice(), seq(until(invoke_close, block_open, block_close), opt(lit(invoke_close)))
            ),
        ),
        "stray": stray(block_close, invoke_close, param_open, param_close, THINK_OPEN, THINK_CLOSE),
        "content": tag(
            "content",
            until(
                f"\n\n{block_open}",
                f"\n{block_open}",
                *markers,
                THINK_OPEN,
                THINK_CLOSE,
                min1=True,
                commit=True,
            ),
        ),
    }


def dsml_call_rules(
    block: str,
    space: str = "",
    ns: str = DSML,
    *,
    json_body: bool = True,
    untyped_parameters: bool = False,
    self_closing: bool = False,
) -> dict[str, Node]:
    """The block, invoke and parameter rules of the DSML form.  `json_body`: an invoke may
    hold one JSON object instead of parameters (DeepSeek); `untyped_parameters`: a
    parameter without its string attribute is a string (GigaChat 3.5); `self_closing`: an
    invoke closed in its own tag (``name="NAME"/>``) is a call without arguments
    (DeepSeek)."""
    block_open, block_close, _ = dsml_markers(block, space, ns)
    invoke_open, invoke_close, param_open, param_close = dsml_tags(space, ns)
    parameters = many(ref("parameter"))
    typed = [
        seq(lit('string="true"'), cut(), ws(), lit(">"), _value(block_close, "string", space, ns)),
        seq(lit('string="false"'), cut(), ws(), lit(">"), _value(block_close, "json", space, ns)),
    ]
    if untyped_parameters:
        typed.append(seq(lit(">"), _value(block_close, "string", space, ns)))
    invoke_body = seq(
        lit(">"),
        ws(),
        choice(
            seq(ahead(lit("{")), cut(), tag("tool_args", json(kind="object")), ws()),
            parameters,
        )
        if json_body
        else parameters,
        lit(invoke_close),
    )
    return {
        "block": seq(
            ws(),
            lit(block_open),
            cut(),
            ws(),
            many(ref("invoke")),
            opt(seq(lit(block_close), ws())),
        ),
        "invoke": seq(
            lit(invoke_open),
            cut(),
            recover(
                tag("tool_call", ref("invoke_rest")),
                seq(until(invoke_close, block_close), opt(lit(invoke_close))),
            ),
            ws(),
        ),
        "invoke_rest": seq(
            tag("tool_name", until('"', "\n", "<", need_stop=True)),
            lit('"'),
            ws(),
            choice(lit("/>"), invoke_body) if self_closing else invoke_body,
        ),
        "parameter": seq(
            lit(param_open),
            cut(),
            tag("param_name", until('"', "\n", "<", need_stop=True)),
            lit('"'),
            ws(),
            choice(*typed),
            lit(param_close),
            ws(),
        ),
    }


# -- reasoning ------------------------------------------------------------------------------


def reasoning_rules(*ends: str) -> dict[str, Node]:
    """think (a <think> block the output opens) and start_in_reasoning (the template
    opened it), both ending at </think> or at one of `ends` (not consumed).

    When the template opened the block, a <think> the output writes again is not
    reasoning (vLLM's DeepSeek R1 and V4 parsers drop it too)."""
    think, rest = think_block(THINK_OPEN, THINK_CLOSE, *ends)
    return {
        "think": think,
        "reasoning_rest": rest,
        "start_in_reasoning": seq(
            opt(seq(ws(), lit(THINK_OPEN))), ref("reasoning_rest"), ref("body")
        ),
    }


def dsml_grammar(block: str, space: str = "") -> Grammar:
    """The whole grammar of a DSML format whose call block is <｜DSML｜block> (with `space`
    between ｜DSML｜ and every tag name, as in V4.1's <｜DSML｜ calls>).

    The template ends the prompt with <think> in thinking mode ("start_in_reasoning") and
    with </think> otherwise; "start" also takes a <think> block the output opens and a bare
    </think> it writes first.  The block opener ends unfinished reasoning."""
    block_open, _, _ = dsml_markers(block, space)
    return Grammar(
        rules={
            "start": seq(ws(), opt(choice(ref("think"), seq(lit(THINK_CLOSE), ws()))), ref("body"))
        }
        | reasoning_rules(f"\n\n{block_open}", f"\n{block_open}", block_open)
        | dsml_body(block, space),
        entries={"start": "start", "start_in_reasoning": "start_in_reasoning"},
    )
