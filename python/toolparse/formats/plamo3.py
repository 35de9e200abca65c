"""Preferred Networks PLaMo 3: ``<|plamo:...|>`` tags around reasoning and a block of calls
with JSON arguments.

What the model writes (the output opens in reasoning; one line, wrapped here)::

    The user wants the weather in Tokyo.<|plamo:end_think:plamo|>Checking the weather.
    <|plamo:begin_tool_requests:plamo|><|plamo:begin_tool_request:plamo|>
    <|plamo:begin_tool_name:plamo|>get_weather<|plamo:end_tool_name:plamo|>
    <|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json<|plamo:msg|>{"city": "Tokyo"}
    <|plamo:end_tool_arguments:plamo|><|plamo:end_tool_request:plamo|>
    <|plamo:end_tool_requests:plamo|><|plamo:tag|>

Facts this grammar relies on (vLLM's plamo3 tool and reasoning parsers and their tests):

- A block ``<|plamo:begin_tool_requests:plamo|>`` ... ``<|plamo:end_tool_requests:plamo|>``
  holds one or more requests, each ``<|plamo:begin_tool_request:plamo|>``, the name between
  ``<|plamo:begin_tool_name:plamo|>`` and ``<|plamo:end_tool_name:plamo|>``, the arguments
  after ``<|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json<|plamo:msg|>`` up to
  ``<|plamo:end_tool_arguments:plamo|>``, then ``<|plamo:end_tool_request:plamo|>``.  vLLM
  writes the tags back to back; the arguments are JSON (``{"city": "Tokyo"}``).
- The tags are not single tokens (each is a prefix token, the name and a suffix token),
  so they may arrive split.  ``<|plamo:tag|>`` is a single token and ends the turn: vLLM
  drops everything after it.
- Reasoning ends at ``<|plamo:end_think:plamo|>``.  vLLM's reasoning parser starts in
  reasoning whether or not the output repeats ``<|plamo:begin_think:plamo|>`` (unless the
  template was told enable_thinking=False), so reasoning_in_prompt defaults to True and a
  leading ``<|plamo:begin_think:plamo|>`` is dropped.  A call block inside unfinished
  reasoning is reasoning text (vLLM ends reasoning only at the end tag or
  ``<|plamo:tag|>``).
- Text before the block is content.

Choices and what could not be pinned down:

- Whitespace between the tags is accepted (vLLM's parser requires none); the
  ``<|plamo:constrain|>json<|plamo:msg|>`` part is required, as vLLM has it in its
  arguments tag.  Whitespace right after ``<|plamo:end_think:plamo|>`` and after the block
  is not content.
- Each call is delivered at its ``<|plamo:end_tool_request:plamo|>``, as vLLM's streaming
  parser does; its non-streaming parser drops every call of a block that never reaches
  ``<|plamo:end_tool_requests:plamo|>``.  Here calls already delivered stand, with no
  error, when the output stops before the end of the block.
- Text after the block (vLLM ignores it) is content, and a further block is read too.
- A malformed request is reported and skipped up to ``<|plamo:end_tool_request:plamo|>``.
- An output that opens with ``<|plamo:end_think:plamo|>`` has an empty reasoning block:
  reasoning_content is "".
- model_ids: the pfnet/plamo-3-* repositories; which of them are chat models using these
  tags could not be pinned down from the peers.
"""

from __future__ import annotations

from ..grammar import (
    Grammar,
    choice,
    cut,
    eof,
    json,
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
from ._base import Format, reasoning_rules, skip_past, skip_rest

REQUESTS_OPEN = "<|plamo:begin_tool_requests:plamo|>"
REQUESTS_CLOSE = "<|plamo:end_tool_requests:plamo|>"
REQUEST_OPEN = "<|plamo:begin_tool_request:plamo|>"
REQUEST_CLOSE = "<|plamo:end_tool_request:plamo|>"
NAME_OPEN = "<|plamo:begin_tool_name:plamo|>"
NAME_CLOSE = "<|plamo:end_tool_name:plamo|>"
ARGS_OPEN = "<|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json<|plamo:msg|>"
ARGS_CLOSE = "<|plamo:end_tool_arguments:plamo|>"
THINK_OPEN = "<|plamo:begin_think:plamo|>"
THINK_CLOSE = "<|plamo:end_think:plamo|>"
EOT = "<|plamo:tag|>"

FORMAT = Format(
    name="plamo3",
    description="PLaMo 3: reasoning up to <|plamo:end_think:plamo|>, then "
    "<|plamo:begin_tool_requests:plamo|> blocks of requests with a name and JSON arguments",
    families=("PLaMo 3",),
    model_ids=("pfnet/plamo-3-*",),
    reasoning="optional",
    reasoning_in_prompt=True,
    call_in_reasoning="text",
    markers=(
        REQUESTS_OPEN,
        REQUESTS_CLOSE,
        REQUEST_OPEN,
        REQUEST_CLOSE,
        NAME_OPEN,
        NAME_CLOSE,
        ARGS_OPEN,
        ARGS_CLOSE,
        THINK_OPEN,
        THINK_CLOSE,
        EOT,
    ),
    call_markers=(REQUEST_OPEN, REQUEST_CLOSE),
    grammar=Grammar(
        rules={
            **reasoning_rules(THINK_OPEN, THINK_CLOSE, EOT),
            "body": seq(
                many(choice(ref("block"), ref("end_of_turn"), ref("content"))),
                eof(),
            ),
            "block": seq(
                lit(REQUESTS_OPEN),
                cut(),
                recover(
                    seq(ws(), many(ref("request")), choice(lit(REQUESTS_CLOSE), eof())),
                    skip_past(REQUESTS_CLOSE),
                ),
                ws(),
            ),
            "request": seq(
                lit(REQUEST_OPEN),
                cut(),
                recover(
                    tag(
                        "tool_call",
                        seq(
                            ws(),
                            lit(NAME_OPEN),
                            tag("tool_name", until(NAME_CLOSE, need_stop=True)),
                            lit(NAME_CLOSE),
                            ws(),
                            lit(ARGS_OPEN),
                            ws(),
                            tag("tool_args", json("strict", "object")),
                            ws(),
                            lit(ARGS_CLOSE),
                            ws(),
                            lit(REQUEST_CLOSE),
                        ),
                    ),
                    seq(until(REQUEST_CLOSE, REQUESTS_CLOSE, EOT), opt(lit(REQUEST_CLOSE))),
                ),
                ws(),
            ),
            "end_of_turn": seq(lit(EOT), cut(), skip_rest()),
            "content": tag("content", until(REQUESTS_OPEN, EOT, min1=True, commit=True)),
        },
        entries={"start": "start", "start_in_reasoning": "start_in_reasoning"},
    ),
    examples=(
        f"The user wants the weather in Tokyo.{THINK_CLOSE}"
        f"Checking the weather.{REQUESTS_OPEN}{REQUEST_OPEN}{NAME_OPEN}get_weather{NAME_CLOSE}"
        f'{ARGS_OPEN}{{"city": "Tokyo"}}{ARGS_CLOSE}{REQUEST_CLOSE}{REQUESTS_CLOSE}{EOT}',
    ),
)
