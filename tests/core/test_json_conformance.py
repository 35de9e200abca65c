"""JSONTestSuite conformance of the strict scanner, whole and under many chunkings.

y_ files must be accepted, n_ files rejected; for i_ files the specification decides
(numbers of any size are accepted, invalid UTF-8 and unpaired surrogates are not), and the
two engines must agree. A document is accepted when its one value completes and only JSON
whitespace follows it.
"""

from __future__ import annotations

import random
import zlib
from pathlib import Path

import pytest

import toolparse
import toolparse.primitives
import toolparse.reference
from helpers import (
    DocumentResult,
    byte_by_byte,
    every_split,
    random_partition,
    scan_document,
)

SUITE = Path(__file__).parent.parent / "data" / "jsontestsuite"

FILES = sorted(path for path in SUITE.glob("*.json") if path.name[:2] in ("y_", "n_", "i_"))
ENGINES = {"native": toolparse.primitives, "reference": toolparse.reference}
# The two stress files (100,000 and 250,001 bytes) get only a few coarse chunkings.
LARGE = 10_000
ALL_SPLITS_UP_TO = 64

# Implementation-defined files, decided by docs/primitives.md: numbers of any magnitude
# are syntax only; strings must be valid UTF-8 with paired surrogate escapes; only ASCII
# outside strings (so a BOM or UTF-16 is an unexpected byte); 500 levels fit in 512.
I_EXPECTED = {
    "i_number_double_huge_neg_exp.json": None,
    "i_number_huge_exp.json": None,
    "i_number_neg_int_huge_exp.json": None,
    "i_number_pos_double_huge_exp.json": None,
    "i_number_real_neg_overflow.json": None,
    "i_number_real_pos_overflow.json": None,
    "i_number_real_underflow.json": None,
    "i_number_too_big_neg_int.json": None,
    "i_number_too_big_pos_int.json": None,
    "i_number_very_big_negative_int.json": None,
    "i_object_key_lone_2nd_surrogate.json": "lone_surrogate",
    "i_string_1st_surrogate_but_2nd_missing.json": "lone_surrogate",
    "i_string_1st_valid_surrogate_2nd_invalid.json": "lone_surrogate",
    "i_string_UTF-16LE_with_BOM.json": "unexpected_byte",
    "i_string_UTF-8_invalid_sequence.json": "invalid_utf8",
    "i_string_UTF8_surrogate_U+D800.json": "invalid_utf8",
    "i_string_incomplete_surrogate_and_escape_valid.json": "lone_surrogate",
    "i_string_incomplete_surrogate_pair.json": "lone_surrogate",
    "i_string_incomplete_surrogates_escape_valid.json": "lone_surrogate",
    "i_string_invalid_lonely_surrogate.json": "lone_surrogate",
    "i_string_invalid_surrogate.json": "lone_surrogate",
    "i_string_invalid_utf-8.json": "invalid_utf8",
    "i_string_inverted_surrogates_U+1D11E.json": "lone_surrogate",
    "i_string_iso_latin_1.json": "invalid_utf8",
    "i_string_lone_second_surrogate.json": "lone_surrogate",
    "i_string_lone_utf8_continuation_byte.json": "invalid_utf8",
    "i_string_not_in_unicode_range.json": "invalid_utf8",
    "i_string_overlong_sequence_2_bytes.json": "invalid_utf8",
    "i_string_overlong_sequence_6_bytes.json": "invalid_utf8",
    "i_string_overlong_sequence_6_bytes_null.json": "invalid_utf8",
    "i_string_truncated-utf-8.json": "invalid_utf8",
    "i_string_utf16BE_no_BOM.json": "unexpected_byte",
    "i_string_utf16LE_no_BOM.json": "unexpected_byte",
    "i_structure_500_nested_arrays.json": None,
    "i_structure_UTF-8_BOM_empty_object.json": "unexpected_byte",
}


def by_name(paths):
    return pytest.mark.parametrize("path", paths, ids=[path.name for path in paths])


def test_suite_is_complete():
    counts = {prefix: sum(p.name.startswith(prefix) for p in FILES) for prefix in ("y_", "n_")}
    assert counts == {"y_": 95, "n_": 188}
    assert sorted(p.name for p in FILES if p.name.startswith("i_")) == sorted(I_EXPECTED)


@by_name(FILES)
def test_verdict(path):
    data = path.read_bytes()
    results = {name: scan_document(module, data) for name, module in ENGINES.items()}
    assert results["native"] == results["reference"]
    result = results["native"]
    if path.name.startswith("y_"):
        assert result.accepted, result
        assert result.relaxations == ()
    elif path.name.startswith("n_"):
        assert not result.accepted, result
        assert result.verdict in ("complete", "incomplete", "error")
    else:
        reason = I_EXPECTED[path.name]
        if reason is None:
            assert result.accepted, result
        else:
            assert not result.accepted
            assert result.error is not None
            assert result.error[1] == reason, result


def chunkings_for(name: str, length: int) -> list[list[int]]:
    rng = random.Random(zlib.crc32(name.encode()))  # the same chunkings on every run
    if length > LARGE:
        return [random_partition(rng, length, max_piece=piece) for piece in (4096, 997, 64)]
    chunks = [byte_by_byte(length)]
    chunks += [random_partition(rng, length, max_piece=piece) for piece in (2, 7, 31)]
    if length <= ALL_SPLITS_UP_TO:
        chunks += every_split(length)
        chunks += [[size] * (length // size) for size in range(2, length)]
    return chunks


@by_name(FILES)
def test_chunking_does_not_change_the_verdict(path):
    data = path.read_bytes()
    for module in ENGINES.values():
        at_once: DocumentResult = scan_document(module, data)
        for chunks in chunkings_for(path.name, len(data)):
            assert scan_document(module, data, chunks) == at_once, chunks


def test_deepest_files_stop_at_the_depth_limit():
    for name in ("n_structure_100000_opening_arrays.json", "n_structure_open_array_object.json"):
        data = (SUITE / name).read_bytes()
        for module in ENGINES.values():
            result = scan_document(module, data)
            assert result.verdict == "error"
            assert result.error[1] == "limit"
            deeper = scan_document(module, data, max_depth=2**20)
            assert deeper.verdict == "incomplete"
            assert deeper.error is None
