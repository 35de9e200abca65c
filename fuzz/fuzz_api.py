"""atheris target over the Python API: each input (a 4-byte header and a model output, see
fuzz/differential.py) is parsed by the native engine in the header's chunking, by the
reference engine, whole, by token ids through a byte vocab, and through a BatchParser when
asked; they must agree event for event (adjacent deltas merged) and with their message.

Run by scripts/fuzz.sh api SECONDS, which builds the extension with the sanitizers and
libFuzzer's coverage and runs this with the atheris runtime preloaded:

    LD_PRELOAD=.../asan_with_fuzzer.so PYTHONMALLOC=malloc python fuzz/fuzz_api.py [libFuzzer args]

An AssertionError is a disagreement; any exception but the ValueError that
differential.check expects is a crash too.  Inputs over 64 KB are skipped.
"""

from __future__ import annotations

import inspect
import sys

import atheris
import differential

from toolparse import repair


def instrument_repair() -> None:
    """Python coverage for the argument repair, the one piece of parsing in Python that
    the native engine runs.  The C core and the Cython glue have the compiler's coverage;
    instrumenting the whole package (the reference engine above all) made each input
    several times slower for little more coverage."""
    for obj in list(vars(repair).values()):
        if getattr(obj, "__module__", None) != repair.__name__:
            continue
        if inspect.isfunction(obj):
            atheris.instrument_func(obj)
        elif inspect.isclass(obj):
            for member in vars(obj).values():
                if inspect.isfunction(member):
                    atheris.instrument_func(member)


def test_one_input(data: bytes) -> None:
    differential.check(data)


def main() -> None:
    instrument_repair()
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
