"""toolparse: a streaming parser for LLM output, tool calls and reasoning.

The runtime's API: ``parse`` and ``StreamParser`` (one response), ``BatchParser`` (many
streams a step), ``Vocab`` (token ids), the events and ``Message`` they build, the
formats.  The rest lives in its own package: ``toolparse.export`` (grammars for
constrained decoding), ``toolparse.derive`` (formats from chat templates),
``toolparse.wire`` (OpenAI and Anthropic shapes), ``toolparse.agent`` (validation, guard,
audit), ``toolparse.adapters`` (vLLM, SGLang), ``toolparse.reference`` (the pure-Python
engine, the specification).

The parsers run on the compiled core and are imported when first used, so that the
formats and the reference engine import without it.  If the extension fails to import,
using a parser fails too: the reference engine is used only on explicit request, never as
a silent fallback.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .errors import ToolparseError
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
from .limits import Limits
from .message import Message, ParseError, ToolCall

if TYPE_CHECKING:
    from .batch import BatchParser
    from .stream import StreamParser, parse
    from .vocab import Vocab

__version__ = "0.1.0"

# the names that need the compiled core, and the module each comes from
_NATIVE = {"BatchParser": "batch", "StreamParser": "stream", "parse": "stream", "Vocab": "vocab"}

__all__ = [
    "FORMATS",
    "BatchParser",
    "ContentDelta",
    "End",
    "Event",
    "Format",
    "Limits",
    "Message",
    "ParseError",
    "ReasoningDelta",
    "StreamParser",
    "ToolCall",
    "ToolCallArgsDelta",
    "ToolCallEnd",
    "ToolCallStart",
    "ToolparseError",
    "Vocab",
    "__version__",
    "format_for_model",
    "formats",
    "get_format",
    "parse",
]


def __getattr__(name: str) -> Any:
    module = _NATIVE.get(name)
    if module is None:
        raise AttributeError(f"module 'toolparse' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # the next lookup is an ordinary one
    return value


def formats() -> list[Format]:
    """Every built-in format: name, aliases, model families, reasoning mode, needs tools."""
    return list(FORMATS.values())
