"""Small helpers shared by the native facades and the reference engines."""

from __future__ import annotations


def as_bytes(data: bytes | bytearray | memoryview | str) -> bytes:
    """Input as UTF-8 bytes: a str is encoded, a bytes-like object is taken as is."""
    if isinstance(data, str):
        return data.encode("utf-8")
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data)
    raise TypeError(f"expected str or bytes, not {type(data).__name__}")


def marker_bytes(markers: object) -> list[bytes]:
    """Validates a marker list (see docs/primitives.md) and returns it as bytes."""
    if isinstance(markers, (str, bytes)):
        raise TypeError("markers must be a list of str or bytes, not a single string")
    encoded: list[bytes] = []
    for marker in markers:  # type: ignore[attr-defined]
        if isinstance(marker, str):
            encoded.append(marker.encode("utf-8"))
        elif isinstance(marker, (bytes, bytearray)):
            encoded.append(bytes(marker))
        else:
            raise TypeError(f"a marker must be str or bytes, not {type(marker).__name__}")
    if not 1 <= len(encoded) <= MAX_MARKERS:
        raise ValueError(f"a trie needs 1 to {MAX_MARKERS} markers, got {len(encoded)}")
    seen: set[bytes] = set()
    for index, marker in enumerate(encoded):
        if not 1 <= len(marker) <= MAX_MARKER_LENGTH:
            raise ValueError(
                f"marker {index} is {len(marker)} bytes; markers are 1 to {MAX_MARKER_LENGTH} bytes"
            )
        if marker in seen:
            raise ValueError(f"marker {index} ({marker!r}) is a duplicate")
        seen.add(marker)
    return encoded


MAX_MARKERS = 4096
MAX_MARKER_LENGTH = 256
