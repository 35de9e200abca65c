"""Text that holds none of a set of stops, as every export writes it: its stops reduced to
what the text may not hold, and the automaton that reads it."""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .. import grammar as g

WS_CHARS = " \t\r\n"  # the whitespace a followed_by lookahead skips


def by_length(texts: Iterable[str], longest_first: bool = False) -> list[str]:
    """The distinct texts by length, texts of one length in their own order: an export is
    the same text in every process (a set's order depends on the hash seed)."""
    return sorted(set(texts), key=lambda t: (-len(t) if longest_first else len(t), t))


def beginnings(texts: Iterable[str], longest_first: bool = False) -> list[str]:
    """The texts' beginnings, none empty and none whole, by length (by_length)."""
    return by_length((t[:k] for t in texts for k in range(1, len(t))), longest_first)


@dataclass(frozen=True)
class TextStops:
    """The stops of a text, reduced to what the text may not hold.

    markers: stops the text never holds.  follow: stops that count only where optional
    whitespace and one of their follow texts come next, as (marker, follows); the text
    may hold such a marker elsewhere.  atoms: the literal texts a text with follow stops
    is written with (the follow stops' markers and every follow text the text may hold),
    so that the marker of a stop and the text's own copy of it are the same lexeme."""

    markers: tuple[str, ...]
    follow: tuple[tuple[str, tuple[str, ...]], ...]
    atoms: tuple[str, ...]


def text_stops(stops: Iterable[g.Stop]) -> TextStops:
    merged: dict[str, set[str] | None] = {}  # marker -> follows, None: a plain stop
    for s in stops:
        marker = s.marker.decode("utf-8")
        if not s.follow or merged.get(marker, set()) is None:
            merged[marker] = None
        else:
            merged.setdefault(marker, set())
            found = merged[marker]
            assert found is not None
            found.update(f.decode("utf-8") for f in s.follow)

    def covered(m: str) -> bool:
        # every occurrence of m holds an occurrence of a shorter stop: text without that
        # one has no m either
        for o, of in merged.items():
            if o == m or o not in m:
                continue
            if of is None:
                return True
            mf = merged[m]
            if mf is not None and m.endswith(o) and mf <= of:
                return True
        return False

    kept = {m: f for m, f in merged.items() if not covered(m)}
    markers = tuple(sorted(m for m, f in kept.items() if f is None))
    follow = tuple(sorted((m, tuple(sorted(f))) for m, f in kept.items() if f is not None))
    # a follow text that holds a plain stop never occurs in the text
    follows = {f for _, fs in follow for f in fs if not any(p in f for p in markers)}
    atoms = tuple(sorted({m for m, _ in follow} | follows))
    return TextStops(markers, follow, atoms)


@dataclass(frozen=True)
class TextAutomaton:
    """Text that holds none of a text's stops (a follow stop only where whitespace and
    one of its follow texts come after the marker), as a deterministic automaton over
    characters: state 0 is the start and the state where no stop has begun; moves[s]
    maps the characters of `alphabet` to the next state (a character that completes a
    stop has no move); any other character moves to state 0.  The text may end in
    state 0 only."""

    alphabet: frozenset[str]
    moves: tuple[dict[str, int], ...]


def text_automaton(stops: Iterable[g.Stop]) -> TextAutomaton:
    return _text_automaton(tuple(stops))


@functools.lru_cache(maxsize=256)
def _text_automaton(stops: tuple[g.Stop, ...]) -> TextAutomaton:
    # built once per set of stops: an export writes the same text in many rules
    found = text_stops(stops)
    follow = dict(found.follow)
    alphabet = {c for m in found.markers for c in m}
    alphabet |= {c for m, fs in found.follow for c in m + "".join(fs)}
    if follow:
        alphabet |= set(WS_CHARS)
    done = object()  # a stop is complete

    def step(pos: tuple[Any, ...], ch: str) -> list[Any]:
        kind = pos[0]
        if kind == "m":  # k characters of a plain marker
            _, m, k = pos
            if m[k] != ch:
                return []
            return [done if k + 1 == len(m) else ("m", m, k + 1)]
        if kind == "f":  # k characters of a follow stop's marker
            _, m, k = pos
            if m[k] != ch:
                return []
            return [("w", m) if k + 1 == len(m) else ("f", m, k + 1)]
        if kind == "w":  # the marker, then whitespace
            m = pos[1]
            if ch in WS_CHARS:
                return [("w", m)]
            return [done if len(f) == 1 else ("F", m, f, 1) for f in follow[m] if f[0] == ch]
        _, m, f, k = pos  # "F": k characters of a follow text
        if f[k] != ch:
            return []
        return [done if k + 1 == len(f) else ("F", m, f, k + 1)]

    fresh = [("m", m, 0) for m in found.markers] + [("f", m, 0) for m in follow]
    states: list[frozenset[Any]] = [frozenset()]
    index = {states[0]: 0}
    moves: list[dict[str, int]] = []
    k = 0
    while k < len(states):
        here: dict[str, int] = {}
        for ch in sorted(alphabet):
            nxt = set()
            for pos in (*states[k], *fresh):
                moved = step(pos, ch)
                if done in moved:
                    break
                nxt.update(moved)
            else:
                key = frozenset(nxt)
                if key not in index:
                    index[key] = len(states)
                    states.append(key)
                here[ch] = index[key]
        moves.append(here)
        k += 1
    return TextAutomaton(frozenset(alphabet), tuple(moves))
