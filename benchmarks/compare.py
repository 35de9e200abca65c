"""Native against reference, without pytest: python benchmarks/compare.py [--quick].

Times the cases of bench_trie.py and bench_json.py with time.perf_counter (garbage collector
off, several repeats) and prints, per case and engine, the whole-buffer throughput, the cost
of one 4-byte feed, and how many times faster the native engine is.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import data  # the generators sit beside this script

try:
    import toolparse
    import toolparse.reference
except ImportError as error:  # pragma: no cover - a message beats a traceback here
    sys.exit(f"compare.py needs toolparse installed (pip install .): {error}")

ENGINES = {"native": toolparse, "reference": toolparse.reference}


@dataclass(frozen=True)
class Settings:
    native_bytes: int
    reference_bytes: int  # whole-buffer feeds
    reference_feed_bytes: int  # 4-byte feeds: a Python call per feed on top
    repeats: int


# By default the whole-buffer inputs are the same for both engines.
DEFAULT = Settings(data.MIB, data.MIB, 128 * 1024, repeats=7)
QUICK = Settings(256 * 1024, 32 * 1024, 8 * 1024, repeats=3)


@dataclass(frozen=True)
class Timing:
    median: float  # seconds per run
    best: float


def measure(run: Callable[[], object], repeats: int) -> Timing:
    run()  # warm-up: first-touch costs and lazy initialisation stay out of the figures
    times = []
    gc.collect()
    gc.disable()
    try:
        for _ in range(repeats):
            start = time.perf_counter()
            run()
            times.append(time.perf_counter() - start)
    finally:
        gc.enable()
    return Timing(statistics.median(times), min(times))


def trie_runs(module, payload: bytes) -> tuple[Callable[[], object], Callable[[], object]]:
    trie = module.MarkerTrie(list(data.MARKERS))
    pieces = data.chunks(payload, 4)

    def whole() -> object:
        matcher = trie.matcher()
        return matcher.feed(payload) + matcher.finish()

    def four_byte() -> object:
        matcher = trie.matcher()
        feed = matcher.feed
        for piece in pieces:
            feed(piece)
        return matcher.finish()

    return whole, four_byte


def json_runs(module, payload: bytes) -> tuple[Callable[[], object], Callable[[], object]]:
    scanner_type = module.JsonScanner
    pieces = data.chunks(payload, 4)

    def whole() -> object:
        return scanner_type("strict").feed(payload)

    def four_byte() -> object:
        scanner = scanner_type("strict")
        feed = scanner.feed
        for piece in pieces:
            feed(piece)
        return scanner.end

    return whole, four_byte


CASES = [
    *((f"trie {name}", generator, trie_runs) for name, generator in data.TRIE_INPUTS.items()),
    *((f"json {name}", generator, json_runs) for name, generator in data.JSON_INPUTS.items()),
]


@dataclass(frozen=True)
class Row:
    case: str
    engine: str
    whole_mb_s: float  # median
    whole_best_mb_s: float
    feed_ns: float  # median, per 4-byte feed


def run_case(name: str, generator, make_runs, settings: Settings) -> list[Row]:
    rows = []
    for engine, module in ENGINES.items():
        native = engine == "native"
        whole_input = generator(settings.native_bytes if native else settings.reference_bytes)
        feed_input = generator(settings.native_bytes if native else settings.reference_feed_bytes)
        whole, _ = make_runs(module, whole_input)
        _, four_byte = make_runs(module, feed_input)
        whole_timing = measure(whole, settings.repeats)
        feed_timing = measure(four_byte, settings.repeats)
        feeds = (len(feed_input) + 3) // 4
        rows.append(
            Row(
                name,
                engine,
                len(whole_input) / whole_timing.median / 1e6,
                len(whole_input) / whole_timing.best / 1e6,
                feed_timing.median / feeds * 1e9,
            )
        )
    return rows


def print_table(rows: list[Row]) -> None:
    header = (
        f"{'case':<22} {'engine':<10} {'MB/s whole':>11} {'(best)':>9} "
        f"{'ns/4-byte feed':>15} {'native/ref whole':>17} {'native/ref feed':>16}"
    )
    print(header)
    print("-" * len(header))
    by_case: dict[str, dict[str, Row]] = {}
    for row in rows:
        by_case.setdefault(row.case, {})[row.engine] = row
    for row in rows:
        ratios = ("", "")
        reference = by_case[row.case].get("reference")
        if row.engine == "native" and reference:
            # Both as "times faster": throughput ratio, and cost ratio per feed.
            ratios = (
                f"{row.whole_mb_s / reference.whole_mb_s:.1f}x",
                f"{reference.feed_ns / row.feed_ns:.1f}x",
            )
        print(
            f"{row.case:<22} {row.engine:<10} {row.whole_mb_s:>11.1f} "
            f"{row.whole_best_mb_s:>9.1f} {row.feed_ns:>15.0f} {ratios[0]:>17} {ratios[1]:>16}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small inputs, few repeats")
    parser.add_argument("--repeats", type=int, help="timed runs per measurement")
    args = parser.parse_args(argv)
    settings = QUICK if args.quick else DEFAULT
    if args.repeats:
        settings = Settings(
            settings.native_bytes,
            settings.reference_bytes,
            settings.reference_feed_bytes,
            max(1, args.repeats),
        )
    print(
        f"toolparse {toolparse.__version__}, Python {sys.version.split()[0]}; inputs: native "
        f"{settings.native_bytes // 1024} KiB, reference {settings.reference_bytes // 1024} KiB "
        f"whole / {settings.reference_feed_bytes // 1024} KiB in 4-byte feeds; "
        f"median of {settings.repeats} runs"
    )
    rows = []
    for name, generator, make_runs in CASES:
        rows += run_case(name, generator, make_runs, settings)
    print_table(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
