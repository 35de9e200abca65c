"""JSON Schema as the exports read it: an object's properties in either order, and a value
a schema types lowered to the intermediate form (Python literal values, as the parser
reads them)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ._ir import (
    EMPTY,
    Alt,
    Expr,
    JsonValue,
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
# minItems / maxItems above this are not checked: each count is written out
COUNT_LIMIT = 16
_FREE_RULE = "python-literal"  # any value, where values nest to any depth


def python_strings(text: str) -> list[bytes]:
    """The spellings of a string as a Python literal, one per quote, escaped only where a
    literal must be: the backslash, the quote, a line break."""
    found = []
    for quote in ("'", '"'):
        body = text.replace("\\", "\\\\").replace(quote, "\\" + quote)
        body = body.replace("\n", "\\n").replace("\r", "\\r")
        found.append(f"{quote}{body}{quote}".encode())
    return found


def _enclosed(opener: bytes, closer: bytes, body: Expr | None, empty: bool) -> Expr:
    """A container: its opener, the body (items or members; none where empty allows),
    an optional trailing comma after them, and its closer, whitespace between tokens."""
    if body is None:
        return Seq((Lit(opener), Ws(), Lit(closer)))
    inside = Seq((body, _PY_TRAILING_COMMA, Ws()))
    return Seq((Lit(opener), Ws(), Optional_(inside) if empty else inside, Lit(closer)))


def _counted(item: Expr, low: int, high: int | None) -> Expr | None:
    """Items separated by commas, low to high of them (None: no item at all)."""
    if high == 0:
        return None
    more: Expr = Repeat(Seq((_PY_COMMA, item)), 0)
    if high is not None:
        more = EMPTY
        for _ in range(high - max(low, 1)):
            more = Optional_(concat([_PY_COMMA, item, more]))
    required = [Seq((_PY_COMMA, item))] * max(low - 1, 0)
    return concat([item, *required, more])


def _members(members: Sequence[tuple[Expr, bool]]) -> Expr | None:
    """A dict's declared members in their order, the required ones always and the others
    optionally, commas between (None: no member at all); as the regex export writes a
    JSON object, each optional one before a required one written once."""
    if not members:
        return None
    last_required = max((k for k, (_, req) in enumerate(members) if req), default=-1)
    if last_required < 0:
        # all optional: the first one present, then any of those after it
        firsts = []
        for k, (member, _) in enumerate(members):
            after = [Optional_(Seq((_PY_COMMA, m))) for m, _ in members[k + 1 :]]
            firsts.append(concat([member, *after]))
        return union(firsts)
    parts: list[Expr] = []
    for k, (member, req) in enumerate(members):
        if k < last_required:
            item = Seq((member, _PY_COMMA))
            parts.append(item if req else Optional_(item))
        elif k == last_required:
            parts.append(member)
        else:
            parts.append(Optional_(Seq((_PY_COMMA, member))))
    return concat(parts)


class PythonLiterals:
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
    """

    def __init__(self, depth: int | None) -> None:
        self.depth = depth
        self.rules: dict[str, Expr] = {}
        self._free: dict[int | None, Expr] = {}
        self._refs: dict[tuple[str, int], str] = {}
        self._memo: dict[tuple[str, int], Expr | None] = {}

    def value(self, schema: Any, root: Any = None) -> Expr | None:
        """A value valid against the schema (None: no value is); root: the schema that
        local $refs point into (the tool's parameters)."""
        return self.typed(either_order(schema), schema if root is None else root)

    def typed(self, schema: Any, root: Any) -> Expr | None:
        if schema is False:
            return None
        if not isinstance(schema, Mapping) or not schema:
            return self.free(self.depth)
        key = (json.dumps(schema, default=str), id(root))
        if key not in self._memo:  # one expression per schema: the exports write it once
            self._memo[key] = self._typed(schema, root)
        return self._memo[key]

    def _typed(self, schema: Mapping[str, Any], root: Any) -> Expr | None:
        if "$ref" in schema:
            return self.ref(schema, root)
        if "const" in schema:
            return self.literal(schema["const"])
        if isinstance(schema.get("enum"), list):
            return union([self.literal(v) for v in schema["enum"]])
        for key in ("anyOf", "oneOf"):
            if isinstance(schema.get(key), list):
                rest = {k: v for k, v in schema.items() if k != key}
                subs = [{**rest, **s} if isinstance(s, Mapping) else s for s in schema[key]]
                return union([self.typed(s, root) for s in subs])
        kind = schema.get("type")
        if isinstance(kind, list):
            return union([self.typed({**schema, "type": k}, root) for k in kind])
        if kind == "object" or (kind is None and "properties" in schema):
            return self.dict_(schema, root)
        if kind == "array":
            return self.sequence(schema, root)
        if kind == "string":
            return PYTHON_STRING
        if kind in ("integer", "number"):
            return JsonValue({k: schema[k] for k in _NUMBER_KEYWORDS if k in schema})
        if kind == "boolean":
            return _PY_BOOLEAN
        if kind == "null":
            return _PY_NULL
        return self.free(self.depth)

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
            found = self.typed(either_order({**target, **rest}), root)
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
            return Alt(tuple(_enclosed(o, c, items, False) for o, c in _PY_SEQUENCES))
        if isinstance(value, Mapping):
            members = [
                Seq((self.literal(str(k)), Ws(), Lit(b":"), Ws(), self.literal(v)))
                for k, v in value.items()
            ]
            return _enclosed(b"{", b"}", _seq_with(_PY_COMMA, members), False)
        return Lit(json.dumps(value).encode())

    def dict_(self, schema: Mapping[str, Any], root: Any) -> Expr | None:
        props = schema.get("properties")
        extra = schema.get("additionalProperties")
        if not isinstance(props, Mapping) or not props:
            if extra is False:
                return _enclosed(b"{", b"}", None, False)
            value = self.typed(extra, root) if isinstance(extra, Mapping) else None
            return self.free_dict(self.depth, value)
        required = set(schema.get("required") or [])
        members: list[tuple[Expr, bool]] = []
        for name, sub in props.items():
            value = self.typed(sub, root)
            if value is None:
                if name in required:
                    return None
                continue
            key = self.literal(str(name))
            members.append((Seq((key, Ws(), Lit(b":"), Ws(), value)), name in required))
        body = _members(members)
        return _enclosed(b"{", b"}", body, not any(req for _, req in members))

    def sequence(self, schema: Mapping[str, Any], root: Any) -> Expr | None:
        items = schema.get("items", {})
        if items == {} or items is True:
            return self.free_sequence(self.depth)
        item = self.typed(items, root)
        low = schema.get("minItems", 0)
        high = schema.get("maxItems")
        low = low if isinstance(low, int) and low <= COUNT_LIMIT else 0
        high = high if isinstance(high, int) and high <= COUNT_LIMIT else None
        if item is None and low:
            return None
        body = None if item is None else _counted(item, low, high)
        return union([_enclosed(o, c, body, low == 0) for o, c in _PY_SEQUENCES])

    def free(self, depth: int | None) -> Expr:
        """Any value, nesting at most `depth` containers (None: any number, through a
        rule that holds itself)."""
        if depth in self._free:
            return self._free[depth]
        if depth is None:
            self._free[None] = RuleRef(_FREE_RULE)  # provisionally: the rule holds itself
        values: list[Expr | None] = [PYTHON_STRING, Pattern("number"), _PY_BOOLEAN, _PY_NULL]
        if depth is None or depth > 0:
            values += [self.free_dict(depth), self.free_sequence(depth)]
        found = union(values)
        assert found is not None
        if depth is None:
            self.rules[_FREE_RULE] = found
        else:
            self._free[depth] = found
        return self._free[depth]

    def free_dict(self, depth: int | None, value: Expr | None = None) -> Expr:
        """A dict of any string keys; values of `value`, else of any value one container
        less deep."""
        if value is None:
            value = self.free(None if depth is None else depth - 1)
        member = Seq((PYTHON_STRING, Ws(), Lit(b":"), Ws(), value))
        return _enclosed(b"{", b"}", _counted(member, 0, None), True)

    def free_sequence(self, depth: int | None) -> Expr:
        item = self.free(None if depth is None else depth - 1)
        body = _counted(item, 0, None)
        found = union([_enclosed(o, c, body, True) for o, c in _PY_SEQUENCES])
        assert found is not None
        return found


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
