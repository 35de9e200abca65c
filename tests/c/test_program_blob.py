"""A program blob is input too: a corrupt one is a ValueError, never a crash or a hang."""

from __future__ import annotations

import random

import pytest

import toolparse
from toolparse._native import NativeProgram, NativeStream


def mutations(blob: bytes, seed: int, count: int) -> list[bytes]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        data = bytearray(blob)
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(len(data))
            kind = rng.random()
            if kind < 0.6:
                data[at] = rng.randrange(256)
            elif kind < 0.8:
                del data[at : at + rng.randint(1, 8)]
            else:
                data[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        out.append(bytes(data))
    return out


@pytest.mark.parametrize("format_name", ["hermes", "qwen3_coder"])
def test_mutated_programs_are_rejected_or_run_safely(format_name: str) -> None:
    blob = toolparse.get_format(format_name).program_bytes
    inputs = [b'<tool_call>{"name": "f", "arguments": {"a": [1]}}</tool_call> x', b"\xff<think>"]
    accepted = 0
    for data in mutations(blob, seed=len(blob), count=400):
        try:
            program = NativeProgram(data)
        except ValueError:
            continue
        accepted += 1
        for entry in ("start", "start_in_reasoning"):
            if not program.has_entry(entry):
                continue
            stream = NativeStream(program, entry, None, lambda: "call_x")
            for text in inputs:
                stream.reset()
                for k in range(0, len(text), 3):
                    stream.feed(text[k : k + 3])
                stream.finish()
    assert accepted < 400  # most corruptions are caught by the loader's checks


def test_garbage_is_not_a_program() -> None:
    for blob in (b"", b"TPG1", b"XXXX" + bytes(32), b"TPG1" + b"\xff" * 64):
        with pytest.raises(ValueError, match="not a valid toolparse program"):
            NativeProgram(blob)


def test_a_program_that_loops_forever_ends_with_a_limit_error() -> None:
    from toolparse import grammar as g

    program = g.Program(code=[g.OP_JMP, 0], strings=[], stopsets=[], entries={"start": 0})
    native = NativeProgram(program.to_bytes())
    stream = NativeStream(native, "start", None, lambda: "call_x")
    events = stream.feed(b"anything") + stream.finish()
    assert [(e.kind, e.offset) for e in events] == [("limit", 0)]

    from toolparse.reference.stream import ReferenceStream

    reference = ReferenceStream(program, "start", None, lambda: "call_x")
    assert reference.feed(b"anything") + reference.finish() == events


def test_code_that_runs_off_its_end_stops_there() -> None:
    from toolparse import grammar as g

    # no END after the last instruction: the loader's END after the code ends the parse
    for code, texts in (([g.OP_WS], []), ([g.OP_TOPEN, 1, 0, g.OP_WS], ["  "])):
        program = g.Program(code=code, strings=[], stopsets=[], entries={"start": 0})
        stream = NativeStream(NativeProgram(program.to_bytes()), "start", None, lambda: "x")
        events = stream.feed(b"  a") + stream.feed(b"b") + stream.finish()
        assert [e.text for e in events] == texts  # the whitespace, then nothing more


def test_a_chars_instruction_needs_a_whole_byte_set() -> None:
    from toolparse import grammar as g

    for byteset in (b"\xff" * 31, b"\xff" * 33):
        program = g.Program(
            code=[g.OP_CHARS, 0, 0, g.OP_END], strings=[byteset], stopsets=[], entries={"start": 0}
        )
        with pytest.raises(ValueError, match="CHARS"):
            NativeProgram(program.to_bytes())
