"""The bundled examples run, and the docs show them as they are."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
AGENT_LOOP = ROOT / "examples" / "agent_loop.py"
CONSTRAINED = ROOT / "examples" / "constrained_sampling.py"


@pytest.mark.parametrize(
    ("example", "doc"),
    [(AGENT_LOOP, "agent.md"), (CONSTRAINED, "export.md")],
    ids=["agent", "export"],
)
def test_the_docs_show_the_example_as_it_is(example: Path, doc: str) -> None:
    text = (ROOT / "docs" / doc).read_text(encoding="utf-8")
    start = text.index(f"<!-- example: examples/{example.name} -->\n```python\n")
    start = text.index("\n", text.index("```python", start)) + 1
    end = text.index("```\n<!-- /example -->", start)
    assert text[start:end] == example.read_text(encoding="utf-8")


def test_constrained_sampling_lets_only_the_schema_through(
    capsys: pytest.CaptureFixture[str],
) -> None:
    pytest.importorskip("llguidance", reason="constrained sampling needs llguidance")
    import toolparse

    example = runpy.run_path(str(CONSTRAINED), run_name="example")
    plan = example["PLAN"]
    # unconstrained, the planned call reads back as planned: days is a string
    (planned,) = toolparse.parse(plan.decode(), "hermes").tool_calls
    assert planned.arguments == {"city": "Oslo", "days": "3"}
    message = example["constrained_call"](plan)
    (call,) = message.tool_calls
    assert (call.name, call.arguments) == ("get_weather", {"city": "Oslo", "days": 3})
    assert not message.errors
    assert capsys.readouterr().out == '[call get_weather] {"city": "Oslo", "days": 3}\n'


def test_agent_loop_refuses_the_bad_call_and_runs_the_corrected_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    pytest.importorskip("jsonschema_rs", reason="validation needs toolparse[validate]")
    messages = runpy.run_path(str(AGENT_LOOP))["run_agent"]("Weather in Oslo?")
    shown = capsys.readouterr().out
    assert "[refused get_weather: invalid_arguments]" in shown
    assert '[ran get_weather({"city": "Oslo", "days": 3})]' in shown
    assert shown.rstrip().endswith("4 to 9 °C.")
    refusal = messages[2]
    assert refusal["role"] == "tool"
    assert "days: expected an integer" in refusal["content"]
    assert [m["role"] for m in messages] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
    ]
