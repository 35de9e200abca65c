"""The intermediate form of the exports: a small context-free expression language that
a format's grammar, specialised to a request's tools and tool choice, is lowered to
(_lower.py), and that each writer (Lark, GBNF, a regex, the structural tag) prints in
its own syntax.

The expressions are literals, texts that hold none of a set of stops, runs of characters,
JSON whitespace, values and strings, sequences, alternations, repetitions, options and
references to named rules; what the output may be, nothing that only steers a parser.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import grammar as g
from ._ranges import Spelling


class Expr:
    """A context-free expression."""


@dataclass(frozen=True)
class Lit(Expr):
    text: bytes


@dataclass(frozen=True)
class Text(Expr):
    """Any text that holds none of the stops and does not end with the start of one;
    min1: at least one byte."""

    stops: tuple[g.Stop, ...]
    min1: bool
    # What the text does not begin with: an earlier alternative of an ordered choice
    # commits to it (a cut follows), so where this text stands it begins that one.  Each
    # is literals, whitespace, character runs, sequences, alternatives and options.
    not_first: tuple[Expr, ...] = ()


@dataclass(frozen=True)
class CutShort(Expr):
    """A beginning of one of the stops' markers (not empty, no marker whole), at the
    end of the output: the parser takes a marker the end cuts short as text, so a text
    the output ends with may end with one."""

    stops: tuple[g.Stop, ...]


@dataclass(frozen=True)
class CharRun(Expr):
    """A run of characters from a set of bytes (members >= 0x80 stand for any non-ASCII
    character); min1: at least one."""

    members: frozenset[int]
    min1: bool
    not_first: tuple[Expr, ...] = ()  # as Text's


@dataclass(frozen=True)
class Ws(Expr):
    """Optional JSON whitespace."""


@dataclass(frozen=True)
class JsonWs(Expr):
    """Optional whitespace between the tokens of a JSON value a schema types (JsonValues):
    what the writer allows there (the regex export: one space, or a newline and an
    indent)."""


@dataclass(frozen=True)
class JsonValue(Expr):
    """A JSON value valid against a schema."""

    schema: Mapping[str, Any]


@dataclass(frozen=True)
class JsonString(Expr):
    """A JSON string token, other than the listed literal tokens."""

    exclude: tuple[bytes, ...] = ()


@dataclass(frozen=True)
class Pattern(Expr):
    """A scalar given by a JSON Schema type: "integer", "number", "boolean" (in any
    case), "null"; "python_string": a Python string literal in either quote
    (PythonLiterals); in a JSON value a schema types (JsonValues), "json_char": one
    character of a JSON string (an escape included), "unsigned_number": a number with no
    sign."""

    kind: str


@dataclass(frozen=True)
class Integers(Expr):
    """An integer in a range, as JSON writes it: the range's spellings (_ranges.py)."""

    spellings: tuple[Spelling, ...]


@dataclass(frozen=True)
class Seq(Expr):
    items: tuple[Expr, ...]


@dataclass(frozen=True)
class Alt(Expr):
    alts: tuple[Expr, ...]


@dataclass(frozen=True)
class Repeat(Expr):
    """The item min to max times (max None: any number; the lowering writes min 0 or 1
    and no max, a JSON value a schema types a count)."""

    item: Expr
    min: int
    max: int | None = None


@dataclass(frozen=True)
class Optional_(Expr):
    item: Expr


@dataclass(frozen=True)
class RuleRef(Expr):
    name: str


EMPTY = Seq(())


@dataclass
class Lowered:
    """The lowered grammar: rules by name, the start rule first."""

    start: str
    rules: dict[str, Expr] = field(default_factory=dict)
    markers: tuple[str, ...] = ()


# -- building expressions --------------------------------------------------------------------


def seq(items: Sequence[Expr | None]) -> Expr | None:
    """A sequence, nested ones flattened (one item: the item itself); None where an item
    is None (matches nothing)."""
    out: list[Expr] = []
    for item in items:
        if item is None:
            return None
        if isinstance(item, Seq):
            out.extend(item.items)
        else:
            out.append(item)
    return out[0] if len(out) == 1 else Seq(tuple(out))


def concat(items: Sequence[Expr]) -> Expr:
    """A sequence of expressions that each match something, nested ones flattened."""
    found = seq(items)
    assert found is not None
    return found


def union(alts: Sequence[Expr | None]) -> Expr | None:
    """An alternation of the alternatives that are not None (nested ones flattened, each
    once); None where none is left."""
    out: list[Expr] = []
    for a in alts:
        if a is None:
            continue
        for b in a.alts if isinstance(a, Alt) else (a,):
            if b not in out:
                out.append(b)
    if not out:
        return None
    return out[0] if len(out) == 1 else Alt(tuple(out))


def alternatives(e: Expr | None) -> tuple[Expr, ...]:
    """An expression's alternatives (itself where it is no alternation; none for None)."""
    if e is None:
        return ()
    return e.alts if isinstance(e, Alt) else (e,)


def children(e: Expr) -> tuple[Expr, ...]:
    """The expressions an expression holds directly (a rule reference holds none)."""
    if isinstance(e, Seq):
        return e.items
    if isinstance(e, Alt):
        return e.alts
    if isinstance(e, (Repeat, Optional_)):
        return (e.item,)
    return ()


def share(lowered: Lowered) -> Lowered:
    """Give a rule of its own to each compound expression used in more than one place
    (the same grammar node lowered once), so that no export writes it twice."""
    counts: dict[int, int] = {}
    keep: dict[int, Expr] = {}

    def count(e: Expr) -> None:
        counts[id(e)] = counts.get(id(e), 0) + 1
        keep[id(e)] = e
        if counts[id(e)] == 1:
            for c in children(e):
                count(c)

    for body in lowered.rules.values():
        count(body)
    names: dict[int, str] = {}
    rules: dict[str, Expr] = {}
    done: dict[int, Expr] = {}

    def rebuild(e: Expr, top: bool = False) -> Expr:
        if not children(e):
            return e
        if not top and counts[id(e)] > 1:
            if id(e) not in names:
                names[id(e)] = f"shared-{len(names)}"
                rules[names[id(e)]] = rebuild(e, top=True)
            return RuleRef(names[id(e)])
        if id(e) in done and not top:
            return done[id(e)]
        if isinstance(e, Seq):
            out: Expr = Seq(tuple(rebuild(c) for c in e.items))
        elif isinstance(e, Alt):
            out = Alt(tuple(rebuild(c) for c in e.alts))
        elif isinstance(e, Repeat):
            out = Repeat(rebuild(e.item), e.min, e.max)
        else:
            assert isinstance(e, Optional_)
            out = Optional_(rebuild(e.item))
        done[id(e)] = out
        return out

    new = {name: rebuild(body, top=True) for name, body in lowered.rules.items()}
    return Lowered(lowered.start, {**new, **rules}, lowered.markers)


def code_runs(codes: Iterable[int]) -> list[tuple[int, int]]:
    """The codes in order as runs of consecutive ones, (first, last) each: a character
    class's members, which each writer spells in its own syntax."""
    runs: list[tuple[int, int]] = []
    for code in sorted(set(codes)):
        if runs and code == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], code)
        else:
            runs.append((code, code))
    return runs


def word_trie(words: Iterable[str]) -> dict[str, Any]:
    """The words' trie: a dict from each character to the trie after it; the key ""
    where a word ends."""
    trie: dict[str, Any] = {}
    for word in words:
        place = trie
        for ch in word:
            place = place.setdefault(ch, {})
        place[""] = {}
    return trie
