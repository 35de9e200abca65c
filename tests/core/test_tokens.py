"""Token ids in: Vocab decoding (byte-level BPE, SentencePiece, added tokens), feed_tokens
on both engines, and special-token markers (BatchParser: test_batch.py)."""

from __future__ import annotations

import random
from functools import cache

import pytest

from engines import ENGINES, FIXTURE_IDS, FIXTURES, Fixture, merge_deltas, random_sizes
from toolparse import BatchParser, ContentDelta, ParseError, StreamParser, ToolCallEnd, Vocab
from toolparse.vocab import _byte_level_table, token_bytes

tokenizers = pytest.importorskip("tokenizers", reason="needs the tokenizers package")
by_engine = pytest.mark.parametrize("engine", ENGINES)
MARKERS = ["<tool_call>", "</tool_call>", "<think>", "</think>"]


@cache
def byte_level_tokenizer() -> tokenizers.Tokenizer:
    """A small byte-level BPE trained on the fixtures, with markers as added tokens."""
    model = tokenizers.Tokenizer(tokenizers.models.BPE())
    model.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    model.decoder = tokenizers.decoders.ByteLevel()
    trainer = tokenizers.trainers.BpeTrainer(
        vocab_size=600,
        special_tokens=MARKERS,
        initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    texts = [f.raw.decode("utf-8", "replace") for f in FIXTURES]
    model.train_from_iterator(texts, trainer)
    return model


@cache
def vocab() -> Vocab:
    return Vocab.from_tokenizer(byte_level_tokenizer())


def ids_of(text: bytes) -> list[int]:
    return byte_level_tokenizer().encode(text.decode("utf-8")).ids


# --- decoding -------------------------------------------------------------------------------


def test_byte_level_table_covers_every_byte_once() -> None:
    table = _byte_level_table()
    assert sorted(table.values()) == list(range(256))
    assert token_bytes("\u0120hi\u010a", "byte_level") == b" hi\n"  # Ġ and Ċ


def test_sentencepiece_spaces_and_byte_tokens() -> None:
    pieces = {"\u2581Hello": 0, "<0x0A>": 1, "<0xE2>": 2, "<0x98>": 3, "<0x95>": 4, "ab": 5}
    sp = Vocab.from_strings(pieces, "sentencepiece", added={"<tool_call>": 6}, special=[6])
    assert sp.decode([0, 1, 2, 3, 4, 5, 6]) == " Hello\n\xe2\x98\x95ab<tool_call>".encode("latin-1")
    assert sp.special == {6}


def test_from_tokenizer_decodes_like_the_tokenizer() -> None:
    tokenizer = byte_level_tokenizer()
    text = 'Héllo ☕ <tool_call>\n{"name": "f"}</tool_call>\n\t naïve'
    ids = tokenizer.encode(text).ids
    assert vocab().decode(ids) == text.encode("utf-8")
    assert {tokenizer.token_to_id(m) for m in MARKERS} <= vocab().special


def test_bad_token_ids_are_value_errors() -> None:
    parser = StreamParser("hermes", vocab=vocab())
    for bad in (len(vocab()), -1, [0, 10**6], 2**40):
        with pytest.raises(ValueError, match="token id"):
            parser.feed_tokens(bad)
    with pytest.raises(ValueError, match="vocab"):
        StreamParser("hermes").feed_tokens(1)


# --- feed_tokens ------------------------------------------------------------------------------


def test_tokens_of_every_length_reach_the_parse_whole() -> None:
    # the core keeps a short token's bytes in its table entry and a long one's apart: each
    # length around the boundary, fed one id at a time, in a batch and all at once
    pieces = [bytes(97 + (n + k) % 26 for k in range(n)) for n in range(41)]
    rng = random.Random(9)
    ids = [rng.randrange(len(pieces)) for _ in range(300)]
    text = b"".join(pieces[i] for i in ids).decode()
    lengths = Vocab(pieces)
    single = StreamParser("hermes", engine="native", vocab=lengths)
    one_by_one = [e for i in ids for e in single.feed_tokens(i)] + single.finish()
    whole = StreamParser("hermes", engine="native", vocab=lengths)
    at_once = whole.feed_tokens(ids) + whole.finish()
    batch = BatchParser("hermes", vocab=lengths)
    batch.add("r")
    for i in ids:
        batch.feed(["r"], [i])
    for events in (one_by_one, at_once):
        assert "".join(e.text for e in events if isinstance(e, ContentDelta)) == text
    assert batch.finish("r")[-1].message.content == text


@by_engine
@pytest.mark.parametrize("fixture", FIXTURES[::7], ids=FIXTURE_IDS[::7])
def test_token_ids_give_what_the_text_gives(fixture: Fixture, engine: str) -> None:
    # special_markers=False: ids and text parse alike (the fixtures cut markers in half,
    # which ordinary tokens, with the rule on, never make a marker)
    text = fixture.raw.decode("utf-8", "replace").encode("utf-8")
    ids = ids_of(text)
    expected = StreamParser(
        fixture.format, tools=fixture.tools, engine=engine, seed=1, **fixture.options
    )
    want = merge_deltas(expected.feed(text) + expected.finish(fixture.finish))
    for sizes in ([1] * len(ids), random_sizes(3, len(ids)), [len(ids)]):
        parser = StreamParser(
            fixture.format,
            tools=fixture.tools,
            engine=engine,
            seed=1,
            vocab=vocab(),
            special_markers=False,
            **fixture.options,
        )
        events, at = [], 0
        for size in sizes:
            events += parser.feed_tokens(ids[at : at + size])
            at += size
        events += parser.finish(fixture.finish)
        assert merge_deltas(events) == want


@by_engine
def test_a_character_split_across_byte_tokens_waits_for_its_rest(engine: str) -> None:
    byte_tokens = Vocab([bytes([b]) for b in range(256)])
    parser = StreamParser("hermes", engine=engine, vocab=byte_tokens)
    shown = [
        e.text
        for b in "a☕b".encode()
        for e in parser.feed_tokens(b)
        if isinstance(e, ContentDelta)
    ]
    assert shown == ["a", "☕", "b"]


@by_engine
@pytest.mark.parametrize("dtype", ["uint32", "int32", "int64"])
def test_numpy_arrays_of_ids_work(engine: str, dtype: str) -> None:
    numpy = pytest.importorskip("numpy")
    text = b'Sure.<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>'
    parser = StreamParser("hermes", engine=engine, vocab=vocab())
    events = parser.feed_tokens(numpy.array(ids_of(text), dtype=dtype)) + parser.finish()
    (end,) = [e for e in events if isinstance(e, ToolCallEnd)]
    assert end.call.arguments == {"city": "Oslo"}


# --- special-token markers ----------------------------------------------------------------------

# Byte tokens 0-255, then the markers as special tokens 256 and 257.
BYTES_AND_MARKERS = Vocab(
    [bytes([b]) for b in range(256)] + [b"<tool_call>", b"</tool_call>"], special=[256, 257]
)
OPEN, CLOSE = 256, 257
CALL_JSON = list(b'\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n')
AS_TEXT = list(b"<tool_call>")
CLOSE_AS_TEXT = list(b"</tool_call>")


def run_ids(engine: str, ids: list[int], sizes: list[int], **options: object) -> list:
    parser = StreamParser("hermes", engine=engine, vocab=BYTES_AND_MARKERS, seed=1, **options)
    events, at = [], 0
    for size in sizes:
        events += parser.feed_tokens(ids[at : at + size])
        at += size
    return merge_deltas(events + parser.finish())


def chunkings(n: int) -> list[list[int]]:
    return [[n], [1] * n, random_sizes(5, n)]


@by_engine
def test_a_marker_as_its_special_token_opens_a_call(engine: str) -> None:
    ids = [*b"Sure. ", OPEN, *CALL_JSON, CLOSE]
    for sizes in chunkings(len(ids)):
        events = run_ids(engine, ids, sizes)
        (end,) = [e for e in events if isinstance(e, ToolCallEnd)]
        assert end.call.arguments == {"city": "Oslo"}


@by_engine
def test_the_marker_text_as_ordinary_tokens_stays_text(engine: str) -> None:
    ids = list(b"The page says ") + AS_TEXT + CALL_JSON + CLOSE_AS_TEXT + list(b" - odd.")
    text = bytes(ids).decode()
    for sizes in chunkings(len(ids)):
        events = run_ids(engine, ids, sizes)
        assert not [e for e in events if isinstance(e, (ToolCallEnd, ParseError))]
        assert "".join(e.text for e in events if isinstance(e, ContentDelta)) == text


@by_engine
def test_a_closing_marker_as_text_does_not_close_the_call(engine: str) -> None:
    ids = [OPEN, *CALL_JSON, *CLOSE_AS_TEXT]
    events = run_ids(engine, ids, [len(ids)])
    assert not [e for e in events if isinstance(e, ToolCallEnd)]
    assert [e.kind for e in events if isinstance(e, ParseError)] == ["invalid_arguments"]


@by_engine
def test_special_markers_off_reads_the_text_as_markers(engine: str) -> None:
    ids = AS_TEXT + CALL_JSON + CLOSE_AS_TEXT
    events = run_ids(engine, ids, [1] * len(ids), special_markers=False)
    (end,) = [e for e in events if isinstance(e, ToolCallEnd)]
    assert end.call.name == "get_weather"


def test_special_markers_hold_in_a_batch() -> None:
    batch = BatchParser("hermes", vocab=BYTES_AND_MARKERS, seed=1)
    as_token = [OPEN, *CALL_JSON, CLOSE]
    as_text = AS_TEXT + CALL_JSON + CLOSE_AS_TEXT
    batch.add("token")
    batch.add("text")
    for k in range(max(len(as_token), len(as_text))):
        step = [(r, ids[k]) for r, ids in (("token", as_token), ("text", as_text)) if k < len(ids)]
        batch.feed([r for r, _ in step], [i for _, i in step])
    assert [c.name for c in batch.finish("token")[-1].message.tool_calls] == ["get_weather"]
    text_message = batch.finish("text")[-1].message
    assert text_message.tool_calls == [] and text_message.content == bytes(as_text).decode()
