"""Grammar exports: a format's grammar, specialised to a request's tools and tool choice,
written for constrained-decoding engines (docs/export.md)."""

from __future__ import annotations

from .lark import to_lark
from .regex import to_regex

__all__ = ["to_lark", "to_regex"]
