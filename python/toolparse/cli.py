"""The ``toolparse`` command: parse a model's output, list the formats, scan JSON."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import Any, Protocol, TextIO

from . import formats
from .events import (
    ContentDelta,
    End,
    Event,
    ParseError,
    ReasoningDelta,
    ToolCallArgsDelta,
    ToolCallEnd,
    ToolCallStart,
)
from .formats import Format, get_format
from .message import Message, ToolCall
from .primitives import JsonScanner, MarkerTrie
from .stream import StreamParser
from .tools import read_tools


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
    if not isinstance(tools, list):
        raise CommandError(f"{path} is not an OpenAI tools list ([{{'function': ...}}, ...])")
    try:
        read_tools(tools)
    except (TypeError, ValueError) as error:
        raise CommandError(f"{path} is not a usable tools list: {error}") from None
    return tools


def call_json(call: ToolCall) -> dict[str, object]:
    """A complete tool call as plain JSON data."""
    return {"index": call.index, "id": call.id, "name": call.name, "arguments": call.arguments} | (
        {"repaired": True, "repairs": list(call.repairs)} if call.repaired else {}
    )


def error_json(error: ParseError) -> dict[str, object]:
    """A parse error as plain JSON data."""
    return {
        "kind": error.kind,
        "message": error.message,
        "index": error.index,
        "offset": error.offset,
    }


def message_json(message: Message) -> dict[str, object]:
    """The message as plain JSON data."""
    return {
        "content": message.content,
        "reasoning_content": message.reasoning_content,
        "tool_calls": [call_json(c) for c in message.tool_calls],
        "errors": [error_json(e) for e in message.errors],
        "finish_reason": message.finish_reason,
    }


def event_json(event: Event) -> dict[str, object]:
    """One event as plain JSON data: its ``.type`` string and its fields."""
    fields: dict[str, object]
    match event:
        case ReasoningDelta(text) | ContentDelta(text):
            fields = {"text": text}
        case ToolCallStart(index, call_id, name):
            fields = {"index": index, "id": call_id, "name": name}
        case ToolCallArgsDelta(index, text):
            fields = {"index": index, "text": text}
        case ToolCallEnd(index, call):
            fields = {"index": index, "call": call_json(call)}
        case ParseError():
            fields = error_json(event)
        case End(finish_reason, message):
            fields = {"finish_reason": finish_reason, "message": message_json(message)}
        case _:
            raise TypeError(f"not a stream event: {event!r}")
    return {"type": event.type} | fields


class EventView(Protocol):
    """Where ``parse --stream`` shows the events of each feed as they come."""

    def show(self, events: Sequence[Event]) -> None: ...


class JsonLinesView:
    """The events as JSON Lines, one object per event: for jq and other programs."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def show(self, events: Sequence[Event]) -> None:
        for event in events:
            self.out.write(json.dumps(event_json(event), ensure_ascii=False) + "\n")
        self.out.flush()


_DIM, _RED, _GREEN, _YELLOW, _CYAN = "2", "31", "32", "33", "36"  # SGR codes

# Model output is untrusted: its control characters (an escape sequence could rewrite the
# terminal) are shown as escapes; newlines and tabs are kept so the text reads as written.
_VISIBLE_CONTROLS = {
    code: f"\\x{code:02x}" for code in (*range(0x20), *range(0x7F, 0xA0)) if chr(code) not in "\n\t"
}


def _visible(text: str) -> str:
    return text.translate(_VISIBLE_CONTROLS)


class StyledWriter:
    """Writes text in a style (an SGR code, or None for plain), emitting a code only where
    the style changes, so the bytes depend on the text and its styles, not on how it was cut.
    Newlines are written plain, so every line ends with its colour reset."""

    def __init__(self, out: TextIO, colour: bool) -> None:
        self.out = out
        self.colour = colour
        self.style: str | None = None
        self.at_line_start = True

    def write(self, text: str, style: str | None = None) -> None:
        for number, line in enumerate(text.split("\n")):
            if number:
                self._set_style(None)
                self.out.write("\n")
                self.at_line_start = True
            if line:
                self._set_style(style)
                self.out.write(line)
                self.at_line_start = False

    def new_line(self) -> None:
        """Ends the current line, if anything is on it."""
        if not self.at_line_start:
            self.write("\n")

    def flush(self) -> None:
        self.out.flush()

    def _set_style(self, style: str | None) -> None:
        if self.colour and style != self.style:
            self.out.write("\x1b[0m" if style is None else f"\x1b[0;{style}m")
        self.style = style


class TerminalView:
    """A readable live stream: text as it arrives, calls as they fill in, errors in red.

    Deltas are written as they come, with no added newlines; a new section (reasoning,
    content, a call) starts on a new line.
    """

    def __init__(self, out: TextIO, colour: bool) -> None:
        self.writer = StyledWriter(out, colour)
        self.section: str | int | None = None  # "reasoning", "content", or a call's index
        self.call_names: dict[int, str] = {}

    def show(self, events: Sequence[Event]) -> None:
        for event in events:
            self._show(event)
        self.writer.flush()

    def _show(self, event: Event) -> None:
        write = self.writer.write
        match event:
            case ReasoningDelta(text):
                if self._enter("reasoning"):
                    write("reasoning\n", _DIM)
                write(_visible(text), _DIM)
            case ContentDelta(text):
                self._enter("content")
                write(_visible(text))
            case ToolCallStart(index, _, name):
                self.call_names[index] = name
                self._enter_call(index)
            case ToolCallArgsDelta(index, text):
                self._enter_call(index)
                write(_visible(text))
            case ToolCallEnd(index, call):
                self.call_names[index] = call.name
                self._enter_call(index)
                write(" ✓", _GREEN)
                if call.repaired:
                    write(f" repaired ({', '.join(call.repairs)})", _YELLOW)
                self.section = None
            case ParseError(kind, message, index, offset):
                if index is not None and index == self.section:
                    write(" ✗", _RED)
                where = f"call {index}, byte {offset}" if index is not None else f"byte {offset}"
                self.writer.new_line()
                write(f"error {kind}: {_visible(message)} ({where})\n", _RED)
                self.section = None
            case End(_, message):
                self.writer.new_line()
                self._summary(message)

    def _enter(self, section: str | int) -> bool:
        """Starts a section on a new line, unless it is the current one; says if it did."""
        if section == self.section:
            return False
        self.writer.new_line()
        self.section = section
        return True

    def _enter_call(self, index: int) -> None:
        if self._enter(index):
            name = _visible(self.call_names.get(index, "?"))
            self.writer.write(f"call {index} {name}", _CYAN)
            self.writer.write(" ")

    def _summary(self, message: Message) -> None:
        calls, errors = len(message.tool_calls), len(message.errors)
        self.writer.write(
            f"finish: {message.finish_reason}, {calls} call{'s' * (calls != 1)}, ", _DIM
        )
        self.writer.write(f"{errors} error{'s' * (errors != 1)}\n", _RED if errors else _DIM)


def _event_view(args: argparse.Namespace) -> EventView:
    """The readable stream for a person at a terminal (or --color always, for less -R);
    JSON Lines for programs (--json, or a pipe)."""
    if args.json or not (sys.stdout.isatty() or args.color == "always"):
        return JsonLinesView(sys.stdout)
    # https://no-color.org: a non-empty NO_COLOR turns default colour off
    colour = args.color == "always" or (args.color == "auto" and not os.environ.get("NO_COLOR"))
    return TerminalView(sys.stdout, colour)


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
    view = _event_view(args) if args.stream else None
    for start in range(0, len(data), args.chunk):
        events = parser.feed(data[start : start + args.chunk])
        if view is not None:
            view.show(events)
    events = parser.finish(args.finish_reason)
    if view is not None:
        view.show(events)
    else:
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
        "--stream",
        action="store_true",
        help="show the events as they come, not the message: a readable live stream on a "
        "terminal, JSON Lines in a pipe (the last line carries the message)",
    )
    parse.add_argument(
        "--json",
        action="store_true",
        help="with --stream: JSON Lines even on a terminal, one object per event",
    )
    parse.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="with --stream: colour on a terminal unless NO_COLOR is set (auto); "
        "always also shows the readable stream in a pipe (for less -R)",
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
        help="salvage broken calls, marked repaired with the repairs done",
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
    except BrokenPipeError:
        # The reader stopped early (`| head`): end quietly, as a filter killed by SIGPIPE
        # would, with the interpreter's last flush of stdout going nowhere.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + 13


if __name__ == "__main__":
    sys.exit(main())
