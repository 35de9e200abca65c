"""Mistral calls: ``[TOOL_CALLS]`` then a JSON list (older tokenizers) or ``NAME[ARGS]{...}``.

What the models emit depends on the version of the Mistral tokenizer they were trained with
(mistral-common, Mistral's own encoder and decoder, is the reference for each version):

- tokenizers v2 to v7 (Mistral 7B Instruct v0.3, Mixtral 8x22B, Mistral Nemo, Mistral
  Large 2407/2411, Mistral Small 2409 to 3.1): ``[TOOL_CALLS]`` then one JSON list of
  ``{"name": ..., "arguments": {...}, "id": "<9 letters or digits>"}`` objects. The
  SentencePiece tokenizers put a space after the marker (``[TOOL_CALLS] [{...}]``), Tekken
  does not. mistral-common writes the keys in that order: the id comes after the arguments.
- tokenizer v11 (Mistral Small 3.2): one ``[TOOL_CALLS]`` per call,
  ``[TOOL_CALLS]NAME[CALL_ID]ID[ARGS]{...}``; ``[CALL_ID]ID`` appears when the call has an
  id (llama.cpp's table notes it for Mistral Small 3.2).
- tokenizer v13 (Magistral Small 1.1/1.2, Ministral 3, Mistral Large 3):
  ``[TOOL_CALLS]NAME[ARGS]{...}`` per call, no id, and reasoning in ``[THINK]...[/THINK]``
  special tokens that the model opens itself (the reasoning prompt sits in the system
  prompt). Magistral Small 1.0 (2506) wrote its reasoning as plain ``<think>`` text
  instead; that text is not a marker here and stays content.
- Devstral: llama.cpp's Ministral 3 handler (the ``NAME[ARGS]`` form) covers the current
  Devstral models; which tokenizer version each Devstral release uses was not pinned
  down, and both forms are accepted anyway.

Example (Ministral 3 Reasoning, v13)::

    [THINK]The user wants the weather in Paris. I'll call get_weather.[/THINK]\
[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}

Choices, and the facts behind them:

- Content before ``[TOOL_CALLS]`` is content (v7 and later encode an assistant message as its
  content followed by its calls; vLLM, SGLang and llama.cpp all keep it).
- ``NAME[ARGS]`` calls: the name is letters, digits, ``_`` and ``-`` (mistral-common refuses
  any other function name, and writes ``[ARGS]`` or ``[CALL_ID]`` right after it); as in
  vLLM, a name that runs straight into ``{`` also ends there, which is what the text looks
  like when ``[ARGS]`` was decoded without special tokens. ``[CALL_ID]ID`` comes before the
  arguments, so the call is announced with the id the model wrote.
- After ``[TOOL_CALLS]``, anything but a JSON list or such a name (``[TOOL_CALLS] junk
  [{...}]``) is an ``unexpected`` error and no call, up to the next ``[TOOL_CALLS]``. vLLM
  takes the text before the first ``{`` as the name (v11 and later: a call named ``junk
  [``), or for older tokenizers searches the text for a ``[{...}]`` list and takes it
  wherever it sits; both are guesses.
- A call ends when its arguments object closes; there is no closing marker. Text after it,
  up to the next marker, is content (mistral-common would decode it as part of the
  arguments and reject the call, vLLM streams it into the arguments; but a call whose
  object has closed cannot be taken back by what follows, or a shorter output would
  deliver a call the whole output does not). Mistral models end their turn right after
  the calls, so this does not arise in practice.
- JSON lists: each object is a call once it closes (vLLM streams them the same way). Its
  ``"id"`` is taken when it comes before the arguments; mistral-common writes it after
  them, and a call is announced (with a generated id) as soon as its arguments begin, so
  in practice these calls get generated ids. Text after the closing ``]`` is content
  (vLLM ignores trailing text; mistral-common would reject it).
- ``[THINK]`` opens reasoning wherever it appears outside a call; ``[/THINK]`` (and the
  whitespace after it) ends it. A ``[TOOL_CALLS]`` inside unfinished reasoning ends the
  reasoning: Ministral 3 Reasoning does emit calls inside ``[THINK]`` (llama.cpp issue
  #29248), and treating them as reasoning would lose them. A ``[/THINK]`` with no open
  block is dropped, as vLLM's reasoning parser does.
- Leading whitespace of the output, and whitespace around calls, is not content.
"""

from __future__ import annotations

from ..grammar import (
    Grammar,
    ahead,
    chars,
    choice,
    cut,
    eof,
    json,
    json_call,
    lit,
    many,
    opt,
    recover,
    ref,
    seq,
    tag,
    until,
    ws,
)
from ._base import Format, reopened, think_block

TOOL_CALLS, ARGS, CALL_ID = "[TOOL_CALLS]", "[ARGS]", "[CALL_ID]"
THINK_OPEN, THINK_CLOSE = "[THINK]", "[/THINK]"
# mistral-common refuses a function name outside [a-zA-Z0-9_-]{1,64}
NAME_CHARS = "A-Za-z0-9_-"
# what decides that NAME[ARGS]{...} begins: the name, then [ARGS], [CALL_ID] or {
_named_call_head = seq(chars(NAME_CHARS, min1=True), choice(lit(ARGS), lit(CALL_ID), lit("{")))

# A [TOOL_CALLS] inside unfinished reasoning ends it.
_think, _reasoning_rest = think_block(THINK_OPEN, THINK_CLOSE, TOOL_CALLS)

FORMAT = Format(
    name="mistral",
    aliases=("ministral3", "magistral"),
    description="Mistral, Magistral, Ministral 3 and Devstral: [TOOL_CALLS] with a JSON list "
    "or NAME[CALL_ID]ID[ARGS]{...} calls; optional [THINK] reasoning",
    families=(
        "Mistral 7B v0.3",
        "Mixtral 8x22B",
        "Mistral Nemo",
        "Mistral Small 3",
        "Mistral Large",
        "Magistral",
        "Ministral 3",
        "Devstral",
    ),
    model_ids=(
        "mistralai/Mistral-7B-Instruct-v0.3",
        "mistralai/Mixtral-8x22B-Instruct-*",
        "mistralai/Mistral-Nemo-*",
        "mistralai/Mistral-Small-Instruct-2409",
        "mistralai/Mistral-Small-24B-*",
        "mistralai/Mistral-Small-3*",
        "mistralai/Mistral-Large-*",
        "mistralai/Magistral-*",
        "mistralai/Ministral-*",
        "mistralai/Devstral-*",
    ),
    reasoning="optional",
    call_in_reasoning="ends_reasoning",
    markers=(TOOL_CALLS, ARGS, CALL_ID, THINK_OPEN, THINK_CLOSE),
    call_markers=None,
    carries_ids=True,
    grammar=Grammar(
        rules={
            "start": seq(ws(), ref("body")),
            "start_in_reasoning": seq(reopened(THINK_OPEN), ref("body")),
            "think": _think,
            "reasoning_rest": _reasoning_rest,
            "body": seq(
                many(choice(ref("think"), ref("stray_think_close"), ref("calls"), ref("content"))),
                eof(),
            ),
            "stray_think_close": seq(lit(THINK_CLOSE), ws()),
            "calls": seq(lit(TOOL_CALLS), cut(), ws(), choice(ref("list"), ref("named_call"))),
            # [TOOL_CALLS][{"name": ..., "arguments": {...}, "id": ...}, ...]
            "list": seq(
                lit("["),
                cut(),
                recover(
                    seq(
                        ws(),
                        opt(
                            seq(
                                ref("list_call"),
                                many(seq(ws(), lit(","), ws(), ref("list_call"))),
                            )
                        ),
                        ws(),
                        lit("]"),
                    ),
                    until(TOOL_CALLS),
                ),
                ws(),
            ),
            "list_call": tag("tool_call", json_call(id_keys=("id",))),
            # [TOOL_CALLS]NAME[CALL_ID]ID[ARGS]{...}
            "named_call": seq(
                recover(
                    seq(
                        ahead(_named_call_head),
                        tag(
                            "tool_call",
                            seq(
                                tag("tool_name", chars(NAME_CHARS, min1=True)),
                                opt(
                                    seq(
                                        lit(CALL_ID),
                                        tag(
                                            "tool_id",
                                            until(ARGS, "{", TOOL_CALLS, need_stop=True),
                                        ),
                                    )
                                ),
                                opt(lit(ARGS)),
                                ws(),
                                tag("tool_args", json("strict", "object")),
                            ),
                        ),
                    ),
                    until(TOOL_CALLS),
                ),
                ws(),
            ),
            "content": tag(
                "content", until(TOOL_CALLS, THINK_OPEN, THINK_CLOSE, min1=True, commit=True)
            ),
        },
        entries={"start": "start", "start_in_reasoning": "start_in_reasoning"},
    ),
    examples=(
        '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}',
        '[TOOL_CALLS]get_weather[CALL_ID]a1B2c3D4e[ARGS]{"city": "Paris"}',
        '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "a1B2c3D4e"}]',
    ),
)
