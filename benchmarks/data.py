"""Benchmark inputs, generated deterministically on demand (no data files are kept).

Every generator takes a target size in bytes and returns bytes of about that size (JSON
documents stay complete, so they end a little past it); the same size always gives the
same bytes.  The native and reference engines may be measured on inputs of different sizes
(the reference engines are slow), so results are compared per byte.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Sequence

MIB = 1 << 20


def _deepseek(name: str) -> str:
    """A DeepSeek delimiter: FULLWIDTH VERTICAL LINE around words joined by LOWER ONE EIGHTH
    BLOCK (written as escapes, since the characters look like ASCII)."""
    return "<\uff5c" + name.replace(" ", "\u2581") + "\uff5c>"


# Markers as the chat templates of common open models write them: Hermes/Qwen tool calls,
# reasoning blocks, DeepSeek's multi-byte delimiters, Mistral, Llama and Qwen specials.
MARKERS: tuple[str, ...] = (
    "<tool_call>",
    "</tool_call>",
    "<think>",
    "</think>",
    _deepseek("tool calls begin"),
    _deepseek("tool calls end"),
    _deepseek("tool call begin"),
    _deepseek("tool call end"),
    _deepseek("tool sep"),
    "[TOOL_CALLS]",
    "<|python_tag|>",
    "<|eom_id|>",
    "<|im_start|>",
    "<|im_end|>",
    "<function=",
    "</function>",
)

_WORDS = (
    "the model reads a request and decides whether a tool is needed before it answers "
    "weather forecast for tomorrow in Paris Berlin Tokyo São Paulo Zürich naïve café "
    "temperature humidity wind speed kilometres per hour probably about roughly "
    "function arguments schema returns a list of results sorted by relevance "
    "however therefore because although meanwhile first second finally "
    "user assistant system message context window tokens latency throughput"
).split()

_PUNCTUATION = (" ", " ", " ", " ", " ", ", ", ". ", "; ", ": ", "! ", "? ", "\n", "\n\n")

# Text that looks like the start of a marker but is not one: comparisons, HTML, code.
_NEAR_MISSES = (
    "a < b",
    "x<y",
    ' <div class="note">',
    "</p>",
    "<tool>",
    "<|endoftext",
    " <thinking> ",
    "<function> ",
    "[TOOL] ",
    _deepseek("end of sentence"),
    "vector<int> v;",
    "if (i <= n) {",
)


def _sentence(rng: random.Random) -> str:
    words = [rng.choice(_WORDS) for _ in range(rng.randint(6, 18))]
    words[0] = words[0].capitalize()
    return " ".join(words) + rng.choice(_PUNCTUATION)


def _tool_call_block(rng: random.Random) -> str:
    arguments = json.dumps(
        {"city": rng.choice(["Paris", "Zürich", "東京"]), "days": rng.randint(1, 14)},
        ensure_ascii=False,
    )
    name = rng.choice(["get_weather", "search", "lookup_user"])
    style = rng.randrange(4)
    if style == 0:
        return f'<tool_call>\n{{"name": "{name}", "arguments": {arguments}}}\n</tool_call>'
    if style == 1:
        return (
            f"{_deepseek('tool calls begin')}{_deepseek('tool call begin')}function"
            f"{_deepseek('tool sep')}{name}\n```json\n{arguments}\n```"
            f"{_deepseek('tool call end')}{_deepseek('tool calls end')}"
        )
    if style == 2:
        return f'[TOOL_CALLS] [{{"name": "{name}", "arguments": {arguments}}}]'
    return f"<function={name}>{arguments}</function><|eom_id|>"


def prose(size: int) -> bytes:
    """Model output: mostly prose, some near-miss `<` text, a reasoning block and a tool
    call every few kilobytes (about one marker per 500 bytes)."""
    rng = random.Random(0x70726F7365)
    parts: list[str] = []
    length = 0
    while length < size:
        roll = rng.random()
        if roll < 0.02:
            piece = "<think>\n" + _sentence(rng) + _sentence(rng) + "</think>\n"
        elif roll < 0.04:
            piece = _tool_call_block(rng)
        elif roll < 0.10:
            piece = rng.choice(_NEAR_MISSES) + " "
        else:
            piece = _sentence(rng)
        parts.append(piece)
        length += len(piece.encode())
    return "".join(parts).encode()[:size]


def partial_markers(size: int) -> bytes:
    """Adversarial: `<tool_c` over and over, a marker prefix that never completes, so the
    matcher is always holding bytes back and restarting."""
    unit = b"<tool_c"
    return (unit * (size // len(unit) + 1))[:size]


# -- JSON ----------------------------------------------------------------------------------

_TEXTS = (
    "Paris, France",
    'She said "hello" and left.',
    "line one\nline two\ttabbed",
    "path\\to\\file.txt",
    "naïve café — Zürich ☃",
    "中文字符和日本語のテキスト",
    "emoji 😀🚀 and ∑ math",
    "control \u0001 and \u001f bytes",
    "plain ascii words for the common case",
)


def _string(rng: random.Random) -> str:
    """A JSON string: raw UTF-8 or \\u escapes (surrogate pairs included), with the usual
    backslash escapes for quotes, newlines and backslashes."""
    text = rng.choice(_TEXTS)
    if rng.random() < 0.5:
        text = f"{text} {rng.randrange(10**6)}"
    return json.dumps(text, ensure_ascii=rng.random() < 0.3)


def _number(rng: random.Random) -> str:
    kind = rng.randrange(5)
    if kind == 0:
        return str(rng.randrange(-1000, 1000))
    if kind == 1:
        return str(rng.randrange(10**15, 10**18))
    if kind == 2:
        return repr(round(rng.uniform(-1e3, 1e3), rng.randrange(1, 8)))
    if kind == 3:
        return f"{rng.uniform(-1, 1):.6e}"
    return "0"


def _record(rng: random.Random) -> str:
    """One element of a tool call's argument list: an object with strings, numbers,
    literals and a nested array."""
    nested = ", ".join(
        f"[{_number(rng)}, {_string(rng)}, [{_number(rng)}, {rng.choice(['true', 'null'])}]]"
        for _ in range(rng.randint(1, 3))
    )
    return (
        f'{{"id": {rng.randrange(10**6)}, "title": {_string(rng)}, "score": {_number(rng)}, '
        f'"tags": [{_string(rng)}, {_string(rng)}], "active": {rng.choice(["true", "false"])}, '
        f'"parent": null, "matrix": [{nested}]}}'
    )


def _document(prefix: str, items, size: int, separator: str = ", ", closing: str = "]}}") -> bytes:
    """`prefix` + items joined by `separator` until `size` bytes + the closing brackets."""
    parts: list[str] = []
    length = len(prefix.encode())
    while length < size:
        item = next(items)
        parts.append(item)
        length += len(item.encode()) + len(separator)
    doc = (prefix + separator.join(parts) + closing).encode()
    json.loads(doc)  # the generators must produce valid JSON
    return doc


def tool_call_json(size: int) -> bytes:
    """A tool call whose arguments hold a long list of records: the realistic mix."""
    rng = random.Random(0x746F6F6C)

    def items():
        while True:
            yield _record(rng)

    return _document('{"name": "store_results", "arguments": {"results": [', items(), size)


def string_heavy_json(size: int) -> bytes:
    """Long strings (code, prose, escapes and non-ASCII): the scanner's string loop."""
    rng = random.Random(0x737472)

    def items():
        while True:
            body = "".join(rng.choice(_TEXTS) + rng.choice(_PUNCTUATION) for _ in range(40))
            yield json.dumps(body, ensure_ascii=rng.random() < 0.2)

    return _document('{"name": "write_file", "arguments": {"chunks": [', items(), size)


def number_heavy_json(size: int) -> bytes:
    """Rows of numbers (integers, decimals, exponents): the scanner's number states."""
    rng = random.Random(0x6E756D)

    def items():
        while True:
            yield "[" + ", ".join(_number(rng) for _ in range(16)) + "]"

    return _document('{"name": "plot", "arguments": {"rows": [', items(), size)


TRIE_INPUTS = {"prose": prose, "partial_markers": partial_markers}
JSON_INPUTS = {
    "tool_call": tool_call_json,
    "string_heavy": string_heavy_json,
    "number_heavy": number_heavy_json,
}


# -- Streams -------------------------------------------------------------------------------
#
# Whole model responses for StreamParser: a part that is timed per token (the body), and
# the text around it (the parser is fed what comes before outside the timed region).


def _whole_characters(text: str, size: int) -> bytes:
    """text encoded and cut to `size` bytes, without splitting a character at the end."""
    return text.encode()[:size].decode("utf-8", "ignore").encode()


def content(size: int) -> bytes:
    """A response that is all content in the hermes format: prose with non-ASCII words and,
    now and then, a `<` that starts no marker (comparisons, HTML, code), as `prose` has but
    without its markers."""
    rng = random.Random(0x636F6E74)
    parts: list[str] = []
    length = 0
    while length < size:
        piece = rng.choice(_NEAR_MISSES) + " " if rng.random() < 0.06 else _sentence(rng)
        parts.append(piece)
        length += len(piece.encode())
    return _whole_characters("".join(parts), size)


def call_arguments(size: int) -> bytes:
    """The arguments of a tool call, a JSON object of about `size` bytes (a little past it):
    a query and a list of records like those of `tool_call_json`."""
    rng = random.Random(0x61726773)

    def items():
        while True:
            yield _record(rng)

    return _document('{"query": "forecast Zürich", "results": [', items(), size, closing="]}")


# A hermes call around `call_arguments`: `HERMES_CALL[0] + arguments + HERMES_CALL[1]`.
HERMES_CALL_NAME = "store_results"
HERMES_CALL = (
    b'<tool_call>\n{"name": "' + HERMES_CALL_NAME.encode() + b'", "arguments": ',
    b"}\n</tool_call>",
)

# Sizes of the arguments in the hermes tool-call cases.
ARGUMENT_SIZES = {"1KiB": 1024, "10KiB": 10 * 1024, "100KiB": 100 * 1024}

_CODE_HEADER = '"""Weather reports: fetch, summarise, render."""\n\nimport sys\n'

_CODE_BODY = (
    "    if days < 1 or days >= 15:",
    '        raise ValueError(f"days out of range: {days!r}")',
    "    readings = [r for r in fetch(city) if r.day <= days and r.value > -90]",
    "    total = sum(r.value for r in readings)  # °C, a naïve mean for Zürich",
    '    html = "<div class=\\"report\\">" + escape(city) + "</div><p>" + note + "</p>"',
    "    mask = (flags << 2) & 0xFF if flags else 0",
    '    path = "C:\\\\data\\\\" + city + ".json"',
    "    for i in range(1, len(values)):",
    "        values[i] = values[i - 1] * 0.5 if values[i] < limit else values[i]",
    '    print("%s → %d readings (東京: %s)" % (city, len(readings), "n/a"), file=sys.stderr)',
    "    # keep a < b and x<y as they are: <tool> and <div> are not markers",
    "\tlegacy = '\\t'  # a tab-indented line",
)


def _code_block(rng: random.Random) -> str:
    """A function: signature, docstring, a few statements, a return, a blank line."""
    word = rng.choice(_WORDS)
    body = [rng.choice(_CODE_BODY) for _ in range(rng.randint(3, 8))]
    return "\n".join(
        [
            f'def {word}_{rng.randrange(1000)}(city, days=7, *, units="metric"):',
            f'    """Return the {word} forecast for a city, one entry per day."""',
            *body,
            '    return {"city": city, "days": days, "total": total, "ok": True}',
            "",
            "",
        ]
    )


def source_code(size: int) -> bytes:
    """A multi-line source file of about `size` bytes (whole functions, no newline at the
    end): indentation, quotes and backslashes, `<` in comparisons and HTML strings, tabs and
    non-ASCII characters."""
    rng = random.Random(0x636F6465)
    parts = [_CODE_HEADER]
    length = len(_CODE_HEADER.encode())
    while length < size:
        block = "\n" + _code_block(rng)
        parts.append(block)
        length += len(block.encode())
    return "".join(parts).rstrip("\n").encode()


# A qwen3_coder call of write_file around `source_code`, whose `content` parameter is
# typed string by WRITE_FILE_TOOLS: `CODER_CALL[0] + code + CODER_CALL[1]`.
WRITE_FILE_PATH = "src/forecast/report.py"
WRITE_FILE_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "write_file",
            "description": "Write a text file, replacing it if it exists.",
            "parameters": {
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "Path in the repository."},
                    "content": {"type": "string", "description": "The whole new file."},
                },
                "required": ["path", "content"],
            },
        },
    }
]
CODER_CALL = (
    b"<tool_call>\n<function=write_file>\n<parameter=path>\n"
    + WRITE_FILE_PATH.encode()
    + b"\n</parameter>\n<parameter=content>\n",
    b"\n</parameter>\n</function>\n</tool_call>",
)
CODER_SIZE = 10 * 1024


def chunks(data: bytes, width: int) -> list[bytes]:
    """data cut into pieces of `width` bytes, as a tokenizer-driven stream delivers it
    (multi-byte UTF-8 characters are split across pieces too)."""
    return [data[i : i + width] for i in range(0, len(data), width)]


def feed_timed(
    feed: Callable[[bytes], object],
    first: Sequence[bytes],
    middle: Sequence[bytes],
    last: Sequence[bytes],
) -> tuple[float, float, float]:
    """Feeds the three parts of a body in order; returns the seconds of the whole, of the
    first part and of the last (how the cost per token moves along the output)."""
    start = time.perf_counter()
    for piece in first:
        feed(piece)
    first_end = time.perf_counter()
    for piece in middle:
        feed(piece)
    last_start = time.perf_counter()
    for piece in last:
        feed(piece)
    end = time.perf_counter()
    return end - start, first_end - start, end - last_start
