"""chars() and const(): byte-set runs across chunks, and text a grammar implies."""

from __future__ import annotations

from typing import Any

import pytest

from engines import ENGINES, run_events
from toolparse import Format, ParseError, StreamParser, ToolCallEnd, parse
from toolparse.grammar import (
    Grammar,
    Node,
    chars,
    choice,
    const,
    eof,
    lit,
    seq,
    stopped,
    tag,
    until,
)

by_engine = pytest.mark.parametrize("engine", ENGINES)

NAME_THEN_HASH = Format(
    name="name_then_hash",
    description="a name of letters, then #",
    grammar=Grammar(
        {"start": seq(tag("tool_call", seq(tag("tool_name", chars("a-z", min1=True)), lit("#"))))},
        {"start": "start"},
    ),
)


@by_engine
@pytest.mark.parametrize("sizes", [[1] * 11, [3, 3, 3, 2], [11]])
def test_chars_takes_the_longest_run_across_chunks(engine: str, sizes: list[int]) -> None:
    events = run_events(StreamParser(NAME_THEN_HASH, engine=engine, seed=1), "abcdefghij#", sizes)
    ends = [e for e in events if isinstance(e, ToolCallEnd)]
    assert [e.call.name for e in ends] == ["abcdefghij"]


@by_engine
@pytest.mark.parametrize(
    ("text", "kind", "offset"),
    [
        ("#", "invalid_arguments", 0),
        ("", "incomplete", 0),
        ("ab", "incomplete", 2),
        ("aB#", "invalid_arguments", 1),
    ],
)
def test_chars_fails_where_the_run_ends(engine: str, text: str, kind: str, offset: int) -> None:
    message = parse(text, NAME_THEN_HASH, engine=engine)
    assert message.tool_calls == []
    assert [(e.kind, e.offset) for e in message.errors] == [(kind, offset)]


def raw_code(end: Node) -> Format:
    """<py>, then code up to </py>: a call of python with a code argument; `end` is what
    must come after the code, inside the call."""
    return Format(
        name="raw_code",
        description="<py>code</py> is a call of python with a code argument",
        grammar=Grammar(
            {
                "start": seq(
                    lit("<py>"),
                    tag(
                        "tool_call",
                        seq(
                            tag("tool_name", const("python")),
                            tag("param_name", const("code")),
                            tag("param_value", until("</py>"), decode="string"),
                            end,
                        ),
                    ),
                    eof(),
                )
            },
            {"start": "start"},
        ),
    )


RAW_CODE = raw_code(lit("</py>"))


@by_engine
@pytest.mark.parametrize("sizes", [None, [1] * 21])
def test_const_gives_a_tag_text_not_in_the_output(engine: str, sizes: list[int] | None) -> None:
    source = '<py>print("hi")\n</py>'
    assert len(source) == 21
    events = run_events(StreamParser(RAW_CODE, engine=engine, seed=1), source, sizes)
    (end,) = [e for e in events if isinstance(e, ToolCallEnd)]
    assert (end.call.name, end.call.arguments) == ("python", {"code": 'print("hi")\n'})


@by_engine
def test_a_call_made_of_const_and_cut_short_is_incomplete(engine: str) -> None:
    message = parse("<py>x", RAW_CODE, engine=engine)
    assert message.tool_calls == []
    assert [e.kind for e in message.errors] == ["incomplete"]


IMPLIED_OR_WORD = Format(
    name="implied_or_word",
    description="! stands for the text [implied]; otherwise a word is content",
    grammar=Grammar(
        {
            "start": seq(
                choice(
                    seq(tag("content", const("[implied]")), lit("!")),
                    tag("content", chars("a-z")),
                ),
                eof(),
            )
        },
        {"start": "start"},
    ),
)


@by_engine
@pytest.mark.parametrize(("text", "content"), [("!", "[implied]"), ("abc", "abc")])
def test_const_of_an_alternative_that_failed_leaves_no_text(
    engine: str, text: str, content: str
) -> None:
    assert parse(text, IMPLIED_OR_WORD, engine=engine).content == content


RAW_CODE_TO_THE_END = raw_code(choice(lit("</py>"), stopped()))


@by_engine
@pytest.mark.parametrize(
    ("reason", "calls", "errors"),
    [("stop", [("python", {"code": "x = 1"})], []), ("length", [], [("incomplete", 9)])],
)
def test_stopped_tells_an_output_that_ended_from_one_cut_short(
    engine: str, reason: str, calls: list[Any], errors: list[Any]
) -> None:
    parser = StreamParser(RAW_CODE_TO_THE_END, engine=engine)
    events = parser.feed("<py>x = 1") + parser.finish(reason)
    assert [(e.call.name, e.call.arguments) for e in events if isinstance(e, ToolCallEnd)] == calls
    assert [(e.kind, e.offset) for e in events if isinstance(e, ParseError)] == errors
    # a closing marker ends the call whatever the reason
    parser = StreamParser(RAW_CODE_TO_THE_END, engine=engine)
    events = parser.feed("<py>x = 1</py>") + parser.finish(reason)
    assert len([e for e in events if isinstance(e, ToolCallEnd)]) == 1
