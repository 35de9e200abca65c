"""MiniMax-M3 nested values (decode="minimax_m3"): object tags and <item> arrays become the
JSON they stand for, leaves typed by the schema at their place; the compiled core and the
reference engine give the same events for any value, well formed or not, at any chunking."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engines import ENGINES, merge_deltas, run_events
from helpers import partitions
from toolparse import ParseError, StreamParser, ToolCallEnd, parse
from toolparse.reference.emitter import typed_value
from toolparse.reference.m3value import MAX_DEPTH, m3_value_to_json, schema_node
from toolparse.tools import schema_types

NS = "]<]minimax[>["
by_engine = pytest.mark.parametrize("engine", ENGINES)


def tag(name: str, body: str) -> str:
    return f"{NS}<{name}>{body}{NS}</{name}>"


def m3(value: Any) -> str:
    """value written the way MiniMax-M3's chat template writes an argument value."""
    if isinstance(value, dict):
        return "".join(tag(k, m3(v)) for k, v in value.items())
    if isinstance(value, list):
        return "".join(tag("item", m3(v)) for v in value)
    if isinstance(value, str):
        return value
    return json.dumps(value)


def call_text(args: str) -> bytes:
    return (f'{NS}<tool_call>\n{NS}<invoke name="f">{args}{NS}</invoke>\n{NS}</tool_call>').encode()


def tools(properties: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": "f",
                "parameters": {"type": "object", "properties": properties},
            },
        }
    ]


# --- a schema and a value it describes ---------------------------------------------------

keys = st.from_regex(r"[a-z_][a-z0-9_]{0,6}", fullmatch=True)
texts = st.text(st.characters(codec="utf-8", exclude_characters="]"), max_size=12)


@st.composite
def schema_and_value(draw: st.DrawFn, depth: int = 0) -> tuple[dict[str, Any], Any]:
    kinds = ["string", "integer", "number", "boolean"]
    if depth < 3:
        kinds += ["object", "array"]
    kind = draw(st.sampled_from(kinds))
    if kind == "string":
        return {"type": "string"}, draw(texts)
    if kind == "integer":
        return {"type": "integer"}, draw(st.integers(-(10**12), 10**12))
    if kind == "number":
        return {"type": "number"}, draw(st.floats(allow_nan=False, allow_infinity=False))
    if kind == "boolean":
        return {"type": "boolean"}, draw(st.booleans())
    if kind == "object":
        names = draw(st.lists(keys, max_size=3, unique=True))
        pairs = [draw(schema_and_value(depth + 1)) for _ in names]
        schema = {
            "type": "object",
            "properties": {k: s for k, (s, _) in zip(names, pairs, strict=True)},
        }
        return schema, {k: v for k, (_, v) in zip(names, pairs, strict=True)}
    item_schema, first = draw(schema_and_value(depth + 1))
    values = [first]
    for _ in range(draw(st.integers(0, 2))):
        values.append(draw(values_of(item_schema)))
    return {"type": "array", "items": item_schema}, draw(st.sampled_from([[], values]))


def values_of(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    kind = schema["type"]
    if kind == "string":
        return texts
    if kind == "integer":
        return st.integers(-(10**12), 10**12)
    if kind == "number":
        return st.floats(allow_nan=False, allow_infinity=False)
    if kind == "boolean":
        return st.booleans()
    if kind == "object":
        props = schema["properties"]
        return st.fixed_dictionaries({k: values_of(s) for k, s in props.items()})
    return st.lists(values_of(schema["items"]), max_size=2)


@settings(max_examples=150, deadline=None)
@given(pair=schema_and_value(), data=st.data())
def test_any_value_round_trips(pair: tuple[dict[str, Any], Any], data: st.DataObject) -> None:
    schema, value = pair
    source = call_text(tag("p", m3(value)))
    sizes = data.draw(partitions(len(source)))
    seen = []
    for engine in ENGINES:
        parser = StreamParser("minimax_m3", tools=tools({"p": schema}), engine=engine, seed=1)
        events = run_events(parser, source, sizes)
        ends = [e for e in events if isinstance(e, ToolCallEnd)]
        assert len(ends) == 1, [e for e in events if isinstance(e, ParseError)]
        assert ends[0].call.arguments == {"p": value}
        seen.append(merge_deltas(events))
    assert all(events == seen[0] for events in seen)


# --- any value text: never a crash, the same events on both engines ----------------------

pieces = st.sampled_from(
    [NS, "<", ">", "</", "item", "a", "b", "k", " ", "\n", "1", "-2.5", "true", "é", "{}", "[", "]"]
)
leaf_texts = st.lists(
    st.sampled_from(["a", " ", "\n", "1", "-2.5", "true", "é", "<", ">"]), max_size=4
)
tree_texts = st.recursive(
    leaf_texts.map("".join),
    lambda inner: st.lists(
        st.tuples(
            st.sampled_from(["a", "item", "k", "item "]), inner, st.sampled_from(["", " ", "\n"])
        ),
        max_size=3,
    ).map(lambda children: "".join(tag(name, body) + gap for name, body, gap in children)),
    max_leaves=10,
)
# random pieces (mostly malformed), and well-formed trees of tags (mostly well formed)
value_texts = st.lists(pieces, max_size=30).map("".join) | tree_texts
schemas = st.sampled_from(
    [
        {"type": "string"},
        {"type": "integer"},
        {"type": "object"},
        {"type": "array"},
        {"type": "array", "items": {"type": "object", "properties": {"a": {"type": "number"}}}},
        {"type": "object", "properties": {"a": {"type": "array"}, "item": {"type": "boolean"}}},
        {"anyOf": [{"type": "object"}, {"type": "array"}]},
        {},
    ]
)


@settings(max_examples=300, deadline=None)
@given(
    value=value_texts,
    schema=schemas,
    known=st.booleans(),
    junk=st.binary(max_size=3),
    data=st.data(),
)
def test_engines_agree_on_any_value(
    value: str, schema: dict[str, Any], known: bool, junk: bytes, data: st.DataObject
) -> None:
    name = "p" if known else "q"
    source = call_text(tag(name, value)) + junk
    sizes = data.draw(partitions(len(source)))
    seen = [
        merge_deltas(
            run_events(
                StreamParser("minimax_m3", tools=tools({"p": schema}), engine=engine, seed=3),
                source,
                sizes,
            )
        )
        for engine in ENGINES
    ]
    assert all(events == seen[0] for events in seen)


@settings(max_examples=300, deadline=None)
@given(value=value_texts, schema=schemas, known=st.booleans())
def test_converter_gives_json_or_none(value: str, schema: dict[str, Any], known: bool) -> None:
    node = schema_node(schema, schema_types) if known else None
    converted = m3_value_to_json(value.encode(), node, typed_value)
    if converted is not None:
        json.loads(converted)


# --- the rules, one by one ---------------------------------------------------------------


@by_engine
def test_tags_decide_where_the_schema_is_silent(engine: str) -> None:
    args = tag("q", tag("a", "1") + tag("b", tag("item", "x") + tag("item", "y"))) + tag(
        "r", tag("item", "1")
    )
    message = parse(call_text(args), "minimax_m3", tools=tools({}), engine=engine)
    assert not message.errors
    assert message.tool_calls[0].arguments == {"q": {"a": "1", "b": ["x", "y"]}, "r": ["1"]}


@by_engine
def test_an_object_key_named_item_stays_a_key(engine: str) -> None:
    schema = {"type": "object", "properties": {"item": {"type": "integer"}}}
    message = parse(
        call_text(tag("p", tag("item", "3"))),
        "minimax_m3",
        tools=tools({"p": schema}),
        engine=engine,
    )
    assert message.tool_calls[0].arguments == {"p": {"item": 3}}


@by_engine
def test_a_mixed_union_reads_the_tags(engine: str) -> None:
    schema = {"anyOf": [{"type": "object"}, {"type": "array", "items": {"type": "integer"}}]}
    message = parse(
        call_text(tag("p", tag("item", "1") + tag("item", "2")) + tag("o", "")),
        "minimax_m3",
        tools=tools({"p": schema, "o": schema}),
        engine=engine,
    )
    assert message.tool_calls[0].arguments == {"p": [1, 2], "o": ""}


@by_engine
def test_nesting_too_deep_is_invalid(engine: str) -> None:
    deep = "x"
    for _ in range(MAX_DEPTH + 1):
        deep = tag("a", deep)
    message = parse(call_text(tag("q", deep)), "minimax_m3", tools=tools({}), engine=engine)
    assert message.tool_calls == []
    assert [e.kind for e in message.errors] == ["invalid_arguments"]
    shallow = "x"
    for _ in range(MAX_DEPTH - 1):
        shallow = tag("a", shallow)
    message = parse(call_text(tag("q", shallow)), "minimax_m3", tools=tools({}), engine=engine)
    assert not message.errors


@by_engine
def test_ill_formed_utf8_in_a_nested_leaf(engine: str) -> None:
    source = call_text(tag("q", tag("a", "Z"))).replace(b"Z", b"Z\xff\xc3")
    message = parse(source, "minimax_m3", tools=tools({}), engine=engine)
    assert message.tool_calls[0].arguments == {"q": {"a": "Z\ufffd\ufffd"}}
