"""Format.structural_tag(): xgrammar's structural tag, checked against the shape xgrammar
documents (a JSON Schema of it, written here), and against the parser: a call written as
begin + arguments + end parses as that call."""

from __future__ import annotations

import json
from typing import Any

import pytest

import toolparse
from engines import FIXTURES_DIR
from toolparse.export.structural_tag import to_structural_tag
from toolparse.formats import get_format

jsonschema = pytest.importorskip("jsonschema")

# xgrammar's structural tag, the "format" shape: a triggered_tags format whose tags are
# begin / json_schema content / end.
_TAG = {
    "type": "object",
    "required": ["type", "begin", "content", "end"],
    "additionalProperties": False,
    "properties": {
        "type": {"const": "tag"},
        "begin": {"type": "string", "minLength": 1},
        "end": {"type": "string"},
        "content": {
            "type": "object",
            "required": ["type", "json_schema"],
            "additionalProperties": False,
            "properties": {"type": {"const": "json_schema"}, "json_schema": {"type": "object"}},
        },
    },
}
FORMAT_SHAPE = {
    "type": "object",
    "required": ["type", "format"],
    "additionalProperties": False,
    "properties": {
        "type": {"const": "structural_tag"},
        "format": {
            "type": "object",
            "required": ["type", "triggers", "tags"],
            "additionalProperties": False,
            "properties": {
                "type": {"const": "triggered_tags"},
                "triggers": {
                    "type": "array",
                    "minItems": 1,
                    "items": {"type": "string", "minLength": 1},
                },
                "tags": {"type": "array", "items": _TAG},
                "at_least_one": {"type": "boolean"},
                "stop_after_first": {"type": "boolean"},
            },
        },
    },
}
# the older shape: structures of begin / schema / end, and the triggers
LEGACY_SHAPE = {
    "type": "object",
    "required": ["type", "structures", "triggers"],
    "additionalProperties": False,
    "properties": {
        "type": {"const": "structural_tag"},
        "structures": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["begin", "schema", "end"],
                "additionalProperties": False,
                "properties": {
                    "begin": {"type": "string", "minLength": 1},
                    "schema": {"type": "object"},
                    "end": {"type": "string"},
                },
            },
        },
        "triggers": {"type": "array", "minItems": 1, "items": {"type": "string", "minLength": 1}},
    },
}

# Formats with no structural tag, and why (docs/export.md).
_ONE_JSON = "one JSON value of arguments"
NOT_EXPRESSIBLE = {
    "lfm2": "Python literal",
    "llama3_json": "Python literal",
    "pythonic": "Python literal",
    "olmo3": "Python literal",
    "kimi": "no tool calls",
    # arguments as XML-style parameters, Gemma notation, or a channel header's name
    **dict.fromkeys(
        (
            "functiongemma",
            "gemma4",
            "gigachat3",
            "gigachat35",
            "glm45",
            "gpt_oss",
            "hunyuan",
            "iquest_q1",
            "kimi_k2",
            "kimi_k3",
            "ling3",
            "minicpm5",
            "minimax_m2",
            "minimax_m3",
            "muse",
            "poolside_v1",
            "qwen3_coder",
            "seed_oss",
            "step3",
        ),
        _ONE_JSON,
    ),
}
NAMES = sorted(p.name for p in FIXTURES_DIR.iterdir() if p.is_dir())


def _tools(name: str) -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = json.loads((FIXTURES_DIR / name / "tools.json").read_text())
    return tools


def _arguments(schema: dict[str, Any]) -> dict[str, Any] | None:
    """Arguments that meet a schema of string properties, or None."""
    props = schema.get("properties") or {}
    required = schema.get("required") or []
    if any((props.get(k) or {}).get("type") != "string" for k in required):
        return None
    return {k: "Paris" for k in required}


@pytest.mark.parametrize("name", NAMES)
def test_structural_tag(name: str) -> None:
    fmt = get_format(name)
    tools = _tools(name)
    if name in NOT_EXPRESSIBLE:
        with pytest.raises(NotImplementedError, match=NOT_EXPRESSIBLE[name]):
            fmt.structural_tag(tools)
        return
    tag = fmt.structural_tag(tools)
    jsonschema.validate(tag, FORMAT_SHAPE)
    triggers = tag["format"]["triggers"]
    checked = 0
    for spec, tool in zip(tag["format"]["tags"], tools, strict=True):
        assert any(spec["begin"].startswith(t) for t in triggers)
        function = tool["function"]
        assert spec["content"]["json_schema"] == (function.get("parameters") or {"type": "object"})
        arguments = _arguments(spec["content"]["json_schema"])
        if arguments is None:
            continue
        text = spec["begin"] + json.dumps(arguments) + spec["end"]
        # the tag describes the calls after any reasoning
        message = toolparse.parse(text, fmt, tools=tools, reasoning_in_prompt=False)
        assert [(c.name, c.arguments) for c in message.tool_calls] == [
            (function["name"], arguments)
        ], text
        checked += 1
    assert checked


def test_legacy_shape() -> None:
    fmt = get_format("hermes")
    tools = _tools("hermes")
    legacy = to_structural_tag(fmt, tools, legacy=True)
    jsonschema.validate(legacy, LEGACY_SHAPE)
    tags = fmt.structural_tag(tools)["format"]
    assert legacy["triggers"] == tags["triggers"]
    assert [(s["begin"], s["schema"], s["end"]) for s in legacy["structures"]] == [
        (t["begin"], t["content"]["json_schema"], t["end"]) for t in tags["tags"]
    ]


def test_tool_choice_flags() -> None:
    fmt = get_format("hermes")
    tools = _tools("hermes")
    auto = fmt.structural_tag(tools)["format"]
    assert not auto["at_least_one"] and not auto["stop_after_first"]
    required = fmt.structural_tag(tools, tool_choice="required")["format"]
    assert required["at_least_one"] and not required["stop_after_first"]
    one = fmt.structural_tag(tools, tool_choice="required", parallel_tool_calls=False)["format"]
    assert one["at_least_one"] and one["stop_after_first"]
    named = fmt.structural_tag(
        tools, tool_choice={"type": "function", "function": {"name": "get_weather"}}
    )["format"]
    assert [t["begin"] for t in named["tags"]] == ['<tool_call>{"name":"get_weather","arguments":']
    assert named["triggers"] == ["<tool_call>"]
