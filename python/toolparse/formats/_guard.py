"""Markers never reach content or reasoning text: the guard a Format puts on its grammar.

A format's content and reasoning rules read text up to the markers that end it (a call's
opener, the reasoning's closer).  Any other marker of the format met in that text has no
place there: the guard makes each such text stop at it too, reports it (an `unexpected`
error at its offset) and drops it, and the text goes on after it.  The rewrite is on the
grammar itself, so both engines and the exports read the same language (an export never
writes such a marker, as a recover() is its item).
"""

from __future__ import annotations

from collections.abc import Callable, Collection

from .. import grammar as g


def stray(*markers: str) -> g.Node:
    """A marker with no place where it stands: reported (unexpected, at its first byte)
    and dropped, and parsing goes on right after it."""
    found = g.choice(*(g.lit(m) for m in markers))
    return g.seq(g.ahead(found), g.cut(), g.recover(g.choice(), found))


def _map(node: g.Node, fn: Callable[[g.Node], g.Node | None], seen: dict[int, g.Node]) -> g.Node:
    """node with fn applied bottom-up where it returns a replacement; a node met twice
    is rewritten once (the exports tell nodes apart by identity)."""
    if id(node) in seen:
        return seen[id(node)]
    found = fn(node)
    if found is None:
        if isinstance(node, g.Seq):
            found = g.Seq(tuple(_map(i, fn, seen) for i in node.items))
        elif isinstance(node, g.Choice):
            found = g.Choice(tuple(_map(a, fn, seen) for a in node.alts))
        elif isinstance(node, g.Opt):
            found = g.Opt(_map(node.item, fn, seen))
        elif isinstance(node, g.Many):
            found = g.Many(_map(node.item, fn, seen), node.at_least_one)
        elif isinstance(node, g.Ahead):
            found = g.Ahead(_map(node.item, fn, seen), node.negate)
        elif isinstance(node, g.Tag):
            found = g.Tag(node.role, _map(node.item, fn, seen), node.decode)
        elif isinstance(node, g.Recover):
            found = g.Recover(_map(node.item, fn, seen), _map(node.handler, fn, seen))
        else:
            found = node
    seen[id(node)] = found
    return found


def _guarded(tag: g.Tag, text: g.Until, others: list[bytes], strays: bool) -> g.Node:
    """The text of `tag` stopping also at `others`, each reported and dropped (without
    strays: where the text ends, for an export, which never writes a stray marker)."""
    stops = text.stops + tuple(g.Stop(m) for m in others)
    if not strays:
        return g.Tag(tag.role, g.Until(stops, text.flags), tag.decode)
    marker = stray(*(m.decode("utf-8") for m in others))
    if text.flags & g.UNTIL_MIN1:
        # at least one byte of text or one stray marker, then any number of either
        piece = g.Tag(tag.role, g.Until(stops, text.flags), tag.decode)
        return g.Many(g.Choice((piece, marker)), True)
    first = g.Tag(tag.role, g.Until(stops, text.flags), tag.decode)
    again = g.Tag(tag.role, g.Until(stops, text.flags), tag.decode)
    return g.Seq((first, g.Many(g.Seq((marker, again)), False)))


def guard_markers(
    grammar: g.Grammar,
    content: Collection[str],
    reasoning: Collection[str],
    *,
    strays: bool = True,
) -> g.Grammar:
    """The grammar with every content text guarded against the markers `content` and
    every reasoning text against `reasoning` (those that do not end it already).
    strays=False: the texts only end at them, the language an export writes (the same
    shape as the grammar as written, which the exports' lowering reads)."""
    guards = {
        "content": [m.encode() for m in content],
        "reasoning": [m.encode() for m in reasoning],
    }

    def guarded(node: g.Tag) -> g.Node | None:
        markers = guards.get(node.role)
        if not markers:
            return None
        if isinstance(node.item, g.Choice):  # a tag over a choice: a choice of tags
            alts = [g.Tag(node.role, a, node.decode) for a in node.item.alts]
            found = [guarded(a) for a in alts]
            if not any(found):
                return None
            return g.Choice(tuple(f or a for f, a in zip(found, alts, strict=True)))
        if not isinstance(node.item, g.Until):
            return None
        ends = {s.marker for s in node.item.stops}
        others = [m for m in markers if m not in ends]
        return _guarded(node, node.item, others, strays) if others else None

    def rewrite(node: g.Node) -> g.Node | None:
        return guarded(node) if isinstance(node, g.Tag) else None

    seen: dict[int, g.Node] = {}
    rules = {name: _map(rule, rewrite, seen) for name, rule in grammar.rules.items()}
    return g.Grammar(rules=rules, entries=dict(grammar.entries))
