"""Export a format to one regular expression, as outlines-core reads it (Rust regex syntax
without lookaround or backreferences; the expression is also valid for Python's re).

The lowered grammar is written out by _regex.py with every rule inlined, so a grammar
whose rules refer to themselves (values nested to any depth) has no regex and is refused
with NotImplementedError.  JSON whitespace is one space, or a newline and an indent
(WHITESPACE; outlines' default is ``[ ]?``): pretty-printed arguments match, blank lines
do not; free-form JSON (a schema with no properties) is bounded to MAX_DEPTH nested
containers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..formats import Format
from ._lower import lower_format
from ._regex import Writer
from ._request import ToolChoice

# JSON whitespace between tokens: one space, or a newline and an indent (pretty-printed
# JSON); at most one newline, where outlines' default [ ]? has none (and where
# [ \t\n]* would let a model pad with blank lines), and cheap in a DFA
WHITESPACE = r"(?:[ ]|\n[ \t]*)?"
# free-form JSON (a schema with no properties): containers nested at most this deep, the
# object itself counting (1: an object of scalars); each level multiplies the expression
MAX_DEPTH = 1


def to_regex(
    fmt: Format,
    tools: Sequence[Mapping[str, Any]],
    *,
    tool_choice: ToolChoice = "auto",
    parallel_tool_calls: bool = True,
    reasoning_in_prompt: bool | None = None,
    whitespace: str = WHITESPACE,
    max_depth: int = MAX_DEPTH,
) -> str:
    """The format as one regular expression for these tools (docs/export.md); the whole
    output must match it.  whitespace: the regex for whitespace between JSON tokens;
    max_depth: how deeply free-form JSON may nest containers."""
    what = f"format {fmt.name!r}"
    try:
        lowered = lower_format(
            fmt,
            tools,
            tool_choice,
            parallel_tool_calls,
            reasoning_in_prompt,
            literal_depth=max_depth,
        )
    except NotImplementedError as e:
        raise NotImplementedError(f"{e} (as a regex)") from e
    writer = Writer(lowered, what, whitespace, max_depth, grouped=whitespace == WHITESPACE)
    found = writer.rule(lowered.start)
    if found is None:
        raise ValueError(f"{what}: no output satisfies the tool choice")
    return found.text
