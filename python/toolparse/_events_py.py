"""The event types in pure Python, for an environment without the compiled core: the same
names, fields, ``type`` strings, equality, hashing, repr and pattern matching as the
native types of src/events.pxi, which both engines create whenever the core is built.

The native types stay the ones in use because the core makes one per token: through its
freelist an event costs a fraction of what a Python class instance does (docs/engine.md,
"Event types").  tests/core/test_events.py holds the two sets to each other.
"""

from __future__ import annotations

from typing import Any, ClassVar


class _Event:
    __slots__ = ()
    _fields: ClassVar[tuple[str, ...]] = ()
    _hashed: ClassVar[tuple[str, ...]] = ()

    def _set(self, **values: Any) -> None:
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"attribute {name!r} of {type(self).__name__!r} is not writable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"attribute {name!r} of {type(self).__name__!r} is not writable")

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__name__}({shown})"

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in self._fields)

    def __hash__(self) -> int:
        return hash((type(self), *(getattr(self, n) for n in self._hashed)))

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (type(self), tuple(getattr(self, n) for n in self._fields))


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected str, not {type(value).__name__}")
    return value


def _index(value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"an integer is required, not {type(value).__name__}")
    return value


class ReasoningDelta(_Event):
    """Reasoning text, in order; whole UTF-8 characters."""

    __slots__ = ("text",)
    __match_args__ = ("text",)
    _fields = _hashed = ("text",)
    type = "reasoning.delta"
    text: str

    def __init__(self, text: str) -> None:
        self._set(text=_text(text))


class ContentDelta(_Event):
    """Visible text, in order; whole UTF-8 characters; never part of a marker."""

    __slots__ = ("text",)
    __match_args__ = ("text",)
    _fields = _hashed = ("text",)
    type = "content.delta"
    text: str

    def __init__(self, text: str) -> None:
        self._set(text=_text(text))


class ToolCallStart(_Event):
    """A call's name is complete: the call has an index and an id from here on."""

    __slots__ = ("id", "index", "name")
    __match_args__ = ("index", "id", "name")
    _fields = _hashed = ("index", "id", "name")
    type = "tool_call.start"
    index: int
    id: str
    name: str

    def __init__(self, index: int, id: str, name: str) -> None:
        self._set(index=_index(index), id=_text(id), name=_text(name))


class ToolCallArgsDelta(_Event):
    """The next piece of a call's arguments as JSON text."""

    __slots__ = ("index", "text")
    __match_args__ = ("index", "text")
    _fields = _hashed = ("index", "text")
    type = "tool_call.arguments.delta"
    index: int
    text: str

    def __init__(self, index: int, text: str) -> None:
        self._set(index=_index(index), text=_text(text))


class ToolCallEnd(_Event):
    """The call is complete and its arguments are valid: the only event to act on."""

    __slots__ = ("call", "index")
    __match_args__ = ("index", "call")
    _fields = ("index", "call")
    _hashed = ("index",)
    type = "tool_call.end"
    index: int
    call: Any

    def __init__(self, index: int, call: Any) -> None:
        if call is None:
            raise TypeError("call must not be None")
        self._set(index=_index(index), call=call)


class End(_Event):
    """The stream is finished: the last event of finish()."""

    __slots__ = ("finish_reason", "message")
    __match_args__ = ("finish_reason", "message")
    _fields = ("finish_reason", "message")
    _hashed = ("finish_reason",)
    type = "end"
    finish_reason: str
    message: Any

    def __init__(self, finish_reason: str, message: Any) -> None:
        if message is None:
            raise TypeError("message must not be None")
        self._set(finish_reason=_text(finish_reason), message=message)
