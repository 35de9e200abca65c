"""The format library: one module per model family, each a grammar plus metadata.

Every module here (but the private ones) defines FORMAT, a Format.  ``get_format(name)``
finds one by its canonical name (vLLM's parser names) or an alias (SGLang's and
llama.cpp's names); ``format_for_model(model_id)`` by a Hugging Face model id.
"""

from __future__ import annotations

import difflib
import fnmatch
import importlib
import pkgutil

from ._base import Format


def _discover() -> dict[str, Format]:
    found: dict[str, Format] = {}
    for module in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if module.name.startswith("_"):
            continue
        fmt = importlib.import_module(f"{__name__}.{module.name}").FORMAT
        if not isinstance(fmt, Format):
            raise TypeError(f"{module.name}.FORMAT is not a Format")
        found[fmt.name] = fmt
    return dict(sorted(found.items()))


FORMATS: dict[str, Format] = _discover()
_BY_ALIAS = {alias: f for f in FORMATS.values() for alias in (f.name, *f.aliases)}
if len(_BY_ALIAS) != sum(1 + len(f.aliases) for f in FORMATS.values()):
    raise RuntimeError("two formats share a name or an alias")


def get_format(name: str | Format) -> Format:
    """A format by canonical name or alias."""
    if isinstance(name, Format):
        return name
    try:
        return _BY_ALIAS[name]
    except KeyError:
        raise ValueError(unknown_format(name)) from None


def unknown_format(name: str) -> str:
    """The error for a name no format has: the three closest names, not all of them
    (`toolparse formats` lists every one)."""
    close = difflib.get_close_matches(name.lower(), _BY_ALIAS, n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    return f"unknown format {name!r}{hint} (`toolparse formats` lists them all)"


def format_for_model(model_id: str) -> Format:
    """The format a Hugging Face model emits, e.g. "Qwen/Qwen3-8B" -> qwen3.

    Matches the formats' model_ids (ids or glob patterns, case-insensitive): first with
    the organization, then by the model's name alone (so a re-upload under another
    organization still matches); the most specific pattern wins.
    """
    wanted = model_id.strip().lower()
    for with_org in (True, False):
        best: tuple[int, Format] | None = None
        for fmt in FORMATS.values():
            for pattern in fmt.model_ids:
                pat, target = pattern.lower(), wanted
                if not (with_org and "/" in pat and "/" in wanted):
                    pat, target = pat.rsplit("/", 1)[-1], wanted.rsplit("/", 1)[-1]
                if fnmatch.fnmatchcase(target, pat):
                    score = len(pat.replace("*", ""))
                    if best is None or score > best[0]:
                        best = (score, fmt)
        if best is not None:
            return best[1]
    known = [m for f in FORMATS.values() for m in f.model_ids]
    close = difflib.get_close_matches(model_id, known, n=5, cutoff=0.4)
    hint = f"; close: {', '.join(close)}" if close else ""
    raise ValueError(
        f"no format known for model {model_id!r}{hint}; pass a format name instead "
        f"(toolparse formats lists them)"
    )


__all__ = ["FORMATS", "Format", "format_for_model", "get_format"]
