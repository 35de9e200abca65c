"""Export a format to llama.cpp's GBNF (_gbnf.py writes it), with the lazy-grammar
triggers and the preserved tokens of llama.cpp's chat formats."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..formats import Format
from ._calls import json_triggers
from ._gbnf import render
from ._lower import lower_format
from ._request import ToolChoice


def to_gbnf(
    fmt: Format,
    tools: Sequence[Mapping[str, Any]],
    *,
    tool_choice: ToolChoice = "auto",
    parallel_tool_calls: bool = True,
    reasoning_in_prompt: bool | None = None,
) -> dict[str, Any]:
    """The GBNF grammar and how llama.cpp applies it: ``grammar``, ``grammar_lazy``
    (with tool_choice "auto" the grammar waits for a trigger), ``grammar_triggers``
    (``{"type": "word", "value": marker}`` for the texts that begin a call) and
    ``preserved_tokens`` (the format's markers, kept as text when detokenised)."""
    lowered = lower_format(fmt, tools, tool_choice, parallel_tool_calls, reasoning_in_prompt)
    triggers = _triggers(fmt, tools)
    lazy = tool_choice == "auto" and bool(triggers)
    return {
        "grammar": render(lowered),
        "grammar_lazy": lazy,
        "grammar_triggers": [{"type": "word", "value": t} for t in triggers] if lazy else [],
        "preserved_tokens": list(fmt.markers),
    }


def _triggers(fmt: Format, tools: Sequence[Mapping[str, Any]]) -> list[str]:
    """The texts a call begins with: the structural tag's triggers (where each call is
    its tool name and one JSON value, those of the whole call), else the format's call
    marker."""
    try:
        return json_triggers(fmt, tools)
    except (NotImplementedError, ValueError):
        pass
    if fmt.call_markers:
        return [fmt.call_markers[0]]
    return []
