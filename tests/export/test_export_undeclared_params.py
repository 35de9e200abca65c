"""Parameters the schema does not declare, in formats that name each parameter (qwen3_coder's
`<parameter=NAME>`, glm45's `<arg_key>NAME</arg_key>`): the parser reads one as a string,
so each export takes it where the schema allows other properties, and refuses it where the
schema or strict mode does not.  A name that begins like a declared one, or holds one, is
an undeclared name, never the declared parameter with its type.

Where a value ends only before a parameter the tool declares (both formats), the parser
reads an undeclared parameter after a value as text of that value: the exports write
declared parameters only there (an undeclared one only for a tool that declares none)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toolparse

jsonschema = pytest.importorskip("jsonschema")
from test_export_typed_values import taken_with_a_call_required  # noqa: E402

PROPERTIES = {"city": {"type": "string"}, "days": {"type": "integer"}}
# formats whose values end only before a declared parameter (grammar.declared_param())
DECLARED_ENDS = {"dots", "glm45", "hunyuan", "minicpm5", "qwen3_coder"}


def _tool(**schema: Any) -> dict[str, Any]:
    parameters = {"type": "object", "properties": PROPERTIES, **schema}
    return {"type": "function", "function": {"name": "f", "parameters": parameters}}


OPEN = [_tool()]
CLOSED = [_tool(additionalProperties=False)]
STRICT = [{"type": "function", "function": {**_tool()["function"], "strict": True}}]

OUTPUTS = {
    "qwen3_coder": "<tool_call>\n<function=f>\n<parameter={name}>\n{value}\n</parameter>\n"
    "</function>\n</tool_call>",
    "glm45": "<tool_call>f\n<arg_key>{name}</arg_key>\n<arg_value>{value}</arg_value>\n"
    "</tool_call>",
    "dots": '<dots_function_call>\n<invoke name="f">\n<parameter name="{name}">{value}'
    "</parameter>\n</invoke>\n</dots_function_call>",
    "hunyuan": "<tool_calls><tool_call>f<arg_key:opensource>{name}</arg_key:opensource>"
    "<arg_value>{value}</arg_value></tool_call></tool_calls>",
    "minicpm5": '<function name="f"><param name="{name}">{value}</param></function>',
}
# pieces of names: the declared names, their beginnings and characters around them, and
# characters of the formats' markers
NAME_PIECES = ["city", "days", "c", "ci", "d", "da", "y", "s", "x", "_", " ", "é", "<", "/", "="]
VALUES = ["Oslo", "3", "x3", ""]


# (method, format) pairs left out: llguidance's GBNF-to-Lark conversion, which these tests
# run GBNF through, refuses hunyuan's plain calls (its markers' two spellings), so only
# the GBNF's compiling is tested there (test_export_gbnf.py)
_CONVERSION_REFUSES = {("gbnf", "hunyuan")}
_PAIRS = [
    (m, n)
    for m in ("lark", "regex", "gbnf")
    for n in sorted(OUTPUTS)
    if (m, n) not in _CONVERSION_REFUSES
]


def _parser_reads(name: str, output: str, tools: list[dict[str, Any]]) -> bool:
    """Whether the parser reads one call whose arguments meet the schema."""
    message = toolparse.parse(output, name, tools=tools)
    if message.errors or len(message.tool_calls) != 1:
        return False
    schema = tools[0]["function"]["parameters"]
    if tools[0]["function"].get("strict"):
        # strict: no other properties (the exports do not enforce required parameters
        # in these formats, docs/export.md)
        schema = {**schema, "additionalProperties": False}
    return jsonschema.Draft202012Validator(schema).is_valid(message.tool_calls[0].arguments)


@pytest.mark.parametrize(("method", "name"), _PAIRS)
@settings(max_examples=25, deadline=None)
@given(
    pieces=st.lists(st.sampled_from(NAME_PIECES), max_size=4),
    value=st.sampled_from(VALUES),
    tools=st.sampled_from([OPEN, CLOSED, STRICT]),
)
def test_an_undeclared_parameter_is_taken_as_the_parser_reads_it(
    method: str, name: str, pieces: list[str], value: str, tools: list[dict[str, Any]]
) -> None:
    param = "".join(pieces)
    output = OUTPUTS[name].format(name=param, value=value)
    if (tools is STRICT or name in DECLARED_ENDS) and param not in PROPERTIES:
        # strict, or a format that reads an undeclared parameter after a value as text
        assert not taken_with_a_call_required(method, name, tools, output.encode())
        return
    reads = _parser_reads(name, output, tools)
    if "<" in param:
        # the first character of a marker (glm45's `</arg_key>`) in an undeclared name:
        # refused, whatever the parser reads (docs/export.md)
        assert not taken_with_a_call_required(method, name, tools, output.encode()) or reads
        return
    assert taken_with_a_call_required(method, name, tools, output.encode()) == reads, (param, value)


@pytest.mark.parametrize(("method", "name"), _PAIRS)
def test_undeclared_parameters_as_the_schema_allows(method: str, name: str) -> None:
    def output(param: str, value: str) -> bytes:
        return OUTPUTS[name].format(name=param, value=value).encode()

    # a declared parameter keeps its type; a name that only begins like one is text
    assert taken_with_a_call_required(method, name, OPEN, output("days", "3"))
    assert not taken_with_a_call_required(method, name, OPEN, output("days", "x3"))
    for param in ("dayss", "day", "cityx", "note", "ä"):
        taken = taken_with_a_call_required(method, name, OPEN, output(param, "x3"))
        assert taken == (name not in DECLARED_ENDS)
        assert not taken_with_a_call_required(method, name, CLOSED, output(param, "x3"))
        assert not taken_with_a_call_required(method, name, STRICT, output(param, "x3"))
