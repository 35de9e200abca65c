"""The baseline for scripts/valgrind.sh --python: what CPython, pytest and Hypothesis do under
memcheck on their own.  It loads and exercises what the tests do (pytest with its plugins,
parametrized tests, a failing assertion caught, Hypothesis, the standard library the tests
use) and never imports toolparse, so every error memcheck reports here is suppressed in the
real run, and none can hide one of toolparse's.  Not part of the test suite (tests/).
"""

from __future__ import annotations

import gc
import json
import random
import re
import zlib
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st


@dataclass(frozen=True)
class Piece:
    data: bytes


@pytest.mark.parametrize("size", [1, 3, 64])
def test_split_and_join(size: int) -> None:
    data = 'Zürich {"a": [1, 2.5, null]} \U0001f600'.encode()
    pieces = [Piece(data[k : k + size]) for k in range(0, len(data), size)]
    assert b"".join(p.data for p in pieces) == data
    assert json.loads(data[7:29]) == {"a": [1, 2.5, None]}
    assert data.decode("utf-8", "surrogateescape").encode("utf-8", "surrogateescape") == data
    assert zlib.crc32(data) == zlib.crc32(b"".join(p.data for p in pieces))
    assert [b - a for a, b in pairwise(range(0, 9, 3))] == [3, 3]


def test_files_and_patterns() -> None:
    text = Path(__file__).read_text(encoding="utf-8")
    assert re.search(r"^def test_files_and_patterns", text, flags=re.M)
    rng = random.Random(7)
    assert sorted(rng.sample(range(100), 5)) != []


def test_a_caught_failure() -> None:
    with pytest.raises(AssertionError):
        assert json.dumps({"k": 1}) == "{}"
    with pytest.raises(ValueError):
        json.loads("{")


@settings(max_examples=25, deadline=None)
@given(st.binary(), st.lists(st.integers(min_value=0, max_value=8)))
def test_hypothesis(data: bytes, sizes: list[int]) -> None:
    assert data.decode("utf-8", "replace") is not None
    assert sum(sizes) >= 0
    gc.collect()


class Holder:
    __slots__ = ("value",)

    def __init__(self, value: int) -> None:
        self.value = value


def test_zeros_made_from_an_unset_digit() -> None:
    # CPython 3.11 makes these zeros by way of an unset digit (0 times it), and memcheck
    # reports their address as unset wherever it goes: sent down the common paths here.
    zeros = [int.from_bytes(b"\0\0", "big"), int("0"), 6 & 1, 7 - 7, (1 << 40) - (1 << 40)]
    held = [Holder(zero) for zero in zeros]
    table = {zero: str(zero) for zero in zeros}
    assert sum(h.value for h in held) + len(table) == 1
    assert all(zero == 0 and not zero and hash(zero) == 0 for zero in zeros)
    assert json.dumps(zeros) == "[0, 0, 0, 0, 0]" and f"{zeros[0]:d}" == "0"
    assert sorted([*zeros, 1, -1])[1:-1] == zeros and max(zeros) < 1
    del held, table
    gc.collect()
