"""Formats from Hugging Face response templates: ``from_response_template(obj)``.

A tokenizer config may describe how to parse the model's output, in one of two shapes
(transformers' chat response parsing; vLLM's response_template parser reads the first):

- ``response_template``: ``{"fields": {"thinking": {...}, "tool_calls": {...}, "content":
  {...}}, "start_anchor": ..., "defaults": ...}``, each field a region between an ``open``
  (or ``open_pattern``) and a ``close`` delimiter, its ``content`` parsed as ``text``,
  ``json`` or ``xml-inline`` and reshaped by a ``transform``;
- the older ``response_schema``: a JSON schema whose nodes carry ``x-regex``,
  ``x-regex-iterator``, ``x-regex-key-value`` and ``x-parser`` (``json``, reshaped by a
  JMESPath ``transform``).

Both are read for the shapes toolparse's derived formats cover (formats._derived): JSON
calls in tags, a bracket tag before JSON (one call or a list), the tool name in a tag
before JSON arguments, XML parameters, with an optional reasoning block.  The delimiters
must be literal text; a regex is read only where it is literal text, optional whitespace
(``\\s*``, ``\\n?``), the capture groups the shape needs, and ``(?:CLOSE|$)`` for a closing
marker the end of the output may stand for.  Anything else raises ValueError naming what
is not supported: no regex is run, and nothing is guessed.

Not supported (and why): content in wrapper tags (``<|START_RESPONSE|>``: no derived
shape for it), delimiters given as alternatives or free regexes, a gap (``.*?``) inside a
call's markers (gpt-oss's channel header), Gemma's own argument notation, ``kv-lines``,
transforms that build anything but a ``{"type": "function", "function": {"name",
"arguments"}}`` call from one name and one arguments value.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..formats._base import Format
from ._derived import (
    Reasoning,
    XmlShape,
    bracket_json,
    json_in_tags,
    name_tag_json,
    xml_params,
)

__all__ = ["from_response_template"]

DEFAULT_NAME = "response_template"


def from_response_template(obj: Mapping[str, Any], *, name: str = DEFAULT_NAME) -> Format:
    """A Format for a Hugging Face ``response_template`` or ``response_schema``, or for a
    tokenizer config holding one (``response_template`` is read first)."""
    if not isinstance(obj, Mapping):
        raise ValueError(f"a response template is a dict, not {type(obj).__name__}")
    for key in ("response_template", "response_schema"):
        if isinstance(obj.get(key), Mapping):
            return from_response_template(obj[key], name=name)
    if "fields" in obj:
        return _from_template(obj, name)
    if "properties" in obj or "x-regex" in obj:
        return _from_schema(obj, name)
    raise ValueError(
        "not a response template: expected 'fields' (response_template) or 'properties' "
        "(response_schema)"
    )


# -- literal regexes ---------------------------------------------------------------------


@dataclass(frozen=True)
class _Group:
    name: str | None  # None: an unnamed group


_WS = "\n"  # optional layout between literals; formats._derived splits segments there
_LAYOUT = re.compile(r"\\s[*+?]|(?:\\r)?\\n[*+?]?|\s[*+?]|\n")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r"}
_CAPTURE = re.compile(r"\(\?P<(\w+)>|\((?!\?)")


def _tokens(pattern: str, what: str) -> list[str | _Group]:
    """A regex made of literal text, optional whitespace and capture groups (whose inside
    is not looked at: they hold a name, a value or a body), as literals (layout as
    ``_WS``) and groups.  ``(?:LIT|$)`` becomes LIT.  Anything else is a ValueError."""
    out: list[str | _Group] = []
    text = ""
    i = 0

    def flush() -> None:
        nonlocal text
        if text:
            out.append(text)
        text = ""

    while i < len(pattern):
        c = pattern[i]
        if (m := _LAYOUT.match(pattern, i)) is not None:
            text += _WS
            i = m.end()
        elif c == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            if nxt.isalnum() and nxt not in _ESCAPES:
                raise ValueError(f"{what}: the class \\{nxt} outside a group is not supported")
            text += _ESCAPES.get(nxt, nxt)
            i += 2
        elif (m := _CAPTURE.match(pattern, i)) is not None:
            end = _group_end(pattern, i, what)
            if end + 1 < len(pattern) and pattern[end + 1] in "?*+":
                raise ValueError(f"{what}: an optional or repeated group is not supported")
            flush()
            out.append(_Group(m.group(1)))
            i = end + 1
        elif pattern.startswith("(?:", i):
            end = _group_end(pattern, i, what)
            inner = pattern[i + 3 : end]
            if not inner.endswith("|$"):
                raise ValueError(f"{what}: the group {pattern[i : end + 1]!r} is not supported")
            literal = _tokens(inner[:-2], what)
            if not all(isinstance(t, str) for t in literal):
                raise ValueError(f"{what}: the group {pattern[i : end + 1]!r} is not supported")
            text += "".join(t for t in literal if isinstance(t, str))
            i = end + 1
        elif c == "^" and i == 0:
            i += 1
        elif c == "$" and i == len(pattern) - 1:
            i += 1
        elif pattern.startswith((".*", ".+"), i):
            raise ValueError(
                f"{what}: a gap ({pattern[i : i + 3]!r}) between delimiters is not supported: "
                "the markers must be literal text"
            )
        elif c in ".[]()|?*+{}^$":
            raise ValueError(
                f"{what}: {pattern[i : i + 6]!r}... is not literal text: only literals, "
                "optional whitespace and capture groups are supported"
            )
        else:
            text += c
            i += 1
    flush()
    return out


def _group_end(pattern: str, start: int, what: str) -> int:
    depth = 0
    i = start
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise ValueError(f"{what}: unbalanced parentheses")


def _literal(pattern: str, what: str) -> str:
    tokens = _tokens(pattern, what)
    if not all(isinstance(t, str) for t in tokens):
        raise ValueError(f"{what}: a delimiter with capture groups is not supported")
    return "".join(t for t in tokens if isinstance(t, str))


def _split(tokens: list[str | _Group], what: str, *names: str | None) -> list[str]:
    """The literal text between the given groups, in order: len(names) + 1 segments."""
    segments = [""]
    expected = list(names)
    for t in tokens:
        if isinstance(t, str):
            segments[-1] += t
            continue
        if not expected or t.name != expected[0]:
            shown = ", ".join(repr(n) for n in names)
            raise ValueError(f"{what}: expected capture groups {shown} in this order")
        expected.pop(0)
        segments.append("")
    if expected:
        raise ValueError(f"{what}: the capture group {expected[0]!r} is missing")
    return segments


# -- response_template -------------------------------------------------------------------------

_FIELDS = {"thinking", "content", "tool_calls"}


def _delimiter(field: Mapping[str, Any], key: str, what: str) -> str | None:
    if key in field:
        value = field[key]
        if isinstance(value, list):
            if len(value) != 1:
                raise ValueError(f"{what}: alternative {key} delimiters are not supported")
            value = value[0]
        if not isinstance(value, str) or not value:
            raise ValueError(f"{what}: {key} must be a non-empty string")
        return value
    if f"{key}_pattern" in field:
        return _literal(str(field[f"{key}_pattern"]), f"{what}.{key}_pattern")
    return None


def _from_template(spec: Mapping[str, Any], name: str) -> Format:
    if spec.get("version", 1) != 1:
        raise ValueError(f"response_template version {spec.get('version')!r} is not supported")
    fields = spec["fields"]
    if not isinstance(fields, Mapping) or not fields:
        raise ValueError("response_template.fields must be a non-empty dict")
    unknown = set(fields) - _FIELDS
    if unknown:
        raise ValueError(
            f"response_template fields {sorted(unknown)} are not supported (only thinking, "
            "content and tool_calls map onto a format)"
        )
    think = _template_thinking(fields.get("thinking"))
    content = fields.get("content")
    if content is not None and ("open" in content or "open_pattern" in content):
        raise ValueError(
            "response_template: content between its own delimiters is not supported "
            "(content is the text around the calls)"
        )
    calls = fields.get("tool_calls")
    if calls is None:
        raise ValueError("response_template has no tool_calls field: no call shape to build")
    return _template_calls(calls, think, name)


def _template_thinking(field: Mapping[str, Any] | None) -> Reasoning | None:
    if field is None:
        return None
    what = "response_template.fields.thinking"
    if field.get("content", "text") != "text" or field.get("transform") is not None:
        raise ValueError(f"{what}: only plain text reasoning is supported")
    open_, close = _delimiter(field, "open", what), _delimiter(field, "close", what)
    if open_ is None or close is None:
        raise ValueError(f"{what}: reasoning needs both an open and a close delimiter")
    return Reasoning(open_.strip(), close.strip())


def _template_calls(field: Mapping[str, Any], think: Reasoning | None, name: str) -> Format:
    what = "response_template.fields.tool_calls"
    content = field.get("content", "text")
    transform = field.get("transform")
    close = _delimiter(field, "close", what) or ""
    if content == "json":
        dialect = set(field.get("content_args") or {}) - {"allow_non_json"}
        if dialect:
            raise ValueError(
                f"{what}: the JSON dialect options {sorted(dialect)} are not supported "
                "(arguments are strict JSON)"
            )
    if "open_pattern" in field:
        tokens = _tokens(str(field["open_pattern"]), f"{what}.open_pattern")
        if any(isinstance(t, _Group) for t in tokens):
            return _template_named_call(field, tokens, content, transform, close, think, name)
    open_ = _delimiter(field, "open", what)
    if open_ is None:
        raise ValueError(f"{what}: calls need an open delimiter")
    if content != "json":
        raise ValueError(f"{what}: content {content!r} without the name in the open delimiter")
    each = bool(field.get("transform_each"))
    keys = _transform_keys(transform, "content" if not each else None, what)
    if each:
        return bracket_json(
            open_,
            array=True,
            close=close,
            name_keys=keys[:1],
            args_keys=keys[1:],
            think=think,
            name=name,
        )
    if close:
        return json_in_tags(
            open_, close, name_keys=keys[:1], args_keys=keys[1:], think=think, name=name
        )
    return bracket_json(
        open_, array=False, name_keys=keys[:1], args_keys=keys[1:], think=think, name=name
    )


def _transform_keys(transform: Any, root: str | None, what: str) -> tuple[str, str]:
    """(name key, arguments key) of the call object a transform reshapes.  root: the
    placeholder holding the object ("content"), or None where the object's own keys are
    the placeholders (transform_each)."""
    if transform is None:
        return ("name", "arguments")
    function = transform.get("function") if isinstance(transform, Mapping) else None
    if isinstance(transform, Mapping) and transform.get("type", "function") == "function":
        if root is not None and function == "{" + root + "}":
            return ("name", "arguments")
        if isinstance(function, Mapping) and set(function) == {"name", "arguments"}:
            keys = []
            for part in ("name", "arguments"):
                m = re.fullmatch(r"\{(\w+(?:\.\w+)?)\}", str(function[part]))
                if m is None:
                    break
                path = m.group(1).split(".")
                if root is not None and (len(path) != 2 or path[0] != root):
                    break
                if root is None and len(path) != 1:
                    break
                keys.append(path[-1])
            else:
                return (keys[0], keys[1])
    raise ValueError(
        f"{what}: the transform {transform!r} is not supported (it must build "
        '{"type": "function", "function": ...} from one name and one arguments value)'
    )


def _template_named_call(
    field: Mapping[str, Any],
    tokens: list[str | _Group],
    content: str,
    transform: Any,
    close: str,
    think: Reasoning | None,
    name: str,
) -> Format:
    what = "response_template.fields.tool_calls"
    open_, name_end = _split(tokens, f"{what}.open_pattern", "name")
    function = transform.get("function") if isinstance(transform, Mapping) else None
    if not (
        isinstance(function, Mapping)
        and function.get("name") == "{name}"
        and function.get("arguments") == "{content}"
    ):
        raise ValueError(
            f"{what}: with the name captured by open_pattern, the transform must be "
            '{"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}'
        )
    if content == "json":
        return name_tag_json(open_, name_end, close, think=think, name=name)
    if content != "xml-inline":
        raise ValueError(f"{what}: content {content!r} is not supported")
    args = field.get("content_args") or {}
    pattern = args.get("tag_pattern")
    if not isinstance(pattern, str):
        raise ValueError(f"{what}: xml-inline needs a tag_pattern")
    return _xml(open_, name_end, pattern, close, f"{what}.content_args.tag_pattern", think, name)


def _xml(
    open_: str,
    name_end: str,
    tag_pattern: str,
    close: str,
    what: str,
    think: Reasoning | None,
    name: str,
) -> Format:
    param_open, key_end, param_close = _split(_tokens(tag_pattern, what), what, "key", "value")
    if not close.strip():
        raise ValueError(f"{what}: XML parameters need a closing delimiter for the call")
    # layout around the value (\s* or a newline) is one optional line break each side
    layout = key_end.endswith(_WS) or param_close.startswith(_WS)
    # the closing tag of a tag the name sits in (<function=NAME> ... </function>): the
    # spec's regexes skip it, so it may come before the call's closing delimiter
    inner = re.search(r"<([\w:-]+)[= ]$", open_.strip())
    shape = XmlShape(
        open=open_,
        name_end=name_end,
        param_open=param_open,
        key_end=key_end,
        param_close=param_close.strip(),
        close=close,
        value_newlines=layout,
        optional_close=f"</{inner.group(1)}>"
        if inner and close.strip() != f"</{inner.group(1)}>"
        else "",
    )
    return xml_params(shape, think=think, name=name)


# -- response_schema -------------------------------------------------------------------------


def _from_schema(schema: Mapping[str, Any], name: str) -> Format:
    props = schema.get("properties") or {}
    if not isinstance(props, Mapping):
        raise ValueError("response_schema.properties must be a dict")
    unknown = set(props) - {"role", "content", "thinking", "reasoning_content", "tool_calls"}
    if unknown:
        raise ValueError(f"response_schema properties {sorted(unknown)} are not supported")
    whole = schema.get("x-regex")
    think_key = "thinking" if "thinking" in props else "reasoning_content"
    think: Reasoning | None = None
    calls_open = calls_close = None
    if isinstance(whole, str):
        # one regex for the whole message: the markers around its named groups
        around = _named_group_neighbours(whole, "response_schema.x-regex")
        if think_key in around:
            think = Reasoning(*around[think_key])
        if "tool_calls" in around:
            calls_open, calls_close = around["tool_calls"]
        if "content" in around and any(around["content"]):
            raise ValueError("response_schema: content between its own delimiters is not supported")
    else:
        think = _schema_thinking(props.get(think_key))
        content = props.get("content")
        if isinstance(content, Mapping) and "x-regex" in content:
            raise ValueError(
                "response_schema: content between its own delimiters is not supported "
                "(content is the text around the calls)"
            )
    calls = props.get("tool_calls")
    if not isinstance(calls, Mapping):
        raise ValueError("response_schema has no tool_calls property: no call shape to build")
    return _schema_calls(calls, calls_open, calls_close, think, name)


_RUN = r"((?:\\[^A-Za-z0-9]|\\[nt]|[^\\()|?*+.\[\]{}^$])*)"
_LAYOUT_RUN = r"(?:\\s[*+?]|\\n[*+?]?)*"
_RUN_BEFORE = re.compile(_RUN + _LAYOUT_RUN + "$")
_RUN_AFTER = re.compile(_LAYOUT_RUN + _RUN)


def _named_group_neighbours(pattern: str, what: str) -> dict[str, tuple[str, str]]:
    """For each named group of a whole-message regex, the literal text right before and
    right after it (optional whitespace skipped), e.g. thinking -> ("<think>", "</think>")."""
    found: dict[str, tuple[str, str]] = {}
    for m in re.finditer(r"\(\?P<(\w+)>", pattern):
        end = _group_end(pattern, m.start(), what)
        head, tail = pattern[: m.start()], pattern[end + 1 :]
        before = _RUN_BEFORE.search(head)
        after = _RUN_AFTER.match(tail)
        pre = before.group(1) if before else ""
        if before and head[: before.start(1)].endswith("(?"):
            pre = pre.removeprefix(":")  # the run began inside "(?:"
        post = after.group(1) if after else ""
        pre, post = _literal(pre, what).strip(), _literal(post, what).strip()
        found[m.group(1)] = (pre, post)
    for key in ("thinking", "reasoning_content", "tool_calls"):
        if key in found and not all(found[key]):
            raise ValueError(
                f"{what}: the group {key!r} is not between literal delimiters "
                f"(found {found[key]!r})"
            )
    return found


def _schema_thinking(node: Any) -> Reasoning | None:
    if not isinstance(node, Mapping) or "x-regex" not in node:
        return None
    what = "response_schema.thinking.x-regex"
    before, after = _split(_tokens(str(node["x-regex"]), what), what, None)
    if not before.strip() or not after.strip():
        raise ValueError(f"{what}: reasoning needs literal delimiters on both sides")
    return Reasoning(before.strip(), after.strip())


_JMES_WRAP = re.compile(
    r"\s*(\[\*\]\.|\[)?\s*\{\s*type\s*:\s*'function'\s*,\s*function\s*:\s*(.+?)\s*\}\s*\]?\s*"
)
_JMES_FUNCTION = re.compile(r"\{\s*name\s*:\s*(\w+)\s*,\s*arguments\s*:\s*(\w+)\s*\}")


def _jmes_keys(transform: Any, what: str) -> tuple[tuple[str, str], bool]:
    """((name key, arguments key), whether the parsed JSON is a list of calls) for the
    JMESPath transforms response schemas use; anything else is a ValueError."""
    if transform is None:
        return ("name", "arguments"), False
    m = _JMES_WRAP.fullmatch(str(transform))
    if m is not None:
        each = m.group(1) == "[*]."
        function = m.group(2)
        if function == "@":
            return ("name", "arguments"), each
        if (f := _JMES_FUNCTION.fullmatch(function)) is not None:
            return (f.group(1), f.group(2)), each
    raise ValueError(f"{what}: the transform {transform!r} is not supported")


def _schema_calls(
    node: Mapping[str, Any],
    whole_open: str | None,
    whole_close: str | None,
    think: Reasoning | None,
    name: str,
) -> Format:
    what = "response_schema.tool_calls"
    raw_items = node.get("items")
    items: Mapping[str, Any] = raw_items if isinstance(raw_items, Mapping) else {}
    if whole_open is not None and whole_close is not None:
        if node.get("x-parser") != "json":
            raise ValueError(f"{what}: calls without x-parser json are not supported")
        keys, each = _jmes_keys((node.get("x-parser-args") or {}).get("transform"), what)
        if each:
            return bracket_json(
                whole_open,
                array=True,
                close=whole_close,
                name_keys=keys[:1],
                args_keys=keys[1:],
                think=think,
                name=name,
            )
        return json_in_tags(
            whole_open,
            whole_close,
            name_keys=keys[:1],
            args_keys=keys[1:],
            think=think,
            name=name,
        )
    if "x-regex" in node:
        # one region holding every call (a JSON list)
        open_, close = _split(_tokens(str(node["x-regex"]), f"{what}.x-regex"), what, None)
        if node.get("x-parser") != "json":
            raise ValueError(f"{what}: a call region not parsed as JSON is not supported")
        keys, each = _jmes_keys((node.get("x-parser-args") or {}).get("transform"), what)
        if not each:
            raise ValueError(f"{what}: one call region must hold a list of calls ([*]. transform)")
        return bracket_json(
            open_,
            array=True,
            close=close,
            name_keys=keys[:1],
            args_keys=keys[1:],
            think=think,
            name=name,
        )
    iterator = node.get("x-regex-iterator")
    if not isinstance(iterator, str):
        raise ValueError(f"{what}: calls need x-regex or x-regex-iterator")
    tokens = _tokens(iterator, f"{what}.x-regex-iterator")
    groups = [t.name for t in tokens if isinstance(t, _Group)]
    if groups == [None]:
        open_, close = _split(tokens, what, None)
        if items.get("x-parser") == "json":
            args = items.get("x-parser-args") or {}
            keys, _each = _jmes_keys(args.get("transform"), f"{what}.items")
            return json_in_tags(
                open_, close, name_keys=keys[:1], args_keys=keys[1:], think=think, name=name
            )
        return _schema_xml_in_body(items, open_, close, think, name)
    if groups == ["name", "arguments"]:
        open_, name_end, close = _split(tokens, what, "name", "arguments")
        arguments = _function_properties(items).get("arguments") or {}
        pattern = arguments.get("x-regex-key-value")
        if isinstance(pattern, str):
            return _xml(open_, name_end, pattern, close, f"{what}.x-regex-key-value", think, name)
        if arguments.get("x-parser") == "json" or arguments.get("type") == "object":
            return name_tag_json(open_, name_end, close, think=think, name=name)
    raise ValueError(f"{what}: the capture groups {groups} are not supported")


def _function_properties(items: Mapping[str, Any]) -> Mapping[str, Any]:
    props = items.get("properties") or {}
    function = props.get("function")
    if isinstance(function, Mapping) and isinstance(function.get("properties"), Mapping):
        props = function["properties"]
    return props if isinstance(props, Mapping) else {}


def _schema_xml_in_body(
    items: Mapping[str, Any], open_: str, close: str, think: Reasoning | None, name: str
) -> Format:
    """A call body ``NAME`` + XML parameters, the name read by ``^(\\S+)``-like regex."""
    what = "response_schema.tool_calls.items"
    props = _function_properties(items)
    name_node, args_node = props.get("name") or {}, props.get("arguments") or {}
    pattern = args_node.get("x-regex-key-value")
    name_regex = str(name_node.get("x-regex", ""))
    if not isinstance(pattern, str) or name_regex.lstrip("^") not in (r"(\S+)", r"([^\s<]+)"):
        raise ValueError(
            f"{what}: only JSON calls, or a name at the start of the body followed by "
            "x-regex-key-value parameters, are supported"
        )
    return _xml(open_, "", pattern, close, f"{what}.x-regex-key-value", think, name)
