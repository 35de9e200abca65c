"""Format.structural_tag(): xgrammar's structural tag, checked against the shape xgrammar
documents (a JSON Schema of it, written here), and against the parser: a call written as
begin + arguments + end parses as that call.  Where the call body is a grammar, each clean
fixture's calls are begin + body + end with a body the grammar takes, read as GBNF
(gbnf_reader.py: each character where the grammar stands, as xgrammar reads it; the
grammar also compiles in llguidance through its GBNF converter)."""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any

import pytest

import toolparse
from engines import FIXTURES_DIR
from helpers import WEATHER_TOOL
from toolparse import export
from toolparse.export.to_structural_tag import to_structural_tag
from toolparse.formats import get_format

jsonschema = pytest.importorskip("jsonschema")
llguidance = pytest.importorskip("llguidance")
from llguidance.gbnf_to_lark import gbnf_to_lark  # noqa: E402
from test_export_lark import compiled, kind  # noqa: E402

from engines import FIXTURES, Fixture  # noqa: E402
from gbnf_reader import Grammar, read_gbnf  # noqa: E402

# xgrammar's structural tag, the "format" shape: a triggered_tags format whose tags are
# begin / content / end, the content a JSON Schema or an EBNF grammar (xgrammar's
# python/xgrammar/structural_tag.py: JSONSchemaFormat, GrammarFormat).
_JSON_CONTENT = {
    "type": "object",
    "required": ["type", "json_schema"],
    "additionalProperties": False,
    "properties": {"type": {"const": "json_schema"}, "json_schema": {"type": "object"}},
}
_GRAMMAR_CONTENT = {
    "type": "object",
    "required": ["type", "grammar"],
    "additionalProperties": False,
    "properties": {
        "type": {"const": "grammar"},
        "grammar": {"type": "string", "pattern": "^root ::= "},
    },
}
_TAG = {
    "type": "object",
    "required": ["type", "begin", "content", "end"],
    "additionalProperties": False,
    "properties": {
        "type": {"const": "tag"},
        "begin": {"type": "string", "minLength": 1},
        "end": {"type": "string"},
        "content": {"oneOf": [_JSON_CONTENT, _GRAMMAR_CONTENT]},
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
NOT_EXPRESSIBLE = {
    "granite_pythonic": "no fixed text begins a call",
    "kimi": "no tool calls",
}
# Formats whose call body is a grammar: XML-style parameters, Gemma notation, a channel
# header naming the tool, an index before the JSON arguments
GRAMMAR = frozenset(
    (
        "functiongemma",
        "gemma4",
        "gigachat3",
        "gigachat35",
        "glm45",
        "gpt_oss",
        "hunyuan",
        "iquest_coder_v2",
        "iquest_q1",
        "kimi_k2",
        "kimi_k3",
        "ling3",
        "llmjp_harmony",
        "minicpm5",
        "minimax_m2",
        "minimax_m3",
        "muse",
        "olmo3",
        "poolside_v1",
        "pythonic",
        "qwen3_coder",
        "seed_oss",
        "step3",
        "step5",
    )
)
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
            export.structural_tag(fmt, tools)
        return
    tag = _tag(name)
    jsonschema.validate(tag, FORMAT_SHAPE)
    triggers = tag["format"]["triggers"]
    checked = 0
    if name in GRAMMAR:
        # a tag or more per tool (spellings of the begin), each a grammar; the fixtures
        # check the bodies (test_grammar_tag_takes_the_fixture_calls)
        by_tool = _tags(name)
        assert list(by_tool) == [t["function"]["name"] for t in tools]
        assert all(by_tool.values())
        assert sum(len(v) for v in by_tool.values()) == len(tag["format"]["tags"])
        for spec in tag["format"]["tags"]:
            assert any(spec["begin"].startswith(t) for t in triggers)
            assert spec["content"]["type"] == "grammar"
            # xgrammar's EBNF lexer reads a C string, one rule a line: control characters
            # are written as escapes
            assert not re.search("[\x00-\x09\x0b-\x1f]", spec["content"]["grammar"])
        return
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
    tags = export.structural_tag(fmt, tools)["format"]
    assert legacy["triggers"] == tags["triggers"]
    assert [(s["begin"], s["schema"], s["end"]) for s in legacy["structures"]] == [
        (t["begin"], t["content"]["json_schema"], t["end"]) for t in tags["tags"]
    ]


def test_tool_choice_flags() -> None:
    fmt = get_format("hermes")
    tools = _tools("hermes")
    auto = export.structural_tag(fmt, tools)["format"]
    assert not auto["at_least_one"] and not auto["stop_after_first"]
    required = export.structural_tag(fmt, tools, tool_choice="required")["format"]
    assert required["at_least_one"] and not required["stop_after_first"]
    one = export.structural_tag(fmt, tools, tool_choice="required", parallel_tool_calls=False)[
        "format"
    ]
    assert one["at_least_one"] and one["stop_after_first"]
    named = export.structural_tag(
        fmt, tools, tool_choice={"type": "function", "function": {"name": "get_weather"}}
    )["format"]
    assert [t["begin"] for t in named["tags"]] == ['<tool_call>{"name":"get_weather","arguments":']
    assert named["triggers"] == ["<tool_call>"]


@cache
def _tag(name: str) -> dict[str, Any]:
    tag: dict[str, Any] = export.structural_tag(get_format(name), _tools(name))
    return tag


@cache
def _tags(name: str) -> dict[str, list[tuple[bytes, Grammar, bytes]]]:
    """Each tool's tags: (begin, grammar, end), in the tools' order."""
    tags = _tag(name)["format"]["tags"]
    names = [t["function"]["name"] for t in _tools(name)]
    out: dict[str, list[tuple[bytes, Grammar, bytes]]] = {n: [] for n in names}
    for spec in tags:
        # the longest tool name in the begin (get_weather_forecast over get_weather)
        tool = max((n for n in names if n in spec["begin"]), key=len)
        out[tool].append(
            (
                spec["begin"].encode(),
                _grammar(spec["content"]["grammar"]),
                spec["end"].encode(),
            )
        )
    return out


def _grammar(gbnf: str) -> Grammar:
    """The grammar as the tests read it, once it compiles in llguidance too."""
    compiled(gbnf_to_lark(gbnf))
    return read_gbnf(gbnf)


def _body_ends(grammar: Grammar, data: bytes) -> list[int]:
    """The lengths in bytes of the prefixes of data the grammar takes whole."""
    text = data.decode("utf-8", "replace")
    return [len(text[:n].encode()) for n in grammar.ends(text)]


def _calls_through_tags(name: str, raw: bytes, calls: list[dict[str, Any]]) -> str | None:
    """None if each call, in order, is its tool's begin + a body the tag's grammar takes
    + its end; else what went wrong."""
    tags = _tags(name)
    cursor = 0
    for call in calls:
        # the tag of this tool whose begin comes first (the longest there)
        found = [(raw.find(b, cursor), -len(b), b, g, e) for b, g, e in tags[call["name"]]]
        found = [f for f in found if f[0] >= 0]
        if not found:
            return f"no begin of {call['name']} after byte {cursor}"
        at, _, begin, grammar, end = min(found, key=lambda f: f[:2])
        start = at + len(begin)
        ends = [n for n in _body_ends(grammar, raw[start:]) if raw[start + n :].startswith(end)]
        if not ends:
            return f"the body after {begin!r} at byte {at} is not taken up to {end!r}"
        # an empty end: the longest body the grammar takes
        cursor = start + (ends[-1] if not end else ends[0]) + len(end)
    return None


GRAMMAR_FIXTURES = [
    fx
    for fx in FIXTURES
    if fx.format in GRAMMAR and kind(fx) == "clean" and fx.expected["message"].get("tool_calls")
]
# Fixture calls a grammar tag does not take, and why; the test fails if one starts passing.
_SPELLING = "the begin is one fixed spelling of the text up to the tool name; the fixture "
TAG_KNOWN: dict[str, str] = {
    **dict.fromkeys(
        (
            "gigachat3/call_followed_by_eos",
            "gigachat3/content_then_call",
            "gigachat3/marker_text_inside_string_arguments",
            "gigachat3/nested_arguments_with_escapes_and_unicode",
            "gigachat3/parameterless_call",
            "gigachat3/prefix_name_search",
            "gigachat3/single_call_without_content",
        ),
        _SPELLING + "writes whitespace inside the header and the JSON before the name "
        '(`<|message_sep|>\\n\\nfunction call<|role_sep|>\\n{"name": "`)',
    ),
    "gigachat3/gigachat31_function_call_token": _SPELLING + "writes `<|function_call|>`",
    "gigachat3/header_without_separator": _SPELLING + "leaves out `<|message_sep|>`",
    "gpt_oss/call_in_role_header": _SPELLING + "names the tool in a role header with no "
    "`<|start|>assistant` before it",
    "gpt_oss/role_left_out_before_call": _SPELLING + "leaves the role out of "
    "`<|start|><|channel|>commentary to=functions.`",
    "llmjp_harmony/call_in_role_header": _SPELLING + "names the tool in a role header with no "
    "`<|start|> assistant` before it",
    "kimi_k2/id_without_prefix_and_with_spaces": _SPELLING
    + "leaves out `functions.` and writes a space before the name",
    **dict.fromkeys(
        (
            "pythonic/json_literals_are_accepted",
            "pythonic/list_then_text",
            "pythonic/marker_text_inside_argument",
            "pythonic/one_call",
            "pythonic/python_literals",
            "pythonic/several_calls",
            "pythonic/tool_names_that_are_prefixes",
        ),
        "a bare list of calls (no <|python_start|>) has no trigger: each begin starts at the "
        "format's marker",
    ),
    **dict.fromkeys(
        ("olmo3/parallel_calls_one_per_line", "olmo3/tool_names_that_are_prefixes"),
        "each tag holds one call, its begin <function_calls> and the name: a block's later "
        "calls have no begin",
    ),
}


@pytest.mark.parametrize("fx", GRAMMAR_FIXTURES, ids=[fx.id for fx in GRAMMAR_FIXTURES])
def test_grammar_tag_takes_the_fixture_calls(fx: Fixture, request: Any) -> None:
    if fx.id in TAG_KNOWN:
        request.applymarker(pytest.mark.xfail(reason=TAG_KNOWN[fx.id], strict=True))
    assert _calls_through_tags(fx.format, fx.raw, fx.expected["message"]["tool_calls"]) is None


def test_grammar_formats_are_covered() -> None:
    assert {fx.format for fx in GRAMMAR_FIXTURES} == GRAMMAR
    assert set(TAG_KNOWN) <= {fx.id for fx in GRAMMAR_FIXTURES}


def test_legacy_shape_refuses_a_grammar() -> None:
    with pytest.raises(NotImplementedError, match="legacy structures shape holds only a JSON"):
        to_structural_tag(get_format("qwen3_coder"), _tools("qwen3_coder"), legacy=True)
    with pytest.raises(NotImplementedError, match="legacy structures shape holds only a JSON"):
        to_structural_tag(get_format("pythonic"), _tools("pythonic"), legacy=True)


_CITY = WEATHER_TOOL


@pytest.mark.parametrize(
    ("name", "good", "bad"),
    [
        (
            "qwen3_coder",
            b"\n<parameter=city>\nOslo\n</parameter>\n<parameter=days>\n2\n</parameter>\n"
            b"</function>\n",
            b"\n<parameter=city>\nOslo\n</parameter>\n<parameter=days>\ntwo\n</parameter>\n"
            b"</function>\n",
        ),
        (
            "kimi_k2",
            b'0<|tool_call_argument_begin|>{"city": "Oslo", "days": 2}',
            b'0<|tool_call_argument_begin|>{"city": "Oslo", "days": "2"}',
        ),
    ],
)
def test_schema_is_enforced_in_the_body(name: str, good: bytes, bad: bytes) -> None:
    spec = export.structural_tag(get_format(name), [_CITY])["format"]["tags"][0]
    grammar = _grammar(spec["content"]["grammar"])
    assert len(good) in _body_ends(grammar, good + spec["end"].encode())
    assert len(bad) not in _body_ends(grammar, bad + spec["end"].encode())


@pytest.mark.parametrize(
    ("name", "body"),
    [
        # formats whose fixtures spell the begin otherwise (TAG_KNOWN): the tag's own
        ("gigachat3", b', "arguments": {"city": "Oslo", "days": 2}}'),
        ("gpt_oss", b' json<|message|>{"city": "Oslo", "days": 2}<|call|>'),
    ],
)
def test_call_in_the_tags_spelling(name: str, body: bytes) -> None:
    fmt = get_format(name)
    spec = export.structural_tag(fmt, [_CITY])["format"]["tags"][0]
    grammar = _grammar(spec["content"]["grammar"])
    assert len(body) in _body_ends(grammar, body)
    text = spec["begin"] + body.decode() + spec["end"]
    message = toolparse.parse(text, fmt, tools=[_CITY], reasoning_in_prompt=False)
    assert not message.errors
    assert [(c.name, c.arguments) for c in message.tool_calls] == [
        ("get_weather", {"city": "Oslo", "days": 2})
    ]
