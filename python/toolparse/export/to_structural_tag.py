"""Export a format's calls as an xgrammar structural tag.

A structural tag lists, per tool, the text that begins its call, its content and the text
that ends it, and the triggers: the texts at which a call may begin (each begin starts
with one).  Everything comes from the same lowered grammar as the Lark export.

Where a call is its tool name and one JSON value of arguments between fixed texts, the
content is the arguments' JSON Schema, the begin and end the literal text before and
after the arguments (_calls.py finds them).

Otherwise (XML-style parameters, Gemma notation, a channel header naming the tool, an
index before the arguments) the content is an EBNF grammar of the call body, written by
the GBNF writer (xgrammar reads GBNF's syntax): the lowered grammar marks where each call
begins and ends, the begin is the run of fixed text that holds the tool name, the end the
fixed text that closes the call, and the body is what lies between; each spelling of the
begin (alternative markers, an optional prefix) gets a tag of its own.  The legacy
``structures`` shape holds only a JSON Schema, and refuses these.  Formats with Python
literal values, or without tool calls, have no structural tag: NotImplementedError says
so.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from .. import grammar as g
from ..formats import Format
from ..tools import Tool
from . import _ir as ir
from ._calls import NotOneJson, json_call, reads_back, trigger
from ._gbnf import render
from ._lower import Lowerer, _Ctx, has_calls
from ._request import ANY, ONE, SOME, ZERO, ToolChoice, allowed_tools

# where a tool_call tag begins and ends in the lowered grammar (bytes no format writes)
_OPEN = ir.Lit(b"\x00call\x00")
_CLOSE = ir.Lit(b"\x00/call\x00")
_JOIN = "\x00"  # whitespace left out, in a run of text being read
_STEPS = 20000  # expansions tried per tool before giving up
_SPELLINGS = 6  # begins kept per tool
_MORE = 400  # ways looked at for other begins once one is found


class _MarkingLowerer(Lowerer):
    """The lowering pass, with each tool call between the two marks above."""

    def tag(self, node: g.Tag, ctx: _Ctx) -> ir.Expr | None:
        found = super().tag(node, ctx)
        if node.role == "tool_call" and found is not None:
            return ir.Seq((_OPEN, found, _CLOSE))
        return found


_Queue = tuple[ir.Expr, ...]


class _Split:
    """Splits the grammar of an output holding one call of a tool into the fixed text that
    begins the call (up to and past the tool name), the call's body and the fixed text
    that ends it."""

    def __init__(self, lowered: ir.Lowered, name: str) -> None:
        self.rules = lowered.rules
        self.name = name
        self.steps = 0

    def expand(self, head: ir.Expr) -> _Queue | None:
        if isinstance(head, ir.Seq):
            return head.items
        if isinstance(head, ir.RuleRef):
            return (self.rules[head.name],)
        return None

    def fronts(
        self, queue: _Queue, run: str, inside: bool, skipped: str = ""
    ) -> Iterator[tuple[str, str, _Queue]]:
        """(text before, begin, what follows it) for each way to the tool name: begin is
        the run of fixed text that holds the name; text that may vary before it is left
        out of the tag (but not a value inside the call)."""
        self.steps += 1
        if not queue or self.steps > _STEPS:
            return
        head, rest = queue[0], queue[1:]
        if head == _OPEN:
            yield from self.fronts(rest, run, True, skipped)
            return
        if head == _CLOSE:
            return
        if isinstance(head, ir.Lit):
            add = head.text.decode("utf-8")
            if run.endswith(_JOIN):
                # whitespace left out between two words would join them
                run = run[: -len(_JOIN)]
                if run[-1:].isalnum() and add[:1].isalnum():
                    return
            text = run + add
            if inside and self.name in text:
                more, rest = self.literals(rest)
                yield skipped, text + more, rest
            else:
                yield from self.fronts(rest, text, inside, skipped)
            return
        inner = self.expand(head)
        if inner is not None:
            yield from self.fronts(inner + rest, run, inside, skipped)
        elif isinstance(head, ir.Optional_):
            # an optional text before the name: as a template writes it first
            yield from self.fronts((head.item, *rest), run, inside, skipped)
            yield from self.fronts(rest, run, inside, skipped)
        elif isinstance(head, ir.Repeat):
            if head.min == 0:
                yield from self.fronts(rest, run, inside, skipped)
            yield from self.fronts((head.item, *rest), run, inside, skipped)
        elif isinstance(head, ir.Alt):
            for alt in head.alts:
                yield from self.fronts((alt, *rest), run, inside, skipped)
        elif isinstance(head, ir.Ws):
            run = run.removesuffix(_JOIN)
            # whitespace that may vary is left out of the tag where a marker follows it
            yield from self.fronts(rest, "", inside, skipped + run + "\n")
            yield from self.fronts(rest, run + _JOIN, inside, skipped)
            yield from self.fronts(rest, run + " ", inside, skipped)
            yield from self.fronts(rest, run + "\n", inside, skipped)
        elif not inside:
            # free text before the call: not part of the tag
            yield from self.fronts(rest, "", inside, skipped + run.removesuffix(_JOIN))

    def literals(self, queue: _Queue) -> tuple[str, _Queue]:
        """The fixed text queue begins with, and what follows it."""
        text = ""
        while queue:
            head = queue[0]
            if isinstance(head, ir.Lit) and head not in (_OPEN, _CLOSE):
                text += head.text.decode("utf-8")
                queue = queue[1:]
                continue
            inner = self.expand(head) if isinstance(head, ir.Seq) else None
            if isinstance(head, ir.RuleRef) and isinstance(self.rules[head.name], (ir.Seq, ir.Lit)):
                inner = (self.rules[head.name],)
            if inner is None:
                break
            queue = inner + queue[1:]
        return text, queue

    def tail(self, body: _Queue) -> tuple[str, _Queue]:
        """The fixed text body ends with, and the body before it."""
        text = ""
        for _ in range(_STEPS):
            if not body:
                break
            head = body[-1]
            if isinstance(head, ir.Lit):
                text = head.text.decode("utf-8") + text
                body = body[:-1]
            elif isinstance(head, ir.Seq):
                body = body[:-1] + head.items
            elif isinstance(head, ir.RuleRef) and isinstance(
                self.rules[head.name], (ir.Seq, ir.Lit)
            ):
                body = (*body[:-1], self.rules[head.name])
            else:
                break
        return text, body

    def splits(self) -> Iterator[tuple[str, str, ir.Expr, str]]:
        for before, begin, rest in self.fronts((ir.RuleRef("start"),), "", False):
            if _CLOSE not in rest:
                continue
            k = rest.index(_CLOSE)
            end, body = self.tail(rest[:k])
            after, _ = self.literals(rest[k + 1 :])
            yield before, begin, ir.Seq(body), end + after


def _shortest(rules: Mapping[str, ir.Expr], e: ir.Expr, active: frozenset[str]) -> str | None:
    """A short text the expression takes (None: none found), to read a call back."""
    if isinstance(e, ir.Lit):
        return e.text.decode("utf-8")
    if isinstance(e, (ir.Ws, ir.Optional_)):
        return ""
    if isinstance(e, ir.Text):
        return "x" if e.min1 else ""
    if isinstance(e, ir.CutShort):
        return e.stops[0].marker.decode("utf-8")[:1]
    if isinstance(e, ir.CharRun):
        return chr(min(e.members)) if e.min1 else ""
    if isinstance(e, ir.JsonString):
        return '"_"'
    if isinstance(e, ir.Pattern):
        samples = {"integer": "0", "number": "0", "boolean": "true", "python_string": "''"}
        return samples.get(e.kind, "null")
    if isinstance(e, ir.JsonValue):
        kind = e.schema.get("type")
        if kind == "object" or "properties" in e.schema or not kind:
            return "{}"
        simple = {"string": '""', "integer": "0", "number": "0", "boolean": "true"}
        return simple.get(str(kind), "[]" if kind == "array" else "null")
    if isinstance(e, ir.Repeat):
        return "" if e.min == 0 else _shortest(rules, e.item, active)
    if isinstance(e, ir.Seq):
        parts = [_shortest(rules, i, active) for i in e.items]
        return None if None in parts else "".join(p for p in parts if p is not None)
    if isinstance(e, ir.Alt):
        for alt in e.alts:
            found = _shortest(rules, alt, active)
            if found is not None:
                return found
        return None
    if isinstance(e, ir.RuleRef):
        if e.name in active:
            return None
        return _shortest(rules, rules[e.name], active | {e.name})
    return None


def _body_grammar(lowered: ir.Lowered, body: ir.Expr) -> str:
    """The body as xgrammar EBNF (GBNF syntax, which it reads), root rule first."""
    reach: dict[str, ir.Expr] = {}
    stack = [body]
    while stack:
        e = stack.pop()
        if isinstance(e, ir.RuleRef):
            if e.name not in reach:
                reach[e.name] = lowered.rules[e.name]
                stack.append(reach[e.name])
        else:
            stack.extend(ir.children(e))
    return render(ir.Lowered("call-body", {"call-body": body, **reach}))


def _checked(
    fmt: Format, tool: Tool, lowered: ir.Lowered, split: tuple[str, str, ir.Expr, str]
) -> tuple[str, str, str] | None:
    """(begin, EBNF of the body, end) where the format's parser reads a short call so
    written back as this one call, else None."""
    before, begin, body, end = split
    sample = _shortest(lowered.rules, body, frozenset())
    if sample is None:
        return None
    grammar = _body_grammar(lowered, body)
    if _OPEN.text.decode() in grammar or _CLOSE.text.decode() in grammar:
        return None  # the body would hold another call
    if not reads_back(fmt, tool, before + begin + sample + end):
        return None
    return begin, grammar, end


def _call_grammar(fmt: Format, tool: Tool) -> list[tuple[str, str, str]]:
    """(begin, EBNF of the body, end) of a call of this tool, for each spelling of the
    begin (alternative markers or headers, an optional prefix; whitespace aside)."""
    lowerer = _MarkingLowerer(fmt.export_grammar, [tool], f"format {fmt.name!r}")
    lowered = lowerer.lower(fmt.export_grammar.entries["start"], (ONE,))
    found: dict[str, tuple[str, str, str]] = {}
    later = []
    looked = 0
    for split in _Split(lowered, tool.name).splits():
        if found:
            looked += 1
            if looked > _MORE:
                break
        opening = split[1][: split[1].index(tool.name)]
        if not opening.strip():
            continue
        # begins that start with one of the format's markers first (they trigger there)
        if not any(opening.startswith(m) for m in fmt.markers):
            later.append(split)
            continue
        spelling = "".join(split[1].split())
        if any(spelling.endswith(known) for known in found):
            continue  # the same begin with more of the output before it
        checked = _checked(fmt, tool, lowered, split)
        if checked is not None:
            found[spelling] = checked
            if len(found) == _SPELLINGS:
                break
    if found:
        return list(found.values())
    for split in later:
        checked = _checked(fmt, tool, lowered, split)
        if checked is not None:
            return [checked]
    raise NotImplementedError(
        f"format {fmt.name!r}: no fixed text begins a call with its tool name"
    )


def to_structural_tag(
    fmt: Format,
    tools: Sequence[Mapping[str, Any]],
    *,
    tool_choice: ToolChoice = "auto",
    parallel_tool_calls: bool = True,
    legacy: bool = False,
) -> dict[str, Any]:
    """The structural tag for these tools.  The default is xgrammar's ``format`` shape
    (a ``triggered_tags`` format; ``at_least_one`` for tool_choice "required" or a named
    tool, ``stop_after_first`` without parallel calls); legacy=True gives the older
    ``structures`` / ``triggers`` shape, which cannot say either."""
    if not has_calls(fmt):
        raise NotImplementedError(f"format {fmt.name!r} has no tool calls")
    allowed, counts = allowed_tools(tools, tool_choice, parallel_tool_calls)
    tags = []
    triggers: list[str] = []
    refused: NotOneJson | None = None
    for tool in allowed:
        calls: list[tuple[str, dict[str, Any], str]]
        try:
            if refused is not None:
                raise refused  # the call's shape is the format's: no need to search again
            begin, end = json_call(fmt, tool)
            calls = [(begin, {"type": "json_schema", "json_schema": dict(tool.parameters)}, end)]
        except NotOneJson as error:
            refused = error
            # the call body as a grammar (XML-style parameters, a channel header, ...)
            if legacy:
                raise NotImplementedError(
                    f"format {fmt.name!r}: a call is not its tool name and one JSON value of "
                    "arguments, and the legacy structures shape holds only a JSON schema"
                ) from error
            calls = [
                (begin, {"type": "grammar", "grammar": grammar}, end)
                for begin, grammar, end in _call_grammar(fmt, tool)
            ]
        for begin, content, end in calls:
            here = trigger(fmt, begin, tool.name)
            if here not in triggers:
                triggers.append(here)
            tags.append((begin, content, end))
    if legacy:
        return {
            "type": "structural_tag",
            "structures": [{"begin": b, "schema": c["json_schema"], "end": e} for b, c, e in tags],
            "triggers": triggers,
        }
    return {
        "type": "structural_tag",
        "format": {
            "type": "triggered_tags",
            "triggers": triggers,
            "tags": [{"type": "tag", "begin": b, "content": c, "end": e} for b, c, e in tags],
            "at_least_one": ZERO not in counts and ANY not in counts,
            "stop_after_first": ANY not in counts and SOME not in counts,
        },
    }


def dumps(tag: Mapping[str, Any]) -> str:
    return json.dumps(tag, ensure_ascii=False)
