"""Export a format to llguidance's Lark dialect."""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from .. import grammar as g
from . import _ir as ir
from ._regex import (
    JSON_STRING,
    PATTERNS,
    WS,
    WS_CHARS,
    TextStops,
    char_class,
    escape,
    pattern_first,
    pattern_nullable,
    pattern_regex,
    run_steps,
    text_chunks,
    text_stops,
)


def _leading_literal(e: ir.Expr) -> bytes | None:
    if isinstance(e, ir.Lit):
        return e.text
    if isinstance(e, ir.Seq) and e.items and isinstance(e.items[0], ir.Lit):
        return e.items[0].text
    return None


def _split_prefixed(alts: Sequence[ir.Expr], special: Collection[bytes]) -> list[ir.Expr]:
    """The branches of a choice, a leading literal that another branch's leading literal
    begins split after that one.  llguidance's lexer is greedy and does not back up: with
    the branches ` to=` TEXT and ` to=self...`, the input ` to=search` dies at its `a`
    inside the longer literal.  Written as ` to=` then `self...`, both readings go on past
    the shorter literal."""
    leads = {lead for a in alts if (lead := _leading_literal(a)) is not None}
    out: list[ir.Expr] = []
    for a in alts:
        lead = _leading_literal(a)
        shorter = [p for p in leads if lead and p != lead and lead.startswith(p)]
        if lead is None or not shorter or lead in special:
            out.append(a)
            continue
        prefix = max(shorter, key=len)
        rest = a.items[1:] if isinstance(a, ir.Seq) else ()
        out.append(ir.Seq((ir.Lit(prefix), ir.Lit(lead[len(prefix) :]), *rest)))
    return out


def _refused(patterns: Sequence[ir.Expr]) -> str:
    return "(?:" + "|".join(pattern_regex(p) for p in patterns) + ")"


class _Writer:
    def __init__(self, special_tokens: Collection[str]) -> None:
        self.special = {t.encode() for t in special_tokens}
        self.terminals: dict[str, str] = {}  # definition -> name
        self.rules: dict[str, str] = {}  # name -> body, rules of the writer's own
        self._texts: dict[tuple[tuple[str, ...], bool], str] = {}
        self._runs: dict[tuple[frozenset[int], tuple[ir.Expr, ...], bool], str] = {}

    def terminal(self, definition: str, stem: str) -> str:
        if definition not in self.terminals:
            self.terminals[definition] = f"{stem}_{len(self.terminals)}"
        return self.terminals[definition]

    def expr(self, e: ir.Expr, top: bool = False) -> str:
        if isinstance(e, ir.Lit):
            if e.text in self.special:
                return "<" + e.text.decode()[1:-1] + ">" if _bracketed(e.text) else _string(e.text)
            return _string(e.text)
        if isinstance(e, ir.Ws):
            return self.terminal(f"/{WS}+/", "WS") + "?"
        if isinstance(e, ir.Text):
            return self.text(e)
        if isinstance(e, ir.CharRun):
            if e.not_first:
                return self.run_excluding(e)
            name = self.run(e.members)
            return name if e.min1 else name + "?"
        if isinstance(e, ir.JsonValue):
            schema = {**ir.either_order(e.schema), "x-guidance": _JSON_OPTIONS}
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
            text = " ".join(self.expr(i) for i in items)
            return text if top or len(items) == 1 else f"({text})"
        if isinstance(e, ir.Alt):
            alts = _split_prefixed(e.alts, self.special)
            text = " | ".join(self.expr(a, top=True) for a in alts)
            return text if top else f"({text})"
        if isinstance(e, ir.Repeat):
            return f"({self.expr(e.item, top=True)}){'+' if e.min else '*'}"
        if isinstance(e, ir.Optional_):
            return f"({self.expr(e.item, top=True)})?"
        if isinstance(e, ir.RuleRef):
            return e.name
        raise TypeError(f"not an expression: {e!r}")

    def text(self, e: ir.Text) -> str:
        stops = text_stops(e.stops)
        if stops.follow and any(a[0] in WS_CHARS for a in (*stops.markers, *stops.atoms)):
            # a marker that begins with whitespace would split the whitespace before a
            # follow text: take the follow stops as plain ones
            stops = text_stops(g.Stop(s.marker) for s in e.stops)
        texts = (*stops.markers, *stops.atoms)
        lex = text_chunks(texts)
        # what the text may not begin with (an earlier alternative's): the first lexeme
        # is then a plain run that does not begin with it, where it begins with no stop
        # (one that may begin with a stop's first character is left out: the lexer
        # splits the text there)
        stop_firsts = {t[0] for t in texts}
        not_first = [n for n in e.not_first if not pattern_first(n) & stop_firsts]
        first_plain = None
        if not_first and not stops.follow:
            refused = _refused(not_first)
            first_plain = self.terminal(f"/{lex['plain']}/ & ~/{refused}(?s:.*)/", "PLAIN")
        if "chunk" not in lex:
            plain = first_plain or self.terminal("/" + lex["plain"] + "/", "PLAIN")
            return f"{plain}{'' if e.min1 else '?'}"
        chunk = lex["chunk"]
        if "open" in lex:
            chunk += f" & ~({self.terminal(lex['open'], 'OPEN')} /(?s:.+)/)"
        chunk = self.terminal(chunk, "CHUNK")
        # a prefix of a marker is text only where a character that begins a marker
        # comes next (within the text): a greedy lexer ends the prefix there, and
        # nothing after it can then complete the marker
        lead = f"{self.terminal(lex['prefix'], 'PREFIX')}* " if "prefix" in lex else ""
        if not stops.follow:
            plain = self.terminal("/" + lex["plain"] + "/", "PLAIN")
            if first_plain:
                run = f"({first_plain} | {lead}{chunk}) ({plain} | {lead}{chunk})*"
                return run if e.min1 else f"({run})?"
            return f"({plain} | {lead}{chunk}){'+' if e.min1 else '*'}"
        return self.follow_text(e, stops, lex["plain"], lead, chunk)

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


def render(lowered: ir.Lowered, special_tokens: Collection[str] = ()) -> str:
    writer = _Writer(special_tokens)
    lines = [f"{name}: {writer.expr(body, top=True)}" for name, body in lowered.rules.items()]
    lines += [f"{name}: {body}" for name, body in writer.rules.items()]
    lines += [f"{name}: {definition}" for definition, name in writer.terminals.items()]
    return "\n".join(lines) + "\n"


def to_lark(
    fmt: Any,
    tools: Sequence[Mapping[str, Any]],
    *,
    tool_choice: ir.ToolChoice = "auto",
    parallel_tool_calls: bool = True,
    reasoning_in_prompt: bool | None = None,
    special_tokens: Collection[str] = (),
) -> str:
    return render(
        ir.lower_format(fmt, tools, tool_choice, parallel_tool_calls, reasoning_in_prompt),
        special_tokens,
    )
