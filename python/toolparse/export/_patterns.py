"""Prefix patterns in the intermediate form: what a text may not begin with (an earlier
alternative's commit prefix, _prefix.py), as literals, whitespace, character runs,
sequences, alternatives and options.  The characters a pattern's match may begin with,
its derivative by a character, and its first lexemes, for the writers that spell a text
refusing the patterns (the Lark and regex writers)."""

from __future__ import annotations

from collections.abc import Sequence

from . import _ir as ir
from ._text import WS_CHARS


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
