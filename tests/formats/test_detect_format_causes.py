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
    "command_system_after_user": "cohere_command",
    "command_thinking_off": "cohere_command",
    "deepseek_v31_indented": "deepseek_v31",
    "gemma4_thought_prompt": "gemma4",
    "hermes_caller_variables": "hermes",
    "hermes_content_turn": "hermes",
    "hermes_prefill": "hermes",
    "kimi_k2_id_queue": "kimi_k2",
    "lfm2_generation_block": "lfm2",
    "llama_json_adjacent_calls": "llama3_json",
    "mistral_system_in_last_user": "mistral",
    "qwen3_closed_think_prompt": "qwen3",
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


def test_a_marker_starting_with_a_bar_keeps_its_start() -> None:
    # the prompt goes on <|channel>, a call turn on <|tool_call>: they share "<|"
    prompt, outputs, _ = render_probes(template("gemma4_thought_prompt"))
    assert prompt.endswith("<|turn>model\n<|channel>thought\n<channel|>")
    assert outputs["one call"].startswith("<|tool_call>call:get_weather{")
    assert outputs["answer"] == "It is sunny in Paris."


def test_the_turn_starts_at_a_marker_where_the_history_goes_on_otherwise() -> None:
    # the user message's rendering goes on with a system turn, an assistant turn follows
    # the user message instead: both start <|START_OF_TURN_TOKEN|><|
    _, outputs, _ = render_probes(template("command_system_after_user"))
    assert outputs["answer"] == "<|START_RESPONSE|>It is sunny in Paris.<|END_RESPONSE|>"
    assert outputs["one call"].startswith('<|START_ACTION|>[{"tool_call_id": "0"')


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


def test_the_generation_prompt_is_matched_whitespace_aside() -> None:
    # the DeepSeek markers' bars are full-width
    bar, sep = "\uff5c", "\u2581"
    prompt, outputs, _ = render_probes(template("deepseek_v31_indented"))
    assert prompt.rstrip().endswith("</think>") and f"<{bar}Assistant{bar}>\n" in prompt
    calls = f"<{bar}tool{sep}calls{sep}begin{bar}><{bar}tool{sep}call{sep}begin{bar}>"
    assert outputs["one call"].startswith(calls + "get_weather")
    assert outputs["answer"] == "It is sunny in Paris."


def test_a_last_assistant_message_written_as_a_prefill_is_rendered_followed() -> None:
    d = detect("hermes_prefill")
    assert any("with a user message after them" in e for e in d.evidence)
    _, outputs, _ = render_probes(template("hermes_prefill"))
    assert outputs["one call"] == (
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}'
        "\n</tool_call>"
    )


def test_a_system_prompt_moved_into_the_last_user_message_is_not_the_turn() -> None:
    prompt, outputs, _ = render_probes(template("mistral_system_in_last_user"))
    assert "Answer briefly." in prompt
    assert outputs["one call"] == '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris", "days": 3}'
    assert not any("Answer briefly" in text for text in outputs.values())


def test_calls_with_empty_text_written_as_a_turn_of_their_own_get_content_none() -> None:
    d = detect("hermes_content_turn")
    assert any("content None" in e and "empty assistant turn" in e for e in d.evidence)
    _, outputs, _ = render_probes(template("hermes_content_turn"))
    assert "<|im_start|>" not in outputs["one call"]


def test_an_empty_closed_think_block_in_the_prompt_does_not_open_reasoning() -> None:
    d = detect("qwen3_closed_think_prompt")
    assert d.name == "qwen3" and d.reasoning_in_prompt is False
    _, outputs, _ = render_probes(template("qwen3_closed_think_prompt"))
    assert outputs["reasoning"].startswith("<think>\nThe user wants the forecast")


def test_a_closing_thinking_marker_is_not_an_opener() -> None:
    d = detect("command_thinking_off")
    assert d.name == "cohere_command" and d.reasoning_in_prompt is False
    assert not any("opens the reasoning block" in e for e in d.evidence)


def test_a_closing_marker_ending_the_prompt_is_not_a_derived_reasoning_opener() -> None:
    # a new family whose past turns write the reasoning's close only, and whose prompt ends
    # with that close (reasoning off): the prompt's last tag does not open the block
    text = (
        "{% for m in messages %}<{{ m.role }}>"
        "{% if m.reasoning_content %}{{ m.reasoning_content }}[/plan]{% endif %}"
        "{{ m.content or '' }}{% for tc in m.tool_calls or [] %}<act>"
        "{{ {'name': tc.function.name, 'arguments': tc.function.arguments} | tojson }}"
        "</act>{% endfor %}</{{ m.role }}>{% endfor %}"
        "{% if add_generation_prompt %}<assistant>[/plan]{% endif %}"
    )
    d = detect_format(text)
    assert d.format is None
    assert not any(e.startswith("reasoning between '[/plan]'") for e in d.evidence)
    assert any("markers are not plain tags (before: ''" in e for e in d.evidence)


def test_variables_callers_pass_are_given() -> None:
    prompt, _, failures = render_probes(template("hermes_caller_variables"))
    assert not failures
    assert 'Functions: [{"name": "get_weather"' in prompt
    assert "Today is " in prompt
    text = "{{ date_string }}|{{ current_date }}|{{ documents | length }}"
    assert detect_format(text).format is None  # renders; nothing to recognise
