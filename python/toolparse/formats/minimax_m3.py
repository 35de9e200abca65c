"""MiniMax-M3: ``<mm:think>`` reasoning and a ``]<]minimax[>[<tool_call>`` block of invokes
whose arguments are tags named after them.

What the model writes (``]<]minimax[>[`` is a namespace token that precedes every tag; an
invoke is one line, wrapped here)::

    <mm:think>The user wants the weather in Paris and Rome.</mm:think>Checking both.
    ]<]minimax[>[<tool_call>
    ]<]minimax[>[<invoke name="get_weather">]<]minimax[>[<city>Paris]<]minimax[>[</city>
    ]<]minimax[>[</invoke>
    ]<]minimax[>[<invoke name="get_weather">]<]minimax[>[<city>Rome]<]minimax[>[</city>
    ]<]minimax[>[</invoke>
    ]<]minimax[>[</tool_call>

Facts this grammar relies on:

- ``]<]minimax[>[``, ``<tool_call>``, ``</tool_call>``, ``<mm:think>`` and ``</mm:think>``
  are tokens of the M3 tokenizer (llama.cpp common/parsers/minimax-m3.cpp keeps them;
  vLLM's reasoning parser matches the think markers by token id).  A block is
  ``]<]minimax[>[<tool_call>``, invokes, ``]<]minimax[>[</tool_call>``; an invoke is
  ``]<]minimax[>[<invoke name="NAME">``, its arguments, ``]<]minimax[>[</invoke>``; an
  argument is ``]<]minimax[>[<KEY>VALUE]<]minimax[>[</KEY>`` (llama.cpp; vLLM's and
  SGLang's minimax_m3 parsers).  vLLM's serializer writes a newline after the block's
  opening tag and after each invoke, and nothing between arguments; llama.cpp allows
  whitespace between all of them.  Several invokes share one block.
- A string value is raw text up to its closing tag; any other scalar is typed by the tool
  schema (llama.cpp reads a JSON value there; vLLM and SGLang convert by the schema), so
  needs_tools.  A parameter the schema does not list is read as its tags say (below).
  Values are kept verbatim, whitespace included (vLLM, llama.cpp).
- Reasoning: the output opens with ``<mm:think>`` (vLLM's minimax_m3 reasoning parser;
  llama.cpp), or, with thinking disabled, with a bare ``</mm:think>`` that is dropped;
  with thinking_mode="enabled" the template writes ``<mm:think>`` itself
  (reasoning_in_prompt=True; a repeated opener is dropped).  Reasoning ends only at
  ``</mm:think>``: a block inside it is reasoning text (both peers).
- Text before the block is content.  Each invoke is one call, delivered at its
  ``]<]minimax[>[</invoke>``.

Choices: whitespace around blocks, invokes and arguments, and after ``</mm:think>``, is
not content.  A later block and text after a block are read too (vLLM and llama.cpp stop
after the first block; SGLang reads several).  A broken invoke is reported and skipped up
to its ``]<]minimax[>[</invoke>``.  A stream that ends after a complete invoke, before
``]<]minimax[>[</tool_call>``, keeps its calls with no error.  SGLang also accepts
whitespace between the namespace token and the tag; this grammar does not.

Nested values.  M3 writes an object argument as child tags named after its keys and an
array as ``]<]minimax[>[<item>`` elements, recursively, with nothing between the tags and
an empty list or dict as no tags at all (the template's to_xml macro; SGLang's serializer
in its M3 text parser), e.g. ``]<]minimax[>[<items>]<]minimax[>[<item>]<]minimax[>[<sku>
A1]<]minimax[>[</sku>]<]minimax[>[</item>]<]minimax[>[</items>``.  The grammar accepts
text and nested elements inside a value, and decode="minimax_m3" turns the value into
JSON at its end, the way llama.cpp's parser reads it (common/parsers/minimax-m3.cpp,
which builds the value rules from the schema):

- a place whose schema allows a string is a leaf: its raw text up to its closing tag,
  nested-looking tags included; every other leaf is typed by the schema at its place as
  a flat value is (a number, integer, boolean...); a leaf that fits none of its types
  makes the call's arguments invalid.
- an object place reads child tags named after its keys, an array place ``<item>``
  children; whitespace between them is allowed (llama.cpp), other text is not.  With no
  children it is ``{}`` or ``[]``.  Text without tags at such a place is typed as a flat
  value (so JSON text for an object or array argument is still read).
- where the schema does not say (a key it does not list, an object without properties,
  or a schema allowing both or neither of object and array), the tags do: only
  ``<item>`` children make an array, other children an object, a leaf is a string.
- a closing tag that does not match its opening tag, an array child that is not
  ``<item>``, or text beside child tags makes the call's arguments invalid (the invoke
  is reported and no call is delivered); a stream that ends inside a nested value is
  incomplete.  Nesting deeper than 32 levels is invalid too.

The peers differ: llama.cpp accepts only what the schema allows (an unknown key or a
mismatched tag fails the parse); vLLM's parser (its Rust tool-parser crate) builds the tag
tree first, whatever the schema, keeps text beside child tags under a "$text" key, then
converts by the schema; SGLang treats any nested tag as structure even where the schema
says string, makes an array only when the schema says array and the first child is
``<item>``, and appends stray text.  This format follows llama.cpp where the schema speaks
and the tags where it does not.  A nested value is delivered whole when its parameter
ends, as vLLM's and SGLang's parsers deliver theirs.

Closing tags are named after their opening tag.  The grammar has no back-reference, so it
checks that a parameter's value is closed by ``]<]minimax[>[</`` + a name + ``>`` but not
that the name matches the key; inside a value, decode="minimax_m3" checks every nested
closing tag against its opening tag.
"""

from __future__ import annotations

from ..grammar import (
    Grammar,
    choice,
    cut,
    eof,
    lit,
    many,
    not_ahead,
    opt,
    ref,
    seq,
    tag,
    until,
    ws,
)
from ._base import Format, reasoning_rules
from .minimax_m2 import invoke_rules

NS = "]<]minimax[>["
# how deep a nested value is typed by its schema and read as tags (TP_M3_MAX_DEPTH)
VALUE_MAX_DEPTH = 32
BLOCK_OPEN, BLOCK_CLOSE = NS + "<tool_call>", NS + "</tool_call>"
INVOKE_OPEN, INVOKE_CLOSE = NS + '<invoke name="', NS + "</invoke>"
TAG_OPEN, TAG_CLOSE = NS + "<", NS + "</"
THINK_OPEN, THINK_CLOSE = "<mm:think>", "</mm:think>"

# an opening tag (not a closing one): what starts an argument, or a nested value
_OPENING_TAG = seq(lit(TAG_OPEN), not_ahead(lit("/")))

FORMAT = Format(
    name="minimax_m3",
    aliases=("minimax-m3",),
    description="MiniMax-M3: <mm:think> reasoning, a ]<]minimax[>[<tool_call> block of invokes "
    "whose arguments are tags named after them, typed by the tool schemas",
    families=("MiniMax-M3",),
    model_ids=("MiniMaxAI/MiniMax-M3*",),
    reasoning="optional",
    reasoning_in_prompt=False,
    call_in_reasoning="text",
    needs_tools=True,
    markers=(BLOCK_OPEN, BLOCK_CLOSE, INVOKE_OPEN, INVOKE_CLOSE, THINK_OPEN, THINK_CLOSE),
    call_markers=(INVOKE_OPEN, INVOKE_CLOSE),
    grammar=Grammar(
        rules={
            **reasoning_rules(THINK_OPEN, THINK_CLOSE),
            # a bare </mm:think> at the start (thinking disabled) is dropped
            "start": seq(
                ws(),
                opt(choice(ref("think"), seq(lit(THINK_CLOSE), ws()))),
                ref("body"),
            ),
            "body": seq(many(choice(ref("block"), ref("content"))), eof()),
            **invoke_rules(BLOCK_OPEN, BLOCK_CLOSE, INVOKE_OPEN, INVOKE_CLOSE, "argument"),
            "argument": seq(
                _OPENING_TAG,
                cut(),
                tag("param_name", until(">", NS, need_stop=True)),
                lit(">"),
                tag("param_value", ref("value"), decode="minimax_m3"),
                lit(TAG_CLOSE),
                until(">", NS, need_stop=True),
                lit(">"),
                ws(),
            ),
            # a value: text and nested elements (an object's keys, an array's <item>s)
            "value": many(choice(ref("element"), until(NS, min1=True))),
            "element": seq(
                _OPENING_TAG,
                cut(),  # nothing else reads a namespace token and '<' here
                until(">", NS, need_stop=True),
                lit(">"),
                ref("value"),
                lit(TAG_CLOSE),
                until(">", NS, need_stop=True),
                lit(">"),
            ),
            "content": tag("content", until(BLOCK_OPEN, min1=True, commit=True)),
        },
        entries={"start": "start", "start_in_reasoning": "start_in_reasoning"},
    ),
    examples=(
        f"<mm:think>The user wants the weather in Paris.</mm:think>{BLOCK_OPEN}\n"
        f'{INVOKE_OPEN}get_weather">{TAG_OPEN}city>Paris{TAG_CLOSE}city>{INVOKE_CLOSE}\n'
        f"{BLOCK_CLOSE}",
    ),
)
