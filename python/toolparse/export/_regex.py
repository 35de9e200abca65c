"""Regular-expression pieces shared by the exports (Rust regex syntax, as llguidance,
outlines-core and GBNF's character classes read it)."""

from __future__ import annotations

from collections.abc import Iterable

from .. import grammar as g

_META = set(r"\.+*?()|[]{}^$#&-~/\"")

JSON_STRING = r'"(\\([\"\\\/bfnrt]|u[a-fA-F0-9]{4})|[^\"\\\x00-\x1F])*"'
WS = r"[ \t\r\n]"
PATTERNS = {
    "integer": r"-?(0|[1-9][0-9]*)",
    "number": r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?",
    "boolean": r"true|false|True|False",  # Python's spelling too, as the parser reads it
    "null": r"null|None",
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


def char_class(members: Iterable[int]) -> str:
    """A character class for a set of bytes; bytes >= 0x80 stand for every non-ASCII
    character."""
    ascii_ = sorted(b for b in members if b < 0x80)
    high = any(b >= 0x80 for b in members)
    parts = []
    k = 0
    while k < len(ascii_):
        j = k
        while j + 1 < len(ascii_) and ascii_[j + 1] == ascii_[j] + 1:
            j += 1
        low, top = ascii_[k], ascii_[j]
        parts.append(f"\\x{{{low:x}}}" if low == top else f"\\x{{{low:x}}}-\\x{{{top:x}}}")
        k = j + 1
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


def text_lexemes(stops: Iterable[g.Stop]) -> tuple[str, str, str, str]:
    """Text that holds none of the stops, as a run of lexemes a greedy lexer ends where a
    stop begins: (first, plain, starts, whole).  plain (``[^first]+``) is a run of
    characters that begin no stop; a chunk is the shortest text from a character in
    `first` that holds no stop (`whole`) and does not end with the beginning of one (one
    of `starts`), so no stop can span two lexemes.  A stop's followed_by lookahead is not
    expressed: the text holds no marker at all."""
    every = {s.marker.decode("utf-8") for s in stops}
    # a stop that holds another stop adds nothing: text without the other has neither
    every = {m for m in every if not any(o != m and o in m for o in every)}
    markers = sorted(every, key=len, reverse=True)
    # a lexer reads bytes: a stop begins at its first byte, so the text's plain run
    # stops before every character that shares that first byte
    first = "".join(_lead_byte_class(m.encode()[0]) for m in sorted(set(markers)))
    starts = sorted({m[:k] for m in markers for k in range(1, len(m))}, key=len, reverse=True)
    return (
        first,
        f"[^{first}]+",
        "|".join(escape(p.encode()) for p in starts),
        "|".join(escape(m.encode()) for m in markers),
    )
