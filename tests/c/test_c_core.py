"""Builds the plain-C tests in tests/c with CMake and runs them (no Python involved), then
runs the out-of-memory test on a few real formats' programs."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import toolparse
from toolparse.stream import tools_blob

ROOT = Path(__file__).resolve().parents[2]


def _tool(name: str) -> str | None:
    beside_python = Path(sys.executable).parent / name
    return str(beside_python) if beside_python.exists() else shutil.which(name)


CMAKE = _tool("cmake")
NINJA = _tool("ninja")
C_COMPILER = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")

pytestmark = pytest.mark.skipif(
    CMAKE is None or C_COMPILER is None, reason="needs cmake and a C compiler (test extra)"
)

# Formats whose responses take each way a value goes through the core: JSON arguments
# (hermes), XML parameters typed by the tool table (qwen3_coder), Python literals
# (pythonic), Gemma 4 values (gemma4) and MiniMax-M3 tag trees with nested schemas.
ALLOC_FORMATS = ("hermes", "qwen3_coder", "pythonic", "gemma4", "minimax_m3")


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    assert CMAKE is not None
    build = tmp_path_factory.mktemp("c-tests") / "build"
    configure = [CMAKE, "-S", str(ROOT), "-B", str(build), "-DTOOLPARSE_BUILD_C_TESTS=ON"]
    if NINJA is not None:
        configure += ["-G", "Ninja", f"-DCMAKE_MAKE_PROGRAM={NINJA}"]
    for command in (configure, [CMAKE, "--build", str(build)]):
        result = subprocess.run(command, capture_output=True, text=True)
        assert result.returncode == 0, result.stdout + result.stderr
    return build


def test_c_core_tests_pass(build: Path) -> None:
    assert CMAKE is not None
    ctest = Path(CMAKE).with_name("ctest")
    result = subprocess.run(
        [str(ctest), "--test-dir", str(build), "--output-on-failure"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "100% tests passed" in result.stdout


def _schema(value: Any) -> dict[str, Any]:
    """A schema the value fits, strings typed number-or-string (the typing tries both)."""
    if isinstance(value, bool):
        return {"type": "boolean"}
    if isinstance(value, int):
        return {"type": "integer"}
    if isinstance(value, float):
        return {"type": "number"}
    if isinstance(value, str):
        return {"type": ["number", "string"]}
    if isinstance(value, list):
        return {"type": "array", "items": _schema(value[0]) if value else {}}
    if isinstance(value, dict):
        return {"type": "object", "properties": {k: _schema(v) for k, v in value.items()}}
    return {"type": "null"}


def _tools_for(text: str, name: str) -> list[dict[str, Any]]:
    """A tool list with every call the response makes, typed by its arguments."""
    tools: dict[str, dict[str, Any]] = {}
    for call in toolparse.parse(text, name).tool_calls:
        properties = tools.setdefault(call.name, {})
        properties.update({k: _schema(v) for k, v in (call.arguments or {}).items()})
    return [
        {
            "type": "function",
            "function": {"name": tool, "parameters": _schema({}) | {"properties": props}},
        }
        for tool, props in tools.items()
    ]


def test_out_of_memory_on_real_formats(build: Path, tmp_path: Path) -> None:
    """test_alloc_failure fails every allocation in turn on these formats' programs too:
    each case is a prefix of the files the C test reads (.program, .tools, .output)."""
    cases = []
    for name in ALLOC_FORMATS:
        fmt = toolparse.get_format(name)
        text = fmt.examples[0]
        prefix = tmp_path / name
        prefix.with_suffix(".program").write_bytes(fmt.program_bytes)
        prefix.with_suffix(".tools").write_bytes(tools_blob(_tools_for(text, name)))
        prefix.with_suffix(".output").write_bytes(text.encode("utf-8"))
        cases.append(str(prefix))
    result = subprocess.run(
        [str(build / "test_alloc_failure"), *cases], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 failed" in result.stdout
    for name in ALLOC_FORMATS:  # every scenario ran on every format
        assert sum(f" {name} " in line for line in result.stdout.splitlines()) == 6
