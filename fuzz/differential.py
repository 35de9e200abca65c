"""One fuzz input through the Python API, checked: both engines, token ids, a batch.

An input is a 4-byte header and the model output; fuzz_stream.c (the C target) reads the
same header, so an input found by either target replays through `check`:

    byte 0  the format: index into toolparse.formats(), modulo their number
    byte 1  bit 0: the format's other entry (reasoning_in_prompt flipped from its default)
            bit 1: the format's fixture tools (tests/fixtures/<format>/tools.json)
            bit 2: repair=True, where the format has a repair mode
            bit 3: feed str pieces (cut at character boundaries) when the output is UTF-8
            bit 4: the output is token ids (0xFF escapes: see `token_ids`)
            bit 5: with token ids, special_markers (markers count only as special tokens)
            bit 6: finish("length") instead of finish("stop")
            bit 7: also feed the token ids through a BatchParser, one stream per share
    byte 2  the chunking: bits 0-1 the mode (0 whole, 1 one unit a time, 2 fixed pieces of
            bits 2-7 + 1 units, 3 random pieces from 0 to 16 seeded by bits 2-7)
    byte 3  bit 0: feed a prefix first (finished when bit 6 is set), reset(), then the run
            bits 1-2: the batch's streams - 2; bit 3: try a bad batch step first (the
            documented ValueError, nothing fed); bits 4-5: steps between the streams' starts;
            bit 6: tight limits (depth 3, 24 argument bytes, 32 pending bytes, 2 calls);
            bit 7: all output limited to half the input (+ 1)

`check(data)` raises AssertionError when the engines, the chunkings or the event stream
disagree with each other or with the message, and lets any other exception through: the
only one an input may cause is the ValueError of the bad batch step, which it expects.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

import toolparse
from toolparse import (
    BatchParser,
    ContentDelta,
    End,
    Format,
    Limits,
    ParseError,
    ReasoningDelta,
    StreamParser,
    ToolCallArgsDelta,
    ToolCallEnd,
    ToolCallStart,
    Vocab,
)

HEADER = 4
MAX_INPUT = 65536  # longer inputs are skipped: the check must stay fast
# The reference engine scans the rest of a feed past each stop it finds, so one big
# piece costs it time quadratic in its length; it gets the pieces cut to this size.
REFERENCE_PIECE = 4096
RESET_PREFIX = 7
SEED = 7  # the same call ids in every run
FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures"


@dataclass(frozen=True)
class Case:
    """What an input's header asks for, and its output (bytes, or token ids)."""

    format: Format
    tools: list[dict[str, Any]] | None
    reasoning_in_prompt: bool
    repair: bool
    as_str: bool
    tokens: bool
    special: bool
    finish: str
    batch: bool
    chunk_mode: int
    chunk_param: int
    reset_prefix: bool
    n_streams: int
    bad_step: bool
    stagger: int
    limits: Limits
    body: bytes

    def options(self) -> dict[str, Any]:
        return {
            "tools": self.tools,
            "reasoning_in_prompt": self.reasoning_in_prompt,
            "repair": self.repair,
            "seed": SEED,
            "limits": self.limits,
        }


TIGHT_LIMITS = Limits(max_depth=3, max_argument_bytes=24, max_pending_bytes=32, max_tool_calls=2)


def read_limits(b3: int, body_len: int) -> Limits:
    """Bits 6-7 of header byte 3: tight limits, and all output limited to half the input."""
    limits = TIGHT_LIMITS if b3 & 0x40 else Limits()
    if b3 & 0x80:
        limits = replace(limits, max_stream_bytes=body_len // 2 + 1)
    return limits


@cache
def _formats() -> tuple[Format, ...]:
    return tuple(toolparse.formats())


@cache
def _tools(name: str) -> list[dict[str, Any]] | None:
    path = FIXTURES / name / "tools.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


@cache
def vocab(format_name: str) -> Vocab:
    """Token ids 0-255 the single bytes, then the format's markers as special tokens."""
    markers = [m.encode("utf-8") for m in toolparse.get_format(format_name).markers]
    tokens = [bytes([b]) for b in range(256)] + markers
    return Vocab(tokens, special=range(256, 256 + len(markers)))


def read_case(data: bytes) -> Case | None:
    """The input's case, or None when it is too short or too long to run."""
    if len(data) < HEADER or len(data) > HEADER + MAX_INPUT:
        return None
    b0, b1, b2, b3 = data[:HEADER]
    formats = _formats()
    fmt = formats[b0 % len(formats)]
    has_reasoning_entry = "start_in_reasoning" in fmt.program.entries
    default_in_prompt = fmt.entry(None) == "start_in_reasoning"
    in_prompt = default_in_prompt != bool(b1 & 1) if has_reasoning_entry else False
    batch = bool(b1 & 0x80)
    tokens = bool(b1 & 0x10) or batch
    return Case(
        format=fmt,
        tools=_tools(fmt.name) if b1 & 2 else None,
        reasoning_in_prompt=in_prompt,
        repair=bool(b1 & 4) and fmt.repair_grammar is not None,
        as_str=bool(b1 & 8),
        tokens=tokens,
        special=tokens and bool(b1 & 0x20),
        finish="length" if b1 & 0x40 else "stop",
        batch=batch,
        chunk_mode=b2 & 3,
        chunk_param=b2 >> 2,
        reset_prefix=bool(b3 & 1),
        n_streams=2 + ((b3 >> 1) & 3),
        bad_step=bool(b3 & 8),
        stagger=(b3 >> 4) & 3,
        limits=read_limits(b3, len(data) - HEADER),
        body=data[HEADER:],
    )


def token_ids(body: bytes, n_markers: int) -> list[int]:
    """Each byte is its own token, except that 0xFF escapes the next byte k: k == 0xFF is
    the byte 0xFF, any other k the marker k mod n_markers (id 256 + ...)."""
    ids: list[int] = []
    k = 0
    while k < len(body):
        b = body[k]
        k += 1
        if b == 0xFF and k < len(body) and n_markers:
            nxt = body[k]
            k += 1
            ids.append(0xFF if nxt == 0xFF else 256 + nxt % n_markers)
        else:
            ids.append(b)
    return ids


def pieces(n: int, mode: int, param: int) -> list[int]:
    """The piece sizes of a chunking of n units (the C target's chunker, step by step)."""
    if n == 0:
        return [0]
    sizes: list[int] = []
    state = 0x9E3779B9 ^ param
    left = n
    while left:
        if mode == 0:
            size = left
        elif mode == 1:
            size = 1
        elif mode == 2:
            size = param + 1
        else:
            state ^= (state << 13) & 0xFFFFFFFF
            state ^= state >> 17
            state ^= (state << 5) & 0xFFFFFFFF
            size = state % 17
        size = min(size, left)
        sizes.append(size)
        left -= size
    return sizes


def cut(sizes: Sequence[int], limit: int) -> list[int]:
    """The same pieces, each cut into pieces of at most limit units."""
    out: list[int] = []
    for size in sizes:
        while size > limit:
            out.append(limit)
            size -= limit
        out.append(size)
    return out


def str_pieces(data: bytes, sizes: Sequence[int]) -> list[str] | None:
    """The pieces as str, each boundary moved back to a character boundary; None when
    data is not UTF-8 (a str cannot carry it)."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    out: list[str] = []
    start = end = 0
    for size in sizes:
        end += size
        at = end
        while at > start and at < len(data) and (data[at] & 0xC0) == 0x80:
            at -= 1
        out.append(data[start:at].decode("utf-8"))
        start = at
    out[-1] += data[start:].decode("utf-8")
    return out


# -- runs -------------------------------------------------------------------------------------

Piece = bytes | str | list[int]


def split(units: Sequence[Any], sizes: Sequence[int]) -> list[Any]:
    out, at = [], 0
    for size in sizes:
        out.append(units[at : at + size])
        at += size
    return out


def run_parser(
    case: Case, engine: str, feeds: Sequence[Piece], prefix: Piece, special: bool = False
) -> list[Any]:
    """One parse of the pieces (bytes or str fed, lists of ids fed as token ids), after
    the prefix and a reset() when the case asks for them; its events, checked."""
    tokens = any(isinstance(piece, list) for piece in [*feeds, prefix])
    parser = StreamParser(
        case.format,
        engine=engine,  # type: ignore[arg-type]
        vocab=vocab(case.format.name) if tokens else None,
        special_markers=special,
        **case.options(),
    )

    def feed(piece: Piece) -> list[Any]:
        return parser.feed_tokens(piece) if isinstance(piece, list) else parser.feed(piece)

    if case.reset_prefix:  # a response ended early, then the parser is reused
        feed(prefix)
        if case.finish == "length":
            parser.finish("length")
        parser.reset()
    events = [event for piece in feeds for event in feed(piece)]
    events += parser.finish(case.finish)
    check_events(events, parser.message)
    return events


def run_batch(case: Case, ids: list[int]) -> None:
    """The ids split among BatchParser streams fed one token a step, each stream then
    compared with its ids fed whole to a StreamParser of its own."""
    batch = BatchParser(
        case.format, vocab=vocab(case.format.name), special_markers=case.special, **case.options()
    )
    n = case.n_streams
    share = len(ids) // n
    shares = [ids[k * share : (k + 1) * share] for k in range(n - 1)] + [ids[(n - 1) * share :]]
    starts = [k * case.stagger for k in range(n)]
    events: list[list[Any]] = [[] for _ in range(n)]
    for k in range(n):
        batch.add(k)
    live = set(range(n))
    step = 0
    while live:
        if case.bad_step and step % 3 == 1:
            bad_step(batch, min(live))
        fed = [k for k in sorted(live) if starts[k] <= step < starts[k] + len(shares[k])]
        for key, got in batch.feed(fed, [shares[k][step - starts[k]] for k in fed]):
            events[key] += list(got)
        for k in sorted(live):
            if step >= starts[k] and step - starts[k] + 1 >= len(shares[k]):
                events[k] += batch.finish(k, case.finish)
                check_events(events[k], events[k][-1].message)
                live.discard(k)
        step += 1
    alone = replace(case, reset_prefix=False)
    for k in range(n):
        whole = run_parser(alone, "native", [shares[k]], [], case.special)
        assert merge_deltas(events[k]) == merge_deltas(whole), f"batch stream {k} differs"


def bad_step(batch: BatchParser, key: int) -> None:
    """A step naming one request twice: refused with ValueError, nothing fed."""
    try:
        batch.feed([key, key], [ord("a"), ord("b")])
    except ValueError:
        return
    raise AssertionError("a batch step naming a request twice was fed")


# -- checks -----------------------------------------------------------------------------------


def delta_key(event: Any) -> tuple[Any, ...] | None:
    if isinstance(event, (ReasoningDelta, ContentDelta)):
        return (type(event),)
    if isinstance(event, ToolCallArgsDelta):
        return (ToolCallArgsDelta, event.index)
    return None


def merge_deltas(events: Sequence[Any]) -> list[Any]:
    """Adjacent deltas of the same type and call index joined into one."""
    merged: list[Any] = []
    for event in events:
        key = delta_key(event)
        if key is not None and merged and delta_key(merged[-1]) == key:
            previous = merged.pop()
            if isinstance(event, ToolCallArgsDelta):
                merged.append(ToolCallArgsDelta(event.index, previous.text + event.text))
            else:
                merged.append(type(event)(previous.text + event.text))
        else:
            merged.append(event)
    return merged


def check_events(events: Sequence[Any], message: toolparse.Message) -> None:
    """What one parse's events must say, on their own and about its message."""
    assert events and isinstance(events[-1], End), "the events do not end with End"
    assert all(not isinstance(e, End) for e in events[:-1]), "End before the last event"
    assert events[-1].message == message, "End's message is not the parser's"
    limits = [k for k, e in enumerate(events) if isinstance(e, ParseError) and e.kind == "limit"]
    assert not limits or limits == [len(events) - 2], "events after a limit error"
    content: list[str] = []
    reasoning: list[str] = []
    args: dict[int, list[str]] = {}
    names: dict[int, str] = {}
    ended: list[ToolCallEnd] = []
    for event in events:
        for text in _texts(event):
            text.encode("utf-8")  # no lone surrogate reaches the application
        if isinstance(event, ContentDelta):
            content.append(event.text)
        elif isinstance(event, ReasoningDelta):
            reasoning.append(event.text)
        elif isinstance(event, ToolCallStart):
            assert event.index == len(names), "call indices do not count up from 0"
            names[event.index] = event.name
            args[event.index] = []
        elif isinstance(event, ToolCallArgsDelta):
            assert event.index in names, "arguments before their call started"
            assert event.index not in (c.index for c in ended), "arguments after the call ended"
            args[event.index].append(event.text)
        elif isinstance(event, ToolCallEnd):
            call = event.call
            assert event.index in names and call.name == names[event.index], "end without start"
            assert "".join(args[event.index]) == call.arguments_json, "deltas != arguments"
            assert json.loads(call.arguments_json) == call.arguments, "arguments_json != arguments"
            assert isinstance(call.arguments, dict), "arguments are not an object"
            ended.append(event)
    assert message.tool_calls == [e.call for e in ended], "message calls != ToolCallEnd calls"
    assert message.errors == [e for e in events if isinstance(e, ParseError)], "errors differ"
    assert (message.content or "") == "".join(content), "content != its deltas"
    assert (message.reasoning_content or "") == "".join(reasoning), "reasoning != its deltas"


def _texts(event: Any) -> list[str]:
    if isinstance(event, (ContentDelta, ReasoningDelta, ToolCallArgsDelta)):
        return [event.text]
    if isinstance(event, ToolCallStart):
        return [event.name, event.id]
    if isinstance(event, ToolCallEnd):
        return [event.call.name, event.call.arguments_json]
    if isinstance(event, ParseError):
        return [event.kind, event.message]
    return []


def check(data: bytes) -> None:
    """Runs one input (see the module doc); raises on any disagreement."""
    case = read_case(data)
    if case is None:
        return
    ids = token_ids(case.body, len(case.format.markers)) if case.tokens else list(case.body)
    raw = vocab(case.format.name).decode(ids)  # the bytes the ids stand for
    sizes = pieces(len(raw), case.chunk_mode, case.chunk_param)
    prefix = raw[:RESET_PREFIX]
    as_str = str_pieces(raw, sizes) if case.as_str else None
    if as_str is not None:
        native = run_parser(case, "native", as_str, prefix.decode("utf-8", "ignore"))
    else:
        native = run_parser(case, "native", split(raw, sizes), prefix)
    want = merge_deltas(native)
    reference = run_parser(case, "reference", split(raw, cut(sizes, REFERENCE_PIECE)), prefix)
    assert merge_deltas(reference) == want, "native and reference engines differ"
    whole = run_parser(case, "native", [raw], prefix)
    assert merge_deltas(whole) == want, "chunked and whole feeds differ"
    id_sizes = pieces(len(ids), case.chunk_mode, case.chunk_param)
    by_ids = run_parser(case, "native", split(ids, id_sizes), ids[:RESET_PREFIX], case.special)
    if case.special:
        by_ids_ref = run_parser(
            case, "reference", split(ids, cut(id_sizes, REFERENCE_PIECE)), ids[:RESET_PREFIX], True
        )
        assert merge_deltas(by_ids) == merge_deltas(by_ids_ref), "engines differ on token ids"
    else:
        assert merge_deltas(by_ids) == want, "token ids and bytes differ"
    if case.batch:
        run_batch(case, ids)
