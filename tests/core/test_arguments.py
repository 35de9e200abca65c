"""A call's arguments read whole or not at all: a key named twice, a number no float holds
and an integer too long to convert are invalid_arguments on both engines, at any chunking
and in repair mode, while the calls around them still parse."""

from __future__ import annotations

import json

import pytest

import toolparse
from engines import ENGINES, run_events
from toolparse import ParseError, ToolCallEnd
from toolparse.arguments import ArgumentsError, load_arguments

by_engine = pytest.mark.parametrize("engine", ENGINES)

# arguments JSON -> the start of the error's message
UNREADABLE = {
    '{"city": "Paris", "city": "Berlin"}': "the arguments name the key 'city' twice",
    '{"a": {"x": 1, "y": 2, "x": 3}}': "the arguments name the key 'x' twice",
    '{"list": [{"k": 1}, {"k": 2, "k": 2}]}': "the arguments name the key 'k' twice",
    # the same key written two ways is still the same key
    '{"x": 1, "\\u0078": 2}': "the arguments name the key 'x' twice",
    '{"n": 1e999}': "the number 1e999 is beyond a float's range",
    '{"n": -1.5e400}': "the number -1.5e400 is beyond a float's range",
    '{"n": ' + "7" * 5000 + "}": "an integer of 5000 digits is too long to read",
}
READABLE = {
    '{"x": 1, "X": 2}': {"x": 1, "X": 2},
    '{"a": {"k": 1}, "b": {"k": 1}}': {"a": {"k": 1}, "b": {"k": 1}},
    '{"n": 1e308, "m": -0.0, "big": 123456789012345678901234567890}': {
        "n": 1e308,
        "m": -0.0,
        "big": 123456789012345678901234567890,
    },
}


@pytest.mark.parametrize("text", UNREADABLE, ids=range(len(UNREADABLE)))
def test_unreadable_arguments_say_what(text: str) -> None:
    with pytest.raises(ArgumentsError, match="^" + UNREADABLE[text]):
        load_arguments(text)


@pytest.mark.parametrize("text", READABLE, ids=range(len(READABLE)))
def test_readable_arguments_are_exact(text: str) -> None:
    assert load_arguments(text) == READABLE[text]


# each output format, and how it writes a call of "f" with these arguments
FORMATS = {
    "hermes": lambda a: f'<tool_call>\n{{"name": "f", "arguments": {a}}}\n</tool_call>',
    "generic_xml": lambda a: f"<tool_call>\n<name>f</name>\n<args>{a}</args>\n</tool_call>",
}


@by_engine
@pytest.mark.parametrize(
    ("format_name", "repair"),
    [("hermes", False), ("generic_xml", False), ("generic_xml", True)],
    ids=["hermes", "generic_xml", "generic_xml-repair"],
)
@pytest.mark.parametrize("text", UNREADABLE, ids=range(len(UNREADABLE)))
def test_a_call_whose_arguments_do_not_read_whole_is_an_error(
    text: str, format_name: str, repair: bool, engine: str
) -> None:
    write = FORMATS[format_name]
    good = write('{"city": "Oslo"}')
    output = f"{good}{write(text)}{good}"
    for sizes in (None, [1] * len(output.encode())):
        parser = toolparse.StreamParser(format_name, engine=engine, repair=repair)
        events = run_events(parser, output.encode(), sizes=sizes)
        errors = [e for e in events if isinstance(e, ParseError)]
        ends = [e.call for e in events if isinstance(e, ToolCallEnd)]
        assert [(e.kind, e.index) for e in errors] == [("invalid_arguments", 1)]
        assert errors[0].message == UNREADABLE[text]
        assert errors[0].offset == len(f"{good}{write(text)}".encode())
        assert [(c.index, c.arguments) for c in ends] == [
            (0, {"city": "Oslo"}),
            (2, {"city": "Oslo"}),
        ]
        assert all(json.loads(c.arguments_json) == c.arguments for c in ends)


@by_engine
def test_a_repaired_call_is_read_whole_too(engine: str) -> None:
    # repair closes the cut-off object; the key it already named twice stays an error
    output = '<tool_call>\n<name>f</name>\n<args>{"a": 1, "a": "x'
    message = toolparse.parse(output, "generic_xml", engine=engine, repair=True)
    assert message.tool_calls == []
    assert [(e.kind, e.message) for e in message.errors] == [
        ("invalid_arguments", "the arguments name the key 'a' twice")
    ]
