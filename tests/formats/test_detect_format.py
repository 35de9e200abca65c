"""detect_format: chat templates of the known families, templates of new families in known
shapes (derived formats), and templates that are not recognised.

The templates under tests/templates/ are written from each family's documented output (the
format modules' docstrings): <family>.jinja for a built-in format, derived_*.jinja for a
known shape with new markers, unrecognised_*.jinja for shapes no format covers.  A derived
format must be a working format: outputs written with its markers are parsed whole and byte
by byte, on every engine, to the same events and message.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "jinja2", reason="detect_format renders chat templates with jinja2 (toolparse[templates])"
)

from engines import ENGINES, merge_deltas, run_events
from toolparse import Format, StreamParser, format_for_model, get_format
from toolparse.derive import Detection, detect_format
from toolparse.derive.templates import PROBE_TOOLS, render_probes

TEMPLATES = Path(__file__).parent.parent / "templates"

# template file -> the built-in format it must be recognised as
BUILT_IN = {
    "apertus": "apertus",
    "apriel": "apriel",
    "command_r7b": "cohere_command",
    "deepseek_r1": "deepseek_r1",
    "deepseek_v3": "deepseek_v3",
    "deepseek_v31": "deepseek_v31",
    "deepseek_v32": "deepseek_v32",
    "deepseek_v4": "deepseek_v4",
    "deepseek_v41": "deepseek_v41",
    "dots": "dots",
    "ernie45": "ernie45",
    "firefunction_v2": "firefunction_v2",
    "functionary_v3_1": "functionary_v3_1",
    "functionary_v3_2": "functionary_v3_2",
    "functiongemma": "functiongemma",
    "gemma4": "gemma4",
    "gigachat3": "gigachat3",
    "gigachat35": "gigachat35",
    "glm45": "glm45",
    "gpt_oss": "gpt_oss",
    "granite": "granite",
    "granite_20b_fc": "granite_20b_fc",
    "granite4": "hermes",
    "hermes": "hermes",
    "hunyuan": "hunyuan",
    "hunyuan_a13b": "hunyuan_a13b",
    "hunyuan_a13b_answer": "hunyuan_a13b",
    "inkling": "inkling",
    "internlm": "internlm",
    "iquest_q1": "iquest_q1",
    "jamba": "jamba",
    "k2_horizon": "k2_horizon",
    "kimi": "kimi",
    "kimi_k2": "kimi_k2",
    "kimi_k3": "kimi_k3",
    "lfm2": "lfm2",
    "ling3": "glm45",
    "llama3_json": "llama3_json",
    "longcat": "longcat",
    "minicpm5": "minicpm5",
    "minimax_m2": "minimax_m2",
    "minimax_m3": "minimax_m3",
    "mistral": "mistral",
    "mistral_v7": "mistral",
    "muse": "muse",
    "nemotron_v2": "nemotron_v2",
    "olmo3": "olmo3",
    "phi4_mini": "phi4_mini",
    "plamo3": "plamo3",
    "poolside_v1": "glm45",
    "pythonic": "pythonic",
    "qwen3": "qwen3",
    "qwen3_coder": "qwen3_coder",
    "seed_oss": "seed_oss",
    "step3": "step3",
    "xlam": "xlam",
}
# templates whose generation prompt opens the reasoning block
OPENS_REASONING = {
    "apriel",
    "deepseek_r1",
    "deepseek_v4",
    "deepseek_v41",
    "ernie45",
    "iquest_q1",
    "kimi_k3",
    "ling3",
    "minimax_m2",
    "nemotron_v2",
    "plamo3",
    "step3",
}

# template file -> (derived format name, the markers it must know)
DERIVED = {
    "derived_json_tags": ("derived_json_in_tags", {"<my_call>", "</my_call>", "<reflect>"}),
    "derived_json_keys": ("derived_json_in_tags", {"<tool_call>", "</tool_call>"}),
    "derived_bracket_call": ("derived_bracket_json", {"[CALL]"}),
    "derived_bracket_list": ("derived_bracket_json", {"[CALLS]"}),
    "derived_name_tag": ("derived_name_tag_json", {'<call name="', '">', "</call>"}),
    "derived_xml": ("derived_xml_params", {'<tool name="', '<arg key="', "</arg>", "</action>"}),
    "derived_kv_xml": ("derived_xml_params", {"<invoke>", "<key>", "<value>", "<scratch>"}),
}
UNRECOGNISED = ("unrecognised_bare_python", "unrecognised_kv_lines", "unrecognised_no_tools")

TOOLS: list[dict[str, Any]] = [
    *PROBE_TOOLS,
    {
        "type": "function",
        "function": {
            "name": "get_weather_by_zip",
            "parameters": {"type": "object", "properties": {"zip": {"type": "string"}}},
        },
    },
]


def template(stem: str) -> str:
    return (TEMPLATES / f"{stem}.jinja").read_text(encoding="utf-8")


def detect(stem: str) -> Detection:
    return detect_format(template(stem))


def test_every_template_file_is_listed() -> None:
    stems = {p.stem for p in TEMPLATES.glob("*.jinja")}
    assert stems == set(BUILT_IN) | set(DERIVED) | set(UNRECOGNISED)


def test_templates_cover_at_least_15_families() -> None:
    assert len(set(BUILT_IN.values())) >= 15


@pytest.mark.parametrize("stem", sorted(BUILT_IN))
def test_built_in_family_is_recognised(stem: str) -> None:
    d = detect(stem)
    assert d.recognised and not d.derived
    assert d.name == BUILT_IN[stem]
    assert d.format is get_format(BUILT_IN[stem])
    assert any(f"{d.name} reads every rendering back" in e for e in d.evidence)
    assert d.reasoning_in_prompt is (True if stem in OPENS_REASONING else d.reasoning_in_prompt)
    if stem not in OPENS_REASONING:
        assert not d.reasoning_in_prompt


@pytest.mark.parametrize(
    ("stem", "others"),
    [
        ("hermes", {"ernie45", "granite4", "qwen3", "xlam"}),
        ("qwen3", {"ernie45", "hermes"}),
        ("mistral_v7", {"xlam"}),
        ("deepseek_r1", {"deepseek_v3"}),
        ("glm45", {"ling3"}),
        ("command_r7b", {"command_r7b"}),
        ("firefunction_v2", {"phi4_mini"}),
        ("jamba", {"apriel", "hunyuan_a13b"}),
        ("poolside_v1", {"ling3", "poolside_v1"}),
    ],
)
def test_formats_that_render_alike_are_named_in_the_evidence(stem: str, others: set[str]) -> None:
    d = detect(stem)
    [line] = [e for e in d.evidence if e.startswith("also read back by")]
    assert others <= {name.strip() for name in line.split(":")[0][17:].split(",")}
    assert "most general" in line


def test_reasoning_rendered_in_think_tags_picks_qwen3_over_hermes() -> None:
    assert detect("hermes").name == "hermes"
    d = detect("qwen3")
    assert d.name == "qwen3"
    assert any("renders reasoning" in e for e in d.evidence)


def test_a_template_that_renders_one_call_only_is_checked_on_what_it_renders() -> None:
    d = detect("llama3_json")
    assert d.name == "llama3_json"
    assert any("two calls probe" in e and "not checked" in e for e in d.evidence)


def test_a_template_that_takes_arguments_as_json_text_is_rendered_with_them() -> None:
    d = detect("deepseek_v31")
    assert d.name == "deepseek_v31"
    assert any(
        e.startswith("the one call probe renders with") and "arguments as JSON text" in e
        for e in d.evidence
    )


def test_a_template_that_writes_arguments_with_the_string_filter_gets_json_text() -> None:
    # InternLM2's template writes the arguments with |string: Python's notation for a
    # mapping, JSON for JSON text
    d = detect("internlm")
    assert d.name == "internlm"
    assert any(
        e.startswith("the one call probe renders with") and "arguments as JSON text" in e
        for e in d.evidence
    )


def test_a_template_that_writes_the_call_id_for_the_name_gets_kimi_style_ids() -> None:
    d = detect("kimi_k2")
    assert d.name == "kimi_k2"
    assert any(
        e.startswith("the two calls probe renders with") and "Kimi-style call ids" in e
        for e in d.evidence
    )


def test_a_template_that_writes_only_the_first_call_is_checked_on_one_call() -> None:
    d = detect("gigachat3")
    assert d.name == "gigachat3"
    assert any("two calls probe" in e and "only the first" in e for e in d.evidence)


def test_a_call_closed_by_the_end_of_turn_marker_is_read_with_it() -> None:
    # Inkling's <|end_message|> ends every block, so it is also the turn's end
    _, outputs, _ = render_probes(template("inkling"))
    assert outputs["one call"].endswith('"name":"get_weather"}')
    assert detect("inkling").name == "inkling"


def test_the_end_of_turn_does_not_start_inside_a_marker() -> None:
    # <|close|>response<|sep|> and <|close|>tools<|sep|> share <|sep|>, which is not the end
    _, outputs, _ = render_probes(template("kimi_k3"))
    assert outputs["answer"].endswith("<|close|>response<|sep|>")
    assert outputs["one call"].endswith("<|close|>tools<|sep|>")


def test_a_template_without_tool_calls_that_renders_reasoning_finds_a_format_without_calls() -> (
    None
):
    d = detect("kimi")
    assert d.name == "kimi" and d.format is not None and not d.format.tool_calls
    assert any("writes no tool calls" in e for e in d.evidence)
    # a plain template with neither calls nor reasoning stays unrecognised
    assert detect("unrecognised_no_tools").format is None


OPENSOURCE = [
    (f"<{slash}{tag}>", f"<{slash}{tag}:opensource>")
    for tag in ("tool_calls", "tool_call", "arg_key", "arg_value", "think")
    for slash in ("", "/")
] + [("<tool_sep>", "<tool_sep:opensource>")]


@pytest.mark.parametrize(
    ("stem", "replacements", "shown"),
    [
        # GigaChat 3.1: <|function_call|> right after the text, no "function call" turn
        (
            "gigachat3",
            [
                (
                    "<|message_sep|>\\n\\n' }}\n{%- if message.tool_calls %}",
                    "' }}\n{%- if message.tool_calls %}",
                ),
                ("'function call<|role_sep|>\\n' + ", "'<|function_call|>' + "),
            ],
            "<|function_call|>{",
        ),
        ("hunyuan", OPENSOURCE, "<tool_call:opensource>get_weather<tool_sep:opensource>"),
        # OLMo 3 as vLLM's example template writes it: the calls on lines of their own,
        # strings in single quotes
        (
            "olmo3",
            [
                ("'<function_calls>'", "'<function_calls>\\n'"),
                ("'</function_calls>'", "'\\n</function_calls>'"),
                (
                    "{{- key + '=' + value | tojson }}",
                    "{{- key + '=' }}"
                    '{{- "\'" + value + "\'" if value is string else value | tojson }}',
                ),
            ],
            "<function_calls>\\nget_weather(city='Paris', days=3)\\n</function_calls>",
        ),
        (
            "k2_horizon",
            [
                (
                    "</ifm|arg_key><ifm|arg_value>'",
                    "</ifm|arg_key><ifm|arg_type>' + ('string' if value is string else 'integer')"
                    " + '</ifm|arg_type><ifm|arg_value>'",
                )
            ],
            "<ifm|arg_type>integer</ifm|arg_type><ifm|arg_value>3<",
        ),
    ],
)
def test_a_family_variant_is_detected_as_the_family(
    stem: str, replacements: list[tuple[str, str]], shown: str
) -> None:
    text = template(stem)
    for old, new in replacements:
        assert old in text
        text = text.replace(old, new)
    d = detect_format(text)
    assert any(shown in e for e in d.evidence if "renders as" in e)
    assert d.name == stem


def test_a_generation_prompt_may_end_with_a_space_the_turn_does_not_write() -> None:
    # Granite-20B-FC: the prompt ends "ASSISTANT: ", a call turn is "ASSISTANT:<function_call>"
    prompt, outputs, _ = render_probes(template("granite_20b_fc"))
    assert prompt.endswith("ASSISTANT: ")
    assert outputs["one call"].startswith("<function_call> {")
    assert outputs["answer"] == "It is sunny in Paris."


def test_the_probes_are_the_assistant_turn_after_the_generation_prompt() -> None:
    prompt, outputs, failures = render_probes(template("minimax_m2"))
    assert prompt.endswith("<think>\n") and not failures
    assert outputs["reasoning"].startswith("The user wants the forecast")
    assert outputs["one call"].startswith("<minimax:tool_call>")
    assert not outputs["answer"].endswith("[e~[")  # the end of turn is not output


@pytest.mark.parametrize("stem", UNRECOGNISED)
def test_unknown_shapes_are_not_recognised_and_say_why(stem: str) -> None:
    d = detect(stem)
    assert d.format is None and d.name is None and not d.derived
    assert d.evidence[-1] == "not recognised"
    assert any("renders as" in e for e in d.evidence)
    assert any("no built-in format reads these renderings back" in e for e in d.evidence)


def test_a_built_in_shape_left_out_of_the_candidates_is_derived_not_guessed() -> None:
    # only glm45 may be matched: the Hermes rendering is then a JSON-in-tags shape
    d = detect_format(template("hermes"), formats=[get_format("glm45")])
    assert d.derived and d.format is not None
    assert d.format.call_markers == ("<tool_call>", "</tool_call>")


def test_a_template_that_does_not_compile_is_an_error() -> None:
    with pytest.raises(ValueError, match="does not compile"):
        detect_format("{% for message in messages %}")


def test_templates_render_in_a_sandbox() -> None:
    with pytest.raises(ValueError, match="does not render"):
        detect_format("{{ messages.__class__.__mro__[1].__subclasses__() }}")


def test_template_helpers_are_available() -> None:
    text = (
        "{{- strftime_now('%Y') }}{% for m in messages %}<{{ m.role }}>"
        "{{- m.content }}{% for tc in m.tool_calls or [] %}<c>"
        "{{- {'name': tc.function.name, 'arguments': tc.function.arguments}"
        " | tojson(ensure_ascii=False, sort_keys=False) }}</c>{% endfor %}"
        "</{{ m.role }}>{% endfor %}{% if add_generation_prompt %}<assistant>{% endif %}"
        "{% if tools | length != 2 %}{{ raise_exception('tools missing') }}{% endif %}"
    )
    d = detect_format(text)
    assert d.derived and d.format is not None
    assert d.format.call_markers == ("<c>", "</c>")


# -- derived formats are working formats ---------------------------------------------------


def message_of(fmt: Format, data: bytes, engine: str, sizes: list[int] | None, **kw: Any) -> Any:
    parser = StreamParser(fmt, tools=TOOLS, engine=engine, seed=3, **kw)
    events = run_events(parser, data, sizes)
    return merge_deltas(events), parser.message


def calls(*items: tuple[str, dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    return list(items)


PARIS = ("get_weather", {"city": "Paris"})
UTC = ("get_time", {"timezone": "UTC"})

# derived template -> [(output written with the derived markers, reasoning, content, calls,
# error kinds)]
DERIVED_OUTPUTS: dict[str, list[tuple[str, str | None, str | None, list[Any], list[str]]]] = {
    "derived_json_tags": [
        (
            '<reflect>Two lookups.</reflect>\nChecking.<my_call>{"name": "get_weather", '
            '"arguments": {"city": "Paris"}}</my_call>\n<my_call>{"name": "get_time", '
            '"arguments": {"timezone": "UTC"}}</my_call>',
            "Two lookups.",
            "Checking.",
            [PARIS, UTC],
            [],
        ),
        (
            '<my_call>{"name": "get_weather", "arguments": {"city": "</my_call> ☀"}}</my_call>',
            None,
            None,
            [("get_weather", {"city": "</my_call> ☀"})],
            [],
        ),
        ('<my_call>{"name": "get_weather", "arguments": {"ci', None, None, [], ["incomplete"]),
        ("Just text, no calls.", None, "Just text, no calls.", [], []),
    ],
    "derived_json_keys": [
        (
            '<tool_call>\n{"function": "get_weather", "params": {"city": "Paris"}}\n</tool_call>',
            None,
            None,
            [PARIS],
            [],
        ),
        (
            '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>',
            None,
            None,
            [],
            ["invalid_arguments"],
        ),
    ],
    "derived_bracket_call": [
        (
            '[CALL]{"tool": "get_weather", "args": {"city": "Paris"}}'
            '[CALL]{"tool": "get_time", "args": {"timezone": "UTC"}}',
            None,
            None,
            [PARIS, UTC],
            [],
        ),
        ('[CALL]{"tool": "nope", "args": {}}', None, None, [], ["unknown_tool"]),
    ],
    "derived_bracket_list": [
        (
            'Sure.[CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}}, '
            '{"name": "get_time", "arguments": {"timezone": "UTC"}}]',
            None,
            "Sure.",
            [PARIS, UTC],
            [],
        ),
        (
            '[CALLS][{"name": "get_weather_by_zip", "arguments": {"zip": "75001"}}]',
            None,
            None,
            [("get_weather_by_zip", {"zip": "75001"})],
            [],
        ),
    ],
    "derived_name_tag": [
        (
            '<call name="get_weather">{"city": "Paris"}</call>'
            '<call name="get_time">{"timezone": "UTC"}</call>',
            None,
            None,
            [PARIS, UTC],
            [],
        ),
        ('<call name="get_weather">{"city": Paris}</call>', None, None, [], ["invalid_arguments"]),
    ],
    "derived_xml": [
        (
            'Let me look.<action>\n<tool name="get_weather">\n<arg key="city">Paris</arg>\n'
            '<arg key="days">2</arg>\n</tool>\n</action>',
            None,
            "Let me look.",
            [("get_weather", {"city": "Paris", "days": 2})],
            [],
        ),
        (
            '<action><tool name="get_weather"><arg key="city">a</arg> b</arg></tool></action>',
            None,
            None,
            [("get_weather", {"city": "a</arg> b"})],
            [],
        ),
    ],
    "derived_kv_xml": [
        (
            "Need the weather.</scratch>Looking.<invoke>get_weather\n<key>city</key>"
            "<value>Paris</value>\n</invoke><invoke>get_time\n<key>timezone</key>"
            "<value>UTC</value>\n</invoke>",
            "Need the weather.",
            "Looking.",
            [PARIS, UTC],
            [],
        ),
    ],
}


def test_every_derived_template_has_outputs() -> None:
    assert set(DERIVED_OUTPUTS) == set(DERIVED)


@pytest.mark.parametrize("stem", sorted(DERIVED))
def test_derived_format_has_the_template_markers(stem: str) -> None:
    d = detect(stem)
    assert d.derived and d.format is not None
    name, markers = DERIVED[stem]
    assert d.name == d.format.name == name
    assert markers <= set(d.format.markers)
    assert any(e.startswith("derived format") for e in d.evidence)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("stem", sorted(DERIVED))
def test_derived_format_examples_parse(stem: str, engine: str) -> None:
    fmt = detect(stem).format
    assert fmt is not None
    for example in fmt.examples:
        parser = StreamParser(fmt, tools=TOOLS, engine=engine)
        parser.feed(example)
        parser.finish("stop")
        assert parser.message.tool_calls and not parser.message.errors


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    ("stem", "case"),
    [(stem, i) for stem, cases in sorted(DERIVED_OUTPUTS.items()) for i in range(len(cases))],
)
def test_derived_format_parses_outputs_whole_and_byte_by_byte(
    stem: str, case: int, engine: str
) -> None:
    d = detect(stem)
    assert d.format is not None
    text, reasoning, content, want_calls, errors = DERIVED_OUTPUTS[stem][case]
    data = text.encode()
    kw = {"reasoning_in_prompt": d.reasoning_in_prompt}
    whole_events, message = message_of(d.format, data, engine, None, **kw)
    byte_events, byte_message = message_of(d.format, data, engine, [1] * len(data), **kw)
    assert byte_events == whole_events
    assert byte_message == message
    assert message.reasoning_content == reasoning
    assert message.content == content
    assert [(c.name, c.arguments) for c in message.tool_calls] == want_calls
    assert [e.kind for e in message.errors] == errors


@pytest.mark.skipif(len(ENGINES) < 2, reason="needs both engines")
@pytest.mark.parametrize("stem", sorted(DERIVED_OUTPUTS))
def test_derived_formats_give_the_same_events_on_both_engines(stem: str) -> None:
    d = detect(stem)
    assert d.format is not None
    for text, *_ in DERIVED_OUTPUTS[stem]:
        data = text.encode()
        runs = [
            message_of(d.format, data, e, None, reasoning_in_prompt=d.reasoning_in_prompt)[0]
            for e in ENGINES
        ]
        assert runs[0] == runs[1]


# -- model ids of families whose templates show a built-in format ----------------------------


@pytest.mark.parametrize(
    ("model_id", "name"),
    [
        # Step-3.7-Flash's template writes <tool_call><function=NAME><parameter=K>, as 3.5's
        ("stepfun-ai/Step-3.7-Flash", "qwen3_coder"),
        # <TOOLCALL>[{"name", "arguments"}]</TOOLCALL>, as Nemotron Nano v2
        ("nvidia/Llama-3_3-Nemotron-Super-49B-v1_5", "nemotron_v2"),
        # Qwen3-Coder XML calls after <think> reasoning
        ("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", "qwen3_coder"),
        ("nvidia/Nemotron-3-Nano-Omni-30B-A3B-Reasoning", "qwen3_coder"),
        # <tool_call>{"name", "arguments"}</tool_call> JSON blocks (Qwen2.5's layout)
        ("XiaomiMiMo/MiMo-VL-7B-RL-2508", "hermes"),
        ("speakleash/Bielik-11B-v3.0-Instruct", "hermes"),
        # the same blocks after <think> reasoning its template opens
        ("RekaAI/reka-edge-2603", "qwen3"),
        # Granite 4.1 keeps Granite 4.0's template and calls
        ("ibm-granite/granite-4.1-8b", "granite4"),
    ],
)
def test_format_for_model_knows_the_model(model_id: str, name: str) -> None:
    assert format_for_model(model_id) is get_format(name)
