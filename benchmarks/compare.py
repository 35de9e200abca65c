"""Native against reference, without pytest: python benchmarks/compare.py [--quick].

Times the cases of bench_trie.py, bench_json.py and bench_stream.py with time.perf_counter
(garbage collector off, several repeats) and prints two tables.  Per case and engine: for the
trie and the scanner, the whole-buffer throughput, the cost of one 4-byte feed, and how many
times faster the native engine is; for StreamParser, the cost of one 4-byte token, the same
ratio, and for the long content response the cost over its last tenth against its first.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import json
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import data  # the generators sit beside this script

try:
    import toolparse
    import toolparse.primitives
    import toolparse.reference
except ImportError as error:  # pragma: no cover - a message beats a traceback here
    sys.exit(f"compare.py needs toolparse installed (pip install .): {error}")

ENGINES = {"native": toolparse.primitives, "reference": toolparse.reference}


@dataclass(frozen=True)
class Settings:
    native_bytes: int
    reference_bytes: int  # whole-buffer feeds
    reference_feed_bytes: int  # 4-byte feeds: a Python call per feed on top
    repeats: int
    # StreamParser: the long content response of the reference engine (the native one gets
    # native_bytes), and the fewest tokens timed per run, per engine: a shorter response is
    # fed several times per run, each time to a new parser.
    reference_stream_bytes: int
    run_tokens: dict[str, int]


# By default the whole-buffer inputs are the same for both engines.
DEFAULT = Settings(
    data.MIB,
    data.MIB,
    128 * 1024,
    repeats=7,
    reference_stream_bytes=128 * 1024,
    run_tokens={"native": 64 * 1024, "reference": 8 * 1024},
)
QUICK = Settings(
    256 * 1024,
    32 * 1024,
    8 * 1024,
    repeats=3,
    reference_stream_bytes=32 * 1024,
    run_tokens={"native": 16 * 1024, "reference": 2 * 1024},
)


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


# -- StreamParser ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Response:
    """A response for StreamParser: `head` is fed before the timing starts, `body` is timed
    (4-byte tokens), `tail` is fed after it; `expected` is what the message must say."""

    format: str
    tools: list[dict[str, Any]] | None
    head: bytes
    body: bytes
    tail: bytes
    expected: tuple


def content_response(size: int) -> Response:
    payload = data.content(size)
    return Response("hermes", None, b"", payload, b"", (payload.decode(), None, [], []))


def arguments_response(size: int) -> Response:
    arguments = data.call_arguments(size)
    call = (data.HERMES_CALL_NAME, json.loads(arguments))
    head, tail = data.HERMES_CALL
    return Response("hermes", None, head, arguments, tail, (None, None, [call], []))


def coder_response(size: int) -> Response:
    code = data.source_code(size)
    call = ("write_file", {"path": data.WRITE_FILE_PATH, "content": code.decode()})
    head, tail = data.CODER_CALL
    return Response(
        "qwen3_coder", data.WRITE_FILE_TOOLS, head, code, tail, (None, None, [call], [])
    )


def outcome(message: toolparse.Message) -> tuple:
    """What the check compares: content, reasoning, (name, arguments) of each call, errors."""
    return (
        message.content,
        message.reasoning_content,
        [(call.name, call.arguments) for call in message.tool_calls],
        message.errors,
    )


@dataclass(frozen=True)
class StreamRow:
    case: str
    engine: str
    tokens: int  # timed tokens per response
    ns: float  # per token, median run
    best_ns: float
    flatness: float | None  # last tenth / first tenth of the response, median run


def measure_stream(
    case: str, engine: str, response: Response, settings: Settings, flatness: bool
) -> StreamRow:
    """Per-token cost of the body: each run feeds new parsers (made, and fed the head,
    outside the timing) until it has timed run_tokens tokens; one warm-up run, then
    `repeats` runs with the garbage collector off.  The first and last tenth of the body are
    timed apart too."""
    head = data.chunks(response.head, 4)
    body = data.chunks(response.body, 4)
    tail = data.chunks(response.tail, 4)
    tenth = max(1, len(body) // 10)
    first, middle, last = body[:tenth], body[tenth:-tenth], body[-tenth:]

    def run() -> tuple[float, float, float]:
        timed = first_seconds = last_seconds = 0.0
        tokens = 0
        while True:
            parser = toolparse.StreamParser(response.format, tools=response.tools, engine=engine)
            feed = parser.feed
            for piece in head:
                feed(piece)
            whole, first_part, last_part = data.feed_timed(feed, first, middle, last)
            timed += whole
            first_seconds += first_part
            last_seconds += last_part
            tokens += len(body)
            if tokens >= settings.run_tokens[engine]:
                break
        # A fast wrong answer must not pass: the last parser finishes the response.
        for piece in tail:
            feed(piece)
        parser.finish()
        if outcome(parser.message) != response.expected:
            raise AssertionError(f"{engine} {response.format}: unexpected {parser.message!r}")
        return timed / tokens, first_seconds / len(first), last_seconds / len(last)

    run()
    runs = []
    gc.collect()
    gc.disable()
    try:
        for _ in range(settings.repeats):
            runs.append(run())
    finally:
        gc.enable()
    per_token = [r[0] for r in runs]
    return StreamRow(
        case,
        engine,
        len(body),
        statistics.median(per_token) * 1e9,
        min(per_token) * 1e9,
        statistics.median(r[2] / r[1] for r in runs) if flatness else None,
    )


def stream_cases(settings: Settings) -> list[tuple[str, dict[str, Response], bool]]:
    """(name, response per engine, whether its flatness is shown): the flatness of the long
    content response only, the text of the others changes along the way."""

    def same(response: Response) -> dict[str, Response]:
        return dict.fromkeys(ENGINES, response)

    content = {
        "native": content_response(settings.native_bytes),
        "reference": content_response(settings.reference_stream_bytes),
    }
    return [
        ("content", content, True),
        *(
            (f"args {size // 1024} KiB", same(arguments_response(size)), False)
            for size in data.ARGUMENT_SIZES.values()
        ),
        (
            f"qwen3_coder {data.CODER_SIZE // 1024} KiB",
            same(coder_response(data.CODER_SIZE)),
            False,
        ),
    ]


def run_stream(settings: Settings) -> list[StreamRow]:
    rows = []
    for name, responses, flat in stream_cases(settings):
        for engine, response in responses.items():
            rows.append(measure_stream(name, engine, response, settings, flat))
    return rows


def print_stream_table(rows: list[StreamRow]) -> None:
    header = (
        f"{'stream, 4-byte tokens':<22} {'engine':<10} {'tokens':>8} {'ns/token':>9} "
        f"{'(best)':>9} {'native/ref':>11} {'end/start':>10}"
    )
    print(header)
    print("-" * len(header))
    reference = {row.case: row for row in rows if row.engine == "reference"}
    for row in rows:
        ratio = ""
        if row.engine == "native" and row.case in reference:
            ratio = f"{reference[row.case].ns / row.ns:.1f}x"
        flatness = "" if row.flatness is None else f"{row.flatness:.2f}"
        print(
            f"{row.case:<22} {row.engine:<10} {row.tokens:>8} {row.ns:>9.0f} "
            f"{row.best_ns:>9.0f} {ratio:>11} {flatness:>10}"
        )


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
        settings = dataclasses.replace(settings, repeats=max(1, args.repeats))
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
    print()
    print(
        f"StreamParser.feed per 4-byte token; content: native {settings.native_bytes // 1024} "
        f"KiB, reference {settings.reference_stream_bytes // 1024} KiB; at least "
        f"{settings.run_tokens['native']} / {settings.run_tokens['reference']} tokens per run"
    )
    print_stream_table(run_stream(settings))
    return 0


if __name__ == "__main__":
    sys.exit(main())
