"""JsonScanner behaviour on both engines: verdicts, offsets, error reasons, dialects, closing().

Every table-driven case is checked fed whole and fed one byte at a time: the answer must
not depend on how the input arrives.
"""

from __future__ import annotations

import ast
import json

import pytest

from helpers import (
    as_bytes,
    byte_by_byte,
    feed_chunks,
    scanner_state,
    whole,
)


def scan(impl, data: bytes, dialect: str = "strict", chunks=None, **options):
    """A scanner of the dialect fed data (whole by default); returns it and the last verdict."""
    scanner = impl.JsonScanner(dialect, **options)
    steps = feed_chunks(scanner, data, whole(len(data)) if chunks is None else chunks)
    return scanner, steps[-1].result if steps else "need_more"


def both_ways(impl, data: bytes, dialect: str = "strict", **options):
    """Scans whole and byte by byte; asserts both end in the same state and returns the first."""
    at_once, verdict = scan(impl, data, dialect, **options)
    bytewise, bytewise_verdict = scan(impl, data, dialect, byte_by_byte(len(data)), **options)
    assert (bytewise_verdict, scanner_state(bytewise)) == (verdict, scanner_state(at_once))
    return at_once, verdict


def refuse_constant(name: str):
    raise ValueError(f"{name} is not JSON")


# --- verdicts and the value boundary ---------------------------------------------------


def test_spec_example(impl):
    scanner = impl.JsonScanner("strict", max_depth=512)
    assert scanner.feed('{"a": [1, "x') == "need_more"
    assert scanner.closing() == '"]}'
    assert scanner.feed('"]} tail') == "complete"
    assert scanner.end == 15
    assert scanner.position == 15  # " tail" is not consumed
    assert scanner.finish() == "complete"


@pytest.mark.parametrize(
    ("data", "end"),
    [
        (b"{}", 2),
        (b"[]", 2),
        (b'""', 2),
        (b"true", 4),
        (b"false", 5),
        (b"null", 4),
        (b' \t\n\r[1, {"a": null}]', 20),
        (b'{"a":1} tail', 7),
        (b"[1][2]", 3),
        (b'"x"y', 3),
        (b"truex", 4),
        (b'{"a": [1, 2, {"b": [true, false, null]}], "c": "\\u00e9"}', 56),
    ],
)
def test_complete_values_stop_at_their_end(impl, data, end):
    scanner, verdict = both_ways(impl, data)
    assert verdict == "complete"
    assert scanner.end == end
    assert scanner.position == end
    assert scanner.depth == 0
    assert scanner.error is None
    assert scanner.closing() == ""
    # Bytes after the value stay unconsumed, whatever is fed next.
    assert scanner.feed(b"]]] more") == "complete"
    assert (scanner.end, scanner.position) == (end, end)
    assert scanner.finish() == "complete"
    assert scanner.end == end


def test_need_more_consumes_everything(impl):
    scanner = impl.JsonScanner("strict")
    assert scanner.feed(b'  {"a": [1, ') == "need_more"
    assert scanner.position == 12
    assert scanner.end is None
    assert scanner.error is None
    assert scanner.depth == 2
    assert scanner.feed(b"") == "need_more"
    assert scanner.position == 12


def test_str_input_is_utf8(impl):
    scanner = impl.JsonScanner("strict")
    assert scanner.feed('"é"') == "complete"
    assert scanner.end == 4


@pytest.mark.parametrize("data", [b"", b"   ", b"[", b'{"a"', b'"abc', b"[1, 2", b"tru", b"{"])
def test_finish_on_unfinished_input_is_incomplete(impl, data):
    scanner, verdict = both_ways(impl, data)
    assert verdict == "need_more"
    assert scanner.finish() == "incomplete"
    assert scanner.end is None
    assert scanner.error is None


def test_finish_is_idempotent(impl):
    scanner = impl.JsonScanner("strict")
    scanner.feed(b"12")
    assert scanner.finish() == "complete"
    assert scanner.finish() == "complete"
    assert scanner.end == 2


def test_feed_after_finish_raises(impl):
    scanner = impl.JsonScanner("strict")
    scanner.feed(b"[1")
    assert scanner.finish() == "incomplete"
    with pytest.raises(ValueError):
        scanner.feed(b"]")
    completed = impl.JsonScanner("strict")
    completed.feed(b"[]")
    completed.finish()
    with pytest.raises(ValueError):
        completed.feed(b"")


def test_reset_makes_the_scanner_new(impl):
    scanner = impl.JsonScanner("lenient")
    assert scanner.feed(b"[1,] x") == "complete"
    assert scanner.relaxations == ("trailing_comma",)
    assert scanner.finish() == "complete"
    scanner.reset()
    assert (scanner.end, scanner.error, scanner.position, scanner.depth) == (None, None, 0, 0)
    assert (scanner.relaxations, scanner.repaired) == ((), False)
    assert scanner.closing() == "0"
    assert scanner.feed(b"[2]") == "complete"
    assert scanner.end == 3  # offsets restart at 0
    assert scanner.relaxations == ()

    scanner.reset()  # also after an error
    assert scanner.feed(b"}") == "error"
    scanner.reset()
    assert scanner.error is None
    assert scanner.feed(b"{}") == "complete"


def test_error_is_sticky(impl):
    scanner = impl.JsonScanner("strict")
    assert scanner.feed(b"[1 x") == "error"
    error, position = scanner.error, scanner.position
    assert error == (3, "unexpected_byte")
    assert scanner.feed(b"]") == "error"
    assert (scanner.error, scanner.position) == (error, position)
    assert scanner.closing() is None
    assert scanner.end is None
    assert scanner.finish() == "error"
    assert scanner.error == error


def test_offsets_are_absolute_across_feeds(impl):
    scanner = impl.JsonScanner("strict")
    assert scanner.feed(b"[1, ") == "need_more"
    assert scanner.feed(b"tx") == "error"
    assert scanner.error == (5, "invalid_literal")


@pytest.mark.parametrize("dialect", ["strict", "lenient", "python"])
@pytest.mark.parametrize("max_depth", [0, -1, 2**20 + 1])
def test_max_depth_out_of_range(impl, dialect, max_depth):
    with pytest.raises(ValueError):
        impl.JsonScanner(dialect, max_depth=max_depth)


def test_unknown_dialect(impl):
    with pytest.raises(ValueError):
        impl.JsonScanner("yaml")


# --- numbers -------------------------------------------------------------------------------


def test_number_completes_on_the_next_byte(impl):
    scanner = impl.JsonScanner("strict")
    assert scanner.feed(b"12") == "need_more"
    assert scanner.end is None
    assert scanner.closing() == ""
    assert scanner.feed(b" ") == "complete"
    assert (scanner.end, scanner.position) == (2, 2)


def test_number_completes_on_finish(impl):
    scanner = impl.JsonScanner("strict")
    assert scanner.feed(b"1") == "need_more"
    assert scanner.finish() == "complete"
    assert (scanner.end, scanner.position) == (1, 1)


@pytest.mark.parametrize(
    "number", [b"0", b"-0", b"12", b"-0.5", b"1e5", b"1E+5", b"-12.25e-3", b"0.0", b"123456789"]
)
def test_top_level_numbers(impl, number):
    scanner, verdict = both_ways(impl, number)
    assert verdict == "need_more"
    assert scanner.finish() == "complete"
    assert scanner.end == len(number)
    for stop in (b" ", b"\n", b",", b"]", b"}", b"x"):
        scanner, verdict = both_ways(impl, number + stop)
        assert verdict == "complete"
        assert (scanner.end, scanner.position) == (len(number), len(number))


@pytest.mark.parametrize(("data", "end"), [(b"12x", 2), (b"0x10", 1), (b"1.5.", 3), (b"1e5e", 3)])
def test_top_level_number_ends_at_first_byte_that_cannot_continue_it(impl, data, end):
    scanner, verdict = both_ways(impl, data)
    assert verdict == "complete"
    assert scanner.end == end


def test_number_inside_container_completes_with_the_container(impl):
    scanner = impl.JsonScanner("strict")
    assert scanner.feed(b"[12") == "need_more"
    assert scanner.closing() == "]"
    assert scanner.feed(b"]") == "complete"
    assert scanner.end == 4


@pytest.mark.parametrize("data", [b"-", b"1.", b"1e", b"1E+", b"-0.5e-", b"[1."])
def test_unfinished_number_is_incomplete_at_finish(impl, data):
    scanner, verdict = both_ways(impl, data)
    assert verdict == "need_more"
    assert scanner.finish() == "incomplete"
    assert scanner.end is None
    assert scanner.error is None


# --- error reasons -------------------------------------------------------------------------

ERRORS = [
    # unexpected_byte: nothing can start or continue here
    ("strict", b"}", 0, "unexpected_byte"),
    ("strict", b"  x", 2, "unexpected_byte"),
    ("strict", b"[,1]", 1, "unexpected_byte"),
    ("strict", b"[1,,2]", 3, "unexpected_byte"),
    ("strict", b"{1:2}", 1, "unexpected_byte"),
    ("strict", b'{"a" 1}', 5, "unexpected_byte"),
    ("strict", b'{"a":1 "b":2}', 7, "unexpected_byte"),
    ("strict", b"[1 2]", 3, "unexpected_byte"),
    ("strict", b"[1x]", 2, "unexpected_byte"),
    ("strict", b"[1}", 2, "unexpected_byte"),
    ("strict", b'{"a":1]', 6, "unexpected_byte"),
    ("strict", b"[true}", 5, "unexpected_byte"),
    ("strict", b"[T]", 1, "unexpected_byte"),
    ("strict", b"'a'", 0, "unexpected_byte"),
    ("strict", b"[\x0c]", 1, "unexpected_byte"),
    ("strict", b"[\xc3\xa9]", 1, "unexpected_byte"),
    ("strict", b"\xef\xbb\xbf{}", 0, "unexpected_byte"),
    ("lenient", b"}", 0, "unexpected_byte"),
    ("lenient", b"{1a:2}", 1, "unexpected_byte"),
    ("python", b"[1)", 2, "unexpected_byte"),
    ("python", b"(1]", 2, "unexpected_byte"),
    ("python", b"{'a' 1}", 5, "unexpected_byte"),
    # trailing_comma: strict only
    ("strict", b"[1,]", 3, "trailing_comma"),
    ("strict", b'{"a":1,}', 7, "trailing_comma"),
    # invalid_literal
    ("strict", b"tx", 1, "invalid_literal"),
    ("strict", b"[tr]", 3, "invalid_literal"),
    ("strict", b"[nul1]", 4, "invalid_literal"),
    ("strict", b"fals ", 4, "invalid_literal"),
    ("lenient", b"[Nonx]", 4, "invalid_literal"),
    ("lenient", b"Tru ", 3, "invalid_literal"),
    ("python", b"Fx", 1, "invalid_literal"),
    ("python", b"[Nope]", 3, "invalid_literal"),
    # invalid_number: after -, ., e or the exponent sign
    ("strict", b"-x", 1, "invalid_number"),
    ("strict", b"- ", 1, "invalid_number"),
    ("strict", b"[-]", 2, "invalid_number"),
    ("strict", b"-.5", 1, "invalid_number"),
    ("strict", b"[1.]", 3, "invalid_number"),
    ("strict", b"1.e5", 2, "invalid_number"),
    ("strict", b"1ex", 2, "invalid_number"),
    ("strict", b"1e+x", 3, "invalid_number"),
    ("strict", b"1e+-5", 3, "invalid_number"),
    ("python", b"[1.]", 3, "invalid_number"),
    # a unary plus: Python's only (literal_eval reads +7, not ++7 nor +-7)
    ("strict", b"[+7]", 1, "unexpected_byte"),
    ("lenient", b"[+7]", 1, "unexpected_byte"),
    ("python", b"[++7]", 2, "invalid_number"),
    ("python", b"[+-7]", 2, "invalid_number"),
    ("python", b"[+x]", 2, "invalid_number"),
    # leading_zero
    ("strict", b"01", 1, "leading_zero"),
    ("strict", b"-01", 2, "leading_zero"),
    ("strict", b"[00]", 2, "leading_zero"),
    ("python", b"(007,)", 2, "leading_zero"),
    # invalid_escape
    ("strict", b'"\\q"', 2, "invalid_escape"),
    ("strict", b'"\\x41"', 2, "invalid_escape"),
    ("strict", b'"\\U0001F600"', 2, "invalid_escape"),
    ("strict", b'"\\\'"', 2, "invalid_escape"),
    ("strict", b'"\\u12x4"', 5, "invalid_escape"),
    ("strict", b'"\\u"', 3, "invalid_escape"),
    ("lenient", b'"\\q"', 2, "invalid_escape"),
    ("python", b"'\\xZ1'", 3, "invalid_escape"),
    ("python", b"'\\x4Z'", 4, "invalid_escape"),
    ("python", b"'\\x4'", 4, "invalid_escape"),
    ("python", b"'\\u12G4'", 5, "invalid_escape"),
    ("python", b"'\\U0001F60Z'", 10, "invalid_escape"),
    # lone_surrogate: strict only
    ("strict", b'"\\ud800"', 7, "lone_surrogate"),
    ("strict", b'"\\uD800x"', 7, "lone_surrogate"),
    ("strict", b'["\\ud83d"]', 8, "lone_surrogate"),
    # control_character
    ("strict", b'"a\nb"', 2, "control_character"),
    ("strict", b'"\x00"', 1, "control_character"),
    ("strict", b'"\t"', 1, "control_character"),
    ("strict", b'"\x1f"', 1, "control_character"),
    ("strict", b'{"\r":1}', 2, "control_character"),
    ("python", b"'a\nb'", 2, "control_character"),
    ("python", b"'a\rb'", 2, "control_character"),
    ("python", b'["a\nb"]', 3, "control_character"),
    # invalid_utf8: the first byte at which the sequence can no longer be well formed
    ("strict", b'"\xff"', 1, "invalid_utf8"),
    ("strict", b'"\x80"', 1, "invalid_utf8"),
    ("strict", b'"\xc0\x80"', 1, "invalid_utf8"),
    ("strict", b'"\xc1\xbf"', 1, "invalid_utf8"),
    ("strict", b'"\xf5\x80\x80\x80"', 1, "invalid_utf8"),
    ("strict", b'"\xe0\x80\x80"', 2, "invalid_utf8"),
    ("strict", b'"\xed\xa0\x80"', 2, "invalid_utf8"),
    ("strict", b'"\xf0\x80\x80\x80"', 2, "invalid_utf8"),
    ("strict", b'"\xf4\x90\x80\x80"', 2, "invalid_utf8"),
    ("strict", b'"\xc3("', 2, "invalid_utf8"),
    ("strict", b'"\xc3"', 2, "invalid_utf8"),
    ("strict", b'"\xe2\x82"', 3, "invalid_utf8"),
    ("strict", b'"\xf0\x9f\x98"', 4, "invalid_utf8"),
    ("strict", b'{"k\xff":1}', 3, "invalid_utf8"),
    ("lenient", b"'\xff'", 1, "invalid_utf8"),
    ("python", b"'\xed\xa0\x80'", 2, "invalid_utf8"),
]


@pytest.mark.parametrize(("dialect", "data", "offset", "reason"), ERRORS)
def test_error_reason_and_offset(impl, dialect, data, offset, reason):
    scanner, verdict = both_ways(impl, data, dialect)
    assert verdict == "error"
    assert scanner.error == (offset, reason)
    assert scanner.end is None
    assert scanner.closing() is None
    assert scanner.finish() == "error"


def test_every_reason_code_is_covered():
    reasons = {reason for _, _, _, reason in ERRORS} | {"limit"}
    assert reasons == {
        "limit",
        "unexpected_byte",
        "trailing_comma",
        "invalid_literal",
        "invalid_number",
        "leading_zero",
        "invalid_escape",
        "lone_surrogate",
        "control_character",
        "invalid_utf8",
    }


# The offending byte of a surrogate that does not pair up depends on where the pair
# breaks; only the reason is fixed for these.
@pytest.mark.parametrize(
    "data",
    [
        b'"\\udc00"',
        b'"\\ud800\\u0041"',
        b'"\\ud800\\ud800"',
        b'"\\ud800\\n"',
        b'"\\uDFAA\\uD834"',
    ],
)
def test_strict_unpaired_surrogates(impl, data):
    scanner, verdict = both_ways(impl, data)
    assert verdict == "error"
    assert scanner.error[1] == "lone_surrogate"


@pytest.mark.parametrize("data", [b'"\\ud83d\\ude00"', b'"\\uD834\\uDd1e"', b'"\\uDBFF\\uDFFF"'])
def test_strict_surrogate_pairs(impl, data):
    scanner, verdict = both_ways(impl, data)
    assert verdict == "complete"
    assert scanner.relaxations == ()


@pytest.mark.parametrize(
    "data",
    [
        b'"\xc2\x80"',
        b'"\xdf\xbf"',
        b'"\xe0\xa0\x80"',
        b'"\xed\x9f\xbf"',
        b'"\xee\x80\x80"',
        b'"\xef\xbf\xbf"',
        b'"\xf0\x90\x80\x80"',
        b'"\xf4\x8f\xbf\xbf"',
        b'"\x7f"',
        '"ключ ✓ 😀"'.encode(),
    ],
)
def test_valid_utf8_boundaries(impl, data):
    scanner, verdict = both_ways(impl, data)
    assert verdict == "complete"
    assert scanner.end == len(data)


# --- depth -----------------------------------------------------------------------------


def test_depth_tracks_open_containers(impl):
    scanner = impl.JsonScanner("strict")
    assert scanner.depth == 0
    scanner.feed(b'[{"a": [')
    assert scanner.depth == 3
    scanner.feed(b"1]")
    assert scanner.depth == 2
    scanner.feed(b"}]")
    assert scanner.depth == 0


@pytest.mark.parametrize(
    ("dialect", "data", "max_depth", "offset"),
    [
        ("strict", b"[[[", 2, 2),
        ("strict", b'{"a":{', 1, 5),
        ("strict", b"[", 1, None),
        ("strict", b"[[1]]", 2, None),
        ("python", b"((", 1, 1),
        ("python", b"[{'a': (", 2, 7),
        ("lenient", b"{a: [[", 2, 5),
    ],
)
def test_depth_limit(impl, dialect, data, max_depth, offset):
    scanner, verdict = both_ways(impl, data, dialect, max_depth=max_depth)
    if offset is None:
        assert verdict in ("need_more", "complete")
        assert scanner.error is None
    else:
        assert verdict == "error"
        assert scanner.error == (offset, "limit")
        assert scanner.depth == max_depth


def test_deep_nesting_with_default_limit_is_an_error_not_a_crash(impl):
    scanner = impl.JsonScanner("strict")
    assert scanner.feed(b"[" * 10**5) == "error"
    assert scanner.error == (512, "limit")
    assert scanner.depth == 512
    assert scanner.finish() == "error"


def test_deep_nesting_within_the_ceiling(impl):
    scanner = impl.JsonScanner("strict", max_depth=2**20)
    assert scanner.feed(b"[" * 10**5) == "need_more"
    assert scanner.depth == 10**5
    assert scanner.feed(b"]" * 10**5) == "complete"
    assert scanner.end == 2 * 10**5


def test_default_depth_is_512(impl):
    scanner, verdict = both_ways(impl, b"[" * 512 + b"]" * 512)
    assert verdict == "complete"
    scanner, verdict = both_ways(impl, b"[" * 513)
    assert scanner.error == (512, "limit")


# --- lenient relaxations ---------------------------------------------------------------

RELAXED = [
    (b"[1,]", "trailing_comma"),
    (b'{"a":1 , }', "trailing_comma"),
    (b"'a'", "single_quote"),
    (b"{'a':'b\"'}", "single_quote"),
    (b"'it\\'s'", "single_quote"),
    (b"{a:1}", "unquoted_key"),
    (b"{_$a9 : 1, $: 2}", "unquoted_key"),
    (b"[True,False,None]", "python_literal"),
    (b'"a\tb"', "control_character"),
    (b'"a\nb\x00"', "control_character"),
    (b'"\\ud800"', "lone_surrogate"),
    (b'"\\udc00"', "lone_surrogate"),
    (b'"\\ud800\\u0041"', "lone_surrogate"),
    (b'{"a": 1 "b": 2}', "missing_comma"),
    (b'{"a":"x""b":true\n"c":null}', "missing_comma"),
    (b'{"a": [1] "b": {}}', "missing_comma"),
    (b'["a" "b" {"c": 1} [2]]', "missing_comma"),
]


@pytest.mark.parametrize(("data", "relaxation"), RELAXED)
def test_lenient_relaxation_is_recorded(impl, data, relaxation):
    scanner, verdict = both_ways(impl, data, "lenient")
    assert verdict == "complete"
    assert scanner.end == len(data)
    assert scanner.relaxations == (relaxation,)
    assert scanner.repaired is True
    _, strict_verdict = both_ways(impl, data, "strict")
    assert strict_verdict == "error"


def test_relaxations_are_listed_in_documented_order(impl):
    data = b'{"s": "\\udc00\t" b: [None, \'x\',], }'
    scanner, verdict = both_ways(impl, data, "lenient")
    assert verdict == "complete"
    assert scanner.relaxations == (
        "trailing_comma",
        "single_quote",
        "unquoted_key",
        "python_literal",
        "control_character",
        "lone_surrogate",
        "missing_comma",
    )


def test_relaxations_accumulate_in_order_not_in_arrival_order(impl):
    scanner = impl.JsonScanner("lenient")
    scanner.feed(b"[None, ")
    assert scanner.relaxations == ("python_literal",)
    scanner.feed(b"1,]")
    assert scanner.relaxations == ("trailing_comma", "python_literal")
    assert scanner.repaired is True


def test_lenient_without_relaxations_is_not_repaired(impl):
    scanner, verdict = both_ways(impl, b'{"a": [1, true, null, "\\ud83d\\ude00"]}', "lenient")
    assert verdict == "complete"
    assert (scanner.relaxations, scanner.repaired) == ((), False)


@pytest.mark.parametrize(
    "data",
    # a comma is never taken as left out before a number or a literal ([1 2] and [1 -2]
    # are no lists a reader can be sure of), nor before anything but a key in an object
    [
        b"[NaN]",
        b"[Infinity]",
        b"[0x10]",
        b"[1,,]",
        b"{a: b}",
        b"//",
        b"[1 2]",
        b"[1 -2]",
        b'["a" true]',
        b'{"a": 1 2}',
        b'{"a": 1 {}}',
        b'{"a": 1 "b"}',
    ],
)
def test_lenient_rejects_what_no_relaxation_covers(impl, data):
    _, verdict = both_ways(impl, data, "lenient")
    assert verdict == "error"


# --- python dialect --------------------------------------------------------------------

PYTHON_VALUES = [
    b"{'a': 1, \"b\": [True, False, None], 'c': (1, 2,),}",
    b"'\\x41\\U0001F600\\u00e9\\101\\7\\a\\b\\f\\n\\r\\t\\v\\\\\\'\\\"'",
    b"'a\\\nb'",
    b"'\\q\\d'",
    b"'a\tb\x01\x7f'",
    b'"it\'s"',
    b"()",
    b"(1,)",
    b"((), [], {})",
    b"[1e5, -0.5, 0, 1E-3]",
    b"{'k': {'n': (None,)}}",
]


@pytest.mark.parametrize("data", PYTHON_VALUES)
def test_python_dialect_accepts_python_literals(impl, data):
    scanner, verdict = both_ways(impl, data, "python")
    if verdict == "need_more":  # a top-level number would need finish()
        verdict = scanner.finish()
    assert verdict == "complete"
    assert scanner.end == len(data)
    assert (scanner.relaxations, scanner.repaired) == ((), False)
    if b"\\q" not in data:  # Python warns about unknown escapes such as \q
        ast.literal_eval(data.decode("utf-8"))


def test_python_dialect_records_lone_surrogate(impl):
    scanner, verdict = both_ways(impl, b"['\\ud800', 'x']", "python")
    assert verdict == "complete"
    assert scanner.relaxations == ("lone_surrogate",)
    assert scanner.repaired is True


def test_python_dialect_also_takes_json_literals(impl):
    # models that write Python calls write JSON's literals too (LFM2 does)
    scanner, verdict = both_ways(impl, b"[true, false, null, True]", "python")
    assert verdict == "complete"
    assert scanner.relaxations == ()


@pytest.mark.parametrize(
    "data", [b"{a: 1}", b"[nul]", b"[tru]", b"{1: 2}", b"[NaN]", b"{'a'}", b"[,]", b"(,)"]
)
def test_python_dialect_rejects_non_python(impl, data):
    _, verdict = both_ways(impl, data, "python")
    assert verdict == "error"


# --- closing() -------------------------------------------------------------------------

STRICT_CLOSINGS = [
    (b"", b"0"),
    (b"  ", b"0"),
    (b"[", b"]"),
    (b"[1", b"]"),
    (b"[1 ", b"]"),
    (b"[1,", b"0]"),
    (b"{", b"}"),
    (b'{"', b'":0}'),
    (b'{"a', b'":0}'),
    (b'{"a"', b":0}"),
    (b'{"a" ', b":0}"),
    (b'{"a":', b"0}"),
    (b'{"a":1', b"}"),
    (b'{"a":1,', b'"":0}'),
    (b'{"a": [1, "x', b'"]}'),
    (b'[{"a":[{', b"}]}]"),
    (b"t", b"rue"),
    (b"nu", b"ll"),
    (b"fals", b"e"),
    (b"-", b"0"),
    (b"1.", b"0"),
    (b"1e", b"0"),
    (b"1e-", b"0"),
    (b"-0", b""),
    (b"12", b""),
    (b'"', b'"'),
    (b'"ab\\', b'\\"'),
    (b'"\\u', b'0000"'),
    (b'"\\u1', b'000"'),
    (b'"\\ud83d', b'\\udc00"'),
    (b'"\\ud83d\\', b'udc00"'),
    (b'"\\ud83d\\u', b'dc00"'),
    (b'"\\ud83d\\ud', b'c00"'),
    (b'"\\ud83d\\ude', b'00"'),
    (b'"\xc3', b'\x80"'),
    (b'"\xe2\x82', b'\x80"'),
    (b'"\xe0', b'\xa0\x80"'),
    (b'"\xed', b'\x80\x80"'),
    (b'"\xf0', b'\x90\x80\x80"'),
    (b'"\xf4', b'\x80\x80\x80"'),
    (b'["\xf0\x9f', b'\x80\x80"]'),
    (b"[]", b""),
    (b"[] x", b""),
]


@pytest.mark.parametrize(("data", "closing"), STRICT_CLOSINGS)
def test_strict_closing(impl, data, closing):
    scanner, _ = both_ways(impl, data)
    assert as_bytes(scanner.closing()) == closing


PYTHON_CLOSINGS = [
    (b"", b"0"),
    (b"(", b")"),
    (b"[1,", b"]"),
    (b"{'a'", b":0}"),
    (b"{'a':1,", b"}"),
    (b"'ab", b"'"),
    (b'"ab', b'"'),
    (b"'\\", b"\\'"),
    (b"'\\x4", b"0'"),
    (b"'\\U0001F6", b"00'"),
    (b"'\\1", b"'"),
    (b"Tr", b"ue"),
    (b"N", b"one"),
    (b"[(1, {'a': 'x", b"'})]"),
]


@pytest.mark.parametrize(("data", "closing"), PYTHON_CLOSINGS)
def test_python_closing(impl, data, closing):
    scanner, _ = both_ways(impl, data, "python")
    assert as_bytes(scanner.closing()) == closing


# Prefixes that only an error can follow: a low surrogate with no high one before it, a
# high one followed by an escape that cannot be a low one, a code point above U+10FFFF.
DOOMED_PREFIXES = [
    ("strict", b'"\\udc'),
    ("strict", b'"\\udc0'),
    ("strict", b'"\\ud83d\\u0'),
    ("strict", b'"\\ud83d\\ud8'),
    ("python", b"'\\U0011"),
    ("python", b"'\\U1"),
]


@pytest.mark.parametrize(("dialect", "data"), DOOMED_PREFIXES)
def test_closing_is_none_only_after_an_error(impl, dialect, data):
    scanner, verdict = both_ways(impl, data, dialect)
    closing = scanner.closing()
    assert (closing is None) == (verdict == "error"), (verdict, closing)


STRICT_DOCUMENTS = [
    b'{"a": [1, "x", {"b": null}], "c": -12.5e+3, "d": "\\u00e9\\ud83d\\ude00\\n", '
    b'"e": true, "f": false}',
    '{"ключ": "значение ✓ 😀", "": [[], {}]}'.encode(),
    b'[[], {}, "", 0, -0.0, 1E-2, [[[1]]], "\\"\\\\\\/\\b\\f\\n\\r\\t"]',
    b"  \n [ 1 , 2 ]",
    b"-12.5e+30",
]
LENIENT_DOCUMENTS = [
    b"{a: 'x', b: [True, None, 1,], 'c': \"\\ud800\", d: \"tab\there\",}",
    b"[{'k': 'it\\'s'}, False,]",
]
PYTHON_DOCUMENTS = [
    repr({"a": [1, 2.5, (3, "x")], "b": None, "c": True, "d": "é\n\x00😀'\"\\"}).encode(),
    b"{'s': '\\x41\\U0001F600\\101\\q', \"t\": (1, [2,],), 'u': '\\ud800'}",
    repr(["ключ", ("значение",), {"✓": False}]).encode(),
]


def closing_cases():
    for dialect, documents in (
        ("strict", STRICT_DOCUMENTS),
        ("lenient", LENIENT_DOCUMENTS),
        ("python", PYTHON_DOCUMENTS),
    ):
        for index, document in enumerate(documents):
            yield pytest.param(dialect, document, id=f"{dialect}-{index}")


@pytest.mark.parametrize(("dialect", "document"), list(closing_cases()))
def test_every_prefix_plus_closing_is_one_complete_value(impl, dialect, document):
    for cut in range(len(document) + 1):
        prefix = document[:cut]
        scanner, verdict = scan(impl, prefix, dialect)
        if verdict == "complete":  # only the whole document gets there
            assert (cut, scanner.closing()) == (len(document), "")
            continue
        assert verdict == "need_more", prefix
        completed = prefix + as_bytes(scanner.closing())
        check, check_verdict = scan(impl, completed, dialect)
        if check_verdict == "need_more":  # a number at the very end waits for finish()
            check_verdict = check.finish()
        assert check_verdict == "complete", completed
        assert check.end == len(completed), completed
        if dialect == "strict":
            json.loads(completed, parse_constant=refuse_constant)
        elif dialect == "python" and b"\\q" not in completed:
            ast.literal_eval(completed.decode("utf-8"))
