"""Pure-Python twin of the event builder (csrc/emit.c): semantic ops to events.

The VM hands over tagged bytes once they are certain (reference/vm.py); this turns them
into the public events and keeps the Message so far.  docs/engine.md specifies it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import grammar as g
from ..arguments import load_arguments
from ..errors import Msg, message, unknown_tool, value_type
from ..events import (
    ContentDelta,
    ReasoningDelta,
    ToolCallArgsDelta,
    ToolCallEnd,
    ToolCallStart,
)
from ..limits import DEFAULT_LIMITS, Limits
from ..message import ParseError, ToolCall
from ..repair import (
    CLOSED_AT_END,
    COERCED_VALUES,
    MISSING_CLOSER,
    MISSING_OPENER,
    Coerce,
    NothingLeft,
    repair_arguments,
)
from ..tools import (
    ParamTypes,
    param_types,
    per_tools_list,
    read_tools,
    schema_types,
    tool_names,
)
from .gemmavalue import FUNCTIONGEMMA_QUOTE, gemma_value_to_json
from .json import JsonScanner
from .m3value import SchemaNode, m3_value_to_json, schema_node
from .pyliteral import python_literal_to_json

_TEXT_ROLES = ("reasoning", "content")
_CAPTURE_PARENTS = ("tool_name", "tool_id", "param_name")
# streamed text a tag may write as a JSON string, decoded as it streams (arguments too: a
# string that holds the arguments JSON)
_STRING_DECODED = (*_TEXT_ROLES, "tool_args")
# a parse error's message by its kind, where the kind says it all
_KIND_MESSAGES = {
    "incomplete": message(Msg.ENDED_INSIDE_CALL),
    "invalid_arguments": message(Msg.INVALID_ARGUMENTS),
    "unexpected": message(Msg.UNEXPECTED),
}


def split_utf8(data: bytes) -> tuple[bytes, bytes]:
    """(whole part, held tail): the tail is an incomplete UTF-8 sequence that more bytes
    could still complete (at most 3 bytes); everything before it decodes now."""
    n = len(data)
    for back in range(1, min(4, n) + 1):
        lead = data[n - back]
        if lead < 0x80:
            return data, b""
        if lead >= 0xC0:
            need = 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4
            if back < need and _valid_prefix(data[n - back :]):
                return data[: n - back], data[n - back :]
            return data, b""
    return data, b""


def _valid_prefix(seq: bytes) -> bool:
    """Whether seq (a lead byte and continuation bytes) can still become a character."""
    lead = seq[0]
    if lead < 0xC2 or lead > 0xF4:
        return False
    if len(seq) > 1:
        second = seq[1]
        lo, hi = 0x80, 0xBF
        if lead == 0xE0:
            lo = 0xA0
        elif lead == 0xED:
            hi = 0x9F
        elif lead == 0xF0:
            lo = 0x90
        elif lead == 0xF4:
            hi = 0x8F
        if not lo <= second <= hi:
            return False
    return all(0x80 <= b <= 0xBF for b in seq[2:])


def json_string(text: str) -> str:
    """A JSON string literal, escaped as json.dumps(ensure_ascii=False) does."""
    return json.dumps(text, ensure_ascii=False)


def param_schemas(tools: Sequence[Mapping[str, Any]] | None) -> dict[str, dict[str, SchemaNode]]:
    """tool name -> parameter name -> schema node (types, properties, items), for values
    written as nested tags."""
    return {
        tool.name: {
            name: schema_node(spec, schema_types) for name, spec in tool.parameter_schemas.items()
        }
        for tool in read_tools(tools)
    }


@dataclass(frozen=True)
class ToolTable:
    """What the event builder reads from a tools list, built once per list: each tool's
    parameter types and schema nodes, and the known names (None: any name is taken)."""

    types: ParamTypes
    schemas: dict[str, dict[str, SchemaNode]]
    known: frozenset[str] | None

    @classmethod
    def of(cls, tools: Sequence[Mapping[str, Any]] | None) -> ToolTable:
        return _tool_table_of(tools)


@per_tools_list
def _tool_table_of(tools: Sequence[Mapping[str, Any]] | None) -> ToolTable:
    return ToolTable(param_types(tools), param_schemas(tools), tool_names(tools))


def _strict_json_kind(text: str) -> str | None:
    """The kind of one strict JSON value that is exactly text, or None."""
    scanner = JsonScanner("strict")
    scanner.feed(text)
    if scanner.finish() != "complete" or scanner.end != len(text.encode()):
        return None
    first = text[0]
    if first == "{":
        return "object"
    if first == "[":
        return "array"
    if first in "-0123456789":
        return "number"
    if first in "tf":
        return "boolean"
    if first == "n":
        return "null"
    return "string"


# the types a value written as text is checked against ("json": the output said JSON)
_CHECKED_TYPES = frozenset(("integer", "number", "boolean", "object", "array", "null", "json"))


def typed_value(raw: str, types: tuple[str, ...]) -> str | None:
    """A parameter's raw text as JSON text, typed by its schema types, in order: the first
    type the text fits; a string (the raw text, whitespace kept) at "string" or a type
    no value is checked against; None when the text fits none of them."""
    text = raw.strip(" \t\n\r")
    for kind in types:
        if kind not in _CHECKED_TYPES:
            return json_string(raw)
        if kind == "boolean" and text.lower() in ("true", "false"):
            return text.lower()
        found = _strict_json_kind(text) if text else None
        if found is None:
            continue
        if kind == "number" and found == "number":
            return text
        if kind == "integer" and found == "number" and _integral(text):
            return text
        if kind in ("object", "array", "null") and found == kind:
            return text
        if kind == "json":
            return text
    return None


def _integral(number: str) -> bool:
    """Whether a valid JSON number's value is a whole number (JSON Schema's integer: 5.0
    and 250e-1 are, 2.5 is not)."""
    mantissa, _, exponent = number.lstrip("-").lower().partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = (whole + fraction).lstrip("0")
    if not digits:
        return True  # zero
    # the value is digits x 10^(exponent - len(fraction)): whole when that power is not
    # negative or the trailing zeros absorb it
    shift = int(exponent or "0") - len(fraction) if len(exponent) < 12 else _huge(exponent)
    return shift >= 0 or len(digits) - len(digits.rstrip("0")) >= -shift


def _huge(exponent: str) -> int:
    """An exponent too long to matter exactly: its sign, at a size no text reaches."""
    return -(10**12) if exponent.startswith("-") else 10**12


_JSON_ESCAPES = {ord("b"): 0x08, ord("f"): 0x0C, ord("n"): 0x0A, ord("r"): 0x0D, ord("t"): 0x09}
_HEX_VALUES = {b: int(chr(b), 16) for b in b"0123456789abcdefABCDEF"}


class _JsonStringText:
    """Decodes a JSON string token piece by piece into the characters of its value (as
    UTF-8), without the quotes; a surrogate escape without its pair becomes U+FFFD."""

    def __init__(self) -> None:
        self.phase = "before"  # before, in, escape, hex, done
        self.hex_left = 0
        self.code = 0
        self.high = 0  # a high surrogate awaiting its pair

    def _flush_high(self, out: bytearray) -> None:
        if self.high:
            self.high = 0
            out += "\ufffd".encode()

    def _code_point(self, cp: int, out: bytearray) -> None:
        if 0xDC00 <= cp <= 0xDFFF and self.high:
            cp = 0x10000 + ((self.high - 0xD800) << 10) + (cp - 0xDC00)
            self.high = 0
            out += chr(cp).encode()
            return
        self._flush_high(out)
        if 0xD800 <= cp <= 0xDBFF:
            self.high = cp
            return
        out += chr(0xFFFD if 0xDC00 <= cp <= 0xDFFF else cp).encode()

    def feed(self, data: bytes) -> bytes:
        out = bytearray()
        k = 0
        while k < len(data) and self.phase != "done":
            b = data[k]
            k += 1
            if self.phase == "before":
                if b == ord('"'):
                    self.phase = "in"
            elif self.phase == "in":
                if b in b'"\\':
                    self.phase = "done" if b == ord('"') else "escape"
                    if b == ord('"'):
                        self._flush_high(out)
                    continue
                self._flush_high(out)
                end = k
                while end < len(data) and data[end] not in b'"\\':
                    end += 1
                out += data[k - 1 : end]
                k = end
            elif self.phase == "escape":
                self.phase = "in"
                if b == ord("u"):
                    self.phase, self.hex_left, self.code = "hex", 4, 0
                else:
                    self._code_point(_JSON_ESCAPES.get(b, b), out)
            else:  # hex
                self.code = self.code << 4 | _HEX_VALUES.get(b, 0)
                self.hex_left -= 1
                if not self.hex_left:
                    self.phase = "in"
                    self._code_point(self.code, out)
        return bytes(out)


def _hex4(data: bytes) -> int:
    value = 0
    for b in data:
        value = value << 4 | _HEX_VALUES.get(b, 0)
    return value


def json_string_value(token: bytes) -> bytes:
    """The value of a JSON string token a scanner accepted (any dialect: raw control
    characters and other escapes stay as written), as UTF-8 bytes, decoded the way
    csrc/text.c's tp_json_string_decode does: a lone surrogate escape is encoded as it is,
    which a later decode with "replace" turns into U+FFFD."""
    n = len(token)
    k = token.find(b'"') + 1 if b'"' in token else n
    out = bytearray()
    while k < n and token[k] != 0x22:
        if token[k] != 0x5C:  # not a backslash
            end = k
            while end < n and token[end] not in b'"\\':
                end += 1
            out += token[k:end]
            k = end
            continue
        if k + 1 >= n:
            break
        escape = token[k + 1]
        if escape == ord("u"):
            if k + 6 > n:
                return bytes(out)
            cp = _hex4(token[k + 2 : k + 6])
            k += 6
            if 0xD800 <= cp <= 0xDBFF and token[k : k + 2] == b"\\u" and k + 6 <= n:
                low = _hex4(token[k + 2 : k + 6])
                if 0xDC00 <= low <= 0xDFFF:
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00)
                    k += 6
            out += chr(cp).encode("utf-8", "surrogatepass")
            continue
        out += chr(_JSON_ESCAPES.get(escape, escape)).encode("utf-8", "surrogatepass")
        k += 2
    return bytes(out)


@dataclass
class _Frame:
    role: str
    decode: int
    data: bytearray = field(default_factory=bytearray)
    held: bytes = b""  # incomplete UTF-8 tail of streamed text
    json_text: _JsonStringText | None = None  # text written as a JSON string


@dataclass
class _Call:
    index: int | None = None
    name: str | None = None
    carried_id: str | None = None
    dead: bool = False
    args_parts: list[str] = field(default_factory=list)
    args_bytes: int = 0  # UTF-8 bytes of args_parts
    pending_args: list[str] = field(default_factory=list)  # before the name is known
    has_args: bool = False
    begun: bool = False  # the arguments have begun: the call is announced once named
    repaired: bool = False  # the grammar salvaged the call (its closing was cut off)
    missing_opener: bool = False  # written without its opening marker (repair grammars)
    missing_closer: bool = False  # a closing tag was left out in mid-output (repair)
    unfit: bool = False  # repair: a value that fit none of its types went in as a string
    params: int = 0
    param: str | None = None
    param_types: tuple[str, ...] = ("string",)
    param_node: SchemaNode | None = None  # None: the parameter is not in the schema
    in_value: bool = False  # a parameter's value is open
    value_cut: bool = False  # the end of the output cut it off


class Emitter:
    """Semantic ops in, events out; keeps the Message so far."""

    def __init__(
        self,
        tools: ToolTable,
        id_factory: Callable[[], str],
        *,
        repair: bool = False,
        limits: Limits = DEFAULT_LIMITS,
    ) -> None:
        self.types = tools.types
        self.schemas = tools.schemas
        self.limits = limits
        self.stopped = False  # a limit was met: nothing more is emitted
        self.repair = repair  # hold arguments; salvage what needs it (toolparse.repair)
        # repair mode: a call's arguments (as read) with its values coerced to the tool's
        # types and their JSON, or None (toolparse.repair.coerce_call)
        self.coerce: Coerce | None = None
        self.known_tools = tools.known
        self.id_factory = id_factory
        self.frames: list[_Frame] = []
        self.call: _Call | None = None
        self.next_index = 0
        self.content: list[str] = []
        self.reasoning: list[str] = []
        self.tool_calls: list[ToolCall] = []
        self.errors: list[ParseError] = []
        self.any_reasoning = False
        self.offset = 0  # stream offset of the tag opening or closing now, for its errors

    # -- ops -----------------------------------------------------------------------------

    def apply(self, ops: list[tuple[Any, ...]], out: list[Any]) -> None:
        for op in ops:
            if self.stopped:
                return
            kind = op[0]
            if kind == "text":
                self._text(op[1], out)
            elif kind == "open":
                self.offset = op[3]
                self._open(g.ROLES[op[1]], op[2], out)
            elif kind == "close":
                self.offset = op[1]
                self._close(out)
            elif kind == "error":
                self._error(op[1], op[2], out, *op[3:])
            else:  # abort
                while len(self.frames) > op[1]:
                    self._abort_frame(out)

    def _open(self, role: str, decode: int, out: list[Any]) -> None:
        frame = _Frame(role, decode)
        if role in _STRING_DECODED and decode == g.DECODE_JSON_STRING:
            frame.json_text = _JsonStringText()
        self.frames.append(frame)
        call = self.call
        if role == "reasoning":
            self.any_reasoning = True
        elif role == "tool_call":
            self.call = _Call()
        elif call is not None and role == "tool_args":
            if call.has_args or call.params:
                self._call_error("invalid_arguments", message(Msg.TWO_ARGUMENTS), out)
            call.has_args = call.begun = True
            self._announce(out)
        elif call is not None and role == "missing_opener":
            call.missing_opener = True
        elif call is not None and role == "missing_closer":
            call.missing_closer = True
        elif call is not None and role == "repaired":
            call.repaired = True
            call.value_cut = call.value_cut or call.in_value
        elif call is not None and role == "param_name":
            call.begun = True
            self._announce(out)
        elif call is not None and role == "param_value":
            if decode == g.DECODE_STRING:
                call.param_types = ("string",)
            elif decode == g.DECODE_JSON:
                call.param_types = ("json",)
            elif decode in (g.DECODE_PYTHON, g.DECODE_GEMMA, g.DECODE_FUNCTIONGEMMA):
                call.param_types = ("converted",)  # converted whole, at its end
            elif decode == g.DECODE_MINIMAX_M3 and call.param_node is None:
                call.param_types = ("converted",)  # its tags say what it is: at its end
            if call.param is not None and call.param_types == ("string",):
                self._args('"', out)
            call.in_value, call.value_cut = call.param is not None, False

    def _text(self, data: bytes, out: list[Any]) -> None:
        if not self.frames:
            return
        frame = self.frames[-1]
        role = frame.role
        if frame.json_text is not None:
            data = frame.json_text.feed(data)
        if role in _TEXT_ROLES or role == "tool_args" or self._streams_param(frame):
            whole, frame.held = split_utf8(frame.held + data)
            if whole:
                self._stream(frame, whole.decode("utf-8", "replace"), out)
        elif role != "tool_call":
            if len(frame.data) + len(data) > self.limits.max_argument_bytes:
                self._stop_at_limit("max_argument_bytes", out)  # a name or value held whole
                return
            frame.data += data

    def _streams_param(self, frame: _Frame) -> bool:
        call = self.call
        return (
            frame.role == "param_value"
            and call is not None
            and call.param is not None
            and call.param_types == ("string",)
        )

    def _stream(self, frame: _Frame, text: str, out: list[Any]) -> None:
        role = frame.role
        if role == "reasoning":
            self.reasoning.append(text)
            out.append(ReasoningDelta(text))
        elif role == "content":
            self.content.append(text)
            out.append(ContentDelta(text))
        elif role == "tool_args":
            self._args(text, out)
        else:  # a string parameter value, streamed as the inside of a JSON string
            self._args(json_string(text)[1:-1], out)

    def _close(self, out: list[Any]) -> None:
        frame = self.frames.pop()
        if frame.held:
            self._stream(frame, frame.held.decode("utf-8", "replace"), out)
            frame.held = b""
        if self.frames and self.frames[-1].role in _CAPTURE_PARENTS:
            self.frames[-1].data += frame.data  # an id may hold the name: it keeps its text
        role = frame.role
        call = self.call
        if role == "tool_call":
            self._end_call(out)
        elif call is None or role in _TEXT_ROLES or role == "tool_args":
            return
        elif role == "tool_name":
            self._name(self._decode(frame), out)
        elif role == "tool_id":
            if call.index is None:  # after the announcement, the announced id stays
                call.carried_id = self._decode(frame)
        elif role == "param_name":
            name = self._decode(frame)
            call.param = name
            types = self.types.get(call.name or "", {}).get(name, ("string",))
            call.param_types = types or ("string",)
            call.param_node = self.schemas.get(call.name or "", {}).get(name)
            self._args(("{" if call.params == 0 else ", ") + json_string(name) + ": ", out)
            call.params += 1
        elif role == "param_value":
            call.in_value = False
            if call.param is None:
                return
            if call.value_cut and call.param_types != ("string",):
                # a value the end cut off, as written: the repair reads it (the arguments
                # stay open, so it is read as cut off)
                self._args(bytes(frame.data).decode("utf-8", "replace"), out)
                return
            if call.param_types == ("string",):
                self._args('"', out)
            elif frame.decode == g.DECODE_PYTHON:
                self._args(python_literal_to_json(bytes(frame.data)), out)
            elif frame.decode == g.DECODE_GEMMA:
                self._args(gemma_value_to_json(bytes(frame.data)), out)
            elif frame.decode == g.DECODE_FUNCTIONGEMMA:
                self._args(gemma_value_to_json(bytes(frame.data), FUNCTIONGEMMA_QUOTE), out)
            elif frame.decode == g.DECODE_MINIMAX_M3:
                converted = m3_value_to_json(bytes(frame.data), call.param_node, typed_value)
                if converted is None:
                    self._call_error("invalid_arguments", message(Msg.INVALID_ARGUMENTS), out)
                else:
                    self._args(converted, out)
            else:
                raw = frame.data.decode("utf-8", "replace")
                typed = typed_value(raw, call.param_types)
                if typed is None and self.repair and call.param_types != ("json",):
                    # a string of its text, which the call's end must convert to one of
                    # its types (toolparse.repair.coerce_call)
                    call.unfit = True
                    self._args(json_string(raw), out)
                elif typed is None:
                    self._call_error("invalid_arguments", value_type(call.param), out)
                else:
                    self._args(typed, out)
            call.param = None

    @staticmethod
    def _decode(frame: _Frame) -> str:
        if frame.decode == g.DECODE_JSON_STRING:
            return json_string_value(bytes(frame.data)).decode("utf-8", "replace")
        return frame.data.decode("utf-8", "replace")

    def _name(self, name: str, out: list[Any]) -> None:
        call = self.call
        assert call is not None
        if call.dead:
            return
        if call.name is not None:
            self._call_error("invalid_arguments", message(Msg.TWO_NAMES), out)
            return
        if not name:
            self._call_error("invalid_arguments", message(Msg.EMPTY_NAME), out)
            return
        if self.known_tools is not None and name not in self.known_tools:
            self._call_error("unknown_tool", unknown_tool(name), out)
            return
        call.name = name
        if call.begun:
            self._announce(out)

    def declares(self, name: bytes) -> bool:
        """Whether the open call's tool declares a parameter of this name; True where
        there is no such call, its tool is unknown or declares no parameters."""
        call = self.call
        if call is None or call.name is None:
            return True
        params = self.types.get(call.name)
        if not params:
            return True
        return name.decode("utf-8", "replace") in params

    def declares_cut(self, text: bytes, end: bytes) -> bool:
        """Whether text, where the input ended, may be what is left of a parameter name
        the open call's tool declares followed by `end`: the first bytes of a name, or
        a whole name and the first bytes of end.  Where its tool is unknown or declares
        no parameters, any name (no whitespace, no angle bracket); False where there is
        no open call."""
        call = self.call
        if call is None:
            return False
        params = self.types.get(call.name or "")
        if not params:
            return any(
                len(text) - i < len(end)
                and end.startswith(text[i:])
                and not any(b in b" \t\n\r<>" for b in text[:i])
                for i in range(len(text) + 1)
            )
        for name in (n.encode() for n in params):
            if len(text) <= len(name):
                if name.startswith(text):
                    return True
            elif text.startswith(name) and end.startswith(text[len(name) :]):
                if len(text) - len(name) < len(end):
                    return True
        return False

    def _announce(self, out: list[Any]) -> None:
        """ToolCallStart, once the name is known and the arguments have begun (or the call
        ends): an id the output carries before its arguments is known by then."""
        call = self.call
        if call is None or call.dead or call.name is None or call.index is not None:
            return
        if self.next_index >= self.limits.max_tool_calls:
            self._stop_at_limit("max_tool_calls", out)
            return
        call.index = self.next_index
        self.next_index += 1
        call_id = call.carried_id or self.id_factory()
        call.carried_id = call_id
        out.append(ToolCallStart(call.index, call_id, call.name))
        if call.pending_args:  # arguments that came before the name, as one delta
            out.append(ToolCallArgsDelta(call.index, "".join(call.pending_args)))
            call.pending_args.clear()

    def _args(self, text: str, out: list[Any]) -> None:
        call = self.call
        if call is None or call.dead or not text:
            return
        data = text.encode()
        room = self.limits.max_argument_bytes - call.args_bytes
        if len(data) > room:  # what fits goes out, then the limit: the same at any chunking
            while room > 0 and data[room] & 0xC0 == 0x80:
                room -= 1
            if room:
                self._args(data[:room].decode(), out)
            self._stop_at_limit("max_argument_bytes", out)
            return
        call.args_bytes += len(data)
        call.args_parts.append(text)
        if self.repair:
            return  # held: sent whole (or repaired) when the call ends
        if call.index is None:
            call.pending_args.append(text)
        else:
            out.append(ToolCallArgsDelta(call.index, text))

    def _end_call(self, out: list[Any]) -> None:
        call = self.call
        if call is None:
            return
        if not call.dead:
            self._finish_call(call, out)
        self.call = None

    def _finish_call(self, call: _Call, out: list[Any]) -> None:
        self._announce(out)
        if self.stopped:
            return  # announcing it met the limit on calls
        if call.name is None:
            if self.repair and call.repaired:  # a repair closed it: its name never came
                self._call_error("incomplete", message(Msg.ENDED_INSIDE_CALL), out)
            else:
                self._call_error("invalid_arguments", message(Msg.NO_NAME), out)
            return
        if call.params:
            if not (self.repair and call.param is not None):  # repair drops a name alone
                self._args("}", out)
        elif not call.has_args:
            self._args("{}", out)
        if self.stopped:
            return  # closing the arguments met the limit on their bytes
        arguments_json = "".join(call.args_parts)
        valid = _strict_json_kind(arguments_json) == "object"
        blank = not arguments_json.strip(" \t\r\n")
        if self.repair and call.repaired and not call.params and (not call.has_args or blank):
            self._call_error("incomplete", message(Msg.ENDED_INSIDE_CALL), out)
            return  # repair never invents arguments
        repairs: tuple[str, ...] = ()
        if self.repair and (call.repaired or not valid):
            try:
                fixed = repair_arguments(arguments_json, call.repaired)
            except NothingLeft:
                self._call_error("incomplete", message(Msg.ENDED_INSIDE_CALL), out)
                return
            except ValueError as exc:
                self._call_error("invalid_arguments", str(exc), out)
                return
            if fixed is None:
                self._call_error("invalid_arguments", message(Msg.NOT_AN_OBJECT), out)
                return
            arguments_json, repairs = fixed
        elif not valid:
            self._call_error("invalid_arguments", message(Msg.NOT_AN_OBJECT), out)
            return
        marked = (MISSING_OPENER,) * call.missing_opener + (MISSING_CLOSER,) * call.missing_closer
        repairs = (*marked, *repairs)
        assert call.index is not None and call.carried_id is not None
        error: str | None = None
        arguments: Any = None
        try:
            arguments = load_arguments(arguments_json)
        except ValueError as exc:
            error = str(exc)
        if error is None and call.unfit and self.coerce is None:
            error = message(Msg.INVALID_ARGUMENTS)  # (no stated type to convert it to)
        if error is None and self.coerce is not None:
            try:
                coerced = self.coerce(call.name, arguments, CLOSED_AT_END in repairs, call.unfit)
            except ValueError as exc:  # a value written as text that converts to no type
                error = str(exc)
            else:
                if coerced is not None:
                    (arguments, arguments_json), repairs = coerced, (*repairs, COERCED_VALUES)
        if self.repair:  # the arguments were held: they go out whole, also before an error
            out.append(ToolCallArgsDelta(call.index, arguments_json))
        if error is not None:
            self._call_error("invalid_arguments", error, out)
            return
        tool_call = ToolCall(
            call.index,
            call.carried_id,
            call.name,
            arguments,
            arguments_json,
            bool(repairs),
            repairs,
        )
        self.tool_calls.append(tool_call)
        out.append(ToolCallEnd(call.index, tool_call))

    def _call_error(self, kind: str, message: str, out: list[Any]) -> None:
        """The open call is invalid: report it and drop the rest of it."""
        if self.stopped:
            return  # a limit ended the call and everything after it
        call = self.call
        assert call is not None
        if call.dead:
            return  # reported once: the rest of the call is dropped
        error = ParseError(kind, message, call.index, self.offset)
        self.errors.append(error)
        out.append(error)
        call.dead = True

    def _stop_at_limit(self, limit: str, out: list[Any]) -> None:
        """A limit was met: report it, then emit nothing more and drop the open call."""
        call = self.call
        index = call.index if call is not None and not call.dead else None
        error = ParseError("limit", self.limits.message(limit), index, self.offset)
        self.errors.append(error)
        out.append(error)
        self.stopped = True
        self.frames.clear()
        self.call = None

    @property
    def held_bytes(self) -> int:
        """Bytes held for the open call: its arguments, names and values held whole."""
        call = self.call
        held = sum(len(frame.data) for frame in self.frames)
        if call is not None:
            held += call.args_bytes + sum(len(p.encode()) for p in call.pending_args)
        return held

    def _error(self, kind: str, offset: int, out: list[Any], limit: str | None = None) -> None:
        if limit is not None:  # the parse met a limit
            self.offset = offset
            self._stop_at_limit(limit, out)
            return
        call = self.call
        if call is not None and kind == "unexpected":
            kind = "invalid_arguments"  # inside a call envelope, bad input is a bad call
        index = call.index if call is not None and not call.dead else None
        error = ParseError(kind, _KIND_MESSAGES.get(kind, kind), index, offset)
        self.errors.append(error)
        out.append(error)
        if call is not None:
            call.dead = True

    def _abort_frame(self, out: list[Any]) -> None:
        frame = self.frames.pop()
        if frame.role in _TEXT_ROLES and frame.held:
            self._stream(frame, frame.held.decode("utf-8", "replace"), out)
        if frame.role == "tool_call":
            self.call = None

    # -- results -------------------------------------------------------------------------

    def abort_all(self, out: list[Any]) -> None:
        """The end of the stream: tags still open end without closing."""
        if self.stopped:
            return
        while self.frames:
            self._abort_frame(out)
