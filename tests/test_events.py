"""The event types' pure-Python twins (toolparse._events_py, what the reference engine runs
on where the compiled core is not built) behave as the native types do: fields, ``type``,
repr, equality, hashing, pattern matching, immutability, pickling and argument checks; and
the reference engine without the core gives, on every fixture, the events it gives with it.
"""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
import textwrap
from typing import Any

import pytest

from engines import FIXTURES
from test_layers import HIDE_THE_CORE
from toolparse import _events_py, events
from toolparse.message import Message, ToolCall

CALL = ToolCall(0, "call_1", "f", {"x": 1}, '{"x": 1}')
MESSAGE = Message(content="hi", tool_calls=[CALL])
SAMPLES: dict[str, tuple[Any, ...]] = {
    "ReasoningDelta": ("think",),
    "ContentDelta": ("hello",),
    "ToolCallStart": (0, "call_1", "f"),
    "ToolCallArgsDelta": (2, '{"x"'),
    "ToolCallEnd": (0, CALL),
    "End": ("stop", MESSAGE),
}


def both(name: str) -> tuple[Any, Any]:
    return getattr(events, name), getattr(_events_py, name)


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_a_twin_is_its_native_type_in_python(name: str) -> None:
    native, twin = both(name)
    assert native is not twin, "the native types are the ones in use where the core is built"
    args = SAMPLES[name]
    a, b = native(*args), twin(*args)
    assert repr(a) == repr(b)
    assert a.type == b.type == native.type == twin.type
    assert native.__match_args__ == twin.__match_args__
    for field in native.__match_args__:
        assert getattr(a, field) == getattr(b, field)
    assert hash(a) == hash(native(*args)) and hash(b) == hash(twin(*args))
    assert b == twin(*args) and a == native(*args)
    assert (a == b) is False, "a native event and a twin are different types"
    assert pickle.loads(pickle.dumps(b)) == b
    with pytest.raises(AttributeError):
        b.__setattr__(native.__match_args__[0], args[0])
    with pytest.raises(AttributeError):
        b.__delattr__(native.__match_args__[0])
    for value, kind in ((a, native), (b, twin)):
        match value:
            case kind(first):  # the first of __match_args__, by position
                assert first == args[0]
            case _:
                pytest.fail("no match")


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_a_twin_refuses_what_its_native_type_refuses(name: str) -> None:
    native, twin = both(name)
    args = SAMPLES[name]
    for position in range(len(args)):
        wrong = list(args)
        wrong[position] = None
        with pytest.raises(TypeError):
            native(*wrong)
        with pytest.raises(TypeError):
            twin(*wrong)
    with pytest.raises(TypeError):
        twin(*args, "extra")


SOME = [f for f in FIXTURES if f.format in ("hermes", "qwen3", "qwen3_coder", "gpt_oss")][:40]


def test_the_reference_engine_without_the_core_gives_the_same_events() -> None:
    cases = [
        {
            "format": f.format,
            "raw": f.raw.decode("utf-8", "surrogateescape"),
            "tools": f.tools,
            "options": f.options,
            "finish": f.finish,
        }
        for f in SOME
    ]
    code = HIDE_THE_CORE + textwrap.dedent(
        """
        import json, sys
        from toolparse.stream import StreamParser
        out = []
        for case in json.loads(sys.stdin.read()):
            parser = StreamParser(case["format"], tools=case["tools"], engine="reference",
                                  seed=0, **case["options"])
            got = parser.feed(case["raw"].encode("utf-8", "surrogateescape"))
            got += parser.finish(case["finish"])
            out.append([repr(e) for e in got])
        assert "toolparse._core" not in sys.modules
        print(json.dumps(out))
        """
    )
    run = subprocess.run(
        [sys.executable, "-c", code],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    expected = [[repr(e) for e in f.events("reference", seed=0)] for f in SOME]
    assert json.loads(run.stdout) == expected
