"""The grammar DSL and its compiler: validation, the program blob, and small grammars run on
the VM with the events they must give under every chunking."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import pytest

from engines import ENGINES, merge_deltas, run_events
from helpers import sizes_from_cuts
from toolparse import (
    FORMATS,
    ContentDelta,
    End,
    Format,
    ParseError,
    ReasoningDelta,
    StreamParser,
    ToolCallArgsDelta,
    ToolCallEnd,
    ToolCallStart,
)
from toolparse.grammar import (
    MAGIC,
    Grammar,
    GrammarError,
    Node,
    Program,
    ahead,
    choice,
    cut,
    eof,
    json,
    json_call,
    lit,
    many,
    many1,
    not_ahead,
    opt,
    recover,
    ref,
    seq,
    stop,
    tag,
    until,
    ws,
)
from toolparse.reference.vm import VM

by_engine = pytest.mark.parametrize("engine", ENGINES)


def compile_rules(rules: dict[str, Node], entry: str = "start") -> Program:
    return Grammar(rules, {"start": entry}).compile()


# --- validation -----------------------------------------------------------------------------


def test_grammar_error_is_a_value_error() -> None:
    assert issubclass(GrammarError, ValueError)


def test_unknown_rule() -> None:
    with pytest.raises(GrammarError, match="rule 'start' refers to unknown rule 'missing'"):
        compile_rules({"start": seq(lit("a"), ref("missing"))})


def test_entry_naming_an_unknown_rule() -> None:
    with pytest.raises(GrammarError, match="entry 'start' names unknown rule 'nowhere'"):
        compile_rules({"start": lit("a")}, entry="nowhere")


@pytest.mark.parametrize(
    "start",
    [
        seq(ref("start"), lit("x")),
        choice(lit("x"), seq(ref("start"), lit("y"))),
        seq(opt(lit("x")), ref("start")),
        seq(ws(), cut(), ref("start"), lit("x")),
        tag("content", seq(ref("start"), lit("x"))),
    ],
    ids=["first item", "second alternative", "after optional", "after ws and cut", "in a tag"],
)
def test_direct_left_recursion(start: Node) -> None:
    with pytest.raises(GrammarError, match="rule 'start' is left-recursive"):
        compile_rules({"start": start})


def test_indirect_left_recursion() -> None:
    rules = {
        "start": seq(ref("a"), eof()),
        "a": seq(ref("b"), lit("x")),
        "b": choice(lit("y"), seq(many(lit(" ")), ref("a"))),
    }
    with pytest.raises(GrammarError, match=r"rule '(a|b)' is left-recursive"):
        compile_rules(rules)


def test_right_recursion_compiles() -> None:
    program = compile_rules({"start": seq(lit("x"), opt(ref("start")))})
    assert program.entries == {"start": 0}


@pytest.mark.parametrize(
    "item",
    [opt(lit("x")), ws(), until("x"), many(lit("x")), ahead(lit("x")), cut(), ref("nullable")],
    ids=["opt", "ws", "until", "many", "ahead", "cut", "nullable rule"],
)
@pytest.mark.parametrize("repeat", [many, many1])
def test_repetition_of_something_that_can_match_empty(item: Node, repeat: Any) -> None:
    rules = {"start": seq(repeat(item), eof()), "nullable": opt(lit("y"))}
    with pytest.raises(GrammarError, match="rule 'start': a repetition can match empty"):
        compile_rules(rules)


def test_repetition_of_something_that_consumes_compiles() -> None:
    program = compile_rules({"start": seq(many(until("x", min1=True)), many1(lit("y")), eof())})
    assert program.stopsets == [(stop("x"),)]


@pytest.mark.parametrize(
    "rules",
    [
        {"start": ahead(seq(lit("a"), cut()))},
        {"start": seq(not_ahead(until("x", commit=True)), lit("x"))},
        {"start": ahead(json_call())},
        {"start": seq(not_ahead(ref("r")), lit("a")), "r": seq(lit("a"), cut(), lit("b"))},
    ],
    ids=["cut", "committing until", "json_call", "cut in a rule the lookahead calls"],
)
def test_cut_inside_a_lookahead(rules: dict[str, Node]) -> None:
    with pytest.raises(GrammarError, match="rule 'start': a cut inside a lookahead"):
        compile_rules(rules)


def test_unknown_role() -> None:
    with pytest.raises(GrammarError, match="unknown role 'tool'"):
        tag("tool", lit("x"))  # type: ignore[arg-type]


def test_bad_dialect() -> None:
    with pytest.raises(GrammarError, match="unknown JSON dialect 'yaml'"):
        json("yaml")


@pytest.mark.parametrize("make", [lit, stop, until], ids=["lit", "stop", "until"])
@pytest.mark.parametrize("text", ["", b""], ids=["str", "bytes"])
def test_empty_literal(make: Any, text: str | bytes) -> None:
    with pytest.raises(GrammarError, match="a literal is 1 to 256 bytes"):
        make(text)


def test_empty_follow_literal() -> None:
    with pytest.raises(GrammarError, match="a literal is 1 to 256 bytes"):
        stop("]", followed_by=("",))


def test_literal_longer_than_a_marker_may_be() -> None:
    lit("x" * 256)
    with pytest.raises(GrammarError, match="a literal is 1 to 256 bytes"):
        lit("x" * 257)


def test_until_needs_a_stop() -> None:
    with pytest.raises(GrammarError, match="until\\(\\) needs at least one stop"):
        until()


# --- the program blob -----------------------------------------------------------------------


@pytest.mark.parametrize("format_name", sorted(FORMATS))
def test_program_round_trips_through_bytes(format_name: str) -> None:
    program = FORMATS[format_name].program
    blob = program.to_bytes()
    assert blob.startswith(MAGIC)
    assert FORMATS[format_name].program_bytes == blob
    loaded = Program.from_bytes(blob)
    assert loaded.code == program.code
    assert loaded.strings == program.strings
    assert loaded.stopsets == program.stopsets
    assert loaded.entries == program.entries
    assert loaded.to_bytes() == blob


@pytest.mark.parametrize("format_name", sorted(FORMATS))
def test_loaded_program_runs_like_the_compiled_one(format_name: str) -> None:
    program = FORMATS[format_name].program
    loaded = Program.from_bytes(program.to_bytes())
    for entry in program.entries:
        for example in FORMATS[format_name].examples:
            data = example.encode()
            runs = []
            for each in (program, loaded):
                vm = VM(each, entry)
                runs.append(vm.feed(data[:20]) + vm.feed(data[20:]) + vm.finish())
            assert runs[0] == runs[1]
            assert runs[0], "the example produces semantic ops"


def test_blob_without_the_magic_is_refused() -> None:
    blob = FORMATS["hermes"].program.to_bytes()
    with pytest.raises(ValueError, match="not a toolparse program"):
        Program.from_bytes(b"XXXX" + blob[4:])


def test_hand_written_program_with_follow_stops_round_trips() -> None:
    program = compile_rules(
        {"start": tag("content", until(stop("]]", followed_by=("<q", "!")), "$", need_stop=True))}
    )
    loaded = Program.from_bytes(program.to_bytes())
    assert loaded.stopsets == program.stopsets == [(stop("]]", followed_by=("<q", "!")), stop("$"))]


# --- small grammars on the VM ---------------------------------------------------------------

ALL_COMPOSITIONS_UP_TO = 12


def chunkings_of(length: int) -> list[list[int]]:
    """Every chunking of `length` bytes when it is short; else whole, byte by byte and every
    chunking into two or three pieces."""
    if length <= 1:
        return [[length]]
    inner = range(1, length)
    if length <= ALL_COMPOSITIONS_UP_TO:
        cut_sets = itertools.chain.from_iterable(
            itertools.combinations(inner, k) for k in range(length)
        )
    else:
        cut_sets = itertools.chain(
            [(), tuple(inner)], itertools.combinations(inner, 1), itertools.combinations(inner, 2)
        )
    return [sizes_from_cuts(cuts, length) for cuts in cut_sets]


def test_chunkings_of_short_input_are_all_compositions() -> None:
    assert len(chunkings_of(5)) == 2**4
    assert sorted(map(tuple, chunkings_of(3))) == [(1, 1, 1), (1, 2), (2, 1), (3,)]


def grammar_format(rules: dict[str, Node]) -> Format:
    return Format(name="test", grammar=Grammar(rules, {"start": "start"}), description="test")


def describe(event: Any) -> tuple:
    """An event as plain values; errors without their message text, End as its message."""
    match event:
        case ReasoningDelta(text):
            return ("reasoning", text)
        case ContentDelta(text):
            return ("content", text)
        case ToolCallStart(index, _, name):
            return ("start", index, name)
        case ToolCallArgsDelta(index, text):
            return ("args", index, text)
        case ToolCallEnd(index, call):
            return ("end", index, call.name, call.arguments)
        case ParseError(kind, _, index, offset):
            return ("error", kind, index, offset)
        case End(finish_reason, _):
            return ("done", finish_reason)
    raise AssertionError(f"not an event: {event!r}")


def check_every_chunking(engine: str, format: Format, text: str, expected: Sequence[tuple]) -> None:
    data = text.encode()
    for sizes in chunkings_of(len(data)):
        events = run_events(StreamParser(format, engine=engine, seed=1), data, sizes)
        assert [describe(e) for e in merge_deltas(events)] == [*expected, ("done", "stop")], (
            f"{text!r} fed in pieces of {sizes}"
        )


def rest(role: str = "content") -> Node:
    """Everything up to the end of input, with a role."""
    return tag(role, until("\x00"))  # type: ignore[arg-type]


AB_THEN_A = grammar_format(
    {"start": seq(choice(seq(lit("ab"), rest("reasoning")), seq(lit("a"), rest("content"))), eof())}
)
A_THEN_AB = grammar_format(
    {"start": seq(choice(seq(lit("a"), rest("content")), seq(lit("ab"), rest("reasoning"))), eof())}
)


@by_engine
@pytest.mark.parametrize(
    ("format", "text", "expected"),
    [
        (AB_THEN_A, "abc", [("reasoning", "c")]),
        (AB_THEN_A, "axc", [("content", "xc")]),
        (AB_THEN_A, "ab", []),
        (AB_THEN_A, "a", []),
        (A_THEN_AB, "abc", [("content", "bc")]),
        (AB_THEN_A, "b", [("error", "unexpected", None, 0)]),
    ],
)
def test_ordered_choice_takes_the_first_alternative_that_matches(
    engine: str, format: Format, text: str, expected: list[tuple]
) -> None:
    check_every_chunking(engine, format, text, expected)


@by_engine
def test_nothing_is_emitted_while_an_alternative_is_open(engine: str) -> None:
    parser = StreamParser(AB_THEN_A, engine=engine)
    assert parser.feed("a") == []  # "ab..." or "a..."
    assert parser.feed("x") == [ContentDelta("x")]  # the last alternative: nothing can undo it
    parser = StreamParser(AB_THEN_A, engine=engine)
    # "ab" matched, but its alternative stays open until the rest of it has matched
    assert parser.feed("a") == []
    assert parser.feed("b") == []
    assert parser.feed("c") == []
    assert parser.finish()[0] == ReasoningDelta("c")


BANG_IS_REASONING = grammar_format(
    {
        "start": seq(
            choice(
                seq(ahead(lit("!")), tag("reasoning", until("\n"))),
                tag("content", until("\n")),
            ),
            opt(lit("\n")),
            rest(),
        )
    }
)
NO_HASH = grammar_format({"start": seq(not_ahead(lit("#")), rest())})
NO_HASH_OR_REASONING = grammar_format(
    {"start": recover(seq(not_ahead(lit("#")), rest()), rest("reasoning"))}
)


@by_engine
@pytest.mark.parametrize(
    ("format", "text", "expected"),
    [
        (BANG_IS_REASONING, "!hi\nyo", [("reasoning", "!hi"), ("content", "yo")]),
        (BANG_IS_REASONING, "hi\nyo", [("content", "hiyo")]),
        (BANG_IS_REASONING, "!", [("reasoning", "!")]),
        (NO_HASH, "x#", [("content", "x#")]),
        (NO_HASH, "", []),
        (NO_HASH_OR_REASONING, "x#", [("content", "x#")]),
    ],
)
def test_lookahead_decides_without_consuming(
    engine: str, format: Format, text: str, expected: list[tuple]
) -> None:
    check_every_chunking(engine, format, text, expected)


@by_engine
def test_failed_negative_lookahead_fails_where_it_began(engine: str) -> None:
    check_every_chunking(engine, NO_HASH, "#x", [("error", "unexpected", None, 0)])


@by_engine
def test_failed_negative_lookahead_consumes_nothing(engine: str) -> None:
    """The recovery handler after a failed not_ahead starts where the lookahead began."""
    events = run_events(StreamParser(NO_HASH_OR_REASONING, engine=engine), "#x")
    assert [describe(e) for e in merge_deltas(events)][1:] == [
        ("reasoning", "#x"),
        ("done", "stop"),
    ]


# A value that ends at "]]" only where "<q" or "!" follows (after optional whitespace).
VALUE_THEN_NEXT = grammar_format(
    {
        "start": seq(
            tag("content", until(stop("]]", followed_by=("<q", "!")), need_stop=True)),
            lit("]]"),
            ws(),
            choice(lit("<q"), lit("!")),
            rest("reasoning"),
        )
    }
)


@by_engine
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a]]b]]<qr", [("content", "a]]b"), ("reasoning", "r")]),
        ("a]] \n!r", [("content", "a"), ("reasoning", "r")]),
        ("a]]<x]]!", [("content", "a]]<x")]),
        ("a]]<", [("content", "a"), ("error", "incomplete", None, 4)]),
        ("a]]", [("content", "a"), ("error", "incomplete", None, 3)]),
        ("]]!z", [("reasoning", "z")]),
    ],
)
def test_until_stops_only_where_the_follower_comes(
    engine: str, text: str, expected: list[tuple]
) -> None:
    check_every_chunking(engine, VALUE_THEN_NEXT, text, expected)


@by_engine
def test_text_before_an_undecided_stop_is_released(engine: str) -> None:
    parser = StreamParser(VALUE_THEN_NEXT, engine=engine)
    assert parser.feed("ab]] ") == [ContentDelta("ab")]
    assert parser.feed("<") == []
    assert parser.feed("x") == [ContentDelta("]] <x")]


TAGGED = seq(lit("<a>"), tag("content", until("</a>", need_stop=True)), lit("</a>"))
WITH_CUT = grammar_format(
    {
        "start": choice(
            seq(lit("<a>"), cut(), tag("content", until("</a>", need_stop=True)), lit("</a>")),
            rest("reasoning"),
        )
    }
)
WITHOUT_CUT = grammar_format({"start": choice(TAGGED, rest("reasoning"))})


@by_engine
@pytest.mark.parametrize(
    ("format", "text", "expected"),
    [
        (WITH_CUT, "<a>hi</a>", [("content", "hi")]),
        (WITHOUT_CUT, "<a>hi</a>", [("content", "hi")]),
        (WITH_CUT, "<a>hi", [("content", "hi"), ("error", "incomplete", None, 5)]),
        (WITHOUT_CUT, "<a>hi", [("reasoning", "<a>hi")]),
        (WITH_CUT, "<b>hi", [("reasoning", "<b>hi")]),
    ],
)
def test_cut_commits_to_the_alternative(
    engine: str, format: Format, text: str, expected: list[tuple]
) -> None:
    check_every_chunking(engine, format, text, expected)


@by_engine
def test_cut_lets_text_out_before_the_alternative_ends(engine: str) -> None:
    with_cut = StreamParser(WITH_CUT, engine=engine)
    without_cut = StreamParser(WITHOUT_CUT, engine=engine)
    assert with_cut.feed("<a>hel") == [ContentDelta("hel")]
    assert without_cut.feed("<a>hel") == []
    assert without_cut.feed("lo</a>") == [ContentDelta("hello")]


# Entries "[text]"; a bad entry is reported and skipped up to its "]".
ENTRIES = grammar_format(
    {
        "start": seq(many(ref("entry")), eof()),
        "entry": seq(
            lit("["),
            cut(),
            recover(
                seq(tag("content", until("]", "[", min1=True, need_stop=True)), lit("]")),
                seq(until("]"), opt(lit("]"))),
            ),
        ),
    }
)


@by_engine
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[a][b]", [("content", "ab")]),
        ("[a][][c]", [("content", "a"), ("error", "unexpected", None, 4), ("content", "c")]),
        ("[a][b[c]", [("content", "ab"), ("error", "unexpected", None, 5)]),
        ("[a", [("content", "a"), ("error", "incomplete", None, 2)]),
        ("x", [("error", "unexpected", None, 0)]),
    ],
)
def test_recover_reports_and_resumes(engine: str, text: str, expected: list[tuple]) -> None:
    check_every_chunking(engine, ENTRIES, text, expected)


# "@name(arguments)" calls: the tool roles of a hand-written format.
AT_CALLS = grammar_format(
    {
        "start": seq(many(choice(ref("call"), ref("text"))), eof()),
        "call": seq(
            lit("@"),
            cut(),
            tag(
                "tool_call",
                seq(
                    tag("tool_name", until("(", need_stop=True)),
                    lit("("),
                    tag("tool_args", json(kind="object")),
                    lit(")"),
                ),
            ),
        ),
        "text": tag("content", until("@", min1=True, commit=True)),
    }
)


@by_engine
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            'hi @f({"a":1})',
            [
                ("content", "hi "),
                ("start", 0, "f"),
                ("args", 0, '{"a":1}'),
                ("end", 0, "f", {"a": 1}),
            ],
        ),
        (
            "@f({}) ok",
            [("start", 0, "f"), ("args", 0, "{}"), ("end", 0, "f", {}), ("content", " ok")],
        ),
        (
            "@g({})@h([])",
            [
                ("start", 0, "g"),
                ("args", 0, "{}"),
                ("end", 0, "g", {}),
                ("start", 1, "h"),
                ("error", "invalid_arguments", 1, 9),
            ],
        ),
        ("@fn({", [("start", 0, "fn"), ("args", 0, "{"), ("error", "incomplete", 0, 5)]),
        ("@({})", [("error", "invalid_arguments", None, 1)]),
    ],
)
def test_hand_written_call_format(engine: str, text: str, expected: list[tuple]) -> None:
    check_every_chunking(engine, AT_CALLS, text, expected)


def test_json_call_accepts_keys_in_any_order_and_skips_extra_keys() -> None:
    body = grammar_format({"start": tag("tool_call", json_call(id_keys=("id",)))})
    text = '{"x": [1], "arguments": {"k": "v"}, "id": "c1", "name": "t"}'
    events = run_events(StreamParser(body, engine="reference"), text)
    assert [describe(e) for e in merge_deltas(events)][:3] == [
        ("start", 0, "t"),
        ("args", 0, '{"k": "v"}'),
        ("end", 0, "t", {"k": "v"}),
    ]
    assert events[0].id == "c1"
