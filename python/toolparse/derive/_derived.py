"""Formats built from marker strings: the shapes many model families share, with markers
that a chat template or a response template names.

Four shapes are known, each a real grammar run by both engines:

- JSON in tags: ``OPEN{"name": ..., "arguments": {...}}CLOSE`` per call (Hermes-style);
- a bracket tag before JSON: ``TAG{...}`` per call, or ``TAG[{...}, {...}]`` (one list),
  optionally closed by a marker (Mistral- and Granite-style);
- name in a tag, JSON arguments: ``OPEN NAME NAME_END {...} CLOSE`` (``<function=NAME>``);
- XML parameters: ``OPEN NAME NAME_END`` then ``PARAM_OPEN KEY KEY_END VALUE PARAM_CLOSE``
  per argument, then ``CLOSE`` (Qwen3-Coder- and GLM-style); values typed by the schemas.

Each may open with a reasoning block (``THINK_OPEN`` ... ``THINK_CLOSE``), which ends only at
its closing marker (a call marker inside it is reasoning text: a draft of a call).

A marker segment may hold line breaks (``"<tool_call>\\n<function="``): it is split at
them, and between adjacent tags, into literals with optional whitespace between, since the
layout a template writes is not a promise about what a model writes.  Text around calls is
content; whitespace right after a call is not.
"""

from __future__ import annotations

import json as _json
import re
from dataclasses import dataclass

from ..formats._base import Format, call_array, reasoning_rules, skip_past
from ..grammar import (
    Grammar,
    Node,
    choice,
    cut,
    eof,
    json,
    json_call,
    lit,
    many,
    opt,
    recover,
    ref,
    seq,
    stop,
    tag,
    until,
    ws,
)

_BREAKS = re.compile(r"\s*[\r\n]\s*")
_NAME_WS = ("\n", "\r", "\t", " ")


_ADJACENT_TAGS = re.compile(r"(?<=>)(?=<)")


def parts(segment: str) -> tuple[str, ...]:
    """A marker segment as its literals: split at line breaks and between adjacent tags
    (``</k><v>``), outer whitespace dropped."""
    return tuple(q for p in _BREAKS.split(segment.strip()) for q in _ADJACENT_TAGS.split(p) if q)


def _lits(items: tuple[str, ...]) -> Node:
    nodes: list[Node] = []
    for i, item in enumerate(items):
        if i:
            nodes.append(ws())
        nodes.append(lit(item))
    return seq(*nodes) if nodes else seq()


def _need(segment: str, what: str) -> tuple[str, ...]:
    found = parts(segment)
    if not found:
        raise ValueError(f"{what} is empty: a derived format needs a marker there")
    return found


@dataclass(frozen=True)
class Reasoning:
    """A reasoning block's markers; in_prompt: the chat template opens it."""

    open: str
    close: str
    in_prompt: bool = False


def _rules(
    call: Node, call_first: str, think: Reasoning | None, extra: dict[str, Node]
) -> tuple[dict[str, Node], dict[str, str]]:
    content = tag("content", until(call_first, min1=True, commit=True))
    rules: dict[str, Node] = {
        "body": seq(many(choice(ref("call"), ref("content"))), eof()),
        "call": call,
        "content": content,
        **extra,
    }
    entries = {"start": "start"}
    if think is not None:
        rules |= reasoning_rules(think.open, think.close)
        entries["start_in_reasoning"] = "start_in_reasoning"
    else:
        rules["start"] = seq(ws(), ref("body"))
    return rules, entries


def _format(
    name: str,
    description: str,
    rules: dict[str, Node],
    entries: dict[str, str],
    think: Reasoning | None,
    markers: tuple[str, ...],
    call_markers: tuple[str, str] | None,
    example: str,
    needs_tools: bool = False,
) -> Format:
    all_markers = markers + ((think.open, think.close) if think else ())
    if think is not None:
        opened = "" if think.in_prompt else think.open
        example = f"{opened}The user wants the weather.{think.close}{example}"
    return Format(
        name=name,
        description=description,
        reasoning="optional" if think else "none",
        reasoning_in_prompt=bool(think and think.in_prompt),
        call_in_reasoning="text",
        needs_tools=needs_tools,
        markers=tuple(dict.fromkeys(all_markers)),
        call_markers=call_markers,
        grammar=Grammar(rules=rules, entries=entries),
        examples=(example,),
    )


def _example_object(name_key: str, args_key: str) -> str:
    return _json.dumps({name_key: "get_weather", args_key: {"city": "Paris"}})


def json_in_tags(
    open: str,
    close: str,
    *,
    name_keys: tuple[str, ...] = ("name",),
    args_keys: tuple[str, ...] = ("arguments",),
    think: Reasoning | None = None,
    name: str = "derived_json_in_tags",
) -> Format:
    """``OPEN{"name": ..., "arguments": {...}}CLOSE`` per call."""
    opens, closes = _need(open, "the call's opening marker"), _need(close, "its closing marker")
    call = seq(
        _lits(opens),
        cut(),
        recover(
            tag(
                "tool_call",
                seq(ws(), json_call(name_keys, args_keys), ws(), _lits(closes)),
            ),
            skip_past(closes[-1]),
        ),
        ws(),
    )
    rules, entries = _rules(call, opens[0], think, {})
    example = open + _example_object(name_keys[0], args_keys[0]) + close
    return _format(
        name,
        f"JSON calls between {opens[0]} and {closes[-1]}",
        rules,
        entries,
        think,
        opens + closes,
        (opens[0], closes[-1]),
        example,
    )


def bracket_json(
    tag_marker: str,
    *,
    array: bool,
    close: str = "",
    name_keys: tuple[str, ...] = ("name",),
    args_keys: tuple[str, ...] = ("arguments",),
    think: Reasoning | None = None,
    name: str = "derived_bracket_json",
) -> Format:
    """``TAG{...}`` per call (array=False) or ``TAG[{...}, ...]`` (array=True), then CLOSE
    if given.  Without a closing marker a call ends when its object closes (a list: when
    the comma or ``]`` after it arrives)."""
    opens = _need(tag_marker, "the tag before the JSON")
    closes = parts(close)
    first = opens[0]
    skip: Node = skip_past(closes[-1]) if closes else until(first)
    if array:
        body: Node = seq(ws(), call_array(json_call(name_keys, args_keys), None))
        if closes:
            body = seq(body, ws(), _lits(closes))
        call = seq(_lits(opens), cut(), recover(body, skip), ws())
        example_body = "[" + _example_object(name_keys[0], args_keys[0]) + "]"
    else:
        inner = seq(ws(), json_call(name_keys, args_keys))
        if closes:
            inner = seq(inner, ws(), _lits(closes))
        call = seq(_lits(opens), cut(), recover(tag("tool_call", inner), skip), ws())
        example_body = _example_object(name_keys[0], args_keys[0])
    rules, entries = _rules(call, first, think, {})
    shape = "a JSON list of calls" if array else "a JSON call"
    return _format(
        name,
        f"{first} before {shape}" + (f", closed by {closes[-1]}" if closes else ""),
        rules,
        entries,
        think,
        opens + closes,
        (first, closes[-1]) if closes and not array else None,
        tag_marker + example_body + close,
    )


def name_tag_json(
    open: str,
    name_end: str,
    close: str = "",
    *,
    think: Reasoning | None = None,
    name: str = "derived_name_tag_json",
) -> Format:
    """``OPEN NAME NAME_END {arguments} CLOSE`` per call.  An empty name_end: the name ends
    at whitespace or ``{``; no close: a call ends when its arguments object closes."""
    opens = _need(open, "the marker before the tool name")
    ends, closes = parts(name_end), parts(close)
    stops = (ends[0],) if ends else (*_NAME_WS, "{")
    inner = seq(
        ws(),
        tag("tool_name", until(*stops, need_stop=True)),
        _lits(ends),
        ws(),
        tag("tool_args", json("strict", "object")),
    )
    if closes:
        inner = seq(inner, ws(), _lits(closes))
    skip: Node = skip_past(closes[-1]) if closes else until(opens[0])
    call = seq(_lits(opens), cut(), recover(tag("tool_call", inner), skip), ws())
    rules, entries = _rules(call, opens[0], think, {})
    example = open + "get_weather" + name_end + '{"city": "Paris"}' + close
    return _format(
        name,
        f"{opens[-1]}NAME{ends[0] if ends else ''} then JSON arguments",
        rules,
        entries,
        think,
        opens + ends + closes,
        (opens[0], closes[-1]) if closes else None,
        example,
    )


@dataclass(frozen=True)
class XmlShape:
    """The markers of an XML-parameter call, in the order they are written::

        OPEN NAME NAME_END (PARAM_OPEN KEY KEY_END VALUE PARAM_CLOSE)* CLOSE

    name_end empty: the name ends at whitespace.  value_newlines: one line break right
    after KEY_END and one right before PARAM_CLOSE are layout, not value.  optional_close:
    a marker that may come before CLOSE (``</function>`` where only ``</tool_call>`` is
    required)."""

    open: str
    name_end: str
    param_open: str
    key_end: str
    param_close: str
    close: str
    value_newlines: bool = False
    optional_close: str = ""


def xml_params(
    shape: XmlShape, *, think: Reasoning | None = None, name: str = "derived_xml_params"
) -> Format:
    """Calls whose arguments are XML-style parameters, typed by the tool schemas."""
    opens = _need(shape.open, "the marker before the tool name")
    ends = parts(shape.name_end)
    p_open = _need(shape.param_open, "the parameter's opening marker")
    k_end = _need(shape.key_end, "the marker after the parameter name")
    p_close = _need(shape.param_close, "the parameter's closing marker")
    closes = _need(shape.close, "the call's closing marker")
    if len(p_close) != 1:
        raise ValueError("the parameter's closing marker must be one literal")
    value_close = p_close[0]
    following = (p_open[0], *parts(shape.optional_close)[:1], closes[0])
    name_stops = (ends[0],) if ends else (*_NAME_WS, p_open[0], closes[0])
    value_end = [stop(value_close, followed_by=following)]
    close_value: Node = lit(value_close)
    open_value: Node = seq()
    if shape.value_newlines:
        value_end.insert(0, stop("\n" + value_close, followed_by=following))
        close_value = choice(lit("\n" + value_close), lit(value_close))
        open_value = opt(lit("\n"))
    call = seq(
        _lits(opens),
        cut(),
        recover(
            tag(
                "tool_call",
                seq(
                    ws(),
                    tag("tool_name", until(*name_stops, need_stop=True)),
                    _lits(ends),
                    ws(),
                    many(ref("param")),
                    opt(seq(_lits(parts(shape.optional_close)), ws())),
                    _lits(closes),
                ),
            ),
            skip_past(closes[-1]),
        ),
        ws(),
    )
    param = seq(
        _lits(p_open),
        cut(),
        tag("param_name", until(k_end[0], need_stop=True)),
        _lits(k_end),
        open_value,
        tag("param_value", until(*value_end, need_stop=True)),
        close_value,
        ws(),
    )
    rules, entries = _rules(call, opens[0], think, {"param": param})
    nl = "\n" if shape.value_newlines else ""
    example = (
        "\n".join(opens)
        + "get_weather"
        + "\n".join(ends or ("\n",))
        + "\n".join(p_open)
        + "city"
        + "\n".join(k_end)
        + nl
        + "Paris"
        + nl
        + value_close
        + "\n".join(closes)
    )
    return _format(
        name,
        f"XML calls: {opens[-1]}NAME with {p_open[0]}KEY parameters; values typed by the "
        "tool schemas",
        rules,
        entries,
        think,
        opens + ends + p_open + k_end + p_close + parts(shape.optional_close) + closes,
        (opens[0], closes[-1]),
        example,
        needs_tools=True,
    )
