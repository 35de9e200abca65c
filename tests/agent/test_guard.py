"""The dispatch guard (toolparse.agent.guard): the allowlist, read-only against side-effecting
tools, repaired calls, calls after a parse error, and the circuit breaker."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import toolparse
from engines import FIXTURE_IDS, FIXTURES, Fixture, run_events
from toolparse import Message, ParseError, ToolCall, ToolCallEnd
from toolparse.agent.guard import Decision, Guard, GuardPolicy, TurnReview
from toolparse.agent.validate import CallValidation, ToolValidator, ValidationReport

pytest.importorskip("jsonschema_rs")


def function(name: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    parameters = {"type": "object", "properties": properties, "required": required}
    return {"type": "function", "function": {"name": name, "parameters": parameters}}


STRING = {"type": "string"}
TOOLS = [
    function("get_weather", {"city": STRING}, ["city"]),
    function("search", {"query": STRING}, ["query"]),
    function("write_file", {"path": STRING, "content": STRING}, ["path", "content"]),
    function("send_email", {"to": STRING, "body": STRING}, ["to", "body"]),
]
READ_ONLY = {"get_weather", "search"}


def hermes(*calls: str) -> str:
    return "".join(f"<tool_call>{c}</tool_call>" for c in calls)


def good(name: str, **arguments: Any) -> str:
    return json.dumps({"name": name, "arguments": arguments})


WEATHER = good("get_weather", city="Oslo")
WRITE = good("write_file", path="a.txt", content="hi")
BAD_WRITE = good("write_file", path="a.txt")  # content missing: fails validation
NAMELESS = '{"arguments": {}}'  # a parse error with no call index
BROKEN = '{"name": "write_file", "arguments": {"path": 3,,}}'  # a parse error at its index


@pytest.fixture
def validator() -> ToolValidator:
    return ToolValidator(TOOLS, format="hermes")


@pytest.fixture
def guard() -> Guard:
    return Guard(GuardPolicy.from_tools(TOOLS, read_only=READ_ONLY))


def turn(guard: Guard, validator: ToolValidator, text: str, events: bool = False) -> TurnReview:
    """Parses one hermes response, validates it, and has the guard review it."""
    stream = run_events(toolparse.StreamParser("hermes"), text.encode())
    message = stream[-1].message  # End's message: the same calls as the events
    validation = validator.validate(message)
    return guard.review(stream if events else message, validation)


def verdicts(review: TurnReview) -> list[tuple[str, bool, str | None]]:
    return [(d.call.name, d.allowed, d.reason) for d in review.decisions]


# ---------------------------------------------------------------------------------------
# Policy


def test_policy_from_tools() -> None:
    policy = GuardPolicy.from_tools(TOOLS, read_only=["search"], breaker_threshold=3)
    assert policy.allowed == {"get_weather", "search", "write_file", "send_email"}
    assert policy.read_only == {"search"} and policy.breaker_threshold == 3
    assert policy.is_read_only("search") and not policy.is_read_only("write_file")
    with pytest.raises(ValueError, match="not in the list"):
        GuardPolicy.from_tools(TOOLS, read_only=["delete_everything"])
    with pytest.raises(ValueError, match="breaker_threshold"):
        GuardPolicy({"search"}, breaker_threshold=0)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="not a string"):
        GuardPolicy("search")  # type: ignore[arg-type]
    assert GuardPolicy(["a", "b"], ["a"]).allowed == frozenset({"a", "b"})  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------
# One clean response


def test_clean_turn_allows_read_only_and_side_effecting_calls(
    guard: Guard, validator: ToolValidator
) -> None:
    review = turn(guard, validator, hermes(WEATHER, WRITE))
    assert verdicts(review) == [("get_weather", True, None), ("write_file", True, None)]
    assert review.clean and review.failures == 0 and not review.breaker_open
    assert [d.read_only for d in review.decisions] == [True, False]
    assert review.allowed == tuple(d.call for d in review.decisions)
    assert review.refused == () and review.feedback == ""


def test_allowlist(validator: ToolValidator) -> None:
    guard = Guard(GuardPolicy({"get_weather", "write_file"}, read_only={"get_weather"}))
    review = turn(guard, validator, hermes(WEATHER, good("send_email", to="x", body="y")))
    assert verdicts(review) == [("get_weather", True, None), ("send_email", False, "not_allowed")]
    feedback = review.decisions[1].feedback
    assert feedback.startswith("The call to send_email was not run: that tool may not be called")
    assert "get_weather, write_file" in feedback
    # A read-only tool outside the allowlist is refused as well.
    guard = Guard(GuardPolicy({"write_file"}, read_only={"get_weather"}))
    assert verdicts(turn(guard, validator, hermes(WEATHER))) == [
        ("get_weather", False, "not_allowed")
    ]


def test_validation_failures_are_refused_with_the_validators_feedback(
    guard: Guard, validator: ToolValidator
) -> None:
    review = turn(guard, validator, hermes(BAD_WRITE, good("get_wether", city="Oslo")))
    assert verdicts(review) == [
        ("write_file", False, "invalid_arguments"),
        ("get_wether", False, "unknown_tool"),
    ]
    message = toolparse.parse(hermes(BAD_WRITE, good("get_wether", city="Oslo")), "hermes")
    expected = validator.validate(message)
    assert [d.feedback for d in review.decisions] == [r.feedback for r in expected.results]
    assert review.feedback == expected.feedback
    assert not review.clean and review.failures == 1


def test_a_call_the_validation_did_not_see_is_refused(guard: Guard) -> None:
    message = toolparse.parse(hermes(WEATHER, WRITE), "hermes")
    review = guard.review(message, ValidationReport())
    assert verdicts(review) == [
        ("get_weather", False, "not_validated"),
        ("write_file", False, "not_validated"),
    ]
    # The guard matches verdicts to calls by content, not by position.
    other = toolparse.parse(hermes(WEATHER, good("write_file", path="b", content="")), "hermes")
    validation = ToolValidator(TOOLS).validate(other)
    assert verdicts(guard.review(message, validation))[1] == (
        "write_file",
        False,
        "not_validated",
    )


# ---------------------------------------------------------------------------------------
# Repaired calls and calls after a parse error


def test_repaired_calls_reach_read_only_tools_only(guard: Guard) -> None:
    # generic_xml with repair=True closes calls the end of the output cut off.
    validator = ToolValidator(TOOLS, format="generic_xml")
    for name, arguments, allowed in [
        ("search", '{"query": "weather', True),
        ("write_file", '{"path": "a.txt", "content": "hi', False),
    ]:
        text = f"<tool_call>\n<name>{name}</name>\n<args>{arguments}"
        message = toolparse.parse(text, "generic_xml", repair=True)
        assert [c.repaired for c in message.tool_calls] == [True] and not message.errors
        review = guard.review(message, validator.validate(message))
        assert verdicts(review) == [(name, allowed, None if allowed else "repaired")]
        assert review.clean  # repaired, yet neither a parse error nor a validation failure
    feedback = review.decisions[0].feedback
    assert "recovered from malformed output" in feedback
    example = "<tool_call><name>write_file</name><args>"
    assert feedback.splitlines()[-1].startswith(f"A valid call: {example}")


def test_calls_after_a_parse_error_reach_read_only_tools_only(
    guard: Guard, validator: ToolValidator
) -> None:
    # The broken call has index 0; the calls after it are 1 and 2.
    for events in (False, True):
        guard.reset()
        review = turn(guard, validator, hermes(BROKEN, WEATHER, WRITE), events=events)
        assert [e.kind for e in review.parse_errors] == ["invalid_arguments"]
        assert verdicts(review) == [
            ("get_weather", True, None),
            ("write_file", False, "after_parse_error"),
        ]
        assert "came after malformed output" in review.decisions[1].feedback
        assert not review.clean


def test_calls_before_a_parse_error_are_judged_as_usual(
    guard: Guard, validator: ToolValidator
) -> None:
    # The error names call index 1: the call before it is not affected.
    review = turn(guard, validator, hermes(WRITE, BROKEN))
    assert verdicts(review) == [("write_file", True, None)]
    assert review.parse_errors[0].index == 1


def test_an_error_outside_any_call_is_placed_exactly_only_by_the_events(
    guard: Guard, validator: ToolValidator
) -> None:
    # The nameless call's error has no index.  Before the call, it applies either way.
    before = hermes(NAMELESS, WRITE)
    assert toolparse.parse(before, "hermes").errors[0].index is None
    for events in (False, True):
        assert verdicts(turn(guard, validator, before, events=events)) == [
            ("write_file", False, "after_parse_error")
        ]
    # After the call: the events show it came later; a Message cannot tell, so the call
    # is taken to follow it.
    after = hermes(WRITE, NAMELESS)
    guard.reset()  # (two failed turns above opened the breaker)
    assert verdicts(turn(guard, validator, after, events=True)) == [("write_file", True, None)]
    guard.reset()
    assert verdicts(turn(guard, validator, after, events=False)) == [
        ("write_file", False, "after_parse_error")
    ]


# ---------------------------------------------------------------------------------------
# The circuit breaker


def test_breaker_opens_after_two_failed_turns_and_closes_after_a_clean_one(
    guard: Guard, validator: ToolValidator
) -> None:
    # Turn 1 fails (a validation failure); the breaker is still closed.
    first = turn(guard, validator, hermes(BAD_WRITE, WRITE))
    assert verdicts(first) == [
        ("write_file", False, "invalid_arguments"),
        ("write_file", True, None),
    ]
    assert (first.clean, first.failures, first.breaker_open) == (False, 1, False)
    # Turn 2 fails too (a parse error after the calls): it opens, for this turn already.
    second = turn(guard, validator, hermes(WEATHER, WRITE, BROKEN))
    assert verdicts(second) == [("get_weather", True, None), ("write_file", False, "breaker_open")]
    assert (second.clean, second.failures, second.breaker_open) == (False, 2, True)
    assert guard.breaker_open and guard.failures == 2
    feedback = second.decisions[1].feedback
    assert "after 2 responses in a row with malformed or invalid tool calls" in feedback
    assert "read-only tools still work" in feedback
    # Still failing: still open.
    third = turn(guard, validator, hermes(BAD_WRITE, WEATHER, WRITE))
    assert verdicts(third)[1:] == [
        ("get_weather", True, None),
        ("write_file", False, "breaker_open"),
    ]
    assert third.failures == 3
    # A clean turn closes it, and its own calls go through.
    fourth = turn(guard, validator, hermes(WEATHER, WRITE))
    assert verdicts(fourth) == [("get_weather", True, None), ("write_file", True, None)]
    assert (fourth.clean, fourth.failures, fourth.breaker_open) == (True, 0, False)
    assert not guard.breaker_open


def test_a_clean_turn_without_calls_closes_the_breaker(
    guard: Guard, validator: ToolValidator
) -> None:
    for _ in range(2):
        turn(guard, validator, hermes(NAMELESS))
    assert guard.breaker_open
    review = turn(guard, validator, "Sorry, let me try again.")
    assert review.clean and review.decisions == () and not guard.breaker_open


def test_breaker_counts_failed_turns_in_a_row_only(guard: Guard, validator: ToolValidator) -> None:
    turn(guard, validator, hermes(BAD_WRITE))
    turn(guard, validator, hermes(WEATHER))  # clean: the count starts over
    review = turn(guard, validator, hermes(BAD_WRITE, WRITE))
    assert review.failures == 1 and verdicts(review)[1] == ("write_file", True, None)


def test_guard_refusals_are_not_failures(validator: ToolValidator) -> None:
    guard = Guard(GuardPolicy({"get_weather"}, read_only={"get_weather"}))
    for _ in range(3):
        review = turn(guard, validator, hermes(WRITE))
        assert verdicts(review) == [("write_file", False, "not_allowed")] and review.clean
    assert guard.failures == 0


def test_breaker_threshold_and_reset(validator: ToolValidator) -> None:
    guard = Guard(GuardPolicy.from_tools(TOOLS, read_only=READ_ONLY, breaker_threshold=1))
    review = turn(guard, validator, hermes(BAD_WRITE, WRITE))
    assert verdicts(review)[1] == ("write_file", False, "breaker_open")
    guard.reset()
    assert guard.failures == 0 and not guard.breaker_open
    assert verdicts(turn(guard, validator, hermes(WRITE))) == [("write_file", True, None)]


def test_decisions_on_hand_made_results(guard: Guard) -> None:
    # The guard trusts the validation it is given; it never validates on its own.
    write = ToolCall(0, "c0", "write_file", {"nonsense": 1}, '{"nonsense": 1}')
    validation = ValidationReport((CallValidation(write, "valid"),))
    review = guard.review(Message(tool_calls=[write]), validation)
    assert review.decisions == (Decision(write, True, None, "", False),)
    error = ParseError("unexpected", "junk", None, 0)
    review = guard.review([error, ToolCallEnd(0, write)], validation)
    assert verdicts(review) == [("write_file", False, "after_parse_error")]


@given(
    threshold=st.integers(1, 4),
    turns=st.lists(st.sampled_from(["clean", "parse_error", "invalid"]), max_size=12),
)
def test_breaker_follows_failed_turns_in_a_row(threshold: int, turns: list[str]) -> None:
    read = ToolCall(0, "c0", "search", {"query": "q"}, '{"query": "q"}')
    write = ToolCall(1, "c1", "write_file", {"path": "a"}, '{"path": "a"}')
    guard = Guard(GuardPolicy({"search", "write_file"}, {"search"}, threshold))
    in_a_row = 0
    for kind in turns:
        invalid = CallValidation(read, "invalid_arguments", feedback="fix it")
        results = (invalid if kind == "invalid" else CallValidation(read, "valid"),)
        results += (CallValidation(write, "valid"),)
        # The parse error is placed after both calls: only the breaker can refuse them.
        error = [ParseError("unexpected", "junk", 2, 0)] if kind == "parse_error" else []
        message = Message(tool_calls=[read, write], errors=error)
        review = guard.review(message, ValidationReport(results))
        in_a_row = 0 if kind == "clean" else in_a_row + 1
        assert review.failures == guard.failures == in_a_row
        assert review.breaker_open == guard.breaker_open == (in_a_row >= threshold)
        assert review.decisions[0].allowed == (kind != "invalid")
        assert review.decisions[1].allowed == (in_a_row < threshold)


# ---------------------------------------------------------------------------------------
# The fixtures of every format


@pytest.mark.parametrize("fixture", FIXTURES, ids=FIXTURE_IDS)
def test_fixture_responses(fixture: Fixture) -> None:
    """Every tool is side-effecting here: nothing salvaged, nothing after a parse error,
    and nothing that failed validation may be allowed; a clean turn refuses nothing."""
    events = fixture.events("native")
    message = events[-1].message
    validation = ToolValidator(fixture.tools, format=fixture.format).validate(message)
    policy = GuardPolicy.from_tools(fixture.tools, breaker_threshold=100)
    for response in (events, message):
        review = Guard(policy).review(response, validation)
        assert [d.call for d in review.decisions] == message.tool_calls
        assert review.clean == (not message.errors and validation.ok)
        seen_error = False
        for event in events:
            if isinstance(event, ParseError):
                seen_error = True
            if isinstance(event, ToolCallEnd):
                decision = next(d for d in review.decisions if d.call == event.call)
                result = validation.for_call(event.call)
                assert result is not None
                if decision.allowed:
                    assert result.ok and not event.call.repaired and not seen_error
                else:
                    assert decision.feedback
                if review.clean:
                    expected = event.call.name in policy.allowed and not event.call.repaired
                    assert decision.allowed == expected
