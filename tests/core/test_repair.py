"""The repair opt-in: repair_arguments() reads lenient, cut-off JSON and gives strict JSON
and the repairs it did, or None; StreamParser(repair=True) salvages calls only where it
is asked to."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engines import ENGINES, run_events
from toolparse import ParseError, StreamParser, ToolCallArgsDelta, ToolCallEnd, parse
from toolparse.repair import NothingLeft, coerce_arguments, repair_arguments
from toolparse.tools import stated_schemas

by_engine = pytest.mark.parametrize("engine", ENGINES)


@pytest.mark.parametrize(
    ("text", "repaired", "repairs"),
    [
        ('{"a": 1}', {"a": 1}, ("lenient_arguments",)),
        (
            "{'a': 'x', b: True, c: None, d: False,}",
            {"a": "x", "b": True, "c": None, "d": False},
            ("lenient_arguments",),
        ),
        (
            '{"a": [1, 2,], "b": {"c": null,},}',
            {"a": [1, 2], "b": {"c": None}},
            ("lenient_arguments",),
        ),
        (
            '{"a": "it\\u2019s \\ud83d\\ude00 \\n"}',
            {"a": "it\u2019s \U0001f600 \n"},
            ("lenient_arguments",),
        ),
        ('{"a": "lone \\ud800!"}', {"a": "lone \ufffd!"}, ("lenient_arguments",)),
        # a comma left out before the next key, or before an array's next string, object
        # or array
        (
            '{"a": 1 "b": "x"\n c: [{"d": 1} {"e": 2} "f" \'g\'] "h": true}',
            {"a": 1, "b": "x", "c": [{"d": 1}, {"e": 2}, "f", "g"], "h": True},
            ("lenient_arguments",),
        ),
        # cut off: a string keeps its text, containers close, a literal takes its only
        # completion; a member whose value never began, or was a number, goes
        ('{"a": "hel', {"a": "hel"}, ("closed_at_end",)),
        ('{"a": [1, {"b": 2', {"a": [1, {}]}, ("closed_at_end", "dropped_member")),
        ('{"a": tr', {"a": True}, ("closed_at_end",)),
        ('{"a": n', {"a": None}, ("closed_at_end",)),
        ('{"b": 0, "a": 1.', {"b": 0}, ("closed_at_end", "dropped_member")),
        ('{"b": [1, 2', {"b": [1]}, ("closed_at_end",)),
        ('{"a": 1, "b', {"a": 1}, ("closed_at_end", "dropped_member")),
        ('{"a": 1, "b":', {"a": 1}, ("closed_at_end", "dropped_member")),
        ('{"a": 1, "b": -', {"a": 1}, ("closed_at_end", "dropped_member")),
        ('{"a": "x\\', {"a": "x"}, ("closed_at_end",)),
        ('{"a": "x\\u00', {"a": "x"}, ("closed_at_end",)),
        ("{", {}, ("closed_at_end",)),
    ],
)
def test_repair_reads_what_can_be_read(
    text: str, repaired: dict[str, Any], repairs: tuple[str, ...]
) -> None:
    fixed = repair_arguments(text)
    assert fixed is not None
    assert json.loads(fixed[0]) == repaired
    assert fixed == (json.dumps(repaired, ensure_ascii=False), repairs)


def test_the_end_of_the_output_standing_for_the_closing_is_named() -> None:
    assert repair_arguments('{"a": 1}', closed_at_end=True) == ('{"a": 1}', ("closed_at_end",))
    assert repair_arguments("{'a': 'x'", closed_at_end=True) == (
        '{"a": "x"}',
        ("closed_at_end", "lenient_arguments"),
    )


@pytest.mark.parametrize(
    "text",
    [
        "",
        "[1, 2]",
        '"a"',
        '{"a": x}',
        '{"a": 1} trailing',
        '{"a": 1.2.3}',
        '{"a" 1}',
        "{a b}",
        '{"a": [1 2]}',
        '{"a": 1 2}',
        '{"a": ["x" true]}',
    ],
)
def test_repair_does_not_guess(text: str) -> None:
    assert repair_arguments(text) is None


@pytest.mark.parametrize("text", ['{"a": 12', '{"a', '{"a": "x", "a', '{"n": -'])
def test_arguments_of_which_nothing_is_left_are_no_repair(text: str) -> None:
    if text.startswith('{"a": "x"'):
        # one member survives: that is a repair
        assert repair_arguments(text) == ('{"a": "x"}', ("closed_at_end", "dropped_member"))
        return
    with pytest.raises(NothingLeft):
        repair_arguments(text)


json_objects = st.dictionaries(
    st.text(max_size=6),
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=8),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
        max_leaves=8,
    ),
    max_size=4,
)


@settings(max_examples=200, deadline=None)
@given(value=json_objects, indent=st.sampled_from([None, 2]))
def test_a_whole_object_is_itself_and_every_cut_of_it_is_an_object(
    value: dict[str, Any], indent: int | None
) -> None:
    text = json.dumps(value, indent=indent, ensure_ascii=False)
    whole = (json.dumps(value, ensure_ascii=False), ("lenient_arguments",))
    assert repair_arguments(text) == whole
    for cut in range(1, len(text)):
        try:
            fixed = repair_arguments(text[:cut])
        except NothingLeft:
            continue  # every member that began was cut off
        assert fixed is not None, text[:cut]
        assert isinstance(json.loads(fixed[0]), dict)
        assert "closed_at_end" in fixed[1]


# --- the opt-in ---------------------------------------------------------------------------------

CUT_OFF_XML = '<tool_call><name>get_weather</name><args>{"city": "Par'


@by_engine
def test_without_repair_a_cut_off_call_is_an_error(engine: str) -> None:
    message = parse(CUT_OFF_XML, "generic_xml", engine=engine)
    assert message.tool_calls == []
    assert [e.kind for e in message.errors] == ["incomplete"]


@by_engine
@pytest.mark.parametrize("reason", ["stop", "length"])
def test_with_repair_it_is_salvaged_marked_and_sent_whole(engine: str, reason: str) -> None:
    events = run_events(
        StreamParser("generic_xml", engine=engine, repair=True),
        CUT_OFF_XML.encode(),
        [1] * len(CUT_OFF_XML),
        reason,
    )
    deltas = [e for e in events if isinstance(e, ToolCallArgsDelta)]
    (end,) = [e for e in events if isinstance(e, ToolCallEnd)]
    assert [d.text for d in deltas] == ['{"city": "Par"}']  # held until the call ended
    assert end.call.repaired
    assert end.call.repairs == ("closed_at_end",)
    assert end.call.arguments == {"city": "Par"}
    assert not [e for e in events if isinstance(e, ParseError)]


@by_engine
def test_repair_never_invents_arguments(engine: str) -> None:
    message = parse(
        "<tool_call><name>get_weather</name>", "generic_xml", engine=engine, repair=True
    )
    assert message.tool_calls == []
    assert [e.kind for e in message.errors] == ["incomplete"]


# --- coercion to the schema's types -------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "types", "coerced"),
    [
        ("2", ("integer",), 2),
        (" -7 ", ("integer",), -7),
        ("2.5", ("number",), 2.5),
        ("3", ("number",), 3),
        ("true", ("boolean",), True),
        ("False", ("boolean",), False),
        ("null", ("integer", "null"), None),
        ('{"a": 1}', ("object",), {"a": 1}),
        ("[1, 2]", ("array",), [1, 2]),
        (5, ("string",), "5"),
        (2.5, ("string",), "2.5"),
        (True, ("string",), "true"),
        ("2", ("boolean", "integer"), 2),
    ],
)
def test_a_value_that_fits_only_once_converted_is_converted(
    value: Any, types: tuple[str, ...], coerced: Any
) -> None:
    assert coerce_arguments({"v": value, "w": "x"}, {"v": types}) == {"v": coerced, "w": "x"}


@pytest.mark.parametrize(
    ("value", "types"),
    [
        ("2", ("string",)),  # it fits as it is
        (2, ("integer",)),
        (2.0, ("integer",)),
        (1, ("boolean", "integer")),
        ("two", ("integer",)),  # nothing converts it: left for the validator
        ("2.5", ("integer",)),  # an integer is not guessed from a fraction
        ("1e999", ("number",)),
        ("yes", ("boolean",)),
        ("[1]", ("object",)),
        ('{"a": 1, "a": 2}', ("object",)),
        ({"a": 1}, ("string",)),
        ("x", ()),
    ],
)
def test_a_value_that_fits_or_converts_to_nothing_stays(value: Any, types: tuple[str, ...]) -> None:
    assert coerce_arguments({"v": value}, {"v": types} if types else {}) is None


TYPED_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "f",
            "parameters": {
                "type": "object",
                "properties": {"n": {"type": "integer"}, "s": {"type": "string"}, "any": {}},
            },
        },
    }
]


@by_engine
def test_repair_mode_coerces_the_values_and_names_it(engine: str) -> None:
    text = '<tool_call>\n{"name": "f", "arguments": {"n": "2", "s": 5, "any": "7"}}\n</tool_call>'
    strict = parse(text, "hermes", tools=TYPED_TOOLS, engine=engine)
    assert strict.tool_calls[0].arguments == {"n": "2", "s": 5, "any": "7"}
    events = StreamParser("hermes", tools=TYPED_TOOLS, engine=engine, repair=True).feed(text)
    (delta,) = [e for e in events if isinstance(e, ToolCallArgsDelta)]
    (end,) = [e for e in events if isinstance(e, ToolCallEnd)]
    assert end.call.arguments == {"n": 2, "s": "5", "any": "7"}
    assert delta.text == end.call.arguments_json
    assert end.call.repairs == ("coerced_values",)
    cut = parse(
        text[: text.index('"any"')], "hermes", tools=TYPED_TOOLS, engine=engine, repair=True
    )
    assert cut.tool_calls[0].repairs == ("closed_at_end", "coerced_values")


NESTED_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "book",
            "parameters": {
                "type": "object",
                "properties": {
                    "guest": {
                        "type": "object",
                        "properties": {"age": {"type": "integer"}, "name": {"type": "string"}},
                    },
                    "nights": {"type": "array", "items": {"type": "integer"}},
                    "extras": {"type": "array", "items": {"type": "object"}},
                    "notes": {},
                },
            },
        },
    }
]


def test_values_inside_objects_and_arrays_are_coerced_where_the_schema_says() -> None:
    schemas = stated_schemas(NESTED_TOOLS)["book"]
    arguments = {
        "guest": {"age": "41", "name": 7, "pet": "3"},  # "pet" states nothing: kept
        "nights": ["2", 3, "x"],  # "x" converts to no integer: left for the validator
        "extras": ['{"k": 1}'],
        "notes": {"n": "1"},
    }
    assert coerce_arguments(arguments, schemas) == {
        "guest": {"age": 41, "name": "7", "pet": "3"},
        "nights": [2, 3, "x"],
        "extras": [{"k": 1}],
        "notes": {"n": "1"},
    }
    assert coerce_arguments({"guest": {"age": 41}, "nights": [1]}, schemas) is None
    # a guest written as a JSON string is read, then its age converted
    assert coerce_arguments({"guest": '{"age": "5"}'}, schemas) == {"guest": {"age": 5}}


@by_engine
def test_repair_mode_coerces_nested_values(engine: str) -> None:
    text = (
        '<tool_call>\n{"name": "book", "arguments": '
        '{"guest": {"age": "41"}, "nights": ["2", "3"]}}\n</tool_call>'
    )
    call = parse(text, "hermes", tools=NESTED_TOOLS, engine=engine, repair=True).tool_calls[0]
    assert (call.arguments, call.repairs) == (
        {"guest": {"age": 41}, "nights": [2, 3]},
        ("coerced_values",),
    )


@by_engine
@pytest.mark.parametrize(
    ("written", "read"),
    [('"3"', 3), ("'3'", 3), (" 3.0 ", 3.0)],
)
def test_repair_mode_reads_a_typed_value_from_its_text(
    engine: str, written: str, read: Any
) -> None:
    text = (
        "<tool_call>\n<function=f>\n<parameter=n>\n"
        f"{written}\n</parameter>\n</function>\n</tool_call>"
    )
    strict = parse(text, "qwen3_coder", tools=TYPED_TOOLS, engine=engine)
    repaired = parse(text, "qwen3_coder", tools=TYPED_TOOLS, engine=engine, repair=True)
    if written.strip() == "3.0":  # it fits as written: no repair
        assert [c.arguments for c in strict.tool_calls] == [{"n": read}]
        assert repaired.tool_calls[0].repairs == ()
        return
    assert [e.kind for e in strict.errors] == ["invalid_arguments"]
    assert [(c.arguments, c.repairs) for c in repaired.tool_calls] == [
        ({"n": read}, ("coerced_values",))
    ]


@by_engine
@pytest.mark.parametrize("written", ["three", '"three"', "[3]", "{n: 3}", '"3'])
def test_repair_mode_never_guesses_a_typed_value(engine: str, written: str) -> None:
    text = (
        "<tool_call>\n<function=f>\n<parameter=n>\n"
        f"{written}\n</parameter>\n</function>\n</tool_call>"
    )
    repaired = parse(text, "qwen3_coder", tools=TYPED_TOOLS, engine=engine, repair=True)
    assert repaired.tool_calls == []
    assert [(e.kind, e.message) for e in repaired.errors] == [
        ("invalid_arguments", "the value of 'n' fits none of the types its schema allows")
    ]
