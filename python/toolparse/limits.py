"""Per-stream resource limits: what one response may cost a server.

Model output is untrusted input.  A stream bounds the nesting of JSON arguments, the bytes
of one call's arguments (and of a name or value held whole), the bytes of output it holds
while it cannot decide yet (an alternative still open, a marker's follow text not yet
seen), the calls in one message and, when asked, all the output.  Exceeding a limit ends
the parse: a `ParseError(kind="limit")` whose message starts with the limit's name, then
nothing more (the input after it is ignored), with what was complete before it standing
and the memory held for the undecided input and the open call given back; `finish()`
still gives the message.  The same limits hold on both engines and at every chunking.
"""

from __future__ import annotations

from dataclasses import dataclass

# A call's arguments become Python objects through json.loads, which recurses once per
# level: deeper than this, building the message (or printing or comparing it) could exceed
# Python's default recursion limit of 1000 frames.  (The C core's scanners go to 2**20.)
MAX_DEPTH_CEILING = 512
# Instructions in a row without the parse getting further into the input: a compiled
# grammar stays far below (no left recursion, no empty repetition); only a corrupt program
# loops, and then the parse ends with a "max_steps" limit error instead of hanging.
MAX_IDLE_STEPS = 1 << 20


@dataclass(frozen=True)
class Limits:
    """The limits of one stream; the defaults suit any real response."""

    max_depth: int = 128
    """JSON nesting of a call's arguments (objects and arrays), 1 to 512."""
    max_argument_bytes: int = 1 << 20
    """Bytes of one call's arguments JSON, and of a tool name, id, parameter name or
    typed value held whole until it ends."""
    max_pending_bytes: int = 2 << 20
    """Bytes of output held undecided: parsed by an alternative that is still open (a
    markerless call that may yet turn out to be text), or whitespace after a marker whose
    follow text has not come.  At least max_argument_bytes where calls have no marker."""
    max_tool_calls: int = 256
    """Tool calls in one message."""
    max_stream_bytes: int | None = None
    """All bytes of the output; None: no limit."""

    def __post_init__(self) -> None:
        for name in ("max_depth", "max_argument_bytes", "max_pending_bytes", "max_tool_calls"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be a positive integer, not {value!r}")
            if value >= 1 << 63:
                raise ValueError(f"{name} must be below 2**63")
        if self.max_depth > MAX_DEPTH_CEILING:
            raise ValueError(f"max_depth must be at most {MAX_DEPTH_CEILING}")
        stream = self.max_stream_bytes
        if stream is not None and (
            not isinstance(stream, int) or isinstance(stream, bool) or not 1 <= stream < 1 << 63
        ):
            raise ValueError(f"max_stream_bytes must be None or a positive integer, not {stream!r}")

    def message(self, limit: str) -> str:
        """The ParseError message for a limit met: its name first."""
        if limit == "max_depth":
            return f"max_depth: the arguments nest deeper than {self.max_depth} levels"
        if limit == "max_argument_bytes":
            return (
                f"max_argument_bytes: a call's arguments, or a name or value held whole, "
                f"exceed {self.max_argument_bytes} bytes"
            )
        if limit == "max_pending_bytes":
            return (
                f"max_pending_bytes: more than {self.max_pending_bytes} bytes of output "
                f"stayed undecided"
            )
        if limit == "max_tool_calls":
            return f"max_tool_calls: more than {self.max_tool_calls} tool calls in one message"
        if limit == "max_stream_bytes":
            return f"max_stream_bytes: the output exceeds {self.max_stream_bytes} bytes"
        if limit == "max_steps":
            return f"max_steps: the format's grammar made no progress in {MAX_IDLE_STEPS} steps"
        raise ValueError(f"unknown limit {limit!r}")


DEFAULT_LIMITS = Limits()

# The core's message ids for the limits, in its order (csrc/event.h, TP_MSG_LIMIT...).
LIMIT_NAMES = (
    "max_steps",
    "max_depth",
    "max_argument_bytes",
    "max_pending_bytes",
    "max_tool_calls",
    "max_stream_bytes",
)
