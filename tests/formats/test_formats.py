"""Every format fixture on every engine: the expected Message, independent of the chunking.

Each fixture is parsed whole, byte by byte and in seeded random chunks; once adjacent deltas
of the same type and call are merged, every way gives the same events, and the same Message
as parse(). With both engines built, their events must be identical.
"""

from __future__ import annotations

import collections
import json

import pytest

from engines import (
    ENGINES,
    FIXTURE_IDS,
    FIXTURES,
    FORMAT_NAMES,
    Fixture,
    expected_summary,
    merge_deltas,
    random_sizes,
    run_events,
    summary,
)
from toolparse import FORMATS, End, get_format

MIN_FIXTURES_PER_FORMAT = 12
RANDOM_CHUNKING_SEEDS = (1, 2, 3, 4, 5)
ID_SEED = 7

by_fixture = pytest.mark.parametrize("fixture", FIXTURES, ids=FIXTURE_IDS)
by_engine = pytest.mark.parametrize("engine", ENGINES)


@pytest.mark.parametrize("format_name", sorted(FORMATS))
def test_each_format_has_enough_fixtures(format_name: str) -> None:
    count = sum(1 for f in FIXTURES if f.format == format_name)
    assert count >= MIN_FIXTURES_PER_FORMAT, f"{format_name} has only {count} fixtures"


@pytest.mark.parametrize("format_name", FORMAT_NAMES)
def test_fixture_folder_is_a_known_format(format_name: str) -> None:
    assert get_format(format_name).name == format_name


def test_fixtures_cover_every_error_kind_that_the_expectations_name() -> None:
    kinds = collections.Counter(e["kind"] for f in FIXTURES for e in f.expected["errors"])
    assert {"incomplete", "invalid_arguments", "unknown_tool"} <= set(kinds)


@by_engine
@by_fixture
def test_message_matches_expected(fixture: Fixture, engine: str) -> None:
    message = fixture.parse(engine)
    assert summary(message) == expected_summary(fixture), fixture.expected["description"]


@by_engine
@by_fixture
def test_every_call_carries_its_arguments_as_json(fixture: Fixture, engine: str) -> None:
    message = fixture.parse(engine)
    indexes = [call.index for call in message.tool_calls]
    assert indexes == sorted(set(indexes)), "calls keep their stream order and distinct indexes"
    for call in message.tool_calls:
        assert call.id
        assert not call.repaired or fixture.options.get("repair")
        assert isinstance(call.arguments, dict)
        assert json.loads(call.arguments_json) == call.arguments


@by_engine
@by_fixture
def test_every_chunking_gives_the_same_events_and_message(fixture: Fixture, engine: str) -> None:
    size = len(fixture.raw)
    reference = fixture.events(engine, seed=ID_SEED)
    parsed = fixture.parse(engine, seed=ID_SEED)
    end = reference[-1]
    assert isinstance(end, End)
    assert end.message == parsed

    chunkings = {"byte by byte": [1] * size}
    for seed in RANDOM_CHUNKING_SEEDS:
        chunkings[f"random chunking {seed}"] = random_sizes(seed, size)
    merged_reference = merge_deltas(reference)
    for label, sizes in chunkings.items():
        parser = fixture.parser(engine, seed=ID_SEED)
        events = run_events(parser, fixture.raw, sizes, fixture.finish)
        assert merge_deltas(events) == merged_reference, label
        assert parser.message == parsed, label


@pytest.mark.skipif(len(ENGINES) < 2, reason="only one engine is built")
@by_fixture
def test_engines_emit_identical_events(fixture: Fixture) -> None:
    size = len(fixture.raw)
    for sizes in (None, [1] * size, random_sizes(11, size)):
        first, *others = [fixture.events(engine, sizes, seed=ID_SEED) for engine in ENGINES]
        for engine, events in zip(ENGINES[1:], others, strict=True):
            assert events == first, f"{engine} differs from {ENGINES[0]} with sizes {sizes}"
