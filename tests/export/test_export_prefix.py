"""export/_prefix.py: what an ordered choice's earlier alternative commits to, and the
texts of later alternatives that may not begin with it; and the Lark and regex exports
that refuse those beginnings (a call the parser commits to and finds broken is not
content)."""

from __future__ import annotations

import json
import re

import pytest

from toolparse import export
from toolparse import grammar as g
from toolparse.export import _prefix
from toolparse.formats import get_format

WS = b" \t\r\n"


def _matches(node: g.Node | None, data: bytes) -> bool:
    """Whether data begins with the pattern, by derivatives."""
    for k in range(len(data) + 1):
        if node is not None and _prefix.nullable(node):
            return True
        if k == len(data) or node is None:
            return False
        node = _prefix.derive(node, data[k])
    return False


KEYS = g.seq(g.lit("{"), g.ws(), g.choice(g.lit('"tool_call"'), g.lit('"tool_calls"')))


@pytest.mark.parametrize(
    ("data", "begins"),
    [
        (b'{"tool_call"', True),
        (b'{ \n "tool_calls": 1', True),
        (b'{"tool_cal', False),
        (b'{"tool_cax"', False),
        (b' {"tool_call"', False),
        (b"", False),
    ],
)
def test_derivatives_read_the_pattern_as_a_regex_does(data: bytes, begins: bool) -> None:
    assert _matches(KEYS, data) is begins
    as_regex = rb'\{[ \t\r\n]*("tool_call"|"tool_calls")'
    assert bool(re.match(as_regex, data)) is begins


def test_a_cut_after_a_lookahead_commits_to_what_it_looks_for() -> None:
    alt = g.seq(g.ahead(KEYS), g.cut(), g.lit("{"))
    (found,) = _prefix.commit_prefixes(alt, {})
    assert _matches(found, b'{"tool_call"') and not _matches(found, b"{}")


def test_a_prefix_the_parser_reads_otherwise_than_a_regex_commits_nothing() -> None:
    # opt("a") then "ab": the parser's opt takes the "a" of "ab" and fails where a regex
    # would match, so refusing texts that begin with "a?ab" would refuse what it takes
    alt = g.seq(g.opt(g.lit("a")), g.lit("ab"), g.cut(), g.lit("!"))
    assert _prefix.commit_prefixes(alt, {}) == []
    # whitespace before whitespace-led text, and an ordered choice whose first spelling
    # begins the second, likewise
    assert _prefix.commit_prefixes(g.seq(g.ws(), g.lit(" x"), g.cut()), {}) == []
    short_first = g.seq(g.choice(g.lit("<a"), g.lit("<ab")), g.lit("b"), g.cut())
    assert _prefix.commit_prefixes(short_first, {}) == []
    # at the end of the prefix they are harmless: what follows the cut is the call's
    (found,) = _prefix.commit_prefixes(g.seq(g.choice(g.lit("<a"), g.lit("<ab")), g.cut()), {})
    assert _matches(found, b"<ab")


def test_texts_after_a_literal_refuse_the_rest_of_the_prefix() -> None:
    run = g.chars("\x00-\xff")
    text = g.until("</s>")
    grammar = {
        "start": g.choice(
            g.seq(g.opt(g.seq(g.lit("<sep>"), g.ws())), g.lit("call:"), g.cut(), g.lit("{}")),
            g.seq(g.lit("<sep>"), run),
            g.seq(g.lit("<eos>"), text),
        )
    }
    found = _prefix.exclusions(list(_nodes(grammar)), grammar)
    (rest,) = found[id(run)]
    assert _matches(rest, b"\n call:") and not _matches(rest, b"call") and not _matches(rest, b"x")
    assert id(text) not in found  # nothing of the prefix is left after <eos>


def test_a_choice_after_whitespace_refuses_the_prefix_after_whitespace() -> None:
    run = g.chars("\x00-\xff")
    grammar = {"start": g.seq(g.ws(), g.choice(g.seq(g.lit("{"), g.cut()), run))}
    (refused,) = _prefix.exclusions(list(_nodes(grammar)), grammar)[id(run)]
    assert _matches(refused, b" \n{") and _matches(refused, b"{")


@pytest.mark.parametrize(
    "before",
    [
        # a rule that ends with whitespace, or may match nothing after whitespace
        g.seq(g.lit("<t>"), g.until("</t>"), g.lit("</t>"), g.ws()),
        g.seq(g.ws(), g.opt(g.seq(g.lit("<t>"), g.ws()))),
        # a text that ends where a stop begins (or at the end), its close optional
        g.seq(g.lit("<t>"), g.until("</t>"), g.opt(g.seq(g.lit("</t>"), g.ws()))),
    ],
)
def test_a_choice_after_what_ends_with_whitespace_refuses_the_prefix_after_it(
    before: g.Node,
) -> None:
    run = g.chars("\x00-\xff")
    grammar = {
        "start": g.seq(g.ref("before"), g.ref("body")),
        "before": before,
        "body": g.seq(g.opt(g.seq(g.lit("{"), g.cut(), g.lit("}"))), run),
    }
    (refused,) = _prefix.exclusions(list(_nodes(grammar)), grammar)[id(run)]
    assert _matches(refused, b" \n{") and _matches(refused, b"{")


def test_a_choice_after_a_text_that_may_stop_at_whitespace_does_not() -> None:
    run = g.chars("\x00-\xff")
    grammar = {
        "start": g.seq(g.until("\n"), g.opt(g.seq(g.lit("{"), g.cut(), g.lit("}"))), run),
    }
    (refused,) = _prefix.exclusions(list(_nodes(grammar)), grammar)[id(run)]
    assert not _matches(refused, b" {") and _matches(refused, b"{")


def test_a_lookahead_first_commits_to_what_it_looks_for() -> None:
    head = g.seq(g.lit("```"), g.opt(g.lit("json")), g.ws(), g.lit("["))
    fenced = g.seq(g.ahead(head), g.lit("```"), g.opt(g.lit("json")), g.cut(), g.ws())
    (found,) = _prefix.commit_prefixes(fenced, {})
    assert _matches(found, b"```json\n[") and _matches(found, b"```[")
    assert not _matches(found, b"```") and not _matches(found, b"```python")
    # what follows the lookahead reads otherwise than what it looks for: nothing
    other = g.seq(g.ahead(head), g.lit("~~~"), g.cut())
    assert _prefix.commit_prefixes(other, {}) == []


def test_a_literal_alone_refuses_the_rest_of_an_earlier_head_in_the_next_round() -> None:
    head = g.seq(g.lit("```"), g.opt(g.lit("json")), g.ws(), g.lit("["))
    parts = [g.seq(head, g.cut()), g.until("```"), g.lit("```"), g.lit("<x>")]
    found = _prefix.after_literals(parts, {})
    assert set(found) == {2}  # <x> begins no earlier head
    (rest,) = found[2]
    assert _matches(rest, b"json\n[") and _matches(rest, b" [") and not _matches(rest, b"jso")


def _nodes(rules: dict[str, g.Node]) -> list[g.Node]:
    from toolparse.export._lower import _nodes as every

    return every(rules)


# -- the exports ---------------------------------------------------------------------------

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    }
]
CALL = '{"tool_call": {"name": "get_weather", "arguments": {"city": "Paris"}}}'
# generic: what the parser commits to once `{` and a known key open the output
GENERIC = [
    (CALL, True),
    ("  \n" + CALL, True),
    ('{"response": "Paris"}', True),
    ("Paris is sunny.", True),
    ('{"foo": 1} is JSON of another shape', True),
    ('{"tool_cal', True),  # cut short before the key is whole: content
    ("{", True),
    ('{"tool_call": {"name": "get_time", "arguments": {}}}', False),  # unknown tool
    ('{"tool_call": {"name": "get_weather", "arguments": "{}"}}', False),
    (' {"tool_calls": [1]}', False),
    ('{\n  "tool_call": oops', False),
]


def _lark_takes(lark: str, data: bytes) -> bool:
    pytest.importorskip("llguidance")
    from test_export_lark import run

    return run(lark, data) is None


@pytest.mark.parametrize(("output", "taken"), GENERIC)
def test_generic_lark_refuses_a_broken_envelope_as_content(output: str, taken: bool) -> None:
    lark = export.lark(get_format("generic"), TOOLS)
    assert _lark_takes(lark, output.encode()) is taken


@pytest.mark.parametrize(("output", "taken"), GENERIC)
def test_generic_regex_refuses_a_broken_envelope_as_content(output: str, taken: bool) -> None:
    regex = export.regex(get_format("generic"), TOOLS)
    assert bool(re.fullmatch(regex, output)) is taken


GIGACHAT = [
    (
        '<|message_sep|>\n\nfunction call<|role_sep|>\n{"name": "get_weather", '
        '"arguments": {"city": "Moscow"}}',
        True,
    ),
    ("Done.<|message_sep|>anything after the message", True),
    ("Done.</s>\n\nfunction call<|role_sep|>{}", True),  # after the end: not this message
    ("<|message_sep|>\n\nfunction call<|role_sep|>\n{broken", False),
    ('<|message_sep|> function call<|role_sep|>{"name": "get_time", "arguments": {}}', False),
]


@pytest.mark.parametrize(("output", "taken"), GIGACHAT)
def test_gigachat3_exports_refuse_a_broken_call_after_the_separator(
    output: str, taken: bool
) -> None:
    fmt = get_format("gigachat3")
    assert bool(re.fullmatch(export.regex(fmt, TOOLS), output)) is taken
    assert _lark_takes(export.lark(fmt, TOOLS), output.encode()) is taken


def test_the_refused_beginnings_agree_with_the_parser() -> None:
    """Every output above is read by the parser as the exports take it: taken ones
    without an error, refused ones with one."""
    import toolparse

    for name, cases in (("generic", GENERIC), ("gigachat3", GIGACHAT)):
        for output, taken in cases:
            message = toolparse.parse(output, get_format(name), tools=json.loads(json.dumps(TOOLS)))
            assert (not message.errors) is taken, (name, output, message.errors)


@pytest.mark.parametrize("min1", [False, True])
def test_a_text_with_stops_refuses_the_prefixes_at_its_start(min1: bool) -> None:
    """The regex export's text that may not begin with a prefix, against its definition
    (a text of the stops that does not begin with the prefix) on every short string of
    the characters that matter: the stop's, the prefixes' (one shares the stop's
    beginning) and two others."""
    import itertools

    from toolparse.export import _ir as ir
    from toolparse.export._regex import stops_text, text_not_beginning

    stops = (g.Stop(b"<|m|>"),)
    prefixes = (ir.Seq((ir.Ws(), ir.Lit(b"to="))), ir.Lit(b"<|x"))
    found = text_not_beginning(stops, min1, prefixes)
    assert found is not None
    written = re.compile(found.text)
    text = re.compile(stops_text(stops, min1).text)
    prefix = re.compile(r"[ \t\r\n]*to=|<\|x")
    for n in range(6):
        for chars in itertools.product("<|m>xto= b", repeat=n):
            s = "".join(chars)
            expected = bool(text.fullmatch(s)) and not prefix.match(s)
            assert bool(written.fullmatch(s)) is expected, s
