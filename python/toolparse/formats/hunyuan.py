"""Tencent Hunyuan Hy3 / Hy4: ``<tool_calls>``, ``<tool_call>NAME<tool_sep>``, key/value pairs.

What Hy3 emits (the template opens the reasoning block when thinking is on, so the output
starts inside it; one piece per line here, the model writes the tokens as the template
does, with newlines between the tags)::

    The user wants the weather in Paris.</think>
    <tool_calls>
    <tool_call>get_weather<tool_sep>
    <arg_key>city</arg_key>
    <arg_value>Paris</arg_value>
    </tool_call>
    </tool_calls>

Hy4 writes the same block without ``<tool_sep>``: the name runs directly into the first
``<arg_key>`` (or into ``</tool_call>`` for a call without arguments)::

    <tool_calls><tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value>
    </tool_call></tool_calls>

Facts relied on:

- Markers and layout: vLLM's hy_v3 parser (``<tool_call>NAME<tool_sep>`` then
  ``<arg_key>K</arg_key>``, optional whitespace, ``<arg_value>V</arg_value>`` pairs, inside
  ``<tool_calls>`` ... ``</tool_calls>``), vLLM's hy_v4 parser and its tests (the same tags,
  no ``<tool_sep>``: the name ends at the first ``<arg_key>`` or at ``</tool_call>``),
  SGLang's hunyuan detector (the Hy3 layout with newlines between the tags). The name is
  stripped of surrounding whitespace by every peer.
- Token spelling: the shipping Hy3 and Hy4 tokenizers append a suffix to every one of these
  special tokens, ``:opensource`` (``<tool_calls:opensource>``, ``<think:opensource>``,
  ...), and the bare forms are not tokens there; the preview tokenizers use the bare
  forms. vLLM (hy_v4, ``token_suffix``) and SGLang (``resolve_hunyuan_tokens``) read the
  suffix from the vocabulary. Both spellings are accepted here, a marker of either kind
  matching its counterpart.
- Calls are recognized only inside a ``<tool_calls>`` block (vLLM and SGLang start call
  parsing at that token); text before, between and after blocks is content.
- Values: a string is written verbatim, anything else as JSON, so values are typed by the
  tool schema (needs_tools), as vLLM and SGLang coerce them; a value that parses as none
  of its types makes the call invalid_arguments (the peers keep a string, a guess). A
  value ends at ``</arg_value>`` only where whitespace and ``</tool_call>`` or the key of
  a parameter the tool declares come next, so a value may hold that text and undeclared
  keys (code that mentions them); a declared key inside a value is a missing
  ``</arg_value>``: the value ends there, and the call is invalid_arguments (as glm45).
- Reasoning: ``<think>`` ... ``</think>``. Hy3's default reasoning effort is no_think
  (vLLM's hy_v3 reasoning parser passes the whole output through as content then); with
  thinking on, and by default for Hy4 (reasoning effort "high"), the template ends the
  prompt with ``<think>``: pass reasoning_in_prompt=True there. A ``<think>`` the output
  writes anyway is dropped (vLLM's hy_v4 reasoning parser does the same). Reasoning ends
  only at ``</think>`` (vLLM's hy_v3 and hy_v4 reasoning parsers), so a ``<tool_calls>``
  inside unfinished reasoning is reasoning text.

Choices: whitespace between the tags, around blocks and after ``</think>`` is layout, not
content; the block's ``</tool_calls>`` may be missing at the end of the output (the calls
before it are complete). Other per-checkpoint suffixes (vLLM's comments mention the form
``:6124c78e``) cannot be listed in advance and are not recognized; the key is kept as
written (peers differ on stripping it).
"""

from __future__ import annotations

from ..grammar import (
    Grammar,
    Node,
    choice,
    cut,
    declared_param,
    eof,
    lit,
    many,
    opt,
    recover,
    ref,
    seq,
    stop,
    tag,
    until,
    ws,
)
from ._base import Format

SUFFIX = ":opensource"


def _pair(name: str) -> tuple[str, str]:
    """The bare and the suffixed spelling of the marker <name>."""
    return f"<{name}>", f"<{name}{SUFFIX}>"


THINK_OPEN, THINK_CLOSE = _pair("think"), _pair("/think")
BLOCK_OPEN, BLOCK_CLOSE = _pair("tool_calls"), _pair("/tool_calls")
CALL_OPEN, CALL_CLOSE = _pair("tool_call"), _pair("/tool_call")
TOOL_SEP = _pair("tool_sep")
KEY_OPEN, KEY_CLOSE = _pair("arg_key"), _pair("/arg_key")
VALUE_OPEN, VALUE_CLOSE = _pair("arg_value"), _pair("/arg_value")


def _any(markers: tuple[str, ...]) -> Node:
    return choice(*(lit(m) for m in markers))


# The name ends at whitespace, at <tool_sep> (Hy3), directly at the first argument or at the
# end of the call (Hy4).
_NAME_END = ("\n", "\r", "\t", " ", *TOOL_SEP, *KEY_OPEN, *CALL_CLOSE)
# A value ends at </arg_value> only where the end of the call or a declared argument's key
# follows (either spelling of each tag); a declared key inside a value ends it too, as a
# missing </arg_value>.
# (</arg_key begins both spellings of the key's closing tag)
_KEY_END = "</arg_key"
_VALUE_END = (
    *(
        stop(m, followed_by=(*CALL_CLOSE, *(declared_param(o, _KEY_END) for o in KEY_OPEN)))
        for m in VALUE_CLOSE
    ),
    *(stop(o, followed_by=(declared_param(None, _KEY_END),)) for o in KEY_OPEN),
)

MARKERS = (
    *BLOCK_OPEN,
    *BLOCK_CLOSE,
    *CALL_OPEN,
    *CALL_CLOSE,
    *TOOL_SEP,
    *KEY_OPEN,
    *KEY_CLOSE,
    *VALUE_OPEN,
    *VALUE_CLOSE,
    *THINK_OPEN,
    *THINK_CLOSE,
)

_REASONING_REST = seq(tag("reasoning", until(*THINK_CLOSE)), opt(seq(_any(THINK_CLOSE), ws())))

FORMAT = Format(
    name="hunyuan",
    aliases=("hy_v3", "hy_v4"),
    description="Tencent Hunyuan Hy3 and Hy4: <think> reasoning, a <tool_calls> block of "
    "<tool_call>NAME[<tool_sep>] calls with <arg_key>/<arg_value> pairs (bare or :opensource "
    "tokens); values typed by the tool schemas",
    families=("Hunyuan Hy3", "Hunyuan Hy4"),
    model_ids=("tencent/Hy3*", "tencent/Hy4*"),
    reasoning="optional",
    call_in_reasoning="text",
    needs_tools=True,
    markers=MARKERS,
    # a call closes with either spelling of </tool_call>: no single closing marker to name
    call_markers=None,
    grammar=Grammar(
        rules={
            "start": seq(ws(), opt(ref("think")), ref("body")),
            "start_in_reasoning": seq(
                opt(seq(ws(), _any(THINK_OPEN))), ref("reasoning_rest"), ref("body")
            ),
            "think": seq(_any(THINK_OPEN), cut(), ref("reasoning_rest")),
            "reasoning_rest": _REASONING_REST,
            "body": seq(many(choice(ref("block"), ref("content"))), eof()),
            "content": tag("content", until(*BLOCK_OPEN, min1=True, commit=True)),
            "block": seq(
                _any(BLOCK_OPEN),
                cut(),
                ws(),
                many(ref("call")),
                opt(seq(_any(BLOCK_CLOSE), ws())),
            ),
            "call": seq(
                _any(CALL_OPEN),
                cut(),
                recover(
                    tag(
                        "tool_call",
                        seq(
                            ws(),
                            tag("tool_name", until(*_NAME_END, need_stop=True)),
                            ws(),
                            opt(seq(_any(TOOL_SEP), ws())),
                            many(ref("argument")),
                            _any(CALL_CLOSE),
                        ),
                    ),
                    seq(until(*CALL_CLOSE), opt(_any(CALL_CLOSE))),
                ),
                ws(),
            ),
            "argument": seq(
                _any(KEY_OPEN),
                cut(),
                tag("param_name", until(*KEY_CLOSE, need_stop=True)),
                _any(KEY_CLOSE),
                ws(),
                _any(VALUE_OPEN),
                tag("param_value", until(*_VALUE_END, need_stop=True)),
                _any(VALUE_CLOSE),
                ws(),
            ),
        },
        entries={"start": "start", "start_in_reasoning": "start_in_reasoning"},
    ),
    examples=(
        "<tool_calls>\n<tool_call>get_weather<tool_sep>\n<arg_key>city</arg_key>\n"
        "<arg_value>Paris</arg_value>\n</tool_call>\n</tool_calls>",
        "<tool_calls:opensource><tool_call:opensource>get_weather<arg_key:opensource>city"
        "</arg_key:opensource><arg_value:opensource>Paris</arg_value:opensource>"
        "</tool_call:opensource></tool_calls:opensource>",
    ),
)
