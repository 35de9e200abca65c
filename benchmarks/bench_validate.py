"""Tool call validation: the JSON Schema libraries toolparse.agent.validate could stand on,
measured side by side on realistic tool schemas and arguments, and toolparse's own
ToolValidator on top of the one it uses.

Libraries: ``jsonschema`` (pure Python, the reference implementation most projects use),
``fastjsonschema`` (compiles each schema to Python source) and ``jsonschema_rs``
(jsonschema-rs, native).  One that is not installed is skipped.  ``toolparse`` is
toolparse.agent.validate.ToolValidator (on jsonschema-rs), whose figures include its own work:
the issues with paths, what was expected and found, and the feedback text.

The tools (see TOOLS) are what an agent is given: a weather lookup (a string, a bounded
integer, an enum), a strict calendar event (OpenAI strict mode: nested objects in an
array, a nullable object, every field required), a flight search (``$defs`` and ``$ref``,
a pattern, a nullable enum), a file write (a 16 KiB string), an SQL call (an array of
mixed types) and a few small ones.  Every library checks the same schemas, strict mode
applied beforehand.

Groups (time per round, the figure to read):

- ``validate import``: ``import <library>`` in a fresh interpreter, the interpreter's own
  start-up (``python -c pass``) subtracted; a few rounds, each a new process.
- ``validate compile``: making the validators for the whole tools list and checking one
  valid call of each tool (jsonschema builds much of its work lazily, on first use, so
  first use is included for all).
- ``validate valid <tool>``: one valid call, the verdict only.
- ``validate invalid <tool>``: one call with several errors, and the details an error
  report needs (path and keyword of each error; fastjsonschema stops at the first).

Every case checks its answer once before it is timed (valid or not, and the error paths),
so a fast wrong answer does not pass.  The table printed after pytest-benchmark's gives
the median in microseconds per library and how many times slower than jsonschema_rs each
one is.

    pytest benchmarks/bench_validate.py --benchmark-only
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import pytest

from toolparse import ToolCall
from toolparse.agent.validate import ToolValidator
from toolparse.tools import strict_schema

LIBRARIES = ("jsonschema", "fastjsonschema", "jsonschema_rs", "toolparse")
BASELINE = "jsonschema_rs"


def _function(name: str, parameters: dict[str, Any], strict: bool = False) -> dict[str, Any]:
    spec: dict[str, Any] = {"name": name, "parameters": parameters}
    if strict:
        spec["strict"] = True
    return {"type": "function", "function": spec}


STRING = {"type": "string"}
TOOLS = [
    _function(
        "get_weather",
        {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "City name"},
                "days": {"type": "integer", "minimum": 1, "maximum": 14},
                "units": {"type": "string", "enum": ["metric", "imperial"]},
            },
            "required": ["city"],
        },
    ),
    _function(
        "create_event",
        {
            "type": "object",
            "properties": {
                "title": STRING,
                "start": {"type": "string", "format": "date-time"},
                "duration_minutes": {"type": "integer"},
                "attendees": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"email": STRING, "optional": {"type": "boolean"}},
                    },
                },
                "location": {
                    "anyOf": [
                        {
                            "type": "object",
                            "properties": {"name": STRING, "address": {"type": ["string", "null"]}},
                        },
                        {"type": "null"},
                    ]
                },
                "reminders": {"type": "array", "items": {"type": "integer"}},
            },
        },
        strict=True,
    ),
    _function(
        "search_flights",
        {
            "$defs": {
                "Passenger": {
                    "type": "object",
                    "properties": {
                        "name": STRING,
                        "age": {"type": "integer", "minimum": 0},
                        "kind": {"$ref": "#/$defs/Kind"},
                    },
                    "required": ["name", "age"],
                },
                "Kind": {"type": "string", "enum": ["adult", "child", "infant"]},
            },
            "type": "object",
            "properties": {
                "origin": {"type": "string", "pattern": "^[A-Z]{3}$"},
                "destination": {"type": "string", "pattern": "^[A-Z]{3}$"},
                "date": STRING,
                "passengers": {"type": "array", "items": {"$ref": "#/$defs/Passenger"}},
                "cabin": {
                    "anyOf": [{"type": "string", "enum": ["economy", "business"]}, {"type": "null"}]
                },
            },
            "required": ["origin", "destination", "date", "passengers"],
        },
    ),
    _function(
        "write_file",
        {
            "type": "object",
            "properties": {"path": STRING, "content": STRING, "append": {"type": "boolean"}},
            "required": ["path", "content"],
            "additionalProperties": False,
        },
    ),
    _function(
        "run_sql",
        {
            "type": "object",
            "properties": {
                "query": STRING,
                "params": {
                    "type": "array",
                    "items": {"type": ["string", "number", "boolean", "null"]},
                },
                "timeout_s": {"type": "number", "exclusiveMinimum": 0},
            },
            "required": ["query"],
        },
    ),
    _function(
        "send_email",
        {
            "type": "object",
            "properties": {
                "to": {"type": "array", "items": STRING, "minItems": 1},
                "subject": {"type": "string", "maxLength": 200},
                "body": STRING,
            },
            "required": ["to", "subject", "body"],
            "additionalProperties": False,
        },
    ),
    _function(
        "list_files",
        {"type": "object", "properties": {"directory": STRING}, "required": ["directory"]},
    ),
    _function("get_time", {"type": "object", "properties": {}}),
]
NAMES = [tool["function"]["name"] for tool in TOOLS]
# The schemas as validated: strict mode applied, so every library sees the same thing.
SCHEMAS = {
    tool["function"]["name"]: (
        strict_schema(tool["function"]["parameters"])
        if tool["function"].get("strict")
        else tool["function"]["parameters"]
    )
    for tool in TOOLS
}

SOURCE = "".join(
    f'    total += row[{i % 7}] * {i}  # line {i}: a < b, "q" \\ é\n' for i in range(300)
)
VALID: dict[str, dict[str, Any]] = {
    "get_weather": {"city": "Paris", "days": 3, "units": "metric"},
    "create_event": {
        "title": "Sync",
        "start": "2025-01-01T10:00:00Z",
        "duration_minutes": 30,
        "attendees": [
            {"email": "ana@example.com", "optional": False},
            {"email": "leo@example.com", "optional": True},
        ],
        "location": {"name": "Room 1", "address": None},
        "reminders": [10, 5],
    },
    "search_flights": {
        "origin": "CDG",
        "destination": "JFK",
        "date": "2025-03-01",
        "passengers": [
            {"name": "Ana", "age": 34, "kind": "adult"},
            {"name": "Leo", "age": 4, "kind": "child"},
        ],
        "cabin": "economy",
    },
    "write_file": {"path": "src/report.py", "content": SOURCE[: 16 * 1024]},
    "run_sql": {"query": "SELECT * FROM t WHERE a = ? AND b > ?", "params": ["x", 3, None]},
    "send_email": {"to": ["ana@example.com"], "subject": "Hi", "body": "See you."},
    "list_files": {"directory": "src"},
    "get_time": {},
}
# Invalid calls and the error paths (as a set) a complete report gives for each.
INVALID: dict[str, tuple[dict[str, Any], set[tuple[Any, ...]]]] = {
    "get_weather": (
        {"city": 3, "days": "3", "units": "kelvin"},
        {("city",), ("days",), ("units",)},
    ),
    "create_event": (
        {
            **VALID["create_event"],
            "duration_minutes": "30",
            "attendees": [{"email": "ana@example.com"}],
            "notes": "x",
        },
        {("duration_minutes",), ("attendees", 0), ()},
    ),
    "search_flights": (
        {"origin": "cdg", "destination": "JFK", "passengers": [{"name": "Ana", "age": "34"}]},
        {(), ("origin",), ("passengers", 0, "age")},
    ),
}


# ---------------------------------------------------------------------------------------
# The libraries behind one interface: compile(name) -> check(arguments) -> errors


Check = Callable[[Any], list[tuple[tuple[Any, ...], str]]]


def _module(library: str) -> Any:
    name = "jsonschema_rs" if library == "toolparse" else library
    return pytest.importorskip(name)


def _compile(library: str) -> Callable[[str], Check]:
    module = _module(library)
    if library == "jsonschema":
        validator_for = module.Draft202012Validator

        def make(name: str) -> Check:
            validator = validator_for(SCHEMAS[name])

            def check(arguments: Any) -> list[tuple[tuple[Any, ...], str]]:
                if validator.is_valid(arguments):
                    return []
                return [
                    (tuple(e.absolute_path), e.validator) for e in validator.iter_errors(arguments)
                ]

            return check

        return make
    if library == "fastjsonschema":
        compile_ = module.compile
        failure = module.JsonSchemaValueException

        def make(name: str) -> Check:
            validate = compile_(SCHEMAS[name], use_formats=False)

            def check(arguments: Any) -> list[tuple[tuple[Any, ...], str]]:
                try:
                    validate(arguments)
                except failure as error:  # the first error only
                    return [(tuple(error.path[1:]), error.rule)]
                return []

            return check

        return make
    if library == "jsonschema_rs":
        validator_for = module.validator_for

        def make(name: str) -> Check:
            validator = validator_for(SCHEMAS[name], validate_formats=False, offline=True)

            def check(arguments: Any) -> list[tuple[tuple[Any, ...], str]]:
                if validator.is_valid(arguments):
                    return []
                return [
                    (tuple(e.instance_path), type(e.kind).__name__)
                    for e in validator.iter_errors(arguments)
                ]

            return check

        return make
    raise AssertionError(library)


PER_FIELD = ("required", "additionalProperties")


def _toolparse_checks() -> dict[str, Check]:
    _module("toolparse")
    validator = ToolValidator(TOOLS, format="hermes")

    def make(name: str) -> Check:
        calls: dict[int, ToolCall] = {}  # the call is the parser's output: made untimed

        def check(arguments: Any) -> list[tuple[tuple[Any, ...], str]]:
            call = calls.get(id(arguments))
            if call is None:
                call = calls[id(arguments)] = ToolCall(0, "call_0", name, arguments, "")
            result = validator.validate_call(call)
            assert result.ok or result.feedback
            # toolparse puts a missing or extra field's own name at the end of the path;
            # the libraries stop at the object that holds it.
            return [
                (issue.path[:-1] if issue.keyword in PER_FIELD else issue.path, issue.keyword)
                for issue in result.issues
            ]

        return check

    return {name: make(name) for name in NAMES}


def _checks(library: str) -> dict[str, Check]:
    if library == "toolparse":
        return _toolparse_checks()
    make = _compile(library)
    return {name: make(name) for name in NAMES}


def _describe(benchmark: Any, group: str, library: str) -> None:
    benchmark.group = group
    benchmark.extra_info.update(library=library)


# ---------------------------------------------------------------------------------------
# The report after pytest-benchmark's tables


class ValidateReport:
    name = "toolparse-validate-report"

    @pytest.hookimpl(wrapper=True)
    def pytest_terminal_summary(self, terminalreporter: Any, config: pytest.Config) -> Any:
        result = yield
        session = getattr(config, "_benchmarksession", None)
        benches = [
            b
            for b in getattr(session, "benchmarks", ())
            if b and "library" in b.extra_info and b.group.startswith("validate ")
        ]
        if not benches:
            return result
        medians: dict[str, dict[str, float]] = {}
        for bench in benches:
            medians.setdefault(bench.group, {})[bench.extra_info["library"]] = bench.stats.median
        shown = [lib for lib in LIBRARIES if any(lib in row for row in medians.values())]
        write = terminalreporter.write_line
        terminalreporter.write_sep("-", f"validation: median us per round (x {BASELINE})")
        write(f"{'group':<30}" + "".join(f"{lib:>24}" for lib in shown))
        for group in sorted(medians):
            row = medians[group]
            base = row.get(BASELINE)
            cells = []
            for lib in shown:
                if lib not in row:
                    cells.append(f"{'-':>24}")
                    continue
                ratio = f" ({row[lib] / base:.1f}x)" if base else ""
                cells.append(f"{row[lib] * 1e6:>16.2f}{ratio:>8}")
            write(f"{group:<30}" + "".join(cells))
        return result


@pytest.fixture(scope="session")
def validate_report(pytestconfig: pytest.Config) -> None:
    manager = pytestconfig.pluginmanager
    if not manager.has_plugin(ValidateReport.name):
        manager.register(ValidateReport(), ValidateReport.name)


pytestmark = pytest.mark.usefixtures("validate_report")


# ---------------------------------------------------------------------------------------
# The cases


def _start_up(code: str) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    return time.perf_counter() - started


@pytest.mark.parametrize("library", LIBRARIES[:3])
def test_validate_import(benchmark: Any, pytestconfig: pytest.Config, library: str) -> None:
    _module(library)
    _describe(benchmark, "validate import", library)
    # Each round is a new process (some 50 ms): about one per 0.1 s of --benchmark-max-time.
    max_time = float(pytestconfig.getoption("benchmark_max_time"))
    rounds = max(1, min(10, round(max_time / 0.1)))
    baseline = min(_start_up("pass") for _ in range(3))
    seconds = benchmark.pedantic(
        lambda: _start_up(f"import {library}") - baseline, rounds=rounds, iterations=1
    )
    assert seconds < 60


@pytest.mark.parametrize("library", LIBRARIES)
def test_validate_compile(benchmark: Any, library: str) -> None:
    _module(library)
    if library == "toolparse":

        def run() -> int:
            validator = ToolValidator(TOOLS, format="hermes")
            calls = [ToolCall(0, "c", n, VALID[n], "") for n in NAMES]
            return sum(validator.validate_call(c).ok for c in calls)

    else:
        make = _compile(library)

        def run() -> int:
            return sum(not make(name)(VALID[name]) for name in NAMES)

    _describe(benchmark, "validate compile", library)
    assert run() == len(NAMES)
    assert benchmark(run) == len(NAMES)


@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize("tool", ["get_weather", "create_event", "search_flights", "write_file"])
def test_validate_valid(benchmark: Any, library: str, tool: str) -> None:
    check = _checks(library)[tool]
    arguments = VALID[tool]
    _describe(benchmark, f"validate valid {tool}", library)
    assert check(arguments) == []
    assert benchmark(check, arguments) == []


@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize("tool", sorted(INVALID))
def test_validate_invalid(benchmark: Any, library: str, tool: str) -> None:
    check = _checks(library)[tool]
    arguments, paths = INVALID[tool]
    _describe(benchmark, f"validate invalid {tool}", library)
    found = {path for path, _ in check(arguments)}
    if library == "fastjsonschema":
        assert len(found) == 1 and found <= paths  # it stops at the first error
    else:
        assert found == paths, found
    assert benchmark(check, arguments)
