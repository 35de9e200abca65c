"""Export a format's calls as an xgrammar structural tag.

A structural tag lists, per tool, the text that begins its call, the JSON Schema of its
arguments and the text that ends it, and the triggers: the texts at which a call may
begin (each begin starts with one).  The begin and end come from the same lowered grammar
as the Lark export: for each tool, the grammar of an output that holds exactly that one
call is searched for the shortest way through it, and the literal text before and after
the arguments becomes the begin and end (optional whitespace is left out, the first of
alternative spellings is taken).  Formats whose arguments are not one JSON value (XML
parameters, Python calls) or whose call envelope holds free text cannot be described this
way: NotImplementedError says so.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from . import _ir as ir

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
        if isinstance(e, (ir.Text, ir.CharRun, ir.JsonString, ir.Pattern)):
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


def _reads_back(fmt: Any, tool: ir.Tool, begin: str, end: str) -> bool:
    from ..stream import parse

    tools = [{"type": "function", "function": {"name": tool.name, "parameters": tool.schema}}]
    message = parse(begin + "{}" + end, fmt, tools=tools, reasoning_in_prompt=False)
    return not message.errors and [c.name for c in message.tool_calls] == [tool.name]


def _call_text(fmt: Any, tool: ir.Tool) -> tuple[str, str]:
    """(begin, end) of a call of this tool, the arguments between them."""
    lowerer = ir.Lowerer(fmt.grammar, [tool], f"format {fmt.name!r}")
    lowered = lowerer.lower(fmt.grammar.entries["start"], (ir.ONE,))
    search = _Search(lowered, ir.JsonValue(tool.schema), tool.name)
    for before, after in search.ways(ir.RuleRef(lowered.start)):
        if after is None or tool.name not in before:
            continue
        begin, end = before.lstrip(), after.rstrip()
        # the grammar leaves out lookaheads (a name read up to a newline, say): take the
        # first way the format's own parser reads back as this call
        if _reads_back(fmt, tool, begin, end):
            return begin, end
    raise NotImplementedError(
        f"format {fmt.name!r}: a call is not its tool name and one JSON value of arguments "
        "between fixed texts, so it has no structural tag"
    )


def to_structural_tag(
    fmt: Any,
    tools: Sequence[Mapping[str, Any]],
    *,
    tool_choice: ir.ToolChoice = "auto",
    parallel_tool_calls: bool = True,
    legacy: bool = False,
) -> dict[str, Any]:
    """The structural tag for these tools.  The default is xgrammar's ``format`` shape
    (a ``triggered_tags`` format; ``at_least_one`` for tool_choice "required" or a named
    tool, ``stop_after_first`` without parallel calls); legacy=True gives the older
    ``structures`` / ``triggers`` shape, which cannot say either."""
    if not ir.has_calls(fmt):
        raise NotImplementedError(f"format {fmt.name!r} has no tool calls")
    allowed, counts = ir.allowed_tools(tools, tool_choice, parallel_tool_calls)
    tags = []
    triggers: list[str] = []
    for tool in allowed:
        begin, end = _call_text(fmt, tool)
        trigger = begin[: begin.index(tool.name)]
        # trigger on the format's marker that opens the call, where there is one
        opening = [m for m in fmt.markers if trigger.startswith(m)]
        if opening:
            trigger = max(opening, key=len)
        if not trigger:
            raise NotImplementedError(
                f"format {fmt.name!r}: nothing comes before the tool name to trigger on"
            )
        if trigger not in triggers:
            triggers.append(trigger)
        tags.append((begin, dict(tool.schema), end))
    if legacy:
        return {
            "type": "structural_tag",
            "structures": [{"begin": b, "schema": s, "end": e} for b, s, e in tags],
            "triggers": triggers,
        }
    return {
        "type": "structural_tag",
        "format": {
            "type": "triggered_tags",
            "triggers": triggers,
            "tags": [
                {
                    "type": "tag",
                    "begin": b,
                    "content": {"type": "json_schema", "json_schema": s},
                    "end": e,
                }
                for b, s, e in tags
            ],
            "at_least_one": ir.ZERO not in counts and ir.ANY not in counts,
            "stop_after_first": ir.ANY not in counts and ir.SOME not in counts,
        },
    }


def dumps(tag: Mapping[str, Any]) -> str:
    return json.dumps(tag, ensure_ascii=False)
