"""Schema validation of tool calls (toolparse.agent.validate): the issues it reports, strict
mode, unknown tools, the feedback for the model and its example calls in every format."""

from __future__ import annotations

import copy
import json
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toolparse
from engines import FIXTURE_IDS, FIXTURES, Fixture
from toolparse import FORMATS, Message, ToolCall
from toolparse.agent.validate import (
    INSTALL_HINT,
    MISSING,
    ToolValidator,
    ValidationIssue,
    describe_value,
    format_path,
    render_call,
    validate,
)
from toolparse.tools import read_tools, strict_schema

try:
    import jsonschema_rs  # noqa: F401

    HAVE_BACKEND = True
except ImportError:
    HAVE_BACKEND = False

needs_backend = pytest.mark.skipif(not HAVE_BACKEND, reason="jsonschema-rs is not installed")


def function(name: str, parameters: dict[str, Any] | None, strict: bool = False) -> dict[str, Any]:
    spec: dict[str, Any] = {"name": name}
    if parameters is not None:
        spec["parameters"] = parameters
    if strict:
        spec["strict"] = True
    return {"type": "function", "function": spec}


GET_WEATHER = function(
    "get_weather",
    {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "days": {"type": "integer", "minimum": 1, "maximum": 14},
            "units": {"type": "string", "enum": ["metric", "imperial"]},
        },
        "required": ["city"],
    },
)
# Strict, written the way OpenAI's documentation writes them: additionalProperties and
# required left to strict mode here, so the normalisation is what is tested.
CREATE_EVENT = function(
    "create_event",
    {
        "type": "object",
        "properties": {
            "title": {"type": "string"},
            "duration_minutes": {"type": "integer"},
            "attendees": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"email": {"type": "string"}, "optional": {"type": "boolean"}},
                },
            },
            "location": {
                "anyOf": [
                    {
                        "type": "object",
                        "properties": {
                            "name": {"type": "string"},
                            "address": {"type": ["string", "null"]},
                        },
                    },
                    {"type": "null"},
                ]
            },
        },
    },
    strict=True,
)
SEARCH_FLIGHTS = function(
    "search_flights",
    {
        "$defs": {
            "Passenger": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
                "required": ["name", "age"],
            }
        },
        "type": "object",
        "properties": {
            "origin": {"type": "string"},
            "passengers": {"type": "array", "items": {"$ref": "#/$defs/Passenger"}, "minItems": 1},
            "cabin": {"type": "string", "enum": ["economy", "business"]},
        },
        "required": ["origin", "passengers"],
    },
)
WRITE_FILE = function(
    "write_file",
    {
        "type": "object",
        "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
        "required": ["path", "content"],
        "additionalProperties": False,
    },
)
GET_TIME = function("get_time", None)
TOOLS = [GET_WEATHER, CREATE_EVENT, SEARCH_FLIGHTS, WRITE_FILE, GET_TIME]

VALID_EVENT = {
    "title": "Sync",
    "duration_minutes": 30,
    "attendees": [{"email": "a@example.com", "optional": False}],
    "location": {"name": "Room 1", "address": None},
}


def call(name: str, arguments: dict[str, Any], index: int = 0, repaired: bool = False) -> ToolCall:
    return ToolCall(index, f"call_{index}", name, arguments, json.dumps(arguments), repaired)


@pytest.fixture(scope="module")
def validator() -> ToolValidator:
    if not HAVE_BACKEND:
        pytest.skip("jsonschema-rs is not installed")
    return ToolValidator(TOOLS, format="hermes")


def issues(validator: ToolValidator, name: str, arguments: dict[str, Any]) -> list[tuple]:
    result = validator.validate_call(call(name, arguments))
    return [(i.path, i.keyword) for i in result.issues]


# ---------------------------------------------------------------------------------------
# The issues


@needs_backend
def test_valid_arguments_pass(validator: ToolValidator) -> None:
    for name, arguments in [
        ("get_weather", {"city": "Paris"}),
        ("get_weather", {"city": "Paris", "days": 3, "units": "metric"}),
        ("create_event", VALID_EVENT),
        ("search_flights", {"origin": "CDG", "passengers": [{"name": "Ana", "age": 3}]}),
        ("write_file", {"path": "a.txt", "content": ""}),
        ("get_time", {}),
    ]:
        result = validator.validate_call(call(name, arguments))
        assert result.ok and result.status == "valid", (name, result.issues)
        assert result.issues == () and result.feedback == ""


@needs_backend
def test_missing_required_field(validator: ToolValidator) -> None:
    result = validator.validate_call(call("get_weather", {"units": "metric"}))
    assert result.status == "invalid_arguments"
    assert result.issues == (
        ValidationIssue(("city",), "required", "a string (required)", MISSING),
    )
    assert result.issues[0].message == f"city: expected a string (required), found {MISSING}"


@needs_backend
def test_wrong_types(validator: ToolValidator) -> None:
    result = validator.validate_call(call("get_weather", {"city": 3, "days": "3"}))
    assert [(i.path, i.keyword, i.expected, i.found) for i in result.issues] == [
        (("city",), "type", "a string", "the integer 3"),
        (("days",), "type", "an integer", 'the string "3"'),
    ]


@needs_backend
def test_booleans_are_not_numbers_and_whole_floats_are_integers(validator: ToolValidator) -> None:
    result = validator.validate_call(call("get_weather", {"city": "Oslo", "days": True}))
    assert [(i.path, i.found) for i in result.issues] == [(("days",), "the boolean true")]
    # JSON Schema: an integer is a number with a zero fractional part (2.0 included).
    assert validator.validate_call(call("get_weather", {"city": "Oslo", "days": 2.0})).ok
    result = validator.validate_call(call("get_weather", {"city": "Oslo", "days": 2.5}))
    assert [(i.keyword, i.found) for i in result.issues] == [("type", "the number 2.5")]


@needs_backend
def test_enum_and_bounds(validator: ToolValidator) -> None:
    result = validator.validate_call(call("get_weather", {"city": "Oslo", "units": "kelvin"}))
    assert [(i.path, i.keyword, i.expected) for i in result.issues] == [
        (("units",), "enum", 'one of "metric", "imperial"')
    ]
    result = validator.validate_call(call("get_weather", {"city": "Oslo", "days": 30}))
    assert [(i.path, i.keyword, i.expected) for i in result.issues] == [
        (("days",), "maximum", "a number <= 14")
    ]


@needs_backend
def test_nested_objects_and_arrays(validator: ToolValidator) -> None:
    # Through a $ref in an array of objects.
    arguments = {"origin": "CDG", "passengers": [{"name": "Ana", "age": 3}, {"name": "Leo"}]}
    assert issues(validator, "search_flights", arguments) == [
        (("passengers", 1, "age"), "required")
    ]
    arguments = {"origin": "CDG", "passengers": [{"name": "Ana", "age": "3"}]}
    result = validator.validate_call(call("search_flights", arguments))
    assert result.issues[0].location == "passengers[0].age"
    assert result.issues[0].expected == "an integer"
    assert issues(validator, "search_flights", {"origin": "CDG", "passengers": []}) == [
        (("passengers",), "minItems")
    ]


@needs_backend
def test_a_union_reports_the_alternative_the_value_was_meant_for(
    validator: ToolValidator,
) -> None:
    # location is an object or null: a wrong field inside the object is reported there.
    arguments = dict(VALID_EVENT, location={"name": 3, "address": None})
    assert issues(validator, "create_event", arguments) == [(("location", "name"), "type")]
    # A value that is neither: the union itself.
    result = validator.validate_call(call("create_event", dict(VALID_EVENT, location=5)))
    assert [(i.path, i.keyword, i.expected) for i in result.issues] == [
        (("location",), "anyOf", "an object or null")
    ]


@needs_backend
def test_additional_properties(validator: ToolValidator) -> None:
    # write_file closes its object itself.
    arguments = {"path": "a", "content": "b", "mode": "w", "force": True}
    result = validator.validate_call(call("write_file", arguments))
    assert [(i.path, i.keyword) for i in result.issues] == [
        (("mode",), "additionalProperties"),
        (("force",), "additionalProperties"),
    ]
    assert result.issues[0].expected == "only the fields path, content"
    assert result.issues[0].found == 'an extra field (the string "w")'
    # get_weather does not: JSON Schema allows extra fields unless told otherwise.
    assert validator.validate_call(call("get_weather", {"city": "Oslo", "note": "x"})).ok


@needs_backend
def test_strict_tools_are_closed_and_complete(validator: ToolValidator) -> None:
    # Extra fields are refused at every level, though the schema never says so.
    extra = dict(VALID_EVENT, notes="x")
    assert issues(validator, "create_event", extra) == [(("notes",), "additionalProperties")]
    nested = dict(VALID_EVENT, attendees=[{"email": "a@example.com", "optional": False, "x": 1}])
    assert issues(validator, "create_event", nested) == [
        (("attendees", 0, "x"), "additionalProperties")
    ]
    inside_union = dict(VALID_EVENT, location={"name": "Room", "address": None, "floor": 2})
    assert issues(validator, "create_event", inside_union) == [
        (("location", "floor"), "additionalProperties")
    ]
    # Every property is required, at every level; null stands for "not given".
    missing = {k: v for k, v in VALID_EVENT.items() if k != "location"}
    assert issues(validator, "create_event", missing) == [(("location",), "required")]
    attendee = dict(VALID_EVENT, attendees=[{"email": "a@example.com"}])
    assert issues(validator, "create_event", attendee) == [
        (("attendees", 0, "optional"), "required")
    ]
    assert validator.validate_call(call("create_event", dict(VALID_EVENT, location=None))).ok


def test_strict_schema_follows_openai_strict_mode() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "object", "properties": {"b": {"type": "string"}}},
            "c": {"type": "array", "items": {"$ref": "#/$defs/D"}},
        },
        "required": ["a"],
        "$defs": {"D": {"type": "object", "properties": {"e": {"type": "integer"}}}},
    }
    before = copy.deepcopy(schema)
    strict = strict_schema(schema)
    assert schema == before  # a copy
    assert strict["required"] == ["a", "c"] and strict["additionalProperties"] is False
    assert strict["properties"]["a"]["required"] == ["b"]
    assert strict["properties"]["a"]["additionalProperties"] is False
    assert strict["$defs"]["D"] == {
        "type": "object",
        "properties": {"e": {"type": "integer"}},
        "additionalProperties": False,
        "required": ["e"],
    }


def test_a_strict_schema_cannot_allow_extra_fields() -> None:
    open_object = {"type": "object", "properties": {}, "additionalProperties": True}
    with pytest.raises(ValueError, match="strict mode needs additionalProperties false"):
        strict_schema(open_object, tool="t")
    with pytest.raises(ValueError, match="tool 'loose'"):
        read_tools([function("loose", open_object, strict=True)])


@needs_backend
def test_tools_without_parameters_take_no_arguments_when_strict() -> None:
    loose = ToolValidator([function("now", None)])
    assert loose.validate_call(call("now", {})).ok
    strict = ToolValidator([function("now", None, strict=True)])
    assert strict.validate_call(call("now", {})).ok
    result = strict.validate_call(call("now", {"tz": "UTC"}))
    assert [(i.path, i.keyword, i.expected) for i in result.issues] == [
        (("tz",), "additionalProperties", "no fields at all")
    ]


# ---------------------------------------------------------------------------------------
# Unknown tools, the tools list, the backend


@needs_backend
def test_unknown_tool_is_its_own_error(validator: ToolValidator) -> None:
    result = validator.validate_call(call("get_wether", {"city": "Oslo"}))
    assert result.status == "unknown_tool" and not result.ok
    assert [(i.path, i.keyword) for i in result.issues] == [((), "unknown_tool")]
    assert result.issues[0].found == 'the tool name "get_wether"'
    assert result.feedback.splitlines()[0] == (
        'There is no tool named "get_wether". Did you mean get_weather?'
    )
    assert "get_weather, create_event, search_flights, write_file, get_time" in result.feedback
    assert result.example is not None and "get_weather" in result.example
    # With nothing close, no guess and no example.
    result = validator.validate_call(call("rm_rf", {}))
    assert "Did you mean" not in result.feedback and result.example is None


@needs_backend
def test_tools_list_shapes() -> None:
    flat = {"type": "function", "name": "ping", "parameters": {"type": "object"}, "strict": True}
    builtin = {"type": "web_search"}
    validator = ToolValidator([flat, builtin, GET_WEATHER])
    assert validator.names == ("ping", "get_weather")
    assert validator.spec("ping") is not None and validator.spec("ping").strict  # type: ignore[union-attr]
    assert not validator.validate_call(call("ping", {"x": 1})).ok
    with pytest.raises(ValueError, match="two tools are named 'get_weather'"):
        ToolValidator([GET_WEATHER, GET_WEATHER])
    with pytest.raises(ValueError, match="no function name"):
        ToolValidator([{"type": "function", "function": {"parameters": {}}}])


@needs_backend
def test_unusable_schemas_are_refused_when_compiled() -> None:
    bad_type = function("bad", {"type": "object", "properties": {"a": {"type": "text"}}})
    with pytest.raises(ValueError, match="tool 'bad'"):
        ToolValidator([bad_type])
    # A remote $ref is never fetched.
    remote = function(
        "remote", {"type": "object", "properties": {"a": {"$ref": "https://x.test/s"}}}
    )
    with pytest.raises(ValueError, match="tool 'remote'"):
        ToolValidator([remote])


def test_missing_backend_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "jsonschema_rs", None)
    with pytest.raises(ImportError, match=r"toolparse\[validate\]") as caught:
        ToolValidator(TOOLS)
    assert str(caught.value) == INSTALL_HINT


# ---------------------------------------------------------------------------------------
# Feedback for the model


@needs_backend
def test_feedback_names_the_field_the_expectation_and_an_example(
    validator: ToolValidator,
) -> None:
    result = validator.validate_call(call("get_weather", {"city": 3, "units": "kelvin"}))
    assert result.feedback == "\n".join(
        [
            "The call to get_weather has invalid arguments:",
            "- city: expected a string, found the integer 3",
            '- units: expected one of "metric", "imperial", found the string "kelvin"',
            '<tool_call>{"name": "get_weather", "arguments": {"city": "..."}}</tool_call>',
        ]
    ).replace("<tool_call>", "A valid call: <tool_call>", 1)


@needs_backend
def test_feedback_example_is_a_valid_call_in_the_active_format() -> None:
    for format_name in ("qwen3_coder", "pythonic", "gemma4", "mistral"):
        validator = ToolValidator(TOOLS, format=format_name)
        result = validator.validate_call(call("write_file", {"path": 1}))
        example = result.feedback.splitlines()[-1].removeprefix("A valid call: ")
        assert example == result.example
        message = toolparse.parse(example, format_name, tools=TOOLS, reasoning_in_prompt=False)
        assert [(c.name, c.arguments) for c in message.tool_calls] == [
            ("write_file", {"path": "...", "content": "..."})
        ]
        assert validator.validate(message).ok


@needs_backend
def test_feedback_without_a_format_uses_the_generic_json_call() -> None:
    validator = ToolValidator(TOOLS)
    result = validator.validate_call(call("get_weather", {}))
    assert result.example == '{"name": "get_weather", "arguments": {"city": "..."}}'


@needs_backend
def test_long_feedback_is_capped_but_every_issue_is_kept() -> None:
    properties = {f"f{i}": {"type": "integer"} for i in range(10)}
    validator = ToolValidator([function("many", {"type": "object", "properties": properties})])
    result = validator.validate_call(call("many", {f"f{i}": "x" for i in range(10)}))
    assert len(result.issues) == 10
    assert "- and 4 more" in result.feedback


@needs_backend
def test_no_example_when_the_schema_has_no_simple_valid_value() -> None:
    pattern = {
        "type": "object",
        "properties": {"code": {"type": "string", "pattern": "^[A-Z]{3}$"}},
        "required": ["code"],
    }
    validator = ToolValidator([function("airport", pattern)], format="hermes")
    assert validator.minimal_arguments("airport") is None
    result = validator.validate_call(call("airport", {"code": "cdg"}))
    assert result.example is None
    assert result.feedback.splitlines() == [
        "The call to airport has invalid arguments:",
        '- code: expected a string matching ^[A-Z]{3}$, found the string "cdg"',
    ]


@needs_backend
def test_minimal_arguments(validator: ToolValidator) -> None:
    assert validator.minimal_arguments("get_weather") == {"city": "..."}
    assert validator.minimal_arguments("get_time") == {}
    assert validator.minimal_arguments("search_flights") == {
        "origin": "...",
        "passengers": [{"name": "...", "age": 0}],
    }
    assert validator.minimal_arguments("create_event") == {
        "title": "...",
        "duration_minutes": 0,
        "attendees": [],
        "location": {"name": "...", "address": "..."},
    }


def test_describing_paths_and_values() -> None:
    assert format_path(()) == "the arguments"
    assert format_path(("a", 0, "b c", "d")) == 'a[0]["b c"].d'
    assert describe_value(None) == "null"
    assert describe_value([1]) == "an array of 1 item"
    assert describe_value([1, 2]) == "an array of 2 items"
    assert describe_value({}) == "an empty object"
    assert describe_value("x" * 50) == 'the string "' + "x" * 37 + '..."'


# ---------------------------------------------------------------------------------------
# Example calls in every format


EXAMPLE_TOOLS = [
    GET_TIME,
    function(
        "lookup", {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
    ),
    function(
        "configure",
        {
            "type": "object",
            "properties": {
                "level": {"type": "integer", "minimum": 2},
                "mode": {"type": "string", "enum": ["fast", "safe"]},
                "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1},
                "limits": {
                    "type": "object",
                    "properties": {"cpu": {"type": "number"}, "on": {"type": "boolean"}},
                    "required": ["cpu", "on"],
                },
            },
            "required": ["level", "mode", "tags", "limits"],
        },
    ),
]


@needs_backend
@pytest.mark.parametrize("format_name", sorted(FORMATS))
def test_every_format_has_a_valid_example_call(format_name: str) -> None:
    validator = ToolValidator(EXAMPLE_TOOLS, format=format_name)
    for tool in EXAMPLE_TOOLS:
        name = tool["function"]["name"]
        example = validator.example_call(name)
        if not FORMATS[format_name].tool_calls:  # a reasoning-only format writes no call
            assert example is None
            continue
        assert example is not None, (format_name, name)
        message = toolparse.parse(
            example, format_name, tools=EXAMPLE_TOOLS, reasoning_in_prompt=False
        )
        assert not message.errors and not (message.content or "").strip()
        assert [(c.name, c.arguments) for c in message.tool_calls] == [
            (name, validator.minimal_arguments(name))
        ]
        assert validator.validate(message).ok
        # One line, unless the format needs its line breaks.
        if "\n" in example:
            flat = toolparse.parse(
                example.replace("\n", ""),
                format_name,
                tools=EXAMPLE_TOOLS,
                reasoning_in_prompt=False,
            )
            assert flat.errors or flat.content or flat.tool_calls != message.tool_calls[:1]


def test_render_call_checks_what_it_writes() -> None:
    tool = function("lookup", {"type": "object", "properties": {"q": {"type": "string"}}})
    assert render_call("hermes", tool, {"q": "x"}) == (
        '<tool_call>{"name": "lookup", "arguments": {"q": "x"}}</tool_call>'
    )
    assert render_call("pythonic", tool, {"q": "it's"}) == """[lookup(q="it's")]"""
    # Text the format cannot carry is not offered as an example.
    assert render_call("gemma4", tool, {"q": 'a<|"|>b'}) is None
    assert render_call("glm45", tool, {"q": "a</arg_value></tool_call>"}) is None


# ---------------------------------------------------------------------------------------
# Responses, and the fixtures of every format


@needs_backend
def test_validate_a_message(validator: ToolValidator) -> None:
    text = (
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>'
        '<tool_call>{"name": "write_file", "arguments": {"path": "a"}}</tool_call>'
        '<tool_call>{"name": "nope", "arguments": {}}</tool_call>'
    )
    message = toolparse.parse(text, "hermes")
    report = validator.validate(message)
    assert [r.status for r in report.results] == ["valid", "invalid_arguments", "unknown_tool"]
    assert not report.ok and report.failures == report.results[1:]
    assert report.feedback == report.results[1].feedback + "\n\n" + report.results[2].feedback
    assert report.for_call(message.tool_calls[1]) is report.results[1]
    assert report.for_call(call("get_weather", {"city": "Rome"})) is None
    assert validate(message, TOOLS, format="hermes") == report
    assert validator.validate(Message()).ok


@needs_backend
@pytest.mark.parametrize("fixture", FIXTURES, ids=FIXTURE_IDS)
def test_fixture_calls(fixture: Fixture) -> None:
    message = fixture.parse("native")
    validator = ToolValidator(fixture.tools, format=fixture.format)
    report = validator.validate(message)
    names = set(validator.names)
    assert [r.call for r in report.results] == message.tool_calls
    for result in report.results:
        assert (result.status == "unknown_tool") == (result.call.name not in names)
        assert result.ok == (not result.issues) == (result.feedback == "")
        for issue in result.issues[:6]:
            assert issue.message in result.feedback
        if result.status == "invalid_arguments" and result.example is not None:
            example = toolparse.parse(
                result.example, fixture.format, tools=fixture.tools, reasoning_in_prompt=False
            )
            assert validator.validate(example).ok and len(example.tool_calls) == 1


# ---------------------------------------------------------------------------------------
# Properties


JSON_VALUES = {
    "string": st.text(max_size=5),
    "integer": st.integers(-(10**6), 10**6),
    "number": st.floats(allow_nan=False, allow_infinity=False, width=32),
    "boolean": st.booleans(),
}
TYPED = function(
    "typed",
    {
        "type": "object",
        "properties": {k: {"type": k} for k in JSON_VALUES},
        "required": list(JSON_VALUES),
        "additionalProperties": False,
    },
)


def _wrong_value(kind: str) -> st.SearchStrategy[Any]:
    others = [v for k, v in JSON_VALUES.items() if k != kind]
    wrong = st.one_of(*others, st.none(), st.lists(st.integers(), max_size=2))
    if kind == "number":  # every integer is a number
        wrong = wrong.filter(lambda v: isinstance(v, bool) or not isinstance(v, (int, float)))
    if kind == "integer":
        wrong = wrong.filter(lambda v: not (isinstance(v, float) and v.is_integer()))
    return wrong


@needs_backend
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_a_wrong_type_is_reported_at_its_field(data: st.DataObject) -> None:
    validator = ToolValidator([TYPED])
    arguments = {k: data.draw(v) for k, v in JSON_VALUES.items()}
    assert validator.validate_call(call("typed", arguments)).ok
    broken = data.draw(st.sampled_from(sorted(JSON_VALUES)))
    arguments[broken] = data.draw(_wrong_value(broken))
    result = validator.validate_call(call("typed", arguments))
    assert [(i.path, i.keyword) for i in result.issues] == [((broken,), "type")]
    assert result.issues[0].found == describe_value(arguments[broken])
