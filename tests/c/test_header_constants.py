"""Every number Python keeps a copy of matches the C core's headers.

The compiler (grammar.py), the reference engine, the tool table's type codes, the limits and
the glue's error messages repeat values that csrc/*.h defines.  This reads the headers (their
#defines, their enums, the opcode width table) with a few regular expressions and checks each
copy, so changing a value on one side alone fails here.
"""

from __future__ import annotations

import ast
import operator
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import toolparse._common as common
import toolparse.errors as errors
import toolparse.grammar as grammar
import toolparse.limits as limits
import toolparse.reference.emitter as reference_emitter
import toolparse.reference.gemmavalue as reference_gemma
import toolparse.reference.json as reference_json
import toolparse.reference.m3value as reference_m3
import toolparse.stream as stream

ROOT = Path(__file__).resolve().parents[2]
CSRC = ROOT / "csrc"
SRC = ROOT / "src"

# -- the headers ---------------------------------------------------------------------------


def _strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


_OPERATORS: dict[type, Callable[[int, int], int]] = {
    ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
    ast.BitOr: operator.or_,
    ast.BitAnd: operator.and_,
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
}


def _evaluate(expression: str, names: dict[str, int]) -> int:
    """A C integer constant expression: literals (u suffixes dropped), names already read,
    parentheses, + - * << >> | &."""
    python = re.sub(r"\b(0x[0-9a-fA-F]+|\d+)[uUlL]*\b", r"\1", expression.strip())
    python = re.sub(r"\(\s*(?:uint\d+_t|size_t|unsigned)\s*\)", "", python)  # casts

    def walk(node: ast.AST) -> int:
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return node.value
        if isinstance(node, ast.Name):
            return names[node.id]
        if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
            return _OPERATORS[type(node.op)](walk(node.left), walk(node.right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -walk(node.operand)
        raise ValueError(f"not a constant expression: {expression!r}")

    return walk(ast.parse(python, mode="eval").body)


def read_headers() -> tuple[dict[str, int], dict[str, bytes], dict[str, int]]:
    """(integer constants: #defines and enumerators, string #defines, opcode widths)."""
    ints: dict[str, int] = {}
    strings: dict[str, bytes] = {}
    widths: dict[str, int] = {}
    for path in sorted(CSRC.glob("*.h")):
        text = _strip_comments(path.read_text(encoding="utf-8"))
        for name, value in re.findall(r"^\s*#define\s+(TP_\w+)[ \t]+(.+?)\s*$", text, re.M):
            if value.startswith('"'):
                strings[name] = ast.literal_eval("b" + value)
                continue
            try:
                ints[name] = _evaluate(value, ints)
            except (ValueError, KeyError, SyntaxError):
                pass  # a macro with arguments or a non-constant: not a value to compare
        for body in re.findall(r"\benum\s*\w*\s*\{(.*?)\}", text, re.S):
            following = -1
            for item in filter(None, (part.strip() for part in body.split(","))):
                name, _, value = item.partition("=")
                following = _evaluate(value, ints) if value else following + 1
                ints[name.strip()] = following
        for table in re.findall(r"operands\[TP_OP_COUNT\]\s*=\s*\{(.*?)\}", text, re.S):
            for op, width in re.findall(r"\[(TP_OP_\w+)\]\s*=\s*(\d+)", table):
                widths[op] = int(width)
    return ints, strings, widths


INTS, STRINGS, WIDTHS = read_headers()


def c(name: str) -> int:
    assert name in INTS, f"{name} is in no csrc/*.h"
    return INTS[name]


def c_prefixed(prefix: str) -> dict[str, int]:
    """The constants named prefix + X, as {X: value}."""
    return {name[len(prefix) :]: v for name, v in INTS.items() if name.startswith(prefix)}


# -- where Python keeps its copies ---------------------------------------------------------
# The glue's tables are module-level cdef constants of the .pxi files, read from their source.
# Another change may move the message tables to python/toolparse/errors.py: repoint these
# few lookups then.


def _pxi_constant(path: Path, name: str) -> Any:
    """The literal value of `cdef TYPE NAME = ...` in a .pxi file."""
    text = path.read_text(encoding="utf-8")
    start = re.search(rf"^cdef \w+ {name} = ", text, re.M)
    assert start, f"{name} is not in {path.name}"
    source, depth, k = "", 0, start.end()
    while True:
        line_end = text.index("\n", k)
        line = re.sub(r"\s+#.*$", "", text[k:line_end])
        source += line + "\n"
        depth += sum(line.count(o) for o in "([{") - sum(line.count(o) for o in ")]}")
        k = line_end + 1
        if depth <= 0:
            return ast.literal_eval(source.strip())


def error_messages() -> tuple[str | None, ...]:
    return errors.MESSAGES


def first_limit_message() -> int:
    return int(errors.Msg.LIMIT)


def error_kinds() -> tuple[str, ...]:
    return errors.ERROR_KINDS


def stream_repair_flag() -> int:
    return int(_pxi_constant(SRC / "stream.pxi", "_STREAM_REPAIR"))


def batch_faults() -> tuple[str | None, ...]:
    return tuple(_pxi_constant(SRC / "batch.pxi", "_BATCH_FAULTS"))


def reference_messages() -> dict[str, str]:
    """The reference emitter's messages by error kind."""
    return dict(reference_emitter._KIND_MESSAGES)


def reference_emitter_source() -> str:
    return Path(reference_emitter.__file__).read_text(encoding="utf-8")


# -- the checks ----------------------------------------------------------------------------


def test_the_headers_were_read() -> None:
    # a reader that silently found nothing would pass everything below
    assert len(INTS) > 100 and len(WIDTHS) == c("TP_OP_COUNT")
    assert c("TP_OP_COUNT") == 22 and c("TP_MSG_LIMIT_STREAM") == 15 and c("TP_TYPE_JSON") == 8


def test_opcodes_and_their_widths() -> None:
    opcodes = c_prefixed("TP_OP_")
    del opcodes["COUNT"]
    assert c("TP_OP_COUNT") == len(grammar.OPERANDS) == len(grammar.OPCODE_NAMES)
    for name, number in opcodes.items():
        assert getattr(grammar, f"OP_{name}") == number, name
        assert grammar.OPCODE_NAMES[number] == name
        assert grammar.OPERANDS[number] == WIDTHS[f"TP_OP_{name}"], f"width of {name}"
    # the reference VM steps by the compiler's table, not one of its own
    vm_source = (ROOT / "python/toolparse/reference/vm.py").read_text(encoding="utf-8")
    assert "g.OPERANDS[op]" in vm_source and "OPERANDS =" not in vm_source


def test_program_format() -> None:
    assert STRINGS["TP_PROGRAM_MAGIC"] == grammar.MAGIC
    assert c("TP_ROLE_COUNT") == len(grammar.ROLES)
    for k, role in enumerate(grammar.ROLES):
        assert c(f"TP_ROLE_{role.upper()}") == k, role
    for name, value in c_prefixed("TP_DECODE_").items():
        assert getattr(grammar, f"DECODE_{name}") == value, name
    for k, dialect in enumerate(grammar.DIALECTS):
        assert c(f"TP_JSON_{dialect.upper()}") == k, dialect
    flags = {
        "TP_EOF_STOPPED": grammar.EOF_STOPPED,
        "TP_CHARS_SET_BYTES": grammar.CHARS_SET_BYTES,
        "TP_CHARS_MIN1": grammar.CHARS_MIN1,
        "TP_UNTIL_MIN1": grammar.UNTIL_MIN1,
        "TP_UNTIL_NEED_STOP": grammar.UNTIL_NEED_STOP,
        "TP_UNTIL_COMMIT": grammar.UNTIL_COMMIT,
        "TP_UNTIL_END_TRIMS": grammar.UNTIL_END_TRIMS,
        "TP_JSON_KIND_ANY": grammar.JSON_ANY,
        "TP_JSON_KIND_STRING": grammar.JSON_STRING,
        "TP_JSON_KIND_OBJECT": grammar.JSON_OBJECT,
        "TP_JSON_CLOSE_AT_END": grammar.JSON_CLOSE_AT_END,
    }
    for name, value in flags.items():
        assert c(name) == value, name


def test_parameter_type_codes() -> None:
    for name, code in stream._TYPE_CODES.items():
        assert c(f"TP_TYPE_{name.upper()}") == code, name
    # a type the table does not name is "other", in both encoders
    for module in (stream, reference_m3):
        source = Path(module.__file__ or "").read_text(encoding="utf-8")
        defaults = re.findall(r"\.get\(t, (\d+)\)", source)
        assert defaults and {int(d) for d in defaults} == {c("TP_TYPE_OTHER")}, module.__name__


def test_limits() -> None:
    assert c("TP_MAX_IDLE_STEPS") == limits.MAX_IDLE_STEPS
    defaults = limits.Limits()
    assert c("TP_DEFAULT_MAX_DEPTH") == defaults.max_depth
    assert c("TP_DEFAULT_MAX_ARGUMENT_BYTES") == defaults.max_argument_bytes
    assert c("TP_DEFAULT_MAX_PENDING_BYTES") == defaults.max_pending_bytes
    assert c("TP_DEFAULT_MAX_TOOL_CALLS") == defaults.max_tool_calls
    assert defaults.max_stream_bytes is None  # the core's 0
    assert limits.MAX_DEPTH_CEILING <= c("TP_JSON_MAX_DEPTH_CEILING")


def test_error_kinds_and_messages() -> None:
    kinds = error_kinds()
    for name, value in c_prefixed("TP_PE_").items():
        assert kinds[value] == name.lower(), name
    assert len(kinds) == len(c_prefixed("TP_PE_"))

    messages = error_messages()
    assert first_limit_message() == c("TP_MSG_LIMIT") == len(messages)
    # each id's message, by what it says (None: made with a name, detailed_message)
    says = {
        "TP_MSG_ENDED_INSIDE_CALL": "ended inside a tool call",
        "TP_MSG_INVALID_ARGUMENTS": "arguments are not valid",
        "TP_MSG_UNEXPECTED": "does not accept here",
        "TP_MSG_TWO_ARGUMENTS": "two sets of arguments",
        "TP_MSG_TWO_NAMES": "two names",
        "TP_MSG_EMPTY_NAME": "an empty name",
        "TP_MSG_UNKNOWN_TOOL": None,
        "TP_MSG_NO_NAME": "has no name",
        "TP_MSG_NOT_AN_OBJECT": "not a JSON object",
        "TP_MSG_VALUE_TYPE": None,
    }
    below_limits = {n for n, v in INTS.items() if n.startswith("TP_MSG_") and v < c("TP_MSG_LIMIT")}
    assert set(says) == below_limits
    for name, words in says.items():
        message = messages[c(name)]
        assert message is None if words is None else words in (message or ""), name
    limit_ids = {
        "TP_MSG_LIMIT": "max_steps",
        "TP_MSG_LIMIT_DEPTH": "max_depth",
        "TP_MSG_LIMIT_ARGUMENT": "max_argument_bytes",
        "TP_MSG_LIMIT_PENDING": "max_pending_bytes",
        "TP_MSG_LIMIT_CALLS": "max_tool_calls",
        "TP_MSG_LIMIT_STREAM": "max_stream_bytes",
    }
    assert set(limit_ids) == {n for n in INTS if n.startswith("TP_MSG_LIMIT")}
    for name, limit in limit_ids.items():
        assert limits.LIMIT_NAMES[c(name) - first_limit_message()] == limit, name
    assert len(limits.LIMIT_NAMES) == len(limit_ids)

    # the reference emitter says the same, by kind and in its calls' errors
    by_kind = reference_messages()
    assert by_kind["incomplete"] == messages[c("TP_MSG_ENDED_INSIDE_CALL")]
    assert by_kind["invalid_arguments"] == messages[c("TP_MSG_INVALID_ARGUMENTS")]
    assert by_kind["unexpected"] == messages[c("TP_MSG_UNEXPECTED")]
    # ... from the one table: no message of its own
    source = reference_emitter_source()
    for message in messages:
        if message is not None:
            assert f'"{message}"' not in source, message
    # the table's ids are the header's
    assert {f"TP_MSG_{m.name}": int(m) for m in errors.Msg} == {
        n: v for n, v in INTS.items() if n.startswith("TP_MSG_") and v <= c("TP_MSG_LIMIT")
    }


def test_status_codes() -> None:
    assert errors.STATUS_OK == c("TP_OK")
    assert errors.STATUS_NOMEM == c("TP_ERR_NOMEM")


def test_stream_flags_and_batch_faults() -> None:
    assert stream_repair_flag() == c("TP_STREAM_REPAIR")
    faults = batch_faults()
    assert len(faults) == len(c_prefixed("TP_BATCH_"))
    assert faults[c("TP_BATCH_NO_FAULT")] is None
    words = {
        "NO_STREAM": "no stream",
        "TWICE": "twice",
        "BAD_TOKEN": "token id",
        "FINISHED": "finished",
    }
    for name, word in words.items():
        assert word in (faults[c(f"TP_BATCH_{name}")] or ""), name


def test_json_scanner_constants() -> None:
    assert c("TP_JSON_DEFAULT_MAX_DEPTH") == reference_json.DEFAULT_MAX_DEPTH
    assert c("TP_JSON_MAX_DEPTH_CEILING") == reference_json.MAX_DEPTH_CEILING
    names = reference_json.RELAXATION_NAMES
    assert c("TP_JSON_RELAXATION_COUNT") == len(names)
    for name, bit in c_prefixed("TP_JSON_R_").items():
        assert 1 << names.index(name.lower()) == bit, name
    source = Path(reference_json.__file__).read_text(encoding="utf-8")
    for name in c_prefixed("TP_JSON_E_"):
        assert f'"{name.lower()}"' in source, name


@pytest.mark.parametrize(
    ("header", "python"),
    [
        ("TP_TRIE_MAX_MARKERS", common.MAX_MARKERS),
        ("TP_TRIE_MAX_MARKER_LEN", common.MAX_MARKER_LENGTH),
        ("TP_M3_MAX_DEPTH", reference_m3.MAX_DEPTH),
        ("TP_M3_MAX_TYPES", reference_m3.MAX_TYPES),
    ],
)
def test_sizes(header: str, python: int) -> None:
    assert c(header) == python


def test_value_quotes() -> None:
    assert STRINGS["TP_GEMMA_QUOTE"] == reference_gemma.QUOTE
    assert STRINGS["TP_FUNCTIONGEMMA_QUOTE"] == reference_gemma.FUNCTIONGEMMA_QUOTE
