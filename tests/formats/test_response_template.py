"""Format.from_response_template: formats from Hugging Face response templates (the
``response_template`` fields spec and the older ``response_schema`` regex schema).

The specs are written in the shapes transformers documents (the SmolLM3 / Qwen / Cohere
examples of its response parsing guide and the schemas of its tests); each built format is
a working format: outputs are parsed whole and byte by byte, on every engine.  Shapes no
derived format covers are a ValueError that says what is not supported.
"""

from __future__ import annotations

from typing import Any

import pytest

from engines import ENGINES, merge_deltas, run_events
from toolparse import Format, StreamParser
from toolparse.derive.response_template import from_response_template

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "get_time",
            "parameters": {"type": "object", "properties": {"timezone": {"type": "string"}}},
        },
    },
]

FUNCTION = {"type": "function", "function": "{content}"}
NAMED = {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}

SMOLLM = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "thinking": {"open": "<think>", "close": "</think>", "content": "text"},
        "tool_calls": {
            "open": "<tool_call>",
            "close": "</tool_call>",
            "repeats": True,
            "content": "json",
            "transform": FUNCTION,
        },
        "content": {"close": "<|im_end|>", "content": "text"},
    },
}
QWEN_XML = {
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "tool_calls": {
            "open_pattern": r"<tool_call>\s*<function=(?P<name>\w+)>",
            "close": "</tool_call>",
            "repeats": True,
            "content": "xml-inline",
            "content_args": {
                "tag_pattern": r"<parameter=(?P<key>\w+)>\s*(?P<value>.*?)\s*</parameter>",
                "value_parser": {"name": "json", "args": {"allow_non_json": True}},
            },
            "transform": NAMED,
        }
    },
}
COHERE = {
    "start_anchor": "<|CHATBOT_TOKEN|>",
    "fields": {
        "tool_calls": {
            "open": "<|START_ACTION|>",
            "close": "<|END_ACTION|>",
            "content": "json",
            "transform_each": True,
            "transform": {
                "type": "function",
                "function": {"name": "{tool_name}", "arguments": "{parameters}"},
            },
        }
    },
}
FUNCTION_TAG = {
    "start_anchor": "<|start_header_id|>assistant<|end_header_id|>\n\n",
    "fields": {
        "tool_calls": {
            "open_pattern": r"<function=(?P<name>\w+)>",
            "close": "</function>",
            "repeats": True,
            "content": "json",
            "transform": NAMED,
        }
    },
}
BRACKET = {
    "start_anchor": "[/INST]",
    "fields": {
        "thinking": {"open": ["[THINK]"], "close": ["[/THINK]"]},
        "tool_calls": {
            "open": "[TOOL_CALLS]",
            "repeats": True,
            "content": "json",
            "transform": {
                "type": "function",
                "function": {"name": "{content.name}", "arguments": "{content.arguments}"},
            },
        },
    },
}

# the older response_schema shapes (transformers' test schemas)
QWEN3_SCHEMA = {
    "x-regex": r"^(?:<think>\n?(?P<thinking>.+?)\n?</think>\s*)?(?P<content>.*?)"
    r"(?=(?:<tool_call>|<\|im_end\|>|$))(?:<tool_call>(?P<tool_calls>.+?)</tool_call>)?"
    r"\s*(?:<\|im_end\|>|$)",
    "type": "object",
    "properties": {
        "role": {"const": "assistant"},
        "content": {"type": "string"},
        "thinking": {"type": "string"},
        "tool_calls": {
            "x-parser": "json",
            "x-parser-args": {"transform": "[{type: 'function', function: @}]"},
            "type": "array",
        },
    },
}
ITERATOR_SCHEMA = {
    "type": "object",
    "properties": {
        "role": {"const": "assistant"},
        "thinking": {"type": "string", "x-regex": r"<think>\n?(.*?)\n?</think>"},
        "tool_calls": {
            "x-regex-iterator": "<tool_call>(.*?)</tool_call>",
            "type": "array",
            "items": {
                "type": "object",
                "x-parser": "json",
                "x-parser-args": {"transform": "{type: 'function', function: @}"},
            },
        },
    },
}
ACTION_SCHEMA = {
    "type": "object",
    "properties": {
        "role": {"const": "assistant"},
        "thinking": {
            "type": "string",
            "x-regex": r"<\|START_THINKING\|>(.*?)(?:<\|END_THINKING\|>|$)",
        },
        "tool_calls": {
            "x-regex": r"<\|START_ACTION\|>(.*?)(?:<\|END_ACTION\|>|$)",
            "x-parser": "json",
            "x-parser-args": {
                "transform": "[*].{type: 'function', function: {name: tool_name, "
                "arguments: parameters}}"
            },
            "type": "array",
        },
    },
}
GLM_SCHEMA = {
    "type": "object",
    "properties": {
        "role": {"const": "assistant"},
        "reasoning_content": {"type": "string", "x-regex": r"<think>(.*?)</think>"},
        "tool_calls": {
            "type": "array",
            "x-regex-iterator": r"<tool_call>\s*(.+?)\s*</tool_call>",
            "items": {
                "type": "object",
                "properties": {
                    "type": {"const": "function"},
                    "function": {
                        "type": "object",
                        "properties": {
                            "name": {"type": "string", "x-regex": r"^(\S+)"},
                            "arguments": {
                                "type": "object",
                                "x-regex-key-value": r"<arg_key>(?P<key>[^<]+)</arg_key>\s*\n"
                                r"<arg_value>(?P<value>.*?)</arg_value>",
                            },
                        },
                    },
                },
            },
        },
    },
}
QWEN_XML_SCHEMA = {
    "type": "object",
    "properties": {
        "tool_calls": {
            "x-regex-iterator": r"<function=(?P<name>[^>\n]+)>(?P<arguments>.*?)</function>",
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "arguments": {
                        "type": "object",
                        "x-regex-key-value": r"<parameter=(?P<key>[^>\n]+)>\s*(?P<value>.*?)\s*"
                        r"</parameter>",
                    },
                },
            },
        }
    },
}

LIST_SCHEMA = {
    "x-regex": r"(?:<calls>(?P<tool_calls>.+?)</calls>)?\s*(?P<content>.*)",
    "properties": {
        "content": {"type": "string"},
        "tool_calls": {
            "x-parser": "json",
            "x-parser-args": {
                "transform": "[*].{type: 'function', function: {name: n, arguments: a}}"
            },
        },
    },
}

PARIS = ("get_weather", {"city": "Paris"})
UTC = ("get_time", {"timezone": "UTC"})
JSON_PARIS = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
JSON_UTC = '{"name": "get_time", "arguments": {"timezone": "UTC"}}'

# spec -> [(output, reasoning, content, calls, error kinds)]
CASES: dict[str, tuple[dict[str, Any], list[tuple[str, Any, Any, list[Any], list[str]]]]] = {
    "smollm": (
        SMOLLM,
        [
            (
                f"<think>\nTwo lookups.\n</think>\n\n<tool_call>{JSON_PARIS}</tool_call>\n"
                f"<tool_call>\n{JSON_UTC}\n</tool_call>",
                "\nTwo lookups.\n",
                None,
                [PARIS, UTC],
                [],
            ),
            ("Hello there.", None, "Hello there.", [], []),
            (f"<tool_call>{JSON_PARIS}", None, None, [], ["incomplete"]),
        ],
    ),
    "qwen_xml": (
        QWEN_XML,
        [
            (
                "Checking.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n"
                "</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>",
                None,
                "Checking.\n",
                [("get_weather", {"city": "Paris", "days": 3})],
                [],
            ),
        ],
    ),
    "cohere": (
        COHERE,
        [
            (
                '<|START_ACTION|>[\n    {"tool_name": "get_weather", "parameters": {"city": '
                '"Paris"}},\n    {"tool_name": "get_time", "parameters": {"timezone": "UTC"}}\n'
                "]<|END_ACTION|>",
                None,
                None,
                [PARIS, UTC],
                [],
            ),
        ],
    ),
    "function_tag": (
        FUNCTION_TAG,
        [
            (
                '<function=get_weather>{"city": "Paris"}</function>'
                '<function=get_time>{"timezone": "UTC"}</function>',
                None,
                None,
                [PARIS, UTC],
                [],
            ),
            ('<function=get_weather>{"city": </function>', None, None, [], ["invalid_arguments"]),
        ],
    ),
    "bracket": (
        BRACKET,
        [
            (
                f"[THINK]Paris first.[/THINK][TOOL_CALLS]{JSON_PARIS}[TOOL_CALLS]{JSON_UTC}",
                "Paris first.",
                None,
                [PARIS, UTC],
                [],
            ),
        ],
    ),
    "qwen3_schema": (
        QWEN3_SCHEMA,
        [
            (
                f"<think>Hm.</think>Sure.<tool_call>{JSON_PARIS}</tool_call>",
                "Hm.",
                "Sure.",
                [PARIS],
                [],
            )
        ],
    ),
    "iterator_schema": (
        ITERATOR_SCHEMA,
        [
            (
                f"<tool_call>{JSON_PARIS}</tool_call><tool_call>{JSON_UTC}</tool_call>",
                None,
                None,
                [PARIS, UTC],
                [],
            )
        ],
    ),
    "action_schema": (
        ACTION_SCHEMA,
        [
            (
                '<|START_THINKING|>Plan.<|END_THINKING|><|START_ACTION|>[{"tool_call_id": "0",'
                ' "tool_name": "get_weather", "parameters": {"city": "Paris"}}]<|END_ACTION|>',
                "Plan.",
                None,
                [PARIS],
                [],
            )
        ],
    ),
    "glm_schema": (
        GLM_SCHEMA,
        [
            (
                "<think>Hm.</think><tool_call>get_weather\n<arg_key>city</arg_key>\n"
                "<arg_value>Paris</arg_value>\n<arg_key>days</arg_key>\n<arg_value>2</arg_value>"
                "\n</tool_call>",
                "Hm.",
                None,
                [("get_weather", {"city": "Paris", "days": 2})],
                [],
            )
        ],
    ),
    "list_schema": (
        LIST_SCHEMA,
        [
            (
                '<calls>[{"n": "get_weather", "a": {"city": "Paris"}}, {"n": "get_time", "a": '
                '{"timezone": "UTC"}}]</calls>\nDone.',
                None,
                "Done.",
                [PARIS, UTC],
                [],
            )
        ],
    ),
    "qwen_xml_schema": (
        QWEN_XML_SCHEMA,
        [
            (
                "<function=get_time>\n<parameter=timezone>\nUTC\n</parameter>\n</function>",
                None,
                None,
                [UTC],
                [],
            )
        ],
    ),
}


def run(fmt: Format, data: bytes, engine: str, sizes: list[int] | None) -> Any:
    parser = StreamParser(fmt, tools=TOOLS, engine=engine, seed=5)
    return merge_deltas(run_events(parser, data, sizes)), parser.message


@pytest.mark.parametrize("name", sorted(CASES))
def test_format_from_response_template_is_a_format(name: str) -> None:
    spec, _ = CASES[name]
    fmt = from_response_template(spec, name=f"rt_{name}")
    assert isinstance(fmt, Format) and fmt.name == f"rt_{name}"
    assert fmt.markers and fmt.examples


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    ("name", "case"), [(n, i) for n, (_, cases) in sorted(CASES.items()) for i in range(len(cases))]
)
def test_outputs_parse_whole_and_byte_by_byte(name: str, case: int, engine: str) -> None:
    spec, cases = CASES[name]
    fmt = from_response_template(spec)
    text, reasoning, content, calls, errors = cases[case]
    data = text.encode()
    events, message = run(fmt, data, engine, None)
    byte_events, byte_message = run(fmt, data, engine, [1] * len(data))
    assert byte_events == events and byte_message == message
    assert message.reasoning_content == reasoning
    assert message.content == content
    assert [(c.name, c.arguments) for c in message.tool_calls] == calls
    assert [e.kind for e in message.errors] == errors


@pytest.mark.skipif(len(ENGINES) < 2, reason="needs both engines")
@pytest.mark.parametrize("name", sorted(CASES))
def test_both_engines_give_the_same_events(name: str) -> None:
    spec, cases = CASES[name]
    fmt = from_response_template(spec)
    for text, *_ in cases:
        runs = [run(fmt, text.encode(), engine, None)[0] for engine in ENGINES]
        assert runs[0] == runs[1]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_examples_parse(name: str, engine: str) -> None:
    fmt = from_response_template(CASES[name][0])
    for example in fmt.examples:
        _, message = run(fmt, example.encode(), engine, None)
        assert message.tool_calls and not message.errors


def test_a_tokenizer_config_is_read_for_its_template() -> None:
    config = {"chat_template": "...", "response_schema": QWEN3_SCHEMA, "response_template": SMOLLM}
    fmt = from_response_template(config)
    assert fmt.call_markers == ("<tool_call>", "</tool_call>")
    assert ("<think>", "</think>") <= tuple(fmt.markers[-2:])
    assert from_response_template({"response_schema": COHERE_SCHEMA_TOOLS_ONLY}).markers


COHERE_SCHEMA_TOOLS_ONLY = {
    "type": "object",
    "properties": {"tool_calls": ACTION_SCHEMA["properties"]["tool_calls"]},
}  # type: ignore[index]


def with_calls(field: dict[str, Any]) -> dict[str, Any]:
    return {"start_anchor": "x", "fields": {"tool_calls": field}}


UNSUPPORTED = [
    ("not a dict", ["fields"], "is a dict"),
    ("no shape", {"chat_template": "x"}, "not a response template"),
    ("version", {**SMOLLM, "version": 2}, "version 2"),
    ("unknown field", {"fields": {**SMOLLM["fields"], "citations": {"open": "<c>"}}}, "citations"),
    (
        "content in wrappers",
        {"fields": {"content": {"open": "<|START_RESPONSE|>"}, **COHERE["fields"]}},
        "content between its own delimiters",
    ),
    ("no calls", {"fields": {"thinking": {"open": "<t>", "close": "</t>"}}}, "no tool_calls"),
    (
        "gpt-oss header gap",
        with_calls(
            {
                "open_pattern": r"<\|channel\|>commentary to=functions\.(?P<name>\w+)"
                r".*?<\|message\|>",
                "close": "<|call|>",
                "content": "json",
                "transform": NAMED,
            }
        ),
        "gap",
    ),
    (
        "gemma string delimiters",
        with_calls(
            {
                "open": "<|tool_call>",
                "close": "<tool_call|>",
                "content": "json",
                "content_args": {"unquoted_keys": True, "string_delims": [['<|"|>', '<|"|>']]},
            }
        ),
        "dialect",
    ),
    ("alternative opens", with_calls({"open": ["<a>", "<b>"], "content": "json"}), "alternative"),
    ("kv-lines", with_calls({"open": "<c>", "close": "</c>", "content": "kv-lines"}), "kv-lines"),
    (
        "odd transform",
        with_calls(
            {"open": "<c>", "close": "</c>", "content": "json", "transform": {"x": "{content}"}}
        ),
        "transform",
    ),
    (
        "regex class in a delimiter",
        with_calls({"open_pattern": r"<call\d>", "close": "</call>", "content": "json"}),
        "class",
    ),
    (
        "whole-message regex without literal delimiters",
        {
            "x-regex": r"^(?:\n?<think>\n?(?:(?P<reasoning_content>.*?\S.*?)\n?|[\s]*)</think>\s*)?"
            r"(?P<tool_calls>(?:<tool_call>.+?</tool_call>\s*)+)?$",
            "properties": {"reasoning_content": {}, "tool_calls": {"x-parser": "json"}},
        },
        "not between literal delimiters",
    ),
    (
        "alternation in a schema regex",
        {
            "properties": {
                "thinking": {"x-regex": r"(?:^|<think>\s*)(.*?)\s*<\/think>"},
                "tool_calls": ITERATOR_SCHEMA["properties"]["tool_calls"],  # type: ignore[index]
            }
        },
        "not supported",
    ),
    (
        "gpt-oss schema",
        {
            "properties": {
                "tool_calls": {
                    "x-regex-iterator": r"<\|channel\|>commentary (to=functions\..*?<\|message\|>"
                    r".*?)(?:<\|call\|>|$)",
                    "items": {},
                }
            }
        },
        "only JSON calls",
    ),
]


@pytest.mark.parametrize(("label", "spec", "message"), UNSUPPORTED, ids=[u[0] for u in UNSUPPORTED])
def test_unsupported_shapes_are_a_clear_error(label: str, spec: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        from_response_template(spec)


def test_detect_format_without_jinja2_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    # detect_format's one dependency is optional; without it the error names the extra
    import sys

    from toolparse.derive import detect_format

    monkeypatch.setitem(sys.modules, "jinja2.sandbox", None)
    with pytest.raises(ImportError, match=r"toolparse\[templates\]"):
        detect_format("{{ messages }}")
