"""Argument values written as Python literals (pythonic's `name(key=value)`), typed by
their parameter's schema: each export takes a spelling exactly where the parser reads it
as a value the schema allows, but for the cases listed, which docs/export.md names."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import pytest
from test_export_lark import PLUS, exported, run

import toolparse
from gbnf_reader import Grammar, read_gbnf
from toolparse import export
from toolparse.export.to_regex import MAX_DEPTH, to_regex
from toolparse.formats import get_format

llguidance = pytest.importorskip("llguidance")
jsonschema = pytest.importorskip("jsonschema")

from test_export_regex import walk  # noqa: E402

SCHEMAS: dict[str, dict[str, Any]] = {
    "text": {"type": "string"},
    "count": {"type": "integer"},
    "days": {"type": "integer", "minimum": 1, "maximum": 14},
    "ratio": {"type": "number"},
    "flag": {"type": "boolean"},
    "nothing": {"type": "null"},
    "maybe": {"type": ["integer", "null"]},
    "unit": {"type": "string", "enum": ["celsius", 'it\'s "x"']},
    "ids": {"type": "array", "items": {"type": "integer"}, "maxItems": 3},
    "pair": {
        "type": "object",
        "properties": {"b": {"type": "array", "items": {"type": "boolean"}}, "a": {}},
        "required": ["a"],
        "additionalProperties": False,
    },
    "any": {},
}
TOOLS = [
    {
        "type": "function",
        "function": {"name": "f", "parameters": {"type": "object", "properties": SCHEMAS}},
    }
]
SPELLINGS = [
    # strings: either quote, Python's escapes, and what breaks one
    "'Paris'",
    '"Paris"',
    "''",
    r"'it\'s'",
    r'"say \"hi\""',
    "'tab\there'",
    r"'\x41\u00e9\U0001F600\101\N{DASH}\q'",
    "'caf\u00e9 \u2615'",
    "'a\\\nb'",
    "'celsius'",
    '"celsius"',
    r"'it\'s \"x\"'",
    r"""'it\'s "x"'""",
    r'''"it's \"x\""''',
    "'unclosed",
    "'line\nbreak'",
    r"'\x4g'",
    r"'\U00110000'",
    # words
    "True",
    "false",
    "None",
    "null",
    "TRUE",
    "none",
    # numbers, as JSON writes them
    "0",
    "-12",
    "7",
    "15",
    "3.5",
    "-0.5e3",
    "1e3",
    "01",
    "+1",
    ".5",
    "1.",
    "0x1F",
    "1_000",
    # containers: lists, tuples, dicts, trailing commas, whitespace
    "[]",
    "[1, 2]",
    "[1,2,]",
    "( 1 , 2 )",
    "(1,)",
    "()",
    "[1, 2, 3, 4]",
    "[1, 'a']",
    "[1)",
    "[,]",
    "{'a': 'x'}",
    "{ 'a' : [1, 2], 'b' : [True, false], }",
    "{'b': (True,), \"a\": None}",
    "{'a': 1, 'c': 2}",
    "{'b': []}",
    "{}",
    "{'k': [1]}",
    "[{'k': None}, (1,)]",
]
# Spellings the exports refuse though the parser reads a value the schema allows, and
# why (docs/export.md): (parameter, spelling) -> reason
STRICTER = {
    ("unit", r"'it\'s \"x\"'"): "an enum string in each quote, escaped only where it must be",
    **{(prop, "+1"): PLUS for prop in ("any", "count", "days", "maybe", "ratio")},
}
FREE_FORM = {"any"}  # in the regex, free-form values nest one container (MAX_DEPTH)


def _output(prop: str, spelling: str) -> str:
    return f"[f({prop}={spelling})]"


def _read(prop: str, spelling: str) -> tuple[bool, Any]:
    """(whether the parser reads one call with only this parameter, its value)."""
    message = toolparse.parse(_output(prop, spelling), "pythonic", tools=TOOLS)
    if message.errors or len(message.tool_calls) != 1:
        return False, None
    arguments = message.tool_calls[0].arguments
    return set(arguments) == {prop}, arguments.get(prop)


def parser_takes(prop: str, spelling: str) -> bool:
    """Whether the parser reads one call whose value for `prop` meets its schema (an
    integer as integer digits, which the exports ask for: 1e3 is an integer to JSON
    Schema)."""
    read, value = _read(prop, spelling)
    if not read:
        return False
    if "integer" in json.dumps(SCHEMAS[prop].get("type")) and isinstance(value, float):
        return False
    return jsonschema.Draft202012Validator(SCHEMAS[prop]).is_valid(value)


def _depth(value: Any) -> int:
    """How many containers the value nests, itself counting."""
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    return 0


def _stricter(method: str, prop: str, spelling: str) -> bool:
    """A spelling the parser reads as a value the schema allows, which the export
    refuses as docs/export.md says."""
    if (prop, spelling) in STRICTER:
        return True
    nested = prop in FREE_FORM and _depth(_read(prop, spelling)[1]) > MAX_DEPTH
    return method == "regex" and nested


@cache
def _gbnf(name: str, tools: str) -> Grammar:
    return read_gbnf(
        export.gbnf(get_format(name), json.loads(tools), tool_choice="required")["grammar"]
    )


def taken(method: str, name: str, tools: list[dict[str, Any]], output: str) -> bool:
    """Whether the format's `method` export ("lark", "regex", "gbnf") for these tools,
    with a call required, takes the output (GBNF as tests/gbnf_reader.py reads it)."""
    if method == "gbnf":
        return len(output) in _gbnf(name, json.dumps(tools)).ends(output)
    export = exported(method, name, json.dumps(tools), '"required"', True, None)
    return (run if method == "lark" else walk)(export, output.encode()) is None


@pytest.mark.parametrize("method", ["lark", "regex", "gbnf"])
@pytest.mark.parametrize("prop", sorted(SCHEMAS))
def test_a_python_literal_is_taken_as_the_parser_reads_it(method: str, prop: str) -> None:
    seen: dict[str, tuple[bool, bool]] = {}
    for spelling in SPELLINGS:
        reads = parser_takes(prop, spelling)
        if _stricter(method, prop, spelling):
            assert reads, (prop, spelling)  # the parser reads it: the export is stricter
            reads = False
        seen[spelling] = (taken(method, "pythonic", TOOLS, _output(prop, spelling)), reads)
    wrong = {s: v for s, v in seen.items() if v[0] != v[1]}
    assert not wrong, wrong  # (taken, read) where they differ
    assert any(t for t, _ in seen.values())  # the case is not vacuous


NAMED = {"type": "object", "properties": {"city": {"type": "string"}}}
NAMES = ["city", "cit", "cityx", "c", "_x", "x9", "zone", "9x", "ci ty"]


@pytest.mark.parametrize("method", ["lark", "regex", "gbnf"])
@pytest.mark.parametrize("closed", [False, True])
def test_an_undeclared_parameter_is_taken_where_the_schema_allows_it(
    method: str, closed: bool
) -> None:
    """A keyword the schema does not declare, any Python literal its value, where the
    schema allows other properties (a name that begins like a declared one is another
    name); a declared one typed."""
    schema = {**NAMED, "additionalProperties": False} if closed else NAMED
    tools = [{"type": "function", "function": {"name": "f", "parameters": schema}}]
    seen = {}
    for name in NAMES:
        for value in ("'x'", "[1, {'k': None}]"):
            output = f"[f({name}={value})]"
            message = toolparse.parse(output, "pythonic", tools=tools)
            reads = not message.errors and len(message.tool_calls) == 1
            if reads:
                arguments = message.tool_calls[0].arguments
                reads = jsonschema.Draft202012Validator(schema).is_valid(arguments)
            if method == "regex" and value.startswith("[") and reads:
                reads = False  # free-form values nest one container (regex.MAX_DEPTH)
            seen[output] = (taken(method, "pythonic", tools, output), reads)
    wrong = {s: v for s, v in seen.items() if v[0] != v[1]}
    assert not wrong, wrong
    assert any(t for t, _ in seen.values())


def test_free_form_values_nest_as_deep_as_the_regex_allows() -> None:
    """Lark and GBNF take a free-form value nested to any depth, as the parser reads it;
    the regex as deep as its max_depth."""
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    deep = "[f(x=[{'k': (None,)}])]"
    message = toolparse.parse(deep, "pythonic", tools=tools)
    assert [c.arguments for c in message.tool_calls] == [{"x": [{"k": [None]}]}]
    assert taken("lark", "pythonic", tools, deep)
    assert taken("gbnf", "pythonic", tools, deep)
    assert not taken("regex", "pythonic", tools, deep)
    deeper = to_regex(get_format("pythonic"), tools, tool_choice="required", max_depth=3)
    assert walk(deeper, deep.encode()) is None
