"""Salvaging a tool call's arguments: the opt-in of StreamParser(..., repair=True).

A model may write arguments that are not quite JSON, or stop before the call is closed.
repair_arguments() reads such arguments leniently and returns strict JSON with the
repairs it did, or None when nothing trustworthy is left; the call it gives back is
marked repaired and names its repairs, so an application can hold it to read-only tools
and log why.  Without the opt-in the same input is a ParseError.

The repairs a call may name, in this order:

- ``missing_opener``: the call was written without the marker that opens a call, where
  the format's repair mode knows models to leave it out (Gemma 4's bare ``call:NAME{...}``
  after its thought channel); the grammar marks it, not this module;
- ``missing_closer``: a closing tag was left out in the middle of the output: a value's
  (``</parameter>``) before the next parameter its tool declares or before the call's
  closing marker, or a call's before the next call or the block's closing marker.  The
  grammar marks it where what comes next shows where the value or the call ended;
- ``closed_at_end``: the output ended inside the call; its closing marker, and any
  string, object or array still open, was taken as given there (a string keeps the
  text it has, a literal its only completion: ``tr`` is true);
- ``dropped_member``: a member (a key or a parameter) whose value never began, or was a
  number the end cut off (``4`` may have been ``42``), was dropped: a repair never
  invents a value.  Where that leaves no member at all, the call is incomplete
  (NothingLeft), not repaired;
- ``lenient_arguments``: the arguments were not strict JSON and were read leniently
  (single quotes, bare keys, Python's True / False / None, trailing commas, a comma left
  out before an object's next key or before an array's next string, object or array,
  raw control characters, unknown escapes, lone surrogates);
- ``coerced_values``: a value (at the top level, or inside an object or an array where
  the schema states its properties' or items' types) fit them only once converted
  (coerce_arguments()): ``"2"`` for an integer, ``"true"`` for a boolean, ``2`` for a
  string, an object written as a JSON string; a value that fits no type even then is
  left as the model wrote it, for the validator to refuse.  A parameter written as text
  (XML-style formats) whose text fit none of its types is read leniently from its text
  first (``"3"`` in quotes, ``{k: 'v'}``, ``[1, 2,]``); one that converts to no type
  either stays ``invalid_arguments``, as without repair.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from .arguments import duplicate_key, load_arguments
from .errors import value_type
from .tools import Stated

# Deeper arguments are not salvaged (the scanner's default depth limit is 512; this keeps
# the recursive reader far from Python's own limit).
MAX_DEPTH = 200

MISSING_OPENER = "missing_opener"
MISSING_CLOSER = "missing_closer"
CLOSED_AT_END = "closed_at_end"
DROPPED_MEMBER = "dropped_member"
LENIENT_ARGUMENTS = "lenient_arguments"
COERCED_VALUES = "coerced_values"
REPAIRS = (
    MISSING_OPENER,
    MISSING_CLOSER,
    CLOSED_AT_END,
    DROPPED_MEMBER,
    LENIENT_ARGUMENTS,
    COERCED_VALUES,
)

# what a repair-mode stream calls at each call's end: coerce_call() with the tools' types
Coerce = Callable[[str, Any, bool, bool], "tuple[dict[str, Any], str] | None"]

_Open = TypeVar("_Open", dict[str, Any], list[Any])
_MISSING: Any = object()  # input ended before a value began
_SPACE = " \t\r\n"
_WORDS = {
    "true": True,
    "false": False,
    "null": None,
    "True": True,
    "False": False,
    "None": None,
}
_IDENTIFIER = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_NUMBER_CHARS = re.compile(r"[-+.eE0-9]+")
_ESCAPES = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


class _Invalid(Exception):
    """Not something a repair may guess at."""


class NothingLeft(ValueError):
    """Every member of the arguments was cut off: the call is incomplete, not repaired."""

    def __init__(self) -> None:
        super().__init__("every argument was cut off")


class _Reader:
    """A lenient JSON reader that takes the end of the text as the end of every open
    value: an unterminated string ends there, open containers close, a member whose
    value never began or was a number cut off is dropped, a literal takes its only
    completion."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.at = 0
        self.cut = False  # the end of the text was the end of an open value
        self.dropped = False  # a member whose value never began was dropped
        self.lenient = False  # something not strict JSON was read

    def space(self) -> bool:
        """Skips whitespace; whether text remains."""
        text, at = self.text, self.at
        while at < len(text) and text[at] in _SPACE:
            at += 1
        self.at = at
        return at < len(text)

    def value(self, depth: int) -> Any:
        if not self.space():
            return _MISSING
        if depth > MAX_DEPTH:
            raise _Invalid
        first = self.text[self.at]
        if first == "{":
            return self.object(depth + 1)
        if first == "[":
            return self.array(depth + 1)
        if first in "\"'":
            return self.string()[0]  # a string cut off keeps what it has
        if first == "-" or first.isdigit():
            return self.number()
        return self.word()

    def object(self, depth: int) -> dict[str, Any]:
        self.at += 1
        found: dict[str, Any] = {}
        comma = False
        while True:
            if not self.space():
                return self.ended(found)
            if self.text[self.at] == "}":
                self.lenient |= comma  # a trailing comma
                self.at += 1
                return found
            if self.text[self.at] in "\"'":
                key, closed = self.string()
                if not closed:
                    return self.ended(found, dropped=True)  # the key itself was cut off
            else:
                match = _IDENTIFIER.match(self.text, self.at)
                if match is None:
                    raise _Invalid
                key = match.group()
                self.lenient = True  # a bare key
                self.at = match.end()
            if not self.space():
                return self.ended(found, dropped=True)
            if self.text[self.at] != ":":
                raise _Invalid
            self.at += 1
            value = self.value(depth)
            if value is _MISSING:
                return self.ended(found, dropped=True)
            if key in found:
                raise duplicate_key(key)  # which of the two was meant is a guess
            found[key] = value
            if not self.space():
                return self.ended(found)
            comma = self.text[self.at] == ","
            if comma:
                self.at += 1
            elif self.text[self.at] in "\"'" or _IDENTIFIER.match(self.text, self.at):
                self.lenient = True  # a comma left out before the next key
            elif self.text[self.at] != "}":
                raise _Invalid

    def array(self, depth: int) -> list[Any]:
        self.at += 1
        found: list[Any] = []
        comma = False
        while True:
            if not self.space():
                return self.ended(found)
            if self.text[self.at] == "]":
                self.lenient |= comma  # a trailing comma
                self.at += 1
                return found
            value = self.value(depth)
            if value is _MISSING:
                return self.ended(found)
            found.append(value)
            if not self.space():
                return self.ended(found)
            comma = self.text[self.at] == ","
            if comma:
                self.at += 1
            elif self.text[self.at] in "\"'{[":
                self.lenient = True  # a comma left out before a string, object or array
            elif self.text[self.at] != "]":
                raise _Invalid

    def ended(self, found: _Open, dropped: bool = False) -> _Open:
        """An open object or array that the end of the text closes."""
        self.cut = True
        self.dropped |= dropped
        return found

    def string(self) -> tuple[str, bool]:
        """(the string's text, whether its closing quote came)."""
        text = self.text
        quote = text[self.at]
        self.lenient |= quote == "'"
        at = self.at + 1
        out: list[str] = []
        while at < len(text):
            char = text[at]
            if char == quote:
                self.at = at + 1
                return "".join(out), True
            if char != "\\":
                self.lenient |= char < " "  # a raw control character
                out.append(char)
                at += 1
                continue
            if at + 1 >= len(text):
                break  # cut inside an escape: the escape is dropped
            code = text[at + 1]
            if code != "u":
                self.lenient |= code not in _ESCAPES and code not in '"\\/'
                out.append(_ESCAPES.get(code, code))
                at += 2
                continue
            digits = text[at + 2 : at + 6]
            if len(digits) < 4:
                break
            try:
                point = int(digits, 16)
            except ValueError:
                raise _Invalid from None
            at += 6
            if 0xD800 <= point <= 0xDBFF and text[at : at + 2] == "\\u":
                try:
                    low = int(text[at + 2 : at + 6], 16)
                except ValueError:
                    low = 0
                if 0xDC00 <= low <= 0xDFFF:
                    point = 0x10000 + ((point - 0xD800) << 10) + (low - 0xDC00)
                    at += 6
            lone = 0xD800 <= point <= 0xDFFF
            self.lenient |= lone
            out.append("\ufffd" if lone else chr(point))
        self.at = len(text)
        self.cut = True
        # a character the end cut off was read as U+FFFD: it is not part of the text
        return "".join(out).rstrip("\ufffd"), False

    def number(self) -> Any:
        run = _NUMBER_CHARS.match(self.text, self.at)
        assert run is not None
        match = _NUMBER.match(self.text, self.at)
        if run.end() < len(self.text):  # a whole number: it must be valid as written
            if match is None or match.end() != run.end():
                raise _Invalid
        self.at = run.end()
        if match is None or run.end() == len(self.text):
            # a number the end cut off is no value: 4 may have been 42
            return _MISSING
        return load_arguments(match.group())

    def word(self) -> Any:
        match = _IDENTIFIER.match(self.text, self.at)
        if match is None:
            raise _Invalid
        word = match.group()
        self.at = match.end()
        if word in _WORDS:
            self.lenient |= word[0].isupper()  # Python's True, False, None
            return _WORDS[word]
        if self.at == len(self.text):  # cut inside a literal: its only completion
            completions = [w for w in _WORDS if w.startswith(word)]
            if len({_WORDS[w] for w in completions}) == 1 and completions:
                self.cut = True
                self.lenient |= word[0].isupper()
                return _WORDS[completions[0]]
        raise _Invalid


def repair_arguments(text: str, closed_at_end: bool = False) -> tuple[str, tuple[str, ...]] | None:
    """(the arguments as strict JSON text (json.dumps, non-ASCII kept), read leniently, and
    the repairs that took), or None when they are not an object or not something a repair
    may guess at; ArgumentsError (toolparse.arguments) where they name a key twice or hold
    a number no float holds; NothingLeft where every member was cut off.  closed_at_end:
    the end of the output stood for the call's closing marker.  It is meant for arguments
    that need repair: where none of the other repairs took, the reading is named lenient."""
    reader = _Reader(text)
    try:
        value = reader.value(0)
    except _Invalid:
        return None
    if not isinstance(value, dict):
        return None
    if reader.at < len(text) and reader.space():
        return None  # more after the object
    done = (closed_at_end or reader.cut, reader.dropped, reader.lenient)
    read = (CLOSED_AT_END, DROPPED_MEMBER, LENIENT_ARGUMENTS)  # what the reader does
    repairs = tuple(name for name, did in zip(read, done, strict=True) if did)
    if reader.dropped and not value:
        raise NothingLeft
    if not repairs:
        # it is asked for arguments that a strict reading refused: what refused them was
        # read leniently (a form this reader takes silently)
        repairs = (LENIENT_ARGUMENTS,)
    return json.dumps(value, ensure_ascii=False), repairs


_INTEGER = re.compile(r"[-+]?[0-9]+")
_DECIMAL = re.compile(r"[-+]?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")
_BOOLEANS = {"true": True, "false": False, "True": True, "False": False}


def _fits(value: Any, kind: str) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind == "integer":
        return type(value) is int or (type(value) is float and value.is_integer())
    if kind == "number":
        return type(value) in (int, float)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "null":
        return value is None
    if kind == "object":
        return isinstance(value, dict)
    if kind == "array":
        return isinstance(value, list)
    return True  # a type this reader does not know: nothing to convert to


def _converted(value: Any, kind: str) -> Any:
    """value as `kind`, or _MISSING where it does not convert without a guess."""
    if isinstance(value, str):
        text = value.strip()
        if kind == "integer" and _INTEGER.fullmatch(text):
            return int(text)
        if kind == "number" and _DECIMAL.fullmatch(text.lstrip("+")):
            number = float(text)
            if math.isfinite(number):
                return int(text) if _INTEGER.fullmatch(text) else number
        if kind == "boolean" and text in _BOOLEANS:
            return _BOOLEANS[text]
        if kind == "null" and text in ("null", "None"):
            return None
        if kind in ("object", "array") and text[:1] in "{[":
            try:
                found = load_arguments(text) if kind == "object" else json.loads(text)
            except ValueError:
                return _MISSING
            if isinstance(found, dict if kind == "object" else list):
                return found
        return _MISSING
    if kind == "string" and type(value) in (int, float, bool):
        return json.dumps(value)
    return _MISSING


def _written_value(text: str) -> Any:
    """The one value a text holds, read leniently (``"3"``, ``{k: 2}``, ``[1, 2,]``), or
    _MISSING: a parameter's value written as text that fit none of its types."""
    reader = _Reader(text)
    try:
        value = reader.value(0)
    except (_Invalid, ValueError):
        return _MISSING
    if reader.cut or reader.space():
        return _MISSING  # no value, one left open, or more after it
    return value


def _coerced_value(value: Any, kinds: tuple[str, ...], written: bool) -> Any:
    """value converted to the first of kinds it converts to, or _MISSING (it fits one
    already, or converts to none); written: see coerce_arguments()."""
    if not kinds or any(_fits(value, kind) for kind in kinds):
        return _MISSING
    candidates = [value]
    if written and isinstance(value, str):
        read = _written_value(value)
        if read is not _MISSING:
            candidates.insert(0, read)
    for candidate in candidates:
        if any(_fits(candidate, kind) for kind in kinds):
            return candidate
        for kind in kinds:
            found = _converted(candidate, kind)
            if found is not _MISSING:
                return found
    return _MISSING


def _coerced(value: Any, schema: Stated, written: bool) -> Any:
    """value with it and what it holds converted to the types the schema states at each
    place, or _MISSING where nothing needed it."""
    found = _coerced_value(value, schema.types, written)
    changed = found is not _MISSING
    value = found if changed else value
    if isinstance(value, dict) and schema.properties:
        inner = {
            k: _coerced(v, schema.properties[k], False)
            for k, v in value.items()
            if k in schema.properties
        }
        converted = {k: v for k, v in inner.items() if v is not _MISSING}
        if converted:
            value, changed = {**value, **converted}, True
    elif isinstance(value, list) and schema.items is not None:
        items = schema.items
        inner_items = [_coerced(v, items, False) for v in value]
        if any(v is not _MISSING for v in inner_items):
            value = [v if c is _MISSING else c for v, c in zip(value, inner_items, strict=True)]
            changed = True
    return value if changed else _MISSING


def coerce_arguments(
    arguments: dict[str, Any],
    schemas: Mapping[str, Stated | tuple[str, ...]],
    written: bool = False,
) -> dict[str, Any] | None:
    """The arguments with each value that fits none of the types its schema states, at
    the top level and inside objects and arrays, converted to the first of them it
    converts to; None when none needed it.  schemas: parameter -> toolparse.tools.Stated
    (or just its types).  written: the arguments were written as text (XML-style
    parameters), and a top-level value that fit none of its types came as a string of its
    text, which may hold a value of one (``"3"`` quoted, an object with bare keys): it is
    read leniently first."""
    changed = dict(arguments)
    did = False
    for name, value in arguments.items():
        schema = schemas.get(name)
        if schema is None:
            continue
        if isinstance(schema, tuple):
            schema = Stated(schema)
        found = _coerced(value, schema, written)
        if found is not _MISSING:
            changed[name], did = found, True
    return changed if did else None


def coerce_call(
    stated: Mapping[str, Mapping[str, Stated]],
    name: str,
    arguments: Any,
    closed_at_end: bool,
    unfit: bool = False,
) -> tuple[dict[str, Any], str] | None:
    """A call's arguments (as read) with their values coerced to the tool's stated types
    (coerce_arguments(); stated: toolparse.tools.stated_schemas()), and their JSON; None when
    none needed it: what a repair-mode stream asks at each call's end, on both engines.
    closed_at_end: the end of the output closed the call, so its last value may be cut
    short and is not converted ("1" of "12" is no integer 1).  unfit: a value written as
    text fit none of its types and came as a string of its text (coerce_arguments(...,
    written=True)); one that does not convert either is ValueError, as without repair."""
    types = stated.get(name) or {}
    if not isinstance(arguments, dict):
        return None
    if closed_at_end and arguments and not unfit:
        types = {k: v for k, v in types.items() if k != list(arguments)[-1]}
    changed = coerce_arguments(arguments, types, written=unfit)
    if unfit:
        for key, value in (changed or arguments).items():
            schema = types.get(key)
            if schema and schema.types and not any(_fits(value, k) for k in schema.types):
                raise ValueError(value_type(key))
    return None if changed is None else (changed, json.dumps(changed, ensure_ascii=False))
