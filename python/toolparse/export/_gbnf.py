"""The intermediate form written in GBNF: llama.cpp's grammar syntax, which xgrammar reads
too (the structural tag's grammar bodies).

GBNF has no lexer and no negation: text that holds none of a set of stops is written as
the automaton that recognises it (one rule per beginning of a stop read so far), and each
JSON Schema becomes rules of its own (properties in their declared order, the required
ones always, the others optionally; keywords this writer does not know fall back to any
JSON value of the stated type).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import grammar as g
from . import _ir as ir
from . import _ranges
from ._schema import PYTHON_STRING, either_order, json_literal
from ._text import by_length, text_automaton

_JSON_RULES = {
    "json-value": (
        'json-object | json-array | json-string | json-number | "true" | "false" | "null"'
    ),
    "json-object": (
        '"{" ws ( json-string ws ":" ws json-value ws ( "," ws json-string ws ":" ws '
        'json-value ws )* )? "}"'
    ),
    "json-array": '"[" ws ( json-value ws ( "," ws json-value ws )* )? "]"',
    "json-string": '"\\"" json-char* "\\""',
    "json-char": '[^"\\\\\\x00-\\x1f] | "\\\\" ( ["\\\\/bfnrt] | "u" [0-9a-fA-F]{4} )',
    "json-number": '"-"? ( "0" | [1-9] [0-9]* ) ( "." [0-9]+ )? ( [eE] [-+]? [0-9]+ )?',
    "json-integer": '"-"? ( "0" | [1-9] [0-9]* )',
    "json-boolean": '"true" | "false"',
    "json-null": '"null"',
    "ws": "[ \\t\\r\\n]*",
}
_PATTERNS = {
    "integer": "ws json-integer ws",
    "number": "ws json-number ws",
    "boolean": "ws ( [tT] [rR] [uU] [eE] | [fF] [aA] [lL] [sS] [eE] ) ws",
    "null": 'ws "null" ws',
}
# what follows the backslash of an escape in a Python string literal (PYTHON_STRING,
# as _regex.PATTERNS writes it): a hex escape with all its digits, or any other character
_PYTHON_ESCAPE = (
    '[^xuU] | "x" [0-9a-fA-F]{2} | "u" [0-9a-fA-F]{4} '
    '| "U" ( "000" [0-9a-fA-F] | "0010" ) [0-9a-fA-F]{4}'
)


def _string(text: str) -> str:
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _run_class(members: frozenset[int]) -> str:
    """A class of the characters (bytes >= 0x80: any non-ASCII character), in ranges, or
    as the ASCII characters it leaves out where it holds every non-ASCII one."""
    ascii_ = {b for b in members if b < 0x80}
    if any(b >= 0x80 for b in members):
        missing = set(range(0x80)) - ascii_
        if missing:
            return f"[^{_class_ranges(missing)}]"
        return "( [\\x00-\\x7f] | [^\\x00-\\x7f] )"
    return f"[{_class_ranges(ascii_)}]"


def _class_ranges(codes: set[int]) -> str:
    """Class members for these ASCII codes, runs of three or more as ranges."""
    out = []
    for first, last in ir.code_runs(codes):
        low, top = _class_char(chr(first)), _class_char(chr(last))
        out.append(low if first == last else low + top if last == first + 1 else f"{low}-{top}")
    return "".join(out)


def _class_char(ch: str) -> str:
    if ch in "]\\^-[":
        return f"\\x{ord(ch):02x}"
    if ch == "\n":
        return "\\n"
    if ch == "\r":
        return "\\r"
    if ch == "\t":
        return "\\t"
    if ord(ch) < 0x20:
        return f"\\x{ord(ch):02x}"
    return ch


@dataclass
class _Writer:
    rules: dict[str, str] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)  # definition -> rule name

    def rule(self, stem: str, definition: str) -> str:
        if definition not in self.names:
            name = f"{stem}-{len(self.names)}"
            self.names[definition] = name
            self.rules[name] = definition
        return self.names[definition]

    # JSON Schema

    def schema(self, schema: Any) -> str:
        if not isinstance(schema, Mapping):
            return "json-value"
        if "const" in schema:
            return self.expr(json_literal(schema["const"]))
        if "enum" in schema:
            alts = [self.expr(json_literal(v)) for v in schema["enum"]]
            return self.rule("enum", " | ".join(alts))
        for key in ("anyOf", "oneOf"):
            if isinstance(schema.get(key), list):
                alts = [self.schema(s) for s in schema[key]]
                return self.rule("any-of", " | ".join(alts))
        kind = schema.get("type")
        if isinstance(kind, list):
            alts = [self.schema({**schema, "type": k}) for k in kind]
            return self.rule("types", " | ".join(alts))
        if kind == "object" or "properties" in schema:
            return self.object(schema)
        if kind == "array":
            item = self.schema(schema.get("items", {}))
            return self.rule("array", f'"[" ws ( {item} ws ( "," ws {item} ws )* )? "]"')
        if kind == "integer" and (bounds := _ranges.integer_bounds(schema)) != (None, None):
            spellings = _ranges.integer_spellings(*bounds)
            if not spellings:
                raise NotImplementedError(f"an integer schema with no integer in range: {schema}")
            return self.rule("integer-range", _ranges.gbnf(spellings))
        simple = {
            "string": "json-string",
            "integer": "json-integer",
            "number": "json-number",
            "boolean": "json-boolean",
            "null": "json-null",
        }
        return simple.get(str(kind), "json-value")

    def object(self, schema: Mapping[str, Any]) -> str:
        props = schema.get("properties")
        if not isinstance(props, Mapping) or not props:
            if schema.get("additionalProperties") is False:
                return '"{" ws "}"'
            return "json-object"
        required = set(schema.get("required") or [])
        members = [
            (name, f'{self.expr(json_literal(name))} ws ":" ws {self.schema(sub)}')
            for name, sub in props.items()
        ]
        # the properties in their declared order; each optional one may be left out
        # (its leading comma with it)
        body = ""
        for name, member in reversed(members):
            if not body:
                body = member if name in required else f"( {member} )?"
                first_optional = name not in required
                continue
            if name in required:
                body = (
                    f'{member} ws ( "," ws {body} )?'
                    if first_optional
                    else (f'{member} ws "," ws {body}')
                )
                first_optional = False
            else:
                body = f'( {member} ws "," ws {body} | {member} | {body} )'
        return self.rule("object", f'"{{" ws {body} ws "}}"')

    # text holding no stop

    def text(self, stops: Sequence[g.Stop], min1: bool, cut_short: bool = False) -> str:
        """Text holding none of the stops; cut_short: instead, a beginning of a stop that
        the end of the output cuts short (ir.CutShort): the same automaton from its
        start to any other state, never back."""
        key = f"text:{stops!r}:{min1}:{cut_short}"
        if key not in self.names:  # the same text's rules, written once
            self.names[key] = self._text(stops, min1, cut_short)
        return self.names[key]

    def _text(self, stops: Sequence[g.Stop], min1: bool, cut_short: bool) -> str:
        auto = text_automaton(stops)
        base = f"text-{len(self.names)}"
        state = [f"{base}-{i}" for i in range(len(auto.moves))]
        bodies = []
        for moves in auto.moves:
            # characters grouped by the state they move to; all others move to state 0
            targets: dict[int, list[str]] = {}
            for ch, target in moves.items():
                if target:
                    targets.setdefault(target, []).append(ch)
            held = sorted(auto.alphabet - {c for c, t in moves.items() if t == 0})
            alts = [
                f"[{''.join(_class_char(c) for c in chars)}] {state[target]}"
                for target, chars in targets.items()
            ]
            alts.append(f"[^{''.join(_class_char(c) for c in held)}] {state[0]}")
            bodies.append(alts)
        for i, alts in enumerate(bodies):
            if cut_short:
                # the other characters move back to the start: left out
                alts = alts[:-1]
                self.rules[state[i]] = " | ".join(alts if i == 0 else [*alts, '""'])
                continue
            # text may end only where no stop has begun
            self.rules[state[i]] = " | ".join([*alts, '""'] if i == 0 else alts)
        if cut_short:
            return state[0]
        if not min1:
            return state[0]
        # at least one character: the first one from the same automaton
        return self.rule("text1", " | ".join(bodies[0]))

    def string_except(self, words: Sequence[str]) -> str:
        """A JSON string token other than these (unescaped) contents."""
        key = f"strx:{sorted(words)}"
        if key in self.names:  # the same words' rules, written once
            return f'( "\\"" {self.names[key]} )'
        prefixes = by_length(w[:k] for w in words for k in range(len(w) + 1))
        base = f"strx-{len(self.names)}"
        state = {p: f"{base}-{i}" for i, p in enumerate(prefixes)}
        self.names[key] = state[""]
        free = f"{base}-free"
        self.rules[free] = 'json-char* "\\""'
        for p in prefixes:
            nexts = sorted({w[len(p)] for w in words if w.startswith(p) and len(w) > len(p)})
            alts = [f"[{_class_char(c)}] {state[p + c]}" for c in nexts]
            taken = "".join(_class_char(c) for c in nexts)
            alts.append(f'[^"\\\\\\x00-\\x1f{taken}] {free}')
            alts.append(f'"\\\\" ( ["\\\\/bfnrt] | "u" [0-9a-fA-F]{{4}} ) {free}')
            if p not in words:
                alts.append('"\\""')
            self.rules[state[p]] = " | ".join(alts)
        return f'( "\\"" {state[""]} )'

    def python_string(self) -> str:
        """A Python string literal in either quote: any character but the quote, a
        backslash or a line break, or an escape."""
        escape = self.rule("python-escape", _PYTHON_ESCAPE)
        alts = [
            f'{_string(q)} ( [^{_class_char(q)}\\x5c\\n\\r] | "\\\\" {escape} )* {_string(q)}'
            for q in ("'", '"')
        ]
        return self.rule("python-string", " | ".join(alts))

    def expr(self, e: ir.Expr) -> str:
        if isinstance(e, ir.Lit):
            return _string(e.text.decode("utf-8"))
        if isinstance(e, ir.Ws):
            return "ws"
        if isinstance(e, ir.Text):
            return self.text(e.stops, e.min1)
        if isinstance(e, ir.CutShort):
            return self.text(e.stops, True, cut_short=True)
        if isinstance(e, ir.CharRun):
            return f"{_run_class(e.members)}{'+' if e.min1 else '*'}"
        if isinstance(e, ir.JsonValue):
            return self.schema(either_order(e.schema))
        if isinstance(e, ir.JsonString):
            return (
                self.string_except([json.loads(x) for x in e.exclude])
                if e.exclude
                else ("json-string")
            )
        if e == PYTHON_STRING:
            return self.python_string()
        if isinstance(e, ir.Pattern):
            return f"( {_PATTERNS[e.kind]} )"
        if isinstance(e, ir.Seq):
            if not e.items:
                return '""'
            return "( " + " ".join(self.expr(i) for i in e.items) + " )"
        if isinstance(e, ir.Alt):
            return "( " + " | ".join(self.expr(a) for a in e.alts) + " )"
        if isinstance(e, ir.Repeat):
            return f"( {self.expr(e.item)} ){'+' if e.min else '*'}"
        if isinstance(e, ir.Optional_):
            return f"( {self.expr(e.item)} )?"
        if isinstance(e, ir.RuleRef):
            return _rule(e.name)
        raise TypeError(f"not an expression: {e!r}")


def render(lowered: ir.Lowered) -> str:
    writer = _Writer()
    body = {name: writer.expr(e) for name, e in lowered.rules.items()}
    lines = [f"root ::= {_rule(lowered.start)}"]
    lines += [f"{_rule(name)} ::= {text}" for name, text in body.items()]
    lines += [f"{name} ::= {text}" for name, text in writer.rules.items()]
    lines += [f"{name} ::= {text}" for name, text in _JSON_RULES.items()]
    return "\n".join(lines) + "\n"


def _rule(name: str) -> str:
    """A lowered rule's GBNF name (apart from the writer's own rules)."""
    return "f-" + name
