"""The ``toolparse`` command."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from . import FORMATS, JsonScanner, MarkerTrie, StreamParser
from .message import Message


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


def _message_json(message: Message) -> dict[str, object]:
    return {
        "content": message.content,
        "reasoning_content": message.reasoning_content,
        "tool_calls": [
            {"index": c.index, "id": c.id, "name": c.name, "arguments": c.arguments}
            for c in message.tool_calls
        ],
        "errors": [
            {"kind": e.kind, "message": e.message, "index": e.index, "offset": e.offset}
            for e in message.errors
        ],
        "finish_reason": message.finish_reason,
    }


def _parse(args: argparse.Namespace) -> int:
    tools = None
    if args.tools:
        with open(args.tools, encoding="utf-8") as f:
            tools = json.load(f)
    parser = StreamParser(
        args.format,
        tools=tools,
        reasoning_in_prompt=args.reasoning_in_prompt,
        engine=args.engine,
        seed=args.seed,
    )
    data = _read(args.file)
    events = []
    for start in range(0, len(data), args.chunk):
        events += parser.feed(data[start : start + args.chunk])
    events += parser.finish(args.finish_reason)
    if not args.quiet:
        for event in events[:-1]:
            print(repr(event))
    print(json.dumps(_message_json(parser.message), indent=2, ensure_ascii=False))
    return 1 if parser.message.errors else 0


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

    parse = commands.add_parser(
        "parse", help="stream a model's output through a format; print events and the message"
    )
    parse.add_argument("file", help="a file, or - for standard input")
    parse.add_argument("--format", required=True, choices=sorted(FORMATS), metavar="FORMAT")
    parse.add_argument("--tools", help="a JSON file with the OpenAI tools list")
    parse.add_argument(
        "--reasoning-in-prompt",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="the chat template already opened the reasoning block",
    )
    parse.add_argument("--engine", choices=("native", "reference"), default="native")
    parse.add_argument("--chunk", type=int, default=4, help="bytes per feed (default 4)")
    parse.add_argument("--finish-reason", default="stop")
    parse.add_argument("--seed", type=int, default=None, help="reproducible tool call ids")
    parse.add_argument("--quiet", action="store_true", help="print only the message")
    parse.set_defaults(run=_parse)

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
