"""pytest-benchmark setup: the two engines, cached inputs sized per engine, and a summary of
throughput per byte (the inputs of the two engines may differ in size)."""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest

import data

ENGINES = {"native": "toolparse.primitives", "reference": "toolparse.reference"}

# The native engines get 1 MiB everywhere.  The reference engines run at a few MB/s, and
# 4-byte feeds cost them a Python call per feed on top, so they get less: enough for a
# stable figure, small enough that the quick mode of the README stays within seconds.
NATIVE_BYTES = data.MIB
REFERENCE_BYTES = {"whole": 256 * 1024, "4-byte": 64 * 1024}


@dataclass(frozen=True)
class Engine:
    name: str
    module: ModuleType


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("toolparse benchmarks").addoption(
        "--bench-full-reference",
        action="store_true",
        help="feed the reference engines the same 1 MiB inputs as the native ones (slow)",
    )


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Module | None:
    # Benchmark modules are named bench_*.py so that the test run never collects them;
    # here they are collected like test modules (a path given on the command line already
    # is, by pytest itself).
    if (
        file_path.suffix == ".py"
        and file_path.name.startswith("bench_")
        and not parent.session.isinitpath(file_path)
    ):
        return pytest.Module.from_parent(parent, path=file_path)
    return None


@pytest.fixture(scope="session", params=tuple(ENGINES))
def engine(request: pytest.FixtureRequest) -> Engine:
    return Engine(request.param, importlib.import_module(ENGINES[request.param]))


Generator = Callable[[int], bytes]


@functools.cache
def _generate(generator: Generator, size: int) -> bytes:
    return generator(size)


@pytest.fixture(scope="session")
def make_input(request: pytest.FixtureRequest) -> Callable[[Generator, str, str], bytes]:
    """make_input(generator, engine_name, feed) -> the input for that engine and feed size."""
    full_reference = request.config.getoption("--bench-full-reference")

    def make(generator: Generator, engine_name: str, feed: str) -> bytes:
        if engine_name == "native" or full_reference:
            return _generate(generator, NATIVE_BYTES)
        return _generate(generator, REFERENCE_BYTES[feed])

    return make


@pytest.hookimpl(trylast=True)
def pytest_terminal_summary(terminalreporter, config: pytest.Config) -> None:
    session = getattr(config, "_benchmarksession", None)
    benchmarks = [b for b in getattr(session, "benchmarks", ()) if b and "bytes" in b.extra_info]
    if not benchmarks:
        return
    medians: dict[tuple[str, str], float] = {}
    for bench in benchmarks:
        info = bench.extra_info
        medians[(bench.group, info["engine"])] = bench.stats.median / info["bytes"]
    write = terminalreporter.write_line
    terminalreporter.write_sep("-", "throughput per byte (median round)")
    write(f"{'group':<36} {'engine':<10} {'bytes':>9} {'MB/s':>10} {'ns/feed':>10} {'native x':>9}")
    for bench in sorted(benchmarks, key=lambda b: (b.group, b.extra_info["engine"])):
        info = bench.extra_info
        per_byte = bench.stats.median / info["bytes"]
        # Per feed only for 4-byte feeds: for one whole-buffer feed it is just the time.
        ns_per_feed = "-"
        if info["feeds"] > 1:
            ns_per_feed = f"{bench.stats.median / info['feeds'] * 1e9:.0f}"
        reference = medians.get((bench.group, "reference"))
        speedup = (
            f"{reference / per_byte:8.1f}x" if info["engine"] == "native" and reference else ""
        )
        write(
            f"{bench.group:<36} {info['engine']:<10} {info['bytes']:>9} "
            f"{1e-6 / per_byte:>10.1f} {ns_per_feed:>10} {speedup:>9}"
        )
