"""Export a format to llguidance's Lark dialect."""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from . import _ir as ir
from ._regex import JSON_STRING, PATTERNS, WS, char_class, escape, text_lexemes


class _Writer:
    def __init__(self, special_tokens: Collection[str]) -> None:
        self.special = {t.encode() for t in special_tokens}
        self.terminals: dict[str, str] = {}  # definition -> name

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
            first, plain, starts, whole = text_lexemes(e.stops)
            alts = [self.terminal(f"/{plain}/", "PLAIN")]
            if starts:
                ends_open = f"~/(?s:.*)({starts})/"
                opened = self.terminal(f"/[{first}](?s:.*)/ & {ends_open}", "OPEN")
                alts.append(
                    self.terminal(
                        f"/[{first}](?s:.*)/ & ~/(?s:.*)({whole})(?s:.*)/ & {ends_open}"
                        f" & ~({opened} /(?s:.+)/)",
                        "CHUNK",
                    )
                )
            else:
                alts.append(self.terminal(f"/[{first}]/", "CHUNK"))
            return f"({' | '.join(alts)}){'+' if e.min1 else '*'}"
        if isinstance(e, ir.CharRun):
            cls = char_class(e.members)
            name = self.terminal(f"/{cls}+/", "CHARS")
            return name if e.min1 else name + "?"
        if isinstance(e, ir.JsonValue):
            schema = {**e.schema, "x-guidance": _JSON_OPTIONS}
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
            text = " ".join(self.expr(i) for i in e.items)
            return text if top or len(e.items) == 1 else f"({text})"
        if isinstance(e, ir.Alt):
            text = " | ".join(self.expr(a, top=True) for a in e.alts)
            return text if top else f"({text})"
        if isinstance(e, ir.Repeat):
            return f"({self.expr(e.item, top=True)}){'+' if e.min else '*'}"
        if isinstance(e, ir.Optional_):
            return f"({self.expr(e.item, top=True)})?"
        if isinstance(e, ir.RuleRef):
            return e.name
        raise TypeError(f"not an expression: {e!r}")


# any \uXXXX escape in strings; keywords llguidance does not implement are ignored
_JSON_OPTIONS = {"json_allow_general_unicode_escapes": True, "lenient": True}


def _bracketed(text: bytes) -> bool:
    return text.startswith(b"<") and text.endswith(b">") and len(text) > 2


def _string(text: bytes) -> str:
    return json.dumps(text.decode("utf-8"), ensure_ascii=False)


def render(lowered: ir.Lowered, special_tokens: Collection[str] = ()) -> str:
    writer = _Writer(special_tokens)
    lines = [f"{name}: {writer.expr(body, top=True)}" for name, body in lowered.rules.items()]
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
