"""The streaming contract of DESIGN.md, on the fixtures and on generated output.

Where a check needs to know where a call's markers are, it asks `call_envelopes`, a small
scanner written here for the purpose: it walks the raw text with plain string searches
and JSON string tracking, without the grammar, the VM or the emitter.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import toolparse
from engines import (
    ENGINES,
    EVENT_TYPES,
    FIXTURES,
    Feed,
    Fixture,
    all_events,
    arguments_text,
    merge_deltas,
    random_sizes,
    run,
    run_events,
    summary,
    text_of,
)
from helpers import partitions, split
from toolparse import (
    ContentDelta,
    End,
    ParseError,
    ReasoningDelta,
    StreamParser,
    ToolCallArgsDelta,
    ToolCallEnd,
    ToolCallStart,
)

FEW = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)

# The scanner below knows the <tool_call> families; tests/formats/test_format_properties.py holds
# the properties every format must keep, checked from the formats' metadata.
SCANNED_FORMATS = ("hermes", "qwen3", "qwen3_coder")
# (strict parses: repair mode keeps its own properties, tests/formats/test_repair_mode.py)
SCANNED_FIXTURES = [
    f for f in FIXTURES if f.format in SCANNED_FORMATS and not f.options.get("repair")
]
by_fixture = pytest.mark.parametrize(
    "fixture", SCANNED_FIXTURES, ids=[f.id for f in SCANNED_FIXTURES]
)
by_engine = pytest.mark.parametrize("engine", ENGINES)

TOOL_OPEN, TOOL_CLOSE = b"<tool_call>", b"</tool_call>"
THINK_OPEN, THINK_CLOSE = b"<think>", b"</think>"
MARKERS = ("<tool_call>", "</tool_call>", "<think>", "</think>")
JSON_WHITESPACE = b" \t\r\n"
# Formats in which a <tool_call> inside unfinished reasoning ends the reasoning.
IMPLICIT_REASONING_END = {"hermes": False, "qwen3": True, "qwen3_coder": True}
XML_NEXT_TAGS = (b"<parameter=", b"</function>", TOOL_CLOSE)
FUNCTION_OPEN, FUNCTION_CLOSE = b"<function=", b"</function>"
REPLACEMENT_CHARACTER = "\ufffd"


# --- where the calls are, found without the parser -----------------------------------------


@dataclass(frozen=True)
class Envelope:
    """One <tool_call> ... </tool_call> block of the raw output (or a qwen3_coder call
    opened by <function= alone, bare, which its </function> completes)."""

    start: int  # offset of the opening marker
    name: str | None
    name_end: int | None  # just past the name's terminator (closing quote, or ">")
    closed: int | None  # just past the real closing marker; None when it never came
    well_formed: bool  # a complete call with a name and object arguments
    bare: bool = False

    @property
    def opened(self) -> int:
        return self.start + len(FUNCTION_OPEN if self.bare else TOOL_OPEN)


def skip_whitespace(raw: bytes, at: int) -> int:
    while at < len(raw) and raw[at] in JSON_WHITESPACE:
        at += 1
    return at


def body_start(format_name: str, raw: bytes, reasoning_in_prompt: bool) -> int:
    """Where calls may begin: after the reasoning block, or where a call ends it."""
    at = 0
    if not reasoning_in_prompt:
        at = skip_whitespace(raw, 0)
        if not raw.startswith(THINK_OPEN, at):
            return at
        at += len(THINK_OPEN)
    ends = [raw.find(THINK_CLOSE, at)]
    if IMPLICIT_REASONING_END[format_name]:
        ends.append(raw.find(TOOL_OPEN, at))
    if format_name == "qwen3_coder":
        ends.append(raw.find(FUNCTION_OPEN, at))
    found = [end for end in ends if end >= 0]
    return min(found) if found else len(raw)


JSON_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[{}\[\]:,]|[^\s"{}\[\]:,]+')


def json_name(body: bytes, base: int) -> tuple[str | None, int | None]:
    """The value of the top-level "name" key of the object in body, and the offset just
    past its closing quote (body starts at offset base of the raw output)."""
    depth = 0
    tokens = list(JSON_TOKEN.finditer(body))
    for i, token in enumerate(tokens):
        text = token.group()
        if text in (b"{", b"["):
            depth += 1
        elif text in (b"}", b"]"):
            depth -= 1
        elif (
            depth == 1
            and text == b'"name"'
            and i + 2 < len(tokens)
            and tokens[i + 1].group() == b":"
            and tokens[i + 2].group().startswith(b'"')
            and len(tokens[i + 2].group()) >= 2
            and tokens[i + 2].group().endswith(b'"')
        ):
            value = tokens[i + 2]
            return json.loads(value.group()), base + value.end()
    return None, None


def json_envelope(raw: bytes, start: int) -> Envelope:
    at = start + len(TOOL_OPEN)
    in_string = False
    closed = None
    while at < len(raw):
        byte = raw[at]
        if in_string:
            if byte == 0x5C:  # backslash: the next byte is escaped
                at += 2
                continue
            if byte == 0x22:
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif raw.startswith(TOOL_CLOSE, at):
            closed = at + len(TOOL_CLOSE)
            break
        at += 1
    body_end = closed - len(TOOL_CLOSE) if closed is not None else len(raw)
    body = raw[start + len(TOOL_OPEN) : body_end]
    name, name_end = json_name(body, start + len(TOOL_OPEN))
    return Envelope(start, name, name_end, closed, closed is not None and json_call_ok(body))


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object's pairs as a dict; ValueError where a key comes twice (no call)."""
    out = dict(pairs)
    if len(out) != len(pairs):
        raise ValueError("a key named twice")
    return out


def string_held(text: str) -> Any:
    """The arguments a JSON string holds (hermes decodes them once: one object, nothing
    around it), or None."""
    if not (text.startswith("{") and text.endswith("}")):
        return None
    try:
        return json.loads(text, object_pairs_hook=unique_keys)
    except ValueError:
        return None


def json_call_ok(body: bytes) -> bool:
    try:
        value = json.loads(body, object_pairs_hook=unique_keys)
    except ValueError:
        return False
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        return False
    arguments = [value[key] for key in ("arguments", "parameters") if key in value]
    arguments = [string_held(a) if isinstance(a, str) else a for a in arguments]
    return (
        bool(value["name"]) and len(arguments) <= 1 and all(isinstance(a, dict) for a in arguments)
    )


def xml_envelope(raw: bytes, start: int, bare: bool = False) -> Envelope:
    at = start if bare else skip_whitespace(raw, start + len(TOOL_OPEN))
    name = name_end = None
    if raw.startswith(b"<function=", at):
        end = raw.find(b">", at)
        if end >= 0:
            name = raw[at + len(b"<function=") : end].decode("utf-8", "replace")
            name_end = at = end + 1
    function_closed = False
    keys: list[bytes] = []
    while True:
        found = [(raw.find(tag, at), tag) for tag in (b"<parameter=", b"</function>", TOOL_CLOSE)]
        found = [(offset, tag) for offset, tag in found if offset >= 0]
        if not found:
            return Envelope(start, name, name_end, None, False, bare)
        offset, tag = min(found)
        at = offset + len(tag)
        unique = len(set(keys)) == len(keys)  # a parameter written twice is no call
        if tag == TOOL_CLOSE:
            if bare:  # before its </function>: not a call
                return Envelope(start, name, name_end, None, False, bare)
            return Envelope(start, name, name_end, at, bool(name) and function_closed and unique)
        if tag == FUNCTION_CLOSE and bare:
            return Envelope(start, name, name_end, at, bool(name) and unique, bare)
        if tag == FUNCTION_CLOSE:
            function_closed = True
            continue
        keys.append(raw[at : raw.find(b">", at)])
        value_end = xml_value_end(raw, at)
        if value_end is None:
            return Envelope(start, name, name_end, None, False, bare)
        at = value_end


def xml_value_end(raw: bytes, at: int) -> int | None:
    """Just past the </parameter> that ends the value begun at `at`: the first one that is
    followed (after optional whitespace) by the next tag."""
    while (close := raw.find(b"</parameter>", at)) >= 0:
        after = close + len(b"</parameter>")
        if raw.startswith(XML_NEXT_TAGS, skip_whitespace(raw, after)):
            return after
        at = close + 1
    return None


def call_envelopes(format_name: str, raw: bytes, reasoning_in_prompt: bool) -> list[Envelope]:
    xml = format_name == "qwen3_coder"
    found: list[Envelope] = []
    at = body_start(format_name, raw, reasoning_in_prompt)
    while True:
        starts = [(raw.find(TOOL_OPEN, at), False)]
        if xml:  # a call may also open with <function= alone
            starts.append((raw.find(FUNCTION_OPEN, at), True))
        starts = [(start, bare) for start, bare in starts if start >= 0]
        if not starts:
            return found
        start, bare = min(starts)
        found.append(xml_envelope(raw, start, bare) if xml else json_envelope(raw, start))
        if found[-1].closed is None:
            return found
        at = found[-1].closed


def fixture_envelopes(fixture: Fixture) -> list[Envelope]:
    return call_envelopes(
        fixture.format, fixture.raw, fixture.options.get("reasoning_in_prompt", False)
    )


@cache
def refused_offsets(fixture_id: str) -> tuple[int, ...]:
    """Where the whole output reports invalid arguments (parsed once per fixture)."""
    fixture = next(f for f in FIXTURES if f.id == fixture_id)
    errors = fixture.parse(ENGINES[0]).errors
    return tuple(e.offset for e in errors if e.kind == "invalid_arguments")


def valid_envelopes(fixture: Fixture) -> list[Envelope]:
    """The envelopes that must become calls once their closing marker has arrived: well
    formed, of a known name, and with arguments the whole output does not refuse (a key
    named twice, a value that fits none of its types: what the envelope alone cannot
    tell)."""
    tools = {tool["function"]["name"] for tool in fixture.tools}
    refused = refused_offsets(fixture.id)
    return [
        e
        for e in fixture_envelopes(fixture)
        if e.well_formed
        and e.name in tools
        and not any(e.start < offset <= (e.closed or e.start) for offset in refused)
    ]


@by_fixture
def test_envelope_scanner_agrees_with_the_fixture(fixture: Fixture) -> None:
    """The scanner the checks below rely on finds exactly the expected calls."""
    names = [e.name for e in valid_envelopes(fixture)]
    assert names == [call["name"] for call in fixture.expected["message"]["tool_calls"]]


# --- truncation: a call ends only once its closing marker has arrived -----------------------


@cache
def truncated_runs(engine: str, fixture_id: str) -> list[list[Any]]:
    """The events of feeding the first k bytes whole and finishing, for every k."""
    fixture = next(f for f in FIXTURES if f.id == fixture_id)
    return [
        run_events(fixture.parser(engine), fixture.raw[:cut]) for cut in range(len(fixture.raw) + 1)
    ]


@by_engine
@by_fixture
def test_truncation_ends_exactly_the_calls_whose_closing_marker_arrived(
    fixture: Fixture, engine: str
) -> None:
    full = fixture.parse(engine)
    valid = valid_envelopes(fixture)
    for cut, events in enumerate(truncated_runs(engine, fixture.id)):
        message = events[-1].message
        closed = [e for e in valid if e.closed is not None and e.closed <= cut]
        ended = [e for e in events if isinstance(e, ToolCallEnd)]
        assert len(ended) <= len(valid)
        for end, envelope in zip(ended, valid, strict=False):
            assert end.call.name == envelope.name
            assert envelope.closed is not None and envelope.closed <= cut, (
                f"cut at {cut}: {end!r} before its closing marker arrived: {fixture.raw[:cut]!r}"
            )
        assert [e.call for e in ended] == message.tool_calls
        assert [(c.name, c.arguments) for c in message.tool_calls] == [
            (c.name, c.arguments) for c in full.tool_calls[: len(closed)]
        ], f"cut at {cut}: the calls complete by then must be delivered"


@by_engine
@by_fixture
def test_truncation_inside_a_call_is_incomplete(fixture: Fixture, engine: str) -> None:
    """A cut inside a call that would have been valid reports the call as incomplete."""
    valid = valid_envelopes(fixture)
    for cut, events in enumerate(truncated_runs(engine, fixture.id)):
        if any(e.opened <= cut < (e.closed or len(fixture.raw) + 1) for e in valid):
            errors = events[-1].message.errors
            assert errors, f"cut at {cut}: {fixture.raw[:cut]!r} ends inside a call"
            assert errors[-1].kind == "incomplete", (
                f"cut at {cut}: {fixture.raw[:cut]!r} ends inside a call, got {errors[-1]!r}"
            )


@by_engine
@by_fixture
def test_truncation_never_repairs_and_always_ends_with_end(fixture: Fixture, engine: str) -> None:
    for cut, events in enumerate(truncated_runs(engine, fixture.id)):
        assert isinstance(events[-1], End), f"cut at {cut}"
        assert not any(isinstance(e, End) for e in events[:-1]), f"cut at {cut}"
        assert all(not call.repaired for call in events[-1].message.tool_calls)


@by_engine
@by_fixture
def test_truncated_argument_deltas_concatenate_to_the_arguments(
    fixture: Fixture, engine: str
) -> None:
    for cut, events in enumerate(truncated_runs(engine, fixture.id)):
        for event in events:
            if isinstance(event, ToolCallEnd):
                assert arguments_text(events, event.index) == event.call.arguments_json, cut


# --- order of call events, argument deltas --------------------------------------------------


def chunkings(size: int) -> dict[str, list[int] | None]:
    found: dict[str, list[int] | None] = {"whole": None, "byte by byte": [1] * size}
    for seed in (21, 22, 23):
        found[f"random chunking {seed}"] = random_sizes(seed, size, max_piece=8)
    return found


def check_call_events(events: Sequence[Any]) -> None:
    """Starts come first, numbered 0, 1, ...; deltas and the end follow their start; the
    deltas of an ended call are exactly its arguments_json; nothing follows an end."""
    started: dict[int, ToolCallStart] = {}
    ended: set[int] = set()
    for position, event in enumerate(events):
        if isinstance(event, ToolCallStart):
            assert event.index == len(started), f"event {position}: starts are numbered in order"
            started[event.index] = event
        elif isinstance(event, (ToolCallArgsDelta, ToolCallEnd)):
            assert event.index in started, f"event {position}: {event!r} before its start"
            assert event.index not in ended, f"event {position}: {event!r} after its end"
            if isinstance(event, ToolCallEnd):
                ended.add(event.index)
                call = event.call
                assert call.index == event.index
                assert (call.id, call.name) == (started[event.index].id, started[event.index].name)
                assert arguments_text(events, event.index) == call.arguments_json
                assert json.loads(call.arguments_json) == call.arguments


@by_engine
@by_fixture
def test_call_events_are_ordered_and_arguments_concatenate(fixture: Fixture, engine: str) -> None:
    for label, sizes in chunkings(len(fixture.raw)).items():
        events = fixture.events(engine, sizes)
        try:
            check_call_events(events)
        except AssertionError as error:
            raise AssertionError(f"{label}: {error}") from error


# --- a name is announced only once it is terminated -----------------------------------------


@by_engine
@by_fixture
def test_name_is_announced_only_after_its_terminator(fixture: Fixture, engine: str) -> None:
    envelopes = fixture_envelopes(fixture)
    feeds = run(fixture.parser(engine), fixture.raw, [1] * len(fixture.raw))
    for feed in feeds:
        for event in feed.events:
            if not isinstance(event, ToolCallStart):
                continue
            current = [e for e in envelopes if e.start < feed.fed]
            assert current, f"{event!r} with no <tool_call> in the first {feed.fed} bytes"
            envelope = current[-1]
            assert envelope.name == event.name
            assert envelope.name_end is not None and envelope.name_end <= feed.fed, (
                f"{event!r} announced after {fixture.raw[: feed.fed]!r}: the name is not "
                "terminated yet"
            )


@by_engine
@pytest.mark.parametrize(
    ("format_name", "output", "name_and_terminator"),
    [
        (
            "hermes",
            '<tool_call>\n{"name": "search_web", "arguments": {}}\n</tool_call>',
            '"search_web"',
        ),
        ("qwen3", '<tool_call>{"name": "search", "arguments": {"q": 1}}</tool_call>', '"search"'),
        (
            "qwen3_coder",
            "<tool_call>\n<function=search_web>\n</function>\n</tool_call>",
            "<function=search_web>",
        ),
    ],
)
def test_prefix_name_waits_for_its_terminator(
    engine: str, format_name: str, output: str, name_and_terminator: str
) -> None:
    """A name that is a prefix of another (search, search_web) waits for its terminator."""
    data = output.encode()
    terminated_at = data.index(name_and_terminator.encode()) + len(name_and_terminator)
    feeds = run(StreamParser(format_name, engine=engine), data, [1] * len(data))
    starts = [(feed.fed, e) for feed in feeds for e in feed.events if isinstance(e, ToolCallStart)]
    assert len(starts) == 1
    fed, start = starts[0]
    assert fed >= terminated_at
    assert start.name == name_and_terminator.strip('"<>').removeprefix("function=")


# --- text deltas are whole UTF-8 ------------------------------------------------------------

MULTIBYTE_FIXTURES = [f for f in SCANNED_FIXTURES if any(byte >= 0x80 for byte in f.raw)]


def texts(events: Sequence[Any]) -> list[str]:
    found = []
    for event in events:
        if isinstance(event, (ContentDelta, ReasoningDelta, ToolCallArgsDelta)):
            found.append(event.text)
        elif isinstance(event, ToolCallStart):
            found.append(event.name)
    return found


@by_engine
@pytest.mark.parametrize("fixture", MULTIBYTE_FIXTURES, ids=[f.id for f in MULTIBYTE_FIXTURES])
def test_split_characters_wait_for_their_rest(fixture: Fixture, engine: str) -> None:
    fixture.raw.decode("utf-8")  # valid input: no replacement character may appear
    whole_message = fixture.parse(engine)
    splits = [[cut] for cut in range(1, len(fixture.raw))]
    for sizes in [[1] * len(fixture.raw), *splits]:
        parser = fixture.parser(engine)
        events = run_events(parser, fixture.raw, sizes, fixture.finish)
        for text in texts(events):
            assert REPLACEMENT_CHARACTER not in text, f"{text!r} with sizes {sizes[:3]}"
        assert parser.message.content == whole_message.content
        assert parser.message.reasoning_content == whole_message.reasoning_content


@by_engine
@pytest.mark.parametrize("format_name", ["hermes", "qwen3", "qwen3_coder"])
@pytest.mark.parametrize("character", ["é", "€", "🙂"])
def test_character_split_at_every_byte_arrives_whole(
    engine: str, format_name: str, character: str
) -> None:
    data = f"a{character}b".encode()
    for cut in range(1, len(data)):
        events = run_events(StreamParser(format_name, engine=engine), data, [cut])
        deltas = [e.text for e in events if isinstance(e, ContentDelta)]
        assert "".join(deltas) == f"a{character}b"
        assert all(REPLACEMENT_CHARACTER not in delta for delta in deltas)


@by_engine
def test_invalid_utf8_becomes_replacement_characters(engine: str) -> None:
    data = b"ok \xff then \xc3"
    message = toolparse.parse(data, "hermes", engine=engine)
    assert message.content == data.decode("utf-8", "replace")


# --- no marker in text deltas ---------------------------------------------------------------


def check_no_marker(deltas: Sequence[str], markers: Sequence[str]) -> None:
    """No delta contains a marker, and none ends with its start with the rest in the next."""
    for delta in deltas:
        for marker in markers:
            assert marker not in delta, f"{delta!r} contains {marker!r}"
    for first, second in itertools.pairwise(deltas):
        for marker in markers:
            for split_at in range(1, len(marker)):
                assert not (
                    first.endswith(marker[:split_at]) and second.startswith(marker[split_at:])
                ), f"{marker!r} split across {first!r} and {second!r}"


def text_deltas(events: Sequence[Any], kind: type) -> list[str]:
    """The texts of the deltas of one kind, in order (other events in between are skipped)."""
    return [e.text for e in events if type(e) is kind]


@by_engine
@by_fixture
def test_text_deltas_never_carry_a_marker(fixture: Fixture, engine: str) -> None:
    expected = fixture.expected["message"]
    # A marker that the expected text itself contains is data there (for instance <think>
    # after content in hermes), not a marker.
    content_markers = [m for m in MARKERS if m not in (expected["content"] or "")]
    reasoning_markers = [m for m in MARKERS if m not in (expected["reasoning_content"] or "")]
    for label, sizes in chunkings(len(fixture.raw)).items():
        events = fixture.events(engine, sizes)
        try:
            check_no_marker(text_deltas(events, ContentDelta), content_markers)
            check_no_marker(text_deltas(events, ReasoningDelta), reasoning_markers)
        except AssertionError as error:
            raise AssertionError(f"{label}: {error}") from error


@by_engine
@pytest.mark.parametrize("format_name", ["hermes", "qwen3", "qwen3_coder"])
def test_partial_marker_is_held_back_and_released_when_it_is_not_one(
    engine: str, format_name: str
) -> None:
    parser = StreamParser(format_name, engine=engine)
    assert parser.feed("Checking <tool_ca") == [ContentDelta("Checking ")]
    assert parser.feed("r is not a call") == [ContentDelta("<tool_car is not a call")]


# --- generated messages ---------------------------------------------------------------------

MARKER_FRAGMENTS = [
    "<tool_call>",
    "</tool_call>",
    "<think>",
    "</think>",
    "<tool_",
    "</tool_cal",
    "<",
    "</",
    ">",
    '"',
    "\\",
    "{",
    "}",
    "\n",
    " ",
    "é",
    "🙂",
    "name",
]
TRICKY_TEXT = st.lists(st.sampled_from(MARKER_FRAGMENTS), max_size=6).map("".join) | st.text(
    max_size=10
)
JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(10**12), 10**12)
    | st.floats(allow_nan=False, allow_infinity=False)
    | TRICKY_TEXT
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TRICKY_TEXT, inner, max_size=3),
    max_leaves=8,
)
ARGUMENTS = st.dictionaries(TRICKY_TEXT, JSON_VALUES, max_size=4)
TOOL_NAMES = st.sampled_from(["search", "search_web", "get_weather", "get_weather_forecast"])
CONTENT_FRAGMENTS = [f for f in MARKER_FRAGMENTS if f not in MARKERS]
# Content starts with a visible character: whitespace after a call or at the start of the
# output is layout, not content.
CONTENT = st.tuples(
    st.sampled_from(["Sure", "<", "é", "x", "🙂", "{"]),
    st.lists(st.sampled_from([*CONTENT_FRAGMENTS, "tool_call>", "think>", "ok"]), max_size=8),
).map(lambda parts: parts[0] + "".join(parts[1]))
REASONING = st.lists(
    st.sampled_from([*CONTENT_FRAGMENTS, "<tool_call>", "think", "hmm"]), max_size=8
).map("".join)
LAYOUT = st.sampled_from(["", "\n", " ", "\n\n", " \t\n"])


def no_marker(text: str, markers: Sequence[str]) -> bool:
    return not any(marker in text for marker in markers)


@dataclass(frozen=True)
class Generated:
    format: str
    output: str
    reasoning_in_prompt: bool
    reasoning: str | None
    content: str | None
    calls: list[tuple[str, dict[str, Any]]]


@st.composite
def call_text(draw: st.DrawFn, name: str, arguments: dict[str, Any]) -> str:
    pairs = [("name", name), ("arguments", arguments)]
    if draw(st.booleans()):
        pairs.reverse()
    style = draw(
        st.sampled_from(
            [
                {},
                {"ensure_ascii": False},
                {"separators": (",", ":")},
                {"indent": 2, "ensure_ascii": False},
            ]
        )
    )
    body = json.dumps(dict(pairs), **style)
    return "<tool_call>" + draw(LAYOUT) + body + draw(LAYOUT) + "</tool_call>" + draw(LAYOUT)


@st.composite
def generated_messages(draw: st.DrawFn) -> Generated:
    format_name = draw(st.sampled_from(["hermes", "qwen3"]))
    in_prompt = format_name == "qwen3" and draw(st.booleans())
    parts: list[str] = [draw(LAYOUT)] if not in_prompt else []
    reasoning = None
    segments = draw(
        st.lists(st.one_of(CONTENT.map(lambda c: ("content", c)), st.just(("call", None))))
    )
    if in_prompt or draw(st.booleans()):
        markers = ["</think>"] + (["<tool_call>"] if format_name == "qwen3" else [])
        reasoning = draw(REASONING.filter(lambda r: no_marker(r, markers)))
        parts += [] if in_prompt else ["<think>"]
        parts += [reasoning, "</think>", draw(LAYOUT)]
    contents = []
    calls = []
    content_run = ""  # the content since the last call: markers must not form across pieces
    for kind, text in segments:
        if kind == "content":
            assert text is not None
            if not no_marker(content_run + text, MARKERS):
                continue
            content_run += text
            contents.append(text)
            parts.append(text)
        else:
            content_run = ""
            name, arguments = draw(TOOL_NAMES), draw(ARGUMENTS)
            calls.append((name, arguments))
            parts.append(draw(call_text(name, arguments)))
    output = "".join(parts)
    content = "".join(contents) or None
    return Generated(format_name, output, in_prompt, reasoning, content, calls)


def check_generated(message: toolparse.Message, generated: Generated) -> None:
    assert message.errors == []
    assert message.content == generated.content
    assert message.reasoning_content == (generated.reasoning or None)  # "" is no reasoning
    assert [(c.name, c.arguments) for c in message.tool_calls] == generated.calls
    for call in message.tool_calls:
        assert json.loads(call.arguments_json) == call.arguments
    assert message.finish_reason == ("tool_calls" if generated.calls else "stop")


@by_engine
@FEW
@given(generated=generated_messages(), data=st.data())
def test_generated_messages_parse_to_what_was_generated(
    engine: str, generated: Generated, data: st.DataObject
) -> None:
    raw = generated.output.encode()
    options = {"engine": engine, "reasoning_in_prompt": generated.reasoning_in_prompt, "seed": 3}
    message = toolparse.parse(raw, generated.format, **options)
    check_generated(message, generated)

    sizes = data.draw(partitions(len(raw)), label="sizes")
    parser = StreamParser(generated.format, **options)
    feeds = run(parser, raw, sizes)
    events = all_events(feeds)
    assert parser.message == message
    whole = run_events(StreamParser(generated.format, **options), raw)
    assert merge_deltas(events) == merge_deltas(whole)
    check_call_events(events)
    check_no_marker(text_deltas(events, ContentDelta), MARKERS)


# --- text is held back only while it could still be a marker -------------------------------

# The longest marker that can end content or reasoning is <tool_call>; at most all but its
# last byte may wait for the next feed.
MAX_HOLDBACK = len("<tool_call>") - 1


@by_engine
@FEW
@given(
    format_name=st.sampled_from(["hermes", "qwen3", "qwen3_coder"]),
    in_reasoning=st.booleans(),
    text=CONTENT,
)
def test_text_is_released_as_soon_as_it_cannot_be_a_marker(
    engine: str, format_name: str, in_reasoning: bool, text: str
) -> None:
    assume(no_marker(text, MARKERS))
    prefix = "<think>" if in_reasoning else ""
    kind = ReasoningDelta if in_reasoning else ContentDelta
    data = (prefix + text).encode()
    feeds = run(StreamParser(format_name, engine=engine), data, [1] * len(data))
    released = 0
    for feed in feeds[:-1]:
        released += sum(len(e.text.encode()) for e in feed.events if isinstance(e, kind))
        held = feed.fed - len(prefix) - released
        assert held <= MAX_HOLDBACK, f"{held} bytes held after {data[: feed.fed]!r}"
    assert text_of(all_events(feeds), kind) == text


# --- the message so far is the deltas so far -------------------------------------------------

# Piece sizes around how much streamed text the C event builder keeps before writing it to
# the message (emit.c's STAGE_CAP, 33 bytes): pieces that fill it, overflow it and skip it.
STAGING_PIECES = (1, 4, 32, 33, 34, 70)


@by_engine
@pytest.mark.parametrize("fixture", FIXTURES, ids=[f.id for f in FIXTURES])
def test_message_so_far_is_the_deltas_so_far(fixture: Fixture, engine: str) -> None:
    """Read after any feed, the message holds exactly the text deltas given so far, the
    calls ended so far and nothing else, whatever the piece sizes."""
    chunkings = [[size] * (len(fixture.raw) // size) for size in STAGING_PIECES]
    chunkings += [random_sizes(seed, len(fixture.raw), 48) for seed in range(3)]
    for sizes in chunkings:
        parser = fixture.parser(engine)
        events: list[Any] = []
        for piece in split(fixture.raw, sizes):
            events += parser.feed(piece)
            message = parser.message
            assert (message.content or "") == text_of(events, ContentDelta)
            assert (message.reasoning_content or "") == text_of(events, ReasoningDelta)
            ended = [e.call for e in events if isinstance(e, ToolCallEnd)]
            assert message.tool_calls == ended
        events += parser.finish(fixture.finish)
        assert (parser.message.content or "") == text_of(events, ContentDelta)
        assert summary(parser.message) == summary(fixture.parse(engine))


# --- limits ---------------------------------------------------------------------------------


@by_engine
@pytest.mark.parametrize("format_name", ["hermes", "qwen3"])
def test_nesting_beyond_the_depth_limit_is_a_limit_error(engine: str, format_name: str) -> None:
    def output(depth: int) -> str:
        value = "[" * depth + "]" * depth
        return f'<tool_call>{{"name": "f", "arguments": {{"a": {value}}}}}</tool_call>After.'

    events = run_events(StreamParser(format_name, engine=engine), output(600).encode())
    assert not any(isinstance(e, ToolCallEnd) for e in events)
    (error,) = [e for e in events if isinstance(e, ParseError)]
    assert error.kind == "limit" and error.message.startswith("max_depth:")
    assert events[-1].message.content is None  # a limit ends the parse (tests/core/test_limits.py)
    within = toolparse.parse(output(100), format_name, engine=engine)
    assert within.errors == []
    assert [c.name for c in within.tool_calls] == ["f"]


# --- arbitrary input never crashes ----------------------------------------------------------

NOISE = st.lists(
    st.sampled_from(
        [
            b"<tool_call>",
            b"</tool_call>",
            b"<think>",
            b"</think>",
            b"<function=",
            b"<parameter=",
            b"</parameter>",
            b"</function>",
            b'{"name": "search", "arguments": {',
            b'"',
            b"}",
            b"\n",
        ]
    )
    | st.binary(max_size=12),
    max_size=16,
).map(b"".join)


@by_engine
@FEW
@given(
    format_name=st.sampled_from(["hermes", "qwen3", "qwen3_coder"]),
    raw=NOISE | st.binary(max_size=200),
    data=st.data(),
)
def test_arbitrary_bytes_end_in_errors_not_crashes(
    engine: str, format_name: str, raw: bytes, data: st.DataObject
) -> None:
    sizes = data.draw(partitions(len(raw)), label="sizes")
    parser = StreamParser(format_name, engine=engine, seed=5)
    feeds: list[Feed] = run(parser, raw, sizes)
    events = all_events(feeds)
    assert all(isinstance(event, EVENT_TYPES) for event in events)
    assert isinstance(events[-1], End)
    assert not any(isinstance(event, End) for event in events[:-1])
    assert events[-1].message == parser.message
    assert parser.message == toolparse.parse(raw, format_name, engine=engine, seed=5)
    check_call_events(events)
    errors = [e for e in events if isinstance(e, ParseError)]
    assert errors == parser.message.errors
