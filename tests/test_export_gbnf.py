"""Format.gbnf(): llama.cpp GBNF for every format that can be exported, read by
llguidance's GBNF converter and compiled; on hermes, clean outputs are taken and broken
calls refused."""

from __future__ import annotations

import json
from typing import Any

import pytest

from engines import FIXTURES_DIR
from toolparse.export import _ir as toolparse_export
from toolparse.formats import get_format

llguidance = pytest.importorskip("llguidance")
from llguidance.gbnf_to_lark import gbnf_to_lark  # noqa: E402

from test_export_lark import NOT_EXPRESSIBLE, run  # noqa: E402

NAMES = sorted(p.name for p in FIXTURES_DIR.iterdir() if p.is_dir())


def _tools(name: str) -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = json.loads((FIXTURES_DIR / name / "tools.json").read_text())
    return tools


@pytest.mark.parametrize("name", NAMES)
def test_gbnf_compiles(name: str) -> None:
    fmt = get_format(name)
    if name in NOT_EXPRESSIBLE:
        with pytest.raises(NotImplementedError):
            fmt.gbnf(_tools(name))
        return
    out = fmt.gbnf(_tools(name))
    assert set(out) == {"grammar", "grammar_lazy", "grammar_triggers", "preserved_tokens"}
    assert out["grammar"].startswith("root ::= ")
    lark = gbnf_to_lark(out["grammar"])
    matcher = llguidance.LLMatcher(_tokenizer(), lark, log_level=0)
    assert not matcher.is_error(), matcher.get_error()
    for trigger in out["grammar_triggers"]:
        assert trigger["type"] == "word" and trigger["value"]
    assert out["grammar_lazy"] == bool(out["grammar_triggers"])
    if not toolparse_export.has_calls(fmt):
        with pytest.raises(ValueError, match="no output"):
            fmt.gbnf(_tools(name), tool_choice="required")
        return
    required = fmt.gbnf(_tools(name), tool_choice="required")
    assert not required["grammar_lazy"] and not required["grammar_triggers"]


def _tokenizer() -> Any:
    from test_export_lark import TOKENIZER

    return TOKENIZER


@pytest.mark.parametrize(
    ("case", "taken"),
    [
        ("single_call", True),
        ("two_parallel_calls", True),
        ("content_before_and_after_call", True),
        ("reasoning_then_call", True),
        ("invalid_json_then_valid_call", False),
        ("unknown_tool_only", False),
    ],
)
def test_hermes_gbnf_runs(case: str, taken: bool) -> None:
    grammar = gbnf_to_lark(get_format("hermes").gbnf(_tools("hermes"))["grammar"])
    data = (FIXTURES_DIR / "hermes" / f"{case}.txt").read_bytes()
    assert (run(grammar, data) is None) == taken


def test_schema_is_enforced() -> None:
    tools = [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "parameters": {
                    "type": "object",
                    "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                    "required": ["city"],
                },
            },
        }
    ]
    grammar = gbnf_to_lark(get_format("hermes").gbnf(tools)["grammar"])
    good = (
        b'<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo", "days": 2}}</tool_call>'
    )
    assert run(grammar, good) is None
    assert run(grammar, good.replace(b"2}", b'"2"}')) is not None
    assert run(grammar, good.replace(b'"city": "Oslo", ', b"")) is not None
