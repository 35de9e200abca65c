"""Grammar exports: a format's grammar, specialised to a request's tools and tool choice,
written for constrained-decoding engines (docs/export.md).

``lark``, ``gbnf``, ``regex`` and ``structural_tag`` take a Format (or its name), the
request's OpenAI tools list and its tool choice.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from ..formats import Format, get_format

# the writers, one module each under its own name (toolparse.export.to_lark is the
# module); none imports another (what they share lies below them)
from . import to_gbnf, to_lark, to_regex, to_structural_tag

ToolChoice = str | Mapping[str, Any]

__all__ = ["gbnf", "lark", "regex", "structural_tag"]


def lark(
    fmt: Format | str,
    tools: Sequence[Mapping[str, Any]],
    *,
    tool_choice: ToolChoice = "auto",
    parallel_tool_calls: bool = True,
    reasoning_in_prompt: bool | None = None,
    special_tokens: Collection[str] = (),
) -> str:
    """The format as an llguidance Lark grammar for these tools: what the model may emit,
    each call's arguments checked by its tool's JSON Schema.  special_tokens: markers the
    tokenizer holds as special tokens (written <|...|>)."""
    return to_lark.to_lark(
        get_format(fmt),
        tools,
        tool_choice=tool_choice,
        parallel_tool_calls=parallel_tool_calls,
        reasoning_in_prompt=reasoning_in_prompt,
        special_tokens=special_tokens,
    )


def gbnf(
    fmt: Format | str,
    tools: Sequence[Mapping[str, Any]],
    *,
    tool_choice: ToolChoice = "auto",
    parallel_tool_calls: bool = True,
    reasoning_in_prompt: bool | None = None,
) -> dict[str, Any]:
    """The format as llama.cpp GBNF for these tools, with how llama.cpp applies it:
    {"grammar", "grammar_lazy", "grammar_triggers", "preserved_tokens"}."""
    return to_gbnf.to_gbnf(
        get_format(fmt),
        tools,
        tool_choice=tool_choice,
        parallel_tool_calls=parallel_tool_calls,
        reasoning_in_prompt=reasoning_in_prompt,
    )


def regex(
    fmt: Format | str,
    tools: Sequence[Mapping[str, Any]],
    *,
    tool_choice: ToolChoice = "auto",
    parallel_tool_calls: bool = True,
    reasoning_in_prompt: bool | None = None,
) -> str:
    """The format as one regular expression for these tools, as outlines-core reads it
    (Rust regex syntax, no lookaround): the whole output must match it.
    NotImplementedError where the format or a schema nests to any depth or writes Python
    values."""
    return to_regex.to_regex(
        get_format(fmt),
        tools,
        tool_choice=tool_choice,
        parallel_tool_calls=parallel_tool_calls,
        reasoning_in_prompt=reasoning_in_prompt,
    )


def structural_tag(
    fmt: Format | str,
    tools: Sequence[Mapping[str, Any]],
    *,
    tool_choice: ToolChoice = "auto",
    parallel_tool_calls: bool = True,
) -> dict[str, Any]:
    """The format's calls as an xgrammar structural tag for these tools: per tool the text
    that begins its call, what lies between (its arguments schema, or a grammar where the
    call's body is not one JSON value) and the text that ends it, and the triggers."""
    return to_structural_tag.to_structural_tag(
        get_format(fmt), tools, tool_choice=tool_choice, parallel_tool_calls=parallel_tool_calls
    )
