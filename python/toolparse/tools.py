"""The one reader of a tools list: every layer that needs a request's tools (both engines,
the exports, the validator, the guard, the CLI) reads them here, under one set of rules.

Shapes taken: OpenAI Chat Completions (``{"type": "function", "function": {"name",
"description", "parameters", "strict"}}``), the flat Responses / Anthropic-like shape
(``{"type": "function", "name", "parameters"}``, or no ``type`` at all).  Tools of any
other type (a Responses built-in such as ``{"type": "web_search_preview"}``, gpt-oss's
browser and python tools, a server's custom tool) have no schema to type arguments by and
no name a function call could carry: they are skipped, so a list holding them parses like
the list of its function tools.  A function tool without a name, an entry that is not an
object, parameters that are not a schema and two tools of one name are errors that say
which entry.

A tool's schema is kept as given, strict mode applied (``strict: true``: OpenAI's reading,
strict_schema()); what types a parameter's value reads the schema with local ``$ref`` /
``$defs`` followed and ``allOf`` / ``anyOf`` / ``oneOf`` combined, its parameters those
declared at the top or in the branches of a top-level ``allOf`` / ``anyOf`` / ``oneOf``
(parameter_schemas()).
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any, TypeVar

ParamTypes = dict[str, dict[str, tuple[str, ...]]]

# how deep $ref is followed inside one parameter before a recursive schema is cut
# (its deeper levels are then untyped, read as strings): deeper than any value is typed
MAX_REF_DEPTH = 32

_DEFS = ("$defs", "definitions")

_Built = TypeVar("_Built")
# tables kept per builder: a server's requests mostly carry one of a few tools lists
TOOLS_CACHE_SIZE = 64


@dataclass(frozen=True)
class Tool:
    """One function tool: its name, its arguments' JSON Schema (a copy, strict mode
    applied), whether it is strict, its description, and the entry it was read from."""

    name: str
    parameters: dict[str, Any]
    strict: bool = False
    description: str | None = None
    definition: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @cached_property
    def parameter_schemas(self) -> dict[str, Any]:
        """Each top-level parameter's schema with its local references followed: what
        the parsers type a parameter written as text by."""
        found: dict[str, list[Any]] = {}
        _declared_properties(self.parameters, self.parameters, MAX_REF_DEPTH, found)
        schemas = {}
        for name, specs in found.items():
            unique = [inline_refs(s, self.parameters, MAX_REF_DEPTH) for s in _unique(specs)]
            # declared in several branches: read as any of them (the schema itself decides
            # which holds, when the arguments are validated)
            schemas[name] = unique[0] if len(unique) == 1 else {"anyOf": unique}
        return schemas


def _declared_properties(
    schema: Any, root: Mapping[str, Any], depth: int, out: dict[str, list[Any]]
) -> None:
    """Adds to `out` every property the parameters schema declares: at its top, behind a
    top-level ``$ref``, or in the branches of a top-level ``allOf`` / ``anyOf`` /
    ``oneOf`` (a tool whose arguments take one of several shapes), with each schema
    given for it."""
    if not isinstance(schema, Mapping) or depth < 0:
        return
    ref = schema.get("$ref")
    if isinstance(ref, str):
        _declared_properties(resolve_ref(ref, root), root, depth - 1, out)
    properties = schema.get("properties")
    if isinstance(properties, Mapping):
        for name, spec in properties.items():
            out.setdefault(name, []).append(spec)
    for key in ("allOf", "anyOf", "oneOf"):
        branches = schema.get(key)
        if isinstance(branches, list):
            for branch in branches:
                _declared_properties(branch, root, depth - 1, out)


def _unique(specs: list[Any]) -> list[Any]:
    seen: dict[str, Any] = {}
    for spec in specs:
        seen.setdefault(json.dumps(spec, sort_keys=True, default=str), spec)
    return list(seen.values())


def read_tools(tools: Sequence[Mapping[str, Any]] | None) -> list[Tool]:
    """The function tools of a tools list, in order (see the module docstring)."""
    if tools is None:
        return []
    if isinstance(tools, (str, bytes, Mapping)) or not isinstance(tools, Sequence):
        raise TypeError(f"tools must be a list of tool objects, not {type(tools).__name__}")
    read: list[Tool] = []
    seen: set[str] = set()
    for position, tool in enumerate(tools):
        if not isinstance(tool, Mapping):
            raise TypeError(f"tools[{position}] is not an object")
        if tool.get("type", "function") != "function":
            continue  # a built-in or custom tool: no function call names it
        function = tool.get("function", tool)
        if not isinstance(function, Mapping):
            raise TypeError(f"tools[{position}].function is not an object")
        name = function.get("name")
        if not isinstance(name, str) or not name:
            raise ValueError(f"tools[{position}] has no function name")
        if name in seen:
            raise ValueError(f"two tools are named {name!r}")
        seen.add(name)
        parameters = function.get("parameters")
        if parameters is None or parameters == {}:  # no parameters: any object
            parameters = {"type": "object"}
        if not isinstance(parameters, Mapping):
            raise ValueError(f"the parameters of tool {name!r} are not a JSON Schema object")
        strict = function.get("strict") is True
        schema = strict_schema(parameters, tool=name) if strict else copy.deepcopy(dict(parameters))
        description = function.get("description")
        read.append(
            Tool(name, schema, strict, description if isinstance(description, str) else None, tool)
        )
    return read


def tool_names(tools: Sequence[Mapping[str, Any]] | None) -> frozenset[str] | None:
    """The names a call may carry: None (any name) when no tools list is given."""
    return None if tools is None else frozenset(t.name for t in read_tools(tools))


def chosen_name(tool_choice: Mapping[str, Any]) -> str:
    """The name a named tool choice forces: ``{"type": "function", "function": {"name"}}``
    or the flat ``{"type": "function", "name"}``."""
    function = tool_choice.get("function", tool_choice)
    name = function.get("name") if isinstance(function, Mapping) else None
    if not isinstance(name, str) or not name:
        raise ValueError(f"a named tool_choice needs a function name: {tool_choice!r}")
    return name


def param_types(tools: Sequence[Mapping[str, Any]] | None) -> ParamTypes:
    """tool name -> parameter name -> the JSON types its value may be read as."""
    return {
        tool.name: {name: schema_types(spec) for name, spec in tool.parameter_schemas.items()}
        for tool in read_tools(tools)
    }


@dataclass(frozen=True)
class Stated:
    """What a schema states of a value: the JSON types it names (none: any value fits),
    and the same of its properties and its items; what a repair converts a value to."""

    types: tuple[str, ...]
    properties: Mapping[str, Stated] = field(default_factory=dict)
    items: Stated | None = None

    def __bool__(self) -> bool:
        return bool(self.types or self.properties or self.items)


def stated(spec: Any, depth: int = 0) -> Stated:
    """The Stated of a (reference-free) schema, its nesting read MAX_REF_DEPTH deep."""
    if not isinstance(spec, Mapping) or depth > MAX_REF_DEPTH:
        return Stated(())
    properties = spec.get("properties")
    items = spec.get("items")
    return Stated(
        _named_types(spec),
        {
            key: found
            for key, sub in (properties.items() if isinstance(properties, Mapping) else ())
            if (found := stated(sub, depth + 1))
        },
        (found if (found := stated(items, depth + 1)) else None)
        if isinstance(items, Mapping)
        else None,
    )


def stated_schemas(tools: Sequence[Mapping[str, Any]] | None) -> dict[str, dict[str, Stated]]:
    """tool name -> parameter name -> what its schema states; a parameter whose schema
    states nothing (any value fits it) is left out."""
    return {
        tool.name: {
            name: found for name, spec in tool.parameter_schemas.items() if (found := stated(spec))
        }
        for tool in read_tools(tools)
    }


def strict_schema(schema: Mapping[str, Any], *, tool: str = "") -> dict[str, Any]:
    """A copy of `schema` as OpenAI's strict mode reads it: every object schema (``type``
    "object" or a list holding it, or one with ``properties``) without
    ``additionalProperties`` gets ``false``, and ``required`` lists all of its properties,
    through ``properties``, ``items``, ``prefixItems``, ``anyOf``/``oneOf``/``allOf``,
    ``not``/``if``/``then``/``else``, ``$defs`` and ``definitions``.  An object schema
    whose ``additionalProperties`` is anything but false is an error, as the API rejects
    such a strict schema."""
    result = copy.deepcopy(dict(schema))
    _make_strict(result, "#", tool)
    return result


def _make_strict(schema: Any, where: str, tool: str) -> None:
    if not isinstance(schema, dict):
        return
    kind = schema.get("type")
    is_object = kind == "object" or (isinstance(kind, list) and "object" in kind)
    properties = schema.get("properties")
    if is_object or isinstance(properties, dict):
        extra = schema.setdefault("additionalProperties", False)
        if extra is not False:
            name = f"tool {tool!r}: " if tool else ""
            raise ValueError(
                f"{name}strict mode needs additionalProperties false at {where}, "
                f"the schema says {json.dumps(extra)}"
            )
        if isinstance(properties, dict):
            schema["required"] = list(properties)
            for key, sub in properties.items():
                _make_strict(sub, f"{where}/properties/{key}", tool)
    for key in ("items", "not", "if", "then", "else"):
        _make_strict(schema.get(key), f"{where}/{key}", tool)
    for key in ("anyOf", "oneOf", "allOf", "prefixItems", "items"):
        subs = schema.get(key)
        if isinstance(subs, list):
            for position, sub in enumerate(subs):
                _make_strict(sub, f"{where}/{key}/{position}", tool)
    for key in _DEFS:
        subs = schema.get(key)
        if isinstance(subs, dict):
            for name, sub in subs.items():
                _make_strict(sub, f"{where}/{key}/{name}", tool)


def resolve_ref(ref: str, root: Mapping[str, Any]) -> Any:
    """The schema a local JSON Pointer reference (``#/$defs/x``) points at, or None."""
    if not ref.startswith("#"):
        return None  # a remote reference: never fetched
    node: Any = root
    for part in ref[1:].split("/")[1:]:
        key = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and key in node:
            node = node[key]
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            return None
    return node


def inline_refs(schema: Any, root: Mapping[str, Any], depth: int) -> Any:
    """`schema` with each local ``$ref`` replaced by what it points at (its sibling
    keywords kept), to `depth` references deep; a reference past that, unresolvable or
    remote becomes the empty schema (any value)."""
    if isinstance(schema, list):
        return [inline_refs(s, root, depth) for s in schema]
    if not isinstance(schema, Mapping):
        return schema
    ref = schema.get("$ref")
    if isinstance(ref, str):
        target = resolve_ref(ref, root) if depth > 0 else None
        rest = {k: v for k, v in schema.items() if k != "$ref"}
        if not isinstance(target, Mapping):
            return inline_refs(rest, root, depth)
        return inline_refs({**target, **rest}, root, depth - 1)
    return {
        key: value if key in _DEFS else inline_refs(value, root, depth)
        for key, value in schema.items()
    }


# type names that are not JSON Schema's but say one of its types beyond doubt (tool
# definitions written from Python, C or Go signatures use them; vLLM and SGLang read them
# so): int, int32, uint64, long, float, float64, double, bool, str, dict, list
_TYPE_ALIASES = {"bool": "boolean", "str": "string", "dict": "object", "list": "array"}
_SIZED_TYPES = (
    (re.compile(r"(?:u?int|long|short)(?:8|16|32|64|128)?"), "integer"),
    (re.compile(r"(?:float|double)(?:16|32|64|128)?"), "number"),
)


def _json_type(name: str) -> str:
    """A type name as JSON Schema's (an alias read as its type, any other name kept)."""
    if name in _TYPE_ALIASES:
        return _TYPE_ALIASES[name]
    for pattern, json_type in _SIZED_TYPES:
        if pattern.fullmatch(name):
            return json_type
    return name


def schema_types(spec: Any) -> tuple[str, ...]:
    """The JSON types a (reference-free) schema allows, in its order, but null first: the
    text ``null`` is null wherever the schema admits null, a string parameter's too (only
    that text fits null); a schema that names none is a string: what a value written as
    text is read as."""
    named = _named_types(spec)
    if "null" in named[1:]:
        named = ("null", *(k for k in named if k != "null"))
    return named if named else ("string",)


def _named_types(spec: Any) -> tuple[str, ...]:
    if not isinstance(spec, Mapping):
        return ()
    kind = spec.get("type")
    if isinstance(kind, str):
        return (_json_type(kind),)
    if isinstance(kind, list):
        # each name once, in order (dict keys keep it)
        return tuple(dict.fromkeys(_json_type(k) for k in kind if isinstance(k, str)))
    for union in ("anyOf", "oneOf"):
        if isinstance(spec.get(union), list):
            found: list[str] = []
            for option in spec[union]:
                found += [k for k in schema_types(option) if k not in found]
            return tuple(found)
    if isinstance(spec.get("allOf"), list):  # every part holds: the first that says a type
        for part in spec["allOf"]:
            if named := _named_types(part):
                return named
    if "properties" in spec:
        return ("object",)
    if "items" in spec:
        return ("array",)
    return ()


class _ToolsKey:
    """A tools list keyed by its JSON text: equal texts are one key, whichever list object
    carries them (the list a table was first built from rides along to build it)."""

    __slots__ = ("hash", "text", "tools")

    def __init__(self, text: str, tools: Any) -> None:
        self.text = text
        self.tools = tools
        self.hash = hash(text)

    def __hash__(self) -> int:
        return self.hash

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _ToolsKey) and other.text == self.text


def per_tools_list(build: Callable[[Any], _Built]) -> Callable[[Any], _Built]:
    """build(tools), built once per tools list's content and then shared: a server makes a
    parser per request, mostly with the same tools, and reading a list's schemas costs far
    more than the parser.  What build returns must be read-only.  A list that is not JSON
    (a set inside, a cycle) is built anew each time."""
    cached = lru_cache(maxsize=TOOLS_CACHE_SIZE)(lambda key: build(key.tools))

    def built(tools: Any) -> _Built:
        try:
            text = json.dumps(tools, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError, RecursionError):
            return build(tools)
        return cached(_ToolsKey(text, tools))

    built.__doc__ = build.__doc__
    return built
