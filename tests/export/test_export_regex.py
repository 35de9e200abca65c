"""Format.regex(): the exported regular expression takes what the format's fixtures say is
a clean output and refuses broken calls, arguments that break their tool's schema, and
calls the tool choice does not allow (run byte by byte in llguidance's lexer, which reads
the same Rust regex syntax); outlines-core builds an index of it."""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_export_lark import (
    _BARE_CONTENT,
    _CONTENT,
    _RAW_CODE,
    _REPEATED,
    _UNQUOTED,
    CALL_OBJECTS,
    PLAIN_TEXT_CASES,
    READS_MORE,
    REPEATED_ARGUMENT_FORMATS,
    TEXT_CASES,
    WEATHER,
    _reads_all,
    check_fixture,
    check_reading,
    check_tool_choice,
    choice_export,
    fixture_tools,
    kind,
    known_params,
    named,
    reading_choice,
    reading_params,
    run,
)

import toolparse
from engines import Fixture, load_fixtures
from helpers import WEATHER_TOOL
from toolparse import export
from toolparse.export import _ranges
from toolparse.export._ir import CutShort, Lowered, Optional_, Seq, Text
from toolparse.export._regex import lexeme_writer
from toolparse.export.to_regex import to_regex
from toolparse.formats import get_format

oc = pytest.importorskip("outlines_core")

llguidance = pytest.importorskip("llguidance")


@lru_cache(maxsize=64)
def as_lark(regex: str) -> str:
    """The regex as the one lexeme of a Lark grammar (a "/" in it escaped)."""
    return "start: R\nR: /" + _SLASH.sub(lambda m: m.group(1) or "\\/", regex) + "/\n"


_SLASH = re.compile(r"(\\.)|/", re.DOTALL)


def walk(regex: str, data: bytes, complete: bool = True) -> str | None:
    """None if the regex takes data (and, complete, all of it), else where it stopped.

    llguidance's lexer reads the same Rust regex syntax byte by byte; outlines-core 0.2's
    index is not used for this: from an accepting state it leaves out a one-byte token
    that leads to a state that is not accepting (after `a`, `a(?:bc)?` refuses `b`), so
    content followed by a marker cannot be walked one byte at a time."""
    return run(as_lark(regex), data, complete, LIMITS)


# the largest expressions (a JSON list of calls with keys in any order, eleven tools) are
# over llguidance's default budget for one lexeme
LIMITS = llguidance.LLParserLimits(initial_lexer_fuel=100_000_000, step_lexer_fuel=10_000_000)


VOCABULARY = oc.Vocabulary(256, {bytes([b]): [b] for b in range(256)})

# Formats the regex export refuses, and why (docs/export.md).
NOT_EXPRESSIBLE = {
    "gemma4": "holds itself",
    "functiongemma": "holds itself",
    "minimax_m3": "holds itself",
}

_EMPTY_RECIPIENT = (
    "a commentary channel with no recipient is taken only before `<|channel|>` (a lookahead, "
    "which the union drops): the call after it is read as stray text"
)
_ORDER = "an object's properties are taken only in the schema's declared order"
_DEPTH = "a free-form value nests a container: free-form JSON is one container deep (MAX_DEPTH)"
_SCHEMA_TYPED = "a value typed by the output is typed by the schema instead"
_LITERAL_DEPTH = (
    "a free-form Python literal (meta) holds containers: free-form values are one container "
    "deep (MAX_DEPTH)"
)
# Fixtures the regex cannot get right, and why; the test fails if one starts passing.
KNOWN: dict[str, str] = {
    **READS_MORE,
    "deepseek_v31/nested_arguments_with_escapes_and_unicode": _ORDER,
    "generic/nested_unicode_arguments": _ORDER,
    "functionary_v3_2/arguments_not_an_object": _CONTENT,
    "functionary_v3_2/invalid_arguments_then_valid_call": _CONTENT,
    "functionary_v3_2/unknown_tool_and_known_tool": _CONTENT,
    "gpt_oss/invalid_arguments_then_retry": _EMPTY_RECIPIENT,
    "gpt_oss/unknown_tool": _EMPTY_RECIPIENT,
    "llmjp_harmony/invalid_arguments_then_retry": _EMPTY_RECIPIENT,
    "llmjp_harmony/unknown_tool": _EMPTY_RECIPIENT,
    **dict.fromkeys(
        (
            "granite_pythonic/bare_name_value_is_invalid",
            "granite_pythonic/duplicate_argument_name",
            "granite_pythonic/positional_argument_is_invalid",
            "granite_pythonic/unknown_tool",
        ),
        _CONTENT,
    ),
    "hermes/extra_keys_ignored": _DEPTH,
    "hyperclovax_seed_think/unquoted_value_is_refused": _UNQUOTED,
    "inkling/typed_values": _DEPTH,
    "ling3/typed_values_every_schema_type": _DEPTH,
    "lfm2/python_literals_nested_and_unicode": _LITERAL_DEPTH,
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
    "markdown_json/two_objects_in_one_fence_are_invalid": _CONTENT,
    "markdown_json/unknown_tool": _CONTENT,
    "muse/invalid_invoke_body": _CONTENT,
    "muse/unknown_tool": _CONTENT,
    "qwen3_coder/typed_values_every_schema_type": _DEPTH,
    "seed_oss/typed_values_every_schema_type": _DEPTH,
    **dict.fromkeys(
        (
            "functionary_v3_2/duplicate_argument_name",
            "gpt_oss/duplicate_argument_name",
            "llmjp_harmony/duplicate_argument_name",
            "markdown_json/duplicate_argument_name",
        ),
        _CONTENT,
    ),
    "llama3_json/duplicate_argument_name": _RAW_CODE,
    **{
        f"{name}/duplicate_argument_name": _REPEATED
        for name in REPEATED_ARGUMENT_FORMATS
        if name not in NOT_EXPRESSIBLE
    },
}


FIXTURES = [fx for fx in load_fixtures() if fx.format not in NOT_EXPRESSIBLE]


@pytest.mark.parametrize("fx", known_params(FIXTURES, KNOWN))
def test_fixture(fx: Fixture) -> None:
    check_fixture(fx, "regex", walk)


# Clean fixtures the regex takes (test_fixture) but not under reading_choice, and why.
READING_KNOWN = {
    "muse/typed_values_every_schema_type": _DEPTH + "; auto takes the output as text",
}


@pytest.mark.parametrize("fx", reading_params(FIXTURES, KNOWN, READING_KNOWN))
def test_fixture_is_taken_as_the_parser_reads_it(fx: Fixture) -> None:
    check_reading(fx, "regex", walk)


def test_known_are_checked() -> None:
    assert set(KNOWN) <= {fx.id for fx in FIXTURES if kind(fx)}
    reading = {fx.id for fx in FIXTURES if fx.id not in KNOWN and reading_choice(fx)}
    assert set(READING_KNOWN) <= reading


def _example_tools(name: str) -> tuple[str, str, str]:
    """The tools for the format's first example: the one it calls and one other (indexing
    all eleven takes seconds for some formats), as JSON; the called tool; the other."""
    fmt = get_format(name)
    tools = json.loads(fixture_tools(name))
    message = toolparse.parse(fmt.examples[0], fmt, tools=tools)
    called = {c.name for c in message.tool_calls}
    (tool,) = called or {tools[0]["function"]["name"]}
    other = next(t for t in tools if t["function"]["name"] != tool)
    chosen = [t for t in tools if t["function"]["name"] == tool] + [other]
    return json.dumps(chosen), tool, other["function"]["name"]


NAMES = sorted({fx.format for fx in FIXTURES})
# Formats whose first example the tool-choice test cannot hold to, and why.
_NONE = 'with tool_choice "none" the call is taken, as content (any text is)'
TOOL_CHOICE_KNOWN: dict[str, str] = {
    **{
        name: _NONE
        for name in (
            "functionary_v3_2",
            "gpt_oss",
            "granite_pythonic",
            "llama3_json",
            "llmjp_harmony",
            "markdown_json",
        )
    },
}


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=[pytest.mark.xfail(reason=TOOL_CHOICE_KNOWN[n], strict=True)])
        if n in TOOL_CHOICE_KNOWN
        else n
        for n in NAMES
    ],
)
def test_tool_choice(name: str) -> None:
    """As test_export_lark's (a second call refused without parallel calls: below)."""

    def takes(tools: str, choice: Any, parallel: bool, data: bytes) -> bool:
        return walk(choice_export("regex", name, tools, choice, parallel), data) is None

    check_tool_choice(name, _example_tools(name)[0], takes)


def test_parallel_calls_off_refuses_a_second_call() -> None:
    fmt = get_format("hermes")
    tools = json.loads(fixture_tools("hermes"))
    call = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    one, two = call.encode(), (call + "\n" + call).encode()
    for choice in ("auto", "required", named("get_weather")):
        single = export.regex(fmt, tools, tool_choice=choice, parallel_tool_calls=False)
        many = export.regex(fmt, tools, tool_choice=choice)
        assert walk(single, one) is None and walk(many, one) is None
        assert walk(single, two) is not None and walk(many, two) is None
    # "required" refuses an output with no call; "auto" takes it
    assert walk(export.regex(fmt, tools, tool_choice="required"), b"Hello.") is not None
    assert walk(export.regex(fmt, tools), b"Hello.") is None


@pytest.mark.parametrize(("obj", "taken"), CALL_OBJECTS.items())
def test_a_call_object_has_one_name_and_one_set_of_arguments(obj: str, taken: bool) -> None:
    tool = {"type": "function", "function": {"name": "get_weather", "parameters": WEATHER}}
    regex = export.regex(get_format("hermes"), [tool])
    assert (walk(regex, f"<tool_call>{obj}</tool_call>".encode()) is None) == taken


def test_schema_is_enforced() -> None:
    tools = [WEATHER_TOOL]
    regex = export.regex(get_format("hermes"), tools)
    good = (
        b'<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo", "days": 2}}</tool_call>'
    )
    assert walk(regex, good) is None
    assert walk(regex, good.replace(b', "days": 2', b"")) is None
    assert walk(regex, good.replace(b"2}", b'"2"}')) is not None
    assert walk(regex, good.replace(b'"city": "Oslo", ', b"")) is not None
    assert walk(regex, good.replace(b"2}", b'2, "x": 1}')) is not None


def bounded_tool(days: dict[str, Any]) -> dict[str, Any]:
    """WEATHER_TOOL with these bounds on its integer `days`."""
    parameters = WEATHER_TOOL["function"]["parameters"]
    properties = {**parameters["properties"], "days": {"type": "integer", **days}}
    function = {**WEATHER_TOOL["function"], "parameters": {**parameters, "properties": properties}}
    return {**WEATHER_TOOL, "function": function}


def test_integer_bounds_are_enforced() -> None:
    regex = export.regex(get_format("hermes"), [bounded_tool({"minimum": 1, "maximum": 14})])
    call = (
        b'<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo", "days": %s}}</tool_call>'
    )
    for days, taken in [(b"1", True), (b"7", True), (b"14", True), (b"0", False)]:
        assert (walk(regex, call % days) is None) == taken, days
    for days in (b"15", b"-1", b"140", b"014", b"1.5"):
        assert walk(regex, call % days) is not None, days
    with pytest.raises(NotImplementedError, match="no integer in it"):
        export.regex(get_format("hermes"), [bounded_tool({"minimum": 3, "exclusiveMaximum": 3})])


def test_integer_bounds_from_every_draft() -> None:
    assert _ranges.integer_bounds({"minimum": 1, "maximum": 14}) == (1, 14)
    assert _ranges.integer_bounds({"exclusiveMinimum": 0, "exclusiveMaximum": 10}) == (1, 9)
    assert _ranges.integer_bounds({"minimum": 0.5, "maximum": 3.7}) == (1, 3)
    assert _ranges.integer_bounds({"minimum": 2, "exclusiveMinimum": True}) == (3, None)
    assert _ranges.integer_bounds({"maximum": 2, "exclusiveMaximum": True}) == (None, 1)
    assert _ranges.integer_bounds({"minimum": True, "maximum": "9"}) == (None, None)


@settings(max_examples=300, deadline=None)
@given(
    words=st.lists(st.text(alphabet="abné", max_size=4), max_size=4),
    other=st.text(alphabet='abné"\\ \n', max_size=6),
)
def test_a_json_string_other_than_some_words(words: list[str], other: str) -> None:
    """A call object's other keys: any JSON string token but the words'."""
    writer = lexeme_writer(Lowered("start"))
    tokens = [json.dumps(w, ensure_ascii=False).encode() for w in words]
    pattern = re.compile(writer.string_except(tokens).text)
    for text in {other, *words, *(w + other for w in words), *(w[:-1] for w in words if w)}:
        token = json.dumps(text, ensure_ascii=False)
        assert bool(pattern.fullmatch(token)) == (text not in words), token


bound = st.none() | st.integers(-(10**6), 10**6) | st.sampled_from([0, 9, 10, -10, 99, 100])


@given(low=bound, high=bound, values=st.lists(st.integers(-(10**7), 10**7), max_size=20))
@settings(max_examples=400, deadline=None)
def test_integer_ranges_spell_exactly_the_integers_in_range(
    low: int | None, high: int | None, values: list[int]
) -> None:
    spellings = _ranges.integer_spellings(low, high)
    if low is not None and high is not None and low > high:
        assert spellings == []
        return
    pattern = re.compile(_ranges.regex(spellings))
    near = [b + d for b in (low, high, 0) if b is not None for d in (-11, -10, -1, 0, 1, 10)]
    for value in values + near:
        inside = (low is None or value >= low) and (high is None or value <= high)
        assert (pattern.fullmatch(str(value)) is not None) == inside, value
    zero = (low is None or low <= 0) and (high is None or high >= 0)
    assert (pattern.fullmatch("-0") is not None) == zero  # JSON's other spelling of 0
    for spelled in ("01", "+1", "-01", "00", ""):
        assert pattern.fullmatch(spelled) is None


@pytest.mark.parametrize("name", sorted(NOT_EXPRESSIBLE))
def test_not_expressible(name: str) -> None:
    tools = json.loads(fixture_tools(name))
    with pytest.raises(NotImplementedError, match=NOT_EXPRESSIBLE[name]) as caught:
        export.regex(get_format(name), tools)
    assert "regex" in str(caught.value)


def test_recursive_schema_is_refused() -> None:
    schema = {
        "type": "object",
        "properties": {"tree": {"$ref": "#/$defs/node"}},
        "$defs": {
            "node": {
                "type": "object",
                "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
            }
        },
    }
    tools = [{"type": "function", "function": {"name": "f", "parameters": schema}}]
    with pytest.raises(NotImplementedError, match="recursive schema reference"):
        export.regex(get_format("hermes"), tools)


def test_free_form_depth() -> None:
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    flat = b'<tool_call>{"name": "f", "arguments": {"a": 1, "b": "x"}}</tool_call>'
    nested = b'<tool_call>{"name": "f", "arguments": {"a": [1, 2]}}</tool_call>'
    fmt = get_format("hermes")
    assert walk(export.regex(fmt, tools), flat) is None
    assert walk(export.regex(fmt, tools), nested) is not None
    deeper = to_regex(fmt, tools, max_depth=2)
    assert walk(deeper, nested) is None


# outlines-core's index of each format's regex, with the tool the first example calls
# (all eleven fixture tools take seconds to index for many formats)
# Formats whose index outlines-core does not build within seconds, left out of the test
# until their regex is smaller: xlam (half a minute with the one tool the test gives),
# whose calls are a JSON list of keys in any order, opened four ways; lfm2, whose block is
# a JSON list of calls, a bare JSON call or a Python list of calls (each alone indexes in
# a fraction of a second, the three together in most of a minute with no undeclared
# parameter, and past outlines-core's DFA size limit, or the memory, with them);
# granite_pythonic (over a minute and a half: bare Python calls, no marker around them, at
# any line of the output).
SLOW_INDEX = {"granite_pythonic", "lfm2", "xlam"}


@pytest.mark.parametrize("name", [n for n in NAMES if n not in SLOW_INDEX])
def test_outlines_index(name: str) -> None:
    tools, tool, _ = _example_tools(name)
    called = json.dumps([t for t in json.loads(tools) if t["function"]["name"] == tool])
    index = oc.Index(choice_export("regex", name, called), VOCABULARY)
    state = index.get_initial_state()
    allowed = index.get_allowed_tokens(state)
    # the example begins with a byte the index allows where the empty output is not
    # accepted (from an accepting state outlines-core 0.2 leaves out one-byte tokens into
    # states that are not: see walk())
    assert allowed
    if not index.is_final_state(state):
        assert get_format(name).examples[0].encode()[0] in allowed


def test_a_value_may_hold_its_closing_tag() -> None:
    """`</parameter>` ends a qwen3_coder value only before the next tag (a followed_by
    stop): elsewhere it is the value's own text, as the parser reads it."""
    regex = export.regex(get_format("qwen3_coder"), [WEATHER_TOOL])

    def call(value: str, rest: str = "") -> bytes:
        return (
            "<tool_call>\n<function=get_weather>\n<parameter=city>\n"
            f"{value}\n</parameter>\n{rest}</function>\n</tool_call>"
        ).encode()

    assert walk(regex, call("Paris")) is None
    assert walk(regex, call("Paris </parameter> or Lyon")) is None
    assert walk(regex, call("Paris</parameter>\n\tor Lyon")) is None
    # before a follow text the marker ends the value: what comes after must be a tag
    assert walk(regex, call("Paris</parameter>\n</function>x")) is not None
    assert walk(regex, call("Paris</parameter>\n<parameter=days>\n2")) is None


def test_an_open_block_of_calls_ends_the_output() -> None:
    """A DSML block's closer is optional, and its many(invoke) takes every invoke that
    comes: the export needs the closer unless the output ends, so that a call the parser
    would refuse cannot pass as content after a block that stopped early."""
    regex = export.regex(get_format("deepseek_v32"), [WEATHER_TOOL], reasoning_in_prompt=False)
    dsml = "\uff5cDSML\uff5c"  # (DeepSeek spells its markers with U+FF5C)
    opener, closer = f"<{dsml}function_calls>\n", f"</{dsml}function_calls>"

    def invoke(name: str) -> str:
        return (
            f'<{dsml}invoke name="{name}">\n<{dsml}parameter name="city" string="true">'
            f"Oslo</{dsml}parameter>\n</{dsml}invoke>\n"
        )

    assert walk(regex, (opener + invoke("get_weather")).encode()) is None
    assert walk(regex, (opener + invoke("get_weather") + closer + "\nDone.").encode()) is None
    assert walk(regex, (opener + invoke("get_weather") + "Done.").encode()) is not None
    assert walk(regex, (opener + invoke("get_weather") + invoke("not_a_tool")).encode()) is not None
    assert walk(regex, (opener + invoke("not_a_tool") + closer).encode()) is not None


@pytest.mark.parametrize("case", PLAIN_TEXT_CASES)
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_text_at_the_end_against_the_parser(case: str, data: Any) -> None:
    """Where the output ends after it, a text is what the parser reads whole: a marker
    cut short by the end is text as well (and without that, it is refused)."""
    stops, pieces = TEXT_CASES[case]
    text = "".join(data.draw(st.lists(st.sampled_from(pieces), max_size=8)))
    writer = lexeme_writer(Lowered("start"))
    at_end = writer.expr(Seq((Text(stops, False), Optional_(CutShort(stops)))))
    inside = writer.expr(Text(stops, False))
    assert at_end is not None and inside is not None
    assert (re.fullmatch(at_end.text, text, re.S) is not None) == _reads_all(stops, text)
    if re.fullmatch(inside.text, text, re.S):
        assert _reads_all(stops, text)
