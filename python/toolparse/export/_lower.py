"""The lowering: a format's combinator tree, specialised to a request's tools and tool
choice, lowered to the intermediate form (_ir.py) that each export prints.

The format grammar is a PEG (ordered choice, possessive repetition, lookahead, cuts,
error recovery); a constrained-decoding engine wants a context-free grammar.  The pass
keeps what the output may be and drops what only steers the parser:

* an ordered choice becomes an alternation (the union of what its alternatives accept),
  except that a JSON string alternative after literal keys excludes those keys, and the
  text a later alternative begins with refuses what an earlier one commits to with a cut
  (_prefix.py), as the PEG's order does;
* lookaheads, cuts, ends of input and error recovery handlers are dropped (the recovery
  only matters for output that is already wrong);
* until() becomes text that holds none of its stops (a stop with followed_by only where
  the lookahead follows it) and does not end with the beginning of one, so that no
  marker can be split across two texts;
* a tool_call tag is specialised per allowed tool: the tool_name tag becomes that tool's
  name and tool_args its arguments schema; parameter name/value pairs are specialised per
  property, a raw value typed by the property's schema, and to a parameter the schema
  does not declare where it allows others (a name none of the declared ones);
* tool_choice and parallel_tool_calls restrict how many tool_call tags the output may hold
  (none, exactly one, at least one, any), by splitting every rule by that count.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from .. import grammar as g
from ..formats import Format
from ..formats.minimax_m3 import NS as M3_NS
from ..formats.minimax_m3 import VALUE_MAX_DEPTH as M3_MAX_DEPTH
from ..tools import Tool, schema_types
from ._ir import (
    EMPTY,
    CharRun,
    CutShort,
    Expr,
    JsonString,
    JsonValue,
    Lit,
    Lowered,
    Optional_,
    Pattern,
    Repeat,
    RuleRef,
    Seq,
    Text,
    Ws,
    alternatives,
    seq,
    share,
    union,
    word_trie,
)
from ._prefix import after_literals, commit_prefixes, exclusions
from ._request import ANY, ANY_TOOL, ONE, SOME, ZERO, Count, ToolChoice, allowed_tools
from ._schema import PythonLiterals

_EOF = "<eof>"  # not a role: marks what holds an eof()
_ARG_ROLES = frozenset({"tool_args", "param_name", "param_value"})
_SCALAR_TYPES = ("integer", "number", "boolean", "null")
_TEXT_ROLES = frozenset({"content", "reasoning"})


@dataclass(frozen=True)
class _Ctx:
    count: Count = ANY
    tool: int | None = None  # index into the allowed tools
    param: str | None = None  # the property a parameter name/value pair is specialised to
    undeclared: bool = False  # ... or a parameter the schema does not declare
    end: bool = False  # the end of the output follows: an eof() here matches
    # ... and nothing that may match more than the empty string comes before it: a
    # text here may end with a marker cut short
    last: bool = False


def _roles(
    node: g.Node, rule_roles: Mapping[str, frozenset[str]], closers: Collection[int] = ()
) -> frozenset[str]:
    found: set[str] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, g.Tag):
            found.add(n.role)
            if n.role in _TEXT_ROLES:
                found.add(_EOF)  # its text may end the output with a marker cut short
        elif (isinstance(n, g.Eof) and not n.stopped) or id(n) in closers:
            found.add(_EOF)
        elif isinstance(n, g.Ref):
            found |= rule_roles.get(n.name, frozenset())
        # the lowering drops a recover()'s handler
        stack.extend((n.item,) if isinstance(n, g.Recover) else g.children(n))
    return frozenset(found)


def _first(node: g.Node) -> g.Node:
    while True:
        if isinstance(node, g.Seq) and node.items:
            node = node.items[0]
        elif isinstance(node, g.Tag):
            node = node.item
        else:
            return node


def _nodes(rules: Mapping[str, g.Node]) -> list[g.Node]:
    """Every node of the grammar, once."""
    found: list[g.Node] = []
    stack = list(rules.values())
    seen: set[int] = set()
    while stack:
        n = stack.pop()
        if id(n) not in seen:
            seen.add(id(n))
            found.append(n)
            stack.extend(g.children(n))
    return found


def _spellings(node: g.Node) -> set[bytes]:
    """The texts of a literal, or of a choice of literals; none for anything else."""
    if isinstance(node, g.Lit):
        return {node.text}
    if isinstance(node, g.Choice) and all(isinstance(a, g.Lit) for a in node.alts):
        return {a.text for a in node.alts if isinstance(a, g.Lit)}
    return set()


def _closers(nodes: Sequence[g.Node], rules: Mapping[str, g.Node]) -> set[int]:
    """The optional closers the output leaves out only at its end: an opt() right after
    (whitespace aside) a many() whose item commits at its opener (a block of calls), or
    right after a text that stops only at the marker the opt() begins with (`</think>`
    after reasoning that nothing else ends: the text runs to it or to the end; one of
    its spellings, where it has several).  They
    count as an end of the output (what marks eof(): rules holding one are lowered
    apart where the output may end)."""
    found: set[int] = set()
    for n in nodes:
        if not isinstance(n, g.Seq):
            continue
        for k, item in enumerate(n.items):
            if not isinstance(item, g.Opt):
                continue
            before = [i for i in n.items[:k] if not isinstance(i, g.Ws)]
            repeated = before[-1] if before else None
            if isinstance(repeated, g.Many) and commit_prefixes(repeated.item, rules):
                found.add(id(item))
            text = _first(repeated) if repeated is not None else None
            spellings = _spellings(_first(item.item))
            if (
                isinstance(text, g.Until)
                and spellings
                and all(s.marker.lstrip(b" \t\r\n") in spellings for s in text.stops)
                and not any(s.conditional for s in text.stops)
            ):
                found.add(id(item))
    return found


def _text_rounds(item: g.Node, rules: Mapping[str, g.Node]) -> tuple[g.Until, list[g.Node]] | None:
    """A repeated choice's one text alternative (directly, through tags and rules, or
    one alternative of a choice among its alternatives) and all its alternatives in
    their order, that one's choice opened (the text among them)."""
    choice = _bare_text(item, rules)
    if not isinstance(choice, g.Choice):
        return None
    texts: list[g.Until] = []
    parts: list[g.Node] = []
    for alt in choice.alts:
        inner = _bare_text(alt, rules)
        opened = list(inner.alts) if isinstance(inner, g.Choice) else [alt]
        found = [_bare_text(p, rules) for p in opened]
        if isinstance(inner, g.Until) or (
            isinstance(inner, g.Choice) and sum(isinstance(f, g.Until) for f in found) == 1
        ):
            texts += [f for f in found if isinstance(f, g.Until)]
            parts += opened
        else:
            parts.append(alt)
    return (texts[0], parts) if len(texts) == 1 else None


def _bare_text(n: g.Node, rules: Mapping[str, g.Node]) -> g.Node:
    """n through rules and the tags of text (a call's tags specialise what they hold)."""
    while isinstance(n, g.Ref) or (isinstance(n, g.Tag) and n.role in _TEXT_ROLES):
        n = n.item if isinstance(n, g.Tag) else rules[n.name]
    return n


def _empty_only(node: g.Node) -> bool:
    """Whether the node can match nothing but the empty string."""
    if isinstance(node, (g.Eof, g.Ahead, g.Cut, g.Const)):
        return True
    if isinstance(node, g.Seq):
        return all(_empty_only(i) for i in node.items)
    if isinstance(node, g.Tag):
        return _empty_only(node.item)
    return False


def _last_nonempty(items: Sequence[g.Node]) -> int:
    """The index of a sequence's last item that can match more than the empty string
    (0 where none can): the output ends after it where nothing but the end follows."""
    k = len(items) - 1
    while k > 0 and _empty_only(items[k]):
        k -= 1
    return k


def _prop_type(schema: Any) -> str | None:
    if not isinstance(schema, Mapping):
        return None
    kind = schema.get("type")
    if isinstance(kind, str):
        return kind
    return None


class Lowerer:
    """Lowers one format grammar entry for one set of allowed tools and call counts."""

    def __init__(
        self,
        grammar: g.Grammar,
        tools: Sequence[Tool],
        what: str,
        literal_depth: int | None = None,
    ) -> None:
        """literal_depth: how many containers a free-form Python literal value may nest
        (None: any number, through a rule that holds itself)."""
        self.grammar = grammar
        self.tools = list(tools)
        self.what = what
        self.rules: dict[str, Expr] = {}
        self.literals = PythonLiterals(literal_depth)
        self._names: dict[tuple[str, _Ctx], str | None] = {}
        self._exclude: dict[int, tuple[bytes, ...]] = {}
        nodes = _nodes(grammar.rules)  # one walk serves all three
        # values that end only where a declared parameter follows (declared_param())
        self.declared_ends = any(
            isinstance(n, g.Until) and any(s.declared for s in n.stops) for n in nodes
        )
        self.not_first = exclusions(nodes, grammar.rules)
        self.closers = _closers(nodes, grammar.rules)
        roles: dict[str, frozenset[str]] = dict.fromkeys(grammar.rules, frozenset())
        changed = True
        while changed:
            changed = False
            for name, node in grammar.rules.items():
                found = _roles(node, roles, self.closers)
                if found != roles[name]:
                    roles[name] = found
                    changed = True
        self.rule_roles = roles
        self.nullable = g.nullable_rules(grammar.rules)
        # as the lowering writes them: a recover() is its item (its handler is dropped)
        self.lowered_nullable = g.nullable_rules(grammar.rules, handlers=False)
        # a node the grammar uses in several places lowers once per context, so the
        # exports can write it once (share())
        self._memo: dict[tuple[int, _Ctx], Expr | None] = {}
        self._call_free: dict[str, bool] = {}

    def call_free(self, node: g.Node, active: frozenset[str] = frozenset()) -> bool:
        """Whether node can match output holding no call other than by repeating
        something that holds calls no times."""
        if "tool_call" not in self.roles(node):
            return True
        if isinstance(node, g.Tag):
            return node.role != "tool_call" and self.call_free(node.item, active)
        if isinstance(node, g.Ref):
            if node.name in active:
                return False
            if node.name not in self._call_free:
                found = self.call_free(self.grammar.rules[node.name], active | {node.name})
                self._call_free[node.name] = found
            return self._call_free[node.name]
        if isinstance(node, g.Seq):
            return all(self.call_free(i, active) for i in node.items)
        if isinstance(node, g.Choice):
            return any(self.call_free(a, active) for a in node.alts)
        if isinstance(node, (g.Opt, g.Many, g.Recover)):
            return self.call_free(node.item, active)
        return True

    def unsupported(self, construct: str) -> NotImplementedError:
        return NotImplementedError(f"{self.what}: {construct} cannot be exported")

    def roles(self, node: g.Node) -> frozenset[str]:
        return _roles(node, self.rule_roles, self.closers)

    def lower(self, entry_rule: str, counts: Sequence[Count]) -> Lowered:
        start = union([self.ref(entry_rule, _Ctx(count=c, end=True, last=True)) for c in counts])
        if start is None:
            raise ValueError(f"{self.what}: no output satisfies the tool choice")
        self.rules = {"start": start, **self.rules, **self.literals.rules}
        return share(Lowered("start", self.rules))

    # rules

    def ref(self, name: str, ctx: _Ctx) -> Expr | None:
        roles = self.rule_roles[name]
        if "tool_call" not in roles:
            if ctx.count in (ONE, SOME):
                return None
            ctx = replace(ctx, count=ANY)
        if ctx.tool is not None and not roles & (_ARG_ROLES | {"tool_name"}):
            ctx = replace(ctx, tool=None, param=None, undeclared=False)
        if not roles & {"param_name", "param_value"}:
            ctx = replace(ctx, param=None, undeclared=False)
        if _EOF not in roles:
            ctx = replace(ctx, end=False, last=False)
        key = (name, ctx)
        if key in self._names:
            found = self._names[key]
            return None if found is None else RuleRef(found)
        label = name.lower().replace("_", "-")
        if ctx != _Ctx():
            label += f"--{ctx.count}"
            if ctx.tool is not None:
                label += f"-t{ctx.tool}"
            if ctx.param is not None or ctx.undeclared:
                label += f"-p{len(self._names)}"
            if ctx.end:
                label += "-last" if ctx.last else "-end"
        self._names[key] = label  # provisionally: a recursive reference holds
        body = self.node(self.grammar.rules[name], ctx)
        if body is None:
            self._names[key] = None
            return None
        if ctx.end:
            # where the end changes nothing in the rule, the rule as it is elsewhere
            # (a regex inlines each rule it names: a copy would be written twice)
            inner = self.ref(name, replace(ctx, end=False, last=False))
            if isinstance(inner, RuleRef) and self.rules[inner.name] == body:
                self._names[key] = inner.name
                return inner
        self.rules[label] = body
        return RuleRef(label)

    # nodes

    def node(self, node: g.Node, ctx: _Ctx) -> Expr | None:
        key = (id(node), ctx)
        if key not in self._memo:
            self._memo[key] = self._node(node, ctx)
        return self._memo[key]

    def _node(self, node: g.Node, ctx: _Ctx) -> Expr | None:
        roles = self.roles(node)
        if "tool_call" not in roles:
            if ctx.count in (ONE, SOME):
                return None
            ctx = replace(ctx, count=ANY)
        if _EOF not in roles and not isinstance(node, g.Until):
            ctx = replace(ctx, end=False, last=False)
        if isinstance(node, g.Ref):
            return self.ref(node.name, ctx)
        if isinstance(node, g.Tag):
            return self.tag(node, ctx)
        if isinstance(node, g.Seq):
            return self.seq(node, ctx)
        if isinstance(node, g.Choice):
            return self.choice(node, ctx)
        if isinstance(node, g.Opt):
            found = self.member_list(node.item)
            if found is not None:  # a call object's members: not optional, the name is not
                return self.call_members(*found, ctx)
            item = self.node(node.item, ctx)
            if ctx.count in (ONE, SOME):
                return item
            return EMPTY if item is None else Optional_(item)
        if isinstance(node, g.Many):
            return self.many(node, ctx)
        if isinstance(node, g.Recover):
            return self.node(node.item, ctx)
        if ctx.count in (ONE, SOME):
            return None
        if isinstance(node, g.Eof):
            # the output may end here: only where the end follows (a call the end of the
            # output cuts off is not what a model should write)
            return EMPTY if node.stopped or ctx.end else None
        if isinstance(node, (g.Ahead, g.Cut, g.Const)):
            return EMPTY
        if isinstance(node, g.Lit):
            return Lit(node.text)
        if isinstance(node, g.Ws):
            return Ws()
        if isinstance(node, g.Until):
            stops = self.literal_stops(node.stops, ctx)
            text = Text(stops, bool(node.flags & g.UNTIL_MIN1), self.refused_first(node))
            if not ctx.last:
                return text
            cut = CutShort(stops)
            ended = seq([text, Optional_(cut)])
            return union([ended, cut]) if text.min1 else ended
        if isinstance(node, g.Chars):
            members = node.members()
            high = {b for b in members if b >= 0x80}
            if high and len(high) != 128:
                raise self.unsupported("a character set holding some bytes >= 0x80")
            return CharRun(members, node.min1, self.refused_first(node))
        if isinstance(node, g.Json):
            return self.json(node, ctx)
        raise self.unsupported(f"the node {node!r}")

    def per_spelling(self, node: g.Seq, lowered: Expr | None) -> Expr | None:
        """Spellings, then a text: the text after each spelling refuses what that
        spelling leaves of an earlier alternative's prefix (_prefix.exclusions), so the
        sequence is written once per spelling."""
        head = node.items[0] if node.items else None
        if not isinstance(head, g.Choice) or not isinstance(lowered, Seq):
            return lowered
        spellings = [a.text for a in head.alts if isinstance(a, g.Lit)]
        if not spellings or (id(node), spellings[0]) not in self.not_first:
            return lowered
        first, text, *rest = lowered.items
        if first != union([Lit(t) for t in spellings]) or not isinstance(text, (Text, CharRun)):
            return lowered
        alts = []
        for spelling in spellings:
            refused = tuple(self.pattern(p) for p in self.not_first[id(node), spelling])
            alts.append(Seq((Lit(spelling), replace(text, not_first=refused), *rest)))
        return union(alts)

    def refused_first(self, node: g.Node) -> tuple[Expr, ...]:
        """What a text or run may not begin with (_prefix.exclusions), lowered."""
        return tuple(self.pattern(p) for p in self.not_first.get(id(node), ()))

    def pattern(self, node: g.Node) -> Expr:
        """A prefix pattern: literals, whitespace, runs, sequences, choices, options."""
        if isinstance(node, g.Lit):
            return Lit(node.text)
        if isinstance(node, g.Ws):
            return Ws()
        if isinstance(node, g.Chars):
            return CharRun(node.members(), node.min1)
        if isinstance(node, g.Opt):
            return Optional_(self.pattern(node.item))
        if isinstance(node, g.Seq):
            return seq([self.pattern(i) for i in node.items]) or EMPTY
        assert isinstance(node, g.Choice)
        return union([self.pattern(a) for a in node.alts]) or EMPTY

    def json(self, node: g.Json, ctx: _Ctx) -> Expr | None:
        if node.dialect == "python":
            # a value no schema types: an undeclared parameter's, or one outside a call
            return self.literals.value(_KIND_SCHEMAS[node.kind])
        if node.kind == g.JSON_STRING:
            return JsonString(self._exclude.get(id(node), ()))
        if node.kind == g.JSON_OBJECT:
            return JsonValue({"type": "object"})
        return JsonValue({})

    def seq(self, node: g.Seq, ctx: _Ctx) -> Expr | None:
        main = self.per_spelling(node, self._seq_node(node, ctx))
        return union([main, *self.seq_ends(node, ctx)])

    def seq_ends(self, node: g.Seq, ctx: _Ctx) -> list[Expr | None]:
        """Where the output ends (ctx.last) and items that may match nothing close the
        sequence: the sequence up to each item before them, that item last (the output
        ends after it; the items after it match nothing).  An item is lowered as last
        only there, so that what it may leave open at the end (a text's marker cut
        short, a closer) is not left open before more output."""
        items = node.items
        if not ctx.last or ctx.count not in (ANY, ZERO):
            return []
        tail = _last_nonempty(items)
        first = tail
        while first > 0 and g.nullable(items[first], self.lowered_nullable, handlers=False):
            first -= 1
        ends: list[Expr | None] = []
        for k in range(first, tail):
            here = self.item(items, k, ctx)
            if here == self.item(items, k, replace(ctx, last=False)):
                continue  # the same as in the sequence, the items after it left empty
            before = [
                self.item(items, j, replace(ctx, end=ctx.end and j >= first, last=False))
                for j in range(k)
            ]
            ends.append(seq([*before, here]))
        return ends

    def _seq_node(self, node: g.Seq, ctx: _Ctx) -> Expr | None:
        items = node.items
        if ctx.param is None and not ctx.undeclared and ctx.tool is not None:
            has = [self.roles(i) & {"param_name", "param_value"} for i in items]
            names = any("param_name" in h for h in has)
            values = any("param_value" in h for h in has)
            if names and values and not any(len(h) == 2 for h in has):
                return self.per_param(node, ctx)
        inner = replace(ctx, end=False, last=False)
        # the end of the output may follow an item where all after it may match nothing,
        # and it is last where all after it can match nothing else
        last = len(items) - 1
        while last > 0 and g.nullable(items[last], self.nullable):
            last -= 1
        tail = _last_nonempty(items)

        def at(k: int, c: _Ctx) -> _Ctx:
            return replace(c, end=ctx.end and k >= last, last=ctx.last and k >= tail)

        if ctx.count in (ANY, ZERO):
            return seq([self.item(items, k, at(k, ctx)) for k in range(len(items))])
        # ONE / SOME: the calls come from one item; those before it hold none, those
        # after it none (ONE) or any (SOME)
        after: Count = ZERO if ctx.count == ONE else ANY
        alts = []
        for k, item in enumerate(items):
            if "tool_call" not in self.roles(item):
                continue
            before = [self.item(items, j, replace(inner, count=ZERO)) for j in range(k)]
            here = self.item(items, k, at(k, ctx))
            rest = [
                self.item(items, j, at(j, replace(ctx, count=after)))
                for j in range(k + 1, len(items))
            ]
            alts.append(seq([*before, here, *rest]))
        return union(alts)

    def item(self, items: Sequence[g.Node], k: int, ctx: _Ctx) -> Expr | None:
        """items[k] of a sequence.  The optional closer of a block of calls (opt(close)
        right after many(call), where each call commits at its opener) is required
        unless the output ends there: the parser's many() takes every call that comes, so
        what follows a block left open never begins with a call's opener, which a grammar
        written as a union cannot say; a block closed before more output says it."""
        node = items[k]
        if id(node) in self.closers and not ctx.last and ctx.count in (ANY, ZERO):
            assert isinstance(node, g.Opt)
            return self.node(node.item, ctx)
        return self.node(node, ctx)

    def member_list(self, node: g.Node) -> tuple[g.Choice, tuple[g.Node, ...]] | None:
        """The members of a JSON call object in any order, as json_call writes them (a
        member, then many(separator, member)), whose members hold the tool's name: the
        member choice and the separator's items; else None."""
        if not (isinstance(node, g.Seq) and len(node.items) == 2):
            return None
        member, more = node.items
        if not (isinstance(member, g.Choice) and isinstance(more, g.Many)):
            return None
        again = more.item
        if not (isinstance(again, g.Seq) and again.items and again.items[-1] is member):
            return None
        if not any("tool_name" in self.roles(alt) for alt in member.alts):
            return None
        return member, again.items[:-1]

    def call_members(
        self, member: g.Choice, separator: tuple[g.Node, ...], ctx: _Ctx
    ) -> Expr | None:
        """A call object's members as the event builder takes them: the name once, the
        arguments at most once, any other key any number of times, in any order (a call
        with no name, two names or two sets of arguments is invalid)."""
        kinds: dict[str, list[Expr | None]] = {"name": [], "args": [], "other": []}
        self.exclude_keys(member.alts)
        for alt in member.alts:
            roles = self.roles(alt)
            kind = "name" if "tool_name" in roles else "args" if "tool_args" in roles else "other"
            kinds[kind].append(self.node(alt, ctx))
        name, args, other = (union(kinds[k]) for k in ("name", "args", "other"))
        sep = seq([self.node(item, ctx) for item in separator])
        if name is None or sep is None:
            return None
        other_sep, sep_other = seq([other, sep]), seq([sep, other])
        before = EMPTY if other_sep is None else Repeat(other_sep, 0)
        after = EMPTY if sep_other is None else Repeat(sep_other, 0)
        # the others before, between and after the two written once each where the two
        # orders allow it: a regex writes every member out in full
        if args is None:
            return seq([before, name, after])
        then_args = seq([after, sep, args])
        assert then_args is not None  # each of them matches something
        name_first = seq([name, Optional_(then_args)])
        args_first = seq([args, after, sep, name])
        return seq([before, union([name_first, args_first]), after])

    def per_param(self, node: g.Seq, ctx: _Ctx) -> Expr | None:
        """A parameter per declared property, and one the schema does not declare where
        it allows others with no schema of their own: the parser reads an undeclared
        parameter as text (a string), whatever a schema for it says.  Parameters that
        differ only in their name (string parameters, say) are one sequence with a
        choice of names: a regex writes each value's expression out in full."""
        assert ctx.tool is not None
        props = self.tools[ctx.tool].parameters.get("properties")
        subs = [replace(ctx, param=p) for p in (props if isinstance(props, Mapping) else ())]
        if self.undeclared(ctx.tool):
            subs.append(replace(ctx, undeclared=True))
        lowered = [[self.node(i, sub) for i in node.items] for sub in subs]
        naming = [k for k, i in enumerate(node.items) if "param_name" in self.roles(i)]
        if len(naming) != 1:
            return union([seq(items) for items in lowered])
        (k,) = naming
        by_rest: list[tuple[list[Expr | None], list[Expr | None]]] = []  # schemas: no hash
        for items in lowered:
            rest = [*items[:k], *items[k + 1 :]]
            group = next((names for r, names in by_rest if r == rest), None)
            if group is None:
                by_rest.append((rest, [items[k]]))
            else:
                group.append(items[k])
        return union([seq([*rest[:k], union(names), *rest[k:]]) for rest, names in by_rest])

    def literal_stops(self, stops: tuple[g.Stop, ...], ctx: _Ctx) -> tuple[g.Stop, ...]:
        """The stops with each declared_param() lookahead spelled out for the call's tool:
        prefix, name and end of every parameter it declares (a lookahead without a
        prefix, which reads the name right after the marker: one plain stop per name).
        Where any name counts (no tool, or one that declares none): the prefix alone,
        or the marker as a plain stop; text the grammar writes then never holds what
        the parser might end it at (it forbids a little more, and writes nothing the
        parser reads otherwise)."""
        if not any(s.declared for s in stops):
            return stops
        props = None if ctx.tool is None else self.tools[ctx.tool].parameters.get("properties")
        names = [n.encode() for n in props] if isinstance(props, Mapping) else []
        out: list[g.Stop] = []
        for s in stops:
            if not s.declared:
                out.append(s)
                continue
            follow, bare = s.follow, []
            for d in s.declared:
                if d.prefix:
                    follow += tuple(d.prefix + n + d.end for n in names) or (d.prefix,)
                else:
                    bare += [g.Stop(s.marker + n + d.end, s.follow, (d,)) for n in names]
            if follow != s.follow or not bare:
                # the lookaheads kept: for to_lark
                out.append(g.Stop(s.marker, follow, tuple(d for d in s.declared if d.prefix)))
            out += bare
        return tuple(out)

    def undeclared(self, tool: int) -> bool:
        """Whether the tool's parameters may be others than its schema declares, with no
        schema of their own."""
        parameters = self.tools[tool].parameters
        if self.declared_ends and parameters.get("properties"):
            # the parser reads an undeclared parameter after a value as part of that
            # value (declared_param()): the export writes declared ones only
            return False
        extra = parameters.get("additionalProperties", True)
        return extra is True or extra == {}

    def exclude_keys(self, alts: Sequence[g.Node]) -> None:
        """An alternative that begins with any JSON string (an object's other keys) is
        not one of the keys that earlier alternatives spell out."""
        keys: list[bytes] = []
        for alt in alts:
            first = _first(alt)
            if isinstance(first, g.Json) and first.kind == g.JSON_STRING and keys:
                self._exclude[id(first)] = tuple(keys)
            if isinstance(first, g.Lit) and len(first.text) >= 2 and first.text[:1] == b'"':
                if first.text[-1:] == b'"':
                    keys.append(first.text)

    def choice(self, node: g.Choice, ctx: _Ctx) -> Expr | None:
        alts = []
        self.exclude_keys(node.alts)
        for alt in node.alts:
            if ctx.count == ZERO and not self.call_free(alt):
                # no calls: an alternative that holds none only by repeating its calls
                # no times is left out (a call block with no call in it would let the
                # calls through as text)
                continue
            alts.append(self.node(alt, ctx))
        return union(alts)

    def many(self, node: g.Many, ctx: _Ctx) -> Expr | None:
        least = 1 if node.at_least_one else 0
        if ctx.count in (ANY, ZERO):
            inner = replace(ctx, end=False, last=False)
            item = self.node(node.item, inner)
            if ctx.end:
                # the last time round may end the output (a text there may end with a
                # marker cut short, which the round itself does not show)
                ended = self.rounds(node, inner, least, ctx)
                if ended is not None:
                    return ended
                last = self.node(node.item, ctx)
                if last is not None and last != item:
                    return seq([EMPTY if item is None else Repeat(item, 0), Optional_(last)])
            if item is None:
                return EMPTY if least == 0 else None
            return self.rounds(node, inner, least) or Repeat(item, least)
        # ONE / SOME: no calls, then the first time round that holds any (one call, or
        # at least one: a block may hold several), then none (ONE) or any (SOME)
        inner = replace(ctx, end=False, last=False)
        zero = self.node(node.item, replace(inner, count=ZERO))
        first = self.node(node.item, inner)
        after = replace(inner, count=ZERO if ctx.count == ONE else ANY)
        rest = self.node(node.item, after)
        before: Expr = EMPTY
        if zero is not None:
            before = self.rounds(node, replace(inner, count=ZERO), 0) or Repeat(zero, 0)
        again: Expr = EMPTY
        if rest is not None:
            again = self.rounds(node, after, 0) or Repeat(rest, 0)
        if not ctx.end:
            return seq([before, first, again])
        # the last time round may end the output: the first, or one after it
        first_end = self.node(node.item, replace(ctx, end=True))
        rest_end = self.node(node.item, replace(after, end=True, last=ctx.last))
        if first_end == first and rest_end == rest:
            return seq([before, first, again])
        return union(
            [
                seq([before, first_end]),
                seq([before, first, again, rest_end]),
            ]
        )

    def rounds(self, node: g.Many, ctx: _Ctx, least: int, end: _Ctx | None = None) -> Expr | None:
        """A repetition whose rounds may be a text: no text right after a text, as the
        parser's text takes all it can (two texts in a row would let the second begin
        where the first refuses to, and make a union's parse ambiguous at every byte):
        text? (others text?)*.  None where no round is a text (one text, an
        alternative of the repeated choice or of a choice among them) or at least one
        round is required.  end: the context of the last time round, where the output
        may end after it."""
        rules = self.grammar.rules
        split = _text_rounds(node.item, rules)
        if split is None or least:
            return None
        text_node, parts = split
        text = self.node(text_node, ctx)
        if text is None:
            return None
        bare = [_bare_text(p, rules) for p in parts]
        other = [k for k, b in enumerate(bare) if b is not text_node]
        other_nodes = [parts[k] for k in other]
        others = union([self.node(o, ctx) for o in other_nodes])
        # where the output may end after the last time round: a text may end with a
        # marker cut short, and a round of the others may end it in a way of its own (a
        # block left open); both written once, after the rounds (a text's cut-short end,
        # or a cut-short text after the others)
        last: list[Expr | None] = []
        if end is not None and end.last and isinstance(text, Text):
            last.append(CutShort(text.stops))
        if end is not None and others is not None:
            others_end = union([self.node(o, end) for o in other_nodes])
            last += [a for a in alternatives(others_end) if a not in alternatives(others)]
        found = union(last)
        ending = EMPTY if found is None else Optional_(found)
        if others is None:
            return seq([Optional_(text), ending])
        # text? (others text?)*: each text written twice, the others once.  A literal
        # alone is followed by a text that may not begin with the rest of what an
        # earlier alternative commits to after that literal (```, then
        # `json\n[{"name":`, is a fenced list, not a fence and a text)
        refused = after_literals(bare, rules) if isinstance(text, Text) else {}
        plain = union([self.node(parts[k], ctx) for k in other if k not in refused])
        rounds = [None if plain is None else seq([plain, Optional_(text)])]
        for k, more in sorted(refused.items()):
            assert isinstance(text, Text)
            after = replace(text, not_first=(*text.not_first, *(self.pattern(d) for d in more)))
            rounds.append(seq([self.node(parts[k], ctx), Optional_(after)]))
        round_ = union(rounds)
        assert round_ is not None
        return seq([Optional_(text), Repeat(round_, 0), ending])

    # roles

    def tag(self, node: g.Tag, ctx: _Ctx) -> Expr | None:
        role = node.role
        if role == "tool_call":
            if ctx.count == ZERO:
                return None
            inner = replace(ctx, count=ANY)
            if ctx.tool is None and self.tools:
                calls = [replace(inner, tool=t) for t in range(len(self.tools))]
                return union([self.node(node.item, c) for c in calls])
            return self.node(node.item, inner)
        if role == "tool_name" and ctx.count in (ANY, ZERO):
            names = [self.tools[ctx.tool]] if ctx.tool is not None else self.tools
            return union(
                [
                    self.node(node.item, ctx) if t is ANY_TOOL else self.name(node, t.name.encode())
                    for t in names
                ]
            )
        if role == "tool_args" and node.decode == g.DECODE_JSON_STRING:
            return None  # arguments a string holds are read; the export writes the object
        if role == "tool_args" and ctx.count in (ANY, ZERO):
            item = node.item
            if isinstance(item, g.Json) and item.kind in (g.JSON_OBJECT, g.JSON_ANY):
                if ctx.tool is not None:
                    return JsonValue(self.tools[ctx.tool].parameters)
                if self.tools:
                    return JsonValue({"anyOf": [t.parameters for t in self.tools]})
        if (
            role == "param_name"
            and ctx.tool is not None
            and (ctx.param is not None or ctx.undeclared)
        ):
            return self.param_name(node, ctx)
        if role == "param_value" and ctx.param is not None and ctx.tool is not None:
            schema = self.tools[ctx.tool].parameters
            props = schema.get("properties") or {}
            if node.decode == g.DECODE_MINIMAX_M3 and ctx.param in props:
                return self.m3_value(props[ctx.param], self.node(node.item, ctx))
            if node.decode == g.DECODE_PYTHON and ctx.param in props:
                return self.literals.value(props[ctx.param], schema)
            typed = self.value(node, props.get(ctx.param))
            if typed is not None:
                return typed
        return self.node(node.item, ctx)

    def name(self, node: g.Tag, name: bytes) -> Expr | None:
        item = node.item
        if isinstance(item, g.Const):
            return EMPTY if item.text == name else None
        if node.decode == g.DECODE_JSON_STRING:
            return Lit(json.dumps(name.decode()).encode())
        return Lit(name)  # raw: the name as written, whatever pattern reads it

    def param_name(self, node: g.Tag, ctx: _Ctx) -> Expr | None:
        """A declared parameter's name (ctx.param), or an undeclared one's: text as the
        format writes a name, none of the declared ones (_not_words; None where there
        are some and the name is not such text).  Where the tool takes undeclared
        parameters, a declared name is spelled as _not_words spells names, a character
        a literal: a lexer that read `city` whole could not go back to `c` when `cityx`,
        an undeclared name, comes."""
        assert ctx.tool is not None
        text = self.node(node.item, ctx)
        plain = isinstance(text, Text) and not text.not_first
        runs = _identifier_runs(text)
        spelled = (plain or runs is not None) and self.undeclared(ctx.tool)
        if ctx.param is not None:
            if spelled:
                return seq([Lit(ch.encode()) for ch in ctx.param]) or EMPTY
            return self.name(node, ctx.param.encode())
        declared = list(self.tools[ctx.tool].parameters.get("properties") or {})
        if not declared:
            return text  # any name the format writes
        if plain and isinstance(text, Text):
            return _not_words(text, declared)
        return None if runs is None else _not_identifiers(*runs, declared)

    def value(self, node: g.Tag, schema: Any) -> Expr | None:
        """A parameter value typed by its property's schema, or None to keep the
        format's own expression."""
        item = node.item
        if node.decode in (
            g.DECODE_PYTHON,
            g.DECODE_GEMMA,
            g.DECODE_FUNCTIONGEMMA,
            g.DECODE_MINIMAX_M3,
            g.DECODE_STRING,
        ):  # the value's own notation says what it is
            return None
        kind = _prop_type(schema)
        if isinstance(item, g.Json):
            if isinstance(schema, Mapping):
                return JsonValue(schema)
            return None
        if not isinstance(item, g.Until) or kind is None or kind == "string":
            return None
        # the parser strips the whitespace around a typed value; numbers as the schema
        # bounds them, booleans in any case (TRUE), null as JSON spells it
        if kind in ("integer", "number") and isinstance(schema, Mapping):
            return Seq((Ws(), JsonValue(schema), Ws()))
        if kind in _SCALAR_TYPES:
            return Seq((Ws(), Pattern(kind), Ws()))
        if kind in ("object", "array") and isinstance(schema, Mapping):
            return Seq((Ws(), JsonValue(schema), Ws()))
        return None

    def m3_value(self, spec: Any, untyped: Expr | None, depth: int = 0) -> Expr | None:
        """A MiniMax-M3 value (decode="minimax_m3") typed by the schema at its place, as
        the value's decoder reads it (reference/m3value.py): a place whose types allow a
        string is its raw text; a number, integer, boolean or null place is that value,
        whitespace around it; an object place is its properties' child tags, an array
        place <item> children (whitespace between them; none is an empty one), either
        also as JSON text.  A string place, and where the schema does not say (no
        properties or items, both object and array, a container among other types),
        is the format's own nesting, `untyped`.  Stricter than the decoder: an object
        takes no key its properties do not list."""
        types = schema_types(spec)
        if "string" in types or not types or depth >= M3_MAX_DEPTH:
            return untyped  # raw text, nested-looking tags included
        if all(t in _SCALAR_TYPES for t in types):
            return union(
                [
                    Seq((Ws(), JsonValue(spec) if t in ("integer", "number") else Pattern(t), Ws()))
                    for t in types
                ]
            )
        children: list[Expr | None] = []
        if types == ("object",) and isinstance(spec.get("properties"), Mapping):
            for key, child in spec["properties"].items():
                value = self.m3_value(child, untyped, depth + 1)
                if value is not None:
                    tags = (f"{M3_NS}<{key}>".encode(), f"{M3_NS}</{key}>".encode())
                    children.append(Seq((Lit(tags[0]), value, Lit(tags[1]))))
        elif types == ("array",) and isinstance(spec.get("items"), Mapping):
            value = self.m3_value(spec["items"], untyped, depth + 1)
            if value is not None:
                tags = (f"{M3_NS}<item>".encode(), f"{M3_NS}</item>".encode())
                children.append(Seq((Lit(tags[0]), value, Lit(tags[1]))))
        else:
            return untyped
        tagged = seq([Repeat(Seq((Ws(), union(children) or EMPTY)), 0), Ws()])
        if not children:
            tagged = Ws()
        return union([tagged, Seq((Ws(), JsonValue(spec), Ws()))])


# the schema of an untyped json("python") node, by its kind
_KIND_SCHEMAS: dict[int, Mapping[str, Any]] = {
    g.JSON_ANY: {},
    g.JSON_STRING: {"type": "string"},
    g.JSON_OBJECT: {"type": "object"},
}


def _other_than(
    trie: dict[str, Any],
    nexts: Callable[[dict[str, Any], int], list[str]],
    leave: Callable[[dict[str, Any], int], frozenset[int]],
    tail: Expr,
    empty: bool,
) -> Expr | None:
    """A name other than each of the words of a trie: a beginning of a word, then a
    character the words do not go on with there (one of leave(place, depth)), then any
    tail; or a beginning of a word that is no word (the empty one where empty allows).
    Both are the trie, the tail written once after it; nexts(place, depth): the
    characters the name may go on with in the trie."""

    def leaving(place: dict[str, Any], depth: int) -> Expr | None:
        alts = [
            seq([Lit(ch.encode()), leaving(place[ch], depth + 1)]) for ch in nexts(place, depth)
        ]
        left = leave(place, depth)
        return union([*alts, CharRun(left, True) if left else None])

    def ending(place: dict[str, Any], depth: int) -> Expr | None:
        alts = [seq([Lit(ch.encode()), ending(place[ch], depth + 1)]) for ch in nexts(place, depth)]
        if "" not in place and (depth > 0 or empty):
            alts.append(EMPTY)
        return union(alts)

    left = leaving(trie, 0)
    return union([None if left is None else seq([left, tail]), ending(trie, 0)])


def _not_words(text: Text, words: Sequence[str]) -> Expr | None:
    """The text, other than each of the words (_other_than).  The first character of a
    stop's marker neither leaves the trie nor goes on in it (a name that takes one there
    is refused), so that no marker has begun where the text starts; and where a word
    goes on with a non-ASCII character, no other one leaves the trie there (a character
    run stands for all of them or none)."""
    firsts = {s.marker.decode("utf-8")[0] for s in text.stops}

    def nexts(place: dict[str, Any], depth: int) -> list[str]:
        return sorted(ch for ch in place if ch and ch not in firsts)

    def leave(place: dict[str, Any], depth: int) -> frozenset[int]:
        taken = {ch for ch in place if ch} | firsts
        out = set(range(0x80)) - {ord(ch) for ch in taken if ord(ch) < 0x80}
        if not any(ord(ch) >= 0x80 for ch in taken):
            out.add(0x80)  # any non-ASCII character
        return frozenset(out)

    return _other_than(word_trie(words), nexts, leave, Text(text.stops, False), not text.min1)


def _identifier_runs(e: Expr | None) -> tuple[CharRun, CharRun] | None:
    """A name written as a run of its first characters and a run of the others, which
    hold the first ones (a Python identifier: [A-Za-z_][A-Za-z0-9_]*), as the two runs;
    else None."""
    if not isinstance(e, Seq) or len(e.items) != 2:
        return None
    first, rest = e.items
    if not (isinstance(first, CharRun) and isinstance(rest, CharRun)):
        return None
    if first.not_first or rest.not_first or not first.min1 or rest.min1:
        return None
    return (first, rest) if first.members <= rest.members else None


def _not_identifiers(first: CharRun, rest: CharRun, words: Sequence[str]) -> Expr | None:
    """A name of the two runs (_identifier_runs) other than each of the words
    (_other_than): its first character from the first run, the others from the rest."""

    def nexts(place: dict[str, Any], depth: int) -> list[str]:
        allowed = first.members if depth == 0 else rest.members
        return sorted(ch for ch in place if ch and ord(ch) in allowed)

    def leave(place: dict[str, Any], depth: int) -> frozenset[int]:
        allowed = first.members if depth == 0 else rest.members
        return allowed - {ord(ch) for ch in place if ch}

    trie = word_trie(w for w in words if w.isascii())
    return _other_than(trie, nexts, leave, CharRun(rest.members, False), False)


def has_calls(fmt: Format) -> bool:
    """Whether the format's grammar holds tool calls at all."""
    lowerer = Lowerer(fmt.export_grammar, [], f"format {fmt.name!r}")
    return any("tool_call" in roles for roles in lowerer.rule_roles.values())


def lower_format(
    fmt: Format,
    tools: Sequence[Mapping[str, Any]],
    tool_choice: ToolChoice = "auto",
    parallel_tool_calls: bool = True,
    reasoning_in_prompt: bool | None = None,
    any_tool: bool = False,
    literal_depth: int | None = None,
) -> Lowered:
    """Lower a Format's grammar (the entry the stream would start from) for these tools;
    any_tool: and a call of any other tool (ANY_TOOL); literal_depth: as for Lowerer."""
    allowed, counts = allowed_tools(tools, tool_choice, parallel_tool_calls)
    if any_tool:
        allowed = [*allowed, ANY_TOOL]
    lowerer = Lowerer(fmt.export_grammar, allowed, f"format {fmt.name!r}", literal_depth)
    lowered = lowerer.lower(fmt.export_grammar.entries[fmt.entry(reasoning_in_prompt)], counts)
    lowered.markers = tuple(fmt.markers)
    return lowered
