"""Regexes in llguidance's syntax for the Lark writer's lexemes: literal text, character
classes, the JSON string token, prefix patterns, and text that holds none of a set of
stops written as a run of lexemes a greedy lexer ends where a stop begins."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from . import _ir as ir
from ._regex import BOOLEAN, PYTHON_STRING
from ._text import beginnings, by_length

_META = set(r"\.+*?()|[]{}^$#&-~/\"")

JSON_STRING = r'"(\\([\"\\\/bfnrt]|u[a-fA-F0-9]{4})|[^\"\\\x00-\x1F])*"'
WS = r"[ \t\r\n]"
# a typed value's Pattern (the regex writer spells integers and numbers its own way)
PATTERNS = {
    "integer": r"-?(0|[1-9][0-9]*)",
    "number": r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?",
    "boolean": BOOLEAN,
    # null only as JSON spells it (the parser reads None as the string "None")
    "null": r"null",
    "python_string": PYTHON_STRING,
}


def escape(text: bytes) -> str:
    """A regex matching exactly these bytes (UTF-8 text)."""
    out = []
    for ch in text.decode("utf-8"):
        if ch in _META:
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return "".join(out)


def pattern_regex(e: ir.Expr) -> str:
    """A prefix pattern (literals, whitespace, runs, sequences, alternatives, options) as
    a regex, grouped."""
    if isinstance(e, ir.Lit):
        return f"(?:{escape(e.text)})"
    if isinstance(e, ir.Ws):
        return f"{WS}*"
    if isinstance(e, ir.CharRun):
        return char_class(e.members) + ("+" if e.min1 else "*")
    if isinstance(e, ir.Optional_):
        return f"(?:{pattern_regex(e.item)})?"
    if isinstance(e, ir.Seq):
        return "(?:" + "".join(pattern_regex(i) for i in e.items) + ")"
    assert isinstance(e, ir.Alt)
    return "(?:" + "|".join(pattern_regex(a) for a in e.alts) + ")"


def char_class(members: Iterable[int]) -> str:
    """A character class for a set of bytes; bytes >= 0x80 stand for every non-ASCII
    character."""
    ascii_ = [b for b in members if b < 0x80]
    high = any(b >= 0x80 for b in members)
    parts = [
        f"\\x{{{low:x}}}" if low == top else f"\\x{{{low:x}}}-\\x{{{top:x}}}"
        for low, top in ir.code_runs(ascii_)
    ]
    if high:
        parts.append("\\x{80}-\\x{10FFFF}")
    return "[" + "".join(parts) + "]"


def _lead_byte_class(lead: int) -> str:
    """The characters whose UTF-8 encoding begins with this byte, as class members."""
    if lead < 0x80:
        return escape(bytes([lead]))
    if lead < 0xE0:
        low, size = (lead & 0x1F) << 6, 0x40
    elif lead < 0xF0:
        low, size = (lead & 0x0F) << 12, 0x1000
    else:
        low, size = (lead & 0x07) << 18, 0x40000
    return f"\\x{{{low:x}}}-\\x{{{low + size - 1:x}}}"


def overlapping(texts: Iterable[str]) -> bool:
    """Whether a text can begin inside a proper prefix of one of them (a proper suffix of
    that prefix being a prefix of one): ``` and ``, for instance."""
    texts = list(texts)
    starts = set(beginnings(texts))
    return any(p[j:] in starts for p in starts for j in range(1, len(p)))


def _proper_prefixes(node: dict[str, Any]) -> str:
    """A regex for the nonempty proper prefixes of the texts of a trie, written as the
    trie (a regex engine that works by derivatives keeps it small)."""
    alts = []
    for ch, child in sorted(node.items()):
        if any(child):  # more than the end of a text
            rest = _proper_prefixes(child)
            alts.append(escape(ch.encode()) + (f"({rest})?" if rest else ""))
    return alts[0] if len(alts) == 1 else "(" + "|".join(alts) + ")" if alts else ""


def text_chunks(texts: Iterable[str]) -> dict[str, str]:
    """The lexemes of text that holds none of `texts` and is written as a run of them
    with the texts themselves as literal lexemes, keyed by role:

    * ``plain``: a run of characters that begin none of the texts (``[^first]+``);
    * ``prefix``: a proper prefix of one of the texts, so that text may end with the
      beginning of a marker (the lexer ends it when the next character leaves every
      text, and reads that character again);
    * ``chunk``: such a prefix (or nothing) and one character that leaves every text
      and begins none (no key where no text is needed: single ASCII stops).

    Where a text may begin inside another's prefix (``overlapping``: ``` and ``), no
    greedy lexer could end a prefix there: ``chunk`` is then the shortest text from a
    character that begins a text which holds none and does not end with the beginning
    of one (the writer adds "and no ``open`` and more": the shortest), and ``prefix`` a
    proper prefix in which no other text begins.

    A greedy lexer reading these never takes a byte of a marker into the text, and ends
    each lexeme where the text alone decides."""
    texts = by_length(texts, longest_first=True)
    first = "".join(sorted({_lead_byte_class(m.encode()[0]) for m in texts}))
    whole = "|".join(escape(m.encode()) for m in texts)
    out = {"first": first, "plain": f"[^{first}]+", "whole": whole}
    if not any(len(m) > 1 for m in texts):
        # single characters: the chunk is a character that shares a stop's first byte
        # and is no stop (none, where every stop is ASCII)
        if any(ord(m) >= 0x80 for m in texts):
            out["chunk"] = f"/[{first}]/ & ~/{whole}/"
        return out
    if not overlapping(texts):
        prefix = _proper_prefixes(ir.word_trie(texts))
        initials = "".join(sorted({escape(m[0].encode()) for m in texts}))
        out["starts"] = prefix
        out["prefix"] = f"/{prefix}/"
        out["chunk"] = f"/({prefix})[^{initials}]|[{first}]/ & ~/[{initials}]|{prefix}|{whole}/"
        return out
    starts = beginnings(texts, longest_first=True)
    start_re = "|".join(escape(p.encode()) for p in starts)
    out["starts"] = start_re
    out["prefix"] = f"/{start_re}/ & ~/(?s:.+)({start_re})/"
    out["open"] = f"/[{first}](?s:.*)/ & ~/(?s:.*)({start_re})/"
    out["chunk"] = f"/[{first}](?s:.*)/ & ~/(?s:.*)({whole})(?s:.*)/ & ~/(?s:.*)({start_re})/"
    return out
