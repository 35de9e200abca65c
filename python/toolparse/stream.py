"""The stream API: StreamParser (feed, finish, message, reset) and parse()."""

from __future__ import annotations

import random
import secrets
import string
import struct
import weakref
from collections.abc import Callable, Iterable
from functools import partial
from typing import TYPE_CHECKING, Any, Literal

from .events import End, Event
from .formats import Format, get_format
from .limits import DEFAULT_LIMITS, Limits
from .message import Message
from .reference.emitter import param_schemas
from .reference.m3value import encode_node
from .reference.stream import ReferenceStream
from .repair import coerce_call
from .tools import param_types, per_tools_list, stated_schemas

if TYPE_CHECKING:
    from ._native import NativePool, NativeProgram, NativeStream, NativeTools
    from .vocab import Vocab

# The reference engine runs where the compiled core is not built; the native engine, the
# default, then fails with the import's own error: no silent fallback.
try:
    from . import _native
except ModuleNotFoundError as missing:  # pragma: no cover - the core is built in the tests
    if missing.name != f"{__package__}._core":
        raise
    _NO_CORE: ModuleNotFoundError | None = missing
else:
    _NO_CORE = None

Engine = Literal["native", "reference"]
# Finish reasons that mean the output was cut off, not ended by the model: a call that
# runs to the end of the output is then incomplete.
CUT_SHORT = frozenset({"length", "cancelled"})
_ID_ALPHABET = string.ascii_letters + string.digits
_TYPE_CODES = {
    "string": 0,
    "integer": 1,
    "number": 2,
    "boolean": 3,
    "object": 4,
    "array": 5,
    "null": 6,
}


# Random bytes to id characters in one translate() call (the modulo bias is harmless for
# ids, and a call costs well under a microsecond).
_ID_TABLE = bytes(ord(_ID_ALPHABET[b % len(_ID_ALPHABET)]) for b in range(256))


_NATIVE_PROGRAMS: dict[tuple[int, bool], NativeProgram] = {}


def native_program(fmt: Format, repair: bool = False) -> NativeProgram:
    """The format's program (its repair program with repair=True) loaded into the C core
    once, shared by every native stream; dropped with the format."""
    key = (id(fmt), repair)
    program = _NATIVE_PROGRAMS.get(key)
    if program is None:
        compiled = fmt.repair_program if repair else fmt.program
        program = _NATIVE_PROGRAMS.setdefault(key, _native.NativeProgram(compiled.to_bytes()))
        # an id is reused only once its object is gone, and this runs as it goes
        weakref.finalize(fmt, _NATIVE_PROGRAMS.pop, key, None)
    return program


def id_generator(seed: int | None = None) -> Callable[[], str]:
    """Tool call ids "call_" + 24 letters and digits: random, or reproducible from seed."""
    if seed is None:
        return lambda: "call_" + secrets.token_bytes(24).translate(_ID_TABLE).decode("ascii")
    rng = random.Random(seed)
    return lambda: "call_" + "".join(rng.choice(_ID_ALPHABET) for _ in range(24))


def token_ids(ids: Any) -> list[int]:
    """Token ids as a list: from an int, a sequence, or a buffer of integers."""
    if isinstance(ids, int):
        return [ids]
    try:
        values: list[int] = memoryview(ids).tolist()
    except TypeError:
        values = list(ids)
    return values


def tools_blob(tools: list[dict[str, Any]]) -> bytes:
    """The tool table for the C core: names and parameter types (see csrc/tools.h)."""

    def text(value: str) -> bytes:
        data = value.encode("utf-8")
        return struct.pack("<I", len(data)) + data

    table = param_types(tools)
    schemas = param_schemas(tools)
    out = bytearray(struct.pack("<I", len(table)))
    nodes = bytearray()  # then each parameter's schema node, for nested values
    for name, params in table.items():
        out += text(name) + struct.pack("<I", len(params))
        for param, types in params.items():
            codes = [_TYPE_CODES.get(t, 7) for t in types]
            out += text(param) + struct.pack(f"<I{len(codes)}I", len(codes), *codes)
            node = encode_node(schemas[name][param], _TYPE_CODES)
            nodes += struct.pack("<I", len(node)) + node
    return bytes(out + nodes)


@per_tools_list
def native_tools(tools: list[dict[str, Any]]) -> NativeTools:
    """The C core's tool table for a tools list (read-only, shared by streams and
    threads)."""
    return _native.NativeTools(tools_blob(tools))


# repair mode's coercion reads what the schemas state, shared like the tables
shared_stated_schemas = per_tools_list(stated_schemas)


class StreamParser:
    """Parses one model response fed in pieces; reuse it with reset().

    format: a format name or alias (see toolparse.formats) or a Format.
    tools: the OpenAI tools list; it types XML-style parameters, and a call to a name
    outside it is reported (ParseError kind "unknown_tool") instead of delivered.
    reasoning_in_prompt: the chat template already opened the reasoning block; None
    takes the format's default.
    engine: "native" (the C core) or "reference" (the pure-Python twin): same events.
    seed / id_factory: reproducible or custom tool call ids.
    vocab: a toolparse.Vocab, for feed_tokens(ids) (token ids instead of text).
    special_markers: with a vocab, a format marker that is one special token of the vocab
    (``<tool_call>`` in Qwen models) counts only when it arrives as that token: the same
    characters as ordinary text (a model quoting a web page) stay text.  On by default
    when a vocab is given; False turns it off (then text and token ids parse alike).
    repair: salvage broken calls (every format; formats/_repair.py): lenient JSON
    arguments, and a call the end of the output cut off is closed there.  A salvaged
    call has repaired=True and names its repairs (toolparse.repair), so an application
    can hold it to read-only tools and log why; each call's arguments then arrive in one
    delta when the call ends.  Without it, the same input is a ParseError.
    """

    # Where the native stream keeps its fixed state: the heap, or a batch's pool (set by
    # in_pool before __init__ builds the stream).
    _pool: NativePool | None = None
    # Called with the new stream when reset() makes one: a batch holding this parser's
    # stream in a slot points the slot at it (BatchParser.add; cleared when removed).
    _on_new_stream: Callable[[NativeStream], None] | None = None

    @classmethod
    def in_pool(cls, pool: NativePool, format: str | Format, **options: Any) -> StreamParser:
        """A native StreamParser whose stream, and those reset() makes, live in pool: the
        streams of one batch side by side (BatchParser makes its parsers so)."""
        parser = cls.__new__(cls)
        parser._pool = pool
        parser.__init__(format, engine="native", **options)  # type: ignore[misc]
        return parser

    def __init__(
        self,
        format: str | Format,
        *,
        tools: list[dict[str, Any]] | None = None,
        reasoning_in_prompt: bool | None = None,
        engine: Engine = "native",
        seed: int | None = None,
        id_factory: Callable[[], str] | None = None,
        repair: bool = False,
        vocab: Vocab | None = None,
        special_markers: bool = True,
        limits: Limits | None = None,
    ) -> None:
        self.format = get_format(format)
        self.limits = DEFAULT_LIMITS if limits is None else limits
        self.vocab = vocab
        self.special_markers = special_markers and vocab is not None
        self.repair = repair
        if engine not in ("native", "reference"):
            raise ValueError(f"unknown engine {engine!r}")
        if engine == "native" and _NO_CORE is not None:
            raise _NO_CORE
        self.engine = engine
        self.tools = tools
        self._entry = self.format.entry(reasoning_in_prompt)
        self.reasoning_in_prompt = self._entry == "start_in_reasoning"
        self._seed = seed
        self._id_factory = id_factory
        self._native_tools = (
            native_tools(tools) if tools is not None and engine == "native" else None
        )
        # repair mode: values coerced to the types the tools' schemas state
        stated = shared_stated_schemas(tools) if repair and tools is not None else {}
        self._coerce = partial(coerce_call, stated) if any(stated.values()) else None
        self._stream: NativeStream | ReferenceStream
        self.reset()

    def reset(self) -> None:
        """Starts over for the next response, keeping the format and options."""
        ids = self._id_factory or id_generator(self._seed)
        if self.engine == "native":
            self._stream = _native.NativeStream(
                native_program(self.format, self.repair),
                self._entry,
                self._native_tools,
                ids,
                self.repair,
                self.limits,
                self._pool,
            )
        else:
            self._stream = ReferenceStream(
                self.format.repair_program if self.repair else self.format.program,
                self._entry,
                self.tools,
                ids,
                self.repair,
                self.limits,
            )
        self._stream.coerce = self._coerce
        if self.special_markers:
            assert self.vocab is not None
            compiled = self.format.repair_program if self.repair else self.format.program
            self._stream.set_special(self.vocab.special_flags(compiled.strings))
        self._finish_reason: str | None = None
        # feed() is the per-token call: the stream's own method, without a Python frame.
        self.feed = self._stream.feed  # type: ignore[method-assign,assignment]
        if self._on_new_stream is not None and isinstance(self._stream, _native.NativeStream):
            self._on_new_stream(self._stream)

    def feed(self, text: str | bytes) -> list[Event]:
        """Feeds the next piece of output; returns the events it made certain."""
        return self._stream.feed(text)

    @property
    def held_bytes(self) -> int:
        """Bytes the parser holds for output it has not decided yet and for the open call
        (its arguments, a name or value held whole): what `limits` bound."""
        held: int = self._stream.held_bytes()
        return held

    def feed_tokens(self, ids: int | Iterable[int] | Any) -> list[Event]:
        """Feeds the next token ids (an int, a sequence, or a buffer such as a numpy array):
        their bytes, looked up in the vocab given to the parser."""
        if self.vocab is None:
            raise ValueError("feed_tokens() needs StreamParser(..., vocab=toolparse.Vocab(...))")
        if isinstance(self._stream, _native.NativeStream):
            return self._stream.feed_tokens(self.vocab.native, ids)
        return self._stream.feed_tokens(self.vocab, token_ids(ids))

    def finish(self, reason: str = "stop") -> list[Event]:
        """Ends the response; the last event is End.  reason: "stop" (the model ended it),
        "length" (cut off by a token limit) or "cancelled" (closed early by the caller, at
        any point): the message is then exactly what was emitted so far, and a call still
        open, or one that would run to the end of the output, is reported incomplete."""
        events: list[Event] = self._stream.finish(reason in CUT_SHORT)
        self._finish_reason = reason
        events.append(End(reason, self.message))
        return events

    @property
    def message(self) -> Message:
        """The message so far, without re-parsing."""
        stream = self._stream
        reason = self._finish_reason
        if reason == "stop" and stream.tool_calls:
            reason = "tool_calls"
        return Message(
            content=stream.content() or None,
            reasoning_content=stream.reasoning() or None,
            tool_calls=list(stream.tool_calls),
            errors=list(stream.errors),
            finish_reason=reason,
        )


def parse(
    text: str | bytes,
    format: str | Format,
    *,
    tools: list[dict[str, Any]] | None = None,
    reasoning_in_prompt: bool | None = None,
    engine: Engine = "native",
    seed: int | None = None,
    id_factory: Callable[[], str] | None = None,
    repair: bool = False,
    finish_reason: str = "stop",
    limits: Limits | None = None,
) -> Message:
    """The whole response at once: the same Message as feeding it and finishing with
    finish_reason ("length" for an output cut short)."""
    parser = StreamParser(
        format,
        tools=tools,
        reasoning_in_prompt=reasoning_in_prompt,
        engine=engine,
        seed=seed,
        id_factory=id_factory,
        repair=repair,
        limits=limits,
    )
    parser.feed(text)
    parser.finish(finish_reason)
    return parser.message
