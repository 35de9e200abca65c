"""A parameter value typed by its schema (qwen3_coder's `<parameter=...>` text): each export
takes a spelling exactly where the parser reads it as a value of the schema's type."""

from __future__ import annotations

from typing import Any

import pytest

import toolparse
from test_export_lark import run
from toolparse import export
from toolparse.formats import get_format

llguidance = pytest.importorskip("llguidance")
jsonschema = pytest.importorskip("jsonschema")
from llguidance.gbnf_to_lark import gbnf_to_lark  # noqa: E402

from test_export_regex import walk  # noqa: E402

SCHEMAS = {
    "boolean": {"type": "boolean"},
    "null": {"type": "null"},
    "integer": {"type": "integer"},
}
SPELLINGS = ["true", "false", "TRUE", "False", "tRuE", "None", "null", "NULL", "nil", "yes"]
SPELLINGS += ["0", "-12", "7", "1e3", "+1", "01", "x", ""]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "f",
            "parameters": {"type": "object", "properties": SCHEMAS, "required": []},
        },
    }
]


def _output(prop: str, spelling: str) -> str:
    return (
        f"<tool_call>\n<function=f>\n<parameter={prop}>\n {spelling}\n</parameter>\n"
        "</function>\n</tool_call>"
    )


def _parser_takes(prop: str, spelling: str) -> bool:
    message = toolparse.parse(_output(prop, spelling), "qwen3_coder", tools=TOOLS)
    if message.errors or len(message.tool_calls) != 1:
        return False
    value = message.tool_calls[0].arguments[prop]
    if prop == "integer" and not isinstance(value, int):
        return False  # 1e3 is an integer to JSON Schema; the exports ask for integer digits
    return jsonschema.Draft202012Validator(SCHEMAS[prop]).is_valid(value)


def taken_with_a_call_required(
    method: str, name: str, tools: list[dict[str, Any]], output: bytes
) -> bool:
    """Whether the format's `method` export ("lark", "regex", "gbnf") for these tools,
    with a call required, takes the output."""
    fmt = get_format(name)
    if method == "lark":
        return run(export.lark(fmt, tools, tool_choice="required"), output) is None
    if method == "gbnf":
        grammar = export.gbnf(fmt, tools, tool_choice="required")["grammar"]
        return run(gbnf_to_lark(grammar), output) is None
    return walk(export.regex(fmt, tools, tool_choice="required"), output) is None


@pytest.mark.parametrize("method", ["lark", "regex", "gbnf"])
@pytest.mark.parametrize("prop", sorted(SCHEMAS))
def test_a_typed_value_is_taken_as_the_parser_reads_it(method: str, prop: str) -> None:
    seen: dict[str, Any] = {}
    for spelling in SPELLINGS:
        taken = taken_with_a_call_required(
            method, "qwen3_coder", TOOLS, _output(prop, spelling).encode()
        )
        seen[spelling] = (taken, _parser_takes(prop, spelling))
    assert all(taken == reads for taken, reads in seen.values()), seen
    assert any(taken for taken, _ in seen.values())  # the case is not vacuous
