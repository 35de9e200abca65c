"""The ``toolparse`` command: parse a model's output, list the formats, scan JSON."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from . import (
    ContentDelta,
    End,
    JsonScanner,
    MarkerTrie,
    ParseError,
    ReasoningDelta,
    StreamParser,
    ToolCallArgsDelta,
    ToolCallEnd,
    ToolCallStart,
    formats,
    get_format,
)
from .formats import Format
from .message import Message


class CommandError(Exception):
    """A problem with the command's input, reported in one line (exit status 2)."""


def _read(path: str) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read()
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as error:
        raise CommandError(f"cannot read {path}: {error.strerror}") from None


def _load_tools(path: str | None) -> list[dict[str, Any]] | None:
    if path is None:
        return None
    try:
        tools = json.loads(_read(path))
    except ValueError as error:
        raise CommandError(f"{path} is not valid JSON: {error}") from None
    ok = isinstance(tools, list) and all(
        isinstance(t, dict) and isinstance(t.get("function", t).get("name"), str) for t in tools
    )
    if not ok:
        raise CommandError(
            f"{path} is not an OpenAI tools list ([{{'function': {{'name': ...}}}}])"
        )
    checked: list[dict[str, Any]] = tools
    return checked


def message_json(message: Message) -> dict[str, object]:
    """The message as plain JSON data."""
    return {
        "content": message.content,
        "reasoning_content": message.reasoning_content,
        "tool_calls": [
            {"index": c.index, "id": c.id, "name": c.name, "arguments": c.arguments}
            | ({"repaired": True} if c.repaired else {})
            for c in message.tool_calls
        ],
        "errors": [
            {"kind": e.kind, "message": e.message, "index": e.index, "offset": e.offset}
            for e in message.errors
        ],
        "finish_reason": message.finish_reason,
    }


_COLOURS = {
    ReasoningDelta: "2",  # dim
    ContentDelta: "0",
    ToolCallStart: "36",  # cyan
    ToolCallArgsDelta: "36",
    ToolCallEnd: "32",  # green
    ParseError: "31",  # red
}


def _print_event(event: Any, out: TextIO, colour: bool) -> None:
    code = _COLOURS.get(type(event))
    line = repr(event)
    out.write(f"\x1b[{code}m{line}\x1b[0m\n" if colour and code else line + "\n")
    out.flush()


def _parse(args: argparse.Namespace) -> int:
    try:
        parser = StreamParser(
            get_format(args.format),
            tools=_load_tools(args.tools),
            reasoning_in_prompt=args.reasoning_in_prompt,
            engine=args.engine,
            seed=args.seed,
            repair=args.repair,
        )
    except ValueError as error:  # an unknown format, or one without the asked-for mode
        raise CommandError(str(error)) from None
    data = _read(args.file)
    colour = sys.stdout.isatty() and "NO_COLOR" not in os.environ
    events: list[Any] = []
    for start in range(0, len(data), args.chunk):
        events = parser.feed(data[start : start + args.chunk])
        if args.stream:
            for event in events:
                _print_event(event, sys.stdout, colour)
    events = parser.finish(args.finish_reason)
    if args.stream:
        for event in events:
            if not isinstance(event, End):
                _print_event(event, sys.stdout, colour)
    print(json.dumps(message_json(parser.message), indent=2, ensure_ascii=False))
    return 1 if parser.message.errors else 0


def _formats(args: argparse.Namespace) -> int:
    def reasoning(f: Format) -> str:
        if f.reasoning == "none":
            return "-"
        opened = "opened by the template" if f.reasoning_in_prompt else "optional"
        implicit = ", a call ends it" if f.call_in_reasoning == "ends_reasoning" else ""
        return opened + implicit

    rows = [
        (
            f.name,
            ", ".join(f.aliases),
            ", ".join(f.families),
            reasoning(f),
            "yes" if f.parallel_calls else "no",
            "no calls"
            if not f.tool_calls
            else "by schema"
            if f.needs_tools
            else f.argument_notation,
            "carried" if f.carries_ids else "generated",
        )
        for f in formats()
    ]
    header = ("format", "aliases", "model families", "reasoning", "parallel", "arguments", "ids")
    if args.markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for row in rows:
            print("| " + " | ".join(row) + " |")
        return 0
    widths = [max(len(r[k]) for r in (header, *rows)) for k in range(len(header))]
    for row in (header, *rows):
        print(
            "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        )
    return 0


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


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="toolparse", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    parse = commands.add_parser(
        "parse", help="stream a model's output through a format; print the message as JSON"
    )
    parse.add_argument("file", nargs="?", default="-", help="a file, or - for standard input")
    parse.add_argument("--format", required=True, help="a format name or alias (see formats)")
    parse.add_argument("--tools", help="a JSON file with the OpenAI tools list")
    parse.add_argument(
        "--stream", action="store_true", help="also print each event as it is produced"
    )
    parse.add_argument(
        "--reasoning-in-prompt",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="the chat template already opened the reasoning block",
    )
    parse.add_argument("--engine", choices=("native", "reference"), default="native")
    parse.add_argument("--chunk", type=_positive, default=4, help="bytes per feed (default 4)")
    parse.add_argument(
        "--finish-reason", default="stop", help='how the output ended ("length": cut short)'
    )
    parse.add_argument(
        "--repair",
        action="store_true",
        help="salvage broken calls, marked repaired (generic, generic_xml, markdown_json)",
    )
    parse.add_argument("--seed", type=int, default=None, help="reproducible tool call ids")
    parse.set_defaults(run=_parse)

    listing = commands.add_parser("formats", help="list the formats and their model families")
    listing.add_argument("--markdown", action="store_true", help="as a Markdown table")
    listing.set_defaults(run=_formats)

    scan = commands.add_parser(
        "scan-json", help="scan one JSON value incrementally; show where it stands"
    )
    scan.add_argument("file", help="a file, or - for standard input")
    scan.add_argument("--dialect", choices=("strict", "lenient", "python"), default="strict")
    scan.add_argument("--max-depth", type=int, default=512)
    scan.add_argument("--chunk", type=_positive, default=4, help="bytes per feed (default 4)")
    scan.set_defaults(run=_scan_json)

    find = commands.add_parser("find-markers", help="stream a file through a marker trie")
    find.add_argument("file", help="a file, or - for standard input")
    find.add_argument("--marker", action="append", required=True, help="a marker (repeat)")
    find.add_argument("--chunk", type=_positive, default=4, help="bytes per feed (default 4)")
    find.set_defaults(run=_find_markers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.run(args))
    except CommandError as error:
        print(f"toolparse: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
