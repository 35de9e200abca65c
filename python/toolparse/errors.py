"""What goes wrong, in one place: the root exception, the parse-error kinds and messages
both engines deliver, and the core's status codes as exceptions.

The kinds and messages are indexed by the C core's codes (``tp_error_kind`` and
``tp_message`` in csrc/); tests/core/test_header_constants.py checks that they agree.
The compiled glue imports nothing from this package: toolparse._native hands it these
tables once.
"""

from __future__ import annotations

from enum import IntEnum
from typing import NoReturn


class ToolparseError(Exception):
    """The root of toolparse's own exceptions (a ParseError raised, a core failure)."""


class CoreError(ToolparseError, ValueError):
    """The C core refused a call: a status code other than success or no memory."""


# tp_status
STATUS_OK = 0
STATUS_NOMEM = 1


def raise_for_status(status: int) -> NoReturn:
    """The exception for a failing status of the C core."""
    if status == STATUS_NOMEM:
        raise MemoryError()
    raise CoreError(f"toolparse core rejected the call (status {status})")


# tp_error_kind, in its order
ERROR_KINDS = ("incomplete", "invalid_arguments", "unexpected", "unknown_tool", "limit")


class Msg(IntEnum):
    """tp_message: which message a parse error carries."""

    ENDED_INSIDE_CALL = 0
    INVALID_ARGUMENTS = 1
    UNEXPECTED = 2
    TWO_ARGUMENTS = 3
    TWO_NAMES = 4
    EMPTY_NAME = 5
    UNKNOWN_TOOL = 6
    NO_NAME = 7
    NOT_AN_OBJECT = 8
    VALUE_TYPE = 9
    LIMIT = 10  # the first of the limits' messages, which come in LIMIT_NAMES order


# indexed by Msg; a message that holds a name is built by detailed_message(), the limits'
# by Limits.message
MESSAGES: tuple[str | None, ...] = (
    "the stream ended inside a tool call",
    "the tool call's arguments are not valid",
    "input the format does not accept here",
    "the call has two sets of arguments",
    "the call has two names",
    "the call has an empty name",
    None,
    "the call has no name",
    "the arguments are not a JSON object",
    None,
)


def message(code: Msg) -> str:
    """The text of a message that holds no name nor limit."""
    text = MESSAGES[code]
    if text is None:
        raise ValueError(f"message {code.name} is built with its detail")
    return text


def unknown_tool(name: str) -> str:
    """The message for a call of a name none of the given tools has."""
    return f"{name!r} is not one of the given tools"


def value_type(parameter: str) -> str:
    """The message for a parameter whose value, written as text, fits none of the types
    its schema allows."""
    return f"the value of {parameter!r} fits none of the types its schema allows"


def detailed_message(code: int, detail: str) -> str:
    """The message of a code whose text holds a name (MESSAGES has None there)."""
    if code == Msg.VALUE_TYPE:
        return value_type(detail)
    return unknown_tool(detail)
