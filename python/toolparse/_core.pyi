import array
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Literal

from .limits import Limits
from .message import Message, ParseError, ToolCall
from .repair import Coerce

Dialect = Literal["strict", "lenient", "python"]

def configure(
    *,
    raise_for_status: Callable[[int], Any],
    marker_bytes: Callable[[object], list[bytes]],
    parse_error: type[ParseError],
    tool_call: type[ToolCall],
    repair_arguments: Callable[[str, bool], tuple[str, tuple[str, ...]] | None],
    nothing_left: type[ValueError],
    coerced_values: str,
    closed_at_end: str,
    missing_opener: str,
    missing_closer: str,
    load_arguments: Callable[[str], Any],
    detailed_message: Callable[[int, str], str],
    default_limits: Limits,
    limit_names: tuple[str, ...],
    error_kinds: tuple[str, ...],
    messages: tuple[str | None, ...],
    first_limit_message: int,
) -> None: ...

Match = tuple[int, int, int]
Data = str | bytes | bytearray | memoryview

class MarkerTrie:
    markers: tuple[bytes, ...]
    def __init__(self, markers: list[str] | list[bytes] | list[str | bytes]) -> None: ...
    def __len__(self) -> int: ...
    @property
    def max_length(self) -> int: ...
    def matcher(self) -> MarkerMatcher: ...
    def find_all(self, data: Data) -> list[Match]: ...

class MarkerMatcher:
    trie: MarkerTrie
    def __init__(self, trie: MarkerTrie) -> None: ...
    def reset(self) -> None: ...
    @property
    def position(self) -> int: ...
    @property
    def holdback(self) -> int: ...
    @property
    def finished(self) -> bool: ...
    def feed(self, data: Data) -> list[Match]: ...
    def finish(self) -> list[Match]: ...

class JsonScanner:
    dialect: Dialect
    max_depth: int
    def __init__(self, dialect: Dialect = "strict", max_depth: int = 512) -> None: ...
    def reset(self) -> None: ...
    def feed(self, data: Data) -> Literal["need_more", "complete", "error"]: ...
    def finish(self) -> Literal["complete", "incomplete", "error"]: ...
    @property
    def end(self) -> int | None: ...
    @property
    def error(self) -> tuple[int, str] | None: ...
    @property
    def position(self) -> int: ...
    @property
    def depth(self) -> int: ...
    @property
    def relaxations(self) -> tuple[str, ...]: ...
    @property
    def repaired(self) -> bool: ...
    def closing(self) -> str | None: ...
    def closing_bytes(self) -> bytes | None: ...

class ReasoningDelta:
    type: str
    text: str
    __match_args__ = ("text",)
    def __init__(self, text: str) -> None: ...

class ContentDelta:
    type: str
    text: str
    __match_args__ = ("text",)
    def __init__(self, text: str) -> None: ...

class ToolCallStart:
    type: str
    index: int
    id: str
    name: str
    __match_args__ = ("index", "id", "name")
    def __init__(self, index: int, id: str, name: str) -> None: ...

class ToolCallArgsDelta:
    type: str
    index: int
    text: str
    __match_args__ = ("index", "text")
    def __init__(self, index: int, text: str) -> None: ...

class ToolCallEnd:
    type: str
    index: int
    call: ToolCall
    __match_args__ = ("index", "call")
    def __init__(self, index: int, call: ToolCall) -> None: ...

class End:
    type: str
    finish_reason: str
    message: Message
    __match_args__ = ("finish_reason", "message")
    def __init__(self, finish_reason: str, message: Message) -> None: ...

class NativeProgram:
    def __init__(self, blob: bytes) -> None: ...
    def has_entry(self, entry: str) -> bool: ...

class NativeTools:
    def __init__(self, blob: bytes) -> None: ...

class NativeVocab:
    size: int
    def __init__(self, table: bytes, offsets: Any, special: bytes | None = None) -> None: ...

class NativeBatch:
    def __init__(self) -> None: ...
    def set(self, slot: int, stream: NativeStream | None) -> None: ...
    def feed(
        self, vocab: NativeVocab, slots: Any, tokens: Any, keys: Sequence[Any] | None = None
    ) -> BatchEvents: ...

class BatchEvents:
    """The events of one decode step: (stream, events) for each stream that produced any."""

    positions: array.array[int]
    def __len__(self) -> int: ...
    def __getitem__(self, index: int) -> tuple[Any, list[Any]]: ...
    def __iter__(self) -> Iterator[tuple[Any, list[Any]]]: ...

class NativePool:
    """Storage for many streams' fixed state, a block each (a batch's streams)."""
    @property
    def block_size(self) -> int: ...
    @property
    def live(self) -> int: ...

class NativeStream:
    program: NativeProgram
    tools: NativeTools | None
    pool: NativePool | None
    tool_calls: list[ToolCall]
    errors: list[ParseError]
    coerce: Coerce | None
    def __init__(
        self,
        program: NativeProgram,
        entry: str,
        tools: NativeTools | None,
        id_factory: Callable[[], str],
        repair: bool = False,
        limits: Limits | None = None,
        pool: NativePool | None = None,
    ) -> None: ...
    limits: Limits
    def held_bytes(self) -> int: ...
    def reset(self) -> None: ...
    def feed(self, data: Data) -> list[Any]: ...
    def feed_tokens(self, vocab: NativeVocab, ids: Any) -> list[Any]: ...
    def set_special(self, flags: bytes | None) -> None: ...
    def finish(self, cut_short: bool = False) -> list[Any]: ...
    def content(self) -> str: ...
    def reasoning(self) -> str | None: ...
