"""Native against reference, and every chunking against one whole feed, on generated input.

For JSON the inputs are serialized random values, mutations of them, token soup and raw
bytes; every dialect sees every input. After every feed the two engines must be in the
same state, and the final state must not depend on the chunking. The strict verdict is
also checked against CPython's json module.
"""

from __future__ import annotations

import json
import re

from hypothesis import given
from hypothesis import strategies as st

import toolparse
import toolparse.primitives
import toolparse.reference
from helpers import (
    DIALECTS,
    MODEST,
    as_bytes,
    byte_by_byte,
    feed_chunks,
    final_state,
    partitions,
    scan_document,
    scanner_state,
    whole,
)
from toolparse.primitives import JsonScanner

ENGINES = (toolparse.primitives, toolparse.reference)

# --- inputs --------------------------------------------------------------------------------

# Lone and paired surrogates, so escapes and raw encodings of them both occur.
AWKWARD_TEXT = st.text(alphabet=st.sampled_from(["a", "é", "\ud800", "\udc00", "\ud83d", "\ude00"]))
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
    | AWKWARD_TEXT
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.lists(inner, max_size=3).map(tuple)
        | st.dictionaries(st.text(max_size=4), inner, max_size=4)
    ),
    max_leaves=16,
)


def to_bytes(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")  # raw surrogates become invalid UTF-8


SERIALIZERS = {
    "json": json.dumps,
    "json_unicode": lambda value: json.dumps(value, ensure_ascii=False),
    "json_indent": lambda value: json.dumps(value, indent=2, ensure_ascii=False),
    "json_compact": lambda value: json.dumps(value, separators=(",", ":")),
    "python": repr,
}

IDENTIFIER = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")


def relaxed_text(draw, value) -> str:
    """JSON with a random choice, node by node, of the lenient spellings of each part."""
    if value is None or isinstance(value, bool):
        plain = json.dumps(value)
        return draw(st.sampled_from([plain, repr(value)]))
    if isinstance(value, (int, float)):
        return json.dumps(value)
    if isinstance(value, str):
        body = json.dumps(value, ensure_ascii=draw(st.booleans()))[1:-1]
        if draw(st.booleans()):
            return '"' + body + '"'
        return "'" + body.replace('\\"', '"').replace("'", "\\'") + "'"
    if isinstance(value, dict):
        items = []
        for key, item in value.items():
            bare = IDENTIFIER.fullmatch(key) and draw(st.booleans())
            items.append(f"{key if bare else relaxed_text(draw, key)}: {relaxed_text(draw, item)}")
        opening, closing = "{", "}"
    else:
        items = [relaxed_text(draw, item) for item in value]
        opening, closing = "[", "]"
    trailing = "," if items and draw(st.booleans()) else ""
    return opening + ", ".join(items) + trailing + closing


@st.composite
def serialized(draw):
    """A random value written by json.dumps (several styles), repr, or the relaxed writer."""
    value = draw(VALUES)
    style = draw(st.sampled_from([*SERIALIZERS, "relaxed"]))
    text = relaxed_text(draw, value) if style == "relaxed" else SERIALIZERS[style](value)
    return to_bytes(text)


SERIALIZED = serialized()

# Bytes that matter to some dialect: structure, quotes, escapes, literal starts, number
# parts, whitespace, UTF-8 lead and continuation bytes, NUL.
INTERESTING_BYTES = b"[]{}(),:\"'\\/uxUtTnNfF0159-+.eE \t\n\r\x00\x0c\x80\xbf\xc3\xe2\xed\xf0\xff"

TOKENS = [
    *(bytes([b]) for b in INTERESTING_BYTES),
    b"true",
    b"false",
    b"null",
    b"True",
    b"False",
    b"None",
    b"\\ud800",
    b"\\udc00",
    b"\\u00e9",
    b"\\x41",
    b"\\U0001F600",
    b"\\101",
    b"key",
    b'"key":',
    "é".encode(),
    "😀".encode(),
    b"\xed\xa0\x80",
]
TOKEN_SOUP = st.lists(st.sampled_from(TOKENS), max_size=24).map(b"".join)


@st.composite
def mutated(draw, documents=SERIALIZED):
    """A serialized value with a few byte deletions, insertions, replacements or a cut."""
    data = bytearray(draw(documents))
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["delete", "insert", "replace", "truncate"]))
        at = draw(st.integers(0, len(data)))
        if kind == "insert":
            data[at:at] = bytes([draw(st.sampled_from(INTERESTING_BYTES))])
        elif kind == "truncate":
            del data[at:]
        elif at < len(data):
            if kind == "delete":
                del data[at]
            else:
                data[at] = draw(st.sampled_from(INTERESTING_BYTES))
    return bytes(data)


DOCUMENTS = SERIALIZED | mutated() | TOKEN_SOUP | st.binary(max_size=48)

# --- engine runs ---------------------------------------------------------------------------


def run(module, dialect: str, data: bytes, chunks):
    """Per-feed (verdict, state) of one engine, then the verdict and state after finish()."""
    scanner = module.JsonScanner(dialect)
    steps = feed_chunks(scanner, data, chunks, observe=scanner_state)
    trace = [(step.fed, step.result, step.seen) for step in steps]
    verdict = scanner.finish()
    return trace, (verdict, final_state(scanner))


def scan_whole(dialect: str, data: bytes):
    scanner = JsonScanner(dialect)
    verdict = scanner.feed(data)
    return verdict, scanner


def check_engines_and_chunkings(dialect: str, data: bytes, chunks) -> None:
    finals = []
    for chunking in (whole(len(data)), byte_by_byte(len(data)), chunks):
        native_trace, native_final = run(toolparse.primitives, dialect, data, chunking)
        reference_trace, reference_final = run(toolparse.reference, dialect, data, chunking)
        assert native_trace == reference_trace, (dialect, chunking)
        assert native_final == reference_final, (dialect, chunking)
        # Each chunk boundary looks exactly like the same prefix fed in one piece.
        for fed, verdict, state in native_trace:
            _, error, *_, closing = state
            assert (closing is None) == (error is not None), (data[:fed], state)
            whole_verdict, scanner = scan_whole(dialect, data[:fed])
            assert (verdict, state) == (whole_verdict, scanner_state(scanner)), data[:fed]
        finals.append(native_final)
    assert finals[0] == finals[1] == finals[2], dialect


def check_closing_completes(dialect: str, data: bytes) -> None:
    """At every prefix still waiting for input, prefix + closing() is exactly one value."""
    for cut in range(len(data) + 1):
        verdict, scanner = scan_whole(dialect, data[:cut])
        if verdict != "need_more":
            continue
        closing = as_bytes(scanner.closing())
        # closing() is None only after an error; a prefix no suffix can complete is an error.
        assert closing is not None, ("need_more but nothing completes it", data[:cut])
        completed = data[:cut] + closing
        check_verdict, check = scan_whole(dialect, completed)
        if check_verdict == "need_more":
            check_verdict = check.finish()
        assert (check_verdict, check.end) == ("complete", len(completed)), (data[:cut], completed)
        if dialect == "strict":
            assert stdlib_accepts(completed), completed


def refuse_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def strings_in(value):
    """Every str inside a decoded value, keys included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from strings_in(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from strings_in(item)


def has_surrogate(value) -> bool:
    return any("\ud800" <= char <= "\udfff" for text in strings_in(value) for char in text)


def has_unpaired_surrogate(value) -> bool:
    """A surrogate that is not a high one directly followed by a low one in the same str."""
    for text in strings_in(value):
        index = 0
        while index < len(text):
            if "\ud800" <= text[index] <= "\udbff" and text[index + 1 : index + 2] >= "\udc00":
                if text[index + 1] <= "\udfff":
                    index += 2
                    continue
            if "\ud800" <= text[index] <= "\udfff":
                return True
            index += 1
    return False


def stdlib_accepts(data: bytes) -> bool:
    """CPython's json with the two strict-dialect decisions applied on top: the text must
    be UTF-8, and a string may not hold a surrogate (json.loads keeps unpaired escapes)."""
    try:
        value = json.loads(data.decode("utf-8"), parse_constant=refuse_constant)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return False
    return not has_surrogate(value)


def check_dialects_agree(data: bytes) -> None:
    """Lenient is strict plus recorded relaxations: with none recorded they must agree."""
    strict = scan_document(toolparse.primitives, data)
    lenient = scan_document(toolparse.primitives, data, dialect="lenient")
    if strict.accepted or (lenient.accepted and not lenient.relaxations):
        assert (lenient.accepted, lenient.end, lenient.relaxations) == (True, strict.end, ())
        assert strict.accepted


# --- properties ----------------------------------------------------------------------------


@MODEST
@given(data=DOCUMENTS, chunking=st.data())
def test_json_engines_agree_at_every_step_and_chunking(data, chunking):
    chunks = chunking.draw(partitions(len(data)), label="chunks")
    for dialect in DIALECTS:
        check_engines_and_chunkings(dialect, data, chunks)
        check_closing_completes(dialect, data)
    check_dialects_agree(data)
    assert scan_document(toolparse.primitives, data).accepted == stdlib_accepts(data), data


@MODEST
@given(value=VALUES, serializer=st.sampled_from(["json", "json_unicode", "json_indent"]))
def test_serialized_json_is_accepted_unless_it_holds_a_surrogate(value, serializer):
    data = to_bytes(SERIALIZERS[serializer](value))
    # Escaped surrogates pair up in JSON; raw ones are never valid UTF-8.
    if serializer == "json":
        expected = not has_unpaired_surrogate(value)
    else:
        expected = not has_surrogate(value)
    assert stdlib_accepts(data) == expected
    for module in ENGINES:
        result = scan_document(module, data)
        assert result.accepted == expected, data
        if expected:
            assert result.end == len(data)
            assert result.relaxations == ()


@MODEST
@given(value=VALUES)
def test_python_repr_is_accepted(value):
    data = to_bytes(repr(value))
    for module in ENGINES:
        result = scan_document(module, data, dialect="python")
        assert result.accepted, data
        assert result.end == len(data)
        if not has_surrogate(value):
            assert result.relaxations == ()
        elif has_unpaired_surrogate(value):
            assert result.relaxations == ("lone_surrogate",)
        else:  # Python keeps \ud83d\ude00 as two code points; pairing them is a choice
            assert result.relaxations in ((), ("lone_surrogate",))


@MODEST
@given(
    markers=st.lists(
        st.lists(st.sampled_from(b"ab<>\xe2"), min_size=1, max_size=4).map(bytes),
        min_size=1,
        max_size=6,
        unique=True,
    ),
    text=st.lists(st.sampled_from(b"ab<>\xe2"), max_size=48).map(bytes),
    chunking=st.data(),
)
def test_trie_engines_agree_at_every_step(markers, text, chunking):
    chunks = chunking.draw(partitions(len(text)), label="chunks")
    traces = []
    for module in ENGINES:
        matcher = module.MarkerTrie(markers).matcher()
        steps = feed_chunks(matcher, text, chunks, observe=lambda m: (m.position, m.holdback))
        trace = [(step.fed, step.result, step.seen) for step in steps]
        traces.append((trace, matcher.finish(), matcher.holdback))
    assert traces[0] == traces[1]
