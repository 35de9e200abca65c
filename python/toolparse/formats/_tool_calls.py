"""The ``<tool_calls>[...]</tool_calls>`` block that several families share (Hunyuan-A13B,
Jamba, Apriel): one JSON array of call objects between two markers."""

from __future__ import annotations

from ..grammar import Node, cut, json_call, lit, recover, seq, ws
from ._base import call_array, skip_past

TOOL_CALLS_OPEN, TOOL_CALLS_CLOSE = "<tool_calls>", "</tool_calls>"


def tool_calls_block(element: Node | None = None) -> Node:
    """``<tool_calls>``, optional whitespace, a JSON array of calls (`element`, by default a
    ``{"name", "arguments"}`` object) and ``</tool_calls>``, then the whitespace after it.

    A call in the array ends once what follows it is certain (a comma, or ``]`` and the
    closing marker).  After a broken element the rest of the block is skipped up to
    ``</tool_calls>``; the calls before it stand."""
    return seq(
        lit(TOOL_CALLS_OPEN),
        cut(),
        recover(
            seq(ws(), call_array(element or json_call(), TOOL_CALLS_CLOSE)),
            skip_past(TOOL_CALLS_CLOSE),
        ),
        ws(),
    )
