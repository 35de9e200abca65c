"""JSON Schema as the exports read it: an object's properties in either order, and the
values a schema allows lowered to the intermediate form, as JSON text (for the writers
that cannot hand a schema to their engine: the regex) or as Python literals (what the
parser reads in a format that writes them).  One walker reads the schema's keywords for
both; each notation spells what it finds."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ._ir import (
    EMPTY,
    Alt,
    Expr,
    Integers,
    JsonString,
    JsonValue,
    JsonWs,
    Lit,
    Optional_,
    Pattern,
    Repeat,
    RuleRef,
    Seq,
    Ws,
    concat,
    union,
)
from ._ranges import integer_bounds, integer_spellings

_DEFS = ("$defs", "definitions")
_SUBSCHEMAS = ("items", "additionalProperties", "not", "contains", "if", "then", "else")
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")


def either_order(schema: Any) -> Any:
    """The schema with each object's properties also taken in sorted order.

    A grammar engine may take an object's properties only in the order the schema lists
    them (llguidance does: its docs/json_schema.md, "Property order", and no option
    changes it; the GBNF export writes them so too), while a model writes them in the
    order its chat template showed: the schema's, or sorted (Jinja's own `tojson`,
    `json.dumps(sort_keys=True)`).  An object whose sorted order differs becomes `anyOf`
    the two orders (definitions stay at the root, where `$ref` finds them)."""
    if isinstance(schema, list):
        return [either_order(s) for s in schema]
    if not isinstance(schema, Mapping):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "properties" and isinstance(value, Mapping):
            out[key] = {name: either_order(sub) for name, sub in value.items()}
        elif key in _DEFS and isinstance(value, Mapping):
            out[key] = {name: either_order(sub) for name, sub in value.items()}
        elif key in _SUBSCHEMAS or key in _SCHEMA_LISTS:
            out[key] = either_order(value)
        else:
            out[key] = value
    props = out.get("properties")
    if not isinstance(props, Mapping) or list(props) == sorted(props):
        return out
    defs = {k: out.pop(k) for k in _DEFS if k in out}
    ordered = {**out, "properties": dict(sorted(props.items()))}
    return {"anyOf": [out, ordered], **defs}


# -- a schema's values --------------------------------------------------------------------

# minItems / maxItems above this are not checked in Python literals: each count is written
COUNT_LIMIT = 16
_FREE_RULE = "python-literal"  # any Python value, where values nest to any depth


def json_literal(value: Any) -> Lit:
    """A const or enum value as JSON text."""
    return Lit(json.dumps(value, ensure_ascii=False).encode())


def _members(members: Sequence[tuple[Expr, bool]], comma: Expr) -> Expr | None:
    """An object's declared members in their order, the required ones always and the
    others optionally, the comma between (None: no member at all); each optional one
    before a required one written once (a regex writes every member out in full)."""
    if not members:
        return None
    last_required = max((k for k, (_, req) in enumerate(members) if req), default=-1)
    if last_required < 0:
        # all optional: the first one present, then any of those after it
        firsts = []
        for k, (member, _) in enumerate(members):
            after = [Optional_(Seq((comma, m))) for m, _ in members[k + 1 :]]
            firsts.append(concat([member, *after]))
        return union(firsts)
    parts: list[Expr] = []
    for k, (member, req) in enumerate(members):
        if k < last_required:
            item = Seq((member, comma))
            parts.append(item if req else Optional_(item))
        elif k == last_required:
            parts.append(member)
        else:
            parts.append(Optional_(Seq((comma, member))))
    return concat(parts)


class _Values:
    """The values a JSON Schema allows, as an expression: the keywords read in one order
    for every notation ($ref, const, enum, anyOf / oneOf with the keywords beside them,
    a list of types, an object's declared properties, an array's items, a scalar type;
    a free-form value where the schema says nothing), which a subclass spells.  depth:
    how many containers a free-form value may nest (None: any number)."""

    ws: Expr  # whitespace between tokens
    string: Expr  # any string (a free-form object's keys)
    free_scalars: tuple[Expr, ...]  # a free-form value's scalars
    comma: Expr  # between an object's members

    def __init__(self, depth: int | None) -> None:
        self.depth = depth
        self.rules: dict[str, Expr] = {}  # rules the values refer to
        self._free: dict[int | None, Expr] = {}

    # what the notation spells

    def nothing(self, what: str) -> Expr | None:
        """No value is allowed (what: the schema's part that allows none)."""
        raise NotImplementedError

    def either(self, alts: Sequence[Expr | None], what: str) -> Expr | None:
        """One of the alternatives (what: the schema's part, where there are none)."""
        raise NotImplementedError

    def ref(self, schema: Mapping[str, Any], root: Any) -> Expr | None:
        raise NotImplementedError

    def literal(self, value: Any) -> Expr:
        raise NotImplementedError

    def scalar(self, kind: Any, schema: Mapping[str, Any]) -> Expr | None:
        """A value of any other type than an object or an array (kind: the schema's)."""
        raise NotImplementedError

    def enclose(self, opener: bytes, closer: bytes, body: Expr | None, empty: bool) -> Expr:
        """A container: its opener, its body (none where empty allows), its closer."""
        raise NotImplementedError

    def items(self, item: Expr, low: Any, high: Any) -> Expr | None:
        """Low to high items (None: no bound), commas between (None: no item at all)."""
        raise NotImplementedError

    def sequence(self, item: Expr | None, low: Any, high: Any) -> Expr | None:
        """An array of low to high items (None: no bound; item None: no item is
        allowed)."""
        raise NotImplementedError

    def intersection(self, schema: Mapping[str, Any]) -> None:
        """allOf beside the other keywords."""

    # what every notation reads alike

    def walk(self, schema: Any, root: Any) -> Expr | None:
        """A value valid against the schema (None: no value is); root: the schema that
        local $refs point into."""
        if schema is False:
            return self.nothing("the schema false (no value)")
        if not isinstance(schema, Mapping) or not schema:
            return self.free(self.depth)
        return self.typed(schema, root)

    def typed(self, schema: Mapping[str, Any], root: Any) -> Expr | None:
        if "$ref" in schema:
            return self.ref(schema, root)
        if "const" in schema:
            return self.literal(schema["const"])
        if isinstance(schema.get("enum"), list):
            return self.either([self.literal(v) for v in schema["enum"]], "an empty enum")
        for key in ("anyOf", "oneOf"):
            if isinstance(schema.get(key), list):
                rest = {k: v for k, v in schema.items() if k != key}
                subs = [{**rest, **s} if isinstance(s, Mapping) else s for s in schema[key]]
                return self.either([self.walk(s, root) for s in subs], f"an empty {key}")
        if "allOf" in schema:
            self.intersection(schema)
        kind = schema.get("type")
        if isinstance(kind, list):
            types = [self.walk({**schema, "type": k}, root) for k in kind]
            return self.either(types, "an empty type list")
        if kind == "object" or (kind is None and "properties" in schema):
            return self.object(schema, root)
        if kind == "array":
            items = schema.get("items", {})
            if items == {} or items is True:
                return self.free_array(self.depth)
            item = self.walk(items, root)
            return self.sequence(item, schema.get("minItems", 0), schema.get("maxItems"))
        return self.scalar(kind, schema)

    def pair(self, key: Expr, value: Expr) -> Expr:
        """A key, the colon and a value."""
        return Seq((key, self.ws, Lit(b":"), self.ws, value))

    def member(self, key: Expr, value: Expr) -> Expr:
        """An object's declared member."""
        return self.pair(key, value)

    def object(self, schema: Mapping[str, Any], root: Any) -> Expr | None:
        """The declared properties in their order, the required ones always, no other
        key; with none declared, any keys (the values additionalProperties types)."""
        props = schema.get("properties")
        extra = schema.get("additionalProperties")
        if not isinstance(props, Mapping) or not props:
            if extra is False:
                return self.enclose(b"{", b"}", None, False)
            value = self.walk(extra, root) if isinstance(extra, Mapping) else None
            return self.free_object(self.depth, value)
        required = set(schema.get("required") or [])
        members: list[tuple[Expr, bool]] = []
        for name, sub in props.items():
            value = self.walk(sub, root)
            if value is None:
                if name in required:
                    return None
                continue
            members.append((self.member(self.literal(str(name)), value), name in required))
        body = _members(members, self.comma)
        return self.enclose(b"{", b"}", body, not any(req for _, req in members))

    def free(self, depth: int | None) -> Expr:
        """Any value, nesting at most `depth` containers (None: any number, through a
        rule that holds itself)."""
        if depth in self._free:
            return self._free[depth]
        if depth is None:
            self._free[None] = RuleRef(_FREE_RULE)  # provisionally: the rule holds itself
        values: list[Expr | None] = [*self.free_scalars]
        if depth is None or depth > 0:
            values += [self.free_object(depth), self.free_array(depth)]
        found = self.either(values, "any value")
        assert found is not None
        if depth is None:
            self.rules[_FREE_RULE] = found
        else:
            self._free[depth] = found
        return self._free[depth]

    def free_object(self, depth: int | None, value: Expr | None = None) -> Expr:
        """An object of any keys; values of `value`, else of any value one container
        less deep."""
        if value is None:
            value = self.free(None if depth is None else depth - 1)
        return self.enclose(b"{", b"}", self.items(self.pair(self.string, value), 0, None), True)

    def free_array(self, depth: int | None) -> Expr:
        found = self.sequence(self.free(None if depth is None else depth - 1), 0, None)
        assert found is not None
        return found


class JsonValues(_Values):
    """JSON text valid against a schema, for a writer that spells JSON values itself.

    Whitespace between tokens is JsonWs (the writer says what it allows); a local $ref
    is followed in place (one that holds itself is refused: it nests without bound);
    string lengths and integer bounds are kept, and a number's minimum of zero or more
    (no sign: a cheap part of its bounds); allOf, false and an unknown type are refused
    (refuse: the writer's error for what it cannot express)."""

    ws = JsonWs()
    string = JsonString()
    _SCALARS: Mapping[str, Expr] = {
        "integer": Pattern("integer"),
        "number": Pattern("number"),
        "boolean": Alt((Lit(b"true"), Lit(b"false"))),
        "null": Lit(b"null"),
    }
    free_scalars = (string, _SCALARS["number"], _SCALARS["boolean"], _SCALARS["null"])
    comma = Seq((Lit(b","), JsonWs()))

    def __init__(self, depth: int, refuse: Callable[[str], NotImplementedError]) -> None:
        super().__init__(depth)
        self.refuse = refuse
        self._active: set[str] = set()  # the references being followed

    def nothing(self, what: str) -> Expr | None:
        raise self.refuse(what)

    def either(self, alts: Sequence[Expr | None], what: str) -> Expr | None:
        found = [a for a in alts if a is not None]
        if not found:
            raise self.refuse(what)
        return found[0] if len(found) == 1 else Alt(tuple(found))

    def intersection(self, schema: Mapping[str, Any]) -> None:
        raise self.refuse("allOf (an intersection of schemas)")

    def ref(self, schema: Mapping[str, Any], root: Any) -> Expr | None:
        ref = schema["$ref"]
        if not isinstance(ref, str) or not ref.startswith("#/"):
            raise self.refuse(f"the schema reference {ref!r}")
        if ref in self._active:
            raise self.refuse(f"the recursive schema reference {ref!r} (unbounded nesting)")
        target = root
        for part in ref[2:].split("/"):
            if not isinstance(target, Mapping) or part not in target:
                raise self.refuse(f"the schema reference {ref!r} (not found)")
            target = target[part]
        rest = {k: v for k, v in schema.items() if k != "$ref"}
        self._active.add(ref)
        try:
            return self.walk({**target, **rest}, root)
        finally:
            self._active.discard(ref)

    def literal(self, value: Any) -> Expr:
        return json_literal(value)

    def scalar(self, kind: Any, schema: Mapping[str, Any]) -> Expr | None:
        if kind == "string":
            low, high = schema.get("minLength", 0), schema.get("maxLength")
            if (low, high) == (0, None):
                return JsonString()
            return Seq((Lit(b'"'), Repeat(Pattern("json_char"), low, high), Lit(b'"')))
        if kind == "integer" and (bounds := integer_bounds(schema)) != (None, None):
            spellings = integer_spellings(*bounds)
            if not spellings:
                raise self.refuse("an integer range with no integer in it")
            return Integers(tuple(spellings))
        if kind == "number":
            low = schema.get("minimum", schema.get("exclusiveMinimum"))
            if isinstance(low, (int, float)) and low >= 0:
                return Pattern("unsigned_number")
        if kind in self._SCALARS:
            return self._SCALARS[kind]
        if kind is None:
            return self.free(self.depth)
        raise self.refuse(f"the schema type {kind!r}")

    def member(self, key: Expr, value: Expr) -> Expr:
        # the whitespace after it too: the members' commas follow it directly
        return concat([self.pair(key, value), self.ws])

    def enclose(self, opener: bytes, closer: bytes, body: Expr | None, empty: bool) -> Expr:
        if body is None:
            return Seq((Lit(opener), self.ws, Lit(closer)))
        return Seq((Lit(opener), self.ws, Optional_(body) if empty else body, Lit(closer)))

    def items(self, item: Expr, low: Any, high: Any) -> Expr | None:
        """Each item followed by whitespace."""
        if high == 0:
            return None
        more = Seq((Lit(b","), self.ws, item, self.ws))
        rest = Repeat(more, max(low - 1, 0), None if high is None else high - 1)
        return Seq((item, self.ws, rest))

    def sequence(self, item: Expr | None, low: Any, high: Any) -> Expr | None:
        assert item is not None
        body = self.items(item, low, high)
        return self.enclose(b"[", b"]", body, body is not None and not low >= 1)


# -- Python literal values -------------------------------------------------------------------

PYTHON_STRING = Pattern("python_string")
_PY_TRUE = Alt((Lit(b"True"), Lit(b"true")))
_PY_FALSE = Alt((Lit(b"False"), Lit(b"false")))
_PY_BOOLEAN = Alt((*_PY_TRUE.alts, *_PY_FALSE.alts))
_PY_NULL = Alt((Lit(b"None"), Lit(b"null")))
_PY_COMMA = Seq((Ws(), Lit(b","), Ws()))
_PY_TRAILING_COMMA = Optional_(Seq((Ws(), Lit(b","))))
_PY_SEQUENCES = ((b"[", b"]"), (b"(", b")"))  # a list, or a tuple (read as a list)
_NUMBER_KEYWORDS = ("type", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")


def python_strings(text: str) -> list[bytes]:
    """The spellings of a string as a Python literal, one per quote, escaped only where a
    literal must be: the backslash, the quote, a line break."""
    found = []
    for quote in ("'", '"'):
        body = text.replace("\\", "\\\\").replace(quote, "\\" + quote)
        body = body.replace("\n", "\\n").replace("\r", "\\r")
        found.append(f"{quote}{body}{quote}".encode())
    return found


class PythonLiterals(_Values):
    """Python literal values (json("python")) typed by a JSON Schema, as the parser reads
    them (reference/json.py's python dialect) and converts them to JSON
    (reference/pyliteral.py): strings in either quote with Python's escapes, True/False/
    None and JSON's true/false/null, JSON's numbers, dicts, lists and tuples, each with
    an optional trailing comma, whitespace between tokens.

    A schema is read as the other exports read one: an object's declared properties in
    their order or sorted (either_order), the required ones always, no other key; a
    const or enum string in each quote, escaped only where it must be (not every
    spelling the parser decodes to it); integer bounds as JsonValue writes them;
    minItems/maxItems up to COUNT_LIMIT; a free-form value (no type, no properties)
    nests to any depth through a rule that holds itself, or at most `depth` containers.
    A local $ref is a rule of its own; what allows no value is None.
    """

    ws = Ws()
    string = PYTHON_STRING
    free_scalars = (PYTHON_STRING, Pattern("number"), _PY_BOOLEAN, _PY_NULL)
    comma = _PY_COMMA

    def __init__(self, depth: int | None) -> None:
        super().__init__(depth)
        self._refs: dict[tuple[str, int], str] = {}
        self._memo: dict[tuple[str, int], Expr | None] = {}

    def value(self, schema: Any, root: Any = None) -> Expr | None:
        """A value valid against the schema (None: no value is); root: the schema that
        local $refs point into (the tool's parameters)."""
        return self.walk(either_order(schema), schema if root is None else root)

    def walk(self, schema: Any, root: Any) -> Expr | None:
        if schema is False or not isinstance(schema, Mapping) or not schema:
            return super().walk(schema, root)
        key = (json.dumps(schema, default=str), id(root))
        if key not in self._memo:  # one expression per schema: the exports write it once
            self._memo[key] = self.typed(schema, root)
        return self._memo[key]

    def nothing(self, what: str) -> Expr | None:
        return None

    def either(self, alts: Sequence[Expr | None], what: str) -> Expr | None:
        return union(alts)

    def ref(self, schema: Mapping[str, Any], root: Any) -> Expr | None:
        """A local $ref, as a rule of its own (a schema that refers to itself nests as
        deep as it says)."""
        target = _pointed(root, schema["$ref"])
        if not isinstance(target, Mapping):
            return self.free(self.depth)  # not a local schema: any value, as in GBNF
        rest = {k: v for k, v in schema.items() if k != "$ref"}
        key = (json.dumps(schema, default=str), id(root))
        if key not in self._refs:
            name = f"python-ref-{len(self._refs)}"
            self._refs[key] = name
            self.rules[name] = EMPTY  # provisionally: a reference to itself holds
            found = self.walk(either_order({**target, **rest}), root)
            if found is None:
                del self.rules[name]
                return None
            self.rules[name] = found
        name = self._refs[key]
        return RuleRef(name) if name in self.rules else None

    def literal(self, value: Any) -> Expr:
        """A const or enum value, as Python spells it (and JSON's words)."""
        if value is True:
            return _PY_TRUE
        if value is False:
            return _PY_FALSE
        if value is None:
            return _PY_NULL
        if isinstance(value, str):
            return Alt(tuple(Lit(s) for s in python_strings(value)))
        if isinstance(value, list):
            items = _seq_with(_PY_COMMA, [self.literal(v) for v in value])
            return Alt(tuple(self.enclose(o, c, items, False) for o, c in _PY_SEQUENCES))
        if isinstance(value, Mapping):
            members = [self.member(self.literal(str(k)), self.literal(v)) for k, v in value.items()]
            return self.enclose(b"{", b"}", _seq_with(_PY_COMMA, members), False)
        return Lit(json.dumps(value).encode())

    def scalar(self, kind: Any, schema: Mapping[str, Any]) -> Expr | None:
        if kind == "string":
            return PYTHON_STRING
        if kind in ("integer", "number"):
            return JsonValue({k: schema[k] for k in _NUMBER_KEYWORDS if k in schema})
        if kind == "boolean":
            return _PY_BOOLEAN
        if kind == "null":
            return _PY_NULL
        return self.free(self.depth)

    def enclose(self, opener: bytes, closer: bytes, body: Expr | None, empty: bool) -> Expr:
        """A container: its opener, the body (items or members; none where empty allows),
        an optional trailing comma after them, and its closer, whitespace between tokens."""
        if body is None:
            return Seq((Lit(opener), Ws(), Lit(closer)))
        inside = Seq((body, _PY_TRAILING_COMMA, Ws()))
        return Seq((Lit(opener), Ws(), Optional_(inside) if empty else inside, Lit(closer)))

    def sequence(self, item: Expr | None, low: Any, high: Any) -> Expr | None:
        """A list or a tuple (read as a list)."""
        low = low if isinstance(low, int) and low <= COUNT_LIMIT else 0
        high = high if isinstance(high, int) and high <= COUNT_LIMIT else None
        if item is None and low:
            return None
        # the items once for both (an export writes them once, share())
        body = None if item is None else self.items(item, low, high)
        return union([self.enclose(o, c, body, low == 0) for o, c in _PY_SEQUENCES])

    def items(self, item: Expr, low: Any, high: Any) -> Expr | None:
        if high == 0:
            return None
        more: Expr = Repeat(Seq((_PY_COMMA, item)), 0)
        if high is not None:
            more = EMPTY
            for _ in range(high - max(low, 1)):
                more = Optional_(concat([_PY_COMMA, item, more]))
        required = [Seq((_PY_COMMA, item))] * max(low - 1, 0)
        return concat([item, *required, more])


def _pointed(root: Any, ref: Any) -> Any:
    """What a local $ref ("#", "#/$defs/name") points to in root (None: nothing)."""
    if not isinstance(ref, str) or not ref.startswith("#"):
        return None
    target = root
    for part in ref[2:].split("/") if ref != "#" else ():
        target = target.get(part) if isinstance(target, Mapping) else None
    return target


def _seq_with(separator: Expr, items: Sequence[Expr]) -> Expr | None:
    """The items with the separator between them (None: no item)."""
    if not items:
        return None
    out: list[Expr] = [items[0]]
    for item in items[1:]:
        out += [separator, item]
    return concat(out)
