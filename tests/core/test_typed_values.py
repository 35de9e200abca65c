"""A value written as text is typed by its schema types, in order: the first type the text
fits; a value that fits none makes the call invalid_arguments, never a string its schema
does not allow.  Both engines, through qwen3_coder's XML parameters."""

from __future__ import annotations

from typing import Any

import pytest

import toolparse
from engines import ENGINES

by_engine = pytest.mark.parametrize("engine", ENGINES)

MISSING: Any = object()  # the call is refused


def call(value: str) -> str:
    parameter = f"<parameter=v>\n{value}\n</parameter>"
    return f"<tool_call>\n<function=f>\n{parameter}\n</function>\n</tool_call>"


def typed(value: str, schema: dict[str, Any], engine: str) -> Any:
    tools = [
        {
            "type": "function",
            "function": {
                "name": "f",
                "parameters": {"type": "object", "properties": {"v": schema}},
            },
        }
    ]
    message = toolparse.parse(call(value), "qwen3_coder", tools=tools, engine=engine)
    if not message.tool_calls:
        assert [e.kind for e in message.errors] == ["invalid_arguments"]
        assert message.errors[0].message in (
            "the value of 'v' fits none of the types its schema allows",
            f"the number {value} is beyond a float's range",  # typed, but no float holds it
        )
        return MISSING
    assert not message.errors
    return message.tool_calls[0].arguments["v"]


# JSON Schema's integer is a number whose value is whole, however it is written
INTEGERS = {
    "5": 5,
    "-0": 0,
    "5.0": 5.0,
    "0.000": 0.0,
    "250e-1": 25.0,
    "12.50e1": 125.0,
    "1E2": 100.0,
    "1e99999999999": MISSING,  # whole, but beyond a float's range: refused all the same
    "2.5": MISSING,
    "12.55e1": MISSING,
    "1E-2": MISSING,
    "1e-99999999999": MISSING,
    "five": MISSING,
    "": MISSING,
    "0x10": MISSING,
}


@by_engine
@pytest.mark.parametrize("text", INTEGERS)
def test_an_integer_is_a_whole_number(text: str, engine: str) -> None:
    assert typed(text, {"type": "integer"}, engine) == INTEGERS[text]


@by_engine
@pytest.mark.parametrize(
    ("text", "schema", "expected"),
    [
        ("null", {"type": ["integer", "null"]}, None),
        ("null", {"type": "string"}, "null"),  # a string parameter keeps its text
        ("null", {"type": "integer"}, MISSING),
        ("abc", {"type": ["integer", "string"]}, "abc"),  # the first type the text fits
        ("7", {"type": ["string", "integer"]}, "7"),
        ("yes", {"type": "boolean"}, MISSING),
        ("TRUE", {"type": "boolean"}, True),
        ("[1, 2]", {"type": "object"}, MISSING),
        ('{"a": 1}', {"anyOf": [{"type": "array"}, {"type": "object"}]}, {"a": 1}),
        ("anything", {"type": "any"}, "anything"),  # a type no value is checked against
        ("anything", {}, "anything"),  # no type: a string
        ("1e999", {"type": "number"}, MISSING),
        # the text null is null wherever the schema admits null, before any string
        ("null", {"type": ["string", "null"]}, None),
        ("null", {"anyOf": [{"type": "string"}, {"type": "null"}]}, None),
        (" null\n", {"type": ["string", "null"]}, None),
        ("None", {"type": ["string", "null"]}, "None"),  # a word, not JSON's null
        ("nullable", {"type": ["string", "null"]}, "nullable"),
        # type names that are not JSON Schema's but say one of its types
        ("3.14", {"type": "float"}, 3.14),
        ("2.5", {"type": "double"}, 2.5),
        ("7", {"type": "int"}, 7),
        ("42", {"type": "uint32"}, 42),
        ("-42", {"type": "int64"}, -42),
        ("42", {"type": "long"}, 42),
        ("1.5", {"type": "float64"}, 1.5),
        ("7", {"type": "integer32"}, "7"),  # no such type: a string, as any unknown type
        ("7.5", {"type": "int"}, MISSING),
        ("true", {"type": "bool"}, True),
        ("7", {"type": "str"}, "7"),
        ('{"a": 1}', {"type": "dict"}, {"a": 1}),
        ("[1]", {"type": "list"}, [1]),
        ("[1]", {"type": ["list", "null"]}, [1]),
    ],
)
def test_the_first_type_that_fits(
    text: str, schema: dict[str, Any], expected: Any, engine: str
) -> None:
    assert typed(text, schema, engine) == expected
