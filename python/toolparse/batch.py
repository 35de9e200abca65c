"""Many streams at once: one decode step of a serving loop in one call into the core.

    batch = toolparse.BatchParser("qwen3", vocab=vocab, tools=tools)
    batch.add("req-1"); batch.add("req-2")
    for request_id, events in batch.feed(["req-1", "req-2"], [token_a, token_b]):
        ...                                    # only the streams that produced events
    events = batch.finish("req-1")             # End last; the stream is removed

The core feeds every stream with the GIL released and keeps the step's events in its own
buffers: a step returns one `BatchEvents`, and event objects are made only for what is
read from it (a stream that produced nothing costs no Python object; one whose events
are never read costs none either).  Call starts, ends and errors are applied to their
stream at the step all the same, so `message()` and `finish()` never depend on reading.
Streams are independent: each is a StreamParser of its own (same format, tools and
options), added, finished or cancelled on its own.  `add` returns the stream's slot;
`feed_slots(slots, token_ids)` takes slots instead of request ids and skips the id
lookups (for a scheduler that keeps them).

A BatchParser is driven from one thread at a time (a serving loop's step); streams of
different BatchParsers, or StreamParsers, may run in other threads at once.
"""

from __future__ import annotations

import array
import functools
from collections.abc import Callable, Hashable, Sequence
from typing import Any

from ._native import BatchEvents, NativeBatch, NativePool, NativeStream
from .events import Event
from .formats import Format, get_format
from .limits import Limits
from .message import Message
from .stream import StreamParser
from .vocab import Vocab


class BatchParser:
    """Streams of one format fed one token per step, all in one call (see module doc)."""

    def __init__(
        self,
        format: str | Format,
        *,
        vocab: Vocab,
        tools: list[dict[str, Any]] | None = None,
        reasoning_in_prompt: bool | None = None,
        repair: bool = False,
        special_markers: bool = True,
        limits: Limits | None = None,
        seed: int | None = None,
        id_factory: Callable[[], str] | None = None,
    ) -> None:
        self.format = get_format(format)
        self.vocab = vocab
        self._options: dict[str, Any] = {
            "tools": tools,
            "reasoning_in_prompt": reasoning_in_prompt,
            "repair": repair,
            "special_markers": special_markers,
            "limits": limits,
            "seed": seed,
            "id_factory": id_factory,
        }
        self._parsers: list[StreamParser | None] = []
        self._native = NativeBatch()  # the core streams, by slot
        self._pool = NativePool()  # their fixed state, side by side on few pages
        self._request_ids: list[Hashable | None] = []
        self._slots: dict[Hashable, int] = {}
        self._free: list[int] = []

    def __len__(self) -> int:
        return len(self._slots)

    def __contains__(self, request_id: Hashable) -> bool:
        return request_id in self._slots

    def add(self, request_id: Hashable) -> int:
        """Starts a stream for a request; returns its slot."""
        if request_id in self._slots:
            raise ValueError(f"request {request_id!r} already has a stream")
        parser = StreamParser.in_pool(self._pool, self.format, vocab=self.vocab, **self._options)
        slot = self._free.pop() if self._free else len(self._parsers)
        if slot == len(self._parsers):
            self._parsers.append(None)
            self._request_ids.append(None)
        stream = parser._stream
        assert isinstance(stream, NativeStream)  # the engine asked for above
        self._native.set(slot, stream)
        # parser.reset() makes a new stream: the slot follows it
        parser._on_new_stream = functools.partial(self._native.set, slot)
        self._parsers[slot] = parser
        self._request_ids[slot] = request_id
        self._slots[request_id] = slot
        return slot

    def slot(self, request_id: Hashable) -> int:
        return self._slots[request_id]

    def parser(self, request_id: Hashable) -> StreamParser:
        parser = self._parsers[self._slots[request_id]]
        assert parser is not None
        return parser

    def message(self, request_id: Hashable) -> Message:
        """The message of a request so far."""
        return self.parser(request_id).message

    def feed(self, request_ids: Sequence[Hashable], token_ids: Sequence[int] | Any) -> BatchEvents:
        """One decode step: request_ids[k] gets token token_ids[k] (each request at most
        once).  Iterating the result gives (request id, events) for the requests that
        produced events.  Nothing is fed when a request, a token id or a stream is not
        usable (ValueError, or KeyError for an unknown request)."""
        keys = tuple(request_ids)
        try:
            slots = array.array("I", [self._slots[r] for r in keys])
        except KeyError as error:
            raise KeyError(f"no stream for request {error.args[0]!r}") from None
        return self._native.feed(self.vocab.native, slots, token_ids, keys)

    def feed_slots(self, slots: Sequence[int] | Any, token_ids: Sequence[int] | Any) -> BatchEvents:
        """feed() by slot (as add() returned them): iterating the result gives (slot,
        events).  slots and token_ids may be any buffers of integers (array, numpy)."""
        return self._native.feed(self.vocab.native, slots, token_ids)

    def finish(self, request_id: Hashable, reason: str = "stop") -> list[Event]:
        """Ends a request's stream (End last, with its message) and removes it."""
        events = self.parser(request_id).finish(reason)
        self.remove(request_id)
        return events

    def cancel(self, request_id: Hashable) -> list[Event]:
        """finish(request_id, "cancelled"): what was emitted stands, an open call is
        incomplete."""
        return self.finish(request_id, "cancelled")

    def remove(self, request_id: Hashable) -> None:
        """Drops a request's stream without finishing it."""
        slot = self._slots[request_id]
        self._native.set(slot, None)
        parser = self._parsers[slot]
        assert parser is not None
        parser._on_new_stream = None  # the slot is another request's next
        del self._slots[request_id]
        self._parsers[slot] = self._request_ids[slot] = None
        self._free.append(slot)
