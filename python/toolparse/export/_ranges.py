"""Integer bounds as digit patterns, for the regex and GBNF exports.

A JSON Schema integer with `minimum` / `maximum` (or their exclusive forms) becomes the
alternatives that spell exactly the integers in range the way JSON writes them: no
leading zero, no plus sign, a minus sign before a magnitude of at least one, and "-0"
where 0 is in range. Each alternative is a sign and a run of digit classes with counts,
which either export writes in its own syntax.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Digits:
    """Digits first..last, at least `least` and at most `most` (None: any more) of them."""

    first: int
    last: int
    least: int = 1
    most: int | None = 1


@dataclass(frozen=True)
class Spelling:
    """One alternative: an optional minus sign, then its digits."""

    negative: bool
    digits: tuple[Digits, ...]


def _number(value: Any) -> float | None:
    """A finite JSON number as a float-or-int, else None (booleans are not numbers)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return value
    return None


def integer_bounds(schema: Mapping[str, Any]) -> tuple[int | None, int | None]:
    """The least and greatest integer a schema allows (None: no bound), drafts 4 to 2020-12
    (a boolean exclusiveMinimum / exclusiveMaximum excludes the bound beside it)."""
    lows: list[int] = []
    highs: list[int] = []
    minimum, maximum = _number(schema.get("minimum")), _number(schema.get("maximum"))
    exclusive_min, exclusive_max = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
    if minimum is not None:
        lows.append(math.floor(minimum) + 1 if exclusive_min is True else math.ceil(minimum))
    if (above := _number(exclusive_min)) is not None:
        lows.append(math.floor(above) + 1)
    if maximum is not None:
        highs.append(math.ceil(maximum) - 1 if exclusive_max is True else math.floor(maximum))
    if (below := _number(exclusive_max)) is not None:
        highs.append(math.ceil(below) - 1)
    return (max(lows) if lows else None), (min(highs) if highs else None)


def _run(first: int, last: int, width: int) -> tuple[Digits, ...]:
    """A digit first..last, then `width` digits of any value."""
    head = Digits(first, last)
    return (head, Digits(0, 9, width, width)) if width else (head,)


def _same_length(low: str, high: str) -> list[tuple[Digits, ...]]:
    """The digit strings of one length from low to high (low <= high)."""
    if not low:
        return [()]
    first, last, width = int(low[0]), int(high[0]), len(low) - 1
    if first == last:
        return [(Digits(first, first), *rest) for rest in _same_length(low[1:], high[1:])]
    out = []
    # the first digit's own part where it does not run to the end, and the same for the
    # last; the digits between (and those ends where they do run through) take any rest
    whole_from = first if low[1:] == "0" * width else first + 1
    whole_to = last if high[1:] == "9" * width else last - 1
    if whole_from != first:
        out += [(Digits(first, first), *r) for r in _same_length(low[1:], "9" * width)]
    if whole_from <= whole_to:
        out.append(_run(whole_from, whole_to, width))
    if whole_to != last:
        out += [(Digits(last, last), *r) for r in _same_length("0" * width, high[1:])]
    return out


def _magnitudes(low: int, high: int | None) -> list[tuple[Digits, ...]]:
    """Spellings of the integers low..high (low >= 0; high None: no end)."""
    out = []
    shortest = len(str(low))
    longest = shortest if high is None else len(str(high))
    for length in range(shortest, longest + 1):
        start = max(low, 10 ** (length - 1) if length > 1 else 0)
        end = 10**length - 1 if high is None else min(high, 10**length - 1)
        if start <= end:
            out += _same_length(str(start), str(end))
    if high is None:  # every longer one
        out.append((Digits(1, 9), Digits(0, 9, shortest, None)))
    return out


def integer_spellings(low: int | None, high: int | None) -> list[Spelling]:
    """The alternatives for the integers low..high (None: unbounded); empty when none."""
    if low is not None and high is not None and low > high:
        return []
    out = []
    if high is None or high >= 0:
        out += [Spelling(False, d) for d in _magnitudes(max(low or 0, 0), high)]
    if low is None or low < 0:
        nearest = 1 if high is None or high >= 0 else -high
        out += [Spelling(True, d) for d in _magnitudes(nearest, None if low is None else -low)]
    if (low is None or low <= 0) and (high is None or high >= 0):
        out.append(Spelling(True, (Digits(0, 0),)))  # -0, which JSON allows
    return out


def _count(piece: Digits) -> str:
    if (piece.least, piece.most) == (1, 1):
        return ""
    if piece.most is None:
        return f"{{{piece.least},}}"
    if piece.least == piece.most:
        return f"{{{piece.least}}}"
    return f"{{{piece.least},{piece.most}}}"


def regex(spellings: list[Spelling]) -> str:
    """The alternatives as one regular expression (a group)."""

    def one(s: Spelling) -> str:
        parts = [str(d.first) if d.first == d.last else f"[{d.first}-{d.last}]" for d in s.digits]
        return ("-" if s.negative else "") + "".join(
            p + _count(d) for p, d in zip(parts, s.digits, strict=True)
        )

    return "(?:" + "|".join(one(s) for s in spellings) + ")"


def gbnf(spellings: list[Spelling]) -> str:
    """The alternatives as a GBNF rule body."""

    def one(s: Spelling) -> str:
        parts = ['"-"'] if s.negative else []
        for d in s.digits:
            char = f'"{d.first}"' if d.first == d.last else f"[{d.first}-{d.last}]"
            parts.append(char + _count(d))
        return " ".join(parts)

    return " | ".join(one(s) for s in spellings)
