"""Schema validation of complete tool calls against the OpenAI ``tools`` list.

Parsing is never authorization: a ``ToolCallEnd`` says the call is complete, not that its
arguments fit the tool.  ``ToolValidator`` compiles the JSON Schema of every tool once
(``function.parameters``) and checks each call's ``arguments`` against it::

    validator = ToolValidator(tools, format="qwen3")
    report = validator.validate(message)          # one CallValidation per call
    for result in report.results:
        if not result.ok:
            send_back_to_model(result.feedback)   # which field, what was expected, an example

A call comes back as ``valid``, ``invalid_arguments`` (with one ``ValidationIssue`` per
problem: the path to the field, what was expected, what was found) or ``unknown_tool``
(a name outside the tools list).  ``feedback`` is a short text for the model: the fields
to fix and a one-line example of a valid call written in the format the model uses,
built from the format's own example with the tool's name and a minimal valid argument
object, and checked by parsing it back (formats whose calls need line breaks keep them).

Strict tools (``"strict": true``) are held to OpenAI's strict mode: every object schema
without ``additionalProperties`` is closed (``false``) and all of its properties are
required (nullable types stand for optional fields).  A strict schema that explicitly
allows additional properties is rejected, as the API rejects it.

Validation uses jsonschema-rs (the ``validate`` extra: ``pip install 'toolparse[validate]'``),
chosen by measurement over jsonschema and fastjsonschema (benchmarks/bench_validate.py):
it is the fastest to validate, compiles a tools list in about 0.1 ms, reports every error
with a machine-readable kind, and implements draft 2020-12 (``$defs``, ``prefixItems``).
Formats (``"format": "date-time"``) are not checked, remote ``$ref`` are never fetched.
"""

from __future__ import annotations

import difflib
import json
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..formats import Format, get_format
from ..message import Message, ToolCall
from ..tools import Tool, read_tools

Path = tuple[str | int, ...]
CallStatus = Literal["valid", "invalid_arguments", "unknown_tool"]

INSTALL_HINT = (
    "tool call validation needs the jsonschema-rs package: "
    "pip install 'toolparse[validate]' (or pip install jsonschema-rs)"
)
# At most this many issues are listed in a feedback message (all of them stay in .issues).
MAX_LISTED_ISSUES = 6
# What `found` says of a required field that is missing.
MISSING = "nothing (the field is missing)"
# At most this many tool names are listed when a call names an unknown tool.
MAX_LISTED_TOOLS = 20


# ---------------------------------------------------------------------------------------
# Results


@dataclass(frozen=True)
class ValidationIssue:
    """One problem with a call's arguments.

    path: the keys and array indexes from the arguments object to the field (``()`` is
    the arguments object itself).  keyword: the JSON Schema keyword that failed
    ("required", "type", "enum", "additionalProperties", ...), or "unknown_tool".
    expected / found: short phrases ("a string", 'the integer 3').
    """

    path: Path
    keyword: str
    expected: str
    found: str

    @property
    def location(self) -> str:
        """The path as the model would write it: ``passengers[0].age``."""
        return format_path(self.path)

    @property
    def message(self) -> str:
        return f"{self.location}: expected {self.expected}, found {self.found}"

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True)
class CallValidation:
    """The verdict on one call.

    status: "valid", "invalid_arguments" or "unknown_tool".  issues: what is wrong (empty
    when valid).  example: a valid call of the tool written in the active format (for an
    unknown tool, of the closest known tool), or None when none could be built.
    feedback: the text to give back to the model; empty when the call is valid.
    """

    call: ToolCall
    status: CallStatus
    issues: tuple[ValidationIssue, ...] = ()
    example: str | None = None
    feedback: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "valid"


@dataclass(frozen=True)
class ValidationReport:
    """The verdicts on the calls of one response, in the order of the calls."""

    results: tuple[CallValidation, ...] = ()

    @property
    def ok(self) -> bool:
        """No call failed validation (a response without calls is ok)."""
        return all(result.ok for result in self.results)

    @property
    def failures(self) -> tuple[CallValidation, ...]:
        return tuple(result for result in self.results if not result.ok)

    @property
    def feedback(self) -> str:
        """The feedback of every failed call, one paragraph each."""
        return "\n\n".join(result.feedback for result in self.failures)

    def for_call(self, call: ToolCall) -> CallValidation | None:
        """The verdict on this very call (same index, same content), or None."""
        for result in self.results:
            if result.call == call:
                return result
        return None


# ---------------------------------------------------------------------------------------
# The tools list and strict mode


# ---------------------------------------------------------------------------------------
# The validator


def _backend() -> Any:
    try:
        import jsonschema_rs  # type: ignore[import-not-found, unused-ignore]
    except ImportError as error:
        raise ImportError(INSTALL_HINT) from error
    return jsonschema_rs


class _Tool:
    """A tool compiled once: its spec, its validator, and (built on first need) the
    minimal valid arguments and the example call."""

    __slots__ = ("example", "spec", "validator")

    def __init__(self, spec: Tool, backend: Any) -> None:
        self.spec = spec
        schema = spec.parameters
        if "properties" not in schema and schema.get("additionalProperties") is False:
            # a closed object with no properties: so that a field it refuses is reported
            # by its name, as one with properties reports it
            schema = {**schema, "properties": {}}
        try:
            self.validator = backend.validator_for(schema, validate_formats=False, offline=True)
        except ValueError as error:
            first_line = str(error).strip().splitlines()[0] if str(error).strip() else ""
            raise ValueError(
                f"the parameters of tool {spec.name!r} are not a usable JSON Schema: {first_line}"
            ) from error
        self.example: tuple[str | None] | None = None  # (the example,) once built


class ToolValidator:
    """Validates tool calls against an OpenAI tools list, compiled once.

    tools: the tools list given to the model (Chat Completions or Responses shape).
    format: the format the model writes (a name, an alias or a Format); it is used only
    for the example calls in the feedback.  Without it, examples are written as the
    generic JSON object ``{"name": ..., "arguments": {...}}``.

    Raises ImportError (with the install command) when jsonschema-rs is missing, and
    ValueError for a tools list whose schemas cannot be used.
    """

    def __init__(
        self, tools: Sequence[Mapping[str, Any]], *, format: str | Format | None = None
    ) -> None:
        backend = _backend()
        self.format = get_format(format) if format is not None else None
        self._tools = {spec.name: _Tool(spec, backend) for spec in read_tools(tools)}

    @property
    def names(self) -> tuple[str, ...]:
        """The tool names, in the order of the tools list."""
        return tuple(self._tools)

    def spec(self, name: str) -> Tool | None:
        tool = self._tools.get(name)
        return tool.spec if tool else None

    def issues(self, name: str, arguments: Any) -> list[ValidationIssue]:
        """The problems of `arguments` for tool `name` (which must exist); [] if valid."""
        tool = self._tools[name]
        if tool.validator.is_valid(arguments):
            return []
        found: list[ValidationIssue] = []
        for error in tool.validator.iter_errors(arguments):
            found.extend(_issues_of(error, tool.spec.parameters))
        return found

    def validate_call(self, call: ToolCall) -> CallValidation:
        tool = self._tools.get(call.name)
        if tool is None:
            return self._unknown(call)
        if tool.validator.is_valid(call.arguments):
            example = self.example_call(call.name) if call.repaired else None
            return CallValidation(call, "valid", (), example)
        issues = tuple(self.issues(call.name, call.arguments))
        example = self.example_call(call.name)
        arguments = self.minimal_arguments(call.name)
        feedback = _invalid_feedback(call.name, issues, example, arguments)
        return CallValidation(call, "invalid_arguments", issues, example, feedback)

    def validate(self, message: Message | Sequence[ToolCall]) -> ValidationReport:
        """The verdicts on every call of a message (or of a list of calls)."""
        calls = message.tool_calls if isinstance(message, Message) else message
        return ValidationReport(tuple(self.validate_call(call) for call in calls))

    def minimal_arguments(self, name: str) -> dict[str, Any] | None:
        """Small valid arguments for tool `name`: the required fields only, each the first
        enum value, the lower bound, ``"..."`` for free text; None when the schema
        admits no such simple value (a pattern, say)."""
        tool = self._tools[name]
        try:
            arguments = _minimal(tool.spec.parameters, tool.spec.parameters, 0)
        except _NoExample:
            return None
        if not isinstance(arguments, dict) or not tool.validator.is_valid(arguments):
            return None
        return arguments

    def example_call(self, name: str) -> str | None:
        """A valid call of tool `name` written in the active format, on one line where
        the format allows it; None when none could be built and checked."""
        tool = self._tools[name]
        if tool.example is None:
            tool.example = (self._build_example(tool),)
        return tool.example[0]

    def _build_example(self, tool: _Tool) -> str | None:
        arguments = self.minimal_arguments(tool.spec.name)
        if arguments is None:
            return None
        if self.format is None:
            return json.dumps({"name": tool.spec.name, "arguments": arguments}, ensure_ascii=False)
        return render_call(self.format, dict(tool.spec.definition), arguments)

    def _unknown(self, call: ToolCall) -> CallValidation:
        close = difflib.get_close_matches(call.name, list(self._tools), n=1, cutoff=0.6)
        suggestion = close[0] if close else None
        example = self.example_call(suggestion) if suggestion else None
        known = list(self._tools)
        listed = ", ".join(known[:MAX_LISTED_TOOLS]) + (
            ", ..." if len(known) > MAX_LISTED_TOOLS else ""
        )
        issue = ValidationIssue(
            (),
            "unknown_tool",
            f"one of the tools ({listed})" if known else "no tool call (no tools are available)",
            f"the tool name {json.dumps(call.name, ensure_ascii=False)}",
        )
        lines = [f"There is no tool named {json.dumps(call.name, ensure_ascii=False)}."]
        if suggestion:
            lines[0] += f" Did you mean {suggestion}?"
        lines.append(f"The available tools are: {listed}." if known else "No tools are available.")
        if example:
            lines.append(f"A valid call: {example}")
        return CallValidation(call, "unknown_tool", (issue,), example, "\n".join(lines))


def validate(
    message: Message | Sequence[ToolCall],
    tools: Sequence[Mapping[str, Any]],
    *,
    format: str | Format | None = None,
) -> ValidationReport:
    """One-off validation; compile a ToolValidator once to validate many responses."""
    return ToolValidator(tools, format=format).validate(message)


def _invalid_feedback(
    name: str,
    issues: Sequence[ValidationIssue],
    example: str | None,
    arguments: dict[str, Any] | None,
) -> str:
    lines = [f"The call to {name} has invalid arguments:"]
    lines += [f"- {issue.message}" for issue in issues[:MAX_LISTED_ISSUES]]
    if len(issues) > MAX_LISTED_ISSUES:
        lines.append(f"- and {len(issues) - MAX_LISTED_ISSUES} more")
    if example:
        lines.append(f"A valid call: {example}")
    elif arguments is not None:
        lines.append(f"Valid arguments: {json.dumps(arguments, ensure_ascii=False)}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------
# Describing paths, values and schemas


def format_path(path: Path) -> str:
    """``("passengers", 0, "age")`` -> ``passengers[0].age``; ``()`` -> ``the arguments``."""
    if not path:
        return "the arguments"
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part.isidentifier():
            out += f".{part}" if out else part
        else:
            out += f"[{json.dumps(part, ensure_ascii=False)}]"
    return out


def describe_value(value: Any) -> str:
    """A JSON value in a few words: ``the integer 3``, ``the string "kelvin"``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"the boolean {'true' if value else 'false'}"
    if isinstance(value, int):
        return f"the integer {value}"
    if isinstance(value, float):
        return f"the number {value!r}" if math.isfinite(value) else "a non-finite number"
    if isinstance(value, str):
        short = value if len(value) <= 40 else value[:37] + "..."
        return f"the string {json.dumps(short, ensure_ascii=False)}"
    if isinstance(value, list):
        count = len(value)
        if not count:
            return "an empty array"
        return f"an array of {count} item{'' if count == 1 else 's'}"
    if isinstance(value, dict):
        return "an empty object" if not value else "an object"
    return f"a {type(value).__name__}"


_TYPE_WORDS = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
    "array": "an array",
    "object": "an object",
    "null": "null",
}


def _types_phrase(types: Sequence[Any]) -> str:
    words = [_TYPE_WORDS.get(str(t), str(t)) for t in types]
    return " or ".join(words) if words else "a value"


def _json_list(values: Sequence[Any]) -> str:
    shown = [json.dumps(v, ensure_ascii=False) for v in values[:10]]
    return ", ".join(shown) + (", ..." if len(values) > 10 else "")


def _resolve(schema: Any, root: Any, depth: int = 0) -> Any:
    """Follows a local ``$ref`` ("#/$defs/X"); anything else is returned as it is."""
    while isinstance(schema, dict) and isinstance(schema.get("$ref"), str) and depth < 32:
        target = _pointer(root, schema["$ref"])
        if target is None:
            return schema
        schema, depth = target, depth + 1
    return schema


def _pointer(root: Any, ref: str) -> Any:
    if not ref.startswith("#"):
        return None
    node = root
    for token in ref[1:].split("/")[1:]:
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return None
    return node


def _at(root: Any, schema_path: Sequence[str | int]) -> Any:
    node = root
    for token in schema_path:
        if isinstance(node, dict) and str(token) in node:
            node = node[str(token)]
        elif isinstance(node, list) and isinstance(token, int) and 0 <= token < len(node):
            node = node[token]
        elif isinstance(node, list) and str(token).isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return None
    return node


def describe_schema(schema: Any, root: Any = None, depth: int = 0) -> str:
    """What a schema accepts, in a few words: ``a string``, ``one of "a", "b"``."""
    schema = _resolve(schema, root if root is not None else schema)
    if schema is True or schema == {}:
        return "any value"
    if schema is False:
        return "no value"
    if not isinstance(schema, dict) or depth > 4:
        return "a value"
    if "const" in schema:
        return f"exactly {json.dumps(schema['const'], ensure_ascii=False)}"
    if isinstance(schema.get("enum"), list):
        return f"one of {_json_list(schema['enum'])}"
    kind = schema.get("type")
    if isinstance(kind, str):
        return _TYPE_WORDS.get(kind, kind)
    if isinstance(kind, list):
        return _types_phrase(kind)
    for union in ("anyOf", "oneOf"):
        options = schema.get(union)
        if isinstance(options, list) and options:
            return " or ".join(describe_schema(o, root, depth + 1) for o in options)
    if "properties" in schema:
        return "an object"
    if "items" in schema or "prefixItems" in schema:
        return "an array"
    return "a value"


# ---------------------------------------------------------------------------------------
# From the backend's errors to issues


_BOUNDS = {
    "Minimum": "a number >= {limit}",
    "Maximum": "a number <= {limit}",
    "ExclusiveMinimum": "a number > {limit}",
    "ExclusiveMaximum": "a number < {limit}",
    "MinLength": "a string of at least {limit} characters",
    "MaxLength": "a string of at most {limit} characters",
    "MinItems": "an array of at least {limit} items",
    "MaxItems": "an array of at most {limit} items",
    "MinProperties": "an object with at least {limit} fields",
    "MaxProperties": "an object with at most {limit} fields",
}

_KEYWORDS = {
    "AdditionalProperties": "additionalProperties",
    "AnyOf": "anyOf",
    "OneOfNotValid": "oneOf",
    "OneOfMultipleValid": "oneOf",
    "MultipleOf": "multipleOf",
    "UniqueItems": "uniqueItems",
    "FalseSchema": "false",
    "UnevaluatedProperties": "unevaluatedProperties",
}


def _keyword(kind_name: str) -> str:
    if kind_name in _KEYWORDS:
        return _KEYWORDS[kind_name]
    return kind_name[:1].lower() + kind_name[1:]


def _issues_of(error: Any, root: dict[str, Any]) -> Iterator[ValidationIssue]:
    """The issues one backend error stands for (one per unexpected property, say)."""
    path: Path = tuple(error.instance_path)
    kind = type(error.kind).__name__
    info: dict[str, Any] = error.kind.as_dict()
    instance = error.instance
    found = describe_value(instance)
    keyword = _keyword(kind)
    if kind == "Required":
        name = str(info["property"])
        parent = _resolve(_at(root, list(error.schema_path)[:-1]), root)
        props = parent.get("properties") if isinstance(parent, dict) else None
        sub = props.get(name) if isinstance(props, dict) else None
        expected = describe_schema(sub, root) if sub is not None else "a value"
        yield ValidationIssue((*path, name), keyword, f"{expected} (required)", MISSING)
    elif kind in ("AdditionalProperties", "UnevaluatedProperties"):
        parent = _resolve(_at(root, list(error.schema_path)[:-1]), root)
        props = parent.get("properties") if isinstance(parent, dict) else None
        allowed = list(props) if isinstance(props, dict) else []
        expected = "only the fields " + ", ".join(allowed) if allowed else "no fields at all"
        for name in info.get("unexpected") or ():
            value = instance.get(name) if isinstance(instance, dict) else None
            found = f"an extra field ({describe_value(value)})"
            yield ValidationIssue((*path, str(name)), keyword, expected, found)
    elif kind == "Type":
        yield ValidationIssue(path, keyword, _types_phrase(info.get("types") or ()), found)
    elif kind == "Enum":
        yield ValidationIssue(path, keyword, f"one of {_json_list(info['options'])}", found)
    elif kind == "Constant":
        expected = f"exactly {json.dumps(info['expected_value'], ensure_ascii=False)}"
        yield ValidationIssue(path, "const", expected, found)
    elif kind in _BOUNDS:
        expected = _BOUNDS[kind].format(limit=info.get("limit"))
        yield ValidationIssue(path, keyword, expected, found)
    elif kind == "Pattern":
        yield ValidationIssue(path, keyword, f"a string matching {info['pattern']}", found)
    elif kind == "MultipleOf":
        yield ValidationIssue(path, keyword, f"a multiple of {info['multiple_of']}", found)
    elif kind == "UniqueItems":
        yield ValidationIssue(path, keyword, "an array without repeated items", found)
    elif kind == "Format":
        yield ValidationIssue(path, keyword, f"a string in the {info['format']} format", found)
    elif kind == "FalseSchema":
        yield ValidationIssue(path, keyword, "no value here", found)
    elif kind in ("AnyOf", "OneOfNotValid"):
        best = _best_alternative(error, path)
        if best is not None:
            for inner in best:
                yield from _issues_of(inner, root)
            return
        union = _at(root, list(error.schema_path)[:-1])
        yield ValidationIssue(path, keyword, describe_schema(union, root), found)
    elif kind == "OneOfMultipleValid":
        union = _at(root, list(error.schema_path)[:-1])
        expected = f"exactly one of: {describe_schema(union, root)}"
        yield ValidationIssue(path, keyword, expected, f"{found}, which fits several")
    else:
        yield ValidationIssue(path, keyword, str(error.message), found)


def _best_alternative(error: Any, path: Path) -> list[Any] | None:
    """Of the alternatives of a failed anyOf/oneOf, the one the value was meant for: the
    only one whose errors are not just a wrong type (or value) at the value itself.  So
    {"name": 3} against "an object or null" reports the wrong name, not the whole union."""
    context = getattr(error.kind, "context", None)
    if not isinstance(context, list):
        return None
    shallow = ("Type", "Enum", "Constant", "FalseSchema")
    candidates = [
        errors
        for errors in context
        if errors
        and not all(
            type(e.kind).__name__ in shallow and tuple(e.instance_path) == path for e in errors
        )
    ]
    return candidates[0] if len(candidates) == 1 else None


# ---------------------------------------------------------------------------------------
# Minimal valid arguments


class _NoExample(Exception):
    pass


def _minimal(schema: Any, root: Any, depth: int) -> Any:
    if depth > 12:
        raise _NoExample
    schema = _resolve(schema, root)
    if schema is True or schema == {}:
        return "..."
    if not isinstance(schema, dict):
        raise _NoExample
    for key in ("const",):
        if key in schema:
            return schema[key]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    if isinstance(schema.get("examples"), list) and schema["examples"]:
        return schema["examples"][0]
    if "default" in schema and schema["default"] is not None:
        return schema["default"]
    for union in ("anyOf", "oneOf"):
        options = schema.get(union)
        if isinstance(options, list) and options:
            not_null = [o for o in options if _resolve(o, root) != {"type": "null"}]
            return _minimal((not_null or options)[0], root, depth + 1)
    if isinstance(schema.get("allOf"), list) and len(schema["allOf"]) == 1:
        return _minimal(schema["allOf"][0], root, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"] or kind
        kind = kinds[0] if kinds else None
    if kind is None:
        kind = "object" if "properties" in schema else "array" if "items" in schema else None
    if kind == "object":
        props = schema.get("properties") or {}
        out: dict[str, Any] = {}
        for name in schema.get("required") or ():
            out[name] = _minimal(props.get(name, True), root, depth + 1)
        return out
    if kind == "array":
        count = int(schema.get("minItems") or 0)
        return [_minimal(schema.get("items", True), root, depth + 1) for _ in range(count)]
    if kind in ("integer", "number"):
        if "minimum" in schema:
            return schema["minimum"]
        if "exclusiveMinimum" in schema:
            return math.floor(schema["exclusiveMinimum"]) + 1
        if "maximum" in schema and schema["maximum"] < 0:
            return schema["maximum"]
        return 0
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    if kind == "string" or kind is None:
        if "pattern" in schema:
            raise _NoExample
        return "..." if int(schema.get("minLength") or 0) <= 3 else "x" * schema["minLength"]
    raise _NoExample


# ---------------------------------------------------------------------------------------
# Example calls in a format's own notation
#
# A format's example (Format.examples) is a real output with at least one call.  The
# text of its first call is taken as a template: the call's name and its arguments are
# located in it (the arguments in the notation the output uses: a JSON object, Python
# keyword arguments, Gemma values, or one XML-style element per parameter), the rest of
# the output (reasoning, prose, further calls) is cut away, keeping the markers that
# open and close the call block, and the line breaks the format does not need are
# dropped.  Every step is checked by parsing the text back.  A call of another tool is
# the template with the name and the arguments replaced; it is parsed back with the
# tool's schema and used only if it gives exactly the intended call.

Notation = Literal["json", "python", "gemma", "gemma_escape", "params"]
# Gemma notation's string delimiters: Gemma 4's, and FunctionGemma's ("gemma_escape").
_GEMMA_QUOTES = {"gemma": '<|"|>', "gemma_escape": "<escape>"}
# Stands for the key in an element's closing text that names it (MiniMax-M3's </KEY>).
_KEY_SLOT = "\x00"


@dataclass(frozen=True)
class _Template:
    before: str
    between: str
    after: str
    name_first: bool
    notation: Notation
    # params notation: text before the key, between key and value, after the value, and
    # the separator after each element.
    element: tuple[str, str, str, str] = ("", "", "", "")

    def render(self, name: str, arguments: Mapping[str, Any]) -> str:
        args = _render_arguments(self, arguments)
        first, second = (name, args) if self.name_first else (args, name)
        return f"{self.before}{first}{self.between}{second}{self.after}"


def _render_arguments(template: _Template, arguments: Mapping[str, Any]) -> str:
    if template.notation == "json":
        return json.dumps(arguments, ensure_ascii=False)
    if template.notation == "python":
        return ", ".join(f"{key}={_python_literal(value)}" for key, value in arguments.items())
    if template.notation in _GEMMA_QUOTES:
        return _gemma_value(dict(arguments), _GEMMA_QUOTES[template.notation])
    pre, mid, post, sep = template.element
    parts = []
    for key, value in arguments.items():
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        middle = mid
        if not isinstance(value, str) and 'string="true"' in mid:
            middle = mid.replace('string="true"', 'string="false"')  # DeepSeek DSML
        if not isinstance(value, str) and 'type="string"' in mid:
            middle = mid.replace('type="string"', f'type="{_json_type(value)}"')  # Kimi K3
        parts.append(f"{pre}{key}{middle}{text}{post.replace(_KEY_SLOT, key)}{sep}")
    return "".join(parts)


def _json_type(value: Any) -> str:
    """The JSON Schema type name of a value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    return "array" if isinstance(value, list) else "object"


def _python_literal(value: Any) -> str:
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(_python_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        items = (
            f"{json.dumps(k, ensure_ascii=False)}: {_python_literal(v)}" for k, v in value.items()
        )
        return "{" + ", ".join(items) + "}"
    return json.dumps(value)


def _gemma_value(value: Any, quote: str) -> str:
    if isinstance(value, str):
        return f"{quote}{value}{quote}"
    if isinstance(value, list):
        return "[" + ",".join(_gemma_value(v, quote) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{_gemma_value(v, quote)}" for k, v in value.items()) + "}"
    return json.dumps(value)


def render_call(
    format: str | Format, tool: Mapping[str, Any], arguments: Mapping[str, Any]
) -> str | None:
    """A call of `tool` (an entry of the tools list) with `arguments`, written in the
    format's notation, on one line where the format allows it.  None when the format's
    examples give no template, or the text does not parse back to exactly this call."""
    fmt = get_format(format)
    template = _template(fmt)
    if template is None:
        return None
    spec = read_tools([tool])[0]
    text = template.render(spec.name, arguments)
    if _parses_to(fmt, text, [dict(tool)], spec.name, arguments):
        return text
    return None


def _parses_to(
    fmt: Format,
    text: str,
    tools: list[dict[str, Any]] | None,
    name: str,
    arguments: Mapping[str, Any],
) -> bool:
    from ..stream import parse

    try:
        message = parse(text, fmt, tools=tools, reasoning_in_prompt=False)
    except (ValueError, RuntimeError):
        return False
    if message.errors or (message.content or "").strip() or message.reasoning_content:
        return False
    if len(message.tool_calls) != 1:
        return False
    call = message.tool_calls[0]
    return call.name == name and call.arguments == arguments and not call.repaired


_TEMPLATES: dict[str, tuple[Format, _Template | None]] = {}


def _template(fmt: Format) -> _Template | None:
    """The call template of a format (cached), from the first example that yields one."""
    cached = _TEMPLATES.get(fmt.name)
    if cached is not None and cached[0] is fmt:
        return cached[1]
    template = _derive_template(fmt)
    _TEMPLATES[fmt.name] = (fmt, template)
    return template


def _derive_template(fmt: Format) -> _Template | None:
    from ..stream import parse

    for example in fmt.examples:
        message = parse(example, fmt)
        if message.errors or not message.tool_calls:
            continue
        template = _template_from(fmt, example, message.tool_calls)
        if template is not None:
            return template
    return None


def _template_from(fmt: Format, text: str, calls: Sequence[ToolCall]) -> _Template | None:
    first = calls[0]
    located = _locate_arguments(text, first, 0)
    if located is None:
        return None
    (start, end), notation, element = located
    if len(calls) > 1:  # keep the first call only: cut from its arguments to the last's
        last = _locate_arguments(text, calls[-1], end)
        if last is None or last[1] != notation:
            return None
        text = text[:end] + text[last[0][1] :]
    name_at = text.rfind(first.name, 0, start)
    name_first = name_at >= 0
    if not name_first:
        name_at = text.find(first.name, end)
        if name_at < 0:
            return None
    spans = sorted([(name_at, name_at + len(first.name)), (start, end)])
    cut = _cut(fmt, text, spans[0][0], spans[1][1], first)
    if cut is None:
        return None
    lo, hi = cut
    (a0, a1), (b0, b1) = spans
    template = _Template(text[lo:a0], text[a1:b0], text[b1:hi], name_first, notation, element)
    return _one_line(fmt, template, first)


_PROBE = "Hello."


def _cut(fmt: Format, text: str, first: int, last: int, call: ToolCall) -> tuple[int, int] | None:
    """The call's own text around text[first:last], cut at line breaks and marker
    boundaries: the longest cut that parses as exactly the call with no reasoning and no
    prose, less the whitespace and the reasoning closers it starts with."""
    points = {0, len(text)}
    for at, char in enumerate(text):
        if char == "\n":
            points.update((at, at + 1))
    for marker in fmt.markers:
        at = text.find(marker)
        while at >= 0:
            points.update((at, at + len(marker)))
            at = text.find(marker, at + 1)
    tools = [_tool_for(call)]

    def fits(lo: int, hi: int) -> bool:
        return _parses_to(fmt, text[lo:hi], tools, call.name, call.arguments)

    starts = sorted(p for p in points if p <= first)
    for hi in sorted({len(text[:p].rstrip()) for p in points if p >= last}, reverse=True):
        for lo in starts:
            if fits(lo, hi):
                while True:
                    skip = _leading_closer(fmt, text, lo)
                    if not skip or not fits(lo + skip, hi):
                        return lo, hi
                    lo += skip
    return None


def _leading_closer(fmt: Format, text: str, at: int) -> int:
    """How much to skip at text[at:]: its leading whitespace, or a marker there that ends
    the reasoning the example wrote before it (0 for anything else)."""
    rest = text[at:]
    if rest[:1].isspace():
        return len(rest) - len(rest.lstrip())
    from ..stream import parse

    for marker in fmt.markers:
        if not rest.startswith(marker):
            continue
        before = parse(text[:at] + _PROBE, fmt).reasoning_content or ""
        if not before.endswith(_PROBE) or not before[: -len(_PROBE)].strip():
            return 0
        after = parse(text[: at + len(marker)] + _PROBE, fmt)
        if (after.content or "").endswith(_PROBE) and _PROBE not in (after.reasoning_content or ""):
            return len(marker)
        return 0
    return 0


def _one_line(fmt: Format, template: _Template, call: ToolCall) -> _Template:
    """The template on one line where the format reads it the same (line breaks next to
    a code fence stay: a fence needs its own line)."""
    pre, mid, post, sep = template.element
    variant = _Template(
        _flatten(template.before),
        _flatten(template.between),
        _flatten(template.after),
        template.name_first,
        template.notation,
        (_flatten(pre), _flatten(mid), _flatten(post), _flatten(sep)),
    )
    if variant == template:
        return template
    text = variant.render(call.name, call.arguments)
    if _parses_to(fmt, text, [_tool_for(call)], call.name, call.arguments):
        return variant
    return template


def _flatten(text: str) -> str:
    lines = text.split("\n")
    out = lines[0]
    for line in lines[1:]:
        fence = out.rsplit("\n", 1)[-1].strip().startswith("```") or line.strip().startswith("```")
        out = f"{out}\n{line}" if fence else out.rstrip(" \t") + line.lstrip(" \t")
    return out


def _tool_for(call: ToolCall) -> dict[str, Any]:
    """A tools entry typing the parameters of an example call by their values."""
    kinds = {str: "string", bool: "boolean", int: "integer", float: "number"}
    props = {
        key: {
            "type": "array"
            if isinstance(v, list)
            else "object"
            if isinstance(v, dict)
            else kinds.get(type(v), "string")
        }
        for key, v in call.arguments.items()
    }
    schema = {"type": "object", "properties": props}
    return {"type": "function", "function": {"name": call.name, "parameters": schema}}


def _locate_arguments(
    text: str, call: ToolCall, start: int
) -> tuple[tuple[int, int], Notation, tuple[str, str, str, str]] | None:
    """Where `call`'s arguments are written in text (from `start`), and in what notation."""
    none = ("", "", "", "")
    decoder = json.JSONDecoder()
    at = text.find("{", start)
    while at >= 0:
        try:
            value, end = decoder.raw_decode(text, at)
        except ValueError:
            pass
        else:
            if isinstance(value, dict) and value == call.arguments:
                return (at, end), "json", none
        at = text.find("{", at + 1)
    at = text.find(call.name, start)
    while at >= 0:
        after = at + len(call.name)
        opener = text[after : after + 1]
        if opener == "(":
            close = _matching(text, after, "(", ")")
            if close is not None:
                return (after + 1, close), "python", none
        elif opener == "{":
            close = _matching(text, after, "{", "}")
            if close is not None:
                escaped = _GEMMA_QUOTES["gemma_escape"] in text[after:close]
                return (after, close + 1), "gemma_escape" if escaped else "gemma", none
        at = text.find(call.name, at + 1)
    return _locate_parameters(text, call, start)


def _matching(text: str, at: int, opener: str, closer: str) -> int | None:
    """The index of the bracket closing the one at text[at], skipping quoted strings
    (Python quotes and Gemma's delimiters)."""
    depth, i, quote = 0, at, ""
    while i < len(text):
        if quote:
            if text.startswith(quote, i):
                i, quote = i + len(quote), ""
                continue
            i += 2 if text[i] == "\\" and quote in "\"'" else 1
            continue
        gemma_quote = next((q for q in _GEMMA_QUOTES.values() if text.startswith(q, i)), "")
        if gemma_quote:
            quote, i = gemma_quote, i + len(gemma_quote)
            continue
        char = text[i]
        if char in "\"'":
            quote = char
        elif char == opener:
            depth += 1
        elif char == closer:
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return None


def _locate_parameters(
    text: str, call: ToolCall, start: int
) -> tuple[tuple[int, int], Notation, tuple[str, str, str, str]] | None:
    """XML-style parameters: one element per argument, ``<KEY-TAG>key...value</TAG>``."""
    if not call.arguments:
        return None
    at = text.find(call.name, start)
    if at < 0:
        return None
    cursor = at + len(call.name)
    first_element: tuple[str, str, str, str] | None = None
    span_start = span_end = -1
    for key, value in call.arguments.items():
        shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        key_at = text.find(key, cursor)
        if key_at < 0:
            return None
        element_at = text.rfind("<", cursor, key_at)
        value_at = text.find(shown, key_at + len(key))
        if element_at < 0 or value_at < 0:
            return None
        # the element ends at the first ">" that ends the text, is followed by whitespace
        # or "<", or closes a tag named after the key (</KEY>): a closer spelled with
        # special tokens (<|close|>argument<|sep|>, ]<]minimax[>[</KEY>) has a ">" inside it
        named_close = f"</{key}>"
        close = text.find(">", value_at + len(shown))
        while 0 <= close < len(text) - 1 and not (
            text[close + 1].isspace()
            or text[close + 1] == "<"
            or text.endswith(named_close, 0, close + 1)
        ):
            close = text.find(">", close + 1)
        if close < 0:
            return None
        element_end = close + 1
        sep_end = element_end
        while sep_end < len(text) and text[sep_end] in " \t\r\n":
            sep_end += 1
        post = text[value_at + len(shown) : element_end]
        # text every tag carries before its "<" (MiniMax-M3's ]<]minimax[>[) belongs to the
        # element: it is what the closing text has before its "</"
        tag_prefix = post[: max(post.find("</"), 0)]
        if tag_prefix and text.endswith(tag_prefix, cursor, element_at):
            element_at -= len(tag_prefix)
        if first_element is None:
            first_element = (
                text[element_at:key_at],
                text[key_at + len(key) : value_at],
                post.replace(named_close, f"</{_KEY_SLOT}>"),
                text[element_end:sep_end],
            )
            span_start = element_at
        span_end = sep_end
        cursor = sep_end
    assert first_element is not None
    return (span_start, span_end), "params", first_element


__all__ = [
    "INSTALL_HINT",
    "MISSING",
    "CallStatus",
    "CallValidation",
    "Path",
    "ToolValidator",
    "ValidationIssue",
    "ValidationReport",
    "describe_schema",
    "describe_value",
    "format_path",
    "render_call",
    "validate",
]
