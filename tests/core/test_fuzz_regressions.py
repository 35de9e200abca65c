"""Every input under fuzz/regressions/ replayed through the Python API.

Each file is a fuzz input (fuzz/differential.py describes its 4-byte header): a finding of
one of the fuzz targets, kept when it was found, or a hand-picked hard case.  Replaying one
parses it on both engines, whole and in the input's chunking, by token ids and, where the
header asks, through a BatchParser: no crash, the engines and chunkings agree, and no
exception but the documented ValueError that the check itself provokes.  A finding whose
bug is not fixed yet is listed in fuzz/known_findings.txt and expected to fail until then.
Under the sanitizers, `scripts/fuzz.sh replay fuzz/regressions` replays them through both
targets.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

FUZZ_DIR = Path(__file__).resolve().parents[2] / "fuzz"
REGRESSIONS_DIR = FUZZ_DIR / "regressions"
KNOWN_FINDINGS = FUZZ_DIR / "known_findings.txt"
NO_FUZZ_DIR = "no fuzz/ folder beside tests/ (an installed copy of the tests)"


def regressions() -> list[Path]:
    if not REGRESSIONS_DIR.is_dir():
        return []
    return sorted(p for p in REGRESSIONS_DIR.iterdir() if p.is_file() and p.suffix != ".md")


def known_findings() -> dict[str, str]:
    """The api target's findings not fixed yet: file name -> why it fails."""
    if not KNOWN_FINDINGS.is_file():
        return {}
    known = {}
    for line in KNOWN_FINDINGS.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            target, name, reason = line.split(maxsplit=2)
            if target == "api":
                known[name] = reason
    return known


def cases() -> list[Any]:
    known = known_findings()
    return [
        pytest.param(
            path,
            id=path.name,
            marks=[pytest.mark.xfail(reason=known[path.name], strict=True)]
            if path.name in known
            else [],
        )
        for path in regressions()
    ]


@pytest.fixture(scope="module")
def differential() -> ModuleType:
    if not FUZZ_DIR.is_dir():
        pytest.skip(NO_FUZZ_DIR)
    sys.path.insert(0, str(FUZZ_DIR))
    try:
        return importlib.import_module("differential")
    finally:
        sys.path.remove(str(FUZZ_DIR))


def test_the_regressions_are_there() -> None:
    if not FUZZ_DIR.is_dir():
        pytest.skip(NO_FUZZ_DIR)
    assert len(regressions()) >= 3
    assert set(known_findings()) <= {p.name for p in regressions()}


@pytest.mark.parametrize("path", cases())
def test_a_regression_replays_cleanly(differential: ModuleType, path: Path) -> None:
    differential.check(path.read_bytes())
