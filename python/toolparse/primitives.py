"""The C core's building blocks on their own (docs/primitives.md): MarkerTrie and
MarkerMatcher find marker strings in a stream, JsonScanner follows JSON as it arrives."""

from __future__ import annotations

from ._native import JsonScanner, MarkerMatcher, MarkerTrie

__all__ = ["JsonScanner", "MarkerMatcher", "MarkerTrie"]
