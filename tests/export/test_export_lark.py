"""Format.lark(): the exported grammar, run in llguidance byte by byte, accepts what the
format's fixtures say is a clean output and rejects broken calls, arguments that break
their tool's schema, and calls the tool choice does not allow."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping
from functools import cache, lru_cache
from typing import Any, ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toolparse
from engines import FIXTURES_DIR, Fixture, load_fixtures
from helpers import WEATHER_TOOL
from toolparse import export
from toolparse.export._ir import CutShort, Lowered, Optional_, Seq, Text
from toolparse.export._lower import has_calls
from toolparse.export.to_lark import _JSON_OPTIONS, _slashes, render
from toolparse.formats import get_format
from toolparse.grammar import Grammar, Stop, eof, seq, stop, tag, until

llguidance = pytest.importorskip("llguidance")
jsonschema = pytest.importorskip("jsonschema")

EOS = 256


class _ByteTokenizer:
    """One token per byte, and an end-of-sequence token."""

    tokens = [bytes([b]) for b in range(256)] + [b"<eos>"]
    eos_token_id = EOS
    bos_token_id = None
    special_token_ids: ClassVar[list[int]] = [EOS]

    def __call__(self, text: str | bytes) -> list[int]:
        return list(text.encode() if isinstance(text, str) else text)


TOKENIZER = llguidance.LLTokenizer(llguidance.TokenizerWrapper(_ByteTokenizer()))

_CONTENT = "a broken or unknown call may also be read as content: ordered choice is a union"
_ESCAPE = (
    "llguidance's JSON strings refuse the \\/ escape, whatever the options: derivre's "
    'RegexBuilder::json_quote (src/regexbuilder.rs) allows only the escapes "\\bfnrtu and '
    "has no escape sequence for /, and llguidance's json_general_unicode_string "
    "(parser/src/json/compiler.rs) refuses any other (test_solidus_escape_is_refused)"
)
_ORDER = (
    "and llguidance takes an object's properties only in the orders the schema gives "
    "(docs/json_schema.md, Property order; no option)"
)
_RAW_CODE = (
    "after <|python_tag|> the parser reads JSON calls where `{` follows and a built-in call "
    "where `NAME.call(` does; the union also reads raw code there (for code_interpreter, or "
    "none where another <|python_tag|> follows, a lookahead the union drops, and then "
    "content), so a broken call is taken"
)
_BARE_JSON = (
    "a bare JSON call opening the output commits once its head, which holds the name as a "
    "JSON string, has come: no prefix pattern holds one, so the text that may follow is not "
    "told, and "
)
_BARE_CONTENT = _BARE_JSON + "a broken call is taken as content"
_BARE_LEXEME = (
    _BARE_JSON + "with a call required llguidance's greedy lexer keeps the text's longer "
    "lexeme: the call is refused"
)
_NO_MARKERS = (
    "a call without markers is also a line of text, and with a call required llguidance's "
    "greedy lexer keeps the text's longer lexeme: the call is refused"
)
_INDENT = (
    "a call line after an indented line break: llguidance's greedy lexer takes the line break "
    "and the indent as the whitespace before </function_calls> (one longer lexeme) and does "
    "not back up"
)
_REPEATED = (
    "each argument is a tag or a keyword of its own, and the export takes the parameters in "
    "any order and any number of times (a grammar does not keep which names have come): an "
    "argument named twice is taken, where the parser refuses the call"
)
# The formats whose duplicate_argument_name fixture the exports take for that reason.
REPEATED_ARGUMENT_FORMATS = (
    "deepseek_v32",
    "deepseek_v4",
    "deepseek_v41",
    "dots",
    "functiongemma",
    "gemma4",
    "gigachat35",
    "glm45",
    "hunyuan",
    "iquest_coder_v2",
    "hyperclovax_seed_think",
    "iquest_q1",
    "k2_horizon",
    "kimi_k3",
    "lfm2",
    "ling3",
    "minicpm5",
    "minimax_m2",
    "minimax_m3",
    "muse",
    "olmo3",
    "poolside_v1",
    "pythonic",
    "qwen3_coder",
    "seed_oss",
    "solar_open2",
    "step3",
    "step5",
)
# the output states each value's type and the parse keeps the stated one (a string 15 on a
# number parameter); the grammar takes any stated type, so the output is taken
_STATED = "a value's stated type is kept where its schema says another, and taken"
# the parser decodes arguments a JSON string holds; the export leads to the object form
_STRINGIFIED = "arguments written as a JSON string are read, but the export writes an object"
# the output writes each value as JSON; the export takes a string parameter's text by the
# schema, so an unquoted string is taken where the parser refuses it
_UNQUOTED = "a JSON value is taken as raw text where the schema says string"
PLUS = "a number's unary plus is read, as Python reads it; the export writes JSON numbers"
# a value ends before a parameter its tool declares, and a name is a lexeme of its own: the
# Lark export's values never hold `</parameter>` then `<parameter=` (any name; the same for
# each format's tags), and may hold
# a declared parameter's opening, which the parser reads as a missing `</parameter>`
_NAME_LEXEME = "a parameter's name is its own lexeme: Lark values end before any parameter"
# the text before a marker ends at the markers the parser reports there (formats/_guard.py),
# and a greedy Lark lexer then splits the text at a marker another rule reads whole
_GUARDED = "a text that ends at every marker meets a lexeme of another rule"
# Fixtures the parser reads in a form no export writes (the Lark and regex ones), and why.
READS_MORE: dict[str, str] = {
    "k2_horizon/stated_type_decides_over_schema": _STATED,
    "kimi_k3/stated_type_decides_over_schema": _STATED,
    "granite4/stringified_arguments_decoded": _STRINGIFIED,
    "hermes/arguments_as_json_string_decoded": _STRINGIFIED,
    "qwen25_coder/stringified_arguments_are_decoded": _STRINGIFIED,
    "rwkv/stringified_arguments_and_extra_keys": _STRINGIFIED,
    "hyperclovax_seed_think_14b/arguments_as_json_string": _STRINGIFIED,
    "minimax/arguments_as_json_string": _STRINGIFIED,
    "lfm2/unary_plus_numbers": PLUS,
}

# Fixtures the export cannot get right, and why; the test fails if one starts passing.
KNOWN: dict[str, str] = {
    **READS_MORE,
    "mistral/reasoning_content_and_call": "llguidance checks the date-time format, which the "
    "fixture's start time (no offset) does not meet",
    "deepseek_v31/nested_arguments_with_escapes_and_unicode": "the arguments' properties come "
    "in neither the schema's order nor sorted (all_day before notes, email before name), " + _ORDER,
    "generic/nested_unicode_arguments": "the arguments' properties come in neither the "
    "schema's order nor sorted (meta before all_day), " + _ORDER,
    **{
        f"{name}/nested_arguments_with_escapes_and_unicode": _ESCAPE
        for name in (
            "apertus",
            "apriel",
            "cohere_command",
            "command_r7b",
            "ernie45",
            "firefunction_v2",
            "functionary_v3_1",
            "functionary_v3_2",
            "gigachat3",
            "granite",
            "granite4",
            "hermes",
            "hunyuan_a13b",
            "internlm",
            "jamba",
            "kimi_k2",
            "nemotron_v2",
            "phi4_mini",
            "xlam",
        )
    },
    "markdown_json/two_objects_in_one_fence_are_invalid": _CONTENT,
    **dict.fromkeys(
        (
            "llama3_json/builtin_call_positional_argument_is_invalid",
            "llama3_json/builtin_call_unknown_tool",
            "llama3_json/type_function_key_pretty_printed",
            "llama3_json/unknown_tool_then_known_tool",
        ),
        _RAW_CODE,
    ),
    "llama3_json/stringified_parameters_are_invalid": _BARE_CONTENT,
    "llama3_json/unknown_tool": _BARE_CONTENT,
    "olmo3/parallel_calls_one_per_line": _INDENT,
    **dict.fromkeys(
        (
            "gigachat3/header_without_separator",
            "hunyuan_a13b/tool_calls_draft_inside_think_is_reasoning",
            "plamo3/block_inside_reasoning_is_text",
        ),
        _GUARDED,
    ),
    **{
        f"{name}/{fixture}": _NAME_LEXEME
        for name in (
            "deepseek_v32",
            "glm45",
            "hunyuan",
            "minimax_m2",
            "muse",
            "qwen3_coder",
            "seed_oss",
            "step3",
        )
        for fixture in (
            "value_holding_markup_of_undeclared_parameters",
            "missing_parameter_close_before_declared_parameter",
        )
    },
    **{
        f"{name}/missing_parameter_close_before_declared_parameter": _NAME_LEXEME
        for name in ("dots", "minicpm5")
    },
    **dict.fromkeys(
        (
            "granite_pythonic/bare_name_value_is_invalid",
            "granite_pythonic/duplicate_argument_name",
            "granite_pythonic/positional_argument_is_invalid",
            "granite_pythonic/unknown_tool",
        ),
        _CONTENT,
    ),
    "hyperclovax_seed_think/unquoted_value_is_refused": _UNQUOTED,
    "llama3_json/duplicate_argument_name": _RAW_CODE,
    **{f"{name}/duplicate_argument_name": _REPEATED for name in REPEATED_ARGUMENT_FORMATS},
}


# Formats whose first example the tool-choice test cannot hold to, and why.
TOOL_CHOICE_KNOWN: dict[str, str] = {"granite_pythonic": _NO_MARKERS, "llama3_json": _BARE_LEXEME}


@cache
def exported(
    method: str, name: str, tools: str, choice: str, parallel: bool, in_prompt: bool | None
) -> str:
    """A format's export by `method` ("lark", "regex"), once per arguments (tools and
    tool choice as JSON text)."""
    text: str = getattr(export, method)(
        get_format(name),
        json.loads(tools),
        tool_choice=json.loads(choice),
        parallel_tool_calls=parallel,
        reasoning_in_prompt=in_prompt,
    )
    return text


def fixture_export(method: str, fx: Fixture) -> str:
    """The export a fixture is checked against: its tools, "auto", parallel calls."""
    in_prompt = fx.options.get("reasoning_in_prompt")
    return exported(method, fx.format, json.dumps(fx.tools), '"auto"', True, in_prompt)


def choice_export(
    method: str, name: str, tools: str, choice: Any = "auto", parallel: bool = True
) -> str:
    """The export for a format's own examples (their reasoning_in_prompt)."""
    in_prompt = get_format(name).reasoning_in_prompt or None
    return exported(method, name, tools, json.dumps(choice), parallel, in_prompt)


@lru_cache(maxsize=512)
def compiled(lark: str, limits: Any = None) -> Any:
    """The grammar compiled once: a matcher builds its lexer's states as it goes, and
    keeps them for the next output it is asked about."""
    matcher = llguidance.LLMatcher(TOKENIZER, lark, log_level=0, limits=limits)
    assert not matcher.is_error(), matcher.get_error()
    return matcher


def run(lark: str, data: bytes, complete: bool = True, limits: Any = None) -> str | None:
    """None if the grammar takes data (and, complete, lets the output end there), else
    where it stopped.  validate_tokens commits nothing: the compiled matcher is left at
    its start for the next output."""
    matcher = compiled(lark, limits)
    tokens = [*data, EOS] if complete else list(data)
    taken = matcher.validate_tokens(tokens)
    assert not matcher.is_error(), matcher.get_error()
    if taken < len(data):
        return f"refused byte {taken}: {data[max(0, taken - 40) : taken + 1]!r}"
    if taken < len(tokens):
        return "refused the end of the output"
    return None


def _violates_schema(fx: Fixture) -> bool:
    schemas = {t["function"]["name"]: t["function"].get("parameters") or {} for t in fx.tools}
    for call in fx.expected["message"].get("tool_calls") or []:
        schema = schemas.get(call["name"])
        if schema is not None:
            if not jsonschema.Draft202012Validator(schema).is_valid(call["arguments"]):
                return True
    return False


def kind(fx: Fixture) -> str | None:
    """ "clean" (must be taken), "broken" (must be refused), "prefix" (cut short: taken
    so far) or None (not checked: other errors)."""
    if fx.options.get("repair"):
        return None  # what the repair mode makes of a broken output
    errors = {e["kind"] for e in fx.expected.get("errors") or []}
    if not errors:
        return "broken" if _violates_schema(fx) else "clean"
    if errors <= {"invalid_arguments", "unknown_tool"}:
        return "broken"
    if errors == {"incomplete"}:
        return "prefix"
    return None


def _calls(fx: Fixture) -> list[str]:
    return [c["name"] for c in fx.expected["message"].get("tool_calls") or []]


FIXTURES = load_fixtures()


def known_params(fixtures: Iterable[Fixture], known: Mapping[str, str]) -> list[Any]:
    """The fixtures an export's test checks (kind not None), a strict xfail where known."""
    return [
        pytest.param(
            fx,
            id=fx.id,
            marks=[pytest.mark.xfail(reason=known[fx.id], strict=True)] if fx.id in known else [],
        )
        for fx in fixtures
        if kind(fx)
    ]


def check_fixture(fx: Fixture, method: str, walk: Callable[[str, bytes, bool], str | None]) -> None:
    """The fixture's output is taken (refused where broken) by its `method` export, as
    `walk` (None: taken, else where it stopped) reads it."""
    what = kind(fx)
    # a broken output the model finished is refused where it may not end there either
    # (no decoder lets the model stop in it)
    complete = what in ("clean", "broken") and fx.finish != "length"
    result = walk(fixture_export(method, fx), fx.raw, complete)
    if what == "broken":
        assert result is not None, "a broken output was accepted"
    else:
        assert result is None, result


@pytest.mark.parametrize("fx", known_params(FIXTURES, KNOWN))
def test_fixture(fx: Fixture) -> None:
    check_fixture(fx, "lark", run)


def reading_choice(fx: Fixture) -> str | None:
    """The tool choice a clean, whole fixture is also taken under, so that the export
    takes it as the parser reads it, not as content: "required" where it holds calls,
    "none" where it holds none (of a format that has calls)."""
    if kind(fx) != "clean" or fx.finish == "length":
        return None
    if fx.expected["message"].get("tool_calls"):
        return "required"
    return "none" if has_calls(get_format(fx.format)) else None


def reading_params(
    fixtures: Iterable[Fixture], known_fixture: Mapping[str, str], known: Mapping[str, str]
) -> list[Any]:
    """The fixtures test_fixture checks (not known there) that reading_choice applies to,
    a strict xfail where known."""
    found = [fx for fx in fixtures if fx.id not in known_fixture and reading_choice(fx)]
    return known_params(found, known)


def check_reading(fx: Fixture, method: str, walk: Callable[[str, bytes, bool], str | None]) -> None:
    choice = json.dumps(reading_choice(fx))
    in_prompt = fx.options.get("reasoning_in_prompt")
    export = exported(method, fx.format, json.dumps(fx.tools), choice, True, in_prompt)
    assert walk(export, fx.raw, True) is None


# Clean fixtures the Lark export takes (test_fixture) but not under reading_choice, and why.
READING_KNOWN: dict[str, str] = {
    **dict.fromkeys(
        (
            "granite_pythonic/content_then_call_then_content",
            "granite_pythonic/indented_call_with_parentheses_in_a_string",
            "granite_pythonic/no_argument_call_and_python_literals",
            "granite_pythonic/single_call",
            "granite_pythonic/two_calls_on_consecutive_lines",
        ),
        _NO_MARKERS,
    ),
    **dict.fromkeys(
        (
            "hyperclovax_seed_think_14b/bare_array_at_start",
            "llama3_json/bare_object_with_type_and_arguments_key",
            "llama3_json/calls_separated_by_newlines",
            "llama3_json/calls_written_back_to_back",
            "llama3_json/nested_arguments_with_escapes_and_unicode",
            "llama3_json/object_after_newline_not_shaped_like_a_call_is_content",
            "llama3_json/object_right_after_a_call_not_shaped_like_one_is_content",
            "llama3_json/single_call_bare_object",
            "llama3_json/text_after_call_is_content",
            "llama3_json/tool_names_that_are_prefixes",
        ),
        _BARE_LEXEME,
    ),
}


@pytest.mark.parametrize("fx", reading_params(FIXTURES, KNOWN, READING_KNOWN))
def test_fixture_is_taken_as_the_parser_reads_it(fx: Fixture) -> None:
    check_reading(fx, "lark", run)


def test_known_are_checked() -> None:
    assert set(KNOWN) <= {fx.id for fx in FIXTURES if kind(fx)}


def test_reading_known_are_checked() -> None:
    checked = {fx.id for fx in FIXTURES if fx.id not in KNOWN and reading_choice(fx)}
    assert set(READING_KNOWN) <= checked


@cache
def fixture_tools(name: str) -> str:
    """A format's fixture tools, as JSON text."""
    return (FIXTURES_DIR / name / "tools.json").read_text()


def named(tool: str) -> dict[str, Any]:
    """The tool choice that names a tool."""
    return {"type": "function", "function": {"name": tool}}


NAMES = [
    pytest.param(
        name,
        marks=[pytest.mark.xfail(reason=TOOL_CHOICE_KNOWN[name], strict=True)]
        if name in TOOL_CHOICE_KNOWN
        else [],
    )
    for name in sorted({fx.format for fx in FIXTURES})
]


def check_tool_choice(
    name: str, tools: str, takes: Callable[[str, Any, bool, bytes], bool]
) -> None:
    """On the format's own example, with these tools (JSON; the example's tool and one
    other at least): a named tool takes its own call and refuses another tool's; "none"
    refuses any call; "required" takes it and refuses an output without one; a tool left
    out of the list is refused; without parallel calls one call is taken."""
    fmt = get_format(name)
    offered = [t["function"]["name"] for t in json.loads(tools)]
    example = fmt.examples[0]
    message = toolparse.parse(example, fmt, tools=json.loads(tools))
    data = example.encode()
    if not has_calls(fmt):
        with pytest.raises(ValueError, match="no output"):
            takes(tools, "required", True, data)
        assert takes(tools, "auto", True, data)
        return
    called = {c.name for c in message.tool_calls}
    assert len(called) == 1, "the first example calls one tool"
    (tool,) = called
    other = next(t for t in offered if t != tool)
    assert takes(tools, "auto", True, data)
    assert takes(tools, named(tool), True, data)
    assert not takes(tools, named(other), True, data)
    assert not takes(tools, "none", True, data)
    assert takes(tools, "required", True, data)
    if len(message.tool_calls) == 1:
        assert takes(tools, "auto", False, data)
    rest = json.dumps([t for t in json.loads(tools) if t["function"]["name"] != tool])
    assert not takes(rest, "auto", True, data)
    plain = b"There is nothing to call for this."
    if fmt.reasoning_in_prompt:
        plain = b"No tool is needed." + b"\n"
    assert not takes(tools, "required", True, plain)


@pytest.mark.parametrize("name", NAMES)
def test_tool_choice(name: str) -> None:
    def takes(tools: str, choice: Any, parallel: bool, data: bytes) -> bool:
        return run(choice_export("lark", name, tools, choice, parallel), data) is None

    check_tool_choice(name, fixture_tools(name), takes)


WEATHER = {"type": "object", "properties": {"city": {"type": "string"}}}


def test_strict_tool_refuses_unknown_arguments() -> None:
    tool = {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
    strict = {**tool, "function": {**tool["function"], "strict": True}}
    extra = b'<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo", "x": 1}}</tool_call>'
    fmt = toolparse.get_format("hermes")
    assert run(export.lark(fmt, [tool]), extra) is None
    assert run(export.lark(fmt, [strict]), extra) is not None
    # strict also makes every property required
    assert run(export.lark(fmt, [strict]), extra.replace(b'"city": "Oslo", ', b"")) is not None


# A JSON call object's members come in any order; the event builder takes one name and
# at most one set of arguments (a call with none, two names or both "arguments" and
# "parameters" is invalid), and the exports hold a model to that.
CALL_OBJECTS = {
    '{"name": "get_weather", "arguments": {"city": "Oslo"}}': True,
    '{"arguments": {"city": "Oslo"}, "name": "get_weather"}': True,
    '{"id": "c1", "arguments": {"city": "Oslo"}, "x": [1], "name": "get_weather", "y": 2}': True,
    '{"name": "get_weather"}': True,
    '{"arguments": {"city": "Oslo"}}': False,
    "{}": False,
    '{"name": "get_weather", "name": "get_weather"}': False,
    '{"name": "get_weather", "arguments": {"city": "Oslo"}, "parameters": {"city": "Oslo"}}': False,
    '{"arguments": {"city": "Oslo"}, "name": "get_weather", "arguments": {"city": "Oslo"}}': False,
}


@pytest.mark.parametrize(("obj", "taken"), CALL_OBJECTS.items())
def test_a_call_object_has_one_name_and_one_set_of_arguments(obj: str, taken: bool) -> None:
    tool = {"type": "function", "function": {"name": "get_weather", "parameters": WEATHER}}
    output = f"<tool_call>{obj}</tool_call>"
    message = toolparse.parse(output, "hermes", tools=[tool])
    assert bool(message.tool_calls) == taken and not message.errors == taken
    assert (
        run(export.lark(toolparse.get_format("hermes"), [tool]), output.encode()) is None
    ) == taken


FENCED_CALL = '```json\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n```'
# markdown_json: ```json opens a call where a call object follows, else it is text
FENCES = {
    FENCED_CALL: "call",
    "Here:\n" + FENCED_CALL + "\nDone.": "call",
    'Config:\n```json\n{"name": "app", "version": 2}\n```\nok': "text",
    "```json\n[1, 2]\n``` and more": "text",
}


@pytest.mark.parametrize(("output", "reading"), FENCES.items())
def test_a_marker_that_is_also_text_is_a_call_where_one_follows(output: str, reading: str) -> None:
    """The parser tries the call first; the export must not let the text after the
    marker win by being the longer lexeme (the call after the marker is one lexeme),
    nor take a call the tool choice refuses as text."""
    message = toolparse.parse(output, "markdown_json", tools=[WEATHER_TOOL])
    assert bool(message.tool_calls) == (reading == "call") and not message.errors
    fmt = toolparse.get_format("markdown_json")
    data = output.encode()
    assert run(export.lark(fmt, [WEATHER_TOOL]), data) is None
    assert (run(export.lark(fmt, [WEATHER_TOOL], tool_choice="required"), data) is None) == (
        reading == "call"
    )
    assert (run(export.lark(fmt, [WEATHER_TOOL], tool_choice="none"), data) is None) == (
        reading == "text"
    )
    if reading == "call":
        # a call of a tool the choice leaves out is not text either: before the named
        # tool's call, this one is refused
        other = {"type": "function", "function": {"name": "get_time", "parameters": WEATHER}}
        named = {"type": "function", "function": {"name": "get_time"}}
        then = data + b'\n```json\n{"name": "get_time", "arguments": {}}\n```'
        assert run(export.lark(fmt, [WEATHER_TOOL, other], tool_choice=named), then) is not None
        assert run(export.lark(fmt, [WEATHER_TOOL, other]), then) is None


def test_lexeme_slashes_are_escaped() -> None:
    assert _slashes(r"a/b\/c[/]\\/") == r"a\/b\/c[\/]\\\/"


def test_special_tokens() -> None:
    fmt = toolparse.get_format("hermes")
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    lark = export.lark(fmt, tools, special_tokens=["<tool_call>", "</tool_call>"])
    assert "<tool_call>" in lark and '"<tool_call>"' not in lark


# Text up to stops, against the parser: the text export takes a text only where the parser
# reads all of it as text (no stop in it), and takes every such text that does not end with
# the beginning of a stop, or with a followed_by stop's marker (and whitespace).
TEXT_CASES = {
    "follow": (
        (
            stop("\n</parameter>", followed_by=("<parameter=", "</function>")),
            stop("</parameter>", followed_by=("<parameter=", "</function>")),
        ),
        ["</parameter>", "<parameter=", "</function>", "</param", "<para", "<", "\n", " ", "x"],
    ),
    "word": (
        (stop(" functools", followed_by=("[",)), stop("functools", followed_by=("[",))),
        ["functools", "func", "[", "]", " ", "\n", "x"],
    ),
    # a one-character stop, and a marker that holds it and may begin inside itself
    "tag_name": (
        (stop(">"), stop("]<]minimax[>[")),
        [">", "]<]minimax[>[", "]<]", "]", "<", "x"],
    ),
    "plain": (
        (stop("<tool_call>"), stop("</think>")),
        ["<tool_call>", "</think>", "<tool_c", "</th", "<", "/", "x", " "],
    ),
}


def _reads_all(stops: tuple[Stop, ...], text: str) -> bool:
    fmt = toolparse.Format(
        name="text",
        description="text up to stops",
        grammar=Grammar({"start": seq(tag("content", until(*stops)), eof())}, {"start": "start"}),
    )
    message = toolparse.parse(text, fmt)
    return not message.errors and (message.content or "") == text


def _open_end(stops: tuple[Stop, ...], text: str) -> bool:
    """Whether text ends with the beginning of a stop's marker or follow text, or with a
    followed_by marker and whitespace."""
    pieces = {s.marker.decode() for s in stops} | {f.decode() for s in stops for f in s.follow}
    if any(text.endswith(p[:k]) for p in pieces for k in range(1, len(p))):
        return True
    bare = text.rstrip(" \t\r\n")
    return any(s.follow and bare.endswith(s.marker.decode()) for s in stops)


@pytest.mark.parametrize("case", sorted(TEXT_CASES))
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_text_against_the_parser(case: str, data: Any) -> None:
    stops, pieces = TEXT_CASES[case]
    text = "".join(data.draw(st.lists(st.sampled_from(pieces), max_size=8)))
    lark = render(Lowered("start", {"start": Text(stops, False)}))
    taken = run(lark, text.encode()) is None
    if taken:
        assert _reads_all(stops, text), "a text holding a stop was taken"
    elif _reads_all(stops, text):
        assert _open_end(stops, text), "a text without a stop was refused"


# texts whose stops count wherever they stand (a followed_by stop's text is left open)
PLAIN_TEXT_CASES = sorted(
    k for k, (stops, _) in TEXT_CASES.items() if not any(s.follow for s in stops)
)


@pytest.mark.parametrize("case", PLAIN_TEXT_CASES)
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_text_at_the_end_against_the_parser(case: str, data: Any) -> None:
    """Where the output ends after it, a text is what the parser reads whole: a marker
    cut short by the end is text as well."""
    stops, pieces = TEXT_CASES[case]
    text = "".join(data.draw(st.lists(st.sampled_from(pieces), max_size=8)))
    at_end = Seq((Text(stops, False), Optional_(CutShort(stops))))
    lark = render(Lowered("start", {"start": at_end}))
    assert (run(lark, text.encode()) is None) == _reads_all(stops, text)


def test_properties_in_declared_or_sorted_order() -> None:
    tool = {
        "type": "function",
        "function": {
            "name": "f",
            "parameters": {
                "type": "object",
                "properties": {
                    "c": {"type": "integer"},
                    "a": {"type": "object", "properties": {"z": {}, "y": {}}},
                    "b": {"type": "string"},
                },
            },
        },
    }
    lark = export.lark(toolparse.get_format("hermes"), [tool])

    def call(args: str) -> bytes:
        return b'<tool_call>{"name": "f", "arguments": ' + args.encode() + b"}</tool_call>"

    assert run(lark, call('{"c": 1, "a": {"z": 1, "y": 2}, "b": "x"}')) is None
    assert run(lark, call('{"a": {"y": 2, "z": 1}, "b": "x", "c": 1}')) is None
    assert run(lark, call('{"a": {"z": 1, "y": 2}, "b": "x"}')) is None  # each object apart
    # neither order
    assert run(lark, call('{"b": "x", "c": 1, "a": {}}')) is not None
    # the types still hold in either order
    assert run(lark, call('{"a": {}, "b": "x", "c": "1"}')) is not None


@pytest.mark.xfail(
    reason="llguidance has no option for the \\/ escape (see _ESCAPE); when it has, the "
    "export should set it and the fixtures listed with _ESCAPE pass",
    strict=True,
)
def test_solidus_escape_is_refused() -> None:
    schema = {
        "type": "string",
        "x-guidance": {**_JSON_OPTIONS, "json_allowed_escapes": 'nrbtf\\"u/'},
    }
    assert run("start: %json " + json.dumps(schema), b'"a\\/b"') is None


_EXPORT_ALL = """
import json, pathlib, sys
from toolparse import export
from toolparse.formats import get_format
fixtures = pathlib.Path(sys.argv[1])
for name in sys.argv[2:]:
    fmt = get_format(name)
    tools = json.loads((fixtures / name / "tools.json").read_text())
    exports = [write(fmt, tools) for write in (export.lark, export.regex, export.gbnf,
                                               export.structural_tag)]
    print(json.dumps(exports))
"""


def test_exports_are_the_same_in_every_process() -> None:
    """An export is the same text whatever the hash seed (a server may cache compiled
    grammars by their text): sets of markers and prefixes are ordered, not iterated."""
    names = ["qwen3", "muse", "cohere_command", "hunyuan", "internlm", "xlam"]

    def export(seed: str) -> str:
        env = {**os.environ, "PYTHONHASHSEED": seed}
        run = subprocess.run(
            [sys.executable, "-c", _EXPORT_ALL, str(FIXTURES_DIR), *names],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        return run.stdout

    assert export("1") == export("2") == export("3")
