"""A small GBNF reader for the tests: llama.cpp's grammar notation read as the
context-free grammar it is (no lexer: each character is matched where the grammar stands,
as llama.cpp and xgrammar match it), recognized with an Earley parser over characters.

    grammar = read_gbnf(text)           # rules, "root" the start
    grammar.ends("...")                 # the lengths of the prefixes the root takes whole

It reads what the exports write: one rule a line (``name ::= expression``), string
literals, character classes (``[^...]``, ranges, ``\\x``/``\\u`` escapes), rule names,
groups and the postfix operators ``*``, ``+``, ``?``, ``{m}``, ``{m,}``, ``{m,n}``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

Char = Callable[[str], bool]
Symbol = str | Char  # a nonterminal's name, or a character test
_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "\\": "\\", '"': '"', "]": "]", "[": "[", "-": "-"}
_ESCAPES.update({"^": "^", "/": "/"})
_NAME = re.compile(r"[A-Za-z0-9_-]+")
_REPEAT = re.compile(r"\{(\d+)(,(\d*))?\}")


class GbnfError(ValueError):
    pass


@dataclass
class Grammar:
    rules: dict[str, list[tuple[Symbol, ...]]]
    nullable: set[str]

    def ends(self, text: str, start: str = "root") -> list[int]:
        """The lengths of the prefixes of text that `start` matches whole (Earley)."""
        # an item: (rule name, alternative index, dot, origin)
        sets: list[set[tuple[str, int, int, int]]] = [set() for _ in range(len(text) + 1)]
        found: list[int] = []
        for k in range(len(text) + 1):
            agenda = [(start, a, 0, 0) for a in range(len(self.rules[start]))] if k == 0 else []
            agenda += list(sets[k])
            here = sets[k]
            here.update(agenda)
            while agenda:
                name, alt, dot, origin = agenda.pop()
                body = self.rules[name][alt]
                if dot == len(body):  # complete: advance the items waiting for it
                    for waiting in list(sets[origin]):
                        w_name, w_alt, w_dot, w_origin = waiting
                        w_body = self.rules[w_name][w_alt]
                        if w_dot < len(w_body) and w_body[w_dot] == name:
                            item = (w_name, w_alt, w_dot + 1, w_origin)
                            if item not in here:
                                here.add(item)
                                agenda.append(item)
                    continue
                symbol = body[dot]
                if isinstance(symbol, str):  # predict, and step over it if it may be empty
                    for a in range(len(self.rules[symbol])):
                        item = (symbol, a, 0, k)
                        if item not in here:
                            here.add(item)
                            agenda.append(item)
                    if symbol in self.nullable:
                        item = (name, alt, dot + 1, origin)
                        if item not in here:
                            here.add(item)
                            agenda.append(item)
                elif k < len(text) and symbol(text[k]):
                    sets[k + 1].add((name, alt, dot + 1, origin))
            if any(n == start and o == 0 and d == len(self.rules[n][a]) for n, a, d, o in here):
                found.append(k)
            if k < len(text) and not sets[k + 1]:
                break
        return found


def read_gbnf(text: str) -> Grammar:
    rules: dict[str, list[tuple[Symbol, ...]]] = {}
    reader = _Reader(rules)
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        name, sep, body = line.partition("::=")
        if not sep:
            raise GbnfError(f"not a rule: {line!r}")
        reader.text, reader.at = body, 0
        rules[name.strip()] = reader.alternatives(end="")
    missing = {s for alts in rules.values() for alt in alts for s in alt if isinstance(s, str)}
    if missing - set(rules):
        raise GbnfError(f"rules used but not defined: {sorted(missing - set(rules))}")
    return Grammar(rules, _nullable(rules))


def _nullable(rules: dict[str, list[tuple[Symbol, ...]]]) -> set[str]:
    found: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, alts in rules.items():
            if name not in found and any(
                all(isinstance(s, str) and s in found for s in alt) for alt in alts
            ):
                found.add(name)
                changed = True
    return found


class _Reader:
    """Reads one rule's expression, adding a rule for each group and repetition."""

    def __init__(self, rules: dict[str, list[tuple[Symbol, ...]]]) -> None:
        self.rules = rules
        self.text = ""
        self.at = 0
        self.count = 0

    def fresh(self, alts: list[tuple[Symbol, ...]]) -> str:
        self.count += 1
        name = f" {self.count}"  # a space: no rule of the grammar is named so
        self.rules[name] = alts
        return name

    def skip(self) -> None:
        while self.at < len(self.text) and self.text[self.at] in " \t":
            self.at += 1

    def alternatives(self, end: str) -> list[tuple[Symbol, ...]]:
        alts = [self.sequence(end)]
        while self.at < len(self.text) and self.text[self.at] == "|":
            self.at += 1
            alts.append(self.sequence(end))
        if end and (self.at >= len(self.text) or self.text[self.at] != end):
            raise GbnfError(f"expected {end!r} at {self.at} in {self.text!r}")
        self.at += len(end)
        return alts

    def sequence(self, end: str) -> tuple[Symbol, ...]:
        out: list[Symbol] = []
        while True:
            self.skip()
            if self.at >= len(self.text) or self.text[self.at] in "|" + end:
                return tuple(out)
            items = self.term()
            out += self.repeated(items)

    def term(self) -> list[Symbol]:
        ch = self.text[self.at]
        if ch == '"':
            self.at += 1
            chars = []
            while self.text[self.at] != '"':
                chars.append(self.char())
            self.at += 1
            return [_equal(c) for c in chars]
        if ch == "[":
            return [self.char_class()]
        if ch == "(":
            self.at += 1
            return [self.fresh(self.alternatives(")"))]
        found = _NAME.match(self.text, self.at)
        if not found:
            raise GbnfError(f"unexpected {ch!r} at {self.at} in {self.text!r}")
        self.at = found.end()
        return [found.group()]

    def repeated(self, items: list[Symbol]) -> list[Symbol]:
        self.skip()
        if self.at >= len(self.text):
            return items
        op = self.text[self.at]
        least, most = 1, 1
        if op in "*+?":
            self.at += 1
            least, most = {"*": (0, None), "+": (1, None), "?": (0, 1)}[op]
        elif found := _REPEAT.match(self.text, self.at):
            self.at = found.end()
            least = int(found.group(1))
            most = least if not found.group(2) else int(found.group(3)) if found.group(3) else None
        else:
            return items
        once = self.fresh([tuple(items)])
        out: list[Symbol] = [once] * least
        if most is None:
            star = self.fresh([()])
            self.rules[star].append((once, star))
            return [*out, star]
        for _ in range(most - least):
            out.append(self.fresh([(), (once,)]))
        return out

    def char(self) -> str:
        ch = self.text[self.at]
        self.at += 1
        if ch != "\\":
            return ch
        kind = self.text[self.at]
        self.at += 1
        size = {"x": 2, "u": 4, "U": 8}.get(kind)
        if size:
            code = int(self.text[self.at : self.at + size], 16)
            self.at += size
            return chr(code)
        if kind not in _ESCAPES:
            raise GbnfError(f"unknown escape \\{kind} in {self.text!r}")
        return _ESCAPES[kind]

    def char_class(self) -> Char:
        self.at += 1
        negated = self.text[self.at] == "^"
        self.at += negated
        ranges: list[tuple[str, str]] = []
        while self.text[self.at] != "]":
            low = self.char()
            high = low
            if self.text[self.at] == "-" and self.text[self.at + 1] != "]":
                self.at += 1
                high = self.char()
            ranges.append((low, high))
        self.at += 1
        frozen = tuple(ranges)
        return lambda c: any(lo <= c <= hi for lo, hi in frozen) != negated


def _equal(expected: str) -> Char:
    return lambda c: c == expected
