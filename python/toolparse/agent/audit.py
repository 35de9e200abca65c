"""Audit trail: record what a parser was fed and what it made of it, and replay the records.

``AuditedParser(parser, recorder)`` wraps a ``StreamParser`` (before its first feed, or
right after ``reset()``) and has its ``feed`` / ``finish`` / ``message`` / ``reset``.  Per
response it writes one record to the recorder: the raw output exactly as fed, with the
chunk boundaries, the events of each feed, the final message, the validation and guard
decisions the application adds (plain JSON-able dicts: ``add_validation`` /
``add_guard``), the format, the parser options, the toolparse version and the SHA-256 of
the raw bytes.  With ``recorder=None`` its ``feed`` and ``finish`` *are* the parser's own
bound methods and the annotations do nothing, so an application keeps one code path and
recording costs nothing when it is off.

The record is written when the response finishes, or, with ``auto_commit=False`` (to add
decisions made after the response, such as a guard's verdict on executing a call), by
``commit()``; ``reset()``, ``close()`` and leaving a ``with`` block write a pending record
too, so an abandoned response (a client that went away) is recorded with ``"finish":
null`` and the events it had.  ``JsonlRecorder`` appends one JSON line per record (to a
path it opens with O_APPEND, one ``write`` per line, so processes may share the file);
``MemoryRecorder`` keeps them in a list; any object with ``write(record)`` is a recorder.

A record (``"version": 1``)::

    {"record": "toolparse.agent.audit", "version": 1, "id": "<uuid hex>",
     "time": "2025-01-31T12:00:00.000000Z", "toolparse": "0.1.0", "format": "qwen3",
     "options": {"tools": [...] | null, "reasoning_in_prompt": false, "repair": false,
                 "engine": "native"},
     "raw": {"encoding": "utf-8" | "base64", "data": "...", "chunks": [12, 4, 7],
             "sha256": "<hex of the raw bytes>"},
     "finish": "stop" | "length" | ... | null,
     "events": [[<events of feed 1>], [<feed 2>], ..., [<events of finish>]],
     "message": {"content", "reasoning_content", "tool_calls", "errors", "finish_reason"},
     "validation": [{...}, ...], "guard": [{...}, ...], "meta": {...}}

The raw bytes are stored once: as text when they are valid UTF-8 (``"encoding":
"utf-8"``, readable in the log), else base64 (``"encoding": "base64"``), so any bytes
survive; ``chunks`` gives the byte length of each ``feed()`` in order (a boundary may fall
inside a character), and ``sha256`` is over the raw bytes.  A ``str`` piece is recorded as
its UTF-8 bytes, which is what the parser reads.  Events are objects with the event's
``type`` (``content.delta``, ``tool_call.end``, ...) and its fields; a call is
``{"index", "id", "name", "arguments_json", "repaired"}`` (the arguments as the exact
JSON text, which ``json.loads`` turns into ``arguments``), and a repaired call's
``"repairs"`` too; ``end`` carries only its
``finish_reason`` (the message is the record's ``message``).  Lines are UTF-8 JSON with
non-ASCII text as is, and no NaN or Infinity.

``replay(record)`` re-parses a record with the installed toolparse (same format, options
and chunking; the recorded engine unless ``engine=`` says otherwise) and reports every
difference, each with a ``part``:

- ``"message"``: the final message differs (``path`` like ``message.tool_calls[0].name``);
- ``"events"``: the events differ once adjacent deltas are merged (``events[i]`` indexes
  that merged list), i.e. something other than timing changed;
- ``"timing"``: the same merged events, but delivered by different feeds (or split into
  different deltas); ``events[i]`` is feed ``i`` (the last one is ``finish``);
- ``"raw"``: the raw bytes no longer match their SHA-256;
- ``"record"``: the record cannot be replayed (unknown version, format or option).

Tool call ids the parser generates are random, so a call whose id the replay generates is
given the recorded id of the same call index, unless the recorded id is written in the raw
output (then it was carried by the output, and a generated one is a difference, shown as
``<generated id>``).  ``replay_file(path)`` replays every record of a JSON lines file.
"""

from __future__ import annotations

import base64
import binascii
import difflib
import hashlib
import json
import os
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import IO, Any, Literal, Protocol

from .. import __version__
from ..events import (
    ContentDelta,
    End,
    Event,
    ReasoningDelta,
    ToolCallArgsDelta,
    ToolCallEnd,
    ToolCallStart,
)
from ..message import Message, ParseError, ToolCall
from ..stream import Engine, StreamParser

RECORD_KIND = "toolparse.agent.audit"
RECORD_VERSION = 1
GENERATED_ID = "<generated id>"

Piece = str | bytes | bytearray | memoryview
Part = Literal["record", "raw", "events", "timing", "message"]


class Recorder(Protocol):
    """Where records go: anything with ``write(record)``."""

    def write(self, record: dict[str, Any]) -> None: ...


def dumps_record(record: Mapping[str, Any]) -> str:
    """One record as one line of JSON (UTF-8 text as is, no NaN or Infinity)."""
    return json.dumps(record, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


class JsonlRecorder:
    """Appends each record as one JSON line to a file: a path (opened with O_APPEND, each
    line one ``write``) or an open text stream (written and flushed).  Thread-safe."""

    def __init__(self, target: str | os.PathLike[str] | IO[str]) -> None:
        self._lock = threading.Lock()
        self._stream: IO[str] | None = None
        self._fd: int | None = None
        if isinstance(target, str | os.PathLike):
            self._fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        else:
            self._stream = target

    def write(self, record: dict[str, Any]) -> None:
        line = dumps_record(record) + "\n"
        with self._lock:
            if self._fd is not None:
                data = memoryview(line.encode("utf-8"))
                while data:
                    data = data[os.write(self._fd, data) :]
            elif self._stream is not None:
                self._stream.write(line)
                self._stream.flush()
            else:
                raise ValueError("the recorder is closed")

    def close(self) -> None:
        """Closes a file the recorder opened (an open stream it was given stays open)."""
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
            self._fd = None
            self._stream = None

    def __enter__(self) -> JsonlRecorder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class MemoryRecorder:
    """Keeps the records in a list (tests, or a caller that ships them elsewhere)."""

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []

    def write(self, record: dict[str, Any]) -> None:
        self.records.append(record)


# --- values as JSON ---------------------------------------------------------------------


def call_to_json(call: ToolCall) -> dict[str, Any]:
    return {
        "index": call.index,
        "id": call.id,
        "name": call.name,
        "arguments_json": call.arguments_json,
        "repaired": call.repaired,
        **({"repairs": list(call.repairs)} if call.repairs else {}),
    }


def error_to_json(error: ParseError) -> dict[str, Any]:
    return {
        "kind": error.kind,
        "message": error.message,
        "index": error.index,
        "offset": error.offset,
    }


def event_to_json(event: Event) -> dict[str, Any]:
    """An event as a JSON object with its ``type``; ``end`` leaves out the message."""
    if isinstance(event, ReasoningDelta | ContentDelta):
        return {"type": event.type, "text": event.text}
    if isinstance(event, ToolCallStart):
        return {"type": event.type, "index": event.index, "id": event.id, "name": event.name}
    if isinstance(event, ToolCallArgsDelta):
        return {"type": event.type, "index": event.index, "text": event.text}
    if isinstance(event, ToolCallEnd):
        return {"type": event.type, "index": event.index, "call": call_to_json(event.call)}
    if isinstance(event, ParseError):
        return {"type": event.type, **error_to_json(event)}
    if isinstance(event, End):
        return {"type": event.type, "finish_reason": event.finish_reason}
    raise TypeError(f"not a toolparse event: {event!r}")


def message_to_json(message: Message) -> dict[str, Any]:
    return {
        "content": message.content,
        "reasoning_content": message.reasoning_content,
        "tool_calls": [call_to_json(call) for call in message.tool_calls],
        "errors": [error_to_json(error) for error in message.errors],
        "finish_reason": message.finish_reason,
    }


def encode_raw(chunks: Sequence[bytes]) -> dict[str, Any]:
    """The ``raw`` object of a record: the bytes (UTF-8 text or base64), the chunk lengths
    and the SHA-256."""
    data = b"".join(chunks)
    try:
        raw: dict[str, Any] = {"encoding": "utf-8", "data": data.decode("utf-8")}
    except UnicodeDecodeError:
        raw = {"encoding": "base64", "data": base64.b64encode(data).decode("ascii")}
    raw["chunks"] = [len(chunk) for chunk in chunks]
    raw["sha256"] = hashlib.sha256(data).hexdigest()
    return raw


def decode_raw(raw: Mapping[str, Any]) -> list[bytes]:
    """The chunks of a record's ``raw`` object, as fed (ValueError when it is malformed)."""
    encoding = raw.get("encoding")
    text = raw.get("data")
    if not isinstance(text, str):
        raise ValueError("raw.data is not a string")
    if encoding == "utf-8":
        data = text.encode("utf-8")
    elif encoding == "base64":
        try:
            data = base64.b64decode(text, validate=True)
        except binascii.Error as exc:
            raise ValueError(f"raw.data is not base64: {exc}") from None
    else:
        raise ValueError(f"unknown raw.encoding {encoding!r}")
    sizes = raw.get("chunks")
    if not isinstance(sizes, list) or not all(
        isinstance(size, int) and size >= 0 for size in sizes
    ):
        raise ValueError("raw.chunks is not a list of byte lengths")
    if sum(sizes) != len(data):
        raise ValueError(f"raw.chunks add up to {sum(sizes)} bytes, raw.data has {len(data)}")
    chunks = []
    offset = 0
    for size in sizes:
        chunks.append(data[offset : offset + size])
        offset += size
    return chunks


def parser_options(parser: StreamParser) -> dict[str, Any]:
    """The options a replay needs to build the same parser."""
    return {
        "tools": parser.tools,
        "reasoning_in_prompt": parser.reasoning_in_prompt,
        "repair": parser.repair,
        "engine": parser.engine,
    }


def _json_copy(value: Any, what: str) -> Any:
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False)
        text.encode("utf-8")
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{what} is not plain JSON: {exc}") from None
    return json.loads(text)


def _version() -> str:
    return __version__


# --- recording --------------------------------------------------------------------------


class AuditedParser:
    """A StreamParser that records each response (see the module docstring).

    recorder: where the records go; None turns recording off at no cost (``feed`` and
    ``finish`` are then the parser's own).  meta: JSON-able context written into every
    record (a request id, the model name, ...).  auto_commit: write the record when the
    response finishes; with False, ``commit()`` writes it (``reset()``/``close()`` too).
    """

    feed: Callable[[str | bytes], list[Event]]
    finish: Callable[..., list[Event]]

    def __init__(
        self,
        parser: StreamParser,
        recorder: Recorder | None,
        *,
        meta: Mapping[str, Any] | None = None,
        auto_commit: bool = True,
    ) -> None:
        self.parser = parser
        self.recorder = recorder
        self.meta = _json_copy(dict(meta), "meta") if meta else None
        self.auto_commit = auto_commit
        if recorder is None:
            self.feed = parser.feed
            self.finish = parser.finish
        else:
            self.feed = self._feed
            self.finish = self._finish
        self._start()

    def _start(self) -> None:
        self._chunks: list[Piece] = []
        self._events: list[tuple[Event, ...]] = []
        self._finish_reason: str | None = None
        self._finished = False
        self._validation: list[Any] = []
        self._guard: list[Any] = []
        self._written = False

    @property
    def message(self) -> Message:
        """The message so far (the parser's)."""
        return self.parser.message

    @property
    def recording(self) -> bool:
        return self.recorder is not None

    def _feed(self, text: str | bytes) -> list[Event]:
        if self._finished:
            raise RuntimeError("the response has finished; reset() starts the next one")
        events = self.parser.feed(text)
        piece: Piece = text if isinstance(text, str | bytes) else bytes(text)
        self._chunks.append(piece)
        self._events.append(tuple(events))
        return events

    def _finish(self, reason: str = "stop") -> list[Event]:
        if self._finished:
            raise RuntimeError("the response has already finished")
        events = self.parser.finish(reason)
        self._finished = True
        self._finish_reason = reason
        self._events.append(tuple(events))
        if self.auto_commit:
            self.commit()
        return events

    def add_validation(self, decision: Mapping[str, Any]) -> None:
        """Adds a validation result (a JSON-able dict, copied now) to the record."""
        self._annotate(self._validation, decision, "a validation decision")

    def add_guard(self, decision: Mapping[str, Any]) -> None:
        """Adds a guard decision (a JSON-able dict, copied now) to the record."""
        self._annotate(self._guard, decision, "a guard decision")

    def _annotate(self, into: list[Any], decision: Mapping[str, Any], what: str) -> None:
        if self.recorder is None:
            return
        if self._written:
            raise RuntimeError(
                "the record was already written; AuditedParser(..., auto_commit=False) "
                "keeps it open for decisions made after finish()"
            )
        into.append(_json_copy(dict(decision), what))

    def build_record(self) -> dict[str, Any]:
        """The record of the response so far, without writing it."""
        chunks = [c.encode("utf-8") if isinstance(c, str) else bytes(c) for c in self._chunks]
        options = _json_copy(parser_options(self.parser), "the parser options")
        record: dict[str, Any] = {
            "record": RECORD_KIND,
            "version": RECORD_VERSION,
            "id": uuid.uuid4().hex,
            "time": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            "toolparse": _version(),
            "format": self.parser.format.name,
            "options": options,
            "raw": encode_raw(chunks),
            "finish": self._finish_reason,
            "events": [[event_to_json(e) for e in group] for group in self._events],
            "message": message_to_json(self.parser.message),
            "validation": list(self._validation),
            "guard": list(self._guard),
        }
        if self.meta is not None:
            record["meta"] = self.meta
        return record

    def commit(self) -> dict[str, Any] | None:
        """Writes the record of this response (once) and returns it; None when recording
        is off, nothing was fed, or it was already written."""
        if self.recorder is None or self._written or not (self._chunks or self._finished):
            return None
        record = self.build_record()
        self.recorder.write(record)
        self._written = True
        return record

    def reset(self) -> None:
        """Writes a pending record, then starts over for the next response."""
        self.commit()
        self.parser.reset()
        self._start()

    def close(self) -> None:
        """Writes a pending record (an unfinished response too)."""
        self.commit()

    def __enter__(self) -> AuditedParser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# --- replay -----------------------------------------------------------------------------


class _Absent:
    def __repr__(self) -> str:
        return "<absent>"


ABSENT: Any = _Absent()


@dataclass(frozen=True)
class Difference:
    """One way a replay differs from its record."""

    part: Part
    path: str
    recorded: Any
    replayed: Any

    def __str__(self) -> str:
        return f"{self.part}: {self.path}: recorded {self.recorded!r}, replayed {self.replayed!r}"


@dataclass(frozen=True)
class ReplayResult:
    """What replaying one record gave: ``ok`` when nothing differs."""

    record_id: str | None
    format: str | None
    differences: list[Difference] = field(default_factory=list)
    line: int | None = None

    @property
    def ok(self) -> bool:
        return not self.differences

    def parts(self) -> set[str]:
        return {d.part for d in self.differences}

    def describe(self) -> str:
        where = f"line {self.line}: " if self.line is not None else ""
        head = f"{where}record {self.record_id} ({self.format})"
        if self.ok:
            return f"{head}: same"
        return "\n".join([f"{head}:", *(f"  {d}" for d in self.differences)])


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _diff(part: Part, path: str, recorded: Any, replayed: Any, out: list[Difference]) -> None:
    if type(recorded) is type(replayed) and recorded == replayed:
        return
    if isinstance(recorded, dict) and isinstance(replayed, dict):
        for key in [*recorded, *(k for k in replayed if k not in recorded)]:
            _diff(
                part,
                f"{path}.{key}",
                recorded.get(key, ABSENT),
                replayed.get(key, ABSENT),
                out,
            )
        return
    if isinstance(recorded, list) and isinstance(replayed, list):
        if len(recorded) == len(replayed):
            for i, (a, b) in enumerate(zip(recorded, replayed, strict=True)):
                _diff(part, f"{path}[{i}]", a, b, out)
            return
        matcher = difflib.SequenceMatcher(
            None, [_key(v) for v in recorded], [_key(v) for v in replayed], autojunk=False
        )
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                continue
            if tag == "replace" and i2 - i1 == j2 - j1:
                for k in range(i2 - i1):
                    _diff(part, f"{path}[{i1 + k}]", recorded[i1 + k], replayed[j1 + k], out)
            else:
                out.append(Difference(part, f"{path}[{i1}:{i2}]", recorded[i1:i2], replayed[j1:j2]))
        return
    out.append(Difference(part, path, recorded, replayed))


def _merged(groups: Sequence[Sequence[dict[str, Any]]]) -> list[dict[str, Any]]:
    """All events in order, adjacent deltas of the same type and call joined."""
    merged: list[dict[str, Any]] = []
    for group in groups:
        for event in group:
            kind = event.get("type")
            if kind in ("reasoning.delta", "content.delta", "tool_call.arguments.delta"):
                last = merged[-1] if merged else None
                if (
                    last is not None
                    and last.get("type") == kind
                    and last.get("index") == event.get("index")
                ):
                    merged[-1] = {**last, "text": last["text"] + event["text"]}
                    continue
            merged.append(event)
    return merged


def _recorded_ids(record: Mapping[str, Any]) -> dict[int, str]:
    ids: dict[int, str] = {}
    for group in record.get("events") or []:
        for event in group:
            if event.get("type") == "tool_call.start":
                ids.setdefault(event["index"], event["id"])
            elif event.get("type") == "tool_call.end":
                ids.setdefault(event["call"]["index"], event["call"]["id"])
    for call in (record.get("message") or {}).get("tool_calls") or []:
        ids.setdefault(call["index"], call["id"])
    return ids


def _give_recorded_ids(
    groups: list[list[dict[str, Any]]],
    message: dict[str, Any],
    generated: set[str],
    recorded: Mapping[int, str],
    raw: bytes,
) -> None:
    """Replaces the ids the replay generated by the recorded ids of the same calls."""

    def fix(holder: dict[str, Any], index: int) -> None:
        if holder["id"] not in generated:
            return
        old = recorded.get(index)
        carried = old is not None and old.encode("utf-8") in raw
        holder["id"] = old if old is not None and not carried else GENERATED_ID

    for group in groups:
        for event in group:
            if event["type"] == "tool_call.start":
                fix(event, event["index"])
            elif event["type"] == "tool_call.end":
                fix(event["call"], event["call"]["index"])
    for call in message["tool_calls"]:
        fix(call, call["index"])


def replay(record: Mapping[str, Any], *, engine: Engine | None = None) -> ReplayResult:
    """Re-parses a record with this toolparse and reports every difference (see the
    module docstring).  engine: the engine to replay on (default: the recorded one)."""
    record_id = record.get("id")
    format_name = record.get("format")
    result = ReplayResult(
        record_id if isinstance(record_id, str) else None,
        format_name if isinstance(format_name, str) else None,
    )
    out = result.differences
    if record.get("record") != RECORD_KIND or record.get("version") != RECORD_VERSION:
        got = (record.get("record"), record.get("version"))
        out.append(Difference("record", "version", got, (RECORD_KIND, RECORD_VERSION)))
        return result
    raw_info = record.get("raw")
    try:
        if not isinstance(raw_info, Mapping):
            raise ValueError("no raw object")
        chunks = decode_raw(raw_info)
    except ValueError as exc:
        out.append(Difference("record", "raw", raw_info, str(exc)))
        return result
    raw = b"".join(chunks)
    digest = hashlib.sha256(raw).hexdigest()
    if digest != raw_info.get("sha256"):
        out.append(Difference("raw", "raw.sha256", raw_info.get("sha256"), digest))

    options = dict(record.get("options") or {})
    generated: set[str] = set()

    def next_id() -> str:
        made = f"\x00replay-id-{len(generated)}"
        generated.add(made)
        return made

    try:
        parser = StreamParser(
            str(format_name),
            tools=options.get("tools"),
            reasoning_in_prompt=options.get("reasoning_in_prompt"),
            repair=bool(options.get("repair", False)),
            engine=engine or options.get("engine") or "native",
            id_factory=next_id,
        )
    except (KeyError, ValueError, TypeError, NotImplementedError) as exc:
        out.append(Difference("record", "format/options", [format_name, options], str(exc)))
        return result

    groups = [[event_to_json(e) for e in parser.feed(chunk)] for chunk in chunks]
    finish = record.get("finish")
    if finish is not None:
        groups.append([event_to_json(e) for e in parser.finish(str(finish))])
    message = message_to_json(parser.message)
    _give_recorded_ids(groups, message, generated, _recorded_ids(record), raw)

    recorded_groups = record.get("events") or []
    _diff("message", "message", record.get("message"), message, out)
    before = len(out)
    _diff("events", "events", _merged(recorded_groups), _merged(groups), out)
    if len(out) == before:
        # The same events: anything left is when they came.
        for i in range(max(len(recorded_groups), len(groups))):
            a = recorded_groups[i] if i < len(recorded_groups) else ABSENT
            b = groups[i] if i < len(groups) else ABSENT
            if a != b:
                out.append(Difference("timing", f"events[{i}]", a, b))
    return result


def read_records(path: str | os.PathLike[str]) -> Iterator[tuple[int, Any]]:
    """(line number, parsed JSON) per non-blank line of a JSON lines file; a line that is
    not JSON gives a ValueError in place of its value."""
    with open(path, encoding="utf-8", errors="surrogateescape") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                yield number, json.loads(line)
            except ValueError as exc:
                yield number, ValueError(f"not JSON: {exc}")


def replay_file(
    path: str | os.PathLike[str], *, engine: Engine | None = None
) -> list[ReplayResult]:
    """Replays every record of a JSON lines file, in order."""
    results = []
    for number, value in read_records(path):
        if not isinstance(value, dict):
            problem = str(value) if isinstance(value, ValueError) else "not a JSON object"
            difference = Difference("record", "line", ABSENT, problem)
            results.append(ReplayResult(None, None, [difference], line=number))
            continue
        outcome = replay(value, engine=engine)
        results.append(
            ReplayResult(outcome.record_id, outcome.format, outcome.differences, line=number)
        )
    return results
