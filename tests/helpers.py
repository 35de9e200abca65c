"""Shared test helpers: feeding an object in chunks, random partitions, scanner snapshots.

Every chunking test goes through `feed_chunks`, so "a chunking" always means the same thing:
a list of piece sizes, fed in order, with whatever the sizes leave over fed as a last piece.
"""

from __future__ import annotations

import random
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from hypothesis import settings
from hypothesis import strategies as st

DIALECTS = ("strict", "lenient", "python")
JSON_WHITESPACE = b" \t\n\r"

# Property tests stay small enough for the whole suite to run in about a minute.
# a tool whose schema the export tests check calls against
WEATHER_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            "required": ["city"],
        },
    },
}

MODEST = settings(max_examples=200, deadline=None)


@dataclass(frozen=True)
class Step:
    """One feed: bytes fed so far after it, what feed() returned, and what `observe` saw."""

    fed: int
    result: Any
    seen: Any = None


def split(data: bytes, sizes: Sequence[int]) -> list[bytes]:
    """Cuts data into consecutive pieces of the given sizes; any rest becomes one last piece."""
    if any(size < 0 for size in sizes) or sum(sizes) > len(data):
        raise ValueError(f"sizes {list(sizes)} do not partition {len(data)} bytes")
    pieces = []
    offset = 0
    for size in sizes:
        pieces.append(data[offset : offset + size])
        offset += size
    if offset < len(data):
        pieces.append(data[offset:])
    return pieces


def feed_chunks(
    obj: Any,
    data: bytes,
    chunks: Sequence[int],
    observe: Callable[[Any], Any] | None = None,
) -> list[Step]:
    """Feeds data to obj (a matcher or a scanner) in pieces of the sizes in chunks.

    Returns one Step per feed() call; `observe(obj)` is recorded right after each feed so a
    test can compare the object's state at every chunk boundary.
    """
    steps = []
    fed = 0
    for piece in split(data, chunks):
        result = obj.feed(piece)
        fed += len(piece)
        steps.append(Step(fed, result, observe(obj) if observe is not None else None))
    return steps


def whole(length: int) -> list[int]:
    """One feed of everything (no feed at all for empty input)."""
    return [length] if length else []


def byte_by_byte(length: int) -> list[int]:
    return [1] * length


def every_split(length: int) -> list[list[int]]:
    """All two-piece chunkings, including the ones with an empty first or last piece."""
    return [[cut, length - cut] for cut in range(length + 1)]


def random_partition(rng: random.Random, length: int, max_piece: int = 16) -> list[int]:
    """Piece sizes from 1 to max_piece that add up to length."""
    sizes = []
    remaining = length
    while remaining:
        size = rng.randint(1, min(max_piece, remaining))
        sizes.append(size)
        remaining -= size
    return sizes


def partitions(length: int) -> st.SearchStrategy[list[int]]:
    """Hypothesis strategy: any partition of `length` bytes into non-empty pieces."""
    if length <= 1:
        return st.just(whole(length))
    return st.sets(st.integers(1, length - 1)).map(lambda cuts: sizes_from_cuts(cuts, length))


def sizes_from_cuts(cuts, length: int) -> list[int]:
    """Piece sizes for cutting `length` bytes at the given offsets."""
    bounds = [0, *sorted(cuts), length]
    return [end - start for start, end in pairwise(bounds)]


def as_bytes(text: str | bytes | None) -> bytes | None:
    """closing() as bytes: a partial UTF-8 character can only travel in a str as surrogates."""
    if text is None or isinstance(text, bytes):
        return text
    return text.encode("utf-8", "surrogateescape")


def scanner_state(scanner: Any) -> tuple:
    """Everything a JsonScanner exposes between feeds."""
    return (
        scanner.end,
        scanner.error,
        scanner.relaxations,
        scanner.repaired,
        scanner.position,
        scanner.depth,
        scanner.closing(),
    )


def final_state(scanner: Any) -> tuple:
    """The state after finish(); closing() is left out because finish() ends the input."""
    return scanner_state(scanner)[:-1]


@dataclass(frozen=True)
class DocumentResult:
    """The verdict on a whole document: one value, then nothing but JSON whitespace."""

    accepted: bool
    verdict: str
    end: int | None
    error: tuple[int, str] | None
    position: int
    relaxations: tuple[str, ...]


def scan_document(
    module: Any,
    data: bytes,
    chunks: Sequence[int] | None = None,
    dialect: str = "strict",
    **options: Any,
) -> DocumentResult:
    """Feeds data (whole, or in the given chunks), then finishes.

    The scanner stops after one value, so a document is accepted only when the value
    completes and every byte after `end` is JSON whitespace.
    """
    scanner = module.JsonScanner(dialect, **options)
    feed_chunks(scanner, data, whole(len(data)) if chunks is None else chunks)
    verdict = scanner.finish()
    end = scanner.end
    trailing = data[end:] if end is not None else b""
    return DocumentResult(
        accepted=verdict == "complete" and not trailing.strip(JSON_WHITESPACE),
        verdict=verdict,
        end=end,
        error=scanner.error,
        position=scanner.position,
        relaxations=scanner.relaxations,
    )


# Run first in a subprocess: the compiled core then cannot be imported, as where it is not
# built (the reference engine and the formats must still work).
HIDE_THE_CORE = textwrap.dedent(
    """
    import importlib.abc, sys

    class NoCore(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name == "toolparse._core":
                raise ModuleNotFoundError("no compiled core here", name=name)
            return None

    sys.meta_path.insert(0, NoCore())
    """
)
