"""The compiled core, set up: the glue imports nothing from the package, so this hands it
the package's exception mapping, event types and message tables once.  The runtime's
modules import the core from here."""

from __future__ import annotations

from ._common import marker_bytes
from ._core import (
    BatchEvents,
    JsonScanner,
    MarkerMatcher,
    MarkerTrie,
    NativeBatch,
    NativePool,
    NativeProgram,
    NativeStream,
    NativeTools,
    NativeVocab,
    configure,
)
from .arguments import load_arguments
from .errors import ERROR_KINDS, MESSAGES, Msg, detailed_message, raise_for_status
from .limits import DEFAULT_LIMITS, LIMIT_NAMES
from .message import ParseError, ToolCall
from .repair import (
    CLOSED_AT_END,
    COERCED_VALUES,
    MISSING_CLOSER,
    MISSING_OPENER,
    NothingLeft,
    repair_arguments,
)

configure(
    raise_for_status=raise_for_status,
    marker_bytes=marker_bytes,
    parse_error=ParseError,
    tool_call=ToolCall,
    repair_arguments=repair_arguments,
    nothing_left=NothingLeft,
    coerced_values=COERCED_VALUES,
    closed_at_end=CLOSED_AT_END,
    missing_opener=MISSING_OPENER,
    missing_closer=MISSING_CLOSER,
    load_arguments=load_arguments,
    detailed_message=detailed_message,
    default_limits=DEFAULT_LIMITS,
    limit_names=LIMIT_NAMES,
    error_kinds=ERROR_KINDS,
    messages=MESSAGES,
    first_limit_message=Msg.LIMIT,
)

__all__ = [
    "BatchEvents",
    "JsonScanner",
    "MarkerMatcher",
    "MarkerTrie",
    "NativeBatch",
    "NativePool",
    "NativeProgram",
    "NativeStream",
    "NativeTools",
    "NativeVocab",
]
