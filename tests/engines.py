"""The engines the stream tests run on, and the format fixtures they share.

`ENGINES` lists the engines this build can run: the compiled VM when it is there, and the
pure-Python reference VM. Every stream test is parametrized over it. The rest of the module
loads the fixtures of tests/fixtures/<format>/ and feeds them to a parser in pieces.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import toolparse
from helpers import random_partition, split
from toolparse import (
    ContentDelta,
    End,
    Message,
    ParseError,
    ReasoningDelta,
    StreamParser,
    ToolCallArgsDelta,
    ToolCallEnd,
    ToolCallStart,
)


def available(engine: str) -> bool:
    """Whether this build runs `engine`."""
    try:
        toolparse.StreamParser("hermes", engine=engine)
    except NotImplementedError:
        return False
    return True


ENGINES = [e for e in ("native", "reference") if available(e)]

FIXTURES_DIR = Path(__file__).parent / "fixtures"
FORMAT_NAMES = tuple(sorted(p.name for p in FIXTURES_DIR.iterdir() if p.is_dir()))

TEXT_DELTAS = (ReasoningDelta, ContentDelta)
EVENT_TYPES = (
    ReasoningDelta,
    ContentDelta,
    ToolCallStart,
    ToolCallArgsDelta,
    ToolCallEnd,
    ParseError,
    End,
)


@dataclass(frozen=True)
class Fixture:
    """One raw model output and what parsing it must give."""

    format: str
    name: str
    raw: bytes
    tools: list[dict[str, Any]]
    expected: dict[str, Any]

    @property
    def id(self) -> str:
        return f"{self.format}/{self.name}"

    @property
    def options(self) -> dict[str, Any]:
        """StreamParser options the fixture needs (its "options" but "finish")."""
        options = dict(self.expected.get("options") or {})
        options.pop("finish", None)
        return options

    @property
    def finish(self) -> str:
        """How the output ended: "stop", or "length" for an output cut short."""
        return str((self.expected.get("options") or {}).get("finish", "stop"))

    def parser(self, engine: str, **options: Any) -> StreamParser:
        """A parser for this fixture's format, tools and options."""
        return StreamParser(
            self.format, tools=self.tools, engine=engine, **{**self.options, **options}
        )

    def events(self, engine: str, sizes: Sequence[int] | None = None, **options: Any) -> list[Any]:
        """The events of the whole output fed in pieces of the given sizes, then finished
        the way the fixture says."""
        return run_events(self.parser(engine, **options), self.raw, sizes, self.finish)

    def parse(self, engine: str, **options: Any) -> Message:
        return toolparse.parse(
            self.raw,
            self.format,
            tools=self.tools,
            engine=engine,
            finish_reason=self.finish,
            **{**self.options, **options},
        )


@cache
def load_fixtures() -> tuple[Fixture, ...]:
    fixtures = []
    for format_name in FORMAT_NAMES:
        folder = FIXTURES_DIR / format_name
        tools = json.loads((folder / "tools.json").read_text(encoding="utf-8"))
        for expected_path in sorted(folder.glob("*.expected.json")):
            name = expected_path.name.removesuffix(".expected.json")
            fixtures.append(
                Fixture(
                    format=format_name,
                    name=name,
                    raw=(folder / f"{name}.txt").read_bytes(),
                    tools=tools,
                    expected=json.loads(expected_path.read_text(encoding="utf-8")),
                )
            )
    return tuple(fixtures)


FIXTURES = load_fixtures()
FIXTURE_IDS = [f.id for f in FIXTURES]


@dataclass(frozen=True)
class Feed:
    """One feed() (or the final finish(), with `finished`): bytes fed so far, its events."""

    fed: int
    events: list[Any]
    finished: bool = False


def run(
    parser: StreamParser, data: bytes, sizes: Sequence[int] | None = None, reason: str = "stop"
) -> list[Feed]:
    """Feeds data in pieces of the given sizes (one piece when None), then finishes."""
    feeds = []
    fed = 0
    for piece in split(data, [len(data)] if sizes is None else sizes):
        events = parser.feed(piece)
        fed += len(piece)
        feeds.append(Feed(fed, events))
    feeds.append(Feed(fed, parser.finish(reason), finished=True))
    return feeds


def all_events(feeds: Sequence[Feed]) -> list[Any]:
    return [event for feed in feeds for event in feed.events]


def run_events(
    parser: StreamParser, data: bytes, sizes: Sequence[int] | None = None, reason: str = "stop"
) -> list[Any]:
    return all_events(run(parser, data, sizes, reason))


def delta_key(event: Any) -> tuple | None:
    """What adjacent deltas must share to be merged: their type and call index."""
    if isinstance(event, TEXT_DELTAS):
        return (type(event),)
    if isinstance(event, ToolCallArgsDelta):
        return (ToolCallArgsDelta, event.index)
    return None


def merge_deltas(events: Sequence[Any]) -> list[Any]:
    """Adjacent deltas of the same type and call index joined into one."""
    merged: list[Any] = []
    for event in events:
        key = delta_key(event)
        if key is not None and merged and delta_key(merged[-1]) == key:
            previous = merged.pop()
            if isinstance(event, ToolCallArgsDelta):
                merged.append(ToolCallArgsDelta(event.index, previous.text + event.text))
            else:
                merged.append(type(event)(previous.text + event.text))
        else:
            merged.append(event)
    return merged


def random_sizes(seed: int, length: int, max_piece: int = 16) -> list[int]:
    """A reproducible random chunking of `length` bytes."""
    return random_partition(random.Random(seed), length, max_piece)


def summary(message: Message) -> dict[str, Any]:
    """The parts of a Message that the .expected.json files give."""
    return {
        "message": {
            "content": message.content,
            "reasoning_content": message.reasoning_content,
            "tool_calls": [
                {"name": c.name, "arguments": c.arguments}
                | ({"repaired": True, "repairs": list(c.repairs)} if c.repaired else {})
                for c in message.tool_calls
            ],
        },
        "errors": [{"kind": e.kind} for e in message.errors],
        "finish_reason": message.finish_reason,
    }


def expected_summary(fixture: Fixture) -> dict[str, Any]:
    return {key: fixture.expected[key] for key in ("message", "errors", "finish_reason")}


def errors_after_reasoning(message: Message, raw: bytes, rest: str | None) -> list[str]:
    """The kinds of the message's errors from where `rest` (the end of the output, the
    text after its reasoning) begins: what a tool parser handed that text reports.  A
    reasoning parser has no way to report an error: a marker that strays into the
    reasoning is dropped there all the same."""
    start = len(raw) - len((rest or "").encode())
    return [e.kind for e in message.errors if e.offset is None or e.offset >= start]


def text_of(events: Sequence[Any], kind: type) -> str:
    return "".join(e.text for e in events if type(e) is kind)


def arguments_text(events: Sequence[Any], index: int) -> str:
    return "".join(e.text for e in events if isinstance(e, ToolCallArgsDelta) and e.index == index)
