"""Meta Code World Model (CWM): ``<tool: NAME>`` blocks whose body is the tool's raw input.

What the model writes (reasoning mode on: the prompt ends with ``<think>`` and a
newline)::

    The failing test imports a helper; find where it is defined.
    </think>
    Searching the package.
    <tool: bash>
    grep -rn "def load_config" src/
    </tool>

Facts relied on:

- Meta's CWM prompting guide: a call is ``<tool: $TOOL>``, a newline, the content, a
  newline and ``</tool>``; the tools (``bash``, ``create``, ``python``, ...) take free text
  (a bash tool takes command lines, a create tool a path and the file's text), announced
  in the system prompt in that same shape.  Reasoning mode is turned on by the system
  prompt and the prompt then ends with ``<think>`` and a newline; ``</think>`` closes the
  reasoning and what follows is the answer.  The reply ends with ``<|eot_id|>``.
- vLLM's cwm parser (the only peer) reads ``<tool: LABEL>`` case-insensitively, treats
  the label as informational and takes the first word of the body as the tool's name;
  the rest of the body is the arguments when it parses as JSON, else ``{"command":
  <the rest>}``.

Choices:

- The label is the tool's name, as Meta's guide writes every call and every tool
  announcement: vLLM's reading would turn ``<tool: bash>`` + ``ls -la`` into a call of a
  tool named ``ls``.  Its tests write ``<tool: function>`` with the name in the body; here
  that is a call of a tool named ``function``, unknown_tool unless one is given.  The
  label is ASCII letters, digits, ``_``, ``.`` and ``-``, with whitespace allowed around
  it; anything else before ``>`` (a second word, say) makes the call an error, skipped up
  to its ``</tool>``.  The opener is ``<tool:`` exactly as the guide writes it (no other case).
- The body is one newline after ``>``, the content, and an optional newline before
  ``</tool>``; the content ends at the first ``</tool>``.  A body that is exactly one JSON
  object (whitespace around it allowed) is the arguments, as in vLLM; it is read whole
  before it is committed (a body such as a bash ``{ ...; }`` group is not JSON and stays
  text).  Any other body is the call's single argument ``{"command": <content>}``, the key
  vLLM uses, streamed as a string and kept verbatim (vLLM strips it); a JSON array body
  is text too (vLLM hands the array over as the arguments, which are not an object).
- A call ends at its ``</tool>``; one the output cuts off is incomplete (vLLM drops it).
  Text after a call is content (vLLM keeps only the text before the first call); the
  whitespace right after ``</tool>`` is dropped.
- Reasoning: an optional ``<think>`` block at the start, or the template's
  (reasoning_in_prompt); a ``<tool:`` inside unfinished reasoning is reasoning text, as
  the guide puts the calls in the external response.  vLLM's tool parser leaves the
  ``<think>`` block in content (its reasoning parser is a separate step).
- No marker reaches content: a ``</tool>``, ``<think>`` or ``</think>`` outside its place
  is reported (unexpected) and dropped, the text around it kept; ``<|eot_id|>`` is dropped.
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
    lit,
    many,
    opt,
    recover,
    ref,
    seq,
    stop,
    tag,
    until,
    ws,
)
from ._base import Format, reasoning_rules, skip_past

TOOL_OPEN, TOOL_CLOSE = "<tool:", "</tool>"
THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
EOT = "<|eot_id|>"
TEXT_KEY = "command"

FORMAT = Format(
    name="cwm",
    description="Meta Code World Model: <tool: NAME> blocks of raw tool input (a JSON object "
    'body is the arguments, any other is {"command": ...}); optional <think> reasoning',
    families=("Code World Model",),
    model_ids=("facebook/cwm", "facebook/cwm-*"),
    reasoning="optional",
    argument_notation="raw text, or a JSON object",
    markers=(TOOL_OPEN, TOOL_CLOSE, THINK_OPEN, THINK_CLOSE, EOT),
    call_markers=(TOOL_OPEN, TOOL_CLOSE),
    grammar=Grammar(
        rules={
            **reasoning_rules(THINK_OPEN, THINK_CLOSE),
            "body": seq(
                many(choice(ref("call"), ref("end_token"), ref("stray"), ref("content"))), eof()
            ),
            "call": seq(
                lit(TOOL_OPEN),
                cut(),
                recover(
                    tag(
                        "tool_call",
                        seq(
                            ws(),
                            tag("tool_name", chars("A-Za-z0-9_.-", min1=True)),
                            ws(),
                            lit(">"),
                            opt(lit("\n")),
                            choice(ref("json_body"), ref("text_body")),
                        ),
                    ),
                    skip_past(TOOL_CLOSE),
                ),
                ws(),
            ),
            # a body that is one JSON object, checked whole before it is taken
            "json_body": seq(
                ahead(seq(ws(), json(kind="object"), ws(), lit(TOOL_CLOSE))),
                cut(),
                ws(),
                tag("tool_args", json(kind="object")),
                ws(),
                lit(TOOL_CLOSE),
            ),
            "text_body": seq(
                tag("param_name", const(TEXT_KEY)),
                tag(
                    "param_value",
                    until(stop("\n" + TOOL_CLOSE), stop(TOOL_CLOSE), need_stop=True),
                    decode="string",
                ),
                choice(lit("\n" + TOOL_CLOSE), lit(TOOL_CLOSE)),
            ),
            "end_token": seq(lit(EOT), ws()),
            "stray": seq(
                choice(lit(TOOL_CLOSE), lit(THINK_OPEN), lit(THINK_CLOSE)),
                cut(),
                recover(choice(), seq()),
            ),
            "content": tag(
                "content",
                until(TOOL_OPEN, TOOL_CLOSE, THINK_OPEN, THINK_CLOSE, EOT, min1=True, commit=True),
            ),
        },
        entries={"start": "start", "start_in_reasoning": "start_in_reasoning"},
    ),
    examples=(
        "Checking.\n<tool: bash>\nls -la src/\n</tool>",
        '<tool: edit_file>\n{"path": "README.md", "old": "colour", "new": "color"}\n</tool>',
    ),
)
