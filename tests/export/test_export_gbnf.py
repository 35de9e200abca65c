"""Format.gbnf(): llama.cpp GBNF for every format that can be exported, read by
llguidance's GBNF converter and compiled; on hermes, clean outputs are taken and broken
calls refused."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engines import FIXTURES_DIR
from helpers import WEATHER_TOOL
from toolparse import export
from toolparse.export import _lower as toolparse_export
from toolparse.export._ir import CutShort, Lowered, Optional_, Seq, Text
from toolparse.export._text import text_automaton
from toolparse.export.to_gbnf import render
from toolparse.formats import get_format
from toolparse.grammar import stop

llguidance = pytest.importorskip("llguidance")
from llguidance.gbnf_to_lark import gbnf_to_lark  # noqa: E402
from test_export_lark import (  # noqa: E402
    CALL_OBJECTS,
    TEXT_CASES,
    WEATHER,
    _open_end,
    _reads_all,
    compiled,
    run,
)

NAMES = sorted(p.name for p in FIXTURES_DIR.iterdir() if p.is_dir())


def _tools(name: str) -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = json.loads((FIXTURES_DIR / name / "tools.json").read_text())
    return tools


@pytest.mark.parametrize("name", NAMES)
def test_gbnf_compiles(name: str) -> None:
    fmt = get_format(name)
    out = export.gbnf(fmt, _tools(name))
    assert set(out) == {"grammar", "grammar_lazy", "grammar_triggers", "preserved_tokens"}
    assert out["grammar"].startswith("root ::= ")
    lark = gbnf_to_lark(out["grammar"])
    compiled(lark)  # llguidance compiles it (or the test fails)
    for trigger in out["grammar_triggers"]:
        assert trigger["type"] == "word" and trigger["value"]
    assert out["grammar_lazy"] == bool(out["grammar_triggers"])
    if not toolparse_export.has_calls(fmt):
        with pytest.raises(ValueError, match="no output"):
            export.gbnf(fmt, _tools(name), tool_choice="required")
        return
    required = export.gbnf(fmt, _tools(name), tool_choice="required")
    assert not required["grammar_lazy"] and not required["grammar_triggers"]


@pytest.mark.parametrize(
    ("case", "taken"),
    [
        ("single_call", True),
        ("two_parallel_calls", True),
        ("content_before_and_after_call", True),
        ("reasoning_then_call", True),
        ("invalid_json_then_valid_call", False),
        ("unknown_tool_only", False),
    ],
)
def test_hermes_gbnf_runs(case: str, taken: bool) -> None:
    grammar = gbnf_to_lark(export.gbnf(get_format("hermes"), _tools("hermes"))["grammar"])
    data = (FIXTURES_DIR / "hermes" / f"{case}.txt").read_bytes()
    assert (run(grammar, data) is None) == taken


@pytest.mark.parametrize(("obj", "taken"), CALL_OBJECTS.items())
def test_a_call_object_has_one_name_and_one_set_of_arguments(obj: str, taken: bool) -> None:
    tool = {"type": "function", "function": {"name": "get_weather", "parameters": WEATHER}}
    grammar = gbnf_to_lark(export.gbnf(get_format("hermes"), [tool])["grammar"])
    assert (run(grammar, f"<tool_call>{obj}</tool_call>".encode()) is None) == taken


def test_schema_is_enforced() -> None:
    tools = [WEATHER_TOOL]
    grammar = gbnf_to_lark(export.gbnf(get_format("hermes"), tools)["grammar"])
    good = (
        b'<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo", "days": 2}}</tool_call>'
    )
    assert run(grammar, good) is None
    assert run(grammar, good.replace(b"2}", b'"2"}')) is not None
    assert run(grammar, good.replace(b'"city": "Oslo", ', b"")) is not None


def test_integer_bounds_are_enforced() -> None:
    from test_export_regex import bounded_tool

    tools = [bounded_tool({"minimum": -2, "exclusiveMaximum": 15})]
    grammar = gbnf_to_lark(export.gbnf(get_format("hermes"), tools)["grammar"])
    call = (
        b'<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo", "days": %s}}</tool_call>'
    )
    for days in (b"-2", b"-0", b"0", b"9", b"14"):
        assert run(grammar, call % days) is None, days
    for days in (b"-3", b"15", b"140", b"014", b"1.5"):
        assert run(grammar, call % days) is not None, days


def _automaton_takes(stops: Any, text: str) -> bool:
    """Whether GBNF's text automaton (what the text rules transcribe) takes text."""
    auto = text_automaton(stops)
    state = 0
    for ch in text:
        if ch not in auto.alphabet:
            state = 0
        elif ch in auto.moves[state]:
            state = auto.moves[state][ch]
        else:
            return False  # a stop completes
    return state == 0


@pytest.mark.parametrize("case", sorted(TEXT_CASES))
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_text_automaton_against_the_parser(case: str, data: Any) -> None:
    """GBNF text (checked on its automaton: llguidance's GBNF converter lexes the
    character rules greedily, which GBNF itself does not)."""
    stops, pieces = TEXT_CASES[case]
    text = "".join(data.draw(st.lists(st.sampled_from(pieces), max_size=8)))
    if _automaton_takes(stops, text):
        assert _reads_all(stops, text), "a text holding a stop was taken"
    elif _reads_all(stops, text):
        assert _open_end(stops, text), "a text without a stop was refused"


@pytest.mark.parametrize(
    ("data", "inside", "at_end"),
    [
        ("ab", True, True),
        ("ab<tool_c", False, True),
        ("<<t", False, True),
        ("a<tool_call>", False, False),
    ],
)
def test_text_may_end_with_a_marker_cut_short_at_the_end(
    data: str, inside: bool, at_end: bool
) -> None:
    """Text before more output may not end with the beginning of a stop; at the end of
    the output it may, as the parser takes it."""
    stops = (stop("<tool_call>"),)
    ended = Seq((Text(stops, False), Optional_(CutShort(stops))))
    for text, taken in ((Text(stops, False), inside), (ended, at_end)):
        grammar = gbnf_to_lark(render(Lowered("start", {"start": text})))
        assert (run(grammar, data.encode()) is None) == taken


def test_properties_in_declared_or_sorted_order() -> None:
    tools = [
        {
            "type": "function",
            "function": {
                "name": "f",
                "parameters": {
                    "type": "object",
                    "properties": {"c": {"type": "integer"}, "a": {"type": "string"}},
                    "required": ["c", "a"],
                },
            },
        }
    ]
    grammar = gbnf_to_lark(export.gbnf(get_format("hermes"), tools)["grammar"])
    call = b'<tool_call>{"name": "f", "arguments": %s}</tool_call>'
    assert run(grammar, call % b'{"c": 1, "a": "x"}') is None
    assert run(grammar, call % b'{"a": "x", "c": 1}') is None
    assert run(grammar, call % b'{"a": 1, "c": "x"}') is not None
