"""The intermediate form written as a regular expression, in the syntax outlines-core
reads (Rust regex syntax without lookaround or backreferences; also valid for Python's
re) and llguidance's lexemes read too: the regex export writes a whole output so, the
Lark writer a lexeme.

Rules are inlined, so a rule that holds itself (values nested to any depth) has no
regex and is refused with NotImplementedError.  What keeps the expression small:

* text that holds none of a set of stops is the marker automaton's loop at its start
  state, found by eliminating the other states deepest first (linear in the markers'
  length for markers that do not overlap themselves); a stop that counts only before a
  follow text takes the follow automaton of _text.py, eliminated the same way;
* a JSON value a schema types is lowered by _schema.JsonValues: each optional property
  written once, free-form JSON (a schema with no properties) bounded to a number of
  nested containers.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .. import grammar as g
from . import _ir as ir
from . import _ranges
from ._patterns import pattern_derive, pattern_nullable, run_steps
from ._schema import JsonValues, either_order
from ._text import WS_CHARS, beginnings, text_automaton

# a typed boolean in any case (TRUE, False), as the parser reads it
BOOLEAN = r"[tT][rR][uU][eE]|[fF][aA][lL][sS][eE]"
# a Python string literal in either quote, as the parser's python dialect reads it: any
# character but the quote, a backslash or a line break, or an escape (a hex escape with all
# its digits, \U at most 10FFFF; a backslash before any other character)
_PYTHON_CHAR = (
    r"[^{quote}\\\n\r]|\\(?:[^xuU]|x[0-9a-fA-F]{{2}}|u[0-9a-fA-F]{{4}}"
    r"|U(?:000[0-9a-fA-F]|0010)[0-9a-fA-F]{{4}})"
)
PYTHON_STRING = "|".join(f"{q}(?:{_PYTHON_CHAR.format(quote=q)})*{q}" for q in ("'", '"'))

# -- regular expressions as text with a precedence -----------------------------------------

_ALT, _CAT, _ATOM = 0, 1, 2


@dataclass(frozen=True)
class _R:
    """A regex: its text, how loosely it binds, and (single-character sets only) the set,
    so alternatives of sets merge into one class."""

    text: str
    prec: int
    chars: frozenset[str] | None = None
    negated: bool = False


_EMPTY = _R("", _CAT)
_CLASS_META = set("\\]^-[&~|")
_META = set("\\.+*?()|[]{}^$#&-~")


def _char(ch: str, in_class: bool) -> str:
    if ord(ch) < 0x20 or ord(ch) == 0x7F:
        return f"\\x{ord(ch):02x}"
    if ch in (_CLASS_META if in_class else _META):
        return "\\" + ch
    return ch


def _set(chars: Iterable[str], negated: bool = False) -> _R:
    members = frozenset(chars)
    if not negated and len(members) == 1:
        (ch,) = members
        return _R(_char(ch, False), _ATOM, members)
    body = []
    for low, high in ir.code_runs(ord(c) for c in members):
        if high - low >= 2:
            body.append(f"{_char(chr(low), True)}-{_char(chr(high), True)}")
        else:
            body.extend(_char(chr(c), True) for c in range(low, high + 1))
    return _R(f"[{'^' if negated else ''}{''.join(body)}]", _ATOM, members, negated)


def _raw(text: str, prec: int = _ALT) -> _R:
    return _R(text, prec)


def _lit(text: str) -> _R:
    if len(text) == 1:
        return _set(text)
    return _R("".join(_char(c, False) for c in text), _CAT)


def _quantified(r: _R) -> bool:
    """An atom that ends with a quantifier (not an escaped "?", "*", "+" or "}")."""
    text = r.text
    return text.endswith(("?", "*", "+", "}")) and not text.endswith(("\\?", "\\*", "\\+", "\\}"))


def _wrap(r: _R, prec: int) -> str:
    return r.text if r.prec >= prec else f"(?:{r.text})"


def _operand(r: _R) -> str:
    """r as the operand of a quantifier: grouped unless a plain atom (x?* is no regex)."""
    return r.text if r.prec >= _ATOM and not _quantified(r) else f"(?:{r.text})"


def _cat(*items: _R | None) -> _R | None:
    parts = []
    for r in items:
        if r is None:
            return None
        if r.text:
            parts.append(r)
    if not parts:
        return _EMPTY
    if len(parts) == 1:
        return parts[0]
    return _R("".join(_wrap(r, _CAT) for r in parts), _CAT)


def _union(a: _R, b: _R) -> _R:
    """Two character sets as one."""
    assert a.chars is not None and b.chars is not None
    if not a.negated and not b.negated:
        return _set(a.chars | b.chars)
    if a.negated and b.negated:
        return _set(a.chars & b.chars, negated=True)
    neg, pos = (a, b) if a.negated else (b, a)
    assert neg.chars is not None and pos.chars is not None
    return _set(neg.chars - pos.chars, negated=True)


def _alt(items: Iterable[_R | None]) -> _R | None:
    out: list[_R] = []
    cls: _R | None = None
    empty = False
    for r in items:
        if r is None:
            continue
        if not r.text:
            empty = True
        elif r.chars is not None:
            cls = r if cls is None else _union(cls, r)
        elif r not in out:
            out.append(r)
    if cls is not None:
        out.insert(0, cls)
    if not out:
        return _EMPTY if empty else None
    body = out[0] if len(out) == 1 else _R("|".join(_wrap(r, _CAT) for r in out), _ALT)
    return _opt(body) if empty else body


def _opt(r: _R) -> _R:
    if not r.text or (r.prec == _ATOM and _quantified(r) and r.text.endswith(("?", "*"))):
        return r  # already optional
    return _R(_operand(r) + "?", _ATOM)


def _star(r: _R, least: int = 0) -> _R:
    if not r.text:
        return r
    return _R(_operand(r) + ("+" if least else "*"), _ATOM)


def _times(r: _R, low: int, high: int | None) -> _R:
    if (low, high) == (0, None):
        return _star(r)
    if (low, high) == (1, None):
        return _star(r, 1)
    if (low, high) == (0, 1):
        return _opt(r)
    if (low, high) == (1, 1):
        return r
    top = "" if high is None else str(high)
    return _R(_operand(r) + (f"{{{low}}}" if low == high else f"{{{low},{top}}}"), _ATOM)


# -- text holding none of a set of stops -----------------------------------------------------


def _outer_markers(markers: Iterable[str]) -> set[str]:
    """The markers that hold no other one (a text holding the other holds them)."""
    found = set(markers)
    return {m for m in found if not any(o != m and o in m for o in found)}


Automaton = tuple[dict[tuple[Any, Any], _R], list[Any], list[str]]


def _marker_automaton(markers: set[str]) -> Automaton:
    """The markers' automaton: a state per beginning of a marker read so far, an edge
    per character of the markers that completes none."""
    states = ["", *beginnings(markers)]
    alphabet = sorted({c for m in markers for c in m})
    edges: dict[tuple[Any, Any], _R] = {}
    for p in states:
        for ch in alphabet:
            s = p + ch
            if any(s.endswith(m) for m in markers):
                continue
            target = next(q for q in reversed(states) if s.endswith(q))
            _add_edge(edges, p, target, _set(ch))
    return edges, states, alphabet


def _follow_automaton(stops: Sequence[g.Stop]) -> Automaton:
    auto = text_automaton(stops)
    edges: dict[tuple[Any, Any], _R] = {}
    for p, moves in enumerate(auto.moves):
        by_target: dict[int, list[str]] = {}
        for ch, target in moves.items():
            by_target.setdefault(target, []).append(ch)
        for target, chars in by_target.items():
            _add_edge(edges, p, target, _set(chars))
    return edges, list(range(len(auto.moves))), sorted(auto.alphabet)


def _stops_automaton(stops: Sequence[g.Stop]) -> Automaton | None:
    """The automaton of a text holding none of the stops (None: no marker to hold): a
    stop with follow texts counts only where optional whitespace and one of them come
    after its marker (so a value may hold its own closing tag), by
    _regex.text_automaton's states; else the markers' own."""
    if any(s.follow for s in stops):
        return _follow_automaton(stops)
    found = _outer_markers(s.marker.decode("utf-8") for s in stops)
    return _marker_automaton(found) if found else None


def stops_text(stops: Sequence[g.Stop], min1: bool) -> _R:
    """Text that holds none of the stops and does not end with the beginning of one.

    A marker lies within a run of the characters markers are made of, so the text is a
    sequence of pieces that each bring the markers' automaton (a state per beginning of a
    marker read so far) back to its start: a run of marker characters that returns there
    by itself, or one that stops anywhere short of a marker followed by any other
    character.  Both runs are found by eliminating the automaton's states deepest first;
    the one class holding every other character (all of Unicode) is written once, which
    keeps a byte-level DFA of the text small."""
    auto = _stops_automaton(stops)
    if auto is None:
        return _star(_raw("(?s:.)", _ATOM), 1 if min1 else 0)
    return _text_pieces(*auto, min1)


def cut_short(stops: Sequence[g.Stop]) -> _R | None:
    """A beginning of a stop's marker that the end of the output cuts short (ir.CutShort):
    the automaton's ways from its start to any other state that do not come back."""
    auto = _stops_automaton(stops)
    return None if auto is None else _to_start(auto[0], auto[1])[1]


_DEAD = "<dead>"  # no pattern can begin here any more


def text_not_beginning(
    stops: Sequence[g.Stop], min1: bool, patterns: Sequence[ir.Expr]
) -> _R | None:
    """Text holding none of the stops (as stops_text) that begins with none of the
    patterns: the text's automaton run beside the patterns' derivatives, a state that
    completes a pattern left out, and the states eliminated.  None where a pattern is
    not of ASCII literals, whitespace and runs."""
    auto = text_automaton(stops)
    pattern_chars = set(WS_CHARS)
    for p in patterns:
        if not _ascii_pattern(p, pattern_chars):
            return None
    explicit = sorted(set(auto.alphabet) | pattern_chars)
    State = tuple[int, Any, bool]  # text state, what may not follow (or _DEAD), initial

    def step(state: State, ch: str | None) -> State | None:
        at, left, _ = state
        here = 0 if ch is None or ch not in auto.alphabet else auto.moves[at].get(ch)
        if here is None:
            return None  # the character completes a stop
        if left is _DEAD or ch is None:
            return (here, _DEAD, False)
        rest = pattern_derive(left, ch)
        if rest is not None and pattern_nullable(rest):
            return None  # the text would begin with a pattern
        return (here, _DEAD if rest is None else rest, False)

    start: State = (0, ir.union(list(patterns)), True)
    order, index = [start], {start: 0}
    edges: dict[tuple[Any, Any], _R] = {}
    k = 0
    while k < len(order):
        state = order[k]
        k += 1
        targets: dict[State, list[str | None]] = {}
        for ch in [*explicit, None]:
            nxt = step(state, ch)
            if nxt is not None:
                targets.setdefault(nxt, []).append(ch)
        for nxt, chars in targets.items():
            if nxt not in index:
                index[nxt] = len(order)
                order.append(nxt)
            if None in chars:  # every character but the explicit ones going elsewhere
                cls = _set([c for c in explicit if c not in chars], negated=True)
            else:
                cls = _set([c for c in chars if c is not None])
            _add_edge(edges, index[state], index[nxt], cls)
    for n, (at, _, initial) in enumerate(order):
        if at == 0 and not (initial and min1):
            edges[n, _FINAL] = _EMPTY

    # the states where a prefix may still begin first, deepest first, then the text's
    # own states, its start last: the text's expression is then written once, not
    # after every place where a prefix was left
    def last(n: int) -> tuple[bool, bool, int]:
        at, left, _ = order[n]
        return (left is _DEAD, left is _DEAD and at == 0, -n)

    for n in sorted(range(1, len(order)), key=last):
        _eliminate(edges, n)
    return edges.get((0, _FINAL))


def _ascii_pattern(e: ir.Expr, chars: set[str]) -> bool:
    """Whether a pattern is of ASCII literals, whitespace and runs of ASCII characters;
    adds its characters."""
    if isinstance(e, ir.Lit):
        chars.update(e.text.decode("latin-1"))
        return all(b < 0x80 for b in e.text)
    if isinstance(e, ir.Ws):
        return True
    if isinstance(e, ir.CharRun):
        chars.update(chr(b) for b in e.members)
        return all(b < 0x80 for b in e.members)
    if isinstance(e, ir.Optional_):
        return _ascii_pattern(e.item, chars)
    if isinstance(e, (ir.Seq, ir.Alt)):
        return all(_ascii_pattern(i, chars) for i in (e.items if isinstance(e, ir.Seq) else e.alts))
    return False


def _add_edge(edges: dict[tuple[Any, Any], _R], p: Any, q: Any, r: _R) -> None:
    joined = _alt([edges.get((p, q)), r])
    assert joined is not None
    edges[p, q] = joined


_FINAL = "<final>"  # any state but the start: a run that stops short of a stop


def _eliminate(edges: dict[tuple[Any, Any], _R], state: Any) -> None:
    """Removes a state of an automaton whose edges are regexes: each way through it
    (in, its loop any number of times, out) becomes an edge of its own."""
    loop = edges.pop((state, state), None)
    ins = [(p, r) for (p, q), r in edges.items() if q == state]
    outs = [(q, r) for (p, q), r in edges.items() if p == state]
    for key in [k for k in edges if state in k]:
        del edges[key]
    middle = _EMPTY if loop is None else _star(loop)
    for p, r_in in ins:
        for q, r_out in outs:
            step = _cat(r_in, middle, r_out)
            assert step is not None
            _add_edge(edges, p, q, step)


def _to_start(
    edges: dict[tuple[Any, Any], _R], states: Sequence[Any]
) -> tuple[_R | None, _R | None]:
    """An automaton's states but its start (states[0]) eliminated, latest first: the
    loop at the start, and the ways from it that stop in another state (None: none)."""
    start = states[0]
    for p in states[1:]:
        edges[p, _FINAL] = _EMPTY
    for s in reversed(states[1:]):
        _eliminate(edges, s)
    return edges.get((start, start)), edges.get((start, _FINAL))


def _text_pieces(
    edges: dict[tuple[Any, Any], _R], states: Sequence[Any], alphabet: Sequence[str], min1: bool
) -> _R:
    """The text of an automaton over the stops' characters whose start (states[0]) is
    the one state the text may end in, and which any other character moves to from
    every state: its states eliminated, latest first, into the loop at the start."""
    loop, partial = _to_start(edges, states)
    other = _set(alphabet, negated=True)
    piece = _alt([loop, _cat(_EMPTY if partial is None else _opt(partial), other)])
    assert piece is not None
    return _star(piece, 1 if min1 else 0)


# -- JSON ------------------------------------------------------------------------------------

_STRING_CHAR = r'[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})'
_STRING = _raw(f'"(?:{_STRING_CHAR})*"', _CAT)
_INTEGER = r"-?(?:0|[1-9][0-9]*)"
_NUMBER = _INTEGER + r"(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?"
# a scalar as the parser reads it (a typed boolean in any case), and a JSON value's pieces
_PATTERNS = {
    "integer": _raw(_INTEGER, _CAT),
    "number": _raw(_NUMBER, _CAT),
    "boolean": _raw(BOOLEAN),
    "null": _lit("null"),
    "python_string": _raw(PYTHON_STRING),
    "json_char": _raw(_STRING_CHAR),
    # no sign: a cheap part of a number's bounds (the rest is not checked)
    "unsigned_number": _raw(_NUMBER.removeprefix("-?"), _CAT),
}


# -- the lowered grammar ---------------------------------------------------------------------


class Writer:
    """Writes a lowered grammar's expressions as regexes.  what: what is written (for the
    errors); ws: the regex of whitespace between JSON tokens (grouped: it is one group);
    depth: how deeply free-form JSON may nest containers."""

    def __init__(
        self, lowered: ir.Lowered, what: str, ws: str, depth: int, grouped: bool = False
    ) -> None:
        self.lowered = lowered
        self.what = what
        self.ws = _raw(ws, _ATOM if grouped else _ALT) if ws else _EMPTY
        self.json = JsonValues(depth, self.refuse)
        self.done: dict[str, _R | None] = {}
        self.active: list[str] = []

    def string_except(self, words: Sequence[bytes]) -> _R:
        """A JSON string token other than these literal tokens (quotes included): a
        beginning of a word that leaves it (then any characters), or a beginning that is
        no word, then the closing quote.  The free tail is written once, not after every
        letter of every word."""
        texts = [json.loads(w) for w in words]
        encoded = [json.dumps(t, ensure_ascii=False)[1:-1] for t in texts]
        if any("\\" in e for e in encoded):
            raise self.refuse("a JSON string other than a key with escapes")
        escape = _raw(r'\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})', _CAT)

        def leaving(place: dict[str, Any]) -> _R:
            """The rest of a beginning that leaves every word at its last character."""
            after = sorted(c for c in place if c)
            other = _set(['"', "\\", *map(chr, range(0x20)), *after], negated=True)
            alts = [_cat(_lit(c), leaving(place[c])) for c in after]
            found = _alt([*alts, other, escape])
            assert found is not None
            return found

        def unfinished(place: dict[str, Any]) -> _R | None:
            """The rest of a beginning of a word that is no word (None: there is none)."""
            alts = [_cat(_lit(c), unfinished(place[c])) for c in sorted(c for c in place if c)]
            alts = [a for a in alts if a is not None]
            if "" not in place:
                alts.append(_EMPTY)
            return _alt(alts)

        trie = ir.word_trie(encoded)
        free = _raw(f"(?:{_STRING_CHAR})*", _CAT)
        left = _cat(leaving(trie), free)
        short = unfinished(trie)
        body = left if short is None else _alt([left, short])
        found = _cat(_lit('"'), body, _lit('"'))
        assert found is not None
        return found

    def refuse(self, construct: str) -> NotImplementedError:
        return NotImplementedError(f"{self.what}: {construct} cannot be expressed as a regex")

    def rule(self, name: str) -> _R | None:
        if name in self.active:
            raise self.refuse(
                f"the rule {name!r}, which holds itself (values nested to any depth),"
            )
        if name not in self.done:
            self.active.append(name)
            self.done[name] = self.expr(self.lowered.rules[name])
            self.active.pop()
        return self.done[name]

    def run_excluding(
        self, members: frozenset[int], patterns: Sequence[ir.Expr], nows: bool
    ) -> _R | None:
        """A non-empty run that begins with none of the patterns (_regex.run_steps): it
        begins with none of their first literals (nor with whitespace where that is one),
        or with one and then what does not begin with what must follow it; None where
        the patterns cannot be written so."""
        steps = run_steps(members, patterns, nows)
        if steps is None:
            return None
        lits = [x.text.decode("utf-8") for x in steps if isinstance(x, ir.Lit)]
        if any(ord(c) >= 0x80 for t in lits for c in t):
            return None  # a class cannot leave out one non-ASCII character
        ws = " \t\r\n" if nows or ir.Ws() in steps else ""
        parts = [_not_beginning(members, lits, ws)]
        for lexeme, rests in steps.items():
            if any(pattern_nullable(r) for r in rests):
                continue  # the run may not begin with this lexeme at all
            after_ws = isinstance(lexeme, ir.Ws)
            first = _star(_set(" \t\r\n"), 1) if after_ws else self.expr(lexeme)
            more = self.run_excluding(members, rests, after_ws)
            if more is None:
                more = _star(_run_class(members) or _EMPTY, 1)
            parts.append(_cat(first, _opt(more)))
        return _alt(parts)

    def expr(self, e: ir.Expr) -> _R | None:
        if isinstance(e, ir.Lit):
            return _lit(e.text.decode("utf-8"))
        if isinstance(e, ir.Ws):
            return _star(_set(" \t\r\n"))
        if isinstance(e, ir.JsonWs):
            return self.ws
        if isinstance(e, ir.Text):
            if e.not_first and (found := text_not_beginning(e.stops, e.min1, e.not_first)):
                return found
            return stops_text(e.stops, e.min1)
        if isinstance(e, ir.CutShort):
            return cut_short(e.stops)
        if isinstance(e, ir.CharRun):
            found = self.run_excluding(e.members, e.not_first, False) if e.not_first else None
            if found is None:
                found = _star(_run_class(e.members) or _EMPTY, 1)
            return found if e.min1 else _opt(found)
        if isinstance(e, ir.JsonValue):
            # each object in its schema's order or sorted, as a template may write it
            schema = either_order(e.schema)
            value = self.json.walk(schema, schema)
            return None if value is None else self.expr(value)
        if isinstance(e, ir.JsonString):
            return self.string_except(e.exclude) if e.exclude else _STRING
        if isinstance(e, ir.Pattern):
            return _PATTERNS[e.kind]
        if isinstance(e, ir.Integers):
            return _raw(_ranges.regex(list(e.spellings)), _ATOM)
        if isinstance(e, ir.Seq):
            return _cat(*(self.expr(i) for i in e.items))
        if isinstance(e, ir.Alt):
            return _alt(self.expr(a) for a in e.alts)
        if isinstance(e, ir.Repeat):
            item = self.expr(e.item)
            if item is None:
                return None if e.min else _EMPTY
            return _times(item, e.min, e.max)
        if isinstance(e, ir.Optional_):
            item = self.expr(e.item)
            return _EMPTY if item is None else _opt(item)
        if isinstance(e, ir.RuleRef):
            return self.rule(e.name)
        raise TypeError(f"not an expression: {e!r}")


def _run_class(members: frozenset[int], minus: Iterable[str] = ()) -> _R | None:
    """A class of the run's characters (bytes >= 0x80: any non-ASCII character), other
    than the ASCII characters `minus`; None where none is left."""
    chars = sorted({chr(b) for b in members if b < 0x80} - set(minus))
    if not any(b >= 0x80 for b in members):
        return _set(chars) if chars else None
    inside = "".join(_char(c, True) for c in chars) if len(chars) < 2 else _set(chars).text[1:-1]
    return _raw(f"[{inside}\\u0080-\\U0010ffff]", _ATOM)


def _not_beginning(members: frozenset[int], texts: Iterable[str], first_minus: str) -> _R | None:
    """A non-empty run that begins with none of the texts (it may end inside one) nor,
    first, with a character of first_minus: the texts' trie, left where the run takes
    another character than the trie goes on with."""
    trie = ir.word_trie(texts)

    def leave(node: dict[str, Any], minus: str) -> tuple[_R | None, _R | None]:
        """From a node of the trie: the ways to leave it (ending with the character that
        leaves), and the non-empty ways to stop inside it."""
        other = _run_class(members, set(node) | set(minus))
        leaving: list[_R | None] = [other]
        inside: list[_R | None] = []
        for ch, child in sorted(node.items()):
            if ch and "" not in child:
                left, stopped = leave(child, "")
                leaving.append(None if left is None else _cat(_lit(ch), left))
                inside.append(_lit(ch) if stopped is None else _cat(_lit(ch), _opt(stopped)))
        return _alt(leaving), _alt(inside)

    # the run after leaving the trie is written once
    left, stopped = leave(trie, first_minus)
    rest = _star(_run_class(members) or _EMPTY)
    return _alt([None if left is None else _cat(left, rest), stopped])


# JSON whitespace inside a grammar's lexeme: what llguidance's %json takes
LEXEME_WHITESPACE = r"[ \t\r\n]*"
# free-form JSON inside a grammar's lexeme: the lexer builds only the states it meets
LEXEME_DEPTH = 2


def lexeme_writer(lowered: ir.Lowered) -> Writer:
    """A writer of the lowered grammar's expressions as regexes, for one lexeme of a
    grammar export (llguidance's derivre reads the same syntax)."""
    return Writer(lowered, "a lexeme", LEXEME_WHITESPACE, LEXEME_DEPTH)
