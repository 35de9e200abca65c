"""The properties every format keeps, on every fixture of every format, on every engine.

They are checked from the formats' metadata (markers, call markers), so a new format gets
them by adding its fixtures: truncation at every byte (every fourth and around each
call's end for the reference engine, checked_cuts) never delivers a call the full
output does not deliver, nor one whose closing marker has not arrived; argument deltas
add up to arguments_json; text deltas carry no marker; ids and indices are consistent.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import pytest

import toolparse
from engines import ENGINES, FIXTURES, Fixture, run_events
from toolparse import (
    ContentDelta,
    End,
    ParseError,
    ReasoningDelta,
    ToolCallArgsDelta,
    ToolCallEnd,
    ToolCallStart,
)

by_fixture = pytest.mark.parametrize("fixture", FIXTURES, ids=[f.id for f in FIXTURES])
by_engine = pytest.mark.parametrize("engine", ENGINES)


def calls(events: list[Any]) -> list[tuple[str, Any]]:
    return [(e.call.name, e.call.arguments) for e in events if isinstance(e, ToolCallEnd)]


REFERENCE_STRIDE = 4


@cache
def truncations(engine: str, fixture_id: str) -> tuple[list[Any], dict[int, list[Any]]]:
    """(the events of the whole output, the events of each prefix checked, by its length,
    fed whole and finished as what it is: an output cut short)."""
    fixture = next(f for f in FIXTURES if f.id == fixture_id)
    whole = fixture.events(engine)
    cuts = {
        cut: run_events(fixture.parser(engine), fixture.raw[:cut], reason="length")
        for cut in checked_cuts(engine, fixture)
    }
    return whole, cuts


def checked_cuts(engine: str, fixture: Fixture, stride: int = REFERENCE_STRIDE) -> list[int]:
    """Every cut for the native engine.  The reference engine reads each prefix anew in
    Python (the square of the output's length in bytes), so it is cut at every stride-th
    byte and at each byte around one where the native engine delivers one more call or
    one fewer, where a call's end is decided."""
    size = len(fixture.raw)
    if engine == "native" or "native" not in ENGINES:
        return list(range(size))
    _, native = truncations("native", fixture.id)
    count = [len(calls(native[cut])) for cut in range(size)]
    turns = [cut for cut in range(1, size) if count[cut] != count[cut - 1]]
    near = {cut + d for cut in turns for d in (-1, 0, 1)} & set(range(size))
    return sorted({*range(0, size, stride), *near})


@by_engine
@by_fixture
def test_a_truncated_output_delivers_only_calls_of_the_whole_output(
    fixture: Fixture, engine: str
) -> None:
    whole, cuts = truncations(engine, fixture.id)
    full = calls(whole)
    fmt = toolparse.get_format(fixture.format)
    closers = (fmt.call_markers[1], *fmt.other_call_closers) if fmt.call_markers else None
    for cut, events in cuts.items():
        delivered = calls(events)
        if fixture.options.get("repair"):
            # salvaging cut-off calls is the point of repair: only a call it did not
            # have to repair must be the whole output's call
            whole_calls = [e.call for e in events if isinstance(e, ToolCallEnd)]
            for k, call in enumerate(whole_calls):
                assert call.repaired or delivered[k] == full[k], f"cut at {cut}: {call}"
            continue
        assert delivered == full[: len(delivered)], (
            f"cut at {cut}: {delivered} is not a prefix of {full}: {fixture.raw[:cut]!r}"
        )
        if closers is not None:
            # each delivered call needs its own closing marker (markers inside strings
            # only make this count larger, never smaller)
            seen = sum(fixture.raw[:cut].count(c.encode()) for c in closers)
            assert len(delivered) <= seen, (
                f"cut at {cut}: a call ended before its closing marker arrived"
            )
        assert isinstance(events[-1], End)


@by_engine
@by_fixture
def test_argument_deltas_add_up_and_follow_their_start(fixture: Fixture, engine: str) -> None:
    events = fixture.events(engine)
    started: dict[int, str] = {}
    pieces: dict[int, list[str]] = {}
    for event in events:
        if isinstance(event, ToolCallStart):
            assert event.index not in started, "an index was announced twice"
            started[event.index] = event.id
            pieces[event.index] = []
        elif isinstance(event, ToolCallArgsDelta):
            assert event.index in started, "arguments came before their call's start"
            pieces[event.index].append(event.text)
        elif isinstance(event, ToolCallEnd):
            call = event.call
            assert event.index in started and call.id == started[event.index]
            assert "".join(pieces[event.index]) == call.arguments_json
            assert json.loads(call.arguments_json) == call.arguments
            assert isinstance(call.arguments, dict)
    assert sorted(started) == list(range(len(started))), "indices are not 0, 1, 2, ..."


@by_engine
@by_fixture
def test_text_deltas_carry_no_marker(fixture: Fixture, engine: str) -> None:
    fmt = toolparse.get_format(fixture.format)
    events = fixture.events(engine)
    expected = fixture.expected["message"]
    for kind, text in (
        (ContentDelta, expected["content"]),
        (ReasoningDelta, expected["reasoning_content"]),
    ):
        # a marker that the expected text itself holds is data there, not a marker
        markers = [m for m in fmt.markers if m not in (text or "")]
        for event in events:
            if isinstance(event, kind):
                for marker in markers:
                    assert marker not in event.text, f"{event!r} carries {marker!r}"


@by_engine
@by_fixture
def test_every_error_is_a_parse_error_and_end_is_last(fixture: Fixture, engine: str) -> None:
    events = fixture.events(engine)
    assert isinstance(events[-1], End)
    assert not any(isinstance(e, End) for e in events[:-1])
    errors = [e for e in events if isinstance(e, ParseError)]
    assert [e.kind for e in errors] == [e["kind"] for e in fixture.expected["errors"]]
    assert events[-1].message.errors == errors


def test_every_format_with_fixtures_is_known_and_has_metadata() -> None:
    for name in {f.format for f in FIXTURES}:
        fmt = toolparse.get_format(name)
        assert fmt.markers or fmt.fallback, f"{name} lists no markers"  # a JSON envelope has none
        assert fmt.families, f"{name} names no model families"
        assert fmt.model_ids or fmt.fallback, f"{name} names no model ids"
        assert fmt.description
