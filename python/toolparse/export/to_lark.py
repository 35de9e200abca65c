"""Export a format to llguidance's Lark dialect."""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .. import grammar as g
from ..formats import Format
from . import _ir as ir
from ._lexemes import (
    JSON_STRING,
    PATTERNS,
    WS,
    char_class,
    escape,
    pattern_regex,
    text_chunks,
)
from ._lower import lower_format
from ._patterns import goes_on, grouped_steps, pattern_first, pattern_nullable, run_steps
from ._regex import lexeme_writer as regex_writer
from ._request import ToolChoice
from ._schema import either_order
from ._text import WS_CHARS, TextStops, beginnings, text_stops

# the largest lexeme a call after a marker that is also text is written as (tried_first,
# and alone()'s call of any tool), in characters of regex: llguidance builds a lexer
# configuration for the grammar's lexemes at the start, and a list of calls whose objects
# take any other key (xlam's fenced list, with eleven tools) runs to hundreds of kilobytes
_TRIED_SIZE = 100_000


def _runs(lexeme: ir.Expr) -> tuple[ir.CharRun, ...]:
    """A refusing step's run lexeme as its runs (a run alone, or a name's two); none for
    a literal or whitespace."""
    if isinstance(lexeme, ir.CharRun):
        return (lexeme,)
    if isinstance(lexeme, ir.Seq) and all(isinstance(i, ir.CharRun) for i in lexeme.items):
        return tuple(i for i in lexeme.items if isinstance(i, ir.CharRun))
    return ()


def _leading_literal(e: ir.Expr) -> bytes | None:
    if isinstance(e, ir.Lit):
        return e.text
    if isinstance(e, ir.Seq) and e.items and isinstance(e.items[0], ir.Lit):
        return e.items[0].text
    return None


def _may_begin(items: Sequence[ir.Expr], byte: int) -> bool:
    """Whether a sequence's match may begin with the byte (True where not known: it
    may be empty, so that what follows it decides)."""
    for item in items:
        if isinstance(item, ir.Lit):
            if item.text:
                return item.text[0] == byte
        elif isinstance(item, ir.Ws):
            if chr(byte) in WS_CHARS:
                return True
        elif isinstance(item, ir.JsonValue):
            return byte in b'{["-0123456789tfn' or chr(byte) in WS_CHARS
        else:
            return True
    return True


Branches = dict[bytes, list[Sequence[ir.Expr]]]


def _branches(alts: Sequence[ir.Expr]) -> Branches:
    """The alternatives that begin with a literal, as what follows it, by the literal."""
    found: Branches = {}
    for a in alts:
        if (lead := _leading_literal(a)) is not None:
            _merge(found, {lead: [a.items[1:] if isinstance(a, ir.Seq) else ()]})
    return found


def _rule_branches(rules: Mapping[str, ir.Expr]) -> dict[str, Branches]:
    """The branches of each grammar rule's lowered forms together (`header`,
    `header--zero`, `header--some`), by the rule's name: with a call required, the
    rounds before the call (`header--zero`) and the call's round (`header--some`) begin
    at the same place, and a literal of one that begins a longer one of the other
    splits the longer one as within one choice."""
    found: dict[str, Branches] = {}
    for name, body in rules.items():
        alts = body.alts if isinstance(body, ir.Alt) else (body,)
        _merge(found.setdefault(name.split("--")[0], {}), _branches(alts))
    return found


def _merge(branches: Branches, more: Branches) -> None:
    for literal, rests in more.items():
        known = branches.setdefault(literal, [])
        known += [r for r in rests if r not in known]


def _split_prefixed(
    alts: Sequence[ir.Expr], special: Collection[bytes], others: Branches | None = None
) -> list[ir.Expr]:
    """The branches of a choice, a leading literal that another branch's leading literal
    begins split after that one where the shorter branch may go on with the longer one's
    next byte.  llguidance's lexer is greedy and does not back up: with the branches
    ` to=` TEXT and ` to=self...`, the input ` to=search` dies at its `a` inside the
    longer literal.  Written as ` to=` then `self...`, both readings go on past the
    shorter literal.  Where the shorter branch cannot go on so (`get_weather` then a
    newline, `get_weather_forecast`), the longer literal stays whole: split, its first
    part would end where a competing text lexeme goes on, and the greedy lexer would
    drop it.  others: more branches that begin where these do."""
    branches = _branches(alts)
    _merge(branches, others or {})
    out: list[ir.Expr] = []
    for a in alts:
        lead = _leading_literal(a)
        shorter = [
            p
            for p, rests in branches.items()
            if lead
            and p != lead
            and lead.startswith(p)
            and any(_may_begin(rest, lead[len(p)]) for rest in rests)
        ]
        if lead is None or not shorter or lead in special:
            out.append(a)
            continue
        prefix = max(shorter, key=len)
        rest = a.items[1:] if isinstance(a, ir.Seq) else ()
        out.append(ir.Seq((ir.Lit(prefix), ir.Lit(lead[len(prefix) :]), *rest)))
    return out


def _text_markers(lowered: ir.Lowered) -> set[bytes]:
    """The markers a text stops at that the grammar also takes alone, as text (where what
    would follow the marker does not)."""
    stops: set[bytes] = set()
    alone: set[bytes] = set()
    pending: list[ir.Expr] = list(lowered.rules.values())
    while pending:
        e = pending.pop()
        if isinstance(e, ir.Text):
            stops.update(s.marker for s in e.stops)
        elif isinstance(e, ir.Alt):
            for a in e.alts:
                if isinstance(a, ir.RuleRef):
                    a = lowered.rules[a.name]
                if isinstance(a, ir.Lit):
                    alone.add(a.text)
        pending.extend(ir.children(e))
    return stops & alone


Split = tuple[ir.Expr | None, ir.Expr | None]


def _split_on_literal(
    e: ir.Expr, lit: bytes, rules: Mapping[str, ir.Expr], seen: frozenset[str] = frozenset()
) -> Split:
    """e's branches that begin with the literal, as what follows it there, and the
    others as they are (None for none); a sequence that begins with a choice or a
    rule is not split."""
    if isinstance(e, ir.Lit):
        return (ir.EMPTY, None) if e.text == lit else (None, e)
    if isinstance(e, ir.RuleRef):
        if e.name in seen:
            return None, e
        rest, _ = found = _split_on_literal(rules[e.name], lit, rules, seen | {e.name})
        return found if rest is not None else (None, e)
    if isinstance(e, ir.Seq) and e.items and isinstance(e.items[0], ir.Lit):
        # only a sequence that begins with the literal itself: what follows a choice
        # that begins with it is no part of the lexeme
        return (ir.Seq(e.items[1:]), None) if e.items[0].text == lit else (None, e)
    if isinstance(e, ir.Alt):
        # the literal alone stays a branch of its own (the marker as text)
        split = [
            (None, a) if a == ir.Lit(lit) else _split_on_literal(a, lit, rules, seen)
            for a in e.alts
        ]
        return ir.union([r for r, _ in split]), ir.union([o for _, o in split])
    return None, e


def _slashes(regex: str) -> str:
    """The regex with its unescaped slashes escaped, to stand between Lark's slashes."""
    out: list[str] = []
    escaped = False
    for ch in regex:
        out.append("\\/" if ch == "/" and not escaped else ch)
        escaped = ch == "\\" and not escaped
    return "".join(out)


def _holds_json(e: ir.Expr, rules: Mapping[str, ir.Expr]) -> bool:
    seen: set[str] = set()
    pending = [e]
    while pending:
        e = pending.pop()
        if isinstance(e, ir.JsonValue):
            return True
        if isinstance(e, ir.RuleRef):
            if e.name not in seen:
                seen.add(e.name)
                pending.append(rules[e.name])
        else:
            pending.extend(ir.children(e))
    return False


def _cut_short(markers: Sequence[str]) -> str:
    """A lexeme of text that ends a text where the output ends with the beginning of a
    marker: a beginning of a marker that holds no marker whole."""
    begins = beginnings(markers, longest_first=True)
    whole = "|".join(escape(m.encode()) for m in markers)
    return f"/{'|'.join(escape(b.encode()) for b in begins)}/ & ~/(?s:.*)(?:{whole})(?s:.*)/"


def _holds_name(pattern: ir.Expr) -> bool:
    """Whether a prefix pattern holds a name: a run that goes on in the next one."""
    if isinstance(pattern, ir.Seq):
        pairs = zip(pattern.items, pattern.items[1:], strict=False)
        return any(goes_on(a, b) for a, b in pairs) or any(_holds_name(i) for i in pattern.items)
    return any(_holds_name(c) for c in ir.children(pattern))


def _begins_with_ws(pattern: ir.Expr) -> bool:
    return isinstance(pattern, ir.Seq) and bool(pattern.items) and pattern.items[0] == ir.Ws()


def _refused(patterns: Sequence[ir.Expr]) -> str:
    return "(?:" + "|".join(pattern_regex(p) for p in patterns) + ")"


@dataclass(frozen=True)
class _TextParts:
    """A text's lexemes: its plain run (a regex), the prefix lexemes that may lead a
    chunk ("" or "PREFIX_n* "), the chunk's definition, and the stops' texts."""

    plain: str
    lead: str
    chunk: str
    stops: frozenset[str]

    @property
    def stop_firsts(self) -> frozenset[str]:
        return frozenset(t[0] for t in self.stops)

    def plain_holds(self, text: bytes) -> bool:
        """Whether the plain run may hold these bytes: ASCII, no stop's first character."""
        return all(b < 0x80 and chr(b) not in self.stop_firsts for b in text)


class _Writer:
    def __init__(
        self,
        lowered: ir.Lowered,
        special_tokens: Collection[str],
        every_call: ir.Lowered | None = None,
    ) -> None:
        """every_call: the format lowered with every tool, any other (ir.ANY_TOOL) and
        any number of calls, for the calls the tool choice or the list leaves out (None:
        lowered stands for it)."""
        self.lowered = lowered
        self.special = {t.encode() for t in special_tokens}
        self.text_markers = _text_markers(lowered)
        self.every_call = every_call or lowered
        self._forbidden: dict[bytes, str | None] = {}
        self.terminals: dict[str, str] = {}  # definition -> name
        self.rules: dict[str, str] = {}  # name -> body, rules of the writer's own
        self._texts: dict[tuple[tuple[str, ...], bool], str] = {}
        self._runs: dict[tuple[frozenset[int], tuple[ir.Expr, ...], bool], str] = {}
        self._refusing: dict[tuple[Any, ...], str | None] = {}

    def terminal(self, definition: str, stem: str) -> str:
        if definition not in self.terminals:
            self.terminals[definition] = f"{stem}_{len(self.terminals)}"
        return self.terminals[definition]

    def expr(self, e: ir.Expr, top: bool = False, after_ws: bool = False) -> str:
        """e in Lark; after_ws: it comes right after a whitespace lexeme."""
        if isinstance(e, ir.Lit):
            if e.text in self.special:
                return "<" + e.text.decode()[1:-1] + ">" if _bracketed(e.text) else _string(e.text)
            return _string(e.text)
        if isinstance(e, ir.Ws):
            return self.terminal(f"/{WS}+/", "WS") + "?"
        if isinstance(e, ir.Text):
            return self.text(e, after_ws)
        if isinstance(e, ir.CutShort):
            return self.cut_short(e)
        if isinstance(e, ir.CharRun):
            if e.not_first:
                return self.run_excluding(e)
            name = self.run(e.members)
            return name if e.min1 else name + "?"
        if isinstance(e, ir.JsonValue):
            schema = {**either_order(e.schema), "x-guidance": _JSON_OPTIONS}
            return "%json " + json.dumps(schema, ensure_ascii=False)
        if isinstance(e, ir.JsonString):
            definition = f"/{JSON_STRING}/"
            if e.exclude:
                definition += " & ~/" + "|".join(escape(x) for x in e.exclude) + "/"
            return self.terminal(definition, "STRING")
        if isinstance(e, ir.Pattern):
            return self.terminal(f"/{PATTERNS[e.kind]}/", e.kind.upper())
        if isinstance(e, ir.Seq):
            if not e.items:
                return '""'
            items = _after_text(e.items)
            text = " ".join(
                self.expr(item, after_ws=isinstance(before, ir.Ws) or (k == 0 and after_ws))
                for k, (before, item) in enumerate(zip((None, *items), items, strict=False))
            )
            return text if top or len(items) == 1 else f"({text})"
        if isinstance(e, ir.Alt):
            alts = _split_prefixed(e.alts, self.special)
            text = " | ".join(
                self.tried_first(a) or self.alone(a) or self.expr(a, top=True, after_ws=after_ws)
                for a in alts
            )
            return text if top else f"({text})"
        if isinstance(e, ir.Repeat):
            return f"({self.expr(e.item, top=True)}){'+' if e.min else '*'}"
        if isinstance(e, ir.Optional_):
            return f"({self.expr(e.item, top=True, after_ws=after_ws)})?"
        if isinstance(e, ir.RuleRef):
            return e.name
        raise TypeError(f"not an expression: {e!r}")

    def tried_first(self, e: ir.Expr) -> str | None:
        """What begins with a marker that is also text where what follows it is not this
        (as ```json is where no call object follows) and goes on with JSON (a call's
        arguments), as that marker and then one lexeme (and e's other branches as they
        are); None where e is not such, or its rest is not regular.  The parser tries it
        before the text; llguidance's lexer keeps the longest lexeme, so the rest must
        be one: written in its own lexemes, the text's longer plain lexeme after the
        marker would be kept instead, and a whole call read as text."""
        if isinstance(e, ir.Lit):
            return None
        for lit in sorted(self.text_markers):
            rest, others = _split_on_literal(e, lit, self.lowered.rules)
            if rest is not None and _holds_json(rest, self.lowered.rules):
                break
        else:
            return None
        lexeme = self.lexeme(self.lowered, rest, "TRIED")
        if lexeme is None:
            return None
        tried = f"{_string(lit)} {lexeme}"
        return tried if others is None else f"{tried} | {self.expr(others, top=True)}"

    def alone(self, e: ir.Expr) -> str | None:
        """Such a marker alone, as text, and the same marker before a call of any tool,
        which goes nowhere: where a call follows the marker the parser reads the call
        (an unknown tool's as an error), so the text reading must die there, also where
        the tool choice or the list leaves that call out (its lexeme is the longest, as
        in tried_first).  None where e is not such a marker."""
        if not isinstance(e, ir.Lit) or e.text not in self.text_markers:
            return None
        if e.text not in self._forbidden:
            rules = self.every_call.rules
            rests = [
                rest
                for body in rules.values()
                for rest in [_split_on_literal(body, e.text, rules)[0]]
                if rest is not None and _holds_json(rest, rules)
            ]
            found = ir.union(rests)
            lexeme = None if found is None else self.lexeme(self.every_call, found, "CALL")
            self._forbidden[e.text] = lexeme
        lexeme = self._forbidden[e.text]
        if lexeme is None:
            return None
        never = self.terminal("/a/ & /b/", "NEVER")
        return f"{_string(e.text)} | {_string(e.text)} {lexeme} {never}"

    def lexeme(self, lowered: ir.Lowered, e: ir.Expr, stem: str) -> str | None:
        """e as one lexeme (a terminal of its regex), or None where it is not regular or
        too large."""
        try:
            found = regex_writer(lowered).expr(e)
        except NotImplementedError:
            return None
        if found is None or len(found.text) > _TRIED_SIZE:
            return None
        return self.terminal(f"/{_slashes(found.text)}/", stem)

    def text(self, e: ir.Text, after_ws: bool = False) -> str:
        stops = text_stops(_lexeme_follows(e.stops))
        if stops.follow and any(a[0] in WS_CHARS for a in (*stops.markers, *stops.atoms)):
            # a marker that begins with whitespace would split the whitespace before a
            # follow text: take the follow stops as plain ones
            stops = text_stops(g.Stop(s.marker) for s in e.stops)
        texts = (*stops.markers, *stops.atoms)
        lex = text_chunks(texts)
        stop_firsts = {t[0] for t in texts}
        lead, chunk_definition = self.chunk_lexemes(lex)
        if chunk_definition and not stops.follow:
            # a head that begins with a stop's first character, or holds a name (the
            # plain lexeme's refusal cannot end where the name does): in its own lexemes
            if any(pattern_first(n) & stop_firsts or _holds_name(n) for n in e.not_first):
                parts = _TextParts(lex["plain"], lead, chunk_definition, frozenset(texts))
                found = self.refusing(parts, e.not_first, after_ws, leaf=True, first=True)
                if found is not None:
                    return found if e.min1 else f"({found})?"
        # what the text may not begin with (an earlier alternative's): the first lexeme
        # is then a plain run that does not begin with it, where it begins with no stop
        # (one that may begin with a stop's first character is left out where it does
        # not split as refusing() writes it: the lexer splits the text there)
        not_first = [n for n in e.not_first if not pattern_first(n) & stop_firsts]
        first_plain = None
        if not_first and not stops.follow:
            refused = _refused(not_first)
            first = f"/{lex['plain']}/ & ~/{refused}(?s:.*)/"
            if after_ws and all(_begins_with_ws(n) for n in not_first):
                # the text comes right after a whitespace lexeme and refuses only what
                # whitespace and then a prefix begin: it need not begin with whitespace,
                # which the lexeme before it takes (a text lexeme that did would go on
                # past that one, and past a literal that begins there, and the greedy
                # lexer would keep only the text)
                first += f" & ~/{WS}(?s:.*)/"
            first_plain = self.terminal(first, "PLAIN")
        if not chunk_definition:
            plain = first_plain or self.terminal("/" + lex["plain"] + "/", "PLAIN")
            return f"{plain}{'' if e.min1 else '?'}"
        chunk = self.terminal(chunk_definition, "CHUNK")
        if stops.follow:
            return self.follow_text(e, stops, lex["plain"], lead, chunk)
        plain = self.terminal("/" + lex["plain"] + "/", "PLAIN")
        if first_plain:
            # a plain lexeme never follows the first one: the text as a language
            # would otherwise begin with what the first refuses, split in two
            # (`get_weather` then `\n{...}`), and the greedy lexer splits it so
            # where a call's literal ends
            rest = f"{lead}{chunk} ({plain} | {lead}{chunk})*"
            run = f"({first_plain} ({rest})? | {rest})"
        else:
            run = f"({plain} | {lead}{chunk})+"
        return run if e.min1 else f"({run})?"

    def chunk_lexemes(self, lex: Mapping[str, str]) -> tuple[str, str]:
        """A text's prefix lexemes as they lead a chunk ("" or "PREFIX_n* "), and its
        chunk's definition ("" where it has none), from text_chunks()."""
        chunk = lex.get("chunk", "")
        if "open" in lex:
            chunk += f" & ~({self.terminal(lex['open'], 'OPEN')} /(?s:.+)/)"
        # a prefix of a marker is text only where a character that begins a marker
        # comes next (within the text): a greedy lexer ends the prefix there, and
        # nothing after it can then complete the marker
        lead = f"{self.terminal(lex['prefix'], 'PREFIX')}* " if "prefix" in lex else ""
        return lead, chunk

    def refusing(
        self,
        parts: _TextParts,
        patterns: Sequence[ir.Expr],
        nows: bool,
        leaf: bool,
        first: bool = False,
    ) -> str | None:
        """A rule for text that begins with none of the patterns, written in the
        patterns' own lexemes: each first literal or whitespace, then a text that does
        not begin with what must follow it; and, leaf, a text whose first lexeme begins
        with none of them.  A pattern may begin with a head, a character that also
        begins a stop (a bare list's `[`, where `[TOOL_CALLS]` is a stop): the text's
        chunk from there would go on past the literal (`[{` past `[`) and the greedy
        lexer would keep only the text, so the first chunk may not go on with what may
        follow the head, and the text takes the head as the same literal.  nows: the
        text does not begin with whitespace (a whitespace lexeme just ended); first:
        the text's beginning (empty only as the caller allows).  None where the
        patterns do not split so; "" where nothing may follow."""
        key = (parts, tuple(patterns), nows, leaf, first)
        if key in self._refusing:
            return self._refusing[key]
        steps = grouped_steps(patterns, nows, runs=True)
        if steps is None:
            return None
        name = f"text-refusing-{len(self._refusing)}"
        self._refusing[key] = name
        alts: list[str] = []
        plain_refused: list[bytes] = []
        class_refused: list[str] = []  # character classes the plain run may not begin with
        chunk_refused: list[str] = []
        longer: list[str] = []  # heads of more than one character
        for lexeme, rests in steps.items():
            ends = any(pattern_nullable(r) for r in rests)  # the text may not go on past it
            after: str | None
            if isinstance(lexeme, ir.Ws):
                after = "" if ends else self.refusing(parts, rests, True, leaf=True)
            elif _runs(lexeme):
                after = self.run_head(parts, _runs(lexeme), rests, ends, class_refused)
            elif not isinstance(lexeme, ir.Lit):
                after = None
            elif any(t.encode() in lexeme.text for t in parts.stops):
                continue  # the text never holds it
            elif parts.plain_holds(lexeme.text):
                plain_refused.append(lexeme.text)
                after = "" if ends else self.refusing(parts, rests, False, leaf=True)
            elif len(lexeme.text) > 1 and parts.plain_holds(lexeme.text[1:]):
                # the first chunk counts it as one more stop (`<|plugin|>`: `<|plu` and
                # a character that leaves it is a chunk, `<|plugin|>` is none), so the
                # literal outlives every chunk that begins it
                longer.append(lexeme.text.decode())
                after = "" if ends else self.refusing(parts, rests, False, leaf=True)
            else:
                after = self.head(parts, lexeme.text, rests, chunk_refused)
            if after is None:
                self._refusing[key] = None
                return None
            if after:
                alts.append(f"{self.step_lexeme(lexeme)} {after}")
        run_firsts = {b for x in steps for r in _runs(x)[:1] for b in r.members}
        if any(a != b and b.startswith(a) for a in plain_refused for b in plain_refused) or any(
            x[0] in run_firsts for x in plain_refused
        ):
            self._refusing[key] = None
            return None  # the greedy lexer cannot decide between them
        if leaf:
            nows = nows or ir.Ws() in steps
            refused = [escape(x) for x in plain_refused] + class_refused
            alts += self.refusing_leaf(parts, refused, chunk_refused, longer, nows)
            if not first:
                alts.append('""')
        self._refusing[key] = name if alts else ""
        if alts:
            self.rules[name] = " | ".join(alts)
        return self._refusing[key]

    def run_head(
        self,
        parts: _TextParts,
        runs: tuple[ir.CharRun, ...],
        rests: Sequence[ir.Expr],
        ends: bool,
        class_refused: list[str],
    ) -> str | None:
        """What follows a run (a name's two runs) that begins a refused pattern, the
        plain run's refusal of its first characters added to class_refused: a text
        that begins with the run is the run as one lexeme, then a text that begins with
        none of what follows it nor goes on with the run's characters (the greedy lexer
        took them all).  None where the plain run cannot hold the run's characters."""
        if not all(parts.plain_holds(bytes([b])) for r in runs for b in r.members):
            return None
        class_refused.append(char_class(runs[0].members))
        if ends:
            return ""
        more = ir.CharRun(runs[-1].members, True)
        return self.refusing(parts, [*rests, more], False, leaf=True)

    def step_lexeme(self, lexeme: ir.Expr) -> str:
        """A refusing text's first lexeme: a literal, whitespace, or a run (a name's two
        runs as one terminal)."""
        runs = _runs(lexeme)
        if not runs:
            return self.expr(lexeme).rstrip("?")
        spelled = "".join(char_class(r.members) + ("+" if r.min1 else "*") for r in runs)
        return self.terminal(f"/{spelled}/", "CHARS")

    def head(
        self, parts: _TextParts, text: bytes, rests: Sequence[ir.Expr], chunk_refused: list[str]
    ) -> str | None:
        """What follows a head of one character in a refusing text, the first chunk's
        refusal added to chunk_refused; None where it does not split so (a stop's first
        character inside a longer literal, the head alone refused, or what follows it
        could go on a stop or begin one)."""
        if len(text) != 1 or any(pattern_nullable(r) for r in rests):
            return None
        ch = chr(text[0])
        after = set().union(*(pattern_first(r) for r in rests))
        goes_on = {t[1] for t in parts.stops if t[0] == ch and len(t) > 1}
        if after & (parts.stop_firsts | goes_on | {"\x80"}):
            return None
        chunk_refused.append(escape(text) + char_class(ord(c) for c in after))
        return self.refusing(parts, rests, False, leaf=False)

    def refusing_leaf(
        self,
        parts: _TextParts,
        plain_refused: Sequence[str],
        chunk_refused: Sequence[str],
        longer: Sequence[str],
        nows: bool,
    ) -> list[str]:
        """A non-empty text whose first plain lexeme begins with none of plain_refused
        (regexes; nor whitespace, nows) and whose first chunk with none of chunk_refused
        nor of the longer heads."""
        plain = self.terminal(f"/{parts.plain}/", "PLAIN")
        chunk = self.terminal(parts.chunk, "CHUNK")
        more = f"({plain} | {parts.lead}{chunk})*"
        refused = [*plain_refused, *([WS] if nows else [])]
        first_plain = plain
        if refused:
            first_plain = self.terminal(
                f"/{parts.plain}/ & ~/({'|'.join(refused)})(?s:.*)/", "PLAIN"
            )
        # a plain lexeme never follows the first one (see text)
        alts = [f"{first_plain} ({parts.lead}{chunk} {more})?"]
        if not chunk_refused and not longer:
            return [*alts, f"{parts.lead}{chunk} {more}"]
        lead, first = parts.lead, parts.chunk
        if longer:
            lead, first = self.chunk_lexemes(text_chunks((*sorted(parts.stops), *longer)))
        if chunk_refused:
            first += f" & ~/({'|'.join(chunk_refused)})(?s:.*)/"
        alts.append(f"{self.terminal(first, 'CHUNK')} {more}")
        if lead:
            # a beginning of a marker first: the chunk after it is not first, nor a
            # beginning after it (which may be one of a longer head: `<|plu<|plugin|>`)
            alts.append(f"{lead.rstrip('* ')} {parts.lead}{chunk} {more}")
        if longer:
            # the text may be a beginning of a longer head and nothing more (before a
            # stop, or at the end), which no chunk is
            begins = beginnings(longer)
            alts.append(self.terminal(f"/{'|'.join(escape(b.encode()) for b in begins)}/", "BEGIN"))
        return alts

    def cut_short(self, e: ir.CutShort) -> str:
        """Prefixes of the markers, then one lexeme of any beginning of a marker, that
        the greedy lexer keeps at the end where a marker's literal could still go on (a
        run of beginnings would outlive the text's chunk lexeme where the text goes on:
        `<tool_c<tool_c/`)."""
        stops = text_stops(e.stops)
        texts = (*stops.markers, *stops.atoms)
        lex = text_chunks(texts)
        lead = f"{self.terminal(lex['prefix'], 'PREFIX')}* " if "prefix" in lex else ""
        return f"({lead}{self.terminal(_cut_short(texts), 'CUT')})"

    def run(self, members: frozenset[int]) -> str:
        """A run of the characters, as a terminal."""
        return self.terminal(f"/{char_class(members)}+/", "CHARS")

    def run_excluding(self, e: ir.CharRun) -> str:
        """A run that begins with none of e.not_first, written in the patterns' own
        lexemes: the run's characters, or one of the patterns' first literal or
        whitespace and then a run that does not begin with what must follow it.  A run
        that is one lexeme and refuses the patterns itself would be taken by the greedy
        lexer past the point where a call's literal lexeme ends, and die there."""
        alts = self._run_steps(e.members, e.not_first, nows=False)
        if alts is None:  # not in lexemes: the run as it is
            name = self.run(e.members)
            return name if e.min1 else name + "?"
        body = " | ".join(alts) if alts else '""'
        return f"({body})" if e.min1 else f"({body})?"

    def _run_steps(
        self, members: frozenset[int], patterns: Sequence[ir.Expr], nows: bool
    ) -> list[str] | None:
        """The non-empty alternatives of such a run; nows: it does not begin with
        whitespace (a whitespace lexeme just ended)."""
        steps = run_steps(members, patterns, nows)
        if steps is None:
            return None
        lits = [x.text for x in steps if isinstance(x, ir.Lit)]
        refused = [escape(x) for x in lits]
        if nows or ir.Ws() in steps:
            refused.append(WS)
        run = f"/{char_class(members)}+/"
        if refused:
            run += f" & ~/({'|'.join(refused)})(?s:.*)/"
        alts = [self.terminal(run, "CHARS")]
        for lexeme, rests in steps.items():
            if any(pattern_nullable(r) for r in rests):
                continue  # the run may not begin with this lexeme at all
            after_ws = isinstance(lexeme, ir.Ws)
            key = (members, tuple(rests), after_ws)
            if key not in self._runs:
                name = f"run-{len(self._runs)}"
                self._runs[key] = name
                more = self._run_steps(members, rests, after_ws)
                if more is None:
                    more = [self.run(members)]
                self.rules[name] = " | ".join(more) + ' | ""' if more else '""'
            first = self.expr(lexeme).rstrip("?")
            alts.append(f"{first} {self._runs[key]}")
        return alts

    def follow_text(self, e: ir.Text, stops: TextStops, plain: str, lead: str, chunk: str) -> str:
        """Text whose stops count only where a follow text comes next: the markers and
        follow texts are literal lexemes of the text (the same lexemes as the stop that
        ends it, so the lexer need not decide between them), and after a marker and
        optional whitespace come none of its follow texts."""
        key = (tuple(repr(s) for s in e.stops), e.min1)
        if key in self._texts:
            return self._texts[key]
        stem = f"text-{len(self._texts)}"
        ws = self.terminal(f"/{WS}+/", "WS")
        # a run of other characters: whitespace alone is `ws`, as after a marker it may
        # be the whitespace before a follow text
        word = self.terminal(f"/{plain}/ & ~/{WS}+/", "PLAIN")
        markers = [m for m, _ in stops.follow]
        # a marker moves to the state after it; the follow texts are text
        texts = [_string(a.encode()) for a in stops.atoms if a not in markers]
        led = f"{lead}({' | '.join([chunk, *texts])})" if lead else ""
        after = [f"{lead}{_string(m.encode())} {stem}-m{k}" for k, m in enumerate(markers)]
        for k, (_, follows) in enumerate(stops.follow):
            others = [
                _string(a.encode()) for a in stops.atoms if a not in follows and a not in markers
            ]
            # right after the marker (and whitespace): a prefix, then anything; or
            # anything but one of its follow texts
            nexts = [chunk, word, *others]
            if lead:
                nexts.append(f"{lead.replace('*', '+')}({' | '.join([chunk, *texts])})")
            # the text does not end after the marker (and whitespace): what comes next
            # (another text, in a repetition) might be one of its follow texts
            steps = [f"({' | '.join(nexts)}) {stem}-a", *after]
            self.rules[f"{stem}-m{k}"] = " | ".join([*steps, f"{ws} {stem}-w{k}"])
            self.rules[f"{stem}-w{k}"] = " | ".join(steps)
        run = f"({' | '.join([ws, word, *([led] if led else [chunk, *texts])])})"
        self.rules[f"{stem}-a"] = f"{run}* ({' | '.join(after)})?"
        if e.min1:
            self.rules[f"{stem}-1"] = f"{run}+ ({' | '.join(after)})? | {' | '.join(after)}"
        name = f"{stem}-1" if e.min1 else f"{stem}-a"
        self._texts[key] = name
        return name


def _lexeme_follows(stops: Sequence[g.Stop]) -> tuple[g.Stop, ...]:
    """The stops with a declared parameter's spelled-out follow texts cut back to their
    prefix, and without the stops that spell out a declared parameter in full: a follow
    text or marker is a lexeme of the text, the same as what follows the stop in the
    grammar, and a parameter's name is a lexeme of its own.  A text then never holds
    the prefix after the marker, whatever the name (a little less than the parser
    reads), and may hold a declared parameter's opening (which the parser reads as a
    missing closing marker: an error)."""
    out = []
    for s in stops:
        if not s.declared:
            out.append(s)
            continue
        prefixes = [d for d in s.declared if d.prefix]
        if not prefixes:
            continue
        kept = [
            f
            for f in s.follow
            if not any(f.startswith(d.prefix) and f.endswith(d.end) for d in prefixes)
        ]
        out.append(g.Stop(s.marker, (*kept, *dict.fromkeys(d.prefix for d in prefixes))))
    return tuple(out)


# any \uXXXX escape in strings; keywords llguidance does not implement are ignored
_JSON_OPTIONS = {"json_allow_general_unicode_escapes": True, "lenient": True}


def _after_text(items: tuple[ir.Expr, ...]) -> tuple[ir.Expr, ...]:
    """Leave out the stop alternatives that are whitespace and another alternative
    (``"\n</parameter>" | "</parameter>"``) after a text that may itself hold that
    whitespace: the output is the same, and the lexer would otherwise have to decide
    between the whitespace and the longer literal more than one byte back."""
    out = list(items)
    for k in range(len(out) - 1):
        text, stop = out[k], out[k + 1]
        if not isinstance(text, ir.Text) or not isinstance(stop, ir.Alt):
            continue
        if not all(isinstance(a, ir.Lit) for a in stop.alts):
            continue
        lits = {a.text for a in stop.alts if isinstance(a, ir.Lit)}
        kept = tuple(
            a
            for a in stop.alts
            if not (
                isinstance(a, ir.Lit)
                and a.text[:1] in (b" ", b"\t", b"\r", b"\n")
                and a.text.lstrip(WS_CHARS.encode()) in lits
            )
        )
        if kept != stop.alts:
            out[k + 1] = kept[0] if len(kept) == 1 else ir.Alt(kept)
    return tuple(out)


def _bracketed(text: bytes) -> bool:
    return text.startswith(b"<") and text.endswith(b">") and len(text) > 2


def _string(text: bytes) -> str:
    return json.dumps(text.decode("utf-8"), ensure_ascii=False)


def render(
    lowered: ir.Lowered, special_tokens: Collection[str] = (), every_call: ir.Lowered | None = None
) -> str:
    writer = _Writer(lowered, special_tokens, every_call)
    families = _rule_branches(lowered.rules)
    lines = []
    for name, body in lowered.rules.items():
        if isinstance(body, ir.Alt):
            others = families[name.split("--")[0]]
            body = ir.Alt(tuple(_split_prefixed(body.alts, writer.special, others)))
        text = writer.tried_first(body) or writer.alone(body) or writer.expr(body, top=True)
        lines.append(f"{name}: {text}")
    lines += [f"{name}: {body}" for name, body in writer.rules.items()]
    lines += [f"{name}: {definition}" for definition, name in writer.terminals.items()]
    return "\n".join(lines) + "\n"


def to_lark(
    fmt: Format,
    tools: Sequence[Mapping[str, Any]],
    *,
    tool_choice: ToolChoice = "auto",
    parallel_tool_calls: bool = True,
    reasoning_in_prompt: bool | None = None,
    special_tokens: Collection[str] = (),
) -> str:
    lowered = lower_format(fmt, tools, tool_choice, parallel_tool_calls, reasoning_in_prompt)
    every_call = lower_format(fmt, tools, "auto", True, reasoning_in_prompt, any_tool=True)
    return render(lowered, special_tokens, every_call)
