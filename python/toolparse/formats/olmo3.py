"""AllenAI OLMo 3: a ``<function_calls>`` block of Python-style calls, one per line.

What the model writes (the Instruct chat template puts the block right after the
assistant's text; the Think template opens ``<think>`` in the prompt)::

    I'll check both cities.<function_calls>get_weather(city="Paris", unit="celsius")
    get_weather(city="Rome")</function_calls>

Facts this grammar relies on:

- The block is ``<function_calls>``, the calls separated by a newline, and
  ``</function_calls>`` (the OLMo 3 chat templates write each call as
  ``name(key=value, ...)`` with ``value`` rendered by ``tojson``, joined by ``\\n``, with no
  newline after the opening tag or before the closing one; vLLM's olmo3 parser splits the
  block into lines, strips each, and reads them as a Python list of calls).
- Arguments are keyword arguments with Python literal values; JSON's ``true``, ``false``
  and ``null`` are accepted too (the template writes JSON values, and vLLM's olmo3 parser
  maps those names).  A positional argument or an expression is invalid arguments.
- A broken call does not take its well-formed siblings with it (vLLM's test
  test_bad_sibling_call_does_not_drop_good_calls): the error is reported, the rest of its
  line is dropped, and the next line is read as a call.
- Reasoning is ``<think>...</think>`` in plain text (vLLM's olmo3 reasoning parser, which
  also accepts output whose ``<think>`` the template already wrote: the Think template's
  generation prompt ends with ``<think>``).  The tags are ordinary text, not special
  tokens, so ``<function_calls>`` inside unfinished reasoning stays reasoning text.

Choices and what could not be pinned down:

- Calls are delivered once the text after their ``)`` is certain: a line break, the
  closing tag, or the end of an output the model stopped (not one cut short by length).
  Two calls on one line are an error (vLLM would fail to read the joined list); a line
  inside the block that is not a call is reported and dropped, like a broken call.
- vLLM's streaming path reads calls only when the output starts with ``<function_calls>``,
  its non-streaming path finds the block anywhere and drops the text around it, and also
  reads a bare list of call lines with no block.  This grammar follows the template: text
  before and after a block is content, and calls are read only inside a block.
- A block the output leaves unclosed keeps the calls it completed, with no error.
- reasoning_in_prompt defaults to False: the Instruct template does not open reasoning,
  and an Instruct output read as reasoning would lose its calls.  OLMo 3 Think models need
  reasoning_in_prompt=True: vLLM's olmo3 reasoning parsers (meant for them) start in
  reasoning and drop a leading ``<think>``, because some OLMo 3 templates write it in the
  prompt.  A ``</think>`` in content is content, as in vLLM's engine parser.
"""

from __future__ import annotations

from ..grammar import (
    Grammar,
    ahead,
    chars,
    choice,
    cut,
    eof,
    lit,
    many,
    not_ahead,
    opt,
    recover,
    ref,
    seq,
    stopped,
    tag,
    until,
    ws,
)
from ._base import Format, reasoning_rules, skip_past
from ._pythonic import function_name, python_call

BLOCK_OPEN, BLOCK_CLOSE = "<function_calls>", "</function_calls>"
THINK_OPEN, THINK_CLOSE = "<think>", "</think>"

# what decides that a line is a call: a name and "("
_CALL_START = seq(function_name(), ws(), lit("("))
# what must follow a call on its line: a line break, the end of the block, or the end
# of an output the model stopped
_CALL_END = seq(chars(" \t\r"), choice(ahead(lit("\n")), ahead(lit(BLOCK_CLOSE)), stopped()))

FORMAT = Format(
    name="olmo3",
    description="AllenAI OLMo 3: <function_calls> blocks of Python-style calls, one per line, "
    "with optional <think> reasoning",
    families=("OLMo 3",),
    model_ids=("allenai/Olmo-3-*", "allenai/OLMo-3-*", "allenai/Olmo-3.1-*"),
    reasoning="optional",
    reasoning_in_prompt=False,
    call_in_reasoning="text",
    markers=(BLOCK_OPEN, BLOCK_CLOSE, THINK_OPEN, THINK_CLOSE),
    call_markers=None,
    argument_notation="Python literals",
    grammar=Grammar(
        rules={
            **reasoning_rules(THINK_OPEN, THINK_CLOSE),
            "body": seq(many(choice(ref("block"), ref("content"))), eof()),
            "block": seq(
                lit(BLOCK_OPEN),
                cut(),
                recover(
                    seq(
                        ws(),
                        opt(ref("line")),
                        many(seq(chars(" \t\r"), lit("\n"), ws(), ref("line"))),
                        ws(),
                        choice(lit(BLOCK_CLOSE), eof()),
                    ),
                    skip_past(BLOCK_CLOSE),
                ),
                ws(),
            ),
            # one call and the blanks after it; a broken call drops the rest of its line
            "line": seq(
                not_ahead(choice(lit(BLOCK_CLOSE), eof())),
                recover(
                    seq(ahead(_CALL_START), tag("tool_call", seq(python_call(), _CALL_END))),
                    until("\n", BLOCK_CLOSE),
                ),
            ),
            "content": tag("content", until(BLOCK_OPEN, min1=True, commit=True)),
        },
        entries={"start": "start", "start_in_reasoning": "start_in_reasoning"},
    ),
    examples=(
        '<function_calls>get_weather(city="Paris", unit="celsius")\n'
        'get_weather(city="Rome")</function_calls>',
        "Let me search.<function_calls>search(query='OLMo 3 release', limit=3)</function_calls>",
    ),
)
