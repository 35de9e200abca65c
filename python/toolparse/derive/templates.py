"""Which format a chat template's model writes: ``detect_format(chat_template)``.

The template (a Jinja chat template as found in a tokenizer config or a ``.jinja`` file) is
rendered in a sandbox for a few probe conversations: an assistant answer, an answer with
reasoning, one tool call and two tool calls.  What the template writes for the assistant
turn, after the generation prompt and without its end-of-turn text, is what the model
learnt to write; it is parsed with every built-in format.

- A built-in format whose parse of every rendering gives back exactly the probe messages
  (the calls, their arguments, the answer, the reasoning when the template renders it) is
  a match.  Where several match (aliases of one family, or formats that differ only in
  what a template cannot show), the most general is returned and the evidence names the
  others.
- Otherwise the rendering is read for a known shape with new markers: JSON calls between
  tags, a bracket tag before JSON, the tool name in a tag before JSON arguments, XML
  parameters.  A Format is built from those markers and must parse every rendering back
  too; only then is it returned (``derived=True``).
- A template that writes no tool calls but renders reasoning is read with the formats of
  families that write no calls (``kimi``); one that renders neither is not recognised.
- Anything else is not recognised: ``Detection.format`` is None and the evidence says
  what was found.  No guess is made.

Needs jinja2 (``pip install toolparse[templates]``).
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from ..formats import FORMATS, Format
from ..stream import parse
from ._derived import (
    Reasoning,
    XmlShape,
    bracket_json,
    json_in_tags,
    name_tag_json,
    xml_params,
)

__all__ = ["PROBE_TOOLS", "Detection", "detect_format", "render_probes"]

REASONING = "The user wants the forecast; I will look it up."
ANSWER = "It is sunny in Paris."
USER = "What is the weather in Paris?"
NEXT_USER = "And tomorrow?"
CALL_1: tuple[str, dict[str, Any]] = ("get_weather", {"city": "Paris", "days": 3})
CALL_2: tuple[str, dict[str, Any]] = ("get_time", {"timezone": "Europe/Paris"})

PROBE_TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "The weather forecast for a city.",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string", "description": "The city."},
                    "days": {"type": "integer", "description": "How many days."},
                },
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "get_time",
            "description": "The current time in a timezone.",
            "parameters": {
                "type": "object",
                "properties": {"timezone": {"type": "string", "description": "The zone."}},
                "required": ["timezone"],
            },
        },
    },
]

# Built-in formats that parse the same renderings: the first listed wins (the most general
# for what a template can show).  cohere_command reads everything command_r7b reads;
# hermes reads Granite 4.0's calls and a <think> block too; mistral and xlam both read
# [TOOL_CALLS][...], mistral being the family that writes it; firefunction_v2 and phi4_mini
# both read " functools[...]", FireFunction's own template writes it (Phi-4-mini's writes
# <|tool_call|>); granite and phi4_mini both read <|tool_call|>[...] left unclosed.
# jamba, apriel and hunyuan_a13b all read a bare <tool_calls>[...]</tool_calls>: jamba is
# the family that writes it alone (apriel's templates also write [BEGIN FINAL RESPONSE],
# Hunyuan-A13B's "助手" and a full-width colon before a reply and the model an <answer>
# block, which no other of the three reads back).  hermes wins over ernie45 for the Hermes
# templates' <tool_call>{...}</tool_call> (an ERNIE-4.5 Thinking template, reasoning the
# prompt opens and the reply in <response>, is read by ernie45 alone), and glm45 over
# poolside_v1 (the same <tool_call>NAME<arg_key>... layout and <think>).  xlam wins for a
# bare JSON list of calls, which hyperclovax_seed_think and its 14B variant also read as
# a secondary form.
_PREFERENCE = (
    "cohere_command",
    "hermes",
    "mistral",
    "firefunction_v2",
    "deepseek_v3",
    "glm45",
    "qwen3_coder",
    "llama3_json",
    "pythonic",
    "granite",
    "phi4_mini",
    "jamba",
    "xlam",
)
# A variant preferred over its base where the template shows what tells them apart:
# reasoning rendered in <think> (Qwen3, whose format also ends reasoning at a call), or a
# generation prompt that opens the reasoning block (DeepSeek-R1).
_WITH_REASONING = {"hermes": "qwen3"}
_PROMPT_OPENS_REASONING = {"deepseek_v3": "deepseek_r1"}


@dataclass(frozen=True)
class Detection:
    """What detect_format found.

    format: the built-in or derived Format, or None when the template was not recognised.
    name: the built-in format's name (for get_format / StreamParser), or the derived
    format's name; None when not recognised.
    derived: the format was built from the template's own markers.
    reasoning_in_prompt: whether the generation prompt opens the reasoning block (pass it
    to StreamParser), None when not known.
    evidence: what was found, one sentence each.
    """

    format: Format | None
    name: str | None
    derived: bool
    evidence: tuple[str, ...] = field(default=())
    reasoning_in_prompt: bool | None = None

    @property
    def recognised(self) -> bool:
        return self.format is not None


# -- rendering -----------------------------------------------------------------------------


def _environment(mutable: bool = False) -> Any:
    """jinja2's immutable sandbox (or, mutable: its sandbox that lets a template change a
    list or an object, for templates that call ``list.append``), with what Hugging Face
    renders templates with and the variables callers pass that templates read."""
    try:
        from jinja2 import nodes
        from jinja2.ext import Extension, loopcontrols
        from jinja2.sandbox import ImmutableSandboxedEnvironment, SandboxedEnvironment
    except ImportError as e:
        raise ImportError("detect_format needs jinja2: pip install 'toolparse[templates]'") from e
    from jinja2.exceptions import TemplateError

    class Generation(Extension):
        """``{% generation %}...{% endgeneration %}`` renders its body, as in transformers
        (which marks the text as the assistant's for its training masks)."""

        tags = {"generation"}  # noqa: RUF012 (jinja2 declares it an instance variable)

        def parse(self, parser: Any) -> Any:
            lineno = next(parser.stream).lineno
            body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
            call = self.call_method("_body")
            return nodes.CallBlock(call, [], [], body).set_lineno(lineno)

        def _body(self, caller: Callable[[], str]) -> str:
            return caller()

    def raise_exception(message: str) -> None:
        raise TemplateError(message)

    def tojson(
        value: Any,
        ensure_ascii: bool = False,
        indent: int | None = None,
        separators: tuple[str, str] | None = None,
        sort_keys: bool = False,
    ) -> str:
        return json.dumps(
            value,
            ensure_ascii=ensure_ascii,
            indent=indent,
            separators=separators,
            sort_keys=sort_keys,
        )

    def strftime_now(fmt: str) -> str:
        return datetime.now().strftime(fmt)

    sandbox = SandboxedEnvironment if mutable else ImmutableSandboxedEnvironment
    env = sandbox(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols, Generation])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    env.globals.update(_caller_variables())
    return env


class _Clock:
    """``datetime.now()`` / ``datetime.today()`` for templates that read the date from a
    ``datetime`` the caller passes (a datetime object, nothing else of the module)."""

    def now(self) -> datetime:
        return datetime.now()

    def today(self) -> datetime:
        return datetime.now()


def _caller_variables() -> dict[str, Any]:
    """Variables serving stacks pass and real templates read without checking they are
    defined: the tools also as the older ``functions`` (their function objects), the date
    (``datetime``, ``date_string``, ``current_date``), no ``documents``."""
    today = datetime.now()
    return {
        "functions": [tool["function"] for tool in PROBE_TOOLS],
        "datetime": _Clock(),
        "date_string": today.strftime("%d %b %Y"),
        "current_date": today.strftime("%Y-%m-%d"),
        "documents": [],
    }


def _call(name: str, arguments: Any, index: int, kimi_id: bool = False) -> dict[str, Any]:
    return {
        # 9 characters, as Mistral templates insist; or Kimi's functions.NAME:IDX, which its
        # template writes as the call (the only place the name appears)
        "id": f"functions.{name}:{index}" if kimi_id else f"call{index}abcd",
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }


def _assistant(**fields: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": "", **fields}


def _calls(*calls: tuple[str, dict[str, Any]], text: bool = False, kimi: bool = False) -> Any:
    return [
        _call(name, json.dumps(args) if text else args, i, kimi)
        for i, (name, args) in enumerate(calls)
    ]


PROBES: dict[str, dict[str, Any]] = {
    "answer": _assistant(content=ANSWER),
    "reasoning": _assistant(
        content=ANSWER, reasoning_content=REASONING, thinking=REASONING, reasoning=REASONING
    ),
    "one call": _assistant(tool_calls=_calls(CALL_1)),
    "two calls": _assistant(tool_calls=_calls(CALL_1, CALL_2)),
}
# Other ways to give the calls, tried in order where a template refuses the first or does
# not write the tool names: content None (OpenAI's form for a message with calls), arguments
# as JSON text (OpenAI's wire form, which some templates concatenate), ids in Kimi's
# functions.NAME:IDX form (Kimi's template writes the id, not the name).
_CALL_VARIANTS = tuple(
    (
        ", ".join(
            [
                *(["content None"] if content is None else []),
                *(["arguments as JSON text"] if text else []),
                *(["Kimi-style call ids"] if kimi else []),
            ]
        ),
        content,
        {"text": text, "kimi": kimi},
    )
    for content in (None, "")
    for text, kimi in ((True, False), (False, True), (True, True), (False, False))
    if content is None or text or kimi
)
_PROBE_CALLS = {"one call": (CALL_1,), "two calls": (CALL_1, CALL_2)}


@dataclass(frozen=True)
class _Rendering:
    prompt: str  # the generation prompt's rendering
    outputs: dict[str, str]  # probe -> what the model would write
    failures: dict[str, str]  # probe -> why the template could not render it
    notes: tuple[str, ...] = ()  # how the probes had to be given
    # probe -> the output with the end-of-turn text kept (a format may need it: Inkling's
    # <|end_message|> closes a call and also ends the turn)
    whole: dict[str, str] = field(default_factory=dict)


def render_probes(chat_template: str) -> tuple[str, dict[str, str], dict[str, str]]:
    """(the generation prompt, the assistant output per probe, the probes the template
    refused with the reason).  An output is the assistant turn after the generation
    prompt, without the end-of-turn text the template adds."""
    r = _render(chat_template)
    return r.prompt, dict(r.outputs), dict(r.failures)


def _render(chat_template: str, text_arguments: bool = False) -> _Rendering:
    """The probes' renderings; text_arguments: the calls' arguments are given as JSON text
    from the start (for a template that writes a mapping with ``|string``, which renders
    Python's notation, not JSON).  Rendered in the immutable sandbox; a template the
    sandbox stops from changing a list or an object is rendered again in the mutable one."""
    try:
        return _render_in(chat_template, text_arguments, mutable=False)
    except _Unsafe:
        rendering = _render_in(chat_template, text_arguments, mutable=True)
    note = "the template changes a list or an object: rendered in jinja2's mutable sandbox"
    return replace(rendering, notes=(note, *rendering.notes))


class _Unsafe(Exception):
    """The immutable sandbox stopped the template from changing a list or an object."""


def _render_in(chat_template: str, text_arguments: bool, mutable: bool) -> _Rendering:
    env = _environment(mutable)
    from jinja2.exceptions import SecurityError, TemplateError

    try:
        template = env.from_string(chat_template)
    except TemplateError as e:
        raise ValueError(f"the chat template does not compile: {e}") from e

    def render(messages: list[dict[str, Any]], generation: bool) -> str:
        # copies: a template in the mutable sandbox may change what it is given
        try:
            return str(
                template.render(
                    messages=copy.deepcopy(messages),
                    tools=copy.deepcopy(PROBE_TOOLS),
                    add_generation_prompt=generation,
                    bos_token="",
                    eos_token="",
                )
            )
        except SecurityError as e:
            if mutable or "unsafe" not in str(e):
                raise
            raise _Unsafe(str(e)) from e

    user = {"role": "user", "content": USER}
    try:
        history = render([user], False)
        prompt = render([user], True)
    except _Unsafe:
        raise
    except Exception as e:
        raise ValueError(f"the chat template does not render a user message: {e}") from e
    raw: dict[str, str] = {}
    failures: dict[str, str] = {}
    notes: list[str] = []

    # what the template writes after the user's text when the user message is the last
    user_tail = history[history.rindex(USER) + len(USER) :] if USER in history else None

    def turn(whole: str | None) -> str | None:
        # the assistant turn: what the conversation adds to the user message's rendering,
        # cut back to the start of a marker it stops inside (Command R+'s history goes on
        # <|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|>, the turn on
        # <|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>)
        if whole is None:
            return None
        common = _common_prefix(history, whole)
        if common < len(history):
            common = _out_of_marker(whole, common)
            # a template that renders what comes before the user's text otherwise when an
            # assistant turn follows (a system prompt it moves into the last user message):
            # the turn starts after the user's text and what follows it
            if user_tail is not None and (at := whole.find(USER + user_tail)) >= 0:
                common = max(common, at + len(USER) + len(user_tail))
        return whole[common:]

    def followed(message: dict[str, Any]) -> str | None:
        # the turn rendered with a user message after it, up to that message: for a
        # template that renders a last assistant message otherwise (as a prefill)
        whole = _try_render(render, [user, message, {"role": "user", "content": NEXT_USER}])[0]
        body = turn(whole)
        if body is None or NEXT_USER not in body or USER not in history:
            return None
        body = body[: body.rindex(NEXT_USER)]
        head = _common_suffix(history[: history.rindex(USER)], body)
        return body[: len(body) - len(head)] if head.strip() else None

    def names_written(text: str | None, calls: tuple[tuple[str, Any], ...]) -> bool:
        return text is not None and all(name in text for name, _ in calls)

    def shows(text: str | None, probe: str) -> bool:
        # the turn writes the probe's answer, or its calls' names
        calls = _PROBE_CALLS.get(probe, ())
        return names_written(text, calls) if calls else text is not None and ANSWER in text

    def given(probe: str) -> dict[str, Any]:
        message = PROBES[probe]
        if (calls := _PROBE_CALLS.get(probe, ())) and text_arguments:
            message = {**message, "tool_calls": _calls(*calls, text=True)}
        return message

    # a template that writes a last assistant message otherwise (as a prefill, without the
    # calls or the end of its turn): every probe is rendered with a user message after it
    follow = any(
        not shows(turn(_try_render(render, [user, given(probe)])[0]), probe)
        and shows(followed(given(probe)), probe)
        for probe in PROBES
    )
    if follow:
        notes.append("the probes render with a user message after them")

    def rendered(message: dict[str, Any]) -> tuple[str | None, str]:
        whole, failure = _try_render(render, [user, message])
        body = followed(message) if follow else None
        return (body, "") if body is not None else (turn(whole), failure)

    generation = prompt[_common_prefix(history, prompt) :]
    for probe in PROBES:
        message = given(probe)
        calls = _PROBE_CALLS.get(probe, ())
        if calls and text_arguments:
            notes.append(f"the {probe} probe renders with arguments as JSON text")
        body, failure = rendered(message)
        if calls and not names_written(body, calls):
            for how, content, options in _CALL_VARIANTS:
                variant = {**message, "content": content, "tool_calls": _calls(*calls, **options)}
                other = rendered(variant)[0]
                if names_written(other, calls):
                    body, message = other, variant
                    notes.append(f"the {probe} probe renders with {how}")
                    break
            else:
                if len(calls) > 1 and names_written(body, calls[:1]):
                    # a template that keeps the first call only (GigaChat 3's): the
                    # rendering shows one call, not the probe's
                    body, failure = None, "it writes only the first of the calls"
        header = generation.strip()
        if calls and body and header and message["content"] == "" and body.count(header) > 1:
            # content "" written as an assistant turn of its own after the calls: the
            # calls are given with content None, as OpenAI gives them
            other = rendered({**message, "content": None})[0]
            if names_written(other, calls) and other is not None:
                if other.count(header) < body.count(header):
                    body = other
                    notes.append(
                        f'the {probe} probe renders with content None (content "" is '
                        "written as an empty assistant turn of its own)"
                    )
        if body is None:
            failures[probe] = failure
            continue
        # without the part of the turn the generation prompt writes
        raw[probe] = body[_shared_head(generation, body) :]
    end = _end_of_turn(raw.get("answer"), list(raw.values()))
    outputs: dict[str, str] = {}
    with_end: dict[str, str] = {}
    for probe, body in raw.items():
        text = body.rstrip()
        with_end[probe] = text.lstrip("\n")
        if end and text.endswith(end):
            text = text[: -len(end)].rstrip()
        outputs[probe] = text.lstrip("\n")
    return _Rendering(prompt, outputs, failures, tuple(dict.fromkeys(notes)), with_end)


def _try_render(
    render: Callable[[list[dict[str, Any]], bool], str], messages: list[dict[str, Any]]
) -> tuple[str | None, str]:
    """The rendering of a conversation, or None and why the template refused it."""
    try:
        return render(messages, False), ""
    except _Unsafe:
        raise
    except Exception as e:
        return None, f"{type(e).__name__}: {e}"


def _common_prefix(a: str, b: str) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def _shared_head(generation: str, turn: str) -> int:
    """How much of the assistant turn the generation prompt already wrote: their common
    prefix, whitespace aside (a template may indent the generation prompt otherwise than a
    turn), cut back to the end of a marker or line where it stops inside one (a prompt
    ending ``<think>`` and a turn going on ``<tool_call>`` share only ``<``; Gemma 4's
    ``<|channel>`` and ``<|tool_call>`` share ``<|``), and back before a block the prompt
    closes (a prompt ending with an empty ``<think></think>`` has not opened the turn's
    reasoning)."""
    at, common = _common_prefix_loose(generation, turn)
    rest = generation[at:]
    if not rest.strip():
        # all of it, or all but whitespace the prompt ends with and a turn need not write
        # (Granite-20B-FC's prompt "ASSISTANT: ", its call turns "ASSISTANT:<function_call>");
        # where the whitespace was not the turn's, none of the turn's own is kept either
        if generation[:at] != turn[:common]:
            common += len(turn[common:]) - len(turn[common:].lstrip())
        return common
    common = _out_of_marker(turn, common)
    while common and turn[common - 1] not in ">]\n":
        common -= 1
    if not common:
        # the turn may lack the prompt's first markers, written by the rendering it goes on
        # from (a history that ends with a system turn shares <|START_OF_TURN_TOKEN|>)
        for start in (m.start() for m in _TAG.finditer(generation) if m.start()):
            at, common = _common_prefix_loose(generation[start:], turn)
            if not generation[start + at :].strip():
                return common
        common = 0
    for opener in _TAG.findall(turn[:common]):
        closers = _closers(opener)
        if any(c in rest for c in closers) and opener in turn[:common]:
            common = min(common, turn.rindex(opener, 0, common))
    return common


_TAG = re.compile(r"<[^<>\s]+>|\[[^\[\]\s]+\]")


def _closers(opener: str) -> list[str]:
    """The markers that would close a block the tag opens: ``</think>`` for ``<think>``,
    ``<|END_THINKING|>`` for ``<|START_THINKING|>``."""
    found = [opener[0] + "/" + opener[1:]] if not _is_closer(opener) else []
    for a, b in (("START", "END"), ("BEGIN", "END"), ("start", "end"), ("begin", "end")):
        if a in opener:
            found.append(opener.replace(a, b, 1))
    return found


def _is_closer(marker: str) -> bool:
    """A marker that ends a block: ``</think>``, ``[/THINK]``, ``<|END_THINKING|>``,
    ``<|think_end|>``."""
    return "/" in marker or re.search(r"(?i)(?<![a-z])(end|close)(?![a-z])", marker) is not None


def _common_prefix_loose(a: str, b: str) -> tuple[int, int]:
    """Where a and b stop agreeing, whitespace aside: (the index in a, the index in b)."""
    i = j = 0
    while i < len(a) and j < len(b):
        if a[i] == b[j]:
            i, j = i + 1, j + 1
        elif a[i].isspace():
            i += 1
        elif b[j].isspace():
            j += 1
        else:
            break
    while i < len(a) and a[i].isspace() and (j == len(b) or not b[j].isspace()):
        i += 1
    return i, j


def _out_of_marker(text: str, at: int) -> int:
    """at, or the start of the marker it falls inside (a tag opened and not yet closed)."""
    head = text[:at]
    for open_, close in (("<", ">"), ("[", "]")):
        i = head.rfind(open_)
        if i >= 0 and close not in head[i:]:
            at = min(at, i)
    return at


def _end_of_turn(answer: str | None, bodies: list[str]) -> str:
    """The text the template writes at the end of every assistant turn (its end-of-turn
    token): what follows the plain answer, where every rendering ends with it; else what
    all the renderings end with, from a marker's start on."""
    ends = [body.rstrip() for body in bodies]
    if answer and ANSWER in answer:
        after = answer[answer.rindex(ANSWER) + len(ANSWER) :].strip()
        if after and all(e.endswith(after) for e in ends):
            return after
    if not ends:
        return ""
    suffix = ends[0]
    for e in ends[1:]:
        suffix = _common_suffix(suffix, e)
    # from a tag start that does not follow a letter or digit: where the renderings differ
    # just before their common end, it may begin inside a marker (Kimi K3's
    # ``<|close|>response<|sep|>`` and ``<|close|>tools<|sep|>`` share ``<|sep|>``)
    for i, c in enumerate(suffix):
        if c not in "<[":
            continue
        before = [suffix[i - 1]] if i else [e[: len(e) - len(suffix)][-1:] for e in ends]
        if not any(b.isalnum() for b in before):
            return suffix[i:]
    return ""


# -- checking a format against the renderings --------------------------------------------------


def _expected(probe: str, with_reasoning: bool) -> dict[str, Any]:
    calls = {"one call": [CALL_1], "two calls": [CALL_1, CALL_2]}.get(probe, [])
    return {
        "content": ANSWER if probe in ("answer", "reasoning") else "",
        "reasoning": REASONING if with_reasoning else "",
        "calls": calls,
    }


def _parses_back(fmt: Format, text: str, probe: str, with_reasoning: bool) -> bool | None:
    """Whether fmt reads the rendering as the probe message; the reasoning_in_prompt
    setting that does (False first), or None."""
    want = _expected(probe, with_reasoning)
    options = [False, True] if "start_in_reasoning" in fmt.grammar.entries else [False]
    for in_prompt in options:
        try:
            message = parse(text, fmt, tools=PROBE_TOOLS, reasoning_in_prompt=in_prompt)
        except (ValueError, NotImplementedError):
            continue
        got = {
            "content": (message.content or "").strip(),
            "reasoning": (message.reasoning_content or "").strip(),
            "calls": [(c.name, c.arguments) for c in message.tool_calls],
        }
        if got == want and not message.errors:
            return in_prompt
    return None


def _reads_back(
    fmt: Format,
    text: str,
    probe: str,
    with_reasoning: bool,
    whole: Mapping[str, str] | None = None,
) -> bool | None:
    """_parses_back on the output, else on the output with its end-of-turn text (for a
    format whose call ends with the marker that also ends the turn)."""
    found = _parses_back(fmt, text, probe, with_reasoning)
    if found is None and whole and whole.get(probe, text) != text:
        found = _parses_back(fmt, whole[probe], probe, with_reasoning)
    return found


def _matches(
    fmt: Format,
    outputs: Mapping[str, str],
    with_reasoning: bool,
    whole: Mapping[str, str] | None = None,
) -> bool:
    return all(
        _reads_back(fmt, text, probe, with_reasoning and probe == "reasoning", whole) is not None
        for probe, text in outputs.items()
    )


def _markers_found(fmt: Format, outputs: Mapping[str, str]) -> list[str]:
    return [m for m in fmt.markers if any(m in text for text in outputs.values())]


# -- the derived shapes --------------------------------------------------------------------


def _json_objects(text: str) -> list[tuple[int, int, Any]]:
    decoder = json.JSONDecoder()
    found = []
    i = 0
    while (i := text.find("{", i)) >= 0:
        try:
            value, end = decoder.raw_decode(text, i)
        except ValueError:
            i += 1
            continue
        found.append((i, end, value))
        i = end
    return found


def _reasoning_markers(
    outputs: Mapping[str, str], prompt: str, evidence: list[str]
) -> Reasoning | None:
    text = outputs.get("reasoning", "")
    if REASONING not in text:
        return None
    start = text.index(REASONING)
    before, after = text[:start].strip(), text[start + len(REASONING) :]
    close = after[: after.index(ANSWER)].strip() if ANSWER in after else after.strip()
    opened_in_prompt = False
    if not before:
        last = _LAST_TAG.search(prompt.rstrip())
        before = last.group(0) if last and not _is_closer(last.group(0)) else ""
        opened_in_prompt = bool(before)
    if not before or not close or any(c.isspace() for c in before + close):
        evidence.append(
            f"reasoning is rendered, but its markers are not plain tags "
            f"(before: {before!r}, after: {close!r})"
        )
        return None
    evidence.append(
        f"reasoning between {before!r} and {close!r}"
        + (" (the generation prompt opens it)" if opened_in_prompt else "")
    )
    return Reasoning(before, close, in_prompt=opened_in_prompt or prompt.rstrip().endswith(before))


_LAST_TAG = re.compile(r"(<[^<>\s]+>|\[[^\[\]\s]+\])$")


def _common_suffix(a: str, b: str) -> str:
    n = 0
    while n < min(len(a), len(b)) and a[len(a) - 1 - n] == b[len(b) - 1 - n]:
        n += 1
    return a[len(a) - n :]


def _at_tag_start(text: str) -> str:
    """The text from its first tag opening (``<`` or ``[``) on."""
    starts = [i for i in (text.find("<"), text.find("[")) if i >= 0]
    return text[min(starts) :] if starts else ""


def _derive(
    outputs: Mapping[str, str], think: Reasoning | None, evidence: list[str]
) -> Format | None:
    one = outputs.get("one call")
    if one is None:
        evidence.append("the template does not render a tool call")
        return None
    name, args = CALL_1
    if name not in one:
        evidence.append("the tool call's name does not appear in the rendering")
        return None
    objects = _json_objects(one)
    for start, end, value in objects:
        if not isinstance(value, dict):
            continue
        keys = {k for k, v in value.items() if v == name}
        arg_keys = {k for k, v in value.items() if v == args}
        if keys and arg_keys:
            return _derive_json_call(
                one, start, end, sorted(keys), sorted(arg_keys), think, evidence
            )
    for start, _end, value in objects:
        if value == args:
            return _derive_name_tag(one, start, _end, think, evidence)
    return _derive_xml(one, think, evidence)


def _derive_json_call(
    text: str,
    start: int,
    end: int,
    name_keys: list[str],
    args_keys: list[str],
    think: Reasoning | None,
    evidence: list[str],
) -> Format | None:
    before, after = text[:start].rstrip(), text[end:].lstrip()
    array = before.endswith("[")
    if array:
        before = before[:-1].rstrip()
        if not after.startswith("]"):
            evidence.append("a call object inside a list the rendering does not close")
            return None
        after = after[1:].lstrip()
    keys = f"name key {name_keys[0]!r}, arguments key {args_keys[0]!r}"
    if not before.strip():
        evidence.append(f"a JSON call object ({keys}) with no marker before it")
        return None
    if array:
        evidence.append(f"{before.strip()!r} before a JSON list of calls ({keys})")
        return bracket_json(
            before,
            array=True,
            close=after,
            name_keys=tuple(name_keys),
            args_keys=tuple(args_keys),
            think=think,
        )
    if after:
        evidence.append(f"a JSON call object ({keys}) between {before!r} and {after!r}")
        return json_in_tags(
            before, after, name_keys=tuple(name_keys), args_keys=tuple(args_keys), think=think
        )
    evidence.append(f"{before.strip()!r} before each JSON call object ({keys})")
    return bracket_json(
        before, array=False, name_keys=tuple(name_keys), args_keys=tuple(args_keys), think=think
    )


def _derive_name_tag(
    text: str, start: int, end: int, think: Reasoning | None, evidence: list[str]
) -> Format | None:
    name = CALL_1[0]
    head = text[:start]
    at = head.rfind(name)
    if at < 0:
        evidence.append("the arguments are a JSON object, but the tool name is not before it")
        return None
    open_, name_end, close = head[:at], head[at + len(name) :], text[end:]
    if not open_.strip():
        evidence.append("the tool name is written with no marker before it")
        return None
    evidence.append(
        f"the tool name after {open_.strip()!r}, then {name_end.strip()!r} and JSON arguments"
        + (f", closed by {close.strip()!r}" if close.strip() else "")
    )
    return name_tag_json(open_, name_end, close, think=think)


def _derive_xml(text: str, think: Reasoning | None, evidence: list[str]) -> Format | None:
    name, args = CALL_1
    pieces = [name]
    for key, value in args.items():
        pieces += [key, str(value)]
    at, cuts = 0, []
    for piece in pieces:
        i = text.find(piece, at)
        if i < 0:
            evidence.append(
                f"no JSON arguments, and {piece!r} is not written where XML parameters would put it"
            )
            return None
        cuts.append((i, i + len(piece)))
        at = i + len(piece)
    gaps = [text[: cuts[0][0]]]
    gaps += [text[cuts[k][1] : cuts[k + 1][0]] for k in range(len(cuts) - 1)]
    gaps.append(text[cuts[-1][1] :])
    open_, after_name, key_end, between, key_end_2, close_all = gaps
    param_open = _at_tag_start(_common_suffix(after_name, between))
    if not param_open or key_end != key_end_2 or not open_.strip():
        evidence.append(
            "no JSON arguments, and the parameters are not written as tags: "
            f"{after_name!r}, {key_end!r}, {between!r}"
        )
        return None
    name_end = after_name[: -len(param_open)]
    param_close = between[: -len(param_open)]
    close = close_all.lstrip()
    if not close.startswith(param_close.strip()) or not param_close.strip():
        evidence.append(f"the parameter's closing marker {param_close!r} is not repeated")
        return None
    close = close[len(param_close.strip()) :]
    shape = XmlShape(
        open=open_,
        name_end=name_end,
        param_open=param_open,
        key_end=key_end,
        param_close=param_close.strip(),
        close=close,
        value_newlines=key_end.endswith("\n") and param_close.startswith("\n"),
    )
    evidence.append(
        f"XML parameters: the name after {open_.strip()!r}, each parameter "
        f"{param_open.strip()}KEY{key_end.strip()}VALUE{param_close.strip()}, closed by "
        f"{close.strip()!r}"
    )
    try:
        return xml_params(shape, think=think)
    except ValueError as e:
        evidence.append(str(e))
        return None


# -- detection -------------------------------------------------------------------------------


def detect_format(chat_template: str, *, formats: Sequence[Format] | None = None) -> Detection:
    """The format a chat template's model writes (see the module's docstring).

    formats: the built-in formats to try (all by default).  Raises ValueError when the
    template does not compile or cannot render a user message, ImportError without jinja2.
    An unrecognised template is not an error: the result has format=None and says why."""
    rendering = _render(chat_template)
    evidence: list[str] = []
    outputs = rendering.outputs
    evidence.extend(rendering.notes)
    for probe, why in rendering.failures.items():
        evidence.append(f"the template cannot render the {probe} probe ({why}); not checked")
    for probe, text in outputs.items():
        evidence.append(f"{probe} renders as {text!r}")
    with_reasoning = REASONING in outputs.get("reasoning", "")
    if with_reasoning and CALL_1[0] not in outputs.get("one call", ""):
        # a template that writes no tool calls but renders reasoning: a format of a family
        # that writes reasoning and answers only (kimi) may read it
        chat = {p: t for p, t in outputs.items() if p in ("answer", "reasoning")}
        without = [
            f
            for f in (formats or FORMATS.values())
            if not f.tool_calls and _matches(f, chat, True, rendering.whole)
        ]
        if without:
            evidence.append("the template writes no tool calls; formats without calls are tried")
            return _built_in(without, rendering, True, evidence)
    if "one call" not in outputs:
        return Detection(None, None, False, (*evidence, "no tool call rendering: not recognised"))
    if not with_reasoning:
        evidence.append("the template does not render reasoning in the history")
    candidates = [
        f
        for f in (formats or FORMATS.values())
        if _matches(f, outputs, with_reasoning, rendering.whole)
    ]
    if not candidates and not any("JSON text" in note for note in rendering.notes):
        # the arguments may have been written in Python's notation (``|string``): with
        # arguments as JSON text the template writes them as given
        again = _render(chat_template, text_arguments=True)
        if again.outputs != outputs and "one call" in again.outputs:
            found = [
                f
                for f in (formats or FORMATS.values())
                if _matches(f, again.outputs, with_reasoning, again.whole)
            ]
            if found:
                evidence.extend(again.notes)
                for probe in _PROBE_CALLS:
                    if probe in again.outputs:
                        evidence.append(f"{probe} renders as {again.outputs[probe]!r}")
                rendering, candidates = again, found
    if candidates:
        return _built_in(candidates, rendering, with_reasoning, evidence)
    evidence.append("no built-in format reads these renderings back")
    think = _reasoning_markers(outputs, rendering.prompt, evidence) if with_reasoning else None
    derived = _derive(outputs, think, evidence)
    if derived is None:
        return Detection(None, None, False, (*evidence, "not recognised"))
    if not _matches(derived, outputs, with_reasoning):
        evidence.append(f"the derived format {derived.name} does not read the renderings back")
        return Detection(None, None, False, (*evidence, "not recognised"))
    evidence.append(f"derived format {derived.name}: {derived.description}")
    in_prompt = think.in_prompt if think else None
    return Detection(derived, derived.name, True, tuple(evidence), in_prompt)


def _built_in(
    candidates: list[Format], rendering: _Rendering, with_reasoning: bool, evidence: list[str]
) -> Detection:
    names = [f.name for f in candidates]
    by_name = {f.name: f for f in candidates}

    def rank(f: Format) -> tuple[int, int]:
        order = _PREFERENCE.index(f.name) if f.name in _PREFERENCE else len(_PREFERENCE)
        return (-len(_markers_found(f, rendering.outputs)), order)

    best = min(candidates, key=rank)
    if with_reasoning:
        if (v := _WITH_REASONING.get(best.name)) in by_name:
            evidence.append(f"{v} rather than {best.name}: the template renders reasoning")
            best = by_name[v]
    v = _PROMPT_OPENS_REASONING.get(best.name)
    if v in by_name and _opens_reasoning(by_name[v], rendering, with_reasoning):
        evidence.append(f"{v} rather than {best.name}: the generation prompt opens reasoning")
        best = by_name[v]
    opens = _opens_reasoning(best, rendering, with_reasoning)
    found = _markers_found(best, rendering.outputs)
    evidence.append(
        f"{best.name} reads every rendering back"
        + (f" (markers found: {', '.join(found)})" if found else "")
    )
    others = [n for n in names if n != best.name]
    if others:
        evidence.append(
            f"also read back by {', '.join(others)}: they render alike; {best.name} is the "
            "most general of them for what the template shows"
        )
    if opens:
        evidence.append("the generation prompt opens the reasoning block: reasoning_in_prompt")
    in_prompt = opens if best.reasoning != "none" else None
    return Detection(best, best.name, False, tuple(evidence), in_prompt)


def _opens_reasoning(fmt: Format, rendering: _Rendering, with_reasoning: bool) -> bool:
    """Whether the generation prompt ends inside the format's reasoning block: the
    rendered reasoning reads back only as starting inside it, or (where the history shows
    no reasoning) the prompt ends with the format's opening reasoning marker."""
    if fmt.reasoning == "none" or "start_in_reasoning" not in fmt.grammar.entries:
        return False
    if with_reasoning and "reasoning" in rendering.outputs:
        text = rendering.outputs["reasoning"]
        return _reads_back(fmt, text, "reasoning", True, rendering.whole) is True
    tail = rendering.prompt.rstrip()
    think_open = [m for m in fmt.markers if "think" in m.lower() and not _is_closer(m)]
    return any(tail.endswith(m) for m in think_open)
