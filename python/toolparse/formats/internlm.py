"""InternLM2 / InternLM2.5 / Intern-S1: ``<|action_start|><|plugin|>{json}<|action_end|>``.

What the model writes (the JSON names the tool and gives its arguments, usually under
``parameters``)::

    Let me look that up.<|action_start|><|plugin|>
    {"name": "get_weather", "parameters": {"city": "Tokyo"}}<|action_end|>

and Intern-S1 in thinking mode, which may also place a call inside its reasoning::

    <think>
    The user wants the weather in Tokyo.
    </think>

    <|action_start|><|plugin|>
    {"name": "get_weather", "parameters": {"city": "Tokyo"}}<|action_end|>

Facts relied on:

- Markers: ``<|action_start|>``, ``<|plugin|>`` and ``<|action_end|>`` are special tokens
  of the InternLM2 and Intern-S1 tokenizers (vLLM's internlm parser turns
  skip_special_tokens off to keep them).  vLLM's internlm2 parser reads
  ``<|action_start|><|plugin|>``; its intern-s1 parser and SGLang's internlm detector
  (serving both InternLM2 and Intern-S1, the "interns1" name) also take whitespace between
  the two tokens (detokenizers put a space between special tokens: SGLang's start marker is
  ``<|action_start|> <|plugin|>``) and around the JSON (a newline after ``<|plugin|>``).
- The JSON object carries ``name`` and the arguments under ``parameters`` or
  ``arguments`` (all three peers accept both); without either, the arguments are ``{}``
  (vLLM and SGLang default to an empty object).  Arguments that are not an object are
  invalid (vLLM's intern-s1 parser rejects them).
- Several blocks in one output are all calls (vLLM's intern-s1 parser and SGLang; vLLM's
  older internlm2 parser reads only the first).  Text before, between and after blocks is
  content.
- Intern-S1 reasoning: ``<think>`` ... ``</think>``; vLLM's intern-s1 reasoning parser drops
  one newline at each end of the reasoning and hoists any action block found inside the
  reasoning out as a call (the reasoning going on after it); SGLang's interns1 reasoning
  reads such a block as reasoning text.  Here a block inside unfinished reasoning is a
  call and ends the reasoning (call_in_reasoning="ends_reasoning"): the call is kept, as
  vLLM keeps it, but the reasoning must stay a prefix of the output (the adapters split
  it off before the tool parser reads the rest), so text between such a call and the
  late ``</think>`` is content, and that ``</think>`` is dropped.

Choices: ``<|action_start|>`` not followed by ``<|plugin|>`` (InternLM2's
``<|interpreter|>`` code blocks, which no peer turns into a call) stays content, as does the
text after it; whitespace after ``<|action_end|>`` and ``</think>`` is not content.  Not
pinned down: whether Intern-S1's chat template opens ``<think>`` itself (vLLM's parser
accepts both); the default expects the model to write it, and the "start_in_reasoning"
entry serves a template that does.
"""

from __future__ import annotations

from ..grammar import (
    Grammar,
    choice,
    cut,
    eof,
    json_call,
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
from ._base import Format, skip_past

ACTION_START, PLUGIN, ACTION_END = "<|action_start|>", "<|plugin|>", "<|action_end|>"
THINK_OPEN, THINK_CLOSE = "<think>", "</think>"

FORMAT = Format(
    name="internlm",
    aliases=("interns1", "intern-s1", "internlm2"),
    description="InternLM2 / Intern-S1: <|action_start|><|plugin|> JSON call <|action_end|>; "
    "optional <think> reasoning (Intern-S1)",
    families=("InternLM2", "InternLM2.5", "Intern-S1"),
    model_ids=("internlm/internlm2*", "internlm/internlm2_5*", "internlm/Intern-S1*"),
    reasoning="optional",
    call_in_reasoning="ends_reasoning",
    markers=(ACTION_START, PLUGIN, ACTION_END, THINK_OPEN, THINK_CLOSE),
    # the code interpreter's block (<|action_start|> without <|plugin|>) is content
    text_markers=(ACTION_START, PLUGIN, ACTION_END),
    call_markers=(ACTION_START, ACTION_END),
    grammar=Grammar(
        rules={
            "start": seq(ws(), opt(ref("think")), ref("body")),
            "start_in_reasoning": seq(
                opt(seq(ws(), lit(THINK_OPEN))), ref("reasoning_rest"), ref("body")
            ),
            "think": seq(lit(THINK_OPEN), cut(), opt(lit("\n")), ref("reasoning_rest")),
            # a call block ends unfinished reasoning; a <|action_start|> without <|plugin|>
            # does not
            "reasoning_rest": seq(
                tag(
                    "reasoning",
                    until(
                        "\n" + THINK_CLOSE,
                        THINK_CLOSE,
                        stop(ACTION_START, followed_by=(PLUGIN,)),
                    ),
                ),
                opt(seq(opt(lit("\n")), lit(THINK_CLOSE), ws())),
            ),
            "body": seq(
                many(choice(ref("call"), ref("stray_close"), ref("stray"), ref("content"))),
                eof(),
            ),
            "call": seq(
                lit(ACTION_START),
                ws(),
                lit(PLUGIN),
                cut(),
                recover(
                    tag("tool_call", seq(ws(), json_call(), ws(), lit(ACTION_END))),
                    skip_past(ACTION_END),
                ),
                ws(),
            ),
            # <|action_start|> without <|plugin|> (a code-interpreter block) is text
            "stray": tag("content", lit(ACTION_START)),
            # the </think> of reasoning that a call interrupted
            "stray_close": seq(lit(THINK_CLOSE), ws()),
            "content": tag("content", until(ACTION_START, THINK_CLOSE, min1=True, commit=True)),
        },
        entries={"start": "start", "start_in_reasoning": "start_in_reasoning"},
    ),
    examples=(
        "Let me look that up.<|action_start|><|plugin|>\n"
        '{"name": "get_weather", "parameters": {"city": "Tokyo"}}<|action_end|>',
    ),
)
