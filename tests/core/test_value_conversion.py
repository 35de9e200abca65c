"""Parameter values converted to JSON: Python literals (decode="python") become the JSON a
Python program would get from ast.literal_eval and json.dumps, and Gemma 4 values
(decode="gemma") the JSON they stand for, on both engines and under any chunking."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engines import ENGINES, run_events
from helpers import partitions
from toolparse import Format, ParseError, StreamParser, ToolCallEnd, parse
from toolparse.grammar import (
    Grammar,
    chars,
    choice,
    eof,
    lit,
    many,
    opt,
    ref,
    seq,
    tag,
    until,
    ws,
)
from toolparse.grammar import json as json_value

by_engine = pytest.mark.parametrize("engine", ENGINES)

IDENT = seq(chars("A-Za-z_", min1=True), chars("A-Za-z0-9_"))
ARG = seq(
    tag("param_name", IDENT),
    ws(),
    lit("="),
    ws(),
    tag("param_value", json_value("python"), decode="python"),
)
KWARGS_CALL = Format(
    name="kwargs_call",
    description="NAME(k=v, ...) with Python literal values",
    grammar=Grammar(
        {
            "start": seq(
                tag(
                    "tool_call",
                    seq(
                        tag("tool_name", IDENT),
                        lit("("),
                        ws(),
                        opt(seq(ARG, many(seq(ws(), lit(","), ws(), ARG)), ws(), opt(lit(",")))),
                        ws(),
                        lit(")"),
                    ),
                ),
                eof(),
            )
        },
        {"start": "start"},
    ),
)


def as_json(value: Any) -> Any:
    """What the value is in JSON: tuples are arrays."""
    if isinstance(value, (list, tuple)):
        return [as_json(v) for v in value]
    if isinstance(value, dict):
        return {k: as_json(v) for k, v in value.items()}
    return value


def arguments_json(source: str, engine: str) -> str:
    message = parse(source, KWARGS_CALL, engine=engine)
    assert not message.errors, message.errors
    (call,) = message.tool_calls
    return call.arguments_json


@by_engine
@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("f(a=1, b=-2.5e3, c=0)", '{"a": 1, "b": -2.5e3, "c": 0}'),
        ("f(a=True, b=False, c=None)", '{"a": true, "b": false, "c": null}'),
        ("f(a=(1, 2), b=(1,), c=())", '{"a": [1, 2], "b": [1], "c": []}'),
        ("f(a=[1, 2,], b={'k': 'v',},)", '{"a": [1, 2], "b": {"k": "v"}}'),
        ("f( a = [ 1 ,2 ] )", '{"a": [1, 2]}'),
        ('f(a=\'it\\\'s\', b="say \\"hi\\"")', '{"a": "it\'s", "b": "say \\"hi\\""}'),
        ("f(a='tab\\tnew\\nline\\\\')", '{"a": "tab\\tnew\\nline\\\\"}'),
        ("f(a='\\a\\b\\f\\v\\0')", '{"a": "\\u0007\\b\\f\\u000b\\u0000"}'),
        ("f(a='\\101\\x42\\u0043\\U00000044')", '{"a": "ABCD"}'),
        ("f(a='\\ud83d\\ude00 \\U0001F600 😀')", '{"a": "😀 😀 😀"}'),
        ("f(a='\\ud800!')", '{"a": "\ufffd!"}'),
        ("f(a='C:\\path\\N{DASH}')", '{"a": "C:\\\\path\\\\N{DASH}"}'),
        ("f(a='one \\\ntwo')", '{"a": "one two"}'),
        ("f(a='\\'<tool_call>\\'')", '{"a": "\'<tool_call>\'"}'),
        (
            "f(a={'nested': {'deep': [None, (True,)]}})",
            '{"a": {"nested": {"deep": [null, [true]]}}}',
        ),
        ("g()", "{}"),
    ],
)
def test_python_literals_become_json(source: str, expected: str, engine: str) -> None:
    assert arguments_json(source, engine) == expected
    assert json.loads(expected) is not None


python_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.lists(inner, max_size=4).map(tuple)
        | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(values=st.lists(python_values, min_size=1, max_size=3), data=st.data())
def test_any_python_value_round_trips(values: list[Any], data: st.DataObject) -> None:
    source = ("f(" + ", ".join(f"p{k}={v!r}" for k, v in enumerate(values)) + ")").encode()
    sizes = data.draw(partitions(len(source)))
    expected = {f"p{k}": as_json(v) for k, v in enumerate(values)}
    texts = []
    for engine in ENGINES:
        events = run_events(StreamParser(KWARGS_CALL, engine=engine, seed=1), source, sizes)
        ends = [e for e in events if isinstance(e, ToolCallEnd)]
        assert len(ends) == 1, [e for e in events if isinstance(e, ParseError)]
        texts.append(ends[0].call.arguments_json)
        assert ends[0].call.arguments == expected
        assert texts[-1] == json.dumps(expected, ensure_ascii=False)
    assert len(set(texts)) == 1


@by_engine
@pytest.mark.parametrize(
    ("source", "kind"),
    [
        ("f(a=1", "incomplete"),
        ("f(a='x", "incomplete"),
        ("f(a='x\ny')", "invalid_arguments"),  # a raw newline cannot be inside a string
        ("f(a=x)", "invalid_arguments"),  # a name, not a literal
        ("f(1)", "invalid_arguments"),  # positional arguments have no name
        ("f(a=1 b=2)", "invalid_arguments"),
    ],
)
def test_bad_python_arguments_are_errors_not_calls(source: str, kind: str, engine: str) -> None:
    message = parse(source, KWARGS_CALL, engine=engine)
    assert message.tool_calls == []
    assert [e.kind for e in message.errors] == [kind]


# --- Gemma 4 values (decode="gemma") ------------------------------------------------------------

QUOTE = '<|"|>'
GEMMA_RULES = {
    "value": choice(
        seq(lit(QUOTE), until(QUOTE, need_stop=True), lit(QUOTE)),
        ref("dict"),
        ref("array"),
        lit("true"),
        lit("false"),
        lit("null"),
        chars("-+.0-9eE", min1=True),
    ),
    # a nested key is bare text up to its colon, or text between two quotes
    "member": seq(
        choice(
            seq(lit(QUOTE), until(QUOTE, need_stop=True), lit(QUOTE)),
            until(":", "}", min1=True, need_stop=True),
        ),
        ws(),
        lit(":"),
        ws(),
        ref("value"),
    ),
    "dict": seq(
        lit("{"),
        ws(),
        opt(seq(ref("member"), many(seq(lit(","), ws(), ref("member"))))),
        ws(),
        lit("}"),
    ),
    "array": seq(
        lit("["),
        ws(),
        opt(seq(ref("value"), many(seq(lit(","), ws(), ref("value"))))),
        ws(),
        lit("]"),
    ),
}
GEMMA_ARG = seq(
    tag("param_name", until(":", "}", min1=True, need_stop=True)),
    lit(":"),
    ws(),
    tag("param_value", ref("value"), decode="gemma"),
)
GEMMA_CALL = Format(
    name="gemma_call",
    description="NAME{key:value,...} with Gemma 4 values",
    grammar=Grammar(
        {
            "start": seq(
                tag(
                    "tool_call",
                    seq(
                        tag("tool_name", IDENT),
                        lit("{"),
                        opt(seq(GEMMA_ARG, many(seq(lit(","), GEMMA_ARG)))),
                        lit("}"),
                    ),
                ),
                eof(),
            ),
            **GEMMA_RULES,
        },
        {"start": "start"},
    ),
)


def gemma(value: Any, quoted_keys: bool = False) -> str:
    """value written the way Gemma 4 writes tool-call values (with quoted_keys, its dict keys
    between two quotes)."""
    if isinstance(value, str):
        return QUOTE + value + QUOTE
    if isinstance(value, dict):
        items = (
            (QUOTE + k + QUOTE if quoted_keys else k) + ":" + gemma(v, quoted_keys)
            for k, v in value.items()
        )
        return "{" + ",".join(items) + "}"
    if isinstance(value, list):
        return "[" + ",".join(gemma(v, quoted_keys) for v in value) + "]"
    return json.dumps(value)


gemma_keys = st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True)
gemma_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text().filter(lambda t: QUOTE not in t),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(gemma_keys, inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(args=st.dictionaries(gemma_keys, gemma_values, min_size=1, max_size=3), data=st.data())
def test_any_gemma_value_round_trips(args: dict[str, Any], data: st.DataObject) -> None:
    source = ("f" + gemma(args)).encode()
    for call in gemma_calls(source, data.draw(partitions(len(source)))):
        assert call.arguments == args
        assert call.arguments_json == json.dumps(args, ensure_ascii=False)


def gemma_calls(source: bytes, sizes: list[int]) -> list[Any]:
    """The one call each engine reads from the Gemma 4 call source fed in those sizes."""
    calls = []
    for engine in ENGINES:
        events = run_events(StreamParser(GEMMA_CALL, engine=engine, seed=1), source, sizes)
        ends = [e for e in events if isinstance(e, ToolCallEnd)]
        assert len(ends) == 1, [e for e in events if isinstance(e, ParseError)]
        calls.append(ends[0].call)
    return calls


@by_engine
def test_gemma_strings_are_raw_text(engine: str) -> None:
    source = (
        'f{q:<|"|>say "hi" \\n\tC:\\\\path {x:1}<|"|>,n:[-1.5e3, true, null, {k : <|"|><|"|>}]}'
    )
    message = parse(source, GEMMA_CALL, engine=engine)
    assert not message.errors
    (call,) = message.tool_calls
    assert call.arguments == {
        "q": 'say "hi" \\n\tC:\\\\path {x:1}',
        "n": [-1500.0, True, None, {"k": ""}],
    }


quoted_keys = st.text(min_size=1, max_size=8).filter(lambda t: QUOTE not in t)
quoted_key_values = st.recursive(
    st.integers() | st.text(max_size=4).filter(lambda t: QUOTE not in t),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(quoted_keys, inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=100, deadline=None)
@given(args=st.dictionaries(gemma_keys, quoted_key_values, min_size=1, max_size=3), data=st.data())
def test_nested_keys_between_quotes_round_trip(args: dict[str, Any], data: st.DataObject) -> None:
    # a quoted key is the text between the quotes, whatever it holds (a colon, a brace)
    source = ("f{" + ",".join(f"{k}:{gemma(v, True)}" for k, v in args.items()) + "}").encode()
    for call in gemma_calls(source, data.draw(partitions(len(source)))):
        assert call.arguments == args


@by_engine
def test_a_quoted_nested_key_may_have_whitespace_before_its_colon(engine: str) -> None:
    source = 'f{d:{<|"|> a b <|"|> :1, c :{<|"|>x:y<|"|>:[]}}}'
    message = parse(source, GEMMA_CALL, engine=engine)
    assert not message.errors
    (call,) = message.tool_calls
    assert call.arguments == {"d": {" a b ": 1, "c": {"x:y": []}}}
