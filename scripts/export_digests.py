"""Digests of every grammar export, one line each: run before and after a change that must
not alter what the exports write, and diff the two outputs.

    python scripts/export_digests.py > before.txt   # on the old commit
    python scripts/export_digests.py > after.txt    # on the new one
    diff before.txt after.txt

Covers every format with each fixture folder's tools.json and a few shared tool lists, under
each tool choice, with and without parallel calls, and with the reasoning opened in the
prompt where the format has such an entry.  An export that refuses records its error.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from toolparse.formats import FORMATS, Format

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures"
EXAMPLE_TOOLS = Path(__file__).resolve().parent.parent / "examples" / "tools.json"

STRICT_TOOL = {
    "type": "function",
    "function": {
        "name": "book",
        "strict": True,
        "parameters": {
            "type": "object",
            "properties": {
                "when": {"type": ["string", "null"]},
                "seats": {"type": "integer", "minimum": 1},
                "where": {"$ref": "#/$defs/place"},
            },
            "required": ["when", "seats", "where"],
            "additionalProperties": False,
            "$defs": {"place": {"type": "object", "properties": {"city": {"type": "string"}}}},
        },
    },
}


def _exporters() -> dict[str, Callable[..., Any]]:
    try:  # the exports' own package, where the tree has one (it is not imported by toolparse)
        export: Any = importlib.import_module("toolparse.export")
    except ImportError:
        export = None
    if export is not None and hasattr(export, "lark") and callable(export.lark):
        return {
            "lark": export.lark,
            "gbnf": export.gbnf,
            "regex": export.regex,
            "structural_tag": export.structural_tag,
        }
    return {
        name: (lambda fmt, *a, _n=name, **k: getattr(fmt, _n)(*a, **k))
        for name in ("lark", "gbnf", "regex", "structural_tag")
    }


def _tool_lists(fmt: Format) -> dict[str, list[Any]]:
    lists: dict[str, list[Any]] = {"example": json.loads(EXAMPLE_TOOLS.read_text())}
    lists["strict"] = [STRICT_TOOL]
    own = FIXTURES / fmt.name / "tools.json"
    if own.exists():
        lists["fixtures"] = json.loads(own.read_text())
    return lists


def _digest(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16] + f" {len(text)}"


def main() -> None:
    exporters = _exporters()
    for fmt in FORMATS.values():
        for list_name, tools in _tool_lists(fmt).items():
            first = tools[0]["function"]["name"] if tools else None
            choices: list[Any] = ["auto", "required", "none"]
            if first:
                choices.append({"type": "function", "function": {"name": first}})
            for choice in choices:
                for parallel in (True, False):
                    for in_prompt in (None, True):
                        if in_prompt and "start_in_reasoning" not in fmt.grammar.entries:
                            continue
                        for name, export in exporters.items():
                            kwargs: dict[str, Any] = {
                                "tool_choice": choice,
                                "parallel_tool_calls": parallel,
                            }
                            if name != "structural_tag":
                                kwargs["reasoning_in_prompt"] = in_prompt
                            elif in_prompt:
                                continue
                            try:
                                result = _digest(export(fmt, tools, **kwargs))
                            except Exception as error:  # the refusal is behaviour too
                                result = f"{type(error).__name__}: {error}"
                            label = choice if isinstance(choice, str) else "named"
                            print(fmt.name, list_name, label, parallel, in_prompt, name, result)
        sys.stdout.flush()


if __name__ == "__main__":
    main()
