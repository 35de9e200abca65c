"""toolparse: a streaming parser for LLM output, tool calls and reasoning.

The native classes come from the compiled core; ``toolparse.reference`` holds their
pure-Python twins.  If the extension fails to import, this import fails too: the
reference engines are used only on explicit request, never as a silent fallback.
"""

from ._core import JsonScanner, MarkerMatcher, MarkerTrie
from .batch import BatchParser
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
from .guard import Decision, Guard, GuardPolicy, TurnReview
from .limits import Limits
from .message import Message, ParseError, ToolCall
from .stream import StreamParser, parse
from .templates import Detection, detect_format
from .validate import CallValidation, ToolValidator, ValidationIssue, ValidationReport
from .vocab import Vocab

__version__ = "0.1.0"

__all__ = [
    "FORMATS",
    "BatchParser",
    "CallValidation",
    "ContentDelta",
    "Decision",
    "Detection",
    "End",
    "Event",
    "Format",
    "Guard",
    "GuardPolicy",
    "JsonScanner",
    "Limits",
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
    "ToolValidator",
    "TurnReview",
    "ValidationIssue",
    "ValidationReport",
    "Vocab",
    "__version__",
    "detect_format",
    "format_for_model",
    "formats",
    "get_format",
    "parse",
]


def formats() -> list[Format]:
    """Every built-in format: name, aliases, model families, reasoning mode, needs tools."""
    return list(FORMATS.values())
