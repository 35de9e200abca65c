"""BatchParser per decode step: python benchmarks/batch.py [--quick].

For 1, 64, 256 and 1024 concurrent streams, each step feeds one token id to every stream
(`BatchParser.feed_slots`, one call into the core with the GIL released) and the table
gives the cost per stream per step: the step alone (its events stay in the core until
read), the step with every event read as objects, and the same tokens fed one stream at
a time (`StreamParser.feed_tokens` in a Python loop).  Two phases of a hermes response: visible
content, and the inside of a tool call's arguments.  Tokens are 4-byte pieces of the
response, as ids of a vocab made from those pieces; streams start at staggered positions.
"""

from __future__ import annotations

import argparse
import array
import gc
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import data  # the generators sit beside this script

try:
    import toolparse
except ImportError as error:  # pragma: no cover - a message beats a traceback here
    sys.exit(f"batch.py needs toolparse installed (pip install .): {error}")

STREAM_COUNTS = (1, 64, 256, 1024)
TOKEN_BYTES = 4


def tokenize(text: bytes, pieces: dict[bytes, int]) -> list[int]:
    """4-byte pieces as ids, new pieces added to the table."""
    return [
        pieces.setdefault(text[k : k + TOKEN_BYTES], len(pieces))
        for k in range(0, len(text), TOKEN_BYTES)
    ]


def phases(size: int) -> tuple[toolparse.Vocab, dict[str, tuple[list[int], list[int]]]]:
    """The vocab, and per phase (the ids that lead into it, the ids of the phase)."""
    pieces: dict[bytes, int] = {}
    content = tokenize(data.content(size), pieces)
    arguments = data.call_arguments(size)
    opening = tokenize(data.HERMES_CALL[0], pieces)
    inside = tokenize(arguments[: len(arguments) // TOKEN_BYTES * TOKEN_BYTES], pieces)
    tokens = [b""] * len(pieces)
    for piece, token_id in pieces.items():
        tokens[token_id] = piece
    return toolparse.Vocab(tokens), {"content": ([], content), "arguments": (opening, inside)}


def time_batch(
    vocab: toolparse.Vocab,
    lead: list[int],
    ids: list[int],
    streams: int,
    steps: int,
    repeats: int,
    read: bool,
) -> float:
    """Median seconds per step over `steps` steps of `streams` streams (with every event
    read as objects when `read`)."""
    stagger = [k * 7919 % (len(ids) - steps) for k in range(streams)]
    step_tokens = [array.array("I", [ids[s + t] for s in stagger]) for t in range(steps)]
    slots = array.array("I", range(streams))
    results = []
    for _ in range(repeats):
        batch = toolparse.BatchParser("hermes", vocab=vocab)
        for k, s in enumerate(stagger):
            batch.add(k)
            # each stream is fed its own response up to where its steps start: a stream
            # that skipped the tokens before would be parsing broken arguments
            batch.parser(k).feed_tokens(lead + ids[:s])
        gc.disable()
        start = time.perf_counter()
        if read:
            for tokens in step_tokens:
                for _slot, _events in batch.feed_slots(slots, tokens):
                    pass
        else:
            for tokens in step_tokens:
                batch.feed_slots(slots, tokens)
        results.append((time.perf_counter() - start) / steps)
        gc.enable()
    return statistics.median(results)


def time_single(
    vocab: toolparse.Vocab, lead: list[int], ids: list[int], streams: int, steps: int, repeats: int
) -> float:
    """The same tokens, fed one stream at a time through StreamParser.feed_tokens."""
    stagger = [k * 7919 % (len(ids) - steps) for k in range(streams)]
    results = []
    for _ in range(repeats):
        parsers = [toolparse.StreamParser("hermes", vocab=vocab) for _ in range(streams)]
        for parser, s in zip(parsers, stagger, strict=True):
            parser.feed_tokens(lead + ids[:s])
        feeds = [parser.feed_tokens for parser in parsers]
        gc.disable()
        start = time.perf_counter()
        for t in range(steps):
            for feed, s in zip(feeds, stagger, strict=True):
                feed(ids[s + t])
        results.append((time.perf_counter() - start) / steps)
        gc.enable()
    return statistics.median(results)


PROFILED_STEPS = 64


def feed_only(phase: str, steps: int) -> None:
    """1024 streams fed `steps` (at most PROFILED_STEPS) steps of a phase, untimed: what a
    step costs is the difference between two runs under a profiler, e.g. `valgrind
    --tool=cachegrind python benchmarks/batch.py --feed-only content 40`, then 0, divided by
    40 * 1024 (everything else, the token arrays included, is the same in both runs)."""
    if not 0 <= steps <= PROFILED_STEPS:
        sys.exit(f"--feed-only takes 0 to {PROFILED_STEPS} steps")
    vocab, cases = phases(64 * 1024)
    lead, ids = cases[phase]
    streams = STREAM_COUNTS[-1]
    stagger = [k * 7919 % (len(ids) - PROFILED_STEPS) for k in range(streams)]
    batch = toolparse.BatchParser("hermes", vocab=vocab)
    for k, s in enumerate(stagger):
        batch.add(k)
        batch.parser(k).feed_tokens(lead + ids[:s])
    slots = array.array("I", range(streams))
    step_tokens = [array.array("I", [ids[s + t] for s in stagger]) for t in range(PROFILED_STEPS)]
    for tokens in step_tokens[:steps]:
        batch.feed_slots(slots, tokens)


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--quick", action="store_true", help="small inputs, one repeat")
    options.add_argument(
        "--feed-only",
        nargs=2,
        metavar=("PHASE", "STEPS"),
        help="only feed 1024 streams STEPS steps of PHASE (content, arguments), for a profiler",
    )
    parsed = options.parse_args()
    if parsed.feed_only:
        feed_only(parsed.feed_only[0], int(parsed.feed_only[1]))
        return
    quick = parsed.quick
    size, repeats, stream_steps = (64 * 1024, 1, 20_000) if quick else (256 * 1024, 5, 400_000)
    vocab, cases = phases(size)
    print(
        f"toolparse {toolparse.__version__}, Python {sys.version.split()[0]}; "
        f"{TOKEN_BYTES}-byte tokens, {len(vocab)}-token vocab; median of {repeats}"
    )
    header = (
        f"{'phase':10} {'streams':>7} {'steps':>6}  {'batch ns/stream/step':>21}  "
        f"{'read too':>8}  {'one by one ns/token':>20}  {'ratio':>6}"
    )
    print(header)
    print("-" * len(header))
    for phase, (lead, ids) in cases.items():
        for streams in STREAM_COUNTS:
            steps = max(16, min(stream_steps // streams, len(ids) // 2))
            per_stream = 1e9 / streams
            batch = time_batch(vocab, lead, ids, streams, steps, repeats, False) * per_stream
            read = time_batch(vocab, lead, ids, streams, steps, repeats, True) * per_stream
            single = time_single(vocab, lead, ids, streams, steps, repeats) * per_stream
            print(
                f"{phase:10} {streams:7d} {steps:6d}  {batch:21.0f}  {read:8.0f}  "
                f"{single:20.0f}  {single / batch:5.1f}x"
            )


if __name__ == "__main__":
    main()
