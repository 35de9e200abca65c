"""Regular-expression pieces shared by the exports (Rust regex syntax, as llguidance,
outlines-core and GBNF's character classes read it)."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .. import grammar as g
from . import _ir as ir

_META = set(r"\.+*?()|[]{}^$#&-~/\"")

JSON_STRING = r'"(\\([\"\\\/bfnrt]|u[a-fA-F0-9]{4})|[^\"\\\x00-\x1F])*"'
WS = r"[ \t\r\n]"
PATTERNS = {
    "integer": r"-?(0|[1-9][0-9]*)",
    "number": r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?",
    # a typed boolean in any case (TRUE, False), as the parser reads it; null only as JSON
    # spells it (the parser reads None as the string "None")
    "boolean": r"[tT][rR][uU][eE]|[fF][aA][lL][sS][eE]",
    "null": r"null",
}
# a Python string literal in either quote, as the parser's python dialect reads it: any
# character but the quote, a backslash or a line break, or an escape (a hex escape with all
# its digits, \U at most 10FFFF; a backslash before any other character)
_PYTHON_CHAR = (
    r"[^{quote}\\\n\r]|\\(?:[^xuU]|x[0-9a-fA-F]{{2}}|u[0-9a-fA-F]{{4}}"
    r"|U(?:000[0-9a-fA-F]|0010)[0-9a-fA-F]{{4}})"
)
PATTERNS["python_string"] = "|".join(
    f"{q}(?:{_PYTHON_CHAR.format(quote=q)})*{q}" for q in ("'", '"')
)


def by_length(texts: Iterable[str], longest_first: bool = False) -> list[str]:
    """The distinct texts by length, texts of one length in their own order: an export is
    the same text in every process (a set's order depends on the hash seed)."""
    return sorted(set(texts), key=lambda t: (-len(t) if longest_first else len(t), t))


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


def pattern_first(e: ir.Expr) -> set[str]:
    """The characters a prefix pattern's match may begin with (ASCII ones; any character
    >= 0x80 as one entry, "\x80")."""
    if isinstance(e, ir.Lit):
        return {e.text[:1].decode("latin-1")} if e.text[0] < 0x80 else {"\x80"}
    if isinstance(e, ir.Ws):
        return set(WS_CHARS)
    if isinstance(e, ir.CharRun):
        return {chr(b) if b < 0x80 else "\x80" for b in e.members}
    if isinstance(e, ir.Optional_):
        return pattern_first(e.item)
    if isinstance(e, ir.Alt):
        return set().union(*(pattern_first(a) for a in e.alts))
    assert isinstance(e, ir.Seq)
    found: set[str] = set()
    for item in e.items:
        found |= pattern_first(item)
        if not pattern_nullable(item):
            break
    return found


def pattern_derive(e: ir.Expr, ch: str) -> ir.Expr | None:
    """What must follow the ASCII character ch for a text to begin with the pattern
    (its derivative), or None where nothing can."""
    if isinstance(e, ir.Lit):
        if not e.text or e.text[0] != ord(ch):
            return None
        return ir.Lit(e.text[1:]) if len(e.text) > 1 else ir.EMPTY
    if isinstance(e, ir.Ws):
        return e if ch in WS_CHARS else None
    if isinstance(e, ir.CharRun):
        return ir.CharRun(e.members, False) if ord(ch) in e.members else None
    if isinstance(e, ir.Optional_):
        return pattern_derive(e.item, ch)
    if isinstance(e, ir.Alt):
        return ir.union([pattern_derive(a, ch) for a in e.alts])
    assert isinstance(e, ir.Seq)
    if not e.items:
        return None
    head, rest = e.items[0], ir.Seq(e.items[1:])
    d = pattern_derive(head, ch)
    found = [None if d is None else _joined_runs(ir.concat([d, rest]))]
    if pattern_nullable(head):
        found.append(pattern_derive(rest, ch))
    return ir.union(found)


def goes_on(run: ir.Expr, later: ir.Expr | None) -> bool:
    """Whether a run is followed by an optional run that holds its characters (a Python
    identifier: its first characters, then the others): the two take what one run of
    the later's characters would, after the first character."""
    return (
        isinstance(run, ir.CharRun)
        and isinstance(later, ir.CharRun)
        and not later.min1
        and run.members <= later.members
    )


def _joined_runs(e: ir.Expr) -> ir.Expr:
    """A sequence that begins with an optional run that goes on in the next one, as the
    later run alone (what is left of an identifier after its first character): one
    derivative, where the two would be two."""
    if not isinstance(e, ir.Seq) or len(e.items) < 2:
        return e
    run, later = e.items[:2]
    if isinstance(run, ir.CharRun) and not run.min1 and goes_on(run, later):
        return ir.concat(e.items[1:])
    return e


def pattern_nullable(e: ir.Expr) -> bool:
    if isinstance(e, ir.Lit):
        return not e.text
    if isinstance(e, ir.CharRun):
        return not e.min1
    if isinstance(e, ir.Seq):
        return all(pattern_nullable(i) for i in e.items)
    if isinstance(e, ir.Alt):
        return any(pattern_nullable(a) for a in e.alts)
    return True  # Ws, Optional_


def pattern_steps(
    p: ir.Expr, nows: bool, runs: bool = False
) -> list[tuple[ir.Expr, ir.Expr]] | None:
    """A prefix pattern as its possible first lexemes (a literal, or whitespace) and
    what must follow each; nows: whitespace cannot come first.  runs: also a run of
    characters alone, or a name (a run that goes on in the next: the two runs, one
    lexeme); None where another character run would come first."""
    items = list(p.items) if isinstance(p, ir.Seq) else [p]
    if not items:
        return []
    head, rest = items[0], items[1:]
    if isinstance(head, ir.Lit):
        return [(head, ir.Seq(tuple(rest)))]
    if isinstance(head, ir.Ws):
        found = pattern_steps(ir.Seq(tuple(rest)), nows, runs)
        if nows or found is None:
            return found
        return [(head, ir.Seq(tuple(rest))), *found]
    if isinstance(head, ir.Seq):
        return pattern_steps(ir.Seq((*head.items, *rest)), nows, runs)
    if runs and isinstance(head, ir.CharRun) and head.min1:
        if not rest:
            return [(head, ir.EMPTY)]
        if goes_on(head, rest[0]):
            return [(ir.Seq((head, rest[0])), ir.Seq(tuple(rest[1:])))]
    options = (
        [*head.alts]
        if isinstance(head, ir.Alt)
        else [head.item, ir.Seq(())]
        if isinstance(head, ir.Optional_)
        else None
    )
    if options is None:
        return None
    out: list[tuple[ir.Expr, ir.Expr]] = []
    for option in options:
        found = pattern_steps(ir.Seq((option, *rest)), nows, runs)
        if found is None:
            return None
        out += found
    return out


def grouped_steps(
    patterns: Sequence[ir.Expr], nows: bool, runs: bool = False
) -> dict[ir.Expr, list[ir.Expr]] | None:
    """The patterns' first lexemes (pattern_steps), each with what must follow it in
    each pattern that begins with it; None where a pattern does not split so."""
    steps: dict[ir.Expr, list[ir.Expr]] = {}
    for p in patterns:
        found = pattern_steps(p, nows, runs)
        if found is None:
            return None
        for lexeme, rest in found:
            steps.setdefault(lexeme, []).append(rest)
    return steps


def run_steps(
    members: frozenset[int], patterns: Sequence[ir.Expr], nows: bool
) -> dict[ir.Expr, list[ir.Expr]] | None:
    """The first lexemes (a literal, or whitespace) of a run of `members` that begins
    with one of the patterns, each with what must follow it; None where the patterns do
    not split so (a character run first, or one literal the beginning of another, which a
    greedy lexer cannot decide between)."""
    grouped = grouped_steps(patterns, nows)
    if grouped is None:
        return None
    steps = {
        lexeme: rests
        for lexeme, rests in grouped.items()
        # a literal the run cannot hold
        if not isinstance(lexeme, ir.Lit)
        or all(b in members or (b >= 0x80 and 0x80 in members) for b in lexeme.text)
    }
    lits = [x.text for x in steps if isinstance(x, ir.Lit)]
    if any(a != b and b.startswith(a) for a in lits for b in lits):
        return None
    return steps


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
    markers = by_length(every, longest_first=True)
    # a lexer reads bytes: a stop begins at its first byte, so the text's plain run
    # stops before every character that shares that first byte
    first = "".join(_lead_byte_class(m.encode()[0]) for m in sorted(set(markers)))
    starts = by_length((m[:k] for m in markers for k in range(1, len(m))), longest_first=True)
    return (
        first,
        f"[^{first}]+",
        "|".join(escape(p.encode()) for p in starts),
        "|".join(escape(m.encode()) for m in markers),
    )


WS_CHARS = " \t\r\n"  # the whitespace a followed_by lookahead skips


@dataclass(frozen=True)
class TextStops:
    """The stops of a text, reduced to what the text may not hold.

    markers: stops the text never holds.  follow: stops that count only where optional
    whitespace and one of their follow texts come next, as (marker, follows); the text
    may hold such a marker elsewhere.  atoms: the literal texts a text with follow stops
    is written with (the follow stops' markers and every follow text the text may hold),
    so that the marker of a stop and the text's own copy of it are the same lexeme."""

    markers: tuple[str, ...]
    follow: tuple[tuple[str, tuple[str, ...]], ...]
    atoms: tuple[str, ...]


def text_stops(stops: Iterable[g.Stop]) -> TextStops:
    merged: dict[str, set[str] | None] = {}  # marker -> follows, None: a plain stop
    for s in stops:
        marker = s.marker.decode("utf-8")
        if not s.follow or merged.get(marker, set()) is None:
            merged[marker] = None
        else:
            merged.setdefault(marker, set())
            found = merged[marker]
            assert found is not None
            found.update(f.decode("utf-8") for f in s.follow)

    def covered(m: str) -> bool:
        # every occurrence of m holds an occurrence of a shorter stop: text without that
        # one has no m either
        for o, of in merged.items():
            if o == m or o not in m:
                continue
            if of is None:
                return True
            mf = merged[m]
            if mf is not None and m.endswith(o) and mf <= of:
                return True
        return False

    kept = {m: f for m, f in merged.items() if not covered(m)}
    markers = tuple(sorted(m for m, f in kept.items() if f is None))
    follow = tuple(sorted((m, tuple(sorted(f))) for m, f in kept.items() if f is not None))
    # a follow text that holds a plain stop never occurs in the text
    follows = {f for _, fs in follow for f in fs if not any(p in f for p in markers)}
    atoms = tuple(sorted({m for m, _ in follow} | follows))
    return TextStops(markers, follow, atoms)


def overlapping(texts: Iterable[str]) -> bool:
    """Whether a text can begin inside a proper prefix of one of them (a proper suffix of
    that prefix being a prefix of one): ``` and ``, for instance."""
    texts = list(texts)
    starts = {t[:k] for t in texts for k in range(1, len(t))}
    return any(p[j:] in starts for p in starts for j in range(1, len(p)))


def _trie(texts: Iterable[str]) -> dict[str, Any]:
    root: dict[str, Any] = {}
    for t in texts:
        node = root
        for ch in t:
            node = node.setdefault(ch, {})
    return root


def _proper_prefixes(node: dict[str, Any]) -> str:
    """A regex for the nonempty proper prefixes of the texts of a trie, written as the
    trie (a regex engine that works by derivatives keeps it small)."""
    alts = []
    for ch, child in sorted(node.items()):
        if child:
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
        prefix = _proper_prefixes(_trie(texts))
        initials = "".join(sorted({escape(m[0].encode()) for m in texts}))
        out["starts"] = prefix
        out["prefix"] = f"/{prefix}/"
        out["chunk"] = f"/({prefix})[^{initials}]|[{first}]/ & ~/[{initials}]|{prefix}|{whole}/"
        return out
    starts = by_length((m[:k] for m in texts for k in range(1, len(m))), longest_first=True)
    start_re = "|".join(escape(p.encode()) for p in starts)
    out["starts"] = start_re
    out["prefix"] = f"/{start_re}/ & ~/(?s:.+)({start_re})/"
    out["open"] = f"/[{first}](?s:.*)/ & ~/(?s:.*)({start_re})/"
    out["chunk"] = f"/[{first}](?s:.*)/ & ~/(?s:.*)({whole})(?s:.*)/ & ~/(?s:.*)({start_re})/"
    return out


@dataclass(frozen=True)
class TextAutomaton:
    """Text that holds none of a text's stops (a follow stop only where whitespace and
    one of its follow texts come after the marker), as a deterministic automaton over
    characters: state 0 is the start and the state where no stop has begun; moves[s]
    maps the characters of `alphabet` to the next state (a character that completes a
    stop has no move); any other character moves to state 0.  The text may end in
    state 0 only."""

    alphabet: frozenset[str]
    moves: tuple[dict[str, int], ...]


def text_automaton(stops: Iterable[g.Stop]) -> TextAutomaton:
    return _text_automaton(tuple(stops))


@functools.lru_cache(maxsize=256)
def _text_automaton(stops: tuple[g.Stop, ...]) -> TextAutomaton:
    # built once per set of stops: an export writes the same text in many rules
    found = text_stops(stops)
    follow = dict(found.follow)
    alphabet = {c for m in found.markers for c in m}
    alphabet |= {c for m, fs in found.follow for c in m + "".join(fs)}
    if follow:
        alphabet |= set(WS_CHARS)
    done = object()  # a stop is complete

    def step(pos: tuple[Any, ...], ch: str) -> list[Any]:
        kind = pos[0]
        if kind == "m":  # k characters of a plain marker
            _, m, k = pos
            if m[k] != ch:
                return []
            return [done if k + 1 == len(m) else ("m", m, k + 1)]
        if kind == "f":  # k characters of a follow stop's marker
            _, m, k = pos
            if m[k] != ch:
                return []
            return [("w", m) if k + 1 == len(m) else ("f", m, k + 1)]
        if kind == "w":  # the marker, then whitespace
            m = pos[1]
            if ch in WS_CHARS:
                return [("w", m)]
            return [done if len(f) == 1 else ("F", m, f, 1) for f in follow[m] if f[0] == ch]
        _, m, f, k = pos  # "F": k characters of a follow text
        if f[k] != ch:
            return []
        return [done if k + 1 == len(f) else ("F", m, f, k + 1)]

    fresh = [("m", m, 0) for m in found.markers] + [("f", m, 0) for m in follow]
    states: list[frozenset[Any]] = [frozenset()]
    index = {states[0]: 0}
    moves: list[dict[str, int]] = []
    k = 0
    while k < len(states):
        here: dict[str, int] = {}
        for ch in sorted(alphabet):
            nxt = set()
            for pos in (*states[k], *fresh):
                moved = step(pos, ch)
                if done in moved:
                    break
                nxt.update(moved)
            else:
                key = frozenset(nxt)
                if key not in index:
                    index[key] = len(states)
                    states.append(key)
                here[ch] = index[key]
        moves.append(here)
        k += 1
    return TextAutomaton(frozenset(alphabet), tuple(moves))
