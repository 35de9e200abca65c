"""The dispatch guard: the layer between parsing (and validation) and executing tools.

The guard never runs a tool and never validates: it takes what the parser made of one
response and what the validator said of its calls, and decides for each call whether it
may be executed::

    validator = ToolValidator(tools, format="hermes")
    guard = Guard(GuardPolicy.from_tools(tools, read_only={"search", "get_weather"}))

    message = toolparse.parse(output, "hermes", tools=tools)       # one response
    review = guard.review(message, validator.validate(message))
    for decision in review.decisions:
        if decision.allowed:
            run(decision.call)
        else:
            reply_to_model(decision.call, decision.feedback)

A ``Guard`` holds the state of one conversation; feed it every response in order.

The rules, in the order they are applied to each call:

1. A call that validation did not see is refused ("not_validated"); so is a call to an
   unknown tool ("unknown_tool") or one with invalid arguments ("invalid_arguments").
2. A tool outside the allowlist is refused ("not_allowed").
3. Read-only tools are allowed from here on.  Every other tool is side-effecting (a tool
   not declared read-only is taken to have side effects).
4. A side-effecting call that the parser salvaged (``ToolCall.repaired``) is refused
   ("repaired"), and so is one that came after a parse error in the same response
   ("after_parse_error"): output that went wrong once is not trusted to act.
5. The circuit breaker: a *failed turn* is a response with a parse error or a call that
   failed validation; a *clean turn* is one with neither (a response without calls can
   be clean).  After ``breaker_threshold`` failed turns in a row (the current one
   included) the breaker is open and side-effecting calls are refused ("breaker_open")
   until a clean turn closes it; the clean turn's own calls are then judged with the
   breaker closed.  Refusals by the guard itself do not count as failures.

Which calls came after a parse error: given the response's events (in stream order),
exactly those after the first ``ParseError``.  Given a ``Message``, whose calls and
errors are kept apart, an error that names a call index precedes the calls with higher
indexes, and an error that names none (it happened outside any announced call) cannot
be placed, so it is taken to precede every call of the response.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..events import Event, ToolCallEnd
from ..message import Message, ParseError, ToolCall
from ..tools import read_tools
from .validate import CallValidation, ValidationReport

RefusalReason = Literal[
    "not_validated",
    "unknown_tool",
    "invalid_arguments",
    "not_allowed",
    "repaired",
    "after_parse_error",
    "breaker_open",
]


@dataclass(frozen=True)
class GuardPolicy:
    """What the guard lets through.

    allowed: the tool names that may be called at all (the allowlist).
    read_only: the allowed tools that change nothing; every other tool is treated as
    side-effecting.
    breaker_threshold: how many failed turns in a row open the circuit breaker (>= 1).
    """

    allowed: frozenset[str]
    read_only: frozenset[str] = field(default_factory=frozenset)
    breaker_threshold: int = 2

    def __post_init__(self) -> None:
        for name in ("allowed", "read_only"):
            value = getattr(self, name)
            if isinstance(value, str):
                raise TypeError(f"{name} must be a collection of tool names, not a string")
            object.__setattr__(self, name, frozenset(value))
        if not isinstance(self.breaker_threshold, int) or self.breaker_threshold < 1:
            raise ValueError("breaker_threshold must be an integer >= 1")

    @classmethod
    def from_tools(
        cls,
        tools: Sequence[Mapping[str, Any]],
        *,
        read_only: Iterable[str] = (),
        breaker_threshold: int = 2,
    ) -> GuardPolicy:
        """Every function tool of an OpenAI tools list allowed; `read_only` names the
        ones without side effects (each must be in the list)."""
        names = frozenset(spec.name for spec in read_tools(tools))
        read = frozenset(read_only)
        unknown = sorted(read - names)
        if unknown:
            raise ValueError(f"read_only names tools that are not in the list: {unknown}")
        return cls(names, read, breaker_threshold)

    def is_read_only(self, name: str) -> bool:
        return name in self.read_only


@dataclass(frozen=True)
class Decision:
    """The guard's verdict on one call.

    allowed: whether the call may be executed.  reason: why it was refused (None when
    allowed).  feedback: a message for the model saying what to do instead ("" when
    allowed).  read_only: whether the policy counts the tool as read-only.
    """

    call: ToolCall
    allowed: bool
    reason: RefusalReason | None = None
    feedback: str = ""
    read_only: bool = False


@dataclass(frozen=True)
class TurnReview:
    """The guard's verdicts on one response.

    decisions: one per call, in the order of the calls.  parse_errors: the response's
    parse errors.  clean: no parse error and no validation failure.  failures: failed
    turns in a row, this one included (0 after a clean turn).  breaker_open: whether the
    breaker was open for this response's calls.
    """

    decisions: tuple[Decision, ...]
    parse_errors: tuple[ParseError, ...]
    clean: bool
    failures: int
    breaker_open: bool

    @property
    def allowed(self) -> tuple[ToolCall, ...]:
        """The calls that may be executed."""
        return tuple(d.call for d in self.decisions if d.allowed)

    @property
    def refused(self) -> tuple[Decision, ...]:
        return tuple(d for d in self.decisions if not d.allowed)

    @property
    def feedback(self) -> str:
        """The feedback of every refused call, one paragraph each."""
        return "\n\n".join(d.feedback for d in self.decisions if not d.allowed)


class Guard:
    """The dispatch guard of one conversation: feed it each response in turn."""

    def __init__(self, policy: GuardPolicy) -> None:
        self.policy = policy
        self._failures = 0

    @property
    def failures(self) -> int:
        """Failed turns in a row so far."""
        return self._failures

    @property
    def breaker_open(self) -> bool:
        return self._failures >= self.policy.breaker_threshold

    def reset(self) -> None:
        """Forgets the conversation (a new one starts)."""
        self._failures = 0

    def review(
        self, response: Message | Sequence[Event], validation: ValidationReport
    ) -> TurnReview:
        """Decides on every call of one response.

        response: the response's Message, or its events in stream order (which place
        each call exactly relative to the parse errors).  validation: what the validator
        said of the response's calls.
        """
        calls, errors, after_error = _calls_and_errors(response)
        clean = not errors and validation.ok
        self._failures = 0 if clean else self._failures + 1
        breaker_open = self.breaker_open
        decisions = tuple(
            self._decide(call, validation.for_call(call), call_after, breaker_open)
            for call, call_after in zip(calls, after_error, strict=True)
        )
        return TurnReview(decisions, tuple(errors), clean, self._failures, breaker_open)

    def _decide(
        self,
        call: ToolCall,
        result: CallValidation | None,
        after_error: bool,
        breaker_open: bool,
    ) -> Decision:
        policy = self.policy
        read_only = policy.is_read_only(call.name)

        def refuse(reason: RefusalReason, feedback: str) -> Decision:
            return Decision(call, False, reason, feedback, read_only)

        if result is None:
            return refuse(
                "not_validated",
                f"The call to {call.name} was not run: its arguments could not be checked.",
            )
        if result.status == "unknown_tool":
            return refuse("unknown_tool", result.feedback)
        if result.status == "invalid_arguments":
            return refuse("invalid_arguments", result.feedback)
        if call.name not in policy.allowed:
            return refuse("not_allowed", _not_allowed(call.name, policy))
        if read_only:
            return Decision(call, True, read_only=True)
        example = f"\nA valid call: {result.example}" if result.example else ""
        if call.repaired:
            return refuse(
                "repaired",
                f"The call to {call.name} was not run: it was recovered from malformed "
                "output, and a recovered call may only use read-only tools. Write the call "
                f"again in the correct format.{example}",
            )
        if after_error:
            return refuse(
                "after_parse_error",
                f"The call to {call.name} was not run: it came after malformed output in "
                "the same response, and such calls may only use read-only tools. Send it "
                f"again in a response without format errors.{example}",
            )
        if breaker_open:
            count = policy.breaker_threshold
            return refuse(
                "breaker_open",
                f"The call to {call.name} was not run: after {count} responses in a row "
                "with malformed or invalid tool calls, tools that change anything are "
                "paused (read-only tools still work). A response whose tool calls are all "
                f"well-formed and valid lifts the pause; send the call again then.{example}",
            )
        return Decision(call, True)


def _not_allowed(name: str, policy: GuardPolicy) -> str:
    allowed = sorted(policy.allowed)
    listed = ", ".join(allowed[:20]) + (", ..." if len(allowed) > 20 else "")
    tools = f" The tools you may call are: {listed}." if allowed else ""
    return f"The call to {name} was not run: that tool may not be called here.{tools}"


def _calls_and_errors(
    response: Message | Sequence[Event],
) -> tuple[list[ToolCall], list[ParseError], list[bool]]:
    """The calls, the parse errors, and for each call whether a parse error preceded it."""
    if isinstance(response, Message):
        errors = list(response.errors)
        unplaced = any(e.index is None for e in errors)
        first_index = min((e.index for e in errors if e.index is not None), default=None)
        calls = list(response.tool_calls)
        after = [
            unplaced or (first_index is not None and call.index >= first_index) for call in calls
        ]
        return calls, errors, after
    calls, errors, after = [], [], []
    for event in response:
        if isinstance(event, ParseError):
            errors.append(event)
        elif isinstance(event, ToolCallEnd):
            calls.append(event.call)
            after.append(bool(errors))
    return calls, errors, after


__all__ = ["Decision", "Guard", "GuardPolicy", "RefusalReason", "TurnReview"]
