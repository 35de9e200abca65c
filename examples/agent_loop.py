"""An agent loop: stream the model's tokens in, show text as it arrives, validate and
guard every call, run what is allowed, and feed refusals and parse errors back.

Runs anywhere (the model replays recorded Qwen3 outputs):  python examples/agent_loop.py
With a real server, `model()` is your token stream (e.g. the openai SDK, stream=True).
"""

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import toolparse
from toolparse.agent import Guard, GuardPolicy, ToolValidator
from toolparse.wire.openai import message_to_openai

TOOLS = json.loads((Path(__file__).parent / "tools.json").read_text())
RECORDED_TURNS = [  # the first call has a wrong type; told so, the model corrects it
    "<think>\nOslo, three days.\n</think>\n\nLet me check.\n<tool_call>\n"
    '{"name": "get_weather", "arguments": {"city": "Oslo", "days": "three"}}\n</tool_call>',
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo", "days": 3}}\n</tool_call>',
    "Oslo stays dry for the next three days, 4 to 9 °C.",
]


def model(messages: list[dict[str, Any]]) -> Iterator[str]:
    """A stand-in for a streaming model: the next recorded turn, 3 characters a token."""
    text = RECORDED_TURNS[sum(m["role"] == "assistant" for m in messages)]
    yield from (text[k : k + 3] for k in range(0, len(text), 3))


def get_weather(city: str, days: int = 1, units: str = "metric") -> dict[str, Any]:
    return {"city": city, "days": days, "units": units, "low": 4, "high": 9}


def run_agent(question: str) -> list[dict[str, Any]]:
    parser = toolparse.StreamParser("qwen3", tools=TOOLS)
    validator = ToolValidator(TOOLS, format="qwen3")
    guard = Guard(GuardPolicy.from_tools(TOOLS, read_only={"get_weather"}))
    messages: list[dict[str, Any]] = [{"role": "user", "content": question}]
    while True:
        parser.reset()
        for token in model(messages):
            for event in parser.feed(token):
                if isinstance(event, toolparse.ContentDelta):
                    print(event.text, end="", flush=True)  # visible text, as it arrives
        parser.finish("stop")
        message = parser.message
        messages.append(message_to_openai(message))
        if not message.tool_calls and not message.errors:
            print()
            return messages
        review = guard.review(message, validator.validate(message))  # validate, then decide
        for decision in review.decisions:
            call = decision.call
            if decision.allowed:
                print(f"\n[ran {call.name}({call.arguments_json})]")
                content = json.dumps(get_weather(**call.arguments))
            else:
                print(f"\n[refused {call.name}: {decision.reason}]")
                content = decision.feedback  # says what was wrong and how a call looks
            messages.append({"role": "tool", "tool_call_id": call.id, "content": content})
        for error in message.errors:  # output that was not a complete, valid call
            messages.append(
                {
                    "role": "user",
                    "content": f"Your output was not a valid call "
                    f"({error.kind}: {error.message}); write the call again.",
                }
            )


if __name__ == "__main__":
    run_agent("What's the weather in Oslo for the next 3 days?")
