"""Format.lark() where text competes with a call whose head it could also begin with
(xlam's bare list `[{"name":`, granite's `<tool_call>` then a list, internlm's
`<|action_start|>` then `<|plugin|>`): the export takes an
output with no call exactly where the parser reads it as text, and, with a call
required, the call.  llguidance's lexer is greedy, so these hold only where the text is
written in the head's own lexemes."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from test_export_lark import exported, run

import toolparse
from engines import FIXTURES_DIR

pytest.importorskip("llguidance")

# Pieces of a call's head and of text beside it.  None completes a marker, and each
# output ends with a plain character: the export takes no text that ends with a
# marker's beginning right before that marker, nor two beginnings of markers at the end
# of the output (docs/export.md)
XLAM_PIECES = ["[", "]", "{", "}", " ", "\n", '"name"', '"arguments"', '"nam', ":", ",", "x", "[T"]
INTERNLM_PIECES = ["<|action_start|>", "<|plugin|>", "<|plu", " ", "\n", "{", "x"]
GRANITE_PIECES = ["<tool_call>", " ", "\n", "[", "]", "{", "}", '"name"', ":", "x"]


def _tools(name: str) -> str:
    return json.dumps(json.loads((FIXTURES_DIR / name / "tools.json").read_text()))


def _reads_as_text(name: str, text: str, tools: str) -> bool:
    """Whether the parser reads the whole output without a call or an error."""
    message = toolparse.parse(text, name, tools=json.loads(tools))
    return not message.tool_calls and not message.errors


_XLAM_HEAD = r'\[[ \t\r\n]*(\]|\{[ \t\r\n]*"(name|arguments)"[ \t\r\n]*:)'
# An empty call list, then text that begins as a list would: the export's content
# refuses a list's head wherever it stands (docs/export.md), where the parser reads it
# as text after the first list.
_XLAM_STRICTER = re.compile(r"[ \t\r\n]*\[[ \t\r\n]*\][ \t\r\n]*" + _XLAM_HEAD)


def _check_no_call(name: str, pieces: list[str]) -> None:
    text = "".join(pieces) + "."
    tools = _tools(name)
    lark = exported("lark", name, tools, '"none"', True, None)
    taken = run(lark, text.encode()) is None
    if name == "xlam" and _XLAM_STRICTER.match(text):
        assert not taken, text
        return
    assert taken == _reads_as_text(name, text, tools), (text, taken)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(XLAM_PIECES), max_size=10))
@example(["[", "{", '"name"', ":"])  # the head: a (broken) call list
@example(["[", " ", "{", " ", '"nam', "x"])  # diverges inside the key: text
@example(["[", "{", '"name"', " ", "x"])  # diverges before the colon: text
@example(["[", "\n", "]"])  # an empty call list: no call, no text
@example(["[", "x", "{", '"name"', ":"])  # a list further on is text
def test_xlam_text_is_what_the_parser_reads_as_text(pieces: list[str]) -> None:
    _check_no_call("xlam", pieces)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(GRANITE_PIECES), max_size=8))
@example(["<tool_call>", " ", "["])  # the call's head (a broken call)
@example(["<tool_call>", " ", "x"])  # the marker as text
@example(["x", "<tool_call>", "\n", "{"])
def test_granite_text_is_what_the_parser_reads_as_text(pieces: list[str]) -> None:
    _check_no_call("granite", pieces)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(INTERNLM_PIECES), max_size=8))
@example(["<|action_start|>", "\n", "<|plugin|>"])  # the call's head (a broken call)
@example(["<|action_start|>", "<|plu", "x"])  # the opener as text
@example(["x", "<|plugin|>"])
def test_internlm_text_is_what_the_parser_reads_as_text(pieces: list[str]) -> None:
    _check_no_call("internlm", pieces)


CALL = '{"name": "get_weather", "arguments": {"city": "Paris"}}'


@pytest.mark.parametrize(
    ("name", "output"),
    [
        ("xlam", f"[{CALL}]"),
        ("xlam", f"[ \n{CALL}, {CALL}]"),
        ("xlam", f"<think>why</think>\n[{CALL}]"),
        ("xlam", f"Sure.\n```json\n[{CALL}]\n```"),
        ("xlam", f"Sure.</think>\n\n[{CALL}]"),
        ("granite", f"<tool_call> [{CALL}]"),
        ("granite", f"Text first.<tool_call>\n[{CALL}]"),
        ("internlm", f"Text.<|action_start|> <|plugin|>\n{CALL}<|action_end|>"),
    ],
)
def test_a_call_is_taken_where_one_is_required(name: str, output: str) -> None:
    tools = _tools(name)
    message = toolparse.parse(output, name, tools=json.loads(tools))
    assert [c.name for c in message.tool_calls] and not message.errors
    required: Any = exported("lark", name, tools, '"required"', True, None)
    assert run(required, output.encode()) is None
    # and with no call allowed, the same output is refused: it is not text
    assert run(exported("lark", name, tools, '"none"', True, None), output.encode()) is not None
