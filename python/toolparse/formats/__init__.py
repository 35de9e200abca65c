"""The format library: one module per model family, each a grammar plus metadata.

``get_format(name)`` finds a format by its canonical name (vLLM's parser names) or an
alias (SGLang's and llama.cpp's names).
"""

from __future__ import annotations

from ._base import Format
from .hermes import HERMES
from .qwen3 import QWEN3
from .qwen3_coder import QWEN3_CODER

FORMATS: dict[str, Format] = {f.name: f for f in (HERMES, QWEN3, QWEN3_CODER)}
_BY_ALIAS = {alias: f for f in FORMATS.values() for alias in (f.name, *f.aliases)}


def get_format(name: str | Format) -> Format:
    if isinstance(name, Format):
        return name
    try:
        return _BY_ALIAS[name]
    except KeyError:
        known = ", ".join(sorted(_BY_ALIAS))
        raise ValueError(f"unknown format {name!r}; known: {known}") from None


__all__ = ["FORMATS", "Format", "get_format"]
