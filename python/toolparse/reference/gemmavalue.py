"""Pure-Python twin of csrc/gemmavalue.c: a Gemma 4 tool-call value to JSON text.

Gemma 4 writes dicts with bare keys and strings between ``<|"|>`` tokens
(``{city:<|"|>Paris<|"|>,days:3}``).  A string becomes a JSON string of its raw text, a
dict key (the text between two quotes, or the text before its colon without trailing
whitespace) a JSON string, numbers, true, false and null stay as written, and the
separators become ", " and ": ".
"""

from __future__ import annotations

import json

QUOTE = b'<|"|>'
FUNCTIONGEMMA_QUOTE = b"<escape>"  # FunctionGemma writes the same notation with this quote
_SPACE = b" \t\r\n"


def _json_string(data: bytes) -> str:
    return json.dumps(data.decode("utf-8", "replace"), ensure_ascii=False)


def gemma_value_to_json(data: bytes, quote: bytes = QUOTE) -> str:
    out: list[str] = []
    open_containers = bytearray()  # innermost last
    want_key = False
    k, n = 0, len(data)
    while k < n:
        b = data[k]
        if b in _SPACE:
            k += 1
        elif want_key and b != ord("}"):
            if data.startswith(quote, k):  # a quoted key: its text; then up to the colon
                start = k + len(quote)
                end = data.find(quote, start)
                end = n if end < 0 else end
                key = data[start:end]
                colon = data.find(b":", min(end + len(quote), n))
            else:  # a bare key: the text before its colon
                colon = data.find(b":", k)
                key = data[k : n if colon < 0 else colon].rstrip(_SPACE)
            out.append(_json_string(key) + ": ")
            k = n if colon < 0 else colon + 1
            want_key = False
        elif data.startswith(quote, k):
            start = k + len(quote)
            end = data.find(quote, start)
            end = n if end < 0 else end
            out.append(_json_string(data[start:end]))
            k = min(end + len(quote), n)
        elif b in b"{[":
            open_containers.append(b)
            out.append(chr(b))
            want_key = b == ord("{")
            k += 1
        elif b in b"}]":
            if open_containers:
                open_containers.pop()
            out.append(chr(b))
            want_key = False
            k += 1
        elif b == ord(","):
            out.append(", ")
            want_key = bool(open_containers) and open_containers[-1] == ord("{")
            k += 1
        else:
            out.append(chr(b))
            k += 1
    return "".join(out)
