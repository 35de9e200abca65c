"""What an ordered choice's earlier alternatives commit to, and where a later one may
not begin with it.

choice(A, B) with A = seq(P, cut(), ...) takes B only where P does not match: once P has
matched, the parser is committed to A (a broken A is an error, not B).  A grammar
written as a union does not know this, so the texts that B begins with are told which
prefixes they may not begin with.  P is kept as a small grammar of literals, whitespace,
character runs, sequences, choices and options: what a regular expression says the same
way (see _regular).  Where B begins with a literal, what comes after that literal may not
begin with the rest of P (the derivative of P by it)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .. import grammar as g

WS_BYTES = frozenset(b" \t\r\n")


def _until_run(node: g.Until) -> g.Chars:
    """Text up to a stop, as a run of the bytes that begin no stop: less than the text
    may be (a stop's first byte not followed by the rest of the stop), so a prefix
    holding it is refused only where the parser commits."""
    firsts = {s.marker[0] for s in node.stops}
    return g.Chars.of(set(range(256)) - firsts, bool(node.flags & g.UNTIL_MIN1))


def _head(items: Sequence[g.Node], rules: Mapping[str, g.Node]) -> g.Node | None:
    """The items before a cut as a prefix pattern.  A text up to a stop counts where a
    literal that begins with one of its stops comes right after it (the parser's text
    ends there, and only there does the pattern's run end)."""
    parts: list[g.Node] = []
    for k, item in enumerate(items):
        inner = item.item if isinstance(item, g.Tag) else item
        if isinstance(inner, g.Until):
            after = items[k + 1] if k + 1 < len(items) else None
            if not (
                isinstance(after, g.Lit)
                and any(after.text.startswith(s.marker) for s in inner.stops)
            ):
                return None
            parts.append(_until_run(inner))
            continue
        found = _simple(item, rules, frozenset())
        if found is None:
            return None
        parts.append(found)
    return g.Seq(tuple(parts))


def _simple(node: g.Node, rules: Mapping[str, g.Node], seen: frozenset[str]) -> g.Node | None:
    """node as a prefix pattern (rules inlined, tags and cuts dropped), or None where it
    holds anything else."""
    if isinstance(node, (g.Lit, g.Ws, g.Chars)):
        return node
    if isinstance(node, g.Cut):
        return g.Seq(())
    if isinstance(node, g.Tag):
        return _simple(node.item, rules, seen)
    if isinstance(node, g.Ref):
        if node.name in seen:
            return None
        return _simple(rules[node.name], rules, seen | {node.name})
    if isinstance(node, g.Opt):
        item = _simple(node.item, rules, seen)
        return None if item is None else g.Opt(item)
    if isinstance(node, (g.Seq, g.Choice)):
        items = list(g.children(node))
        if isinstance(node, g.Seq) and items and isinstance(items[-1], g.Ahead):
            if items[-1].negate:
                return None
            items[-1] = items[-1].item  # what it looks for comes next: the prefix holds it
        parts = [_simple(i, rules, seen) for i in items]
        if any(p is None for p in parts):
            return None
        found = tuple(p for p in parts if p is not None)
        return g.Seq(found) if isinstance(node, g.Seq) else g.Choice(found)
    return None


def nullable(node: g.Node) -> bool:
    if isinstance(node, g.Lit):
        return False
    if isinstance(node, g.Chars):
        return not node.min1
    if isinstance(node, g.Seq):
        return all(nullable(i) for i in node.items)
    if isinstance(node, g.Choice):
        return any(nullable(a) for a in node.alts)
    return True  # Ws, Opt


def first_bytes(node: g.Node) -> frozenset[int]:
    """The bytes a match of the pattern may begin with."""
    if isinstance(node, g.Lit):
        return frozenset(node.text[:1])
    if isinstance(node, g.Ws):
        return WS_BYTES
    if isinstance(node, g.Chars):
        return node.members()
    if isinstance(node, g.Opt):
        return first_bytes(node.item)
    if isinstance(node, g.Choice):
        return frozenset().union(*(first_bytes(a) for a in node.alts))
    assert isinstance(node, g.Seq)
    found: frozenset[int] = frozenset()
    for item in node.items:
        found |= first_bytes(item)
        if not nullable(item):
            break
    return found


def _regular(node: g.Node, follow: frozenset[int]) -> bool:
    """Whether the parser matches the pattern where, and only where, the input begins
    with a string of the pattern read as a regular expression, given the bytes that may
    follow it within the prefix: the parser's options, whitespace and runs are possessive
    and its choices ordered, which only differ where what they take could also begin
    what comes next."""
    if isinstance(node, g.Lit):
        return True
    if isinstance(node, g.Ws):
        return not WS_BYTES & follow
    if isinstance(node, g.Chars):
        return not node.members() & follow
    if isinstance(node, g.Opt):
        return not first_bytes(node.item) & follow and _regular(node.item, follow)
    if isinstance(node, g.Choice):
        if follow:
            for k, a in enumerate(node.alts):
                for b in node.alts[k + 1 :]:
                    if isinstance(a, g.Lit) and isinstance(b, g.Lit):
                        if b.text.startswith(a.text):
                            return False
                    elif first_bytes(a) & first_bytes(b):
                        return False
        return all(_regular(a, follow) for a in node.alts)
    assert isinstance(node, g.Seq)
    after = follow
    beyond = follow  # what may follow the item after this one
    later: g.Node | None = None
    for item in reversed(node.items):
        # a run before an optional run that takes its characters too (a Python
        # identifier's first character, then the rest) takes what the two take as one
        # run, however it splits them: only what follows the later one counts
        if not _regular(item, beyond if _continued(item, later) else after):
            return False
        beyond, later = after, item
        after = first_bytes(item) | (after if nullable(item) else frozenset())
    return True


def _continued(run: g.Node, later: g.Node | None) -> bool:
    """Whether a run is followed by an optional run of characters that holds its own."""
    return (
        isinstance(run, g.Chars)
        and isinstance(later, g.Chars)
        and not later.min1
        and run.members() <= later.members()
    )


def commit_prefixes(
    node: g.Node, rules: Mapping[str, g.Node], seen: frozenset[str] = frozenset()
) -> list[g.Node]:
    """The prefixes that commit the parser to node once matched: what comes before a cut
    at its head (a lookahead right before the cut counts as what it looks for, and one
    first where what follows it reads the beginning of what it looks for)."""
    if isinstance(node, g.Tag):
        return commit_prefixes(node.item, rules, seen)
    if isinstance(node, g.Ref):
        if node.name in seen:
            return []
        return commit_prefixes(rules[node.name], rules, seen | {node.name})
    if isinstance(node, g.Choice):
        return [p for a in node.alts for p in commit_prefixes(a, rules, seen)]
    if not isinstance(node, g.Seq) or not node.items:
        return []
    cut = next((k for k, i in enumerate(node.items) if isinstance(i, g.Cut)), None)
    if cut:
        head = list(node.items[:cut])
        if isinstance(head[-1], g.Ahead) and not head[-1].negate:
            head[-1] = head[-1].item
        elif isinstance(head[0], g.Ahead) and not head[0].negate:
            # a lookahead first, then the beginning of what it looks for: what it looks
            # for commits (```` ``` ```` then json and a list, before the fence is read)
            looked = head[0].item
            items = looked.items if isinstance(looked, g.Seq) else (looked,)
            if [repr(i) for i in head[1:]] == [repr(i) for i in items[: len(head) - 1]]:
                head = [looked]
        found = _head(head, rules)
        if found is not None and not nullable(found) and _regular(found, frozenset()):
            return [found]
    return commit_prefixes(node.items[0], rules, seen)


def derive(node: g.Node, byte: int) -> g.Node | None:
    """What must follow `byte` for the input to begin with the pattern (its derivative),
    or None where nothing can."""
    if isinstance(node, g.Lit):
        if node.text[0] != byte:
            return None
        return g.Lit(node.text[1:]) if len(node.text) > 1 else g.Seq(())
    if isinstance(node, g.Ws):
        return node if byte in WS_BYTES else None
    if isinstance(node, g.Chars):
        return g.Chars(node.byteset, False) if byte in node.members() else None
    if isinstance(node, g.Opt):
        return derive(node.item, byte)
    if isinstance(node, g.Choice):
        alts = [d for d in (derive(a, byte) for a in node.alts) if d is not None]
        return None if not alts else alts[0] if len(alts) == 1 else g.Choice(tuple(alts))
    assert isinstance(node, g.Seq)
    if not node.items:
        return None
    head, rest = node.items[0], g.Seq(node.items[1:])
    found: list[g.Node] = [] if (d := derive(head, byte)) is None else [g.Seq((d, *rest.items))]
    if nullable(head) and (r := derive(rest, byte)) is not None:
        found.append(r)
    return None if not found else found[0] if len(found) == 1 else g.Choice(tuple(found))


def derive_text(node: g.Node, data: bytes) -> g.Node | None:
    found: g.Node | None = node
    for byte in data:
        if found is None:
            return None
        found = derive(found, byte)
    return found


class _WsEnds:
    """Whether what follows a node never begins with whitespace, because the node ends
    with a ws() item (which takes all there is) or a text up to stops that do not begin
    with whitespace: after every match (closes), or after every match but an empty one
    (ends)."""

    def __init__(self, rules: Mapping[str, g.Node], nullable: dict[str, bool]) -> None:
        self.nullable = nullable
        # the greatest fixed point: a rule that calls itself ends as its other parts do
        self.known = {name: (True, True) for name in rules}
        changed = True
        while changed:
            changed = False
            for name, body in rules.items():
                found = (self.ends(body), self.closes(body))
                if found != self.known[name]:
                    self.known[name] = found
                    changed = True

    def last(self, items: Sequence[g.Node], empty: bool) -> bool:
        """Whether what follows the items never begins with whitespace; empty: the
        answer where they all matched nothing."""
        for item in reversed(items):
            if self.closes(item):
                return True
            if not self.ends(item):
                return False
            if not g.nullable(item, self.nullable, handlers=False):
                return True
        return empty

    def ends(self, node: g.Node) -> bool:
        if isinstance(node, (g.Ws, g.Cut, g.Ahead, g.Eof, g.Const)):
            return True
        if isinstance(node, (g.Opt, g.Many, g.Tag, g.Recover)):
            return self.ends(node.item)  # the exports drop a recovery's handler
        if isinstance(node, g.Choice):
            return all(self.ends(a) for a in node.alts)
        if isinstance(node, g.Seq):
            return self.last(node.items, True)
        if isinstance(node, g.Ref):
            return self.known.get(node.name, (False, False))[0]
        return False

    def closes(self, node: g.Node) -> bool:
        if isinstance(node, g.Ws):
            return True
        if isinstance(node, g.Until):
            # it ends where a stop begins, or at the end of the output
            return not any(s.marker[0] in WS_BYTES for s in node.stops)
        if isinstance(node, (g.Tag, g.Recover)) or (isinstance(node, g.Many) and node.at_least_one):
            return self.closes(node.item)
        if isinstance(node, g.Choice):
            return all(self.closes(a) for a in node.alts)
        if isinstance(node, g.Seq):
            return self.last(node.items, False)
        if isinstance(node, g.Ref):
            return self.known.get(node.name, (False, False))[1]
        return False


def _after_ws(nodes: Sequence[g.Node], rules: Mapping[str, g.Node]) -> set[int]:
    """The nodes (by id) that every place holding them has right after whitespace: after
    a ws() item, or after what ends with one (where that matched nothing, after what
    came before it), or first in what is itself after whitespace.  What they match
    never begins with whitespace."""
    ws = _WsEnds(rules, g.nullable_rules(rules, handlers=False))
    after: dict[int, bool] = {}
    for n in nodes:
        for item in g.children(n):
            after[id(item)] = True
        if isinstance(n, g.Ref) and n.name in rules:
            after[id(rules[n.name])] = True

    changed = True
    while changed:
        changed = False
        for n in nodes:
            here = after.get(id(n), False)
            places: list[tuple[g.Node, bool]]
            if isinstance(n, g.Seq):
                places = [(i, ws.last(n.items[:k], here)) for k, i in enumerate(n.items)]
            elif isinstance(n, g.Many):
                places = [(n.item, here and ws.ends(n.item))]
            elif isinstance(n, g.Ref) and n.name in rules:
                places = [(rules[n.name], here)]
            else:
                places = [(i, here) for i in g.children(n)]
            for item, at in places:
                if not at and after[id(item)]:
                    after[id(item)] = False
                    changed = True
    return {k for k, v in after.items() if v}


Key = int | tuple[int, bytes]


def exclusions(
    nodes: Sequence[g.Node], rules: Mapping[str, g.Node]
) -> dict[Key, tuple[g.Node, ...]]:
    """For each text or character run (by id) that a later alternative of an ordered
    choice begins with, directly or after literals, the prefixes it may not begin with;
    for a sequence (by id) of several spellings and then a text, the prefixes that text
    may not begin with after each spelling (by (id, spelling))."""
    found: dict[Key, list[g.Node]] = {}
    after_ws = _after_ws(nodes, rules)
    for node in nodes:
        # an option (or a choice with an empty alternative) is a choice between it and
        # what follows it: what follows may not begin with what it commits to
        if isinstance(node, g.Seq):
            for item, after in zip(node.items, node.items[1:], strict=False):
                taken = _skippable_prefixes(item, rules)
                if taken and id(item) in after_ws:
                    taken = [g.Seq((g.Ws(), p)) for p in taken]
                if taken:
                    _push(after, taken, rules, frozenset(), found)
    for choice in nodes:
        if not isinstance(choice, g.Choice):
            continue
        committed: list[g.Node] = []
        for alt in choice.alts:
            if committed:
                _push(alt, committed, rules, frozenset(), found)
            for p in commit_prefixes(alt, rules):
                # the whitespace before the choice was taken by then: a text after it
                # cannot begin with whitespace, which the exports' texts may
                committed.append(g.Seq((g.Ws(), p)) if id(choice) in after_ws else p)
    return {k: tuple(v) for k, v in found.items()}


def after_literals(parts: Sequence[g.Node], rules: Mapping[str, g.Node]) -> dict[int, list[g.Node]]:
    """For each alternative of a repeated ordered choice that is one literal alone (by
    index), what the next round may not begin with: the rest after that literal of
    each earlier alternative's commit prefix (where it goes on past it)."""
    found: dict[int, list[g.Node]] = {}
    committed: list[g.Node] = []
    for k, part in enumerate(parts):
        if isinstance(part, g.Lit) and committed:
            derived = _derived(committed, part.text)
            if derived:
                found[k] = derived
        committed += commit_prefixes(part, rules)
    return found


def _skippable_prefixes(node: g.Node, rules: Mapping[str, g.Node]) -> list[g.Node]:
    """What an option, or a choice before its first alternative that matches nothing
    (an end of input or a lookahead), commits to: where it matched nothing, what follows
    does not begin with that."""
    if isinstance(node, g.Opt):
        return commit_prefixes(node.item, rules)
    if not isinstance(node, g.Choice):
        return []
    found: list[g.Node] = []
    for alt in node.alts:
        if isinstance(alt, (g.Eof, g.Ahead)):
            return found
        found += commit_prefixes(alt, rules)
    return []


def _push(
    node: g.Node,
    prefixes: Sequence[g.Node],
    rules: Mapping[str, g.Node],
    seen: frozenset[str],
    found: dict[Key, list[g.Node]],
) -> None:
    if isinstance(node, (g.Tag, g.Opt, g.Many, g.Recover)):
        _push(node.item, prefixes, rules, seen, found)
    elif isinstance(node, g.Ref):
        if node.name not in seen:
            _push(rules[node.name], prefixes, rules, seen | {node.name}, found)
    elif isinstance(node, g.Choice):
        for a in node.alts:
            _push(a, prefixes, rules, seen, found)
    elif isinstance(node, g.Seq):
        items = [i for i in node.items if not isinstance(i, (g.Cut, g.Ahead))]
        spelled = _spellings(items[0]) if items else []
        if len(spelled) > 1 and node.items[:2] == tuple(items[:2]) and _is_text(items[1]):
            # several spellings, then a text: each spelling's text refuses its own rest
            # (the lowering writes the text once per spelling)
            for text in spelled:
                key = (id(node), text)
                here = found.setdefault(key, [])
                here.extend(d for d in _derived(prefixes, text) if d not in here)
            return
        while items and (spelled := _spellings(items[0])):
            # the rest of each prefix after the literal; where several spellings lead on
            # to one place other than a text, that place is told nothing
            prefixes = _derived(prefixes, spelled[0]) if len(spelled) == 1 else []
            items.pop(0)
        if items and prefixes:
            _push(items[0], prefixes, rules, seen, found)
    elif _is_text(node):
        here = found.setdefault(id(node), [])
        here.extend(p for p in prefixes if p not in here)


def _is_text(node: g.Node) -> bool:
    return isinstance(node, (g.Until, g.Chars))


def _derived(prefixes: Sequence[g.Node], text: bytes) -> list[g.Node]:
    """What must follow text for the input to begin with one of the prefixes; a prefix
    the text completes leaves its alternative nothing to match, which the union cannot
    drop (left out)."""
    derived = [derive_text(p, text) for p in prefixes]
    return [d for d in derived if d is not None and not nullable(d)]


def _spellings(node: g.Node) -> list[bytes]:
    """The texts of a literal or a choice of literals; else none."""
    if isinstance(node, g.Lit):
        return [node.text]
    if isinstance(node, g.Choice) and all(isinstance(a, g.Lit) for a in node.alts):
        return [a.text for a in node.alts if isinstance(a, g.Lit)]
    return []
