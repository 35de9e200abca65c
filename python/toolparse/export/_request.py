"""A request's tools and tool choice, as the lowering reads them: the tools a call may
name, and how many calls the output may hold."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from ..tools import Tool, chosen_name, read_tools

ToolChoice = str | Mapping[str, Any]

# how many tool_call tags an expression must hold
Count = Literal["any", "zero", "one", "some"]
ANY: Count = "any"
ZERO: Count = "zero"
ONE: Count = "one"
SOME: Count = "some"

# stands for every tool the list leaves out (the lowering tells it by identity): the name
# is what the format's name pattern reads, the arguments any object (what the parser
# reads as a call's)
ANY_TOOL = Tool("", {"type": "object"})


def allowed_tools(
    tools: Sequence[Mapping[str, Any]], tool_choice: ToolChoice, parallel_tool_calls: bool
) -> tuple[list[Tool], tuple[Count, ...]]:
    """The tools a call may name and how many calls the output may hold (the union of
    the counts listed)."""
    listed = read_tools(tools)
    if isinstance(tool_choice, Mapping):
        name = chosen_name(tool_choice)
        chosen = [t for t in listed if t.name == name]
        if not chosen:
            raise ValueError(f"tool_choice names {name!r}, which is not in tools")
        return chosen, (SOME,) if parallel_tool_calls else (ONE,)
    if tool_choice == "none" or (not listed and tool_choice == "auto"):
        return [], (ZERO,)
    if not listed:
        raise ValueError(f"tool_choice={tool_choice!r} with no tools")
    if tool_choice == "auto":
        return listed, (ANY,) if parallel_tool_calls else (ZERO, ONE)
    if tool_choice == "required":
        return listed, (SOME,) if parallel_tool_calls else (ONE,)
    raise ValueError(
        f"tool_choice must be 'auto', 'none', 'required' or a named tool: {tool_choice!r}"
    )
