"""detect_format on templates laid out as real chat templates lay them out, each in a way
the probes once read wrongly or refused (tests/templates/causes/: small templates of the
known families, each showing one such layout).
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip(
    "jinja2", reason="detect_format renders chat templates with jinja2 (toolparse[templates])"
)

from toolparse import get_format
from toolparse.derive import Detection, detect_format
from toolparse.derive.templates import render_probes

CAUSES = Path(__file__).parent.parent / "templates" / "causes"

# template file -> the built-in format it must be recognised as
EXPECTED = {
    "hermes_caller_variables": "hermes",
    "kimi_k2_id_queue": "kimi_k2",
    "lfm2_generation_block": "lfm2",
}


def template(stem: str) -> str:
    return (CAUSES / f"{stem}.jinja").read_text(encoding="utf-8")


def detect(stem: str) -> Detection:
    return detect_format(template(stem))


def test_every_template_file_is_listed() -> None:
    assert {p.stem for p in CAUSES.glob("*.jinja")} == set(EXPECTED)


@pytest.mark.parametrize("stem", sorted(EXPECTED))
def test_the_template_is_recognised_as_its_family(stem: str) -> None:
    d = detect(stem)
    assert d.recognised and not d.derived
    assert d.format is get_format(EXPECTED[stem])
    assert any(f"{d.name} reads every rendering back" in e for e in d.evidence)
    assert not d.reasoning_in_prompt


def test_a_generation_block_renders_its_body() -> None:
    _, outputs, failures = render_probes(template("lfm2_generation_block"))
    assert not failures
    assert outputs["one call"] == (
        '<|tool_call_start|>[get_weather(city="Paris", days=3)]<|tool_call_end|>'
    )


def test_a_generation_block_is_still_sandboxed() -> None:
    text = "{% generation %}{{ messages.__class__.__mro__ }}{% endgeneration %}"
    with pytest.raises(ValueError, match="does not render"):
        detect_format(text)


def test_a_template_that_appends_to_a_list_renders_in_the_mutable_sandbox() -> None:
    d = detect("kimi_k2_id_queue")
    assert d.name == "kimi_k2"
    assert any("mutable sandbox" in e for e in d.evidence)
    assert not any("cannot render" in e for e in d.evidence)


def test_the_mutable_sandbox_is_still_a_sandbox() -> None:
    text = (
        "{% set xs = [] %}{% set _ = xs.append(1) %}"
        "{{ messages.__class__.__mro__[1].__subclasses__() }}"
    )
    with pytest.raises(ValueError, match="does not render"):
        detect_format(text)


def test_the_templates_changes_do_not_reach_the_probes() -> None:
    # a template that empties the calls it is given: every probe is given afresh
    text = template("kimi_k2_id_queue").replace(
        "{%- set _ = queue.ids.append(tc.id) %}",
        "{%- set _ = queue.ids.append(tc.id) %}{%- set _ = tc.function.update({'name': 'x'}) %}",
    )
    assert text != template("kimi_k2_id_queue")
    _, first, _ = render_probes(text)
    _, again, _ = render_probes(text)
    assert first == again
    assert "functions.get_weather:0" in first["one call"]


def test_variables_callers_pass_are_given() -> None:
    prompt, _, failures = render_probes(template("hermes_caller_variables"))
    assert not failures
    assert 'Functions: [{"name": "get_weather"' in prompt
    assert "Today is " in prompt
    text = "{{ date_string }}|{{ current_date }}|{{ documents | length }}"
    assert detect_format(text).format is None  # renders; nothing to recognise
