"""Where a call of a tool begins and ends, where the call is its tool name and one JSON
value of arguments between fixed texts; and the text a call is triggered at.  The
structural tag's JSON Schema tags and the GBNF export's lazy-grammar triggers are both
read here.

The grammar of an output that holds exactly one call of the tool is searched for the
shortest way through it, and the literal text before and after the arguments becomes the
begin and end (optional whitespace is left out, the first of alternative spellings is
taken); the format's own parser must read a call so written back as that call.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..formats import Format
from ..tools import Tool
from . import _ir as ir
from ._lower import Lowerer, has_calls
from ._request import ONE, allowed_tools

# a way through an expression: (text before the arguments, text after them or None when
# the way holds no arguments)
_Way = tuple[str, str | None]
_LIMIT = 32  # ways kept per expression


class _Search:
    def __init__(self, lowered: ir.Lowered, args: ir.JsonValue, name: str) -> None:
        self.rules = lowered.rules
        self.args = args
        self.name = name
        self.active: set[str] = set()
        self.memo: dict[str, list[_Way]] = {}

    def ways(self, e: ir.Expr) -> list[_Way]:
        if isinstance(e, ir.Lit):
            return [(e.text.decode("utf-8"), None)]
        if isinstance(e, ir.Ws):
            return [("", None), ("\n", None)]
        if isinstance(e, ir.JsonValue):
            return [("", "")] if e == self.args else []
        if isinstance(e, (ir.Text, ir.CutShort, ir.CharRun, ir.JsonString, ir.Pattern)):
            return []
        if isinstance(e, ir.Optional_):
            return [("", None), *self.ways(e.item)][:_LIMIT]
        if isinstance(e, ir.Repeat):
            once = self.ways(e.item)
            return ([("", None)] if e.min == 0 else []) + once[:_LIMIT]
        if isinstance(e, ir.Alt):
            out: list[_Way] = []
            for a in e.alts:
                out += self.ways(a)
            return out[:_LIMIT]
        if isinstance(e, ir.Seq):
            acc: list[_Way] = [("", None)]
            for item in e.items:
                nxt: list[_Way] = []
                for b1, a1 in acc:
                    for b2, a2 in self.ways(item):
                        if a1 is None:
                            nxt.append((b1 + b2, a2))
                        elif a2 is None:
                            nxt.append((b1, a1 + b2))
                if not nxt:
                    return []
                # keep a few ways with the arguments after the name, and a few without
                with_args = [w for w in nxt if w[1] is not None]
                with_args.sort(key=lambda w: (self.name not in w[0], len(w[1] or "")))
                # vary the text before the arguments first: keep two ends for each
                seen: dict[str, int] = {}
                kept = []
                for w in with_args:
                    seen[w[0]] = seen.get(w[0], 0) + 1
                    if seen[w[0]] <= 2:
                        kept.append(w)
                with_args = kept[: _LIMIT // 2]
                without = [w for w in nxt if w[1] is None][: _LIMIT // 2]
                acc = with_args + without
            return acc
        if isinstance(e, ir.RuleRef):
            if e.name in self.memo:
                return self.memo[e.name]
            if e.name in self.active:
                return []
            self.active.add(e.name)
            found = self.ways(self.rules[e.name])
            self.active.discard(e.name)
            self.memo[e.name] = found
            return found
        raise TypeError(f"not an expression: {e!r}")


def reads_back(fmt: Format, tool: Tool, text: str) -> bool:
    """Whether the format's own parser reads the text as one call of the tool, and no
    error."""
    from ..stream import parse

    tools = [{"type": "function", "function": {"name": tool.name, "parameters": tool.parameters}}]
    message = parse(text, fmt, tools=tools, reasoning_in_prompt=False)
    return not message.errors and [c.name for c in message.tool_calls] == [tool.name]


def json_call(fmt: Format, tool: Tool) -> tuple[str, str]:
    """(begin, end) of a call of this tool, the arguments between them."""
    lowerer = Lowerer(fmt.export_grammar, [tool], f"format {fmt.name!r}")
    lowered = lowerer.lower(fmt.export_grammar.entries["start"], (ONE,))
    search = _Search(lowered, ir.JsonValue(tool.parameters), tool.name)
    for before, after in search.ways(ir.RuleRef(lowered.start)):
        if after is None or tool.name not in before:
            continue
        begin, end = before.lstrip(), after.rstrip()
        # the grammar leaves out lookaheads (a name read up to a newline, say): take the
        # first way the format's own parser reads back as this call
        if reads_back(fmt, tool, begin + "{}" + end):
            return begin, end
    raise NotOneJson(
        f"format {fmt.name!r}: a call is not its tool name and one JSON value of arguments "
        "between fixed texts, so it has no JSON Schema tag"
    )


class NotOneJson(NotImplementedError):
    """A call that is not its tool name and one JSON value (a grammar tag may hold it)."""


def trigger(fmt: Format, begin: str, name: str) -> str:
    """The text a call that begins so is triggered at: what comes before the tool name,
    or the format's marker that opens the call where it begins with one."""
    found = begin[: begin.index(name)]
    opening = [m for m in fmt.markers if found.startswith(m)]
    if opening:
        found = max(opening, key=len)
    if not found:
        raise NotImplementedError(
            f"format {fmt.name!r}: nothing comes before the tool name to trigger on"
        )
    return found


def json_triggers(fmt: Format, tools: Sequence[Mapping[str, Any]]) -> list[str]:
    """The texts a call of any of the tools is triggered at, each once, where every call
    is its tool name and one JSON value (NotImplementedError where one is not, or the
    format has no calls)."""
    if not has_calls(fmt):
        raise NotImplementedError(f"format {fmt.name!r} has no tool calls")
    found: list[str] = []
    for tool in allowed_tools(tools, "auto", True)[0]:
        here = trigger(fmt, json_call(fmt, tool)[0], tool.name)
        if here not in found:
            found.append(here)
    return found
