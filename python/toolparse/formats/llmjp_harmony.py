"""LLM-jp-4.1: gpt-oss harmony messages, decoded with a space after each special token.

What the model writes (the prompt ends with ``<|start|>assistant``)::

    <|channel|> analysis<|message|> Need the weather for Paris.<|end|> <|start|> assistant\
<|channel|> commentary to=functions.get_weather <|constrain|> json<|message|> {"city": "Paris"}\
<|call|>

Facts relied on:

- The messages, channels, recipients and end tokens are harmony's, read exactly as
  gpt_oss reads them (see gpt_oss for every fact and choice: ``analysis`` is reasoning,
  ``final`` and a ``commentary`` preamble are content, ``to=functions.NAME`` in the channel
  or the role header makes the message a call with JSON arguments, a missing end token
  ends the message at the next one, one call per output unless the server goes on).
- LLM-jp-4.1's tokenizer decodes every special token with a space after it
  (``<|channel|> analysis``, ``<|message|> text``, ``<|end|> <|start|> assistant``).
  That space is an artifact of the decoding, not text the model meant: it is dropped
  after each special token, and is never part of a channel name, a content type, a
  reasoning or content text or the arguments.  It is optional, so an output decoded
  without it parses the same.  An output that continues a prompt ending in a special
  token (the "start_in_reasoning" entry, after ``<|channel|>analysis<|message|>``) may
  begin with it.

Choices: a space is dropped only right after a special token, never before one, so text
that ends in a space before ``<|end|>`` keeps it.  Everything else is gpt_oss's behaviour
(the grammar is the same, through formats/_harmony.py).
"""

from __future__ import annotations

from ..grammar import Grammar
from ._base import Format
from ._harmony import MARKERS, harmony_rules

FORMAT = Format(
    name="llmjp_harmony",
    aliases=("llm-jp-harmony",),
    description="LLM-jp-4.1 harmony messages with a space after each special token: analysis "
    "reasoning, final and preamble content, to=functions.NAME JSON calls",
    families=("LLM-jp-4.1",),
    model_ids=("llm-jp/llm-jp-4.1-*",),
    reasoning="optional",
    reasoning_openers=("<|channel|>analysis<|message|>",),
    call_in_reasoning="ends_reasoning",
    markers=MARKERS,
    call_markers=None,
    parallel_calls=False,
    grammar=Grammar(
        rules=harmony_rules(space=" "),
        entries={"start": "start", "start_in_reasoning": "start_in_reasoning"},
    ),
    examples=(
        "<|channel|> analysis<|message|> Need the weather for Paris.<|end|> <|start|> assistant"
        "<|channel|> commentary to=functions.get_weather <|constrain|> json<|message|> "
        '{"city": "Paris"}<|call|> ',
        " to=functions.get_current_time<|channel|> commentary json<|message|> {}<|call|> ",
    ),
)
