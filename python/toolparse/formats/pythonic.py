"""Pythonic calls (Llama 3.2 and Llama 4 prompted for it, ToolACE): a Python list of calls.

What the model writes::

    [get_weather(city="Paris", unit="celsius"), get_weather(city="Rome")]

Llama 4 may wrap the list in its code markers::

    <|python_start|>[get_weather(city="Oslo")]<|python_end|>

Facts this grammar relies on:

- A call is ``name(key=value, ...)``: keyword arguments only, values Python literals
  (strings in either quote with Python escapes, numbers, True/False/None, lists, tuples,
  dicts); the arguments are those values as JSON.  vLLM (pythonic, llama4_pythonic) and
  SGLang (pythonic) read the list with Python's own parser; a positional argument, a
  variable or an expression is not a literal, so the call has invalid arguments.
- vLLM treats the output as calls only when it starts with the list (after whitespace)
  or with ``<|python_start|>``; this grammar does the same, so prose that merely
  contains ``[f(x)]`` stays content.  A list starts where ``[``, a name and ``(``
  follow each other: ``[1] see below`` is content, decided at its second byte.
- Text after the list (or after ``<|python_end|>``) is content; so is text before a
  ``<|python_start|>`` block.  A call ends once the ``,`` or ``]`` after it has arrived,
  so a list cut short delivers only the calls before the last comma.
- A broken call (once ``name(`` has come) is reported and skipped up to the ``)`` that
  ends it, the one followed by ``,`` or ``]``, outside strings and nested parentheses; the
  calls before and after it in the list are delivered.  vLLM and SGLang read the whole
  list with Python's parser, so one broken call loses every call of the list; here the
  valid ones stand, since each is read whole and its meaning is not in doubt.  A broken
  call with no such ``)`` before ``<|python_start|>``, ``<|python_end|>`` or the end, and
  anything else that breaks the list, drops the rest of the list (up to ``<|python_end|>``
  in a block, up to the next ``<|python_start|>`` or the end otherwise).  Nothing of a
  broken call reaches content, and no call is guessed.
- JSON's ``true``, ``false`` and ``null`` are read as ``True``, ``False`` and ``None``:
  models writing Python calls use them, and vLLM's and SGLang's pythonic parsers and
  llama.cpp's accept them.
"""

from __future__ import annotations

from ..grammar import (
    Grammar,
    ahead,
    choice,
    cut,
    eof,
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
from ._base import Format, skip_past
from ._pythonic import call_list, call_list_start

PYTHON_START, PYTHON_END = "<|python_start|>", "<|python_end|>"

FORMAT = Format(
    name="pythonic",
    aliases=("llama4_pythonic", "llama4"),
    description="A Python list of calls [f(a=1), g(b='x')], optionally in "
    "<|python_start|>...<|python_end|> (Llama 4, Llama 3.2 prompted for it, ToolACE)",
    families=("Llama 4", "Llama 3.2 (pythonic prompt)", "ToolACE"),
    model_ids=("meta-llama/Llama-4-*", "Team-ACE/ToolACE-*"),
    markers=(PYTHON_START, PYTHON_END),
    call_markers=None,
    argument_notation="Python literals",
    grammar=Grammar(
        rules={
            "start": seq(
                ws(),
                opt(seq(ahead(call_list_start()), cut(), ref("leading_list"))),
                ref("body"),
            ),
            "leading_list": seq(
                recover(call_list(stops=(PYTHON_START,)), until(PYTHON_START)), ws()
            ),
            "body": seq(many(choice(ref("block"), ref("content"))), eof()),
            "block": seq(
                lit(PYTHON_START),
                cut(),
                recover(
                    seq(
                        ws(),
                        call_list(stops=(PYTHON_END, PYTHON_START)),
                        ws(),
                        opt(lit(PYTHON_END)),
                    ),
                    skip_past(PYTHON_END),
                ),
                ws(),
            ),
            "content": tag("content", until(PYTHON_START, min1=True, commit=True)),
        },
        entries={"start": "start"},
    ),
    examples=('[get_weather(city="Paris", unit="celsius"), get_weather(city="Rome")]',),
)
