"""A format's marker never reaches content or reasoning text: one met where the format has
no place for it is an `unexpected` error at its offset and dropped, and the text goes on
after it (formats/_guard.py).  Exempt: a format's text_markers (words and plain-text tags
that prose holds), fallback conventions (their markers are text elsewhere), and, in a
format where a call drafted inside reasoning is reasoning text, that reasoning."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import toolparse
from engines import ENGINES
from toolparse.formats import FORMATS, Format

FIXTURES = Path(__file__).parent.parent / "fixtures"


def _tools(name: str) -> list[dict[str, Any]] | None:
    path = FIXTURES / name / "tools.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def _cases() -> list[Any]:
    cases = []
    for name, fmt in FORMATS.items():
        if fmt.fallback:
            continue
        places = [False]
        if (
            fmt.call_in_reasoning == "ends_reasoning"
            and "start_in_reasoning" in fmt.grammar.entries
        ):
            places.append(True)
        for marker in fmt.markers:
            if marker in fmt.text_markers:
                continue
            for in_reasoning in places:
                cases.append(
                    pytest.param(fmt, marker, in_reasoning, id=f"{name}-{marker}-{in_reasoning}")
                )
    return cases


def _parse(fmt: Format, text: str, in_reasoning: bool, engine: str) -> toolparse.Message:
    return toolparse.parse(
        text, fmt, tools=_tools(fmt.name), reasoning_in_prompt=in_reasoning, engine=engine
    )


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(("fmt", "marker", "in_reasoning"), _cases())
def test_a_marker_never_reaches_the_text(
    fmt: Format, marker: str, in_reasoning: bool, engine: str
) -> None:
    for text in (f"alpha {marker} beta", f"{marker} beta", f"alpha {marker}"):
        message = _parse(fmt, text, in_reasoning, engine)
        assert marker not in (message.content or ""), text
        assert marker not in (message.reasoning_content or ""), text


@pytest.mark.parametrize("engine", ENGINES)
def test_a_stray_marker_is_reported_where_it_stands_and_the_text_goes_on(engine: str) -> None:
    text = "It is sunny </tool_call> in Paris."
    message = _parse(FORMATS["qwen3"], text, False, engine)
    assert message.content == "It is sunny  in Paris."
    assert [(e.kind, e.offset) for e in message.errors] == [("unexpected", text.index("</"))]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_second_opener_inside_reasoning_is_dropped(engine: str) -> None:
    message = _parse(FORMATS["qwen3"], "first\n<think>second</think>Answer.", True, engine)
    assert message.reasoning_content == "first\nsecond"
    assert message.content == "Answer."
    assert [e.kind for e in message.errors] == ["unexpected"]


def test_text_markers_are_kept() -> None:
    message = toolparse.parse("Type >>> print(1) at the prompt.", "functionary_v3_2")
    assert message.content == "Type >>> print(1) at the prompt."
    assert not message.errors
