"""The format grammar: parser combinators, and their compiler to bytecode.

A format is written once with these combinators and compiled to a flat program that the C
VM and the pure-Python reference VM run identically (docs/engine.md).  This module is the
only Python code that knows the opcodes.
"""

from __future__ import annotations

import json as _json
import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from ._common import MAX_MARKER_LENGTH

Role = Literal[
    "reasoning",
    "content",
    "tool_call",
    "tool_name",
    "tool_args",
    "tool_id",
    "param_name",
    "param_value",
    "repaired",
    "missing_opener",
    "missing_closer",
]
ROLES: tuple[Role, ...] = (
    "reasoning",
    "content",
    "tool_call",
    "tool_name",
    "tool_args",
    "tool_id",
    "param_name",
    "param_value",
    "repaired",  # marks the open call as salvaged (repair grammars)
    "missing_opener",  # marks the open call as written without its opening marker (repair)
    "missing_closer",  # marks the open call as missing a closing tag in mid-output (repair)
)
DIALECTS = ("strict", "lenient", "python")

# Opcodes.  Each instruction is the opcode word followed by OPERANDS[opcode] words.
(
    OP_END,
    OP_LIT,
    OP_WS,
    OP_UNTIL,
    OP_JSON,
    OP_EOF,
    OP_CHOICE,
    OP_COMMIT,
    OP_PCOMMIT,
    OP_BCOMMIT,
    OP_FAIL,
    OP_FAILTWICE,
    OP_JMP,
    OP_CALL,
    OP_RET,
    OP_CUT,
    OP_TOPEN,
    OP_TCLOSE,
    OP_RECOVER,
    OP_RPOP,
    OP_CHARS,
    OP_CONST,
) = range(22)
OPERANDS = (0, 1, 0, 2, 2, 1, 1, 1, 1, 1, 0, 0, 1, 1, 0, 0, 2, 0, 1, 0, 2, 1)
OPCODE_NAMES = (
    "END LIT WS UNTIL JSON EOF CHOICE COMMIT PCOMMIT BCOMMIT FAIL FAILTWICE JMP CALL RET CUT "
    "TOPEN TCLOSE RECOVER RPOP CHARS CONST"
).split()

# EOF flags
EOF_STOPPED = 1  # fails when the output was cut short (finish reason "length")
# CHARS: operands are a string holding a 256-bit byte set and the flags
CHARS_SET_BYTES = 32
CHARS_MIN1 = 1  # fails when no byte of the set comes first
# UNTIL flags
UNTIL_MIN1 = 1  # fails when no text precedes the stop
UNTIL_NEED_STOP = 2  # fails at the end of input when no stop came
UNTIL_COMMIT = 4  # once one byte of text is certain, drops every choice point (a cut)
# at the end of input, the text ends before a stop the end cut off: a stop whose lookahead
# was cut off, or a proper prefix of a stop at the very end (repair grammars)
UNTIL_END_TRIMS = 8
# A stop's follow count with this bit set: declared_param() lookaheads come after its
# follow texts, as their count and two string indices each (prefix, or NO_STRING for
# none; end).
DECLARED_FOLLOW = 0x80000000
NO_STRING = 0xFFFFFFFF
MAX_PARAM_NAME = 256  # bytes of a declared_param() name; a longer one is none declared
MAX_DECLARED = 64  # declared_param() lookaheads of one stop
# JSON operand: dialect in the low byte, the kind of value required above it, flags above
JSON_ANY, JSON_STRING, JSON_OBJECT = 0, 1, 2
JSON_CLOSE_AT_END = 1  # a value the end of the input cuts off matches (repair grammars)
# TOPEN decode operand: how a captured value is read.  For a name or an id: raw text or a
# JSON string token.  For a parameter value: typed by the schema (raw), or as the output
# says: always a string, or a JSON value (a string when it is not valid JSON), or a
# Python literal or a Gemma 4 / FunctionGemma value (converted to JSON), or a MiniMax-M3
# value (nested tags, converted to JSON with its leaves typed by the schema).
DECODE_RAW, DECODE_JSON_STRING, DECODE_STRING, DECODE_JSON, DECODE_PYTHON = 0, 1, 2, 3, 4
DECODE_GEMMA, DECODE_FUNCTIONGEMMA, DECODE_MINIMAX_M3 = 5, 6, 7

MAGIC = b"TPG1"


class GrammarError(ValueError):
    """A grammar that cannot be compiled: unknown rule, left recursion, empty repetition."""


# -- the combinators ---------------------------------------------------------------------


class Node:
    """A grammar expression."""

    def __add__(self, other: Node) -> Node:
        return seq(self, other)

    def __or__(self, other: Node) -> Node:
        return choice(self, other)


@dataclass(frozen=True, eq=False)
class Lit(Node):
    text: bytes


@dataclass(frozen=True)
class Declared:
    """A follow text that names a parameter: `prefix`, then a name the open call's tool
    declares, then `end`.  Where the call's tool is unknown or declares no parameters,
    any name up to `end` counts (what a format without a schema would read)."""

    prefix: bytes
    end: bytes


@dataclass(frozen=True)
class Stop:
    """A stop pattern of until(): a marker, optionally only when followed by optional
    whitespace and one of `follow`, or by one of `declared` (lookaheads that are not
    consumed)."""

    marker: bytes
    follow: tuple[bytes, ...] = ()
    declared: tuple[Declared, ...] = ()

    @property
    def conditional(self) -> bool:
        """Whether the marker stops only where a lookahead follows it."""
        return bool(self.follow or self.declared)


@dataclass(frozen=True, eq=False)
class Until(Node):
    stops: tuple[Stop, ...]
    flags: int


@dataclass(frozen=True, eq=False)
class Chars(Node):
    byteset: bytes  # CHARS_SET_BYTES bytes, bit b of byte b >> 3 set for each member
    min1: bool

    @classmethod
    def of(cls, members: Iterable[int], min1: bool) -> Chars:
        byteset = bytearray(CHARS_SET_BYTES)
        for b in members:
            byteset[b >> 3] |= 1 << (b & 7)
        return cls(bytes(byteset), min1)

    def members(self) -> frozenset[int]:
        return frozenset(b for b in range(256) if self.byteset[b >> 3] >> (b & 7) & 1)


@dataclass(frozen=True, eq=False)
class Const(Node):
    text: bytes


@dataclass(frozen=True, eq=False)
class Seq(Node):
    items: tuple[Node, ...]


@dataclass(frozen=True, eq=False)
class Choice(Node):
    alts: tuple[Node, ...]


@dataclass(frozen=True, eq=False)
class Opt(Node):
    item: Node


@dataclass(frozen=True, eq=False)
class Many(Node):
    item: Node
    at_least_one: bool


@dataclass(frozen=True, eq=False)
class Ahead(Node):
    item: Node
    negate: bool


@dataclass(frozen=True, eq=False)
class Ws(Node):
    pass


@dataclass(frozen=True, eq=False)
class Json(Node):
    dialect: str
    kind: int
    close_at_end: bool = False


@dataclass(frozen=True, eq=False)
class Tag(Node):
    role: Role
    item: Node
    decode: int


@dataclass(frozen=True, eq=False)
class Cut(Node):
    pass


@dataclass(frozen=True, eq=False)
class Ref(Node):
    name: str


@dataclass(frozen=True, eq=False)
class Eof(Node):
    stopped: bool = False


@dataclass(frozen=True, eq=False)
class Recover(Node):
    item: Node
    handler: Node


Pattern = str | bytes


def _bytes(text: Pattern) -> bytes:
    data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
    if not 1 <= len(data) <= MAX_MARKER_LENGTH:
        raise GrammarError(f"a literal is 1 to {MAX_MARKER_LENGTH} bytes, got {data!r}")
    return data


def lit(text: Pattern) -> Node:
    """Exactly these bytes."""
    return Lit(_bytes(text))


def stop(marker: Pattern, *, followed_by: tuple[Pattern | Declared, ...] = ()) -> Stop:
    """A stop for until(): `marker`, and with followed_by, only where optional whitespace
    and one of those literals or declared_param() lookaheads come next."""
    declared = tuple(f for f in followed_by if isinstance(f, Declared))
    if len(declared) > MAX_DECLARED:
        raise GrammarError(f"a stop is followed by at most {MAX_DECLARED} declared_param()")
    texts = tuple(_bytes(f) for f in followed_by if not isinstance(f, Declared))
    return Stop(_bytes(marker), texts, declared)


def declared_param(prefix: Pattern | None, end: Pattern) -> Declared:
    """A lookahead for stop(followed_by=...): prefix (None: nothing), a parameter name the
    open call's tool declares, and end.  Lets a value end only where a real parameter
    comes next, so that a value may hold the format's own markup (code, XML).  The
    call's name must be certain before the value: put a cut() between them."""
    return Declared(b"" if prefix is None else _bytes(prefix), _bytes(end))


def until(
    *stops: Pattern | Stop,
    min1: bool = False,
    need_stop: bool = False,
    commit: bool = False,
    trim_at_end: bool = False,
) -> Node:
    """Text up to the first stop (leftmost, longest), not consuming the stop; or up to the
    end of input unless need_stop.  min1 requires at least one byte of text; commit cuts
    once the first byte of text is certain (use it for text that, once begun, is final);
    trim_at_end: at the end of input, the text ends before a stop the end cut off (its
    marker's first bytes, or the marker with its lookahead cut off), left for what follows
    (repair grammars, where the end of the output may stand for a value's closing)."""
    if not stops:
        raise GrammarError("until() needs at least one stop")
    items = tuple(s if isinstance(s, Stop) else stop(s) for s in stops)
    flags = (
        (UNTIL_MIN1 if min1 else 0)
        | (UNTIL_NEED_STOP if need_stop else 0)
        | (UNTIL_COMMIT if commit else 0)
        | (UNTIL_END_TRIMS if trim_at_end else 0)
    )
    return Until(items, flags)


def chars(spec: str, *, min1: bool = False) -> Node:
    """The longest run of bytes from a set (possessive: it never gives bytes back).  spec
    lists members and ranges as in a regex class without brackets, e.g. "A-Za-z0-9_" (a
    "-" first or last is itself; characters stand for the bytes U+0000 to U+00FF, so
    "\x00-\xff" is any byte).  min1 requires at least one byte."""
    members: set[int] = set()
    data = spec.encode("latin-1")
    k = 0
    while k < len(data):
        if k + 2 < len(data) and data[k + 1] == ord("-"):
            low, high = data[k], data[k + 2]
            if low > high:
                raise GrammarError(f"empty range {spec[k : k + 3]!r} in {spec!r}")
            members.update(range(low, high + 1))
            k += 3
        else:
            members.add(data[k])
            k += 1
    if not members:
        raise GrammarError("chars() needs at least one member")
    return Chars.of(members, min1)


def const(text: Pattern) -> Node:
    """Matches no input, and gives the enclosing tag this text as if the output had
    written it: a name or key the format implies (raw code after a marker is a call of
    the ``python`` tool with a ``code`` argument)."""
    return Const(_bytes(text))


def seq(*items: Node) -> Node:
    return Seq(tuple(items))


def choice(*alts: Node) -> Node:
    """Ordered choice: the first alternative that matches."""
    return Choice(tuple(alts))


def opt(item: Node) -> Node:
    return Opt(item)


def many(item: Node) -> Node:
    return Many(item, False)


def many1(item: Node) -> Node:
    return Many(item, True)


def ahead(item: Node) -> Node:
    """Positive lookahead: item must match here; nothing is consumed."""
    return Ahead(item, False)


def not_ahead(item: Node) -> Node:
    """Negative lookahead: item must not match here; nothing is consumed."""
    return Ahead(item, True)


def ws() -> Node:
    """Optional JSON whitespace (space, tab, CR, LF)."""
    return Ws()


def json(
    dialect: str = "strict",
    kind: Literal["any", "string", "object"] = "any",
    *,
    close_at_end: bool = False,
) -> Node:
    """One JSON value, scanned incrementally.  close_at_end: a value the end of the input
    cuts off still matches (for repair grammars: the repair closes it)."""
    if dialect not in DIALECTS:
        raise GrammarError(f"unknown JSON dialect {dialect!r}")
    kinds = {"any": JSON_ANY, "string": JSON_STRING, "object": JSON_OBJECT}
    return Json(dialect, kinds[kind], close_at_end)


_DECODES = {
    "raw": DECODE_RAW,
    "json_string": DECODE_JSON_STRING,
    "string": DECODE_STRING,
    "json": DECODE_JSON,
    "python": DECODE_PYTHON,
    "gemma": DECODE_GEMMA,
    "functiongemma": DECODE_FUNCTIONGEMMA,
    "minimax_m3": DECODE_MINIMAX_M3,
}


def tag(
    role: Role,
    item: Node,
    *,
    decode: Literal[
        "raw", "json_string", "string", "json", "python", "gemma", "functiongemma", "minimax_m3"
    ] = "raw",
) -> Node:
    """The bytes item matches carry a semantic role.  decode: "json_string" for a name,
    id, or reasoning, content or arguments text written as a JSON string (decoded as it
    streams); "string", "json", "python" (a Python literal, which item must delimit, e.g.
    json("python")), "gemma" (a Gemma 4 value: bare dict keys, strings between <|"|>) or
    "functiongemma" (the same notation, strings between <escape>) for a parameter value
    whose type the output itself states (otherwise the tool schema types it).
    "minimax_m3": a MiniMax-M3 parameter value, which may hold nested tags (an object as
    tags named after its keys, an array as <item> tags), converted to JSON at its end
    with each leaf typed by the schema at its place (a string parameter still streams)."""
    if role not in ROLES:
        raise GrammarError(f"unknown role {role!r}")
    if decode not in _DECODES:
        raise GrammarError(f"unknown decode {decode!r}")
    if decode in ("string", "json", "python", "gemma", "functiongemma", "minimax_m3") and (
        role != "param_value"
    ):
        raise GrammarError(f"decode={decode!r} is for param_value, not {role!r}")
    return Tag(role, item, _DECODES[decode])


def cut() -> Node:
    """Commit: drop every open alternative, so what was parsed can be emitted."""
    return Cut()


def ref(name: str) -> Node:
    return Ref(name)


def stopped() -> Node:
    """The end of the output where the model stopped: at the end of an output that was
    cut short (finish reason "length") it fails, as incomplete.  For a call that has no
    closing marker and runs to the end of the output (raw code after a marker)."""
    return Eof(stopped=True)


def eof() -> Node:
    """The end of input."""
    return Eof()


def recover(item: Node, handler: Node) -> Node:
    """item; if it fails past its last alternative, report the error and run handler
    (which usually skips to a synchronizing marker) instead of failing the parse."""
    return Recover(item, handler)


def json_call(
    name_keys: tuple[str, ...] = ("name",),
    args_keys: tuple[str, ...] = ("arguments", "parameters"),
    id_keys: tuple[str, ...] = (),
    *,
    dialect: str = "strict",
    extra_keys: bool = True,
    commit: bool = True,
    repair: bool = False,
    string_arguments: bool = False,
) -> Node:
    """A JSON object whose keys carry roles, in any order: the tool name (a string), the
    arguments (an object) and optionally an id (a string); other keys are skipped when
    extra_keys.  With commit, it cuts after each known key, so arguments stream as they
    arrive; without, a failure anywhere lets an enclosing alternative take the text (for
    JSON that may or may not be a call), and nothing is emitted before the object ends.
    repair (for repair grammars): the arguments and the object may be cut off by the end
    of the output; the call is then marked repaired.  string_arguments: the arguments may
    also be a JSON string that holds them (OpenAI's wire form), decoded once as they
    stream; what it holds must be one JSON object."""

    def key(name: str) -> Node:
        if not commit:
            return seq(lit(_json.dumps(name)), ws(), lit(":"), ws())
        return seq(lit(_json.dumps(name)), ws(), lit(":"), cut(), ws())

    members: list[Node] = []
    members += [
        seq(key(k), tag("tool_name", json(dialect, "string"), decode="json_string"))
        for k in name_keys
    ]
    arguments = tag("tool_args", json(dialect, "object", close_at_end=repair))
    if string_arguments:
        written = tag("tool_args", json(dialect, "string"), decode="json_string")
        # committed at the object's first byte, so its arguments stream as they arrive
        first = seq(ahead(lit("{")), cut(), arguments) if commit else arguments
        arguments = choice(first, written)
    members += [seq(key(k), arguments) for k in args_keys]
    members += [
        seq(key(k), tag("tool_id", json(dialect, "string"), decode="json_string")) for k in id_keys
    ]
    if extra_keys:
        members.append(seq(json(dialect, "string"), ws(), lit(":"), ws(), json(dialect)))
    member = choice(*members)
    close = choice(lit("}"), tag("repaired", eof())) if repair else lit("}")
    return seq(
        lit("{"),
        ws(),
        opt(seq(member, many(seq(ws(), lit(","), ws(), member)))),
        ws(),
        close,
    )


# -- grammars and programs -----------------------------------------------------------------


@dataclass
class Grammar:
    """Named rules and the entry points a stream may start from (e.g. "start" and
    "start_in_reasoning")."""

    rules: dict[str, Node]
    entries: dict[str, str]

    def compile(self) -> Program:
        return _Compiler(self).compile()


@dataclass
class Program:
    """Compiled bytecode: code words, string table, stop sets and entry addresses."""

    code: list[int]
    strings: list[bytes]
    stopsets: list[tuple[Stop, ...]]
    entries: dict[str, int]
    listing: list[str] = field(default_factory=list)

    def to_bytes(self) -> bytes:
        """The flat blob the C VM loads (little-endian u32 words; see docs/engine.md)."""
        out = bytearray(MAGIC)
        words: list[int] = [len(self.code), len(self.strings), len(self.stopsets)]
        words.append(len(self.entries))
        out += struct.pack(f"<{len(words)}I", *words)
        out += struct.pack(f"<{len(self.code)}I", *self.code)
        for text in self.strings:
            out += struct.pack("<I", len(text)) + text
        for stops in self.stopsets:
            out += struct.pack("<I", len(stops))
            for s in stops:
                follow = [self.strings.index(f) for f in s.follow]
                flag = DECLARED_FOLLOW if s.declared else 0
                out += struct.pack("<II", self.strings.index(s.marker), len(follow) | flag)
                out += struct.pack(f"<{len(follow)}I", *follow)
                if s.declared:
                    out += struct.pack("<I", len(s.declared))
                for d in s.declared:
                    out += struct.pack(
                        "<II",
                        self.strings.index(d.prefix) if d.prefix else NO_STRING,
                        self.strings.index(d.end),
                    )
        for name, address in self.entries.items():
            data = name.encode()
            out += struct.pack("<I", len(data)) + data + struct.pack("<I", address)
        return bytes(out)

    @classmethod
    def from_bytes(cls, blob: bytes) -> Program:
        if blob[:4] != MAGIC:
            raise ValueError("not a toolparse program")
        at = 4

        def words(n: int) -> list[int]:
            nonlocal at
            values = list(struct.unpack_from(f"<{n}I", blob, at))
            at += 4 * n
            return values

        def chunk() -> bytes:
            nonlocal at
            (n,) = words(1)
            data = blob[at : at + n]
            at += n
            return data

        n_code, n_strings, n_stopsets, n_entries = words(4)
        code = words(n_code)
        strings = [chunk() for _ in range(n_strings)]
        stopsets = []
        for _ in range(n_stopsets):
            (n_stops,) = words(1)
            stops = []
            for _ in range(n_stops):
                marker, n_follow = words(2)
                follow = tuple(strings[i] for i in words(n_follow & ~DECLARED_FOLLOW))
                declared = []
                if n_follow & DECLARED_FOLLOW:
                    (n_declared,) = words(1)
                    for _ in range(n_declared):
                        prefix, end = words(2)
                        declared.append(
                            Declared(b"" if prefix == NO_STRING else strings[prefix], strings[end])
                        )
                stops.append(Stop(strings[marker], follow, tuple(declared)))
            stopsets.append(tuple(stops))
        entries = {}
        for _ in range(n_entries):
            name = chunk().decode()
            (address,) = words(1)
            entries[name] = address
        return cls(code, strings, stopsets, entries)


class _Compiler:
    def __init__(self, grammar: Grammar) -> None:
        self.grammar = grammar
        self.code: list[int] = []
        self.strings: list[bytes] = []
        self.stopsets: list[tuple[Stop, ...]] = []
        self.rule_address: dict[str, int] = {}
        self.calls: list[tuple[int, str]] = []  # (operand index, rule) to patch

    # validation

    def _validate(self) -> None:
        rules = self.grammar.rules
        for entry, rule in self.grammar.entries.items():
            if rule not in rules:
                raise GrammarError(f"entry {entry!r} names unknown rule {rule!r}")
        for name, node in rules.items():
            for ref_name in _refs(node):
                if ref_name not in rules:
                    raise GrammarError(f"rule {name!r} refers to unknown rule {ref_name!r}")
        for name, node in rules.items():
            if _commits_in_lookahead(node, False, rules, set()):
                raise GrammarError(
                    f"rule {name!r}: a cut inside a lookahead (a lookahead must stay undoable)"
                )
        empty = nullable_rules(rules)
        for name, node in rules.items():
            bad = _empty_repetition(node, empty)
            if bad is not None:
                raise GrammarError(f"rule {name!r}: a repetition can match empty ({bad})")
        left = {name: _left_refs(node, empty) for name, node in rules.items()}
        for name in rules:
            seen: set[str] = set()
            todo = list(left[name])
            while todo:
                current = todo.pop()
                if current == name:
                    raise GrammarError(f"rule {name!r} is left-recursive")
                if current not in seen:
                    seen.add(current)
                    todo.extend(left[current])

    # emission

    def _string(self, data: bytes) -> int:
        if data not in self.strings:
            self.strings.append(data)
        return self.strings.index(data)

    def _emit(self, op: int, *operands: int) -> int:
        at = len(self.code)
        self.code.append(op)
        self.code.extend(operands)
        return at

    def _patch(self, at: int, target: int) -> None:
        self.code[at + 1] = target

    def _node(self, node: Node) -> None:
        emit = self._emit
        if isinstance(node, Lit):
            emit(OP_LIT, self._string(node.text))
        elif isinstance(node, Ws):
            emit(OP_WS)
        elif isinstance(node, Until):
            for s in node.stops:
                self._string(s.marker)
                for f in s.follow:
                    self._string(f)
                for d in s.declared:
                    if d.prefix:
                        self._string(d.prefix)
                    self._string(d.end)
            if node.stops not in self.stopsets:
                self.stopsets.append(node.stops)
            emit(OP_UNTIL, self.stopsets.index(node.stops), node.flags)
        elif isinstance(node, Const):
            emit(OP_CONST, self._string(node.text))
        elif isinstance(node, Chars):
            emit(OP_CHARS, self._string(node.byteset), CHARS_MIN1 if node.min1 else 0)
        elif isinstance(node, Json):
            flags = JSON_CLOSE_AT_END if node.close_at_end else 0
            emit(OP_JSON, DIALECTS.index(node.dialect) | node.kind << 8 | flags << 16, 0)
        elif isinstance(node, Eof):
            emit(OP_EOF, EOF_STOPPED if node.stopped else 0)
        elif isinstance(node, Seq):
            for item in node.items:
                self._node(item)
        elif isinstance(node, Choice):
            commits = []
            for alt in node.alts[:-1]:
                at = emit(OP_CHOICE, 0)
                self._node(alt)
                commits.append(emit(OP_COMMIT, 0))
                self._patch(at, len(self.code))
            if node.alts:
                self._node(node.alts[-1])
            else:
                emit(OP_FAIL)
            for at in commits:
                self._patch(at, len(self.code))
        elif isinstance(node, Opt):
            at = emit(OP_CHOICE, 0)
            self._node(node.item)
            commit = emit(OP_COMMIT, 0)
            self._patch(at, len(self.code))
            self._patch(commit, len(self.code))
        elif isinstance(node, Many):
            if node.at_least_one:
                self._node(node.item)
            at = emit(OP_CHOICE, 0)
            body = len(self.code)
            self._node(node.item)
            emit(OP_PCOMMIT, body)
            self._patch(at, len(self.code))
        elif isinstance(node, Ahead):
            at = emit(OP_CHOICE, 0)
            self._node(node.item)
            if node.negate:
                emit(OP_FAILTWICE)
                self._patch(at, len(self.code))
            else:
                back = emit(OP_BCOMMIT, 0)
                self._patch(at, len(self.code))
                emit(OP_FAIL)
                self._patch(back, len(self.code))
        elif isinstance(node, Tag):
            emit(OP_TOPEN, ROLES.index(node.role), node.decode)
            self._node(node.item)
            emit(OP_TCLOSE)
        elif isinstance(node, Cut):
            emit(OP_CUT)
        elif isinstance(node, Ref):
            at = emit(OP_CALL, 0)
            self.calls.append((at, node.name))
        elif isinstance(node, Recover):
            at = emit(OP_RECOVER, 0)
            self._node(node.item)
            emit(OP_RPOP)
            skip = emit(OP_JMP, 0)
            self._patch(at, len(self.code))
            self._node(node.handler)
            self._patch(skip, len(self.code))
        else:
            raise GrammarError(f"not a grammar node: {node!r}")

    def compile(self) -> Program:
        self._validate()
        entries: dict[str, int] = {}
        for entry, rule in self.grammar.entries.items():
            entries[entry] = len(self.code)
            at = self._emit(OP_CALL, 0)
            self.calls.append((at, rule))
            self._emit(OP_END)
        for name, node in self.grammar.rules.items():
            self.rule_address[name] = len(self.code)
            self._node(node)
            self._emit(OP_RET)
        for at, name in self.calls:
            self._patch(at, self.rule_address[name])
        return Program(self.code, self.strings, self.stopsets, entries, disassemble(self.code))


def disassemble(code: list[int]) -> list[str]:
    lines = []
    pc = 0
    while pc < len(code):
        op = code[pc]
        n = OPERANDS[op]
        lines.append(f"{pc:5d} {OPCODE_NAMES[op]} {' '.join(map(str, code[pc + 1 : pc + 1 + n]))}")
        pc += 1 + n
    return lines


# -- grammar analysis ----------------------------------------------------------------------
#
# children(), nullable() and nullable_rules() read a grammar without compiling it: the
# compiler's checks use them, and so do the grammar exports (toolparse.export).


def children(node: Node) -> tuple[Node, ...]:
    """The nodes a node holds directly, in order: a sequence's items, a choice's
    alternatives, the item of opt(), many(), a lookahead or a tag, and a recover()'s
    item and then its handler.  A ref() holds none (its rule is a node of its own)."""
    if isinstance(node, Seq):
        return node.items
    if isinstance(node, Choice):
        return node.alts
    if isinstance(node, (Opt, Many, Ahead, Tag)):
        return (node.item,)
    if isinstance(node, Recover):
        return (node.item, node.handler)
    return ()


def _refs(node: Node) -> set[str]:
    found = {node.name} if isinstance(node, Ref) else set()
    for child in children(node):
        found |= _refs(child)
    return found


def _commits_in_lookahead(node: Node, inside: bool, rules: dict[str, Node], seen: set[str]) -> bool:
    """Whether a cut, or an until(commit=True), sits inside ahead()/not_ahead(), directly
    or in a rule the lookahead calls."""
    commits = isinstance(node, Cut) or (isinstance(node, Until) and node.flags & UNTIL_COMMIT)
    if inside and commits:
        return True
    if inside and isinstance(node, Ref) and node.name not in seen:
        seen.add(node.name)
        return _commits_in_lookahead(rules[node.name], True, rules, seen)
    inside = inside or isinstance(node, Ahead)
    return any(_commits_in_lookahead(child, inside, rules, seen) for child in children(node))


def nullable(node: Node, rules: Mapping[str, bool], handlers: bool = True) -> bool:
    """Whether the node may match the empty string.  rules: whether each rule may (what
    nullable_rules() gives; a rule left out counts as not).  handlers=False: a recover()
    counts by its item alone, as the grammar exports read it (they drop the handler)."""
    if isinstance(node, Lit | Json):
        return False
    if isinstance(node, Until):
        return not node.flags & UNTIL_MIN1
    if isinstance(node, Chars):
        return not node.min1
    if isinstance(node, (Ws, Cut, Eof, Opt, Ahead, Const)):
        return True
    if isinstance(node, Many):
        return not node.at_least_one or nullable(node.item, rules, handlers)
    if isinstance(node, Seq):
        return all(nullable(i, rules, handlers) for i in node.items)
    if isinstance(node, Choice):
        return any(nullable(a, rules, handlers) for a in node.alts)
    if isinstance(node, Tag):
        return nullable(node.item, rules, handlers)
    if isinstance(node, Recover):
        item = nullable(node.item, rules, handlers)
        return item or (handlers and nullable(node.handler, rules, handlers))
    if isinstance(node, Ref):
        return rules.get(node.name, False)
    return False


def nullable_rules(rules: Mapping[str, Node], handlers: bool = True) -> dict[str, bool]:
    """Whether each rule may match the empty string, by name (the least fixed point of
    nullable() over the rules; handlers: as for nullable())."""
    known = dict.fromkeys(rules, False)
    changed = True
    while changed:
        changed = False
        for name, node in rules.items():
            if not known[name] and nullable(node, known, handlers):
                known[name] = changed = True
    return known


def _empty_repetition(node: Node, empty: Mapping[str, bool]) -> str | None:
    if isinstance(node, Many) and nullable(node.item, empty):
        return repr(node.item)
    for child in children(node):
        found = _empty_repetition(child, empty)
        if found is not None:
            return found
    return None


def _left_refs(node: Node, empty: Mapping[str, bool]) -> set[str]:
    """Rules that node may call before consuming any input."""
    if isinstance(node, Ref):
        return {node.name}
    if isinstance(node, Seq):
        found: set[str] = set()
        for item in node.items:
            found |= _left_refs(item, empty)
            if not nullable(item, empty):
                break
        return found
    found = set()
    for child in children(node):
        found |= _left_refs(child, empty)
    return found
