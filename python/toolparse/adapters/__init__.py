"""Serving adapters: toolparse inside vLLM and SGLang (docs/adapters.md).

- ``toolparse.adapters.vllm``: a vLLM ToolParser and ReasoningParser for every format,
  registered as ``toolparse_<format>`` (``--tool-call-parser toolparse_hermes``).
- ``toolparse.adapters.sglang``: an SGLang function-call detector and reasoning detector
  for every format, registered under the same names.

Each imports its framework; this package and ``toolparse.adapters._translate`` (the
translation both share: events to deltas, per-response state, call numbering) import
neither.
"""

from ._translate import (
    PREFIX,
    CallDelta,
    Delta,
    ReasoningSplitter,
    ResponseTranslator,
    adapter_names,
    split_reasoning,
)

__all__ = [
    "PREFIX",
    "CallDelta",
    "Delta",
    "ReasoningSplitter",
    "ResponseTranslator",
    "adapter_names",
    "split_reasoning",
]
