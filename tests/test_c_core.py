"""Builds the plain-C tests in tests/c with CMake and runs them (no Python involved)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _tool(name: str) -> str | None:
    beside_python = Path(sys.executable).parent / name
    return str(beside_python) if beside_python.exists() else shutil.which(name)


CMAKE = _tool("cmake")
NINJA = _tool("ninja")
C_COMPILER = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")


@pytest.mark.skipif(
    CMAKE is None or C_COMPILER is None, reason="needs cmake and a C compiler (test extra)"
)
def test_c_core_tests_pass(tmp_path: Path) -> None:
    build = tmp_path / "build"
    configure = [CMAKE, "-S", str(ROOT), "-B", str(build), "-DTOOLPARSE_BUILD_C_TESTS=ON"]
    if NINJA is not None:
        configure += ["-G", "Ninja", f"-DCMAKE_MAKE_PROGRAM={NINJA}"]
    for command in (configure, [CMAKE, "--build", str(build)]):
        result = subprocess.run(command, capture_output=True, text=True)
        assert result.returncode == 0, result.stdout + result.stderr
    ctest = Path(CMAKE).with_name("ctest")
    result = subprocess.run(
        [str(ctest), "--test-dir", str(build), "--output-on-failure"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "100% tests passed" in result.stdout
