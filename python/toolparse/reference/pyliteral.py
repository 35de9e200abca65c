"""Pure-Python twin of csrc/pyliteral.c: a Python literal, as pythonic tool calls write
argument values, to JSON text.

The input is what the python dialect of the JSON scanner accepted.  Strings are decoded
with Python's escapes and re-escaped as json.dumps(ensure_ascii=False) does; True, False
and None become true, false and null; tuples become arrays; trailing commas go; the
separators are ", " and ": "; numbers stay as written.  A lone surrogate escape becomes
U+FFFD, and an escape Python does not know keeps its backslash, as in Python.
"""

from __future__ import annotations

import json

_SIMPLE_ESCAPES = {
    ord("\\"): "\\",
    ord("'"): "'",
    ord('"'): '"',
    ord("a"): "\a",
    ord("b"): "\b",
    ord("f"): "\f",
    ord("n"): "\n",
    ord("r"): "\r",
    ord("t"): "\t",
    ord("v"): "\v",
}
_HEX_DIGITS = {ord("x"): 2, ord("u"): 4, ord("U"): 8}
_HEX_VALUES = {b: int(chr(b), 16) for b in b"0123456789abcdefABCDEF"}
_OCTAL = b"01234567"
_SPACE = b" \t\r\n"
_WORDS = {ord("T"): (4, "true"), ord("F"): (5, "false"), ord("N"): (4, "null")}
_CLOSERS = b"]})"
_REPLACEMENT = 0xFFFD


def _hex(data: bytes, at: int, digits: int) -> tuple[int, int]:
    """(value, end) of up to `digits` hex digits at data[at]."""
    end = min(at + digits, len(data))
    value = 0
    for b in data[at:end]:
        value = value << 4 | _HEX_VALUES.get(b, 0)
    return value, end


def _escape(data: bytes, k: int, text: bytearray) -> int:
    """Decodes the escape whose letter is data[k] onto text; returns the index after it."""
    b = data[k]
    if b in _SIMPLE_ESCAPES:
        text += _SIMPLE_ESCAPES[b].encode()
        return k + 1
    if b in b"\n\r":  # a line continuation stands for nothing
        return k + 1
    if b in _HEX_DIGITS:
        code, k = _hex(data, k + 1, _HEX_DIGITS[b])
        pair = data[k : k + 2] == b"\\u" and k + 6 <= len(data)
        if b == ord("u") and 0xD800 <= code <= 0xDBFF and pair:
            low, end = _hex(data, k + 2, 4)
            if 0xDC00 <= low <= 0xDFFF:
                code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                k = end
        if 0xD800 <= code <= 0xDFFF or code > 0x10FFFF:
            code = _REPLACEMENT
        text += chr(code).encode()
        return k
    if b in _OCTAL:
        end = k
        while end < len(data) and end < k + 3 and data[end] in _OCTAL:
            end += 1
        text += chr(int(data[k:end], 8)).encode()
        return end
    text += b"\\"  # Python keeps the backslash of an escape it does not know
    return k


def _string(data: bytes, k: int, out: list[str]) -> int:
    """The string whose opening quote is data[k], as a JSON string; returns the index
    after its closing quote."""
    quote = data[k]
    k += 1
    text = bytearray()
    while k < len(data) and data[k] != quote:
        if data[k] == ord("\\"):
            k += 1
            if k < len(data):
                k = _escape(data, k, text)
        else:
            text.append(data[k])
            k += 1
    out.append(json.dumps(text.decode("utf-8", "replace"), ensure_ascii=False))
    return k + 1


def python_literal_to_json(data: bytes) -> str:
    out: list[str] = []
    k = 0
    n = len(data)
    while k < n:
        b = data[k]
        if b in _SPACE:
            k += 1
        elif b in b"\"'":
            k = _string(data, k, out)
        elif b == ord(","):
            k += 1
            after = k
            while after < n and data[after] in _SPACE:
                after += 1
            if not (after < n and data[after] in _CLOSERS):
                out.append(", ")
        elif b == ord(":"):
            k += 1
            out.append(": ")
        elif b in b"()":
            k += 1
            out.append("[" if b == ord("(") else "]")
        elif b == ord("+") and (k == 0 or data[k - 1] not in b"eE"):
            k += 1  # a number's unary plus: JSON writes none (an exponent's stays)
        elif b in _WORDS:
            length, word = _WORDS[b]
            k += length
            out.append(word)
        else:
            k += 1
            out.append(chr(b))
    return "".join(out)
