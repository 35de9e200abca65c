"""The audit trail: AuditedParser records, JSON lines, and replay against this toolparse."""

from __future__ import annotations

import base64
import copy
import io
import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import toolparse
from engines import ENGINES, FIXTURE_IDS, FIXTURES, Fixture, random_sizes
from helpers import MODEST, split
from toolparse import StreamParser
from toolparse.agent.audit import (
    GENERATED_ID,
    AuditedParser,
    JsonlRecorder,
    MemoryRecorder,
    decode_raw,
    dumps_record,
    event_to_json,
    message_to_json,
    replay,
    replay_file,
)

by_fixture = pytest.mark.parametrize("fixture", FIXTURES, ids=FIXTURE_IDS)
ENGINE = ENGINES[0]
HERMES_CALL = (
    'Checking.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Zürich"}}\n</tool_call>'
)
WEATHER_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]


def record_fixture(
    fixture: Fixture, seed: int = 0, engine: str = ENGINE, **kwargs: Any
) -> tuple[dict[str, Any], list[list[Any]]]:
    """Feeds a fixture through an AuditedParser in a random chunking; returns the record
    (through its JSON line, as a file would give it back) and the events of each feed."""
    recorder = MemoryRecorder()
    audited = AuditedParser(fixture.parser(engine), recorder, **kwargs)
    pieces = split(fixture.raw, random_sizes(seed, len(fixture.raw)))
    groups = [audited.feed(piece) for piece in pieces]
    groups.append(audited.finish(fixture.finish))
    [record] = recorder.records
    return json.loads(dumps_record(record)), groups


def hermes_record(
    pieces: list[str | bytes], finish: str | None = "stop", **kwargs: Any
) -> dict[str, Any]:
    recorder = MemoryRecorder()
    audited = AuditedParser(StreamParser("hermes", tools=WEATHER_TOOLS), recorder, **kwargs)
    for piece in pieces:
        audited.feed(piece)
    if finish is not None:
        audited.finish(finish)
    else:
        audited.close()
    [record] = recorder.records
    return json.loads(dumps_record(record))


# --- round trips on every fixture -------------------------------------------------------


@by_fixture
def test_fixture_record_replays_the_same(fixture: Fixture) -> None:
    record, groups = record_fixture(fixture, seed=len(fixture.name))
    # The record holds the raw bytes with their chunk boundaries, and every event.
    sizes = random_sizes(len(fixture.name), len(fixture.raw))
    assert b"".join(decode_raw(record["raw"])) == fixture.raw
    assert record["raw"]["chunks"] == sizes
    assert record["events"] == [[event_to_json(e) for e in group] for group in groups]
    assert record["message"] == message_to_json(groups[-1][-1].message)
    assert record["format"] == toolparse.get_format(fixture.format).name
    assert record["finish"] == fixture.finish
    assert record["options"]["tools"] == fixture.tools
    assert record["toolparse"] == toolparse.__version__
    for engine in ENGINES:
        result = replay(record, engine=engine)  # type: ignore[arg-type]
        assert result.ok, result.describe()


def test_record_file_of_every_format_replays_the_same(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    with JsonlRecorder(path) as recorder:
        for fixture in FIXTURES:
            audited = AuditedParser(fixture.parser(ENGINE), recorder, meta={"fixture": fixture.id})
            for piece in split(fixture.raw, random_sizes(1, len(fixture.raw))):
                audited.feed(piece)
            audited.finish(fixture.finish)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(FIXTURES)
    assert [json.loads(line)["meta"]["fixture"] for line in lines] == FIXTURE_IDS
    results = replay_file(path)
    assert [r.line for r in results] == list(range(1, len(FIXTURES) + 1))
    assert all(r.ok for r in results), "\n".join(r.describe() for r in results if not r.ok)
    assert {r.format for r in results} == {f.format for f in FIXTURES}


# --- differences ------------------------------------------------------------------------


def test_a_changed_message_is_a_message_difference() -> None:
    record = hermes_record([HERMES_CALL[:7], HERMES_CALL[7:30], HERMES_CALL[30:]])
    changed = copy.deepcopy(record)
    changed["message"]["content"] = "Checking!\n"
    changed["message"]["tool_calls"][0]["name"] = "get_time"
    result = replay(changed)
    assert not result.ok
    assert {(d.part, d.path, d.recorded, d.replayed) for d in result.differences} == {
        ("message", "message.content", "Checking!\n", "Checking.\n"),
        ("message", "message.tool_calls[0].name", "get_time", "get_weather"),
    }
    assert "message.content" in result.describe()


def test_changed_events_are_an_events_difference() -> None:
    record = hermes_record([HERMES_CALL])
    changed = copy.deepcopy(record)
    group = changed["events"][0]
    end = next(e for e in group if e["type"] == "tool_call.end")
    end["call"]["arguments_json"] = '{"city": "Bern"}'
    group.remove(next(e for e in group if e["type"] == "tool_call.start"))
    result = replay(changed)
    assert result.parts() == {"events"}
    paths = {d.path for d in result.differences}
    assert "events[1:1]" in paths  # the start the record lost
    assert any(p.endswith(".call.arguments_json") for p in paths)


def test_events_moved_between_feeds_are_a_timing_difference() -> None:
    record = hermes_record(["Chec", "king.\n"])
    changed = copy.deepcopy(record)
    first, second = changed["events"][0], changed["events"][1]
    assert [e["type"] for e in first + second] == ["content.delta"] * 2
    text = first[0]["text"] + second[0]["text"]
    changed["events"][0], changed["events"][1] = [], [{"type": "content.delta", "text": text}]
    result = replay(changed)
    assert result.parts() == {"timing"}
    assert [d.path for d in result.differences] == ["events[0]", "events[1]"]


def test_raw_bytes_that_do_not_match_their_hash() -> None:
    record = hermes_record(["Hello"])
    record["raw"]["data"] = "Jello"
    result = replay(record)
    assert "raw" in result.parts()
    assert "message" in result.parts()  # and the replay of the changed bytes differs


@pytest.mark.parametrize(
    ("change", "path"),
    [
        (lambda r: r.update(version=99), "version"),
        (lambda r: r.update(format="no_such_format"), "format/options"),
        (lambda r: r["raw"].update(chunks=[1, 2]), "raw"),
        (lambda r: r["raw"].update(encoding="latin-1"), "raw"),
    ],
)
def test_a_record_that_cannot_be_replayed(change: Any, path: str) -> None:
    record = hermes_record(["Hello"])
    change(record)
    result = replay(record)
    assert [(d.part, d.path) for d in result.differences] == [("record", path)]


def test_replay_file_reports_lines_that_are_not_records(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    good = dumps_record(hermes_record(["Hi"]))
    path.write_text(f"{good}\nnot json\n\n[1]\n{good}\n", encoding="utf-8")
    results = replay_file(path)
    assert [(r.line, r.ok) for r in results] == [(1, True), (2, False), (4, False), (5, True)]
    assert results[1].parts() == {"record"}


# --- ids --------------------------------------------------------------------------------


def test_generated_ids_are_replayed_as_recorded() -> None:
    record = hermes_record([HERMES_CALL])
    call_id = record["message"]["tool_calls"][0]["id"]
    assert call_id.startswith("call_") and call_id.encode() not in HERMES_CALL.encode()
    assert replay(record).ok  # another random id, yet no difference


def carried_id_fixture() -> Fixture:
    for fixture in FIXTURES:
        if toolparse.get_format(fixture.format).carries_ids:
            message = fixture.parse(ENGINE)
            if message.tool_calls and message.tool_calls[0].id.encode() in fixture.raw:
                return fixture
    raise AssertionError("no fixture carries a call id")


def test_a_carried_id_is_compared() -> None:
    record, _ = record_fixture(carried_id_fixture())
    assert replay(record).ok
    changed = copy.deepcopy(record)
    changed["message"]["tool_calls"][0]["id"] = "other"
    [difference] = replay(changed).differences
    assert (difference.path, difference.recorded) == ("message.tool_calls[0].id", "other")


def test_a_recorded_carried_id_the_replay_generates_is_a_difference() -> None:
    record = hermes_record([HERMES_CALL])
    # As if the output had carried the id (it is written in the raw output).
    call_id = record["message"]["tool_calls"][0]["id"]
    record = json.loads(json.dumps(record).replace(call_id, "get_weather"))
    differences = replay(record).differences
    assert {(d.path, d.recorded, d.replayed) for d in differences} == {
        (path, "get_weather", GENERATED_ID)
        for path in ("message.tool_calls[0].id", "events[1].id", "events[3].call.id")
    }


# --- raw bytes and chunk boundaries ----------------------------------------------------


def test_non_utf8_bytes_survive_as_base64() -> None:
    pieces: list[str | bytes] = [b"ab\xff\xfe", b"cd \xe2\x82", b"\xac ", HERMES_CALL]
    record = hermes_record(pieces)
    raw = record["raw"]
    assert raw["encoding"] == "base64"
    expected = b"".join(p.encode() if isinstance(p, str) else p for p in pieces)
    assert base64.b64decode(raw["data"]) == expected
    assert raw["chunks"] == [4, 5, 2, len(HERMES_CALL.encode())]
    assert decode_raw(raw)[1] == b"cd \xe2\x82"  # a boundary inside the euro sign
    assert record["message"]["content"].startswith("ab\ufffd\ufffdcd € ")
    assert replay(record).ok


def test_utf8_raw_is_readable_text_with_byte_boundaries() -> None:
    euro = "€".encode()
    record = hermes_record([b"Price: " + euro[:1], euro[1:] + b"5", "\nZürich"])
    assert record["raw"]["encoding"] == "utf-8"
    assert record["raw"]["data"] == "Price: €5\nZürich"
    assert record["raw"]["chunks"] == [8, 3, 8]
    assert [e["text"] for e in record["events"][0]] == ["Price: "]  # the € waited
    assert replay(record).ok
    line = dumps_record(record)
    assert "Zürich" in line and "NaN" not in line


@MODEST
@given(
    data=st.builds(
        lambda noise, cut: noise + HERMES_CALL.encode()[:cut],
        st.binary(max_size=40),
        st.integers(0, len(HERMES_CALL.encode())),
    ),
    cuts=st.sets(st.integers(1, 200), max_size=8),
    finish=st.sampled_from(["stop", "length", None]),
)
def test_any_bytes_in_any_chunking_round_trip(
    data: bytes, cuts: set[int], finish: str | None
) -> None:
    bounds = [0, *sorted(c for c in cuts if c < len(data)), len(data)]
    pieces: list[str | bytes] = [data[a:b] for a, b in itertools.pairwise(bounds)]
    record = hermes_record(pieces, finish)
    assert decode_raw(record["raw"]) == pieces
    assert record["finish"] == finish
    result = replay(record)
    assert result.ok, result.describe()


# --- recording off, annotations, commit ------------------------------------------------


def test_recording_off_is_the_parser_itself() -> None:
    parser = StreamParser("hermes")
    audited = AuditedParser(parser, None)
    assert audited.feed == parser.feed and audited.finish == parser.finish
    assert not audited.recording
    audited.feed("Hi")
    audited.add_validation({"ignored": True})
    audited.finish()
    assert audited.commit() is None
    assert audited.message == parser.message


def test_validation_and_guard_decisions_are_recorded_as_given() -> None:
    recorder = MemoryRecorder()
    audited = AuditedParser(StreamParser("hermes", tools=WEATHER_TOOLS), recorder)
    for event in audited.feed(HERMES_CALL):
        if isinstance(event, toolparse.ToolCallEnd):
            decision = {"call": event.call.id, "valid": True, "schema_errors": []}
            audited.add_validation(decision)
            decision["valid"] = False  # the record holds the copy made when it was added
            audited.add_guard({"call": event.call.id, "allow": False, "rule": "read-only"})
    with pytest.raises(ValueError):
        audited.add_guard({"when": object()})
    with pytest.raises(ValueError):
        audited.add_guard({"score": float("nan")})
    audited.finish()
    [record] = recorder.records
    call_id = record["message"]["tool_calls"][0]["id"]
    assert record["validation"] == [{"call": call_id, "valid": True, "schema_errors": []}]
    assert record["guard"] == [{"call": call_id, "allow": False, "rule": "read-only"}]
    with pytest.raises(RuntimeError):
        audited.add_guard({"late": True})  # already written at finish
    with pytest.raises(RuntimeError):
        audited.feed("more")


def test_decisions_after_finish_with_manual_commit() -> None:
    recorder = MemoryRecorder()
    audited = AuditedParser(StreamParser("hermes"), recorder, auto_commit=False, meta={"req": 7})
    audited.feed("Hello")
    audited.finish()
    assert recorder.records == []
    audited.add_guard({"allow": True})
    record = audited.commit()
    assert recorder.records == [record]
    assert record is not None and record["guard"] == [{"allow": True}]
    assert record["meta"] == {"req": 7}
    assert audited.commit() is None  # once


def test_reset_writes_an_abandoned_response_and_starts_a_new_record() -> None:
    recorder = MemoryRecorder()
    audited = AuditedParser(StreamParser("hermes", tools=WEATHER_TOOLS), recorder)
    audited.feed(HERMES_CALL[:40])
    audited.reset()  # the client went away
    audited.reset()  # nothing fed: nothing written
    with audited:
        audited.feed("Second.")
        audited.finish()
    first, second = recorder.records
    assert first["finish"] is None and len(first["events"]) == 1
    assert first["message"]["finish_reason"] is None
    assert second["message"]["content"] == "Second."
    assert first["id"] != second["id"]
    assert replay(first).ok and replay(second).ok


def test_options_are_recorded_for_the_replay() -> None:
    recorder = MemoryRecorder()
    parser = StreamParser("qwen3", reasoning_in_prompt=True, engine=ENGINE)
    audited = AuditedParser(parser, recorder)
    audited.feed("thinking\n</think>\n\nAnswer.")
    audited.finish()
    [record] = recorder.records
    assert record["options"] == {
        "tools": None,
        "reasoning_in_prompt": True,
        "repair": False,
        "engine": ENGINE,
    }
    assert record["message"]["reasoning_content"] == "thinking\n"
    assert replay(record).ok
    record["options"]["reasoning_in_prompt"] = False
    assert "message" in replay(record).parts()


def test_jsonl_recorder_on_an_open_stream() -> None:
    stream = io.StringIO()
    recorder = JsonlRecorder(stream)
    for text in ("one", "zwei €"):
        audited = AuditedParser(StreamParser("hermes"), recorder)
        audited.feed(text)
        audited.finish()
    recorder.close()
    assert not stream.closed
    lines = stream.getvalue().splitlines()
    assert [json.loads(line)["message"]["content"] for line in lines] == ["one", "zwei €"]
    assert "zwei €" in lines[1]
    with pytest.raises(ValueError):
        recorder.write({})
