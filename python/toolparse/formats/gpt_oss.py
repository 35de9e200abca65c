"""gpt-oss (OpenAI harmony), rendered as text: channels for reasoning, content and calls.

Every harmony message is ``<|start|>assistant`` + header + ``<|message|>`` + text + an end
token. The chat template ends the prompt with ``<|start|>assistant``, so the output begins in
the middle of the first header, with ``<|channel|>`` (openai-harmony's format guide: "The
output will begin by specifying the channel"; vLLM's StreamableParser starts after the
role for the same reason) or with a recipient, `` to=functions.NAME<|channel|>...`` (the
role-header form, which llama.cpp's tests feed as the first generated text). Later messages
start with ``<|start|>assistant``. An output that starts with ``<|start|>assistant`` is
accepted too. A ``<|start|>`` followed by ``<|channel|>`` with no role is read as the
assistant's message on that channel: the output is the assistant's turn, so the role is
not in doubt (openai-harmony, which vLLM parses with, fails the message: "message header
did not contain a role"; llama.cpp's grammar needs ``<|start|>assistant``).

Example (gpt-oss-20b calling a tool)::

    <|channel|>analysis<|message|>Need to use function get_weather.<|end|>\
<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json\
<|message|>{"city": "Paris"}<|call|>

Facts relied on, and choices:

- ``analysis`` messages are reasoning; ``final`` messages are content; a ``commentary``
  message without a recipient is a preamble meant for the user, so it is content (vLLM and
  llama.cpp both show preambles). Several messages of one kind are joined without a
  separator (vLLM joins with a newline; the engine only emits text the model wrote).
- A recipient ``to=functions.NAME``, in the channel header
  (``<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>``) or in the role
  header (``<|start|>assistant to=functions.NAME<|channel|>commentary json<|message|>``),
  makes the message a call whose arguments are the JSON message text (harmony format
  guide; llama.cpp accepts both places and the ``analysis`` channel too). Whatever sits
  between the name and ``<|message|>`` (``<|constrain|>json``, `` json``, the channel) is
  the content type and is skipped. Other recipients are built-in tools (``browser.search``,
  ``python``): they keep their full name, so they are reported as unknown_tool unless the
  application declared a tool of that name, and their arguments must be JSON as well.
- ``<|end|>``, ``<|call|>`` and ``<|return|>`` end a message; ``<|call|>`` and
  ``<|return|>`` are stop tokens that servers often leave out of the text, so a message may
  also end at the next ``<|start|>`` or ``<|channel|>``, or at the end of the output. A
  call is complete once its JSON object closes; the call ends with its message (at its end
  token, the next ``<|start|>`` or ``<|channel|>``, or the end of the output), and any text
  between the object and that end is part of the call message and ignored: a call whose
  object has closed is not taken back by what follows, or a shorter output would deliver a
  call the whole output does not. Because the closing token is optional, the format
  declares no call markers.
- One call per output: ``<|call|>`` is a stop token, so generation ends with the first
  call (the chat template likewise assumes one call per assistant message). When a server
  does not stop there, the following call messages are parsed as further calls.
- gpt-oss-20b sometimes writes a stray ``<|channel|>commentary`` (or
  ``<|channel|>commentary to=assistant``) right before the real channel (llama.cpp handles
  this, issue #27720); it is skipped.
- Whitespace between messages is not content, and text outside any message is content
  (markers alone there are dropped).
- The "start_in_reasoning" entry is for output that continues an ``analysis`` message the
  prompt already opened (llama.cpp's continuation prefill
  ``<|start|>assistant<|channel|>analysis<|message|>``).
- Output decoded without special tokens (``analysis...assistantfinal...``, which SGLang
  guesses at) has no markers left and is not parsed as harmony.
"""

from __future__ import annotations

from ..grammar import Grammar
from ._base import Format
from ._harmony import MARKERS, harmony_rules

FORMAT = Format(
    name="gpt_oss",
    aliases=("openai", "gpt-oss"),
    description="gpt-oss harmony messages as text: analysis reasoning, final and preamble "
    "content, to=functions.NAME JSON calls",
    families=("gpt-oss",),
    model_ids=("openai/gpt-oss-*",),
    reasoning="optional",
    reasoning_openers=("<|channel|>analysis<|message|>",),
    call_in_reasoning="ends_reasoning",
    markers=MARKERS,
    call_markers=None,
    parallel_calls=False,
    grammar=Grammar(
        rules=harmony_rules(),
        entries={"start": "start", "start_in_reasoning": "start_in_reasoning"},
    ),
    examples=(
        "<|channel|>analysis<|message|>Need to use function get_weather.<|end|>"
        "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json"
        '<|message|>{"city": "Paris"}<|call|>',
        " to=functions.get_current_time<|channel|>commentary json<|message|>{}<|call|>",
    ),
)
