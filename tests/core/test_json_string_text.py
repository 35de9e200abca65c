"""Reasoning or content written as a JSON string (tag decode="json_string"): the text
streams decoded, the same on both engines and under any chunking, even where a piece ends
inside an escape, a surrogate pair or a UTF-8 character."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engines import ENGINES, run_events
from helpers import partitions
from toolparse import ContentDelta, Format, StreamParser, parse
from toolparse.grammar import Grammar, eof, seq, tag, ws
from toolparse.grammar import json as json_value

by_engine = pytest.mark.parametrize("engine", ENGINES)

STRING_CONTENT = Format(
    name="string_content",
    description="one JSON string whose value is the content",
    grammar=Grammar(
        {"start": seq(ws(), tag("content", json_value(), decode="json_string"), ws(), eof())},
        {"start": "start"},
    ),
)


@settings(max_examples=200, deadline=None)
@given(text=st.text(), ascii_only=st.booleans(), data=st.data())
def test_a_json_string_streams_as_its_value(
    text: str, ascii_only: bool, data: st.DataObject
) -> None:
    source = json.dumps(text, ensure_ascii=ascii_only).encode()
    sizes = data.draw(partitions(len(source)))
    for engine in ENGINES:
        events = run_events(StreamParser(STRING_CONTENT, engine=engine), source, sizes)
        assert "".join(e.text for e in events if isinstance(e, ContentDelta)) == text


@by_engine
def test_each_character_streams_as_soon_as_it_is_whole(engine: str) -> None:
    parser = StreamParser(STRING_CONTENT, engine=engine)
    pieces = [
        b'"a',
        b"\\",
        b"n",
        b"\\u00",
        b"e9",
        b"\\ud83d",
        b"\\ude00",
        b"\xe2\x98",
        b"\x95",
        b'"',
    ]
    seen = [[e.text for e in parser.feed(piece) if isinstance(e, ContentDelta)] for piece in pieces]
    assert seen == [["a"], [], ["\n"], [], ["é"], [], ["😀"], [], ["☕"], []]


@by_engine
def test_a_string_cut_short_keeps_its_text_and_reports_the_cut(engine: str) -> None:
    message = parse(b'"half a sent', STRING_CONTENT, engine=engine)
    assert message.content == "half a sent"
    assert [e.kind for e in message.errors] == ["incomplete"]
