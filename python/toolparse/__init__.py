"""toolparse: a streaming parser for LLM output, tool calls and reasoning.

The native classes come from the compiled core; ``toolparse.reference`` holds their
pure-Python twins.  If the extension fails to import, this import fails too: the
reference engines are used only on explicit request, never as a silent fallback.
"""

from ._core import JsonScanner, MarkerMatcher, MarkerTrie
from .events import (
    ContentDelta,
    End,
    Event,
    ReasoningDelta,
    ToolCallArgsDelta,
    ToolCallEnd,
    ToolCallStart,
)
from .formats import FORMATS, Format, format_for_model, get_format
from .message import Message, ParseError, ToolCall
from .stream import StreamParser, parse

__version__ = "0.1.0"

__all__ = [
    "FORMATS",
    "ContentDelta",
    "End",
    "Event",
    "Format",
    "JsonScanner",
    "MarkerMatcher",
    "MarkerTrie",
    "Message",
    "ParseError",
    "ReasoningDelta",
    "StreamParser",
    "ToolCall",
    "ToolCallArgsDelta",
    "ToolCallEnd",
    "ToolCallStart",
    "__version__",
    "format_for_model",
    "formats",
    "get_format",
    "parse",
]


def formats() -> list[Format]:
    """Every built-in format: name, aliases, model families, reasoning mode, needs tools."""
    return list(FORMATS.values())
