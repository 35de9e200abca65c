"""LiquidAI LFM2 / LFM2.5: a list of calls between ``<|tool_call_start|>`` and
``<|tool_call_end|>``, written as Python calls (the default) or as JSON objects.

What the model writes (LFM2.5 thinking models open with a ``<think>`` block)::

    <think>The user wants the weather in two cities; one call each.</think>Checking both.
    <|tool_call_start|>[get_weather(city="Paris"), get_weather(city='Rome')]<|tool_call_end|>

and, when the system prompt asks for JSON calls ("Output function calls as JSON" in Liquid
AI's docs; the only form llama.cpp's first, legacy LFM2 handler read)::

    <|tool_call_start|>[{"name": "get_weather", "arguments": {"city": "Paris"}}]<|tool_call_end|>

Facts this grammar relies on:

- Calls sit between ``<|tool_call_start|>`` and ``<|tool_call_end|>`` (special tokens of
  the LFM2 and LFM2.5 tokenizers; Liquid AI's model cards and docs, llama.cpp's
  common/parsers/lfm2.cpp, vLLM's and SGLang's lfm2 parsers).  The serving stack must keep
  special tokens in the text (vLLM's parser forces skip_special_tokens off); a bare list
  without the markers is content here, as it is for the three peers.
- The block holds a list.  Its first byte after ``[`` decides the variant: ``{`` starts a
  JSON array of ``{"name", "arguments"}`` objects (llama.cpp's legacy
  LFM2_WITH_JSON_TOOLS parser; SGLang tries JSON when the block starts with ``[{`` or
  ``{``), anything else a Python list of calls ``name(key=value, ...)`` (llama.cpp's
  python_style_tool_calls, vLLM and SGLang with Python's ast).  A bare JSON object without
  the brackets is accepted too (SGLang does); a pythonic call needs its brackets (llama.cpp
  and vLLM require them).  ``[]`` is an empty block: no call.
- Pythonic calls take keyword arguments only, values Python literals (either quote,
  Python escapes, True/False/None, tuples, dicts, trailing commas, a number's unary plus
  as in ``+7``, which Python reads and the peers' ast-based readers take while the
  JSON-minded ones refuse it; ``++7`` is no literal and stays an error); a positional argument
  or an expression makes the arguments invalid (SGLang rejects positional arguments;
  llama.cpp's grammar has only ``name=value``).  Parameter names that are Python keywords
  (``from=``) are ordinary names here (vLLM and SGLang rename them around ast and back).
  Tool names may carry dots (``Calendar.create_event``; all three peers accept them).
- JSON literals ``true``/``false``/``null`` inside a pythonic call are read as
  True/False/None: LFM2 models write them, and the peers all take them (llama.cpp's LFM2
  parser with allow_json_literals, vLLM's and SGLang's name tables).
- String-encoded JSON arguments (``"arguments": "{...}"``) are invalid arguments, never a
  guessed call (llama.cpp's legacy parser passed the string through).
- A call in the list ends once what follows it is certain: a comma (another call) or
  ``]`` and ``<|tool_call_end|>``.  So a call never ends before its block closes, and a
  list cut short delivers only the calls a comma already closed.  A broken pythonic call
  is reported and skipped up to the ``)`` that ends it (followed by ``,`` or ``]``, outside
  strings and nested parentheses), and the calls before and after it stand; vLLM and
  SGLang read the list with Python's parser, so one broken call loses them all.  A
  broken call with no such ``)`` before ``<|tool_call_end|>``, and anything else that
  breaks a block (a broken JSON array too), drops the rest of the block up to
  ``<|tool_call_end|>``; the calls before it stand.
- Reasoning: LFM2.5 thinking models write ``<think>`` themselves (the generation prompt
  is ``<|im_start|>assistant\\n``; llama.cpp reads an optional ``<think>...</think>`` at the
  start), so reasoning_in_prompt defaults to False.  Reasoning ends only at ``</think>``:
  a call marker inside it is reasoning text (llama.cpp reads reasoning up to ``</think>``).
- Text before and after a block is content (llama.cpp's legacy parser and vLLM keep both;
  SGLang drops the text after).  Whitespace right after ``</think>`` and after
  ``<|tool_call_end|>`` is not content; several blocks in one output are all parsed.
- LFM2 sometimes repeats the list right after the block and caps the copy with a second
  ``<|tool_call_end|>`` (vLLM's parser drops such an echo).  A pythonic or JSON list that
  directly follows a block and is closed by ``<|tool_call_end|>`` is dropped the same way,
  without calls; a list that is not so closed stays content.  Any other stray
  ``<|tool_call_end|>`` is dropped, the text around it is content.

Huawei's openPangu models write the JSON variant between the same two tokens (vLLM's
pangu and openpangu_v2 parsers and their tests: a JSON list of ``{"name", "arguments"}``
objects, ``"parameters"`` taken for ``"arguments"``, the list on its own line or not),
with ``<think>`` reasoning, hence the aliases.  Their reasoning parsers are DeepSeek-R1's
(openPangu V2 with its ``think`` switch on): the template opens the block, so pass
reasoning_in_prompt=True for them.  Against those parsers: a bare object without the
list's brackets is a call here (openpangu_v2 refuses it; the markers leave no doubt); the
text after a block is content (pangu drops it); a block that does not parse is an error
and its calls are lost alone, where both hand the whole output back as content.  Not
read: the ``[unused11]``/``[unused12]`` call tokens and ``[unused16]``/``[unused17]``
reasoning tokens that vLLM's pangu parsers fall back to for a tokenizer without
``<|tool_call_start|>`` and ``<think>`` (no test or template shows that variant).
"""

from __future__ import annotations

from ..grammar import (
    Grammar,
    Node,
    ahead,
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
from ._base import Format, call_array, reasoning_rules, skip_past
from ._pythonic import call_list, function_name, identifier

TOOL_CALL_START, TOOL_CALL_END = "<|tool_call_start|>", "<|tool_call_end|>"
THINK_OPEN, THINK_CLOSE = "<think>", "</think>"


def _block_body() -> Node:
    """What follows ``<|tool_call_start|>``: a JSON array (``[`` then ``{``), a bare JSON
    object, or a pythonic list, each closed by ``<|tool_call_end|>``."""
    json_array = seq(
        ahead(seq(lit("["), ws(), lit("{"))), cut(), call_array(json_call(), TOOL_CALL_END)
    )
    bare_object = tag("tool_call", seq(json_call(), ws(), lit(TOOL_CALL_END)))
    python_list = call_list(TOOL_CALL_END, (TOOL_CALL_END, TOOL_CALL_START), empty=True)
    return seq(ws(), choice(json_array, bare_object, python_list))


def _echo() -> Node:
    """A copy of a call list with no tags, closed by ``<|tool_call_end|>``: what LFM2 may
    repeat after a block.  Nothing in it commits, so anything else is left to content."""
    argument = seq(identifier(), ws(), lit("="), ws(), json("python"))
    arguments = seq(argument, many(seq(ws(), lit(","), ws(), argument)), ws(), opt(lit(",")))
    call = seq(function_name(), ws(), lit("("), ws(), opt(arguments), ws(), lit(")"))
    python_list = seq(lit("["), ws(), call, many(seq(ws(), lit(","), ws(), call)), ws(), lit("]"))
    json_list = seq(ahead(seq(lit("["), ws(), lit("{"))), json())
    return seq(choice(json_list, python_list), ws(), lit(TOOL_CALL_END), ws())


FORMAT = Format(
    name="lfm2",
    aliases=("lfm2_with_json_tools", "pangu", "openpangu_v2"),
    description="LiquidAI LFM2 / LFM2.5: <|tool_call_start|>[f(a=1), g(b='x')]<|tool_call_end|> "
    "pythonic calls (or a JSON array of calls); optional <think> reasoning",
    families=("LFM2", "LFM2.5", "openPangu V2"),
    model_ids=("LiquidAI/LFM2-*", "LiquidAI/LFM2.5-*"),
    reasoning="optional",
    reasoning_in_prompt=False,
    call_in_reasoning="text",
    markers=(TOOL_CALL_START, TOOL_CALL_END, THINK_OPEN, THINK_CLOSE),
    call_markers=None,
    argument_notation="Python literals or JSON",
    grammar=Grammar(
        rules={
            **reasoning_rules(THINK_OPEN, THINK_CLOSE),
            "body": seq(many(choice(ref("block"), ref("stray_end"), ref("content"))), eof()),
            "block": seq(
                lit(TOOL_CALL_START),
                cut(),
                recover(_block_body(), skip_past(TOOL_CALL_END)),
                ws(),
                opt(_echo()),
            ),
            "stray_end": lit(TOOL_CALL_END),
            "content": tag(
                "content", until(TOOL_CALL_START, TOOL_CALL_END, min1=True, commit=True)
            ),
        },
        entries={"start": "start", "start_in_reasoning": "start_in_reasoning"},
    ),
    examples=(
        '<|tool_call_start|>[get_weather(city="Paris", unit="celsius")]<|tool_call_end|>',
        "<think>Two cities, two calls.</think>Checking both.\n<|tool_call_start|>"
        "[get_weather(city='Paris'), get_weather(city='Rome')]<|tool_call_end|>",
        '<|tool_call_start|>[{"name": "get_weather", "arguments": {"city": "Oslo"}}]'
        "<|tool_call_end|>",
    ),
)
