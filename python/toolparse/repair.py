"""Salvaging a tool call's arguments: the opt-in of StreamParser(..., repair=True).

A model prompted to write calls as raw text (the fallback formats) may write JSON that is
not quite JSON, or stop before the call is closed.  repair_arguments() reads such
arguments leniently and returns strict JSON, or None when nothing trustworthy is left;
the call it gives back is marked repaired, so an application can hold it to read-only
tools.  Without the opt-in the same input is a ParseError.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .arguments import duplicate_key, load_arguments

# Deeper arguments are not salvaged (the scanner's default depth limit is 512; this keeps
# the recursive reader far from Python's own limit).
MAX_DEPTH = 200

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


class _Reader:
    """A lenient JSON reader that takes the end of the text as the end of every open
    value: an unterminated string ends there, open containers close, a member whose
    value never began is dropped, a number keeps its valid part, a literal its only
    completion."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.at = 0

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
        while True:
            if not self.space():
                return found
            if self.text[self.at] == "}":
                self.at += 1
                return found
            if self.text[self.at] in "\"'":
                key, closed = self.string()
                if not closed:
                    return found  # the key itself was cut off
            else:
                match = _IDENTIFIER.match(self.text, self.at)
                if match is None:
                    raise _Invalid
                key = match.group()
                self.at = match.end()
            if not self.space():
                return found
            if self.text[self.at] != ":":
                raise _Invalid
            self.at += 1
            value = self.value(depth)
            if value is _MISSING:
                return found
            if key in found:
                raise duplicate_key(key)  # which of the two was meant is a guess
            found[key] = value
            if not self.space():
                return found
            if self.text[self.at] == ",":
                self.at += 1
            elif self.text[self.at] != "}":
                raise _Invalid

    def array(self, depth: int) -> list[Any]:
        self.at += 1
        found: list[Any] = []
        while True:
            if not self.space():
                return found
            if self.text[self.at] == "]":
                self.at += 1
                return found
            value = self.value(depth)
            if value is _MISSING:
                return found
            found.append(value)
            if not self.space():
                return found
            if self.text[self.at] == ",":
                self.at += 1
            elif self.text[self.at] != "]":
                raise _Invalid

    def string(self) -> tuple[str, bool]:
        """(the string's text, whether its closing quote came)."""
        text = self.text
        quote = text[self.at]
        at = self.at + 1
        out: list[str] = []
        while at < len(text):
            char = text[at]
            if char == quote:
                self.at = at + 1
                return "".join(out), True
            if char != "\\":
                out.append(char)
                at += 1
                continue
            if at + 1 >= len(text):
                break  # cut inside an escape: the escape is dropped
            code = text[at + 1]
            if code != "u":
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
            out.append("\ufffd" if 0xD800 <= point <= 0xDFFF else chr(point))
        self.at = len(text)
        return "".join(out), False

    def number(self) -> Any:
        run = _NUMBER_CHARS.match(self.text, self.at)
        assert run is not None
        match = _NUMBER.match(self.text, self.at)
        if run.end() < len(self.text):  # a whole number: it must be valid as written
            if match is None or match.end() != run.end():
                raise _Invalid
        self.at = run.end()
        if match is None:
            return _MISSING  # only "-" before the end
        # a number cut off keeps its valid part
        return load_arguments(match.group())

    def word(self) -> Any:
        match = _IDENTIFIER.match(self.text, self.at)
        if match is None:
            raise _Invalid
        word = match.group()
        self.at = match.end()
        if word in _WORDS:
            return _WORDS[word]
        if self.at == len(self.text):  # cut inside a literal: its only completion
            completions = [w for w in _WORDS if w.startswith(word)]
            if len({_WORDS[w] for w in completions}) == 1 and completions:
                return _WORDS[completions[0]]
        raise _Invalid


def repair_arguments(text: str) -> str | None:
    """Arguments as strict JSON text (json.dumps, non-ASCII kept), read leniently, or None
    when they are not an object or not something a repair may guess at; ArgumentsError
    (toolparse.arguments) where they name a key twice or hold a number no float holds."""
    reader = _Reader(text)
    try:
        value = reader.value(0)
    except _Invalid:
        return None
    if not isinstance(value, dict):
        return None
    if reader.at < len(text) and reader.space():
        return None  # more after the object
    return json.dumps(value, ensure_ascii=False)
