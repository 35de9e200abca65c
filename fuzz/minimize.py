"""Shrinks an input that fails differential.check to a smaller one failing the same way
(the same exception type and first line), by dropping ever smaller runs of bytes of the
output (the 4-byte header stays).  For the api target's findings: libFuzzer's own
-minimize_crash re-runs the target as a program, which a Python script is not.

    python fuzz/minimize.py CRASH OUT
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import differential  # beside this file: found through the line above


def failure(data: bytes) -> tuple[str, str] | None:
    """How the input fails: (exception type, its message's first line), or None."""
    try:
        differential.check(data)
    except Exception as error:  # any exception is a finding here
        return type(error).__name__, (str(error).splitlines() or [""])[0]
    return None


def minimize(data: bytes) -> bytes:
    want = failure(data)
    if want is None:
        raise SystemExit("the input does not fail")
    header, body = data[: differential.HEADER], data[differential.HEADER :]
    size = max(len(body) // 2, 1)
    while size >= 1:
        at, shrunk = 0, False
        while at < len(body):
            candidate = body[:at] + body[at + size :]
            if failure(header + candidate) == want:
                body, shrunk = candidate, True
            else:
                at += size
        if not shrunk:
            size //= 2
    return header + body


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("crash", type=Path)
    parser.add_argument("out", type=Path)
    args = parser.parse_args()
    data = args.crash.read_bytes()
    small = minimize(data)
    args.out.write_bytes(small)
    print(f"minimize: {len(data)} -> {len(small)} bytes, failing as {failure(small)}")


if __name__ == "__main__":
    main()
