"""Every format's repair mode, derived from its grammar: what StreamParser(repair=True) runs.

The repair grammar reads the same language as the format's own, and more only where the
output ended early or its arguments are not quite JSON:

- inside a call, once its name (or any of its arguments) has begun, every literal that
  follows (a value's closing tag, the arguments' closing brace, the call's closing
  marker) may be left out where the output ends: optional whitespace, the first bytes
  of one of the format's literals that the end cut off, then the end of the output.  The
  call is then marked repaired (``closed_at_end``);
- a value or raw arguments text (until()) runs to the end of the output instead of
  failing there, without the first bytes of a closing marker or of a character that the
  end cut off.  A parameter whose value never began is dropped (``dropped_member``).  A
  string value cut off keeps the text it has; any other value the end cut off (one not
  streamed as a string: typed by the schema, a Python literal, JSON) is handed as
  written to toolparse.repair, which closes what it can and drops a number (``4`` may
  have been ``42``);
- JSON arguments are read in the lenient dialect (single quotes, bare keys, Python
  literals, trailing commas; toolparse.repair names them ``lenient_arguments``) and may
  be cut off by the end of the output;
- after a call, the literals that close the block of calls may be left out the same way
  (no call is repaired by it);
- a closing tag left out in the middle of the output (``missing_closer``), where what
  comes next shows where it was due: a value's closing tag before the next parameter
  the tool declares (the value's own stop that makes the format's grammar fail there),
  before a call's closing marker (``call_markers``, ``other_call_closers`` and a marker
  that ends a call's body right before its closing marker, such as seed_oss's
  ``</function>``: those that are markers) or before the next call's opener; a call's
  closing marker before the next call's opener, another closer or a literal that
  follows calls in the grammar (a block's closing marker).  The value as the format's
  own grammar reads it is tried first, so an output without errors reads the same, a
  value holding the format's markup included; only where that fails does a closer or
  an opener end a value wherever it comes.  Where a value's closing tag is followed by
  whitespace, the whitespace before the stand-in belongs to it, not to the value.

A name is never completed: a name's text must still reach its own end (until() with
need_stop, a JSON string), so a call cut inside its name is an error as before, and a
call with a name but no arguments at all, or none left once what the end cut off is
dropped, is ``incomplete`` (a repair never invents arguments).  Raw code that runs to
where the model stopped (stopped()) is not salvaged when the output was cut short: code
cut mid-statement is not a call to run.  Nothing here accepts a tool outside ``tools``:
the event builder checks names as in the format's own grammar.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from .. import grammar as g

TAIL_RULE = "repair~cut_literal"  # the first bytes of a literal, where the output ended
CHAR_RULE = "repair~cut_character"  # the first bytes of a UTF-8 character, where it ended
_CALL_PARTS = ("tool_name", "tool_args", "tool_id", "param_name", "param_value")


@dataclass
class _Rewriter:
    grammar: g.Grammar
    closers: tuple[bytes, ...] = ()  # the literals that close a call
    opener: bytes | None = None  # the literal that opens a call
    after_calls: frozenset[bytes] = frozenset()  # literals that may follow a call
    rules: dict[str, g.Node] = field(default_factory=dict)
    contains: dict[tuple[int, str], bool] = field(default_factory=dict)
    texts: set[bytes] = field(default_factory=set)

    # -- what a node holds ------------------------------------------------------------------

    def holds(self, node: g.Node, what: str, seen: frozenset[str] = frozenset()) -> bool:
        """Whether node holds (through its rules) a call ("call") or a call's part
        ("part": its name, arguments, id, a parameter)."""
        key = (id(node), what)
        if key in self.contains:
            return self.contains[key]
        found = False
        if isinstance(node, g.Json):
            found = what == "part"  # a value of the call (checked in a lookahead, say)
        elif isinstance(node, g.Tag):
            if what == "call" and node.role == "tool_call":
                found = True
            elif what == "part" and node.role in _CALL_PARTS:
                found = True
            elif not (what == "part" and node.role == "tool_call"):
                found = self.holds(node.item, what, seen)
        elif isinstance(node, g.Ref):
            if node.name not in seen:
                found = self.holds(self.grammar.rules[node.name], what, seen | {node.name})
        else:
            found = any(self.holds(child, what, seen) for child in g.children(node))
        self.contains[key] = found
        return found

    # -- the rewrite ------------------------------------------------------------------------

    def rule(self, name: str, after: bool, in_call: bool) -> str:
        """The name of rule `name` rewritten for where it is referenced."""
        renamed = name if not (after or in_call) else f"{name}~repair{int(after)}{int(in_call)}"
        if renamed not in self.rules:
            self.rules[renamed] = g.choice()  # a placeholder while it is rewritten
            self.rules[renamed] = self.node(self.grammar.rules[name], after, in_call)
        return renamed

    def node(self, node: g.Node, after: bool, in_call: bool) -> g.Node:
        """node rewritten: after: a part of the call (or a call, outside calls) came
        before it in its sequence; in_call: it is inside a call."""
        if isinstance(node, g.Lit):
            self.texts.add(node.text)
            return self.closing(node, in_call) if after else node
        if isinstance(node, g.Until):
            self.texts.update(s.marker for s in node.stops)
            return node
        if isinstance(node, g.Json) and in_call:
            # a JSON value of the call that the end of the output cut off still reads as
            # one (a lookahead that checks a body is JSON before taking it, say)
            return g.Json(node.dialect, node.kind, True)
        if isinstance(node, g.Seq):
            items = []
            state = after
            k = 0
            while k < len(node.items):
                item, rest = node.items[k], node.items[k + 1 :]
                closing = _closing_texts(rest[0]) if in_call and rest else None
                if closing and self.closers and _stopped_value(item):
                    spaced = len(rest) > 1 and isinstance(rest[1], g.Ws)
                    assert isinstance(item, g.Tag)
                    items.append(self.value_and_closing(item, rest[0], closing, state, spaced))
                    state = True
                    k += 2
                    continue
                items.append(self.node(item, state, in_call))
                state = state or self.holds(item, "part" if in_call else "call")
                k += 1
            return g.Seq(tuple(items))
        if isinstance(node, g.Choice):
            return self.choice(node, after, in_call)
        if isinstance(node, g.Opt):
            return g.Opt(self.node(node.item, False, in_call))
        if isinstance(node, g.Many):
            return g.Many(self.node(node.item, False, in_call), node.at_least_one)
        if isinstance(node, g.Ahead):
            if node.negate:  # a literal that must not come stays one that must not come
                return node
            if not after:
                return g.Ahead(self.node(node.item, False, in_call), False)
            # what must come may be left out at the end of the output; the end is taken
            # outside the lookahead, where it can mark the call
            return g.Choice(
                (g.Ahead(self.node(node.item, False, in_call), False), self.end(in_call))
            )
        if isinstance(node, g.Recover):
            return g.Recover(self.node(node.item, after, in_call), node.handler)
        if isinstance(node, g.Ref):
            return g.Ref(self.rule(node.name, after, in_call))
        if isinstance(node, g.Tag):
            return self.tag(node, after, in_call)
        return node

    def choice(self, node: g.Choice, after: bool, in_call: bool) -> g.Node:
        """A choice after a call's part: its literals may be left out at the end of the
        output, as one last alternative; a choice that may match nothing already says
        what the end of the output means there, and is left as it is."""
        if not after or any(self.matches_at_end(a, frozenset()) for a in node.alts):
            return g.Choice(tuple(self.node(a, False, in_call) for a in node.alts))
        alts = [a if isinstance(a, g.Lit) else self.node(a, True, in_call) for a in node.alts]
        self.texts.update(a.text for a in node.alts if isinstance(a, g.Lit))
        return g.Choice((*alts, self.end(in_call)))

    def matches_at_end(self, node: g.Node, seen: frozenset[str]) -> bool:
        """Whether node may match where the output has ended (nothing left to read)."""
        if isinstance(node, (g.Lit, g.Json)):
            return False
        if isinstance(node, g.Until):
            return not node.flags & (g.UNTIL_MIN1 | g.UNTIL_NEED_STOP)
        if isinstance(node, g.Chars):
            return not node.min1
        if isinstance(node, g.Ahead):
            return node.negate or self.matches_at_end(node.item, seen)
        if isinstance(node, g.Many):
            return not node.at_least_one or self.matches_at_end(node.item, seen)
        if isinstance(node, g.Seq):
            return all(self.matches_at_end(i, seen) for i in node.items)
        if isinstance(node, (g.Choice, g.Recover)):
            return any(self.matches_at_end(c, seen) for c in g.children(node))
        if isinstance(node, g.Tag):
            return self.matches_at_end(node.item, seen)
        if isinstance(node, g.Ref):
            rule = self.grammar.rules[node.name]
            return node.name not in seen and self.matches_at_end(rule, seen | {node.name})
        return True  # the end itself, whitespace, a cut, an option, a constant

    def runs_to_end(self, node: g.Node, seen: frozenset[str]) -> bool:
        """Whether a value may run to the end of the output as written (raw code up to
        where the model stopped); any other value that meets the end was cut off."""
        if isinstance(node, g.Until):
            return not node.flags & g.UNTIL_NEED_STOP
        if isinstance(node, g.Ahead):
            return False
        if isinstance(node, g.Ref):
            rule = self.grammar.rules[node.name]
            return node.name not in seen and self.runs_to_end(rule, seen | {node.name})
        return any(self.runs_to_end(child, seen) for child in g.children(node))

    def tag(self, node: g.Tag, after: bool, in_call: bool) -> g.Node:
        if node.role == "tool_call":
            return g.Tag(node.role, self.node(node.item, False, True), node.decode)
        if node.role in ("tool_name", "tool_id", "param_name"):
            return node  # a name is never completed: it must reach its own end
        if in_call and node.role == "tool_args":
            return g.Tag(node.role, self.value(node.item, node.role), node.decode)
        if in_call and node.role == "param_value":
            # a value the end of the output cut off says so (a typed one is then dropped:
            # 4 may have been 42); one that never began, or of which only the first bytes
            # of a literal came, is dropped (the name alone is not written)
            cut_off = g.Tag("repaired", g.Eof(), 0)
            if self.runs_to_end(node.item, frozenset()):
                return node  # a value that runs to where the model stopped (raw code)
            if isinstance(node.item, g.Json):
                # a JSON value is whole only where something follows it (at the end of
                # the output, 4 may have been 42): else it is read as cut off
                whole = g.Seq((node.item, g.Ahead(g.Eof(), True)))
                cut = g.Seq((g.Json(node.item.dialect, node.item.kind, True), cut_off))
                value: g.Node = g.Choice((whole, cut))
            else:
                value = g.Seq((self.value(node.item, node.role), g.Opt(cut_off)))
            never_began = g.Seq((g.Ws(), g.Opt(self.cut_off()), cut_off))
            return g.Choice((never_began, g.Tag(node.role, value, node.decode)))
        return g.Tag(node.role, self.node(node.item, after, in_call), node.decode)

    def value(self, node: g.Node, role: str) -> g.Node:
        """A value's text or JSON, which the end of the output may cut off."""
        if isinstance(node, g.Until):
            self.texts.update(s.marker for s in node.stops)
            if not node.flags & g.UNTIL_NEED_STOP:
                return node  # text that may run to the end of the output already
            flags = (node.flags & ~g.UNTIL_NEED_STOP) | g.UNTIL_END_TRIMS
            return g.Until(node.stops, flags)
        if isinstance(node, g.Json):
            lenient = role == "tool_args" and node.dialect == "strict"
            return g.Json("lenient" if lenient else node.dialect, node.kind, True)
        if isinstance(node, g.Seq):
            return g.Seq(tuple(self.value(i, role) for i in node.items))
        if isinstance(node, g.Choice):
            return g.Choice(tuple(self.value(a, role) for a in node.alts))
        if isinstance(node, g.Lit):
            self.texts.add(node.text)
        return node

    def closing(self, node: g.Lit, in_call: bool) -> g.Node:
        """A literal the end of the output may stand for, after optional whitespace and
        the first bytes of one of the format's literals that the end cut off; a call's
        closing marker also where what follows it shows it was left out."""
        if in_call and node.text in self.closers:
            follows = g.Choice(tuple(g.Lit(t) for t in self.follows(node.text)))
            return g.Choice((node, self.end(in_call), self.left_out(g.Seq((g.Ws(), follows)))))
        return g.Choice((node, self.end(in_call)))

    # -- a closing tag left out in mid-output -------------------------------------------

    def follows(self, closer: bytes) -> tuple[bytes, ...]:
        """What shows that a call's closing marker ended the call: another of the format's
        call closers, the next call's opener, or a literal that follows calls."""
        found = {*self.closers, *self.after_calls, *((self.opener,) if self.opener else ())}
        found.discard(closer)
        return tuple(sorted(found, key=lambda t: (-len(t), t)))

    @staticmethod
    def left_out(what_follows: g.Node) -> g.Node:
        """A closing tag left out where what_follows comes instead (not consumed)."""
        return g.Seq((g.Ahead(what_follows, False), g.Tag("missing_closer", g.Seq(()), 0)))

    def value_and_closing(
        self, value: g.Tag, closing: g.Node, texts: tuple[bytes, ...], after: bool, spaced: bool
    ) -> g.Node:
        """A value and its closing tag: as the format's grammar reads them, else as a
        repair reads them, where the closing tag may also be left out before what its
        value's stops show comes next (the next declared parameter, the call's end)."""
        self.texts.update(texts)
        until = value.item
        assert isinstance(until, g.Until)
        stand_ins: list[g.Stop] = []
        stops: list[g.Stop] = []
        for stop in until.stops:
            if stop.marker in texts:
                if set(stop.follow) & set(self.closers):
                    # both the value's and the call's closing tags left out
                    more = [t for t in self.follows(b"") if t not in stop.follow]
                    stop = g.Stop(stop.marker, (*stop.follow, *more), stop.declared)
                stops.append(stop)
            else:
                stand_ins.append(stop)
        # the call's closing marker or the next call's opener, wherever it comes: the
        # format's own reading, which takes them inside a value where a real end follows,
        # was tried first
        ends = (*self.closers, *((self.opener,) if self.opener else ()))
        stand_ins += [g.Stop(c) for c in ends if all(s.marker != c for s in until.stops)]
        if spaced:  # the whitespace before a stand-in is the format's, after the value
            stand_ins += [g.Stop(b"\n" + s.marker, s.follow, s.declared) for s in stand_ins]
        markers = {s.marker for s in stops}
        stand_ins = [s for s in stand_ins if s.marker not in markers]
        if not stand_ins:
            return g.Seq((self.tag(value, after, True), self.node(closing, True, True)))
        repaired = g.Tag(value.role, g.Until((*stops, *stand_ins), until.flags), value.decode)
        alts = [g.Lit(t) for t in texts]
        left_out = self.left_out(g.Choice(tuple(g.Lit(s.marker) for s in stand_ins)))
        repaired_closing = g.Choice((*alts, self.end(True), left_out))
        written = g.Seq((value, closing))
        return g.Choice((written, g.Seq((self.tag(repaired, after, True), repaired_closing))))

    @staticmethod
    def end(in_call: bool) -> g.Node:
        """The end of the output after optional whitespace and a literal's first bytes
        (inside a call: the call is marked repaired).  Looked for ahead first, so that
        where the output goes on, the failure is where the literal was due: a recover()
        handler then starts there, not past the first bytes of a marker that begins what
        follows (the next call)."""
        end: g.Node = g.Tag("repaired", g.Eof(), 0) if in_call else g.Eof()
        tail = g.Opt(_Rewriter.cut_off())
        return g.Seq((g.Ws(), g.Ahead(g.Seq((tail, g.Eof())), False), tail, end))

    @staticmethod
    def cut_off() -> g.Node:
        """The first bytes of a literal or of a character, where the output ended."""
        return g.Choice((g.Ref(TAIL_RULE), g.Ref(CHAR_RULE)))

    def tail(self) -> g.Node:
        prefixes = {t[:k] for t in self.texts for k in range(1, len(t))}
        ordered = sorted(prefixes, key=lambda p: (-len(p), p))
        return g.Choice(tuple(g.Lit(p) for p in ordered))


def _cut_character() -> g.Node:
    """An incomplete UTF-8 character: a lead byte and fewer continuation bytes than it
    needs (what an until(trim_at_end=True) leaves where the end cut a character off)."""

    def byte(low: int, high: int) -> g.Node:
        return g.Choice(tuple(g.Lit(bytes([b])) for b in range(low, high + 1)))

    more = byte(0x80, 0xBF)
    return g.Choice(
        (
            byte(0xC2, 0xDF),
            g.Seq((byte(0xE0, 0xEF), g.Opt(more))),
            g.Seq((byte(0xF0, 0xF4), g.Opt(g.Seq((more, g.Opt(more)))))),
        )
    )


def _closing_texts(node: g.Node) -> tuple[bytes, ...] | None:
    """The texts of a literal, or of a choice of literals: a value's closing tag."""
    if isinstance(node, g.Lit):
        return (node.text,)
    if isinstance(node, g.Choice) and all(isinstance(a, g.Lit) for a in node.alts):
        return tuple(a.text for a in node.alts if isinstance(a, g.Lit))
    return None


def _stopped_value(node: g.Node) -> bool:
    """Whether node is a parameter's value that must reach one of its stops."""
    return (
        isinstance(node, g.Tag)
        and node.role == "param_value"
        and isinstance(node.item, g.Until)
        and bool(node.item.flags & g.UNTIL_NEED_STOP)
    )


def _edge_texts(grammar: g.Grammar, node: g.Node, last: bool, seen: frozenset[str]) -> set[bytes]:
    """The literals node may begin with (last: end with), whitespace at that edge skipped."""
    if isinstance(node, g.Lit):
        return {node.text}
    if isinstance(node, g.Choice):
        return set().union(*(_edge_texts(grammar, a, last, seen) for a in node.alts))
    if isinstance(node, g.Seq):
        items = [i for i in node.items if not isinstance(i, g.Ws)]
        return _edge_texts(grammar, items[-1 if last else 0], last, seen) if items else set()
    if isinstance(node, (g.Tag, g.Recover)) or (not last and isinstance(node, (g.Opt, g.Many))):
        return _edge_texts(grammar, g.children(node)[0], last, seen)
    if isinstance(node, g.Ref) and node.name not in seen:
        return _edge_texts(grammar, grammar.rules[node.name], last, seen | {node.name})
    return set()


def _sequences(grammar: g.Grammar) -> list[tuple[g.Node, ...]]:
    """The items of every sequence in the grammar, whitespace left out."""
    found = []
    for rule in grammar.rules.values():
        stack = [rule]
        while stack:
            node = stack.pop()
            stack.extend(c for c in g.children(node) if not isinstance(c, g.Ref))
            if isinstance(node, g.Seq):
                found.append(tuple(i for i in node.items if not isinstance(i, g.Ws)))
    return found


def _inner_closers(grammar: g.Grammar, closers: tuple[bytes, ...]) -> set[bytes]:
    """The literals that end a call's body right before its closing marker (seed_oss's
    ``</function>`` before ``</seed:tool_call>``)."""
    found: set[bytes] = set()
    for items in _sequences(grammar):
        for before, item in itertools.pairwise(items):
            if isinstance(item, g.Lit) and item.text in closers:
                found |= _edge_texts(grammar, before, True, frozenset())
    return found - set(closers)


def _after_calls(rewriter: _Rewriter) -> frozenset[bytes]:
    """The literals that may come right after a call in the format's grammar (the block's
    closing marker, a separator)."""
    found: set[bytes] = set()
    for items in _sequences(rewriter.grammar):
        for k, item in enumerate(items[:-1]):
            if rewriter.holds(item, "call"):
                found |= _edge_texts(rewriter.grammar, g.Seq(items[k + 1 :]), False, frozenset())
    return frozenset(found)


def derive_repair(
    grammar: g.Grammar,
    call_markers: tuple[str, str] | None = None,
    other_call_closers: tuple[str, ...] = (),
    markers: tuple[str, ...] = (),
) -> g.Grammar:
    """The format's repair grammar (see the module's docstring).  call_markers and
    other_call_closers, markers: the format's, for the closing tags a repair may find left
    out."""
    named = (*call_markers[1:], *other_call_closers) if call_markers else other_call_closers
    closers = tuple(c.encode() for c in named)
    closers += tuple(sorted(_inner_closers(grammar, closers)))
    # a closer that is no marker ("}" of a JSON call, "/>") is too common to stand in
    marker_texts = {m.encode() for m in markers}
    closers = tuple(c for c in closers if c in marker_texts)
    rewriter = _Rewriter(grammar, closers, call_markers[0].encode() if call_markers else None)
    rewriter.after_calls = _after_calls(rewriter)
    for name in grammar.rules:
        rewriter.rule(name, False, False)
    rewriter.rules[TAIL_RULE] = rewriter.tail()
    rewriter.rules[CHAR_RULE] = _cut_character()
    return g.Grammar(rules=rewriter.rules, entries=dict(grammar.entries))
