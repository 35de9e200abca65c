"""Meta Llama 3.1 / 3.2 / 3.3 JSON calls: ``{"name": ..., "parameters": {...}}``.

What the model writes when it calls a tool it was given as JSON: the whole output is the
object, bare or between ``<|python_tag|>`` and ``<|eom_id|>`` (the template puts
``Environment: ipython`` in the system prompt whenever tools are given, and Meta's guide
shows the tag and ``<|eom_id|>`` in that case)::

    {"name": "get_weather", "parameters": {"city": "Paris"}}
    <|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}}<|eom_id|>

Facts this grammar relies on:

- The Llama 3.1 / 3.2 / 3.3 chat templates ask for "a JSON for a function call" in the
  format ``{"name": function name, "parameters": dictionary of argument name and its
  value}`` and render past calls that way, name first.  Meta's prompt-format guide shows
  the same call written ``<|python_tag|>{"type": "function", "name": ..., "parameters":
  {...}}<|eom_id|>``, pretty-printed, and Meta's reference decoder (llama-models,
  ``decode_assistant_message_from_content``) strips a leading ``<|python_tag|>`` and a
  trailing ``<|eot_id|>`` or ``<|eom_id|>`` before reading the JSON.
- vLLM's llama3_json (also llama4_json) parser reads ``"arguments"`` as well as
  ``"parameters"`` and several objects separated by ``;``; while streaming it reads calls
  only when the output starts with ``{`` or ``<|python_tag|>``.  SGLang's llama3 detector
  splits at ``<|python_tag|>`` wherever it is (the text before is content) or reads an
  output that starts with ``{``, with ``;`` between calls.  llama.cpp's Llama 3.x handler
  takes a call only at the very start of the output (``{`` with an optional ``"type":
  "function"`` key, then ``"name"`` and ``"parameters"``); anywhere else it is content.
- The templates support one call per turn; several calls joined by ``;`` come from
  fine-tunes and prompts that ask for them (vLLM's and SGLang's separator).

Choices (where the peers differ):

- ``<|python_tag|>`` opens calls wherever it appears (a special token, so never text);
  text before it is content, as in SGLang.
- Without the tag, only an object that opens the output is a call, and only when it
  starts like one: ``{``, optionally ``"type": "function",``, then ``"name"`` with a
  string, then a ``"parameters"`` or ``"arguments"`` key.  That much is held back; from
  there the call is committed and its arguments stream (arguments that are not an
  object, such as a JSON string, are then invalid arguments).  Anything else is content:
  prose, an object later in the text, JSON the user asked for such as ``{"name": "Ada",
  "born": 1815}``, and an output cut off before those keys have arrived.  What the
  grammar cannot check is whether the name is one of the given tools: with tools given,
  an object of the call's shape with an unknown name reports ``unknown_tool`` (the call
  is dropped, not guessed) rather than being returned as content.
- After a call, ``;`` and another object is another call (for an object after ``;`` no
  shape test is made: it must be a call).  So is an object after whitespace alone (a
  newline, as fine-tunes list parallel calls one per line) when it starts like a call;
  vLLM's streaming parser takes ``;``, ``; ``, ``;\n`` and ``\n`` alike (its tests), while
  its non-streaming path skips two characters after each object, which works for ``; ``
  only.  So is an object that starts like a call right after the last call's ``}``:
  Llama 4's JSON chat template (vLLM's llama4_json example) renders a turn's calls so,
  one after the other with nothing between.  An object after whitespace, or right after
  a call, that does not start like a call is content, as anywhere after the calls.  A
  call ends when its object closes.  ``<|eom_id|>`` and ``<|eot_id|>`` are dropped
  wherever they appear, and text after the calls is content.  A broken call reports an
  error and the rest up to the next ``<|python_tag|>`` or end token is skipped.

Built-in tools and the code interpreter (Llama 3.1 and later; what the model writes)::

    <|python_tag|>brave_search.call(query="weather in Menlo Park")<|eom_id|>
    <|python_tag|>import math
    print(math.sqrt(2))<|eom_id|>

- Meta's Llama 3.1 prompt-format guide: with ``Environment: ipython`` and ``Tools:
  brave_search, wolfram_alpha`` in the system prompt, the model calls a built-in tool as
  ``<|python_tag|>NAME.call(query="...")`` and ends the message with ``<|eom_id|>``; with
  ``Environment: ipython`` alone it writes raw Python after ``<|python_tag|>`` for the code
  interpreter.  The Hugging Face Llama 3.1 / 3.3 templates render a past built-in call as
  ``<|python_tag|>NAME.call(key="value", key2="value2")`` (every value between double
  quotes, as written, ``, `` between) followed by ``<|eom_id|>``.
- llama.cpp (LLAMA_3_X_WITH_BUILTIN_TOOLS) treats given tools named wolfram_alpha,
  web_search / brave_search (a ``query``) and python / code_interpreter (a ``code``) as
  built-in, constrains them to ``<|python_tag|>NAME.call(key=VALUE, ...)`` with JSON
  values (its tests: ``code_interpreter.call(code="print('hey')")``), and parses any
  ``NAME.call(`` after the tag, with spaces allowed around the dot.  (Its parser does not
  read raw code: after the tag, anything else makes the whole output content.)
- Meta's reference decoder (``decode_assistant_message_from_content``) reads an output
  that starts with the tag and is neither a JSON call nor ``NAME.call(query="...")`` as
  a call of ``code_interpreter`` with arguments ``{"code": <the rest of the output>}``.

Choices for what follows ``<|python_tag|>`` (after optional whitespace):

- ``{`` opens JSON calls, as above.
- ``NAME.call(`` (NAME an ASCII identifier; spaces are allowed around the dot and before
  the parenthesis) is a built-in call of the tool NAME, for any name; it is committed
  there.  Its arguments are keyword arguments with Python literal
  values, converted to JSON: strings in double or single quotes with Python's escapes
  (so ``\\/`` keeps its backslash, where a JSON reader would drop it), numbers,
  ``True``/``False``/``None`` and JSON's ``true``/``false``/``null``, lists, dicts and
  tuples; a trailing comma is accepted.  Not accepted, as invalid arguments: a positional
  argument, a line break inside a quoted string, a triple-quoted string, an expression or
  a bare name as a value, and a double quote left unescaped inside a double-quoted value
  (which the template would write for a value that contains one).  The call ends at its
  ``)``; ``<|eom_id|>`` after it is dropped and text after it is content.  Without the tag,
  ``NAME.call(...)`` is content (llama.cpp wants the tag too).
- Anything else is raw code: a call of ``code_interpreter`` with arguments ``{"code":
  <the code>}``, streamed as the JSON string value of ``"code"``.  The code ends at
  ``<|eom_id|>``, ``<|eot_id|>``, another ``<|python_tag|>`` or where the model stopped; an
  output cut short (finish reason "length") inside it is an "incomplete" error and no
  call.  JSON, ``.call(`` or ``;`` later in the code are code.  Meta's decoder does this
  only when the output starts with the tag; here, as for JSON calls, the tag may follow
  text.  Code that starts with ``{`` or ``NAME.call(`` is read as the forms above.
- Built-in calls and ``code_interpreter`` are ordinary calls of those names: they are
  delivered when the tools given include them (as in llama.cpp's requests), and are
  ``unknown_tool`` otherwise.
"""

from __future__ import annotations

from ..grammar import (
    Grammar,
    ahead,
    chars,
    choice,
    const,
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
    stopped,
    tag,
    until,
    ws,
)
from ._base import Format
from ._pythonic import identifier, keyword_arguments

PYTHON_TAG = "<|python_tag|>"
EOM, EOT = "<|eom_id|>", "<|eot_id|>"


# How a call object opens: {"name": "...", "parameters":   (with an optional leading
# "type": "function" member).  Checked as a lookahead before a bare object is committed.
_call_head = seq(
    lit("{"),
    ws(),
    opt(seq(lit('"type"'), ws(), lit(":"), ws(), lit('"function"'), ws(), lit(","), ws())),
    lit('"name"'),
    ws(),
    lit(":"),
    ws(),
    json("strict", "string"),
    ws(),
    lit(","),
    ws(),
    choice(lit('"parameters"'), lit('"arguments"')),
    ws(),
    lit(":"),
)

# NAME.call( : how a built-in call opens (checked before it is committed)
_builtin_head = seq(identifier(), ws(), lit("."), ws(), lit("call"), ws(), lit("("))

# Skipped after a broken call: up to the next tag or end token.
_resync = until(PYTHON_TAG, EOM, EOT)

FORMAT = Format(
    name="llama3_json",
    aliases=("llama3", "llama4_json", "llama-3.x"),
    description='Meta Llama 3.1/3.2/3.3: {"name": ..., "parameters": {...}} JSON calls opening '
    "the output or after <|python_tag|> (several joined by ;); after the tag also built-in "
    "NAME.call(key=value) calls and raw code for code_interpreter",
    families=("Llama 3.1", "Llama 3.2", "Llama 3.3"),
    model_ids=(
        "meta-llama/Llama-3.1-*",
        "meta-llama/Meta-Llama-3.1-*",
        "meta-llama/Llama-3.2-*",
        "meta-llama/Llama-3.3-*",
    ),
    reasoning="none",
    markers=(PYTHON_TAG, EOM, EOT),
    call_markers=None,
    grammar=Grammar(
        rules={
            "start": seq(ws(), opt(ref("bare_calls")), ref("body")),
            "body": seq(many(choice(ref("tagged"), ref("end_token"), ref("content"))), eof()),
            # {"name": ..., "parameters": {...}} opening the output
            "bare_calls": seq(ahead(_call_head), cut(), ref("calls")),
            # <|python_tag|>{...}; {...}
            "tagged": seq(
                lit(PYTHON_TAG),
                cut(),
                ws(),
                recover(ref("tagged_body"), _resync),
            ),
            # JSON calls, a built-in call, or raw code: see the module docstring
            "tagged_body": choice(
                seq(ahead(lit("{")), ref("calls")), ref("builtin_call"), ref("code")
            ),
            # NAME.call(key=value, ...)
            "builtin_call": seq(
                ahead(_builtin_head),
                cut(),
                tag(
                    "tool_call",
                    seq(
                        tag("tool_name", identifier()),
                        ws(),
                        lit("."),
                        ws(),
                        lit("call"),
                        ws(),
                        keyword_arguments(),
                    ),
                ),
                ws(),
            ),
            # raw code for the code interpreter, up to an end token or the next tag
            "code": seq(
                tag(
                    "tool_call",
                    seq(
                        tag("tool_name", const("code_interpreter")),
                        tag("param_name", const("code")),
                        tag("param_value", until(PYTHON_TAG, EOM, EOT), decode="string"),
                        choice(lit(EOM), lit(EOT), ahead(lit(PYTHON_TAG)), stopped()),
                    ),
                ),
                ws(),
            ),
            # calls joined by ; or by whitespace alone or by nothing (then the object must
            # start like a call); a ; not followed by an object ends the calls (a trailing ;
            # is dropped)
            "calls": seq(
                ref("call"),
                many(
                    choice(
                        seq(ws(), lit(";"), ws(), ahead(lit("{")), ref("call")),
                        seq(chars(" \t\r\n", min1=True), ahead(_call_head), ref("call")),
                        seq(ahead(_call_head), ref("adjacent_call")),
                    )
                ),
                opt(seq(ws(), lit(";"))),
                ws(),
            ),
            "call": recover(tag("tool_call", json_call()), _resync),
            # a call right after the last one's "}" (Llama 4's JSON template joins them so):
            # its resync takes at least its "{", so the repetition always moves on
            "adjacent_call": recover(
                tag("tool_call", json_call()), until(PYTHON_TAG, EOM, EOT, min1=True)
            ),
            "end_token": seq(choice(lit(EOM), lit(EOT)), ws()),
            "content": tag("content", until(PYTHON_TAG, EOM, EOT, min1=True, commit=True)),
        },
        entries={"start": "start"},
    ),
    examples=(
        '{"name": "get_weather", "parameters": {"city": "Paris"}}',
        '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}}<|eom_id|>',
        '<|python_tag|>brave_search.call(query="weather in Paris")<|eom_id|>',
        "<|python_tag|>import math\nprint(math.sqrt(2))<|eom_id|>",
    ),
)
