"""The normalized result of a parse: Message, ToolCall, and the ParseError event."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from .errors import ToolparseError

ErrorKind = Literal["incomplete", "invalid_arguments", "unexpected", "unknown_tool", "limit"]


class ParseError(ToolparseError):
    """A protocol error in the stream, delivered as an event (and raisable).

    kind: "incomplete" (the stream ended inside a call), "invalid_arguments" (the call's
    arguments or structure are not valid), "unexpected" (input the format cannot accept
    there), "unknown_tool" (a name outside the given tools), "limit" (a resource limit).
    index: the call's index when the call had been announced, else None.  offset: the
    byte offset in the stream where the error was found.
    """

    type = "error"
    __match_args__ = ("kind", "message", "index", "offset")

    kind: str
    message: str
    index: int | None
    offset: int

    def __init__(self, kind: str, message: str, index: int | None, offset: int) -> None:
        super().__init__(message)
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "message", message)
        object.__setattr__(self, "index", index)
        object.__setattr__(self, "offset", offset)

    def __setattr__(self, name: str, value: object) -> None:
        # An event is an immutable value; Python itself may still annotate the exception.
        if name.startswith("__"):
            super().__setattr__(name, value)
            return
        raise AttributeError(f"ParseError is immutable: cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"ParseError is immutable: cannot delete {name!r}")

    def __reduce__(self) -> tuple[Callable[..., ParseError], tuple[str, str, int | None, int]]:
        return (ParseError, (self.kind, self.message, self.index, self.offset))

    def __repr__(self) -> str:
        return (
            f"ParseError(kind={self.kind!r}, message={self.message!r}, "
            f"index={self.index!r}, offset={self.offset!r})"
        )

    def __eq__(self, other: object) -> bool:
        if type(other) is not ParseError:
            return NotImplemented
        return (self.kind, self.message, self.index, self.offset) == (
            other.kind,
            other.message,
            other.index,
            other.offset,
        )

    def __hash__(self) -> int:
        return hash((self.kind, self.index, self.offset))


@dataclass(frozen=True)
class ToolCall:
    """A complete, valid tool call: what an executor may act on (after its own checks).
    repaired: the repair opt-in salvaged it; repairs: what it did, in the order of
    toolparse.repair.REPAIRS (empty for a call read as written)."""

    index: int
    id: str
    name: str
    arguments: dict[str, Any]
    arguments_json: str
    repaired: bool = False
    repairs: tuple[str, ...] = ()


@dataclass(frozen=True)
class Message:
    """An assistant message: what the events of one response add up to.  A part with
    no text is None, never "" (an empty think block is no reasoning), so a Message and
    its round trip through OpenAI chunks or an SDK's accumulator are equal."""

    content: str | None = None
    reasoning_content: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    errors: list[ParseError] = field(default_factory=list)
    finish_reason: str | None = None
