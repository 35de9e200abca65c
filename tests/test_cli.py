"""The toolparse command: parse, formats, scan-json, find-markers, and its input errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolparse.cli import main

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_parse_prints_the_message_as_json(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(
        capsys,
        "parse",
        str(EXAMPLES / "qwen3_output.txt"),
        "--format",
        "qwen3",
        "--tools",
        str(EXAMPLES / "tools.json"),
    )
    message = json.loads(out)
    assert status == 0
    assert message["reasoning_content"].startswith("\nThe user wants the weather")
    assert message["content"] == "I'll check the forecast and set the reminder.\n"
    assert [c["name"] for c in message["tool_calls"]] == ["get_weather", "set_reminder"]
    assert message["tool_calls"][0]["arguments"] == {"city": "Zürich", "days": 3, "units": "metric"}
    assert message["finish_reason"] == "tool_calls"
    assert message["errors"] == []


def test_parse_stream_prints_events_then_the_message(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(
        capsys, "parse", str(EXAMPLES / "qwen3_output.txt"), "--format", "qwen3", "--stream"
    )
    lines = out.splitlines()
    assert status == 0
    assert lines[0].startswith("ReasoningDelta(")
    assert any(line.startswith("ToolCallStart(index=0") for line in lines)
    assert sum(line.startswith("ToolCallEnd(") for line in lines) == 2
    assert "\x1b[" not in out  # no colour when the output is not a terminal
    assert json.loads(out[out.index("\n{") :])["finish_reason"] == "tool_calls"


def test_parse_reports_errors_with_status_1(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    cut = tmp_path / "cut.txt"
    cut.write_text('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Par')
    status, out, _ = run(capsys, "parse", str(cut), "--format", "hermes")
    assert status == 1
    assert json.loads(out)["errors"][0]["kind"] == "incomplete"


def test_parse_repair_salvages_a_cut_off_call(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    cut = tmp_path / "cut.txt"
    cut.write_text('<tool_call><name>get_weather</name><args>{"city": "Par')
    status, out, _ = run(capsys, "parse", str(cut), "--format", "generic_xml", "--repair")
    assert status == 0
    (call,) = json.loads(out)["tool_calls"]
    assert (call["name"], call["arguments"], call["repaired"]) == (
        "get_weather",
        {"city": "Par"},
        True,
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("parse", "-", "--format", "no_such_format"), "unknown format 'no_such_format'"),
        (("parse", "-", "--format", "hermes", "--repair"), "has no repair mode"),
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
