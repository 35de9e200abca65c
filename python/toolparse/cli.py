"""The ``toolparse`` command."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from . import JsonScanner, MarkerTrie


def _read(path: str) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read()
    with open(path, "rb") as f:
        return f.read()


def _scan_json(args: argparse.Namespace) -> int:
    data = _read(args.file)
    scanner = JsonScanner(args.dialect, args.max_depth)
    for start in range(0, len(data), args.chunk):
        if scanner.feed(data[start : start + args.chunk]) != "need_more":
            break
    verdict = scanner.finish()
    print(f"verdict:     {verdict}")
    print(f"scanned:     {scanner.position} of {len(data)} bytes, depth {scanner.depth}")
    if scanner.end is not None:
        print(f"value ends:  byte {scanner.end}")
    if scanner.error is not None:
        offset, reason = scanner.error
        print(f"error:       {reason} at byte {offset}")
    if scanner.relaxations:
        print(f"relaxations: {', '.join(scanner.relaxations)}")
    closing = scanner.closing_bytes()
    if verdict == "incomplete" and closing is not None:
        completed = data[: scanner.position] + closing
        print(f"closing:     {closing.decode('utf-8', 'replace')}")
        print(f"partial:     {completed.decode('utf-8', 'replace')}")
    return 0 if verdict != "error" else 1


def _find_markers(args: argparse.Namespace) -> int:
    trie = MarkerTrie(args.marker)
    matcher = trie.matcher()
    data = _read(args.file)
    matches = []
    for start in range(0, len(data), args.chunk):
        matches += matcher.feed(data[start : start + args.chunk])
    matches += matcher.finish()
    for marker_id, start, end in matches:
        print(f"{start}\t{end}\t{trie.markers[marker_id].decode('utf-8', 'replace')}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="toolparse", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    scan = commands.add_parser(
        "scan-json", help="scan one JSON value incrementally; show where it stands"
    )
    scan.add_argument("file", help="a file, or - for standard input")
    scan.add_argument("--dialect", choices=("strict", "lenient", "python"), default="strict")
    scan.add_argument("--max-depth", type=int, default=512)
    scan.add_argument("--chunk", type=int, default=4, help="bytes per feed (default 4)")
    scan.set_defaults(run=_scan_json)

    find = commands.add_parser("find-markers", help="stream a file through a marker trie")
    find.add_argument("file", help="a file, or - for standard input")
    find.add_argument("--marker", action="append", required=True, help="a marker (repeat)")
    find.add_argument("--chunk", type=int, default=4, help="bytes per feed (default 4)")
    find.set_defaults(run=_find_markers)

    args = parser.parse_args(argv)
    if getattr(args, "chunk", 1) < 1:
        parser.error("--chunk must be at least 1")
    return int(args.run(args))


if __name__ == "__main__":
    sys.exit(main())
