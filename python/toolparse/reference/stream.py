"""The reference engine behind StreamParser(engine="reference"): the Python VM feeding the
Python event builder, with the same interface as the native stream (src/stream.pxi)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from .._common import as_bytes
from ..grammar import Program
from ..limits import DEFAULT_LIMITS, Limits
from ..repair import Coerce
from .emitter import Emitter, ToolTable
from .vm import VM


class Vocab(Protocol):
    """What feed_tokens reads of a toolparse.Vocab."""

    def decode(self, ids: list[int]) -> bytes: ...

    def special_starts(self, ids: list[int]) -> list[int]: ...


class ReferenceStream:
    def __init__(
        self,
        program: Program,
        entry: str,
        tools: list[dict[str, Any]] | None,
        id_factory: Callable[[], str],
        repair: bool = False,
        limits: Limits = DEFAULT_LIMITS,
    ) -> None:
        self._program = program
        self._limits = limits
        self._repair = repair
        self._special: bytes | None = None
        self._entry = entry
        self._tools = ToolTable.of(tools)
        self._id_factory = id_factory
        self._coerce: Coerce | None = None
        self.reset()

    @property
    def coerce(self) -> Coerce | None:
        """Repair mode: how a call's values are coerced to its tool's types."""
        return self._coerce

    @coerce.setter
    def coerce(self, coerce: Coerce | None) -> None:
        self._coerce = self._emitter.coerce = coerce

    def reset(self) -> None:
        self._vm = VM(self._program, self._entry, self._limits)
        self._vm.set_special(self._special)
        self._emitter = Emitter(
            self._tools, self._id_factory, repair=self._repair, limits=self._limits
        )
        self._emitter.coerce = self._coerce
        self._vm.declares = self._declares
        self._vm.declares_cut = self._declares_cut
        self._out: list[Any] = []  # the events of the feed running now
        self._finished = False

    def _declares(self, name: bytes) -> bool:
        self._emitter.apply(self._vm.take_ops(), self._out)
        return self._emitter.declares(name)

    def _declares_cut(self, text: bytes, end: bytes) -> bool:
        self._emitter.apply(self._vm.take_ops(), self._out)
        return self._emitter.declares_cut(text, end)

    def feed(self, data: str | bytes) -> list[Any]:
        if self._finished:
            raise ValueError("feed() after finish(); call reset() for the next response")
        out = self._out = []
        self._emitter.apply(self._vm.feed(as_bytes(data)), out)
        if self._emitter.stopped:
            self._vm.release()  # it met a limit: the parse is over
        return out

    def set_special(self, flags: bytes | None) -> None:
        """Special-token markers (see NativeStream.set_special)."""
        self._special = flags
        self._vm.set_special(flags)

    def feed_tokens(self, vocab: Vocab, ids: list[int]) -> list[Any]:
        """Feeds the bytes of these token ids, marking where special tokens start."""
        data = vocab.decode(ids)
        if self._special is not None:
            fed = self._vm.fed
            for start in vocab.special_starts(ids):
                self._vm.mark_special(fed + start)
        return self.feed(data)

    def finish(self, cut_short: bool = False) -> list[Any]:
        if self._finished:
            raise ValueError("finish() was already called; call reset() for the next response")
        self._finished = True
        out = self._out = []
        self._emitter.apply(self._vm.finish(cut_short=cut_short), out)
        self._emitter.abort_all(out)
        self._vm.release()
        return out

    def held_bytes(self) -> int:
        """Bytes held for undecided input and the open call (what the limits bound)."""
        return self._vm.held_bytes + self._emitter.held_bytes

    def content(self) -> str:
        return "".join(self._emitter.content)

    def reasoning(self) -> str | None:
        return "".join(self._emitter.reasoning) if self._emitter.any_reasoning else None

    @property
    def tool_calls(self) -> list[Any]:
        return self._emitter.tool_calls

    @property
    def errors(self) -> list[Any]:
        return self._emitter.errors
