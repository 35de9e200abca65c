"""Pure-Python twin of csrc/m3value.c: a MiniMax-M3 tag-tree value to JSON text.

MiniMax-M3 writes an object argument as child tags named after its keys and an array as
``<item>`` children, each tag preceded by the namespace token ``]<]minimax[>[``,
recursively (``]<]minimax[>[<item>]<]minimax[>[<sku>A1]<]minimax[>[</sku>
]<]minimax[>[</item>``).  At each place of a value the tool schema decides, as llama.cpp's
minimax-m3 parser does: a place whose schema allows a string is a leaf (its raw text,
typed by the schema); an object or array place reads its child tags (whitespace between
them is allowed, any other text is malformed), an empty one is ``{}`` or ``[]``; a leaf is
typed by the schema types at its place, in order, a string when none fits.  Where the
schema does not say (a key it does not list, or it allows both or neither of object and
array), the tags do: a value of only ``<item>`` children is an array, one of other child
tags an object, and text without tags a string.  Closing tags must match their opening
tag; a malformed value makes the call's arguments invalid (None here).
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..formats.minimax_m3 import NS
from ..formats.minimax_m3 import VALUE_MAX_DEPTH as MAX_DEPTH

MAX_TYPES = 64  # types one schema node may list (TP_M3_MAX_TYPES)
_SPACE = " \t\r\n"

# the emitter's typing of a value written as text; None: it fits none of the types
TypedValue = Callable[[str, tuple[str, ...]], str | None]


@dataclass
class SchemaNode:
    """The schema at one place of a parameter value: its types, and for nested values
    its properties' and items' nodes."""

    types: tuple[str, ...]
    props: dict[str, SchemaNode] = field(default_factory=dict)
    items: SchemaNode | None = None


def schema_node(
    spec: Any, types_of: Callable[[Any], tuple[str, ...]], depth: int = 0
) -> SchemaNode:
    """The node of a JSON schema: its types (types_of), and, above MAX_DEPTH levels, its
    properties and items, from the schema itself or, failing that, from its first anyOf /
    oneOf option that has them."""
    node = SchemaNode(types_of(spec)[:MAX_TYPES])
    if not isinstance(spec, dict) or depth >= MAX_DEPTH:
        return node
    options = [spec]
    for union in ("anyOf", "oneOf"):
        if isinstance(spec.get(union), list):
            options += [o for o in spec[union] if isinstance(o, dict)]
    for option in options:
        props = option.get("properties")
        if isinstance(props, dict):
            for name, child in props.items():
                if isinstance(name, str) and name not in node.props:
                    node.props[name] = schema_node(child, types_of, depth + 1)
    for option in options:
        if isinstance(option.get("items"), dict):
            node.items = schema_node(option["items"], types_of, depth + 1)
            break
    return node


def encode_node(node: SchemaNode, codes: dict[str, int]) -> bytes:
    """The tool table bytes of a node (csrc/m3value.h)."""
    type_codes = [codes.get(t, 7) for t in node.types]
    out = bytearray(struct.pack(f"<I{len(type_codes)}I", len(type_codes), *type_codes))
    out += struct.pack("<I", len(node.props))
    for name, child in node.props.items():
        key = name.encode("utf-8", "surrogatepass")
        data = encode_node(child, codes)
        out += struct.pack("<I", len(key)) + key + struct.pack("<I", len(data)) + data
    items = encode_node(node.items, codes) if node.items is not None else b""
    out += struct.pack("<I", len(items)) + items
    return bytes(out)


class _Malformed(Exception):
    pass


def _children(text: str) -> list[tuple[str, str]]:
    """The (name, content) of each child element; _Malformed unless text is only
    elements and whitespace."""
    out: list[tuple[str, str]] = []
    n = len(text)
    k = 0
    while True:
        while k < n and text[k] in _SPACE:
            k += 1
        if k == n:
            return out
        if not text.startswith(NS + "<", k):
            raise _Malformed
        j = k + len(NS) + 1
        if j < n and text[j] == "/":
            raise _Malformed
        gt = _tag_end(text, j)
        if gt == j:
            raise _Malformed
        name = text[j:gt]
        start = j = gt + 1
        depth = 0
        while True:
            at = text.find(NS, j)
            if at < 0:
                raise _Malformed
            after = at + len(NS)
            if text.startswith("</", after):
                gt = _tag_end(text, after + 2)
                if depth == 0:
                    if text[after + 2 : gt] != name:
                        raise _Malformed
                    out.append((name, text[start:at]))
                    k = gt + 1
                    break
                depth -= 1
                j = gt + 1
            elif text.startswith("<", after):
                gt = _tag_end(text, after + 1)
                depth += 1
                j = gt + 1
            else:
                j = after


def _tag_end(text: str, k: int) -> int:
    """The position of the '>' that ends a tag name from k (no namespace token before)."""
    gt = text.find(">", k)
    ns = text.find(NS, k)
    if gt < 0 or 0 <= ns < gt:
        raise _Malformed
    return gt


def _leaf(text: str, types: tuple[str, ...], typed: TypedValue) -> str:
    """A value without nested tags; one that fits none of its types is malformed."""
    found = typed(text, types)
    if found is None:
        raise _Malformed
    return found


def _value(text: str, node: SchemaNode | None, typed: TypedValue, depth: int) -> str:
    types = (node.types or ("string",)) if node is not None else ("string",)
    obj = node is None or "object" in types
    arr = node is None or "array" in types
    if node is not None and "string" in types:
        return _leaf(text, types, typed)
    blank = text.strip(_SPACE) == ""
    if blank and arr != obj:
        return "[]" if arr else "{}"
    if blank or NS not in text:
        return _leaf(text, types, typed)
    if depth >= MAX_DEPTH:
        raise _Malformed
    children = _children(text)
    if arr == obj:
        arr = bool(children) and all(name == "item" for name, _ in children)
    parts = []
    for name, content in children:
        if arr:
            if name != "item":
                raise _Malformed
            child = node.items if node is not None else None
            parts.append(_value(content, child, typed, depth + 1))
        else:
            child = node.props.get(name) if node is not None else None
            key = _leaf(name, ("string",), typed)
            parts.append(key + ": " + _value(content, child, typed, depth + 1))
    return ("[" if arr else "{") + ", ".join(parts) + ("]" if arr else "}")


def m3_value_to_json(data: bytes, node: SchemaNode | None, typed: TypedValue) -> str | None:
    """The JSON text of a parameter's value (its text between its tags); node: its
    schema (None: the parameter is not in the schema); typed: the emitter's leaf typing.
    None when the tags are malformed."""
    try:
        return _value(data.decode("utf-8", "replace"), node, typed, 0)
    except _Malformed:
        return None
