"""Stream events (see docs/engine.md).  Each has a stable ``.type`` string.

They are extension types of the compiled core, so the native engine creates them without
Python-level overhead; the reference engine creates the same types.
"""

from __future__ import annotations

from ._core import (
    ContentDelta,
    End,
    ReasoningDelta,
    ToolCallArgsDelta,
    ToolCallEnd,
    ToolCallStart,
)
from .message import ParseError

Event = (
    ReasoningDelta
    | ContentDelta
    | ToolCallStart
    | ToolCallArgsDelta
    | ToolCallEnd
    | ParseError
    | End
)

__all__ = [
    "ContentDelta",
    "End",
    "Event",
    "ParseError",
    "ReasoningDelta",
    "ToolCallArgsDelta",
    "ToolCallEnd",
    "ToolCallStart",
]
