"""Every format's repair mode (StreamParser(repair=True)), on every fixture of every format.

The properties of test_formats.py and test_format_properties.py hold in repair mode too:
every chunking gives the same events, both engines give identical events, and an output
cut at every byte (every eighth byte and around each call's end for the reference engine)
never delivers a call that misreads the whole output: a call is either one the whole
output delivers, or it is marked repaired, names its repairs, has the same name as the
whole output's call in its place, and its arguments are that call's arguments as far as
the output went (no key the call does not have, strings cut short, never a new value).
An output that parses with no error parses the same way in repair mode, but for values
coerced to their tool's types (marked so).
"""

from __future__ import annotations

import json
from dataclasses import replace
from functools import cache
from typing import Any

import pytest
from test_format_properties import checked_cuts

from engines import ENGINES, FIXTURES, Fixture, merge_deltas, random_sizes, run_events
from toolparse import End, ToolCall, ToolCallEnd, get_format
from toolparse.repair import REPAIRS, coerce_arguments
from toolparse.tools import stated_schemas

by_fixture = pytest.mark.parametrize("fixture", FIXTURES, ids=[f.id for f in FIXTURES])
by_engine = pytest.mark.parametrize("engine", ENGINES)
ID_SEED = 7
# the reference engine's cuts: every eighth byte and around each call's end (the
# strict-mode property reads every fourth; the native engine reads every byte in both)
REFERENCE_STRIDE = 8


@by_engine
@by_fixture
def test_an_output_without_errors_reads_the_same_in_repair_mode(
    fixture: Fixture, engine: str
) -> None:
    strict = fixture.parse(engine, seed=ID_SEED)
    if strict.errors or fixture.options.get("repair"):
        pytest.skip("the output has errors, which repair mode may salvage")
    if get_format(fixture.format).fallback:
        pytest.skip("a raw-text fallback's repair mode also reads calls in its text")
    repaired = fixture.parse(engine, seed=ID_SEED, repair=True)
    stated = stated_schemas(fixture.tools)
    calls = []
    for strict_call, call in zip(strict.tool_calls, repaired.tool_calls, strict=False):
        if call.repairs:  # only a coercion to the tool's types may differ
            assert call.repairs == ("coerced_values",), call
            coerced = coerce_arguments(strict_call.arguments, stated.get(call.name, {}))
            assert call.arguments == coerced, call
            call = strict_call
        calls.append(call)
    assert replace(repaired, tool_calls=calls) == strict


@by_engine
@by_fixture
def test_repair_mode_keeps_every_call_the_default_parser_delivers(
    fixture: Fixture, engine: str
) -> None:
    """Repair mode reads more, never less: from an output with errors, every call the
    default parser delivers comes in repair mode too, in the same order (a broken call's
    salvage never swallows the call after it)."""
    if fixture.options.get("repair"):
        pytest.skip("a repair fixture: its own expected message says what repair mode reads")
    strict = fixture.parse(engine, seed=ID_SEED)
    if not strict.errors:
        pytest.skip("no errors: the test above checks that it reads the same")
    repaired = iter(c.name for c in fixture.parse(engine, seed=ID_SEED, repair=True).tool_calls)
    # each strict call's name found in what is left of the repaired calls: a subsequence
    lost = [c.name for c in strict.tool_calls if c.name not in repaired]
    assert not lost, lost


@by_engine
@by_fixture
def test_every_chunking_gives_the_same_events_in_repair_mode(fixture: Fixture, engine: str) -> None:
    whole = merge_deltas(fixture.events(engine, seed=ID_SEED, repair=True))
    size = len(fixture.raw)
    for label, sizes in (("byte by byte", [1] * size), ("random", random_sizes(3, size))):
        assert merge_deltas(fixture.events(engine, sizes, seed=ID_SEED, repair=True)) == whole, (
            label
        )
    end = whole[-1]
    assert isinstance(end, End)
    declared = {t["function"]["name"] for t in fixture.tools}
    for call in end.message.tool_calls:
        assert not declared or call.name in declared, "a repair accepts no undeclared tool"
        assert call.repaired == bool(call.repairs)
        assert [r for r in REPAIRS if r in call.repairs] == list(call.repairs)


@pytest.mark.skipif(len(ENGINES) < 2, reason="only one engine is built")
@by_fixture
def test_engines_emit_identical_events_in_repair_mode(fixture: Fixture) -> None:
    for sizes in (None, random_sizes(11, len(fixture.raw))):
        first, *others = [
            fixture.events(engine, sizes, seed=ID_SEED, repair=True) for engine in ENGINES
        ]
        for events in others:
            assert events == first, f"sizes {sizes}"


def as_far_as(cut: Any, whole: Any) -> bool:
    """Whether a repaired value is the whole output's value as far as the output went."""
    if isinstance(whole, dict):
        return isinstance(cut, dict) and all(
            k in whole and as_far_as(v, whole[k]) for k, v in cut.items()
        )
    if isinstance(whole, list):
        return (
            isinstance(cut, list)
            and len(cut) <= len(whole)
            and all(as_far_as(c, w) for c, w in zip(cut, whole, strict=False))
        )
    # a value the repair coerces to its type once whole ("3" for 3, or 3 for "3") is, cut
    # off, left as written
    if isinstance(whole, str):
        return whole.startswith(cut if isinstance(cut, str) else json.dumps(cut))
    if isinstance(cut, str):
        return json.dumps(whole).startswith(cut)
    if isinstance(whole, bool) or whole is None:
        return cut == whole
    if isinstance(whole, (int, float)) and isinstance(cut, (int, float)):
        # a number cut short keeps its valid part: 12.5 read as 12 or 1
        return str(whole).startswith(str(cut).removesuffix(".0")) or cut == whole
    return cut == whole


@cache
def whole_calls(engine: str, fixture_id: str) -> tuple[ToolCall, ...]:
    fixture = next(f for f in FIXTURES if f.id == fixture_id)
    end = fixture.events(engine, seed=ID_SEED, repair=True)[-1]
    return tuple(end.message.tool_calls)


@by_engine
@by_fixture
def test_a_truncated_output_in_repair_mode_delivers_the_whole_outputs_calls_so_far(
    fixture: Fixture, engine: str
) -> None:
    full = {call.index: call for call in whole_calls(engine, fixture.id)}
    for cut in checked_cuts(engine, fixture, REFERENCE_STRIDE):
        parser = fixture.parser(engine, seed=ID_SEED, repair=True)
        events = run_events(parser, fixture.raw[:cut], reason="length")
        for call in (e.call for e in events if isinstance(e, ToolCallEnd)):
            whole = full.get(call.index)
            if whole is None:
                # the whole output refuses this call (what makes it invalid comes later)
                assert call.repaired, f"cut at {cut}: {call} is no call of the whole output"
                continue
            if not call.repaired:
                assert (call.name, call.arguments) == (whole.name, whole.arguments), cut
                continue
            assert call.repairs, f"cut at {cut}: {call}"
            assert call.name == whole.name, f"cut at {cut}: {call}"
            assert as_far_as(call.arguments, whole.arguments), (
                f"cut at {cut}: {call.arguments} is not {whole.arguments} so far"
            )
