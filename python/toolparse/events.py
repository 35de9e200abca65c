"""Stream events (see docs/engine.md).  Each has a stable ``.type`` string.

They are extension types of the compiled core, so the native engine creates them without
Python-level overhead; the reference engine creates the same types.  Where the core is
not built, the reference engine runs on their pure-Python twins (toolparse._events_py),
which behave the same.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .message import ParseError

if TYPE_CHECKING:
    from ._core import (
        ContentDelta,
        End,
        ReasoningDelta,
        ToolCallArgsDelta,
        ToolCallEnd,
        ToolCallStart,
    )
else:
    try:
        from ._core import (
            ContentDelta,
            End,
            ReasoningDelta,
            ToolCallArgsDelta,
            ToolCallEnd,
            ToolCallStart,
        )
    except ModuleNotFoundError as missing:  # the core is not built: the twins
        if missing.name != f"{__package__}._core":
            raise
        from ._events_py import (
            ContentDelta,
            End,
            ReasoningDelta,
            ToolCallArgsDelta,
            ToolCallEnd,
            ToolCallStart,
        )

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
