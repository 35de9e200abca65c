"""The toolparse command: parse (the message, the event stream as JSON Lines in a pipe and
as a readable stream on a terminal), formats, scan-json, find-markers, and input errors."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from engines import FIXTURES, FIXTURES_DIR, Fixture
from toolparse.cli import call_json, main, message_json

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
QWEN3_EXAMPLE = (
    "parse",
    str(EXAMPLES / "qwen3_output.txt"),
    "--format",
    "qwen3",
    "--tools",
    str(EXAMPLES / "tools.json"),
)
SGR = re.compile(r"\x1b\[[0-9;]*m")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_parse_prints_the_message_as_json(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, *QWEN3_EXAMPLE)
    message = json.loads(out)
    assert status == 0
    assert message["reasoning_content"].startswith("\nThe user wants the weather")
    assert message["content"] == "I'll check the forecast and set the reminder.\n"
    assert [c["name"] for c in message["tool_calls"]] == ["get_weather", "set_reminder"]
    assert message["tool_calls"][0]["arguments"] == {"city": "Zürich", "days": 3, "units": "metric"}
    assert message["finish_reason"] == "tool_calls"
    assert message["errors"] == []


def test_parse_reports_errors_with_status_1(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    cut = tmp_path / "cut.txt"
    cut.write_text('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Par')
    status, out, _ = run(capsys, "parse", str(cut), "--format", "hermes")
    assert status == 1
    assert json.loads(out)["errors"][0]["kind"] == "incomplete"


@pytest.mark.parametrize(
    ("fmt", "text"),
    [
        ("generic_xml", '<tool_call><name>get_weather</name><args>{"city": "Par'),
        ("hermes", '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Par'),
    ],
)
def test_parse_repair_salvages_a_cut_off_call(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, fmt: str, text: str
) -> None:
    cut = tmp_path / "cut.txt"
    cut.write_text(text)
    status, out, _ = run(capsys, "parse", str(cut), "--format", fmt, "--repair")
    assert status == 0
    (call,) = json.loads(out)["tool_calls"]
    assert (call["name"], call["arguments"], call["repaired"], call["repairs"]) == (
        "get_weather",
        {"city": "Par"},
        True,
        ["closed_at_end"],
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("parse", "-", "--format", "no_such_format"), "unknown format 'no_such_format'"),
        (("parse", "/nonexistent/file.txt", "--format", "hermes"), "cannot read"),
    ],
)
def test_input_errors_are_one_line_with_status_2(
    capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], message: str
) -> None:
    status, _, err = run(capsys, *argv)
    assert status == 2
    assert message in err
    assert len(err.strip().splitlines()) == 1


def test_bad_tools_json_is_reported(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text("{not json")
    status, _, err = run(
        capsys,
        "parse",
        str(EXAMPLES / "qwen3_output.txt"),
        "--format",
        "qwen3",
        "--tools",
        str(tools),
    )
    assert status == 2 and "is not valid JSON" in err
    tools.write_text('{"name": "x"}')
    status, _, err = run(
        capsys,
        "parse",
        str(EXAMPLES / "qwen3_output.txt"),
        "--format",
        "qwen3",
        "--tools",
        str(tools),
    )
    assert status == 2 and "not an OpenAI tools list" in err
    tools.write_text('[{"type": "web_search_preview"}, {"type": "function", "function": {}}]')
    status, _, err = run(
        capsys,
        "parse",
        str(EXAMPLES / "qwen3_output.txt"),
        "--format",
        "qwen3",
        "--tools",
        str(tools),
    )
    assert status == 2 and "tools[1] has no function name" in err


def test_formats_lists_every_format(capsys: pytest.CaptureFixture[str]) -> None:
    import toolparse

    status, out, _ = run(capsys, "formats")
    assert status == 0
    names = [line.split()[0] for line in out.splitlines()[1:]]
    assert names == [f.name for f in toolparse.formats()]
    status, out, _ = run(capsys, "formats", "--markdown")
    assert out.startswith("| format | aliases |")


def test_scan_json_shows_the_partial_view(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "scan-json", str(EXAMPLES / "truncated_call.json"))
    assert status == 0
    assert "verdict:     incomplete" in out
    assert 'closing:     "}}' in out


def test_find_markers_reports_offsets(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    text = tmp_path / "t.txt"
    text.write_text("a <tool_call> b </tool_call>")
    status, out, _ = run(
        capsys, "find-markers", str(text), "--marker", "<tool_call>", "--marker", "</tool_call>"
    )
    assert status == 0
    assert out.splitlines() == ["2\t13\t<tool_call>", "16\t28\t</tool_call>"]


def test_readme_format_table_is_current(capsys: pytest.CaptureFixture[str]) -> None:
    readme = (EXAMPLES.parent / "README.md").read_text(encoding="utf-8")
    start = "<!-- formats: generated by `toolparse formats --markdown` -->\n"
    table = readme[readme.index(start) + len(start) : readme.index("<!-- /formats -->")]
    run(capsys, "formats", "--markdown")  # drop anything captured before
    status, out, _ = run(capsys, "formats", "--markdown")
    assert status == 0
    assert table == out, "README's format table is stale: paste `toolparse formats --markdown`"


# --stream in a pipe: JSON Lines


# formats of several kinds: reasoning, XML parameters, an invalid call, cut short, repaired
STREAMED_FIXTURES = [
    {f.id: f for f in FIXTURES}[fixture_id]
    for fixture_id in (
        "qwen3/implicit_reasoning_end_then_calls_and_content",
        "qwen3_coder/reasoning_in_prompt_then_content_and_call",
        "gpt_oss/invalid_arguments_then_retry",
        "hermes/content_before_and_after_call",
        "functionary_v3_1/python_code_cut_off_by_length",
        "generic_xml/repair_closes_a_call_cut_off",
    )
]


def fixture_argv(fixture: Fixture) -> list[str]:
    """The parse command for a fixture, with its options as flags and a fixed id seed."""
    folder = FIXTURES_DIR / fixture.format
    argv = ["parse", str(folder / f"{fixture.name}.txt"), "--format", fixture.format]
    argv += ["--tools", str(folder / "tools.json"), "--finish-reason", fixture.finish]
    argv += ["--seed", "7"]
    options = fixture.options
    assert set(options) <= {"reasoning_in_prompt", "repair"}, "an option with no flag"
    if "reasoning_in_prompt" in options:
        argv.append(f"--{'' if options['reasoning_in_prompt'] else 'no-'}reasoning-in-prompt")
    if options.get("repair"):
        argv.append("--repair")
    return argv


def json_lines(text: str) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in text.splitlines()]
    assert all(isinstance(line, dict) for line in lines)
    return lines


def merged(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Adjacent delta lines of the same type and call joined into one."""
    out: list[dict[str, Any]] = []
    for line in lines:
        last = out[-1] if out else {}
        same = line["type"].endswith(".delta") and (last.get("type"), last.get("index")) == (
            line["type"],
            line.get("index"),
        )
        if same:
            out[-1] = last | {"text": last["text"] + line["text"]}
        else:
            out.append(line)
    return out


@pytest.mark.parametrize("chunk", ["1", "4", "100000"])
@pytest.mark.parametrize("fixture", STREAMED_FIXTURES, ids=lambda f: f.id)
def test_stream_in_a_pipe_is_json_lines(
    capsys: pytest.CaptureFixture[str], fixture: Fixture, chunk: str
) -> None:
    status, out, _ = run(capsys, *fixture_argv(fixture), "--stream", "--chunk", chunk)
    lines = json_lines(out)
    expected = fixture.parse("native", seed=7)
    assert status == (1 if expected.errors else 0)
    assert {line["type"] for line in lines} <= {
        "reasoning.delta",
        "content.delta",
        "tool_call.start",
        "tool_call.arguments.delta",
        "tool_call.end",
        "error",
        "end",
    }
    assert [line["type"] for line in lines].count("end") == 1 and lines[-1]["type"] == "end"

    def text_of(kind: str, index: int | None = None) -> str:
        return "".join(
            line["text"] for line in lines if line["type"] == kind and line.get("index") == index
        )

    assert text_of("reasoning.delta") == (expected.reasoning_content or "")
    assert text_of("content.delta") == (expected.content or "")
    ends = [line for line in lines if line["type"] == "tool_call.end"]
    assert [end["call"] for end in ends] == [call_json(c) for c in expected.tool_calls]
    for call in expected.tool_calls:
        assert text_of("tool_call.arguments.delta", call.index) == call.arguments_json
    errors = [line for line in lines if line["type"] == "error"]
    assert [e["kind"] for e in errors] == [e.kind for e in expected.errors]
    end = lines[-1]
    assert end["finish_reason"] == fixture.finish
    assert end["message"] == json.loads(json.dumps(message_json(expected)))


@pytest.mark.parametrize("fixture", STREAMED_FIXTURES, ids=lambda f: f.id)
def test_json_lines_depend_on_the_chunk_size_only_in_delta_boundaries(
    capsys: pytest.CaptureFixture[str], fixture: Fixture
) -> None:
    outputs = [
        json_lines(run(capsys, *fixture_argv(fixture), "--stream", "--chunk", chunk)[1])
        for chunk in ("1", "3", "100000")
    ]
    assert len(outputs[0]) > len(outputs[2])  # the chunk size drives the feeding
    assert merged(outputs[0]) == merged(outputs[1]) == merged(outputs[2])


def test_stream_without_a_tty_prints_no_colour_and_nothing_else(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, _ = run(capsys, *QWEN3_EXAMPLE, "--stream")
    assert status == 0
    assert "\x1b[" not in out
    lines = json_lines(out)  # every line is an event: jq reads it as it is
    assert lines[0] == {"type": "reasoning.delta", "text": "\n"}
    assert sum(line["type"] == "tool_call.end" for line in lines) == 2
    assert lines[-1]["message"]["finish_reason"] == "tool_calls"


# the readable stream: --color always in a pipe, and a real terminal


def test_readable_stream_is_the_same_for_every_chunk_size(
    capsys: pytest.CaptureFixture[str],
) -> None:
    outputs = {
        run(capsys, *QWEN3_EXAMPLE, "--stream", "--color", "always", "--chunk", chunk)[1]
        for chunk in ("1", "2", "4", "7", "100000")
    }
    (out,) = outputs
    assert "\x1b[0;36mcall 0 get_weather\x1b[0m " in out


def test_readable_stream_shows_control_characters_as_escapes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    output = tmp_path / "output.txt"
    output.write_text("clear \x1b[2J\x07 this\r\n")
    status, out, _ = run(
        capsys, "parse", str(output), "--format", "hermes", "--stream", "--color", "always"
    )
    assert status == 0
    assert "clear \\x1b[2J\\x07 this\\x0d\n" in SGR.sub("", out)
    assert "\x1b[2J" not in out and "\x07" not in out


def run_in_terminal(*argv: str, **env: str) -> tuple[int, str]:
    """Runs the command with its standard output on a pseudo-terminal (isatty is true);
    returns its status and what the terminal showed, with newlines as written."""
    controller, terminal = pty.openpty()
    environment = {k: v for k, v in os.environ.items() if k != "NO_COLOR"} | env
    process = subprocess.Popen(
        [sys.executable, "-m", "toolparse.cli", *argv],
        stdin=subprocess.DEVNULL,
        stdout=terminal,
        stderr=subprocess.PIPE,
        env=environment,
    )
    os.close(terminal)
    shown = bytearray()
    try:
        while select.select([controller], [], [], 60)[0]:
            try:
                data = os.read(controller, 65536)
            except OSError:  # EIO: the command closed the terminal
                break
            if not data:
                break
            shown += data
    finally:
        os.close(controller)
        status = process.wait(timeout=60)
    assert process.stderr is not None
    assert process.stderr.read() == b""
    process.stderr.close()
    return status, shown.decode("utf-8").replace("\r\n", "\n")


terminal_only = pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")


@terminal_only
def test_terminal_shows_a_coloured_live_stream() -> None:
    status, shown = run_in_terminal(*QWEN3_EXAMPLE, "--stream")
    assert status == 0
    assert shown.startswith("\x1b[0;2mreasoning\x1b[0m\n")
    plain = SGR.sub("", shown)
    assert "reasoning\n\nThe user wants the weather in Zürich" in plain
    assert "set_reminder.\nI'll check the forecast and set the reminder.\n" in plain
    assert "\x1b[0;36mcall 0 get_weather\x1b[0m " in shown
    assert '\ncall 0 get_weather {"city": "Zürich", "days": 3, "units": "metric"} ✓\n' in plain
    assert "\x1b[0;32m ✓\x1b[0m" in shown
    assert "\ncall 1 set_reminder {" in plain
    assert plain.endswith("\nfinish: tool_calls, 2 calls, 0 errors\n")
    assert '"type"' not in shown


@terminal_only
def test_terminal_shows_a_call_ending_in_an_error_in_red(tmp_path: Path) -> None:
    cut = tmp_path / "cut.txt"
    cut.write_text('Let me look.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Par')
    status, shown = run_in_terminal("parse", str(cut), "--format", "hermes", "--stream")
    assert status == 1
    offset = len(cut.read_bytes())
    assert (
        '\x1b[0;36mcall 0 get_weather\x1b[0m {"city": "Par\x1b[0;31m ✗\x1b[0m\n'
        f"\x1b[0;31merror incomplete: the stream ended inside a tool call (call 0, byte {offset})"
        "\x1b[0m\n"
    ) in shown
    assert SGR.sub("", shown).endswith("finish: stop, 0 calls, 1 error\n")


@terminal_only
@pytest.mark.parametrize(
    ("flags", "env"),
    [(("--color", "never"), {}), ((), {"NO_COLOR": "1"})],
    ids=["color_never", "NO_COLOR"],
)
def test_terminal_without_colour_shows_the_same_text(
    flags: tuple[str, ...], env: dict[str, str]
) -> None:
    _, coloured = run_in_terminal(*QWEN3_EXAMPLE, "--stream")
    _, shown = run_in_terminal(*QWEN3_EXAMPLE, "--stream", *flags, **env)
    assert "\x1b" not in shown
    assert shown == SGR.sub("", coloured)


@terminal_only
def test_terminal_with_json_prints_json_lines() -> None:
    _, shown = run_in_terminal(*QWEN3_EXAMPLE, "--stream", "--json", "--color", "always")
    lines = json_lines(shown)
    assert lines[-1]["type"] == "end"


@terminal_only
def test_terminal_without_stream_prints_the_message() -> None:
    status, shown = run_in_terminal(*QWEN3_EXAMPLE)
    assert status == 0
    assert json.loads(shown)["finish_reason"] == "tool_calls"
