"""StreamParser.feed per token, native against reference: whole responses cut into 4-byte
tokens beforehand, one feed() per token.  The parser is made, and fed what comes before the
measured tokens, outside the timed region; parser creation is measured on its own."""

from __future__ import annotations

import functools
import json
import math
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

import data
import toolparse

TOKEN_BYTES = 4

# The flatness case: one long response of content, per-token cost over its first and last
# tenths.  The reference engine gets less (it is some 30 times slower), unless
# --bench-full-reference.
FLATNESS_BYTES = {"native": data.MIB, "reference": 128 * 1024}
_long_content = functools.cache(data.content)


@dataclass(frozen=True)
class Response:
    """A response cut into tokens: `head` is fed before the timing starts, `body` is timed,
    `tail` is fed after it; `expected` is what the message must say in the end."""

    format: str
    tools: list[dict[str, Any]] | None
    head: list[bytes]
    body: list[bytes]
    tail: list[bytes]
    expected: tuple

    @property
    def body_bytes(self) -> int:
        return sum(map(len, self.body))


def _tokens(text: bytes) -> list[bytes]:
    return data.chunks(text, TOKEN_BYTES)


def _outcome(message: toolparse.Message) -> tuple:
    """What a check compares: content, reasoning, (name, arguments) of each call, errors."""
    return (
        message.content,
        message.reasoning_content,
        [(call.name, call.arguments) for call in message.tool_calls],
        message.errors,
    )


@functools.cache
def _content(payload: bytes) -> Response:
    return Response("hermes", None, [], _tokens(payload), [], (payload.decode(), None, [], []))


@functools.cache
def _hermes_call(size: int) -> Response:
    arguments = data.call_arguments(size)
    head, tail = data.HERMES_CALL
    call = (data.HERMES_CALL_NAME, json.loads(arguments))
    return Response(
        "hermes", None, _tokens(head), _tokens(arguments), _tokens(tail), (None, None, [call], [])
    )


@functools.cache
def _coder_call(size: int) -> Response:
    code = data.source_code(size)
    head, tail = data.CODER_CALL
    call = ("write_file", {"path": data.WRITE_FILE_PATH, "content": code.decode()})
    return Response(
        "qwen3_coder",
        data.WRITE_FILE_TOOLS,
        _tokens(head),
        _tokens(code),
        _tokens(tail),
        (None, None, [call], []),
    )


def _new_parser(response: Response, engine: str) -> toolparse.StreamParser:
    return toolparse.StreamParser(response.format, tools=response.tools, engine=engine)


def _check_events(events: list, message: toolparse.Message) -> None:
    """The events add up to the message: the same content, and for each call one start, the
    argument deltas that join into its arguments JSON, one end; End last."""
    assert isinstance(events[-1], toolparse.End)
    assert events[-1].message == message
    content = "".join(e.text for e in events if isinstance(e, toolparse.ContentDelta))
    assert content == (message.content or "")
    for call in message.tool_calls:
        mine = [e for e in events if getattr(e, "index", None) == call.index]
        starts = [(e.id, e.name) for e in mine if isinstance(e, toolparse.ToolCallStart)]
        assert starts == [(call.id, call.name)]
        deltas = [e.text for e in mine if isinstance(e, toolparse.ToolCallArgsDelta)]
        assert "".join(deltas) == call.arguments_json
        assert [e.call for e in mine if isinstance(e, toolparse.ToolCallEnd)] == [call]


def _first_run(response: Response, engine: str) -> float:
    """One untimed run of the whole response, keeping every event to check them against the
    message and the message against the expected one; returns the body's time in seconds."""
    parser = _new_parser(response, engine)
    events = []
    for piece in response.head:
        events += parser.feed(piece)
    start = time.perf_counter()
    for piece in response.body:
        events += parser.feed(piece)
    seconds = time.perf_counter() - start
    for piece in response.tail:
        events += parser.feed(piece)
    events += parser.finish()
    _check_events(events, parser.message)
    assert _outcome(parser.message) == response.expected
    return seconds


def _check_last_round(parser: toolparse.StreamParser, response: Response) -> None:
    """The parser of the last timed round, fed the rest of the response, gives the expected
    message too."""
    for piece in response.tail:
        parser.feed(piece)
    parser.finish()
    assert _outcome(parser.message) == response.expected


def _time_body(
    benchmark,
    config: pytest.Config,
    response: Response,
    engine: str,
    run: Callable[[toolparse.StreamParser], toolparse.StreamParser],
) -> toolparse.StreamParser:
    """Times run(parser) with benchmark.pedantic, each round on a new parser already fed the
    head (neither counted).  The first run, untimed, checks the events and warms up; the
    rounds fill --benchmark-max-time, at least --benchmark-min-rounds, as pytest-benchmark
    would size them."""
    seconds = _first_run(response, engine)
    # The option's default is the string "1.0": float() for both cases.
    max_time = float(config.getoption("benchmark_max_time"))
    rounds = max(int(config.getoption("benchmark_min_rounds")), math.ceil(max_time / seconds))

    def setup() -> tuple[tuple[toolparse.StreamParser], dict]:
        parser = _new_parser(response, engine)
        for piece in response.head:
            parser.feed(piece)
        return (parser,), {}

    return benchmark.pedantic(run, setup=setup, rounds=rounds)


def _feed_body(response: Response) -> Callable[[toolparse.StreamParser], toolparse.StreamParser]:
    body = response.body

    def run(parser: toolparse.StreamParser) -> toolparse.StreamParser:
        # The events of each feed are dropped, as a server forwarding them would do.
        feed = parser.feed
        for piece in body:
            feed(piece)
        return parser

    return run


def _describe(benchmark, group: str, engine, response: Response) -> None:
    benchmark.group = group
    benchmark.extra_info.update(
        engine=engine.name, bytes=response.body_bytes, feeds=len(response.body)
    )


def test_stream_content(benchmark, engine, make_input, pytestconfig) -> None:
    response = _content(make_input(data.content, engine.name, "4-byte"))
    _describe(benchmark, "stream content, 4-byte tokens", engine, response)
    parser = _time_body(benchmark, pytestconfig, response, engine.name, _feed_body(response))
    _check_last_round(parser, response)


@pytest.mark.parametrize("case", tuple(data.ARGUMENT_SIZES))
def test_stream_arguments(benchmark, engine, pytestconfig, case: str) -> None:
    size = data.ARGUMENT_SIZES[case]
    response = _hermes_call(size)
    # "1 KiB" rather than the id "1KiB": the summary sorts groups by name.
    _describe(benchmark, f"stream args {size // 1024} KiB, 4-byte tokens", engine, response)
    parser = _time_body(benchmark, pytestconfig, response, engine.name, _feed_body(response))
    _check_last_round(parser, response)


def test_stream_qwen3_coder(benchmark, engine, pytestconfig) -> None:
    response = _coder_call(data.CODER_SIZE)
    _describe(benchmark, "stream qwen3_coder, 4-byte tokens", engine, response)
    parser = _time_body(benchmark, pytestconfig, response, engine.name, _feed_body(response))
    _check_last_round(parser, response)


class FlatnessReport:
    """Prints the flatness figures after pytest-benchmark's tables (and the conftest's)."""

    name = "toolparse-stream-flatness"

    @pytest.hookimpl(wrapper=True)
    def pytest_terminal_summary(self, terminalreporter, config: pytest.Config):
        result = yield
        session = getattr(config, "_benchmarksession", None)
        benchmarks = [
            b for b in getattr(session, "benchmarks", ()) if b and "end_start" in b.extra_info
        ]
        if benchmarks:
            write = terminalreporter.write_line
            terminalreporter.write_sep("-", "stream flatness: ns per token, first and last 10%")
            write(
                f"{'engine':<10} {'bytes':>9} {'first 10%':>10} {'last 10%':>10} {'end/start':>10}"
            )
            for bench in sorted(benchmarks, key=lambda b: b.extra_info["engine"]):
                info = bench.extra_info
                write(
                    f"{info['engine']:<10} {info['bytes']:>9} {info['first_ns']:>10.0f} "
                    f"{info['last_ns']:>10.0f} {info['end_start']:>10.2f}"
                )
        return result


@pytest.fixture(scope="session")
def flatness_report(pytestconfig) -> None:
    manager = pytestconfig.pluginmanager
    if not manager.has_plugin(FlatnessReport.name):
        manager.register(FlatnessReport(), FlatnessReport.name)


@pytest.mark.usefixtures("flatness_report")
def test_stream_flatness(benchmark, engine, pytestconfig) -> None:
    full_reference = pytestconfig.getoption("--bench-full-reference")
    response = _content(_long_content(FLATNESS_BYTES["native" if full_reference else engine.name]))
    tenth = len(response.body) // 10
    first, middle, last = (
        response.body[:tenth],
        response.body[tenth:-tenth],
        response.body[-tenth:],
    )
    seconds: list[tuple[float, float]] = []

    def run(parser: toolparse.StreamParser) -> toolparse.StreamParser:
        _, first_part, last_part = data.feed_timed(parser.feed, first, middle, last)
        seconds.append((first_part, last_part))
        return parser

    _describe(benchmark, "stream flatness, 4-byte tokens", engine, response)
    parser = _time_body(benchmark, pytestconfig, response, engine.name, run)
    _check_last_round(parser, response)
    first_ns = statistics.median(s[0] for s in seconds) / len(first) * 1e9
    last_ns = statistics.median(s[1] for s in seconds) / len(last) * 1e9
    benchmark.extra_info.update(first_ns=first_ns, last_ns=last_ns, end_start=last_ns / first_ns)


# format: (tools, a short response to check the parser with, the call it holds)
_SMALL_CALLS = {
    "hermes": (
        None,
        data.HERMES_CALL[0] + b'{"days": 3}' + data.HERMES_CALL[1],
        (data.HERMES_CALL_NAME, {"days": 3}),
    ),
    "qwen3_coder": (
        data.WRITE_FILE_TOOLS,
        data.CODER_CALL[0] + b"x = 1" + data.CODER_CALL[1],
        ("write_file", {"path": data.WRITE_FILE_PATH, "content": "x = 1"}),
    ),
}


@pytest.mark.parametrize("format_name", tuple(_SMALL_CALLS))
def test_stream_parser_creation(benchmark, engine, format_name: str) -> None:
    tools, response, call = _SMALL_CALLS[format_name]

    def run() -> toolparse.StreamParser:
        return toolparse.StreamParser(format_name, tools=tools, engine=engine.name)

    # Time per call in pytest-benchmark's table: there are no bytes to divide by.
    benchmark.group = f"stream parser creation, {format_name}"
    benchmark.extra_info.update(engine=engine.name)
    parser = benchmark(run)
    parser.feed(response)
    parser.finish()
    assert parser.engine == engine.name
    assert _outcome(parser.message) == (None, None, [call], [])
