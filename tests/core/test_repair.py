"""The repair opt-in: repair_arguments() reads lenient, cut-off JSON and gives strict JSON
or None, and StreamParser(repair=True) salvages calls only where it is asked to."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engines import ENGINES, run_events
from toolparse import ParseError, StreamParser, ToolCallArgsDelta, ToolCallEnd, parse
from toolparse.repair import repair_arguments

by_engine = pytest.mark.parametrize("engine", ENGINES)


@pytest.mark.parametrize(
    ("text", "repaired"),
    [
        ('{"a": 1}', {"a": 1}),
        ("{'a': 'x', b: True, c: None, d: False,}", {"a": "x", "b": True, "c": None, "d": False}),
        ('{"a": [1, 2,], "b": {"c": null,},}', {"a": [1, 2], "b": {"c": None}}),
        ('{"a": "it\\u2019s \\ud83d\\ude00 \\n"}', {"a": "it\u2019s \U0001f600 \n"}),
        ('{"a": "lone \\ud800!"}', {"a": "lone \ufffd!"}),
        # cut off: a string keeps its text, containers close, a literal takes its only
        # completion, a number its valid part; a member whose value never began goes
        ('{"a": "hel', {"a": "hel"}),
        ('{"a": [1, {"b": 2', {"a": [1, {"b": 2}]}),
        ('{"a": tr', {"a": True}),
        ('{"a": n', {"a": None}),
        ('{"a": 1.', {"a": 1}),
        ('{"a": -12e+', {"a": -12}),
        ('{"a": 1, "b', {"a": 1}),
        ('{"a": 1, "b":', {"a": 1}),
        ('{"a": 1, "b": -', {"a": 1}),
        ('{"a": "x\\', {"a": "x"}),
        ('{"a": "x\\u00', {"a": "x"}),
        ("{", {}),
    ],
)
def test_repair_reads_what_can_be_read(text: str, repaired: dict[str, Any]) -> None:
    fixed = repair_arguments(text)
    assert fixed is not None
    assert json.loads(fixed) == repaired
    assert fixed == json.dumps(repaired, ensure_ascii=False)


@pytest.mark.parametrize(
    "text",
    ["", "[1, 2]", '"a"', '{"a": x}', '{"a": 1} trailing', '{"a": 1.2.3}', '{"a" 1}', "{a b}"],
)
def test_repair_does_not_guess(text: str) -> None:
    assert repair_arguments(text) is None


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
    assert repair_arguments(text) == json.dumps(value, ensure_ascii=False)
    for cut in range(1, len(text)):
        fixed = repair_arguments(text[:cut])
        assert fixed is not None, text[:cut]
        assert isinstance(json.loads(fixed), dict)


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
    assert end.call.arguments == {"city": "Par"}
    assert not [e for e in events if isinstance(e, ParseError)]


@by_engine
def test_repair_never_invents_arguments(engine: str) -> None:
    message = parse(
        "<tool_call><name>get_weather</name>", "generic_xml", engine=engine, repair=True
    )
    assert message.tool_calls == []
    assert [e.kind for e in message.errors] == ["incomplete"]


def test_repair_needs_a_format_that_has_it() -> None:
    with pytest.raises(ValueError, match="no repair mode"):
        StreamParser("hermes", repair=True)
