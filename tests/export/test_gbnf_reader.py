"""gbnf_reader.py, the tests' GBNF reader: the notation the exports write, and the same
verdicts as llguidance's GBNF converter where that converter's greedy lexing does not
decide them."""

from __future__ import annotations

import pytest
from test_export_lark import CALL_OBJECTS, WEATHER, run

from gbnf_reader import GbnfError, read_gbnf
from toolparse import export
from toolparse.formats import get_format

llguidance = pytest.importorskip("llguidance")
from llguidance.gbnf_to_lark import gbnf_to_lark  # noqa: E402


@pytest.mark.parametrize(
    ("grammar", "text", "ends"),
    [
        ('root ::= "ab" | "a"', "ab", [1, 2]),
        ('root ::= [^x-z]+ "x"', "abx", [3]),
        ('root ::= [\\x61-\\x62]* "\\n"', "abc\n", []),
        ('root ::= [\\x61-\\x62]* "\\n"', "abb\n", [4]),
        ('root ::= "a"{2,3}', "aaaa", [2, 3]),
        ('root ::= "a"{2}', "aaa", [2]),
        ('root ::= "a"{1,}', "aaa", [1, 2, 3]),
        ('root ::= x x\nx ::= "" | "a"', "aa", [0, 1, 2]),
        ('root ::= "(" root ")" | ""', "(())", [0, 4]),
        ('root ::= ( "a" | "b" )? "c"', "bc", [2]),
        ("root ::= [\\x5d\\x5e-]", "^", [1]),
        ('root ::= "\\u00e9" [^\\x00-\\x7f]', "éé", [2]),
    ],
)
def test_reads_the_notation(grammar: str, text: str, ends: list[int]) -> None:
    assert read_gbnf(grammar).ends(text) == ends


def test_a_rule_used_but_not_defined_is_an_error() -> None:
    with pytest.raises(GbnfError, match="not defined"):
        read_gbnf("root ::= other")


def test_no_lexer_decides_for_the_grammar() -> None:
    # a run of characters and then a literal that the run could also take: a greedy
    # lexer keeps the run and the literal never comes; the grammar takes it
    grammar = 'root ::= [a-z]* "end"'
    assert read_gbnf(grammar).ends("abend") == [5]


@pytest.mark.parametrize(("obj", "taken"), CALL_OBJECTS.items())
def test_agrees_with_llguidance_on_a_gbnf_export(obj: str, taken: bool) -> None:
    tool = {"type": "function", "function": {"name": "get_weather", "parameters": WEATHER}}
    gbnf = export.gbnf(get_format("hermes"), [tool])["grammar"]
    output = f"<tool_call>{obj}</tool_call>"
    assert (len(output) in read_gbnf(gbnf).ends(output)) == taken
    assert (run(gbnf_to_lark(gbnf), output.encode()) is None) == taken
