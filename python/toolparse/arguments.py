"""A call's arguments as Python values, read so that nothing is lost in the reading.

JSON allows an object to name a key twice and a number no float can hold; ``json.loads``
keeps the last of the two and turns ``1e999`` into ``inf``, so the ``arguments`` an
executor reads would differ from the ``arguments_json`` a validator or a log reads.  Both
engines read every call's arguments here, and a call they cannot read whole is an
``invalid_arguments`` error, never a call.
"""

from __future__ import annotations

import json
import math
from typing import Any


class ArgumentsError(ValueError):
    """The arguments are valid JSON that does not become Python values without a loss;
    the message says what."""


def duplicate_key(key: str) -> ArgumentsError:
    return ArgumentsError(f"the arguments name the key {key!r} twice")


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise duplicate_key(key)
            seen.add(key)
    return out


def finite_float(text: str) -> float:
    """The number text as a float; ArgumentsError where no float holds it."""
    value = float(text)
    if math.isinf(value):
        raise ArgumentsError(f"the number {text} is beyond a float's range")
    return value


def _whole_int(text: str) -> int:
    try:
        return int(text)
    except ValueError:  # more digits than Python converts (sys.get_int_max_str_digits)
        raise ArgumentsError(f"an integer of {len(text)} digits is too long to read") from None


def load_arguments(arguments_json: str) -> Any:
    """The JSON text as Python values; ArgumentsError where an object names a key twice or
    a number does not convert exactly enough (a float overflows, an integer has more
    digits than Python reads), ValueError where the text is no JSON at all."""
    return json.loads(
        arguments_json,
        object_pairs_hook=_unique_pairs,
        parse_float=finite_float,
        parse_int=_whole_int,
    )
