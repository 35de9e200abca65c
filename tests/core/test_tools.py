"""toolparse.tools, the one reader of a tools list: the shapes it takes, the entries it
skips or refuses, strict mode, and references followed, as every layer sees them."""

from __future__ import annotations

import re
from typing import Any

import pytest

import toolparse
from engines import ENGINES, FIXTURE_IDS, FIXTURES, Fixture
from toolparse import export
from toolparse.agent import Guard, GuardPolicy, ToolValidator
from toolparse.tools import param_types, read_tools, schema_types, strict_schema

# Tools a Responses request, an agent framework or gpt-oss's harness puts in the same list
# as the functions: none of them is a function a call could name.
NOT_FUNCTIONS: list[dict[str, Any]] = [
    {"type": "web_search_preview"},
    {"type": "code_interpreter", "container": {"type": "auto"}},
    {"type": "file_search", "vector_store_ids": ["vs_1"]},
    {"type": "custom", "name": "grammar_tool", "format": {"type": "text"}},
    {"type": "browser_search"},
    {"type": "mcp", "server_label": "docs", "server_url": "https://example.invalid"},
]


def with_builtins(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The list with a built-in tool before, between and after its functions."""
    mixed: list[dict[str, Any]] = [NOT_FUNCTIONS[0]]
    for position, tool in enumerate(tools):
        mixed += [tool, NOT_FUNCTIONS[1 + position % (len(NOT_FUNCTIONS) - 1)]]
    return mixed


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("fixture", FIXTURES, ids=FIXTURE_IDS)
def test_a_list_with_built_in_tools_parses_as_its_functions(fixture: Fixture, engine: str) -> None:
    plain = fixture.parse(engine, seed=1)
    mixed = toolparse.parse(
        fixture.raw,
        fixture.format,
        tools=with_builtins(fixture.tools),
        engine=engine,
        seed=1,
        finish_reason=fixture.finish,
        **fixture.options,
    )
    assert mixed == plain


@pytest.mark.parametrize("name", ["hermes", "qwen3_coder", "gpt_oss", "minimax_m3", "pythonic"])
def test_the_exports_skip_built_in_tools(name: str) -> None:
    tools = next(f.tools for f in FIXTURES if f.format == name)
    for write in (export.lark, export.gbnf, export.structural_tag):
        assert write(name, with_builtins(tools)) == write(name, tools)


def test_the_agent_layer_skips_built_in_tools() -> None:
    tools = next(f.tools for f in FIXTURES if f.format == "hermes")
    names = [t["function"]["name"] for t in tools]
    assert [t.name for t in read_tools(with_builtins(tools))] == names
    pytest.importorskip("jsonschema_rs")
    assert ToolValidator(with_builtins(tools)).spec(names[0]) is not None
    assert GuardPolicy.from_tools(with_builtins(tools)) == GuardPolicy.from_tools(tools)
    Guard(GuardPolicy.from_tools(with_builtins(tools)))


CHAT = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather",
        "strict": True,
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}
FLAT = {"type": "function", **CHAT["function"]}  # the Responses shape
UNTYPED = dict(CHAT["function"])  # no "type" at all: a function too


def test_the_shapes_read_alike() -> None:
    read = [read_tools([tool])[0] for tool in (CHAT, FLAT, UNTYPED)]
    assert read[0] == read[1] == read[2]
    tool = read[0]
    assert (tool.name, tool.description, tool.strict) == ("get_weather", "Weather", True)
    assert tool.parameters["additionalProperties"] is False
    assert tool.parameters["required"] == ["city"]
    assert CHAT["function"]["parameters"] == {  # the caller's schema is left alone
        "type": "object",
        "properties": {"city": {"type": "string"}},
    }


@pytest.mark.parametrize("engine", ENGINES)
def test_the_flat_shape_parses_as_the_chat_shape(engine: str) -> None:
    text = '<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>'
    chat = toolparse.parse(text, "hermes", tools=[CHAT], engine=engine, seed=0)
    flat = toolparse.parse(text, "hermes", tools=[FLAT], engine=engine, seed=0)
    assert chat == flat and [c.name for c in flat.tool_calls] == ["get_weather"]


@pytest.mark.parametrize(
    ("tools", "error", "says"),
    [
        ([CHAT, FLAT], ValueError, "two tools are named 'get_weather'"),
        (["get_weather"], TypeError, "tools[0] is not an object"),
        ([{"type": "function", "function": "f"}], TypeError, "tools[0].function is not an object"),
        ([NOT_FUNCTIONS[0], {"type": "function"}], ValueError, "tools[1] has no function name"),
        ([{"name": ""}], ValueError, "tools[0] has no function name"),
        ([{"name": "f", "parameters": []}], ValueError, "parameters of tool 'f' are not"),
        ({"name": "f"}, TypeError, "tools must be a list"),
        ("[]", TypeError, "tools must be a list"),
    ],
)
def test_a_bad_list_says_which_entry(tools: Any, error: type[Exception], says: str) -> None:
    with pytest.raises(error, match=re.escape(says)):
        read_tools(tools)
    with pytest.raises(error, match=re.escape(says)):
        toolparse.parse("hi", "hermes", tools=tools)


def test_strict_mode_is_one_reading_for_every_layer() -> None:
    nullable = {"type": ["object", "null"], "properties": {"a": {"type": "integer"}}}
    assert strict_schema(nullable) == {**nullable, "additionalProperties": False, "required": ["a"]}
    loose = {"type": "object", "additionalProperties": True}
    with pytest.raises(ValueError, match="additionalProperties false"):
        strict_schema(loose)
    strict_loose = [
        {"type": "function", "function": {"name": "f", "strict": True, "parameters": loose}}
    ]
    for refused in (lambda: read_tools(strict_loose), lambda: export.lark("hermes", strict_loose)):
        with pytest.raises(ValueError, match="strict mode needs additionalProperties false"):
            refused()


def _xml_tool(parameter: dict[str, Any], defs: dict[str, Any]) -> list[dict[str, Any]]:
    schema = {"type": "object", "properties": {"n": parameter}, "$defs": defs}
    return [{"type": "function", "function": {"name": "f", "parameters": schema}}]


COUNT = {"count": {"type": "integer"}}
TREE = {"tree": {"type": "object", "properties": {"kids": {"items": {"$ref": "#/$defs/tree"}}}}}


@pytest.mark.parametrize(
    ("parameter", "defs", "types"),
    [
        ({"$ref": "#/$defs/count"}, COUNT, ("integer",)),
        ({"allOf": [{"$ref": "#/$defs/count"}], "description": "how many"}, COUNT, ("integer",)),
        # null first: only the text null fits it
        ({"anyOf": [{"$ref": "#/$defs/count"}, {"type": "null"}]}, COUNT, ("null", "integer")),
        ({"$ref": "#/definitions/count"}, {}, ("string",)),  # points at nothing: untyped
        ({"$ref": "https://example.invalid/s.json"}, {}, ("string",)),  # never fetched
        ({"$ref": "#/$defs/tree"}, TREE, ("object",)),  # recursive: cut, not followed forever
    ],
)
def test_references_are_followed_once_for_every_engine(
    parameter: dict[str, Any], defs: dict[str, Any], types: tuple[str, ...]
) -> None:
    tools = _xml_tool(parameter, defs)
    assert param_types(tools) == {"f": {"n": types}}
    text = "<tool_call>\n<function=f>\n<parameter=n>\n5\n</parameter>\n</function>\n</tool_call>"
    # an object parameter refuses the text 5: it fits none of its types
    expected = {"integer": [{"n": 5}], "string": [{"n": "5"}], "object": []}[types[-1]]
    for engine in ENGINES:
        message = toolparse.parse(text, "qwen3_coder", tools=tools, engine=engine)
        assert [c.arguments for c in message.tool_calls] == expected, engine


def test_a_recursive_reference_is_cut_at_a_bounded_depth() -> None:
    (tool,) = read_tools(_xml_tool({"$ref": "#/$defs/tree"}, TREE))
    depth, node = 0, tool.parameter_schemas["n"]
    while "kids" in node.get("properties", {}):
        node, depth = node["properties"]["kids"]["items"], depth + 1
    assert 0 < depth <= 33
    assert schema_types(node) in (("object",), ("string",))


# parameters whose properties are declared in the branches of a top-level combination or
# behind a top-level reference: a tool taking one of several shapes
PAYLOAD = {"type": "object", "properties": {"value": {"type": "string"}}}
TOP_LEVEL = {
    "oneOf": {
        "type": "object",
        "oneOf": [
            {"properties": {"kind": {"const": "a"}, "payload": PAYLOAD}, "required": ["kind"]},
            {"properties": {"kind": {"const": "b"}, "count": {"type": "integer"}}},
        ],
    },
    "anyOf": {
        "anyOf": [{"properties": {"payload": PAYLOAD}}, {"properties": {"count": COUNT["count"]}}]
    },
    "allOf": {"allOf": [{"properties": {"payload": PAYLOAD}}, {"$ref": "#/$defs/counted"}]},
    "$ref": {
        "$ref": "#/$defs/shape",
        "$defs": {"shape": {"properties": {"payload": PAYLOAD, **COUNT}}},
    },
}
TOP_LEVEL["allOf"]["$defs"] = {"counted": {"properties": COUNT}}
# the same call in three XML-style formats that type values by the schema
CALLS = {
    "qwen3_coder": "<tool_call>\n<function=f>\n<parameter=payload>\n{p}\n</parameter>\n"
    "<parameter=count>\n3\n</parameter>\n</function>\n</tool_call>",
    "glm45": "<tool_call>f\n<arg_key>payload</arg_key>\n<arg_value>{p}</arg_value>\n"
    "<arg_key>count</arg_key>\n<arg_value>3</arg_value>\n</tool_call>",
    "dots": '<dots_function_call>\n<invoke name="f">\n<parameter name="payload">{p}</parameter>\n'
    '<parameter name="count">3</parameter>\n</invoke>\n</dots_function_call>',
}


@pytest.mark.parametrize("combination", sorted(TOP_LEVEL))
@pytest.mark.parametrize("name", sorted(CALLS))
def test_parameters_declared_in_a_top_level_combination_are_typed(
    combination: str, name: str
) -> None:
    tools = [{"type": "function", "function": {"name": "f", "parameters": TOP_LEVEL[combination]}}]
    text = CALLS[name].replace("{p}", '{"value": "hello"}')
    for engine in ENGINES:
        message = toolparse.parse(text, name, tools=tools, engine=engine)
        assert not message.errors, (engine, message.errors)
        assert [c.arguments for c in message.tool_calls] == [
            {"payload": {"value": "hello"}, "count": 3}
        ], engine


def test_a_property_declared_in_two_branches_is_read_as_either() -> None:
    schema = {
        "oneOf": [
            {"properties": {"n": {"type": "integer"}}},
            {"properties": {"n": {"type": "boolean"}}},
        ]
    }
    tools = [{"type": "function", "function": {"name": "f", "parameters": schema}}]
    assert param_types(tools) == {"f": {"n": ("integer", "boolean")}}
