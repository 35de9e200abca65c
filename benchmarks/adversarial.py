"""Hostile output, time and peak memory: python benchmarks/adversarial.py [--quick].

Each shape of tests/core/test_adversarial.py is fed to a native hermes (or qwen3_coder) stream
at two sizes, n and 10n, in 4 KiB pieces made on the fly (the input is never held whole),
each run in a child process of its own, so that its peak memory is its own and every run
pays for fresh memory alike (a second run in the same process would reuse the pages of
the first for a 10 MiB message but not for a 100 MiB one).  The table gives the time
(best of 3 runs), the time per input byte, the ratio of the two sizes' times (linear:
about 10), and the peak memory the parse added (ru_maxrss after minus before).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import time
from collections.abc import Callable, Iterator

try:
    import toolparse
    from toolparse import Limits, StreamParser
    from toolparse.limits import MAX_DEPTH_CEILING
except ImportError as error:  # pragma: no cover - a message beats a traceback here
    sys.exit(f"adversarial.py needs toolparse installed (pip install .): {error}")

PIECE = 4096
CALL_HEAD = b'<tool_call>\n{"name": "f", "arguments": {"text": "'
CALL_TAIL = b'"}}\n</tool_call>'


def repeat(unit: bytes, n: int, head: bytes = b"", tail: bytes = b"") -> Iterator[bytes]:
    """head, then unit repeated up to n bytes in PIECE-sized pieces, then tail."""
    yield head
    block = unit * max(1, PIECE // len(unit))
    sent = 0
    while sent < n:
        piece = block[: n - sent]
        sent += len(piece)
        yield piece
    yield tail


def random_bytes(n: int) -> Iterator[bytes]:
    rng = random.Random(1)
    for at in range(0, n, PIECE):
        yield rng.randbytes(min(PIECE, n - at))


BIG = Limits(
    max_argument_bytes=1 << 31,
    max_pending_bytes=1 << 31,
    max_tool_calls=1 << 31,
    max_depth=MAX_DEPTH_CEILING,
)
ONE_CALL = b'<tool_call>\n{"name": "f", "arguments": {"i": 1}}\n</tool_call>'
AFTER_PARAM = b"<tool_call>\n<function=f>\n<parameter=a>\nx</parameter>"

# name -> (format, limits, input of n bytes)
SHAPES: dict[str, tuple[str, Limits | None, Callable[[int], Iterator[bytes]]]] = {
    "nested [ in a call": ("hermes", None, lambda n: repeat(b"[", n, CALL_HEAD[:-1])),
    "nested [ (the deepest limit)": ("hermes", BIG, lambda n: repeat(b"[", n, CALL_HEAD[:-1])),
    "long argument string": ("hermes", BIG, lambda n: repeat(b"x", n, CALL_HEAD, CALL_TAIL)),
    "long argument (default limit)": (
        "hermes",
        None,
        lambda n: repeat(b"x", n, CALL_HEAD, CALL_TAIL),
    ),
    "<tool_c repeated": ("hermes", None, lambda n: repeat(b"<tool_c", n)),
    "<\uff5ctool\u2581 repeated (deepseek_v3)": (
        "deepseek_v3",
        None,
        lambda n: repeat("<\uff5ctool\u2581".encode(), n),
    ),
    "invalid UTF-8 in text": ("hermes", None, lambda n: repeat(b"ab\xc0\x80\xff\xed\xa0\x80", n)),
    "NUL bytes": ("hermes", None, lambda n: repeat(b"\x00", n)),
    "calls, one after another": ("hermes", BIG, lambda n: repeat(ONE_CALL, n)),
    "whitespace after </parameter>": (
        "qwen3_coder",
        BIG,
        lambda n: repeat(b" ", n, AFTER_PARAM),
    ),
    "random bytes": ("hermes", None, random_bytes),
}


def measure_child(shape: str, size: int) -> dict[str, float]:
    """In this process: parse the shape at this size once; the time and the peak memory
    the parse added."""
    fmt, limits, make = SHAPES[shape]
    parser = StreamParser(fmt, limits=limits)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    for piece in make(size):
        parser.feed(piece)
    parser.finish()
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    return {"seconds": seconds, "peak_kib": float(peak)}


def measure(shape: str, size: int, runs: int = 3) -> dict[str, float]:
    """The best time and the largest peak of `runs` runs, each in a new process."""
    results = []
    for _ in range(runs):
        child = subprocess.run(
            [sys.executable, __file__, "--child", shape, str(size)],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": "0"},
        )
        results.append(json.loads(child.stdout))
    return {
        "seconds": min(r["seconds"] for r in results),
        "peak_kib": max(r["peak_kib"] for r in results),
    }


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--quick", action="store_true", help="small inputs")
    options.add_argument("--child", nargs=2, metavar=("SHAPE", "SIZE"), help=argparse.SUPPRESS)
    args = options.parse_args()
    if args.child:
        print(json.dumps(measure_child(args.child[0], int(args.child[1]))))
        return
    small = 1 << 18 if args.quick else 10 << 20
    print(
        f"toolparse {toolparse.__version__}, Python {sys.version.split()[0]}; "
        f"native engine, {PIECE}-byte feeds, best of 3, sizes {small} and {10 * small} bytes"
    )
    header = f"{'shape':36} {'n':>10} {'seconds':>8} {'ns/byte':>8} {'10n/n':>6} {'peak MiB':>9}"
    print(header)
    print("-" * len(header))
    for shape in SHAPES:
        previous = None
        for size in (small, 10 * small):
            result = measure(shape, size)
            per_byte = result["seconds"] / size * 1e9
            ratio = f"{result['seconds'] / previous:6.1f}" if previous else f"{'':6}"
            print(
                f"{shape:36} {size:10d} {result['seconds']:8.3f} {per_byte:8.1f} {ratio} "
                f"{result['peak_kib'] / 1024:9.1f}"
            )
            previous = result["seconds"]


if __name__ == "__main__":
    main()
