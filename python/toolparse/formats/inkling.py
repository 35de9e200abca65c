"""Thinking Machines Inkling: typed content blocks, a call being a JSON block.

The chat template ends the prompt with ``<|message_model|>``; the model then writes one
or more blocks, each opened by a content-kind token and closed by ``<|end_message|>``,
with ``<|message_model|>`` again before each further block (one output, wrapped here)::

    <|content_thinking|>Look the file up first.<|end_message|>
    <|message_model|><|content_text|>Reading it now.<|end_message|>
    <|message_model|>read_file<|content_invoke_tool_json|>
    {"args":{"path":"a.txt"},"name":"read_file"}<|end_message|>
    <|content_model_end_sampling|>

Facts this grammar relies on:

- Every marker is a special token of the Inkling tokenizer: ``<|message_model|>``,
  ``<|content_thinking|>``, ``<|content_text|>``, ``<|content_invoke_tool_json|>``,
  ``<|content_invoke_tool_text|>``, ``<|content_tool_error|>``, ``<|end_message|>`` and
  ``<|content_model_end_sampling|>`` (vLLM's inkling engine parser; llama.cpp
  common/parsers/inkling.cpp; SGLang's InklingDetector).
- The output starts inside a message header: the template's generation prompt is
  ``<|message_model|>`` (llama.cpp), and vLLM starts in its header state.  Blocks may come
  in any order and repeat; ``<|message_model|>`` is re-emitted before each block.
- A call block is ``<|content_invoke_tool_json|>`` and one JSON object with the tool name
  under ``name`` and the arguments object under ``args`` (the template writes the keys
  sorted, ``args`` first), then ``<|end_message|>`` (llama.cpp requires it; SGLang's regex
  allows whitespace around the JSON).  vLLM also takes ``arguments`` or ``parameters``
  for the arguments; so does this grammar.  The text between ``<|message_model|>`` and
  ``<|content_invoke_tool_json|>`` is the tool's name echoed by the template; vLLM treats
  it as metadata and takes the name from the JSON, as this grammar does.
- ``<|content_thinking|>`` opens reasoning, up to ``<|end_message|>`` (llama.cpp also
  stops it at ``<|content_text|>`` and ``<|content_model_end_sampling|>``; vLLM lets
  ``<|content_invoke_tool_json|>`` end it and open a call, so call_in_reasoning is
  "ends_reasoning").  A thinking block may come again later in the turn.  The prompt may
  end in ``<|content_thinking|>`` (vLLM seeds its state from the prompt's last special
  token): that is the "start_in_reasoning" entry; reasoning_in_prompt defaults to False.
- ``<|content_text|>`` opens visible text up to ``<|end_message|>``.  vLLM renders
  ``<|content_invoke_tool_text|>`` and ``<|content_tool_error|>`` blocks as visible text
  too; so does this grammar.
- ``<|content_model_end_sampling|>`` is the end-of-generation token (llama.cpp: the sole
  one; a parse ends there); where a server leaves it in the text, the message ends there
  and what follows is not parsed.

Choices and what could not be pinned down:

- Header text (between ``<|message_model|>`` and a content-kind token) is dropped, as
  vLLM drops it.  Text that no content-kind token follows (the header runs into
  ``<|end_message|>`` or the end) is content, as llama.cpp reads a block without a kind
  token; such text is held until that is decided.  Text after ``<|end_message|>`` outside
  any header is content too (both peers), except right after a thinking block that opens
  the output, where it is read as the rest of the header the template opened.
  Whitespace after ``<|end_message|>`` is not content.
- vLLM also ends a call block at ``<|content_model_end_sampling|>``; here a call needs its
  ``<|end_message|>``, and a call cut off by the end of sampling is an error.
- What the model does when the echoed name and the JSON ``name`` differ is unknown; the
  JSON wins.
"""

from __future__ import annotations

from ..grammar import (
    Grammar,
    ahead,
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
    tag,
    until,
    ws,
)
from ._base import Format, skip_past, skip_rest

MESSAGE_MODEL = "<|message_model|>"
THINKING = "<|content_thinking|>"
TEXT = "<|content_text|>"
INVOKE_JSON = "<|content_invoke_tool_json|>"
INVOKE_TEXT = "<|content_invoke_tool_text|>"
TOOL_ERROR = "<|content_tool_error|>"
END_MESSAGE = "<|end_message|>"
END_SAMPLING = "<|content_model_end_sampling|>"

_KINDS = (THINKING, TEXT, INVOKE_JSON, INVOKE_TEXT, TOOL_ERROR)
_ALL = (MESSAGE_MODEL, *_KINDS, END_MESSAGE, END_SAMPLING)

FORMAT = Format(
    name="inkling",
    description="Thinking Machines Inkling: <|message_model|> blocks of <|content_thinking|>, "
    "<|content_text|> and <|content_invoke_tool_json|>{...} calls, each closed by <|end_message|>",
    families=("Inkling",),
    model_ids=("thinkingmachines/Inkling*",),
    reasoning="optional",
    reasoning_openers=("<|content_thinking|>",),
    reasoning_in_prompt=False,
    call_in_reasoning="ends_reasoning",
    markers=_ALL,
    call_markers=(INVOKE_JSON, END_MESSAGE),
    grammar=Grammar(
        rules={
            # the prompt ended with <|message_model|>: the output opens inside a header,
            # which may open a thinking block
            "start": seq(opt(seq(lit(THINKING), cut(), ref("reasoning_rest"))), ref("body")),
            # the prompt ended with <|content_thinking|>
            "start_in_reasoning": seq(ref("reasoning_rest"), ref("body")),
            # the rest of the header the output (or the reasoning block) opened, then blocks
            "body": seq(
                ref("header_rest"),
                many(
                    choice(
                        seq(lit(MESSAGE_MODEL), cut(), ref("header_rest")),
                        ref("kind_block"),
                        seq(lit(END_MESSAGE), ws()),
                        ref("end_sampling"),
                        ref("loose_text"),
                    )
                ),
                eof(),
            ),
            # header text before a content-kind token is metadata (the echoed tool name);
            # text that no kind token follows is content
            "header_rest": seq(
                choice(
                    seq(until(*_ALL), ahead(choice(*(lit(k) for k in _KINDS)))),
                    ref("loose_text"),
                    ws(),
                ),
                opt(ref("kind_block")),
            ),
            "kind_block": choice(
                seq(lit(THINKING), cut(), ref("reasoning_rest")),
                seq(choice(lit(TEXT), lit(INVOKE_TEXT), lit(TOOL_ERROR)), cut(), ref("text_rest")),
                ref("call"),
            ),
            "reasoning_rest": seq(
                tag("reasoning", until(*_ALL)),
                opt(seq(lit(END_MESSAGE), ws())),
            ),
            "text_rest": seq(
                tag("content", until(*_ALL)),
                opt(seq(lit(END_MESSAGE), ws())),
            ),
            "call": seq(
                lit(INVOKE_JSON),
                cut(),
                recover(
                    tag(
                        "tool_call",
                        seq(
                            ws(),
                            json_call(("name",), ("args", "arguments", "parameters")),
                            ws(),
                            lit(END_MESSAGE),
                        ),
                    ),
                    skip_past(END_MESSAGE),
                ),
                ws(),
            ),
            "end_sampling": seq(lit(END_SAMPLING), cut(), skip_rest()),
            "loose_text": tag("content", until(*_ALL, min1=True, commit=True)),
        },
        entries={"start": "start", "start_in_reasoning": "start_in_reasoning"},
    ),
    examples=(
        # first: the template validate derives example calls from (no echoed name)
        '<|content_invoke_tool_json|>{"name":"get_weather","args":{"city":"Paris"}}<|end_message|>',
        "<|content_thinking|>Read the file first.<|end_message|><|message_model|>read_file"
        '<|content_invoke_tool_json|>{"args":{"path":"a.txt"},"name":"read_file"}'
        "<|end_message|><|content_model_end_sampling|>",
    ),
)
