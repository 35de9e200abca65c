"""Google Gemma 4: ``<|channel>thought`` reasoning and ``<|tool_call>call:NAME{...}<tool_call|>``
calls whose arguments are written in Gemma's own notation.

What the model writes (thinking on: ``<|think|>`` in the system turn; the calls follow
``<channel|>`` on the same line, wrapped here)::

    <|channel>thought
    The user wants the weather in Paris and Rome; one call per city.<channel|>
    <|tool_call>call:get_weather{city:<|"|>Paris<|"|>,unit:<|"|>celsius<|"|>}<tool_call|>
    <|tool_call>call:get_weather{city:<|"|>Rome<|"|>,unit:<|"|>celsius<|"|>}<tool_call|>

Facts this grammar relies on:

- ``<|channel>``, ``<channel|>``, ``<|tool_call>``, ``<tool_call|>``, ``<|"|>``, ``<|turn>``
  and ``<turn|>`` are special tokens of the Gemma 4 tokenizer; the serving stack must keep
  them in the text (vLLM's gemma4 parsers force skip_special_tokens off).  ``<|"|>`` has
  its place inside a call only: in content or reasoning it is reported and dropped.
- The output may open with the turn header ``<|turn>model\\n`` (llama.cpp's
  common/parsers/gemma4.cpp accepts it there: after a tool response the chat template adds
  no header of its own); it is dropped.
- Reasoning is a channel: ``<|channel>thought`` then a newline, the reasoning, and
  ``<channel|>``.  The ``thought`` label and the whitespace after it are not reasoning
  (vLLM strips ``thought\\n``; llama.cpp also takes ``<|channel>thought<channel|>`` with no
  newline, what a zero thinking budget leaves).  Whitespace right after ``<channel|>`` is not
  content.  With thinking off the chat template ends the prompt with the empty block
  ``<|channel>thought\\n<channel|>``, so the output starts in content; reasoning_in_prompt
  defaults to False.  "start_in_reasoning" is for a prompt that ends inside an open
  ``<|channel>thought\\n`` (vLLM issue 45834: some templates leave one open after a tool
  response); a ``<|channel>thought`` the model repeats there is dropped.
- A ``<|channel>`` not followed by ``thought`` is an empty channel and is dropped
  (llama.cpp consumes such stray openers before a thought block); a stray ``<channel|>`` or
  ``<tool_call|>`` outside a block is dropped and the text around it is content (llama.cpp
  tolerates a trailing ``<channel|>``; vLLM drops a bare one anywhere).  Another thought
  block later in the output is reasoning too (llama.cpp joins them).
- A ``<|tool_call>`` inside unfinished reasoning ends the reasoning and starts a call
  (call_in_reasoning="ends_reasoning"), as in vLLM's gemma4 parser engine and its
  is_reasoning_end; llama.cpp reads reasoning up to ``<channel|>`` only.  ``<|tool_call>``
  is a special token, so it cannot be reasoning text that quotes a call; the vLLM
  behaviour is followed.  A ``<channel|>`` after such a call is dropped as stray.
- ``<turn|>`` (end of turn) and ``<|tool_response>`` (the token the model writes after its
  calls, to hand over to the tools) are stop tokens: where a server leaves one in the text,
  the message ends there and what follows is not parsed (vLLM drops a trailing ``<turn|>``
  and treats ``<|tool_response>`` as a turn boundary).
- A call is ``<|tool_call>call:NAME{key:VALUE,...}<tool_call|>``; several calls follow each
  other with no separator (the chat template, llama.cpp, vLLM, SGLang).  ``call`` may be
  missing (``<|tool_call>:NAME{``), which vLLM reports from some checkpoints, or follow a
  stray colon (``<|tool_call>:call:NAME{``, in vLLM's tests): the name is NAME in both
  (vLLM strips ``:call:``; llama.cpp takes ``call:`` only).  A call ends once
  ``<tool_call|>`` has arrived, or ``<turn|>`` right after the arguments' closing ``}``
  (vLLM's tests show Gemma 4 closing a call with the end-of-turn token; vLLM accepts it,
  llama.cpp needs ``<tool_call|>``): the arguments are complete, so the call stands, and
  the turn ends there.  A ``<turn|>`` before the arguments close leaves the call invalid.
  After a malformed call the input is skipped up to ``<tool_call|>``.
- Keys are bare text up to ``:`` (the chat template writes argument keys unquoted, sorted);
  a key between ``<|"|>`` tokens is accepted too, at the top level and in nested dicts alike
  (vLLM unquotes such keys at any depth; llama.cpp's key rule takes the text up to ``:``,
  tokens and all, and a colon between the tokens breaks it; here the key is the text
  between the tokens).  Whitespace may follow ``{``, ``,`` and ``:``.
- Values: a string is raw text between two ``<|"|>`` tokens, with no escapes (a ``"``,
  a backslash, a newline or ``<tool_call|>`` inside is plain data); dicts ``{k:v,...}`` with
  bare keys; arrays ``[v,...]``; JSON numbers; ``true``, ``false``, ``null`` (llama.cpp's
  gemma4 value grammar; the chat template's format_argument).  A top-level string streams
  as it arrives; any other value is converted to JSON when it ends.  Like llama.cpp, a
  string ends at ``<|channel>``, so a channel opened inside a string is a broken call, not
  data.  Anything else (a bare word, ``None``, a Python-style number) makes the arguments
  invalid: no call is guessed.
- Repair mode (StreamParser(repair=True)) also takes a call written without its
  ``<|tool_call>``: ``call:NAME{...}`` right after ``<channel|>`` (the end of a thought
  block, a stray one, or the empty block a thinking-off prompt ends with, so at the start
  of the output too), optionally closed by ``<tool_call|>``, several in a row.  Gemma 4
  checkpoints drop the opener there now and then; agent harnesses built on Gemma 4 read
  such a call, vLLM and llama.cpp leave it in the content (they guess nothing, and
  neither does the default parser here).  The call is marked repaired with
  ``missing_opener``.  Only ``call:`` then a name of word characters then ``{`` starts
  one; a broken one is an error and the rest of it (up to ``<tool_call|>``, the next
  marker or the end of its line) is dropped.
- Content is the text outside channels and calls (llama.cpp keeps the text before, between
  and after calls; vLLM and SGLang keep only the text before the first call).  Whitespace
  right after ``<tool_call|>`` is not content.
"""

from __future__ import annotations

from typing import Literal

from ..grammar import (
    Grammar,
    Node,
    ahead,
    chars,
    choice,
    cut,
    eof,
    lit,
    many,
    many1,
    opt,
    recover,
    ref,
    seq,
    tag,
    until,
    ws,
)
from ._base import Format, skip_past, skip_rest
from ._repair import derive_repair

CHANNEL_OPEN, CHANNEL_CLOSE = "<|channel>", "<channel|>"
TOOL_CALL_OPEN, TOOL_CALL_CLOSE = "<|tool_call>", "<tool_call|>"
TURN_HEADER, TURN_END, TOOL_RESPONSE = "<|turn>model\n", "<turn|>", "<|tool_response>"
QUOTE = '<|"|>'
THOUGHT = "thought"

# Markers that end reasoning without closing its channel: a call, another channel, the
# end of the turn.
_REASONING_ENDS = (TOOL_CALL_OPEN, CHANNEL_OPEN, TURN_END, TOOL_RESPONSE)
_CONTENT_ENDS = (
    CHANNEL_OPEN,
    CHANNEL_CLOSE,
    TOOL_CALL_OPEN,
    TOOL_CALL_CLOSE,
    TURN_END,
    TOOL_RESPONSE,
)


def _separated(item: Node) -> Node:
    """item, then more of it after commas, with optional whitespace around each comma."""
    return seq(item, many(seq(ws(), lit(","), ws(), item)))


def _arguments() -> Node:
    """A call's ``{key:value,...}`` and the whitespace after it."""
    return seq(lit("{"), ws(), opt(_separated(ref("argument"))), ws(), lit("}"), ws())


def gemma_call_rules(
    call_open: str,
    call_close: str,
    quote: str,
    *,
    call_prefixes: tuple[str, ...],
    quoted_keys: bool,
    string_stops: tuple[str, ...],
    decode: Literal["gemma", "functiongemma"],
    call_ends: tuple[str, ...] = (),
) -> dict[str, Node]:
    """A call in Gemma notation (Gemma 4, FunctionGemma): call_open, a prefix, NAME{key:value,
    ...}, call_close (or, left in place for the rule after the call, one of `call_ends`).
    Strings are between two `quote` texts (and end early at `string_stops`); a top-level
    string value streams, any other value is converted to JSON by `decode` when it ends;
    keys are bare text (or quoted at any depth, with `quoted_keys`)."""
    string_text = until(quote, *string_stops, need_stop=True)
    bare_key = tag("param_name", until(":", "}", ",", quote, call_close, min1=True, need_stop=True))
    key = (
        choice(
            seq(lit(quote), tag("param_name", until(quote, need_stop=True)), lit(quote)), bare_key
        )
        if quoted_keys
        else bare_key
    )
    # a nested key is bare text (or quoted); the converter reads it up to its colon
    member_key = until(":", "}", ",", quote, min1=True, need_stop=True)
    if quoted_keys:
        member_key = choice(seq(lit(quote), until(quote, need_stop=True), lit(quote)), member_key)
    close = lit(call_close)
    if call_ends:
        close = choice(close, *(ahead(lit(end)) for end in call_ends))
    top_string = seq(
        lit(quote), cut(), tag("param_value", string_text, decode="string"), lit(quote)
    )
    prefix = (
        choice(*(lit(p) for p in call_prefixes))
        if len(call_prefixes) > 1
        else lit(call_prefixes[0])
    )
    body = seq(
        ws(),
        prefix,
        tag("tool_name", until("{", call_close, min1=True, need_stop=True)),
        _arguments(),
        close,
    )
    return {
        "call": seq(
            lit(call_open),
            cut(),
            recover(tag("tool_call", body), skip_past(call_close)),
            ws(),
        ),
        "argument": seq(
            key,
            ws(),
            lit(":"),
            cut(),
            ws(),
            choice(top_string, tag("param_value", ref("value"), decode=decode)),
        ),
        "value": choice(
            ref("string"),
            ref("dict"),
            ref("array"),
            lit("true"),
            lit("false"),
            lit("null"),
            chars("-+.0-9eE", min1=True),
        ),
        "string": seq(lit(quote), string_text, lit(quote)),
        "member": seq(member_key, ws(), lit(":"), ws(), ref("value")),
        "dict": seq(lit("{"), ws(), opt(_separated(ref("member"))), ws(), lit("}")),
        "array": seq(lit("["), ws(), opt(_separated(ref("value"))), ws(), lit("]")),
    }


_REASONING_REST = seq(
    tag("reasoning", until(CHANNEL_CLOSE, *_REASONING_ENDS)),
    opt(seq(lit(CHANNEL_CLOSE), ws())),
)

_RULES: dict[str, Node] = {
    "start": seq(opt(lit(TURN_HEADER)), ws(), ref("body")),
    # the prompt opened <|channel>thought\n; a repeated opener is dropped
    "start_in_reasoning": seq(
        opt(seq(lit(CHANNEL_OPEN), opt(lit(THOUGHT)), ws())),
        ref("reasoning_rest"),
        ref("body"),
    ),
    "reasoning_rest": _REASONING_REST,
    "body": seq(
        many(
            choice(
                ref("channel"),
                ref("call"),
                ref("stray_close"),
                ref("turn_end"),
                ref("content"),
            )
        ),
        eof(),
    ),
    # <|channel>thought opens reasoning; any other channel opener is dropped
    "channel": seq(
        lit(CHANNEL_OPEN),
        cut(),
        opt(seq(lit(THOUGHT), cut(), ws(), ref("reasoning_rest"))),
    ),
    **gemma_call_rules(
        TOOL_CALL_OPEN,
        TOOL_CALL_CLOSE,
        QUOTE,
        call_prefixes=("call:", ":call:", ":"),
        quoted_keys=True,
        string_stops=(CHANNEL_OPEN,),
        decode="gemma",
        call_ends=(TURN_END,),
    ),
    "stray_close": choice(lit(CHANNEL_CLOSE), lit(TOOL_CALL_CLOSE)),
    "turn_end": seq(choice(lit(TURN_END), lit(TOOL_RESPONSE)), cut(), skip_rest()),
    "content": tag("content", until(*_CONTENT_ENDS, min1=True, commit=True)),
}
_ENTRIES = {"start": "start", "start_in_reasoning": "start_in_reasoning"}

# Repair mode: a call written without <|tool_call> where the model leaves it out, after
# <channel|> (see the module's docstring).
_BARE_PREFIX = "call:"
# A broken one is dropped up to its <tool_call|>, the next marker or the end of its line:
# with no opener there may be no closer either (and a reasoning parser ahead of the tool
# parser drops a <tool_call|> that closes nothing in its own reading).
_BARE_CALL_SKIP = seq(
    until(TOOL_CALL_CLOSE, "\n", TOOL_CALL_OPEN, CHANNEL_OPEN, TURN_END, TOOL_RESPONSE),
    opt(lit(TOOL_CALL_CLOSE)),
)
_BARE_CALL_RULES: dict[str, Node] = {
    "start": seq(opt(lit(TURN_HEADER)), ws(), opt(ref("bare_calls")), ref("body")),
    "reasoning_rest": seq(
        tag("reasoning", until(CHANNEL_CLOSE, *_REASONING_ENDS)),
        opt(seq(lit(CHANNEL_CLOSE), ws(), opt(ref("bare_calls")))),
    ),
    "stray_close": choice(
        seq(lit(CHANNEL_CLOSE), opt(seq(ws(), ref("bare_calls")))), lit(TOOL_CALL_CLOSE)
    ),
    "bare_calls": many1(ref("bare_call")),
    "bare_call": seq(
        ahead(seq(lit(_BARE_PREFIX), chars("A-Za-z0-9_.-", min1=True), lit("{"))),
        lit(_BARE_PREFIX),
        recover(
            tag(
                "tool_call",
                seq(
                    tag("missing_opener", seq()),
                    tag("tool_name", until("{", min1=True, need_stop=True)),
                    _arguments(),
                    opt(lit(TOOL_CALL_CLOSE)),
                ),
            ),
            _BARE_CALL_SKIP,
        ),
        ws(),
    ),
}

FORMAT = Format(
    name="gemma4",
    aliases=("peg-gemma4",),
    description="Google Gemma 4: <|channel>thought reasoning, "
    '<|tool_call>call:NAME{key:<|"|>text<|"|>,n:1}<tool_call|> calls in Gemma notation',
    families=("Gemma 4",),
    model_ids=("google/gemma-4-*",),
    reasoning="optional",
    reasoning_openers=("<|channel>thought",),
    reasoning_in_prompt=False,
    call_in_reasoning="ends_reasoning",
    markers=(
        CHANNEL_OPEN,
        CHANNEL_CLOSE,
        TOOL_CALL_OPEN,
        TOOL_CALL_CLOSE,
        TURN_END,
        TOOL_RESPONSE,
        QUOTE,
    ),
    call_markers=(TOOL_CALL_OPEN, TOOL_CALL_CLOSE),
    other_call_closers=(TURN_END,),
    argument_notation="Gemma values",
    grammar=Grammar(rules=_RULES, entries=_ENTRIES),
    repair_grammar=derive_repair(Grammar(rules={**_RULES, **_BARE_CALL_RULES}, entries=_ENTRIES)),
    examples=(
        "<|channel>thought\nThe user wants the weather in Paris.<channel|>"
        '<|tool_call>call:get_weather{city:<|"|>Paris<|"|>,unit:<|"|>celsius<|"|>}<tool_call|>',
        'Let me look that up.<|tool_call>call:search{query:<|"|>gemma 4 release<|"|>,'
        'limit:3,filters:{lang:<|"|>en<|"|>,safe:true}}<tool_call|>',
    ),
)
