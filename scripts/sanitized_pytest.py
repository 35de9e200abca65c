"""`python -m pytest` for an interpreter with the sanitizer runtime preloaded: scripts/sanitize.sh
runs the tests through it (docs/sanitizers.md).

- LD_PRELOAD (the sanitizer runtime) leaves the environment as the interpreter starts: the
  programs the tests start (CMake, the compiler, git for pytest-benchmark's machine info)
  are not what is checked, and the C tests are linked with their own sanitizer runtime.
- With LeakSanitizer in the process, leaks are checked once pytest has finished, while the
  interpreter is still whole, and not again at exit: CPython's finalization leaves behind
  objects it cannot free (`import numpy` alone leaves 53 blocks that way), nobody's leak.

    python scripts/sanitized_pytest.py PYTEST_ARGS...
"""

from __future__ import annotations

import ctypes
import os
import sys
from types import FrameType

import pytest

# The frames still running when the leak check runs (this script's), each kept by a
# reference that LeakSanitizer can see: CPython 3.11+ points to a running frame's object only
# from its frame stack, memory mapped outside malloc that LeakSanitizer does not scan, so a
# frame object made while the tests ran (a traceback or a stack walk through it) would be
# reported as leaked.
running_frames: list[FrameType] = []


def keep_running_frames_in_view() -> None:
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        running_frames.append(frame)
        frame = frame.f_back


def main(args: list[str]) -> int:
    os.environ.pop("LD_PRELOAD", None)
    sys.path[0] = os.getcwd()  # as `python -m pytest` has it, not this script's folder
    # -n 0: in this process, not in workers that would start without the sanitizer runtime
    status = int(pytest.main(["-n", "0", *args]))
    sys.stdout.flush()
    sys.stderr.flush()
    process = ctypes.CDLL(None)
    if hasattr(process, "__lsan_do_leak_check"):
        keep_running_frames_in_view()
        process.__lsan_do_leak_check()  # on a leak: the report, then ASAN_OPTIONS' exitcode
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
