"""docs/peer-names.md maps every peer's format name to a toolparse format: each row must
hold, and vLLM's and SGLang's names must be aliases (the adapters and the CLI take them)."""

from __future__ import annotations

import pathlib
import re

import pytest

from toolparse import FORMATS, get_format

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "peer-names.md"
# whose tool parser names toolparse takes as they are (reasoning parsers map to formats)
ALIASED = ("vLLM", "SGLang")
TEMPLATE_DRIVEN = "`toolparse.derive.from_response_template`"


def rows() -> list[tuple[str, str, str]]:
    """(section, peer's name, toolparse's) for every table row of the document."""
    found, section = [], ""
    for line in DOC.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            section = line[3:].split()[0]
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
        if len(cells) == 3 and not set(cells[0]) <= set("-") and cells[1] != "toolparse":
            found.append((section, cells[0], cells[1]))
    return found


ROWS = rows()


def names_under(heading: str) -> set[str]:
    """The peer names in the table under the "## " heading that starts with `heading`."""
    found: set[str] = set()
    inside = False
    for line in DOC.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            inside = line[3:].startswith(heading)
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
        if inside and len(cells) == 3 and not set(cells[0]) <= set("-"):
            if cells[1] != "toolparse":  # the header row
                found.add(cells[0])
    return found


def _names(*containers: object) -> set[str]:
    """The string keys of a peer's registries (dicts of names), whatever their shape."""
    names: set[str] = set()
    for container in containers:
        if isinstance(container, dict):
            names |= {k for k in container if isinstance(k, str)}
    return names


def _vllm_tool_parsers() -> set[str]:
    module = pytest.importorskip("vllm.tool_parsers")
    manager = module.ToolParserManager
    return _names(getattr(manager, "tool_parsers", None), getattr(manager, "lazy_parsers", None))


def _vllm_reasoning_parsers() -> set[str]:
    module = pytest.importorskip("vllm.reasoning")
    manager = module.ReasoningParserManager
    return _names(
        getattr(manager, "reasoning_parsers", None), getattr(manager, "lazy_parsers", None)
    )


def _sglang_tool_parsers() -> set[str]:
    module = pytest.importorskip("sglang.srt.function_call.function_call_parser")
    return _names(module.FunctionCallParser.ToolCallParserEnum)


def _sglang_reasoning_parsers() -> set[str]:
    module = pytest.importorskip("sglang.srt.parser.reasoning_parser")
    return _names(module.ReasoningParser.DetectorMap)


# (the table's heading, the peer's registered names): where the peer is installed, every
# name it registers must have a row, so a parser added upstream cannot go unmapped.
REGISTRIES = {
    "vLLM tool parsers": _vllm_tool_parsers,
    "Reasoning parsers in vLLM": _vllm_reasoning_parsers,
    "SGLang function-call detectors": _sglang_tool_parsers,
    "Reasoning parsers in SGLang": _sglang_reasoning_parsers,
}


def test_the_document_has_its_tables() -> None:
    assert {section for section, _, _ in ROWS} == {"vLLM", "SGLang", "llama.cpp", "Reasoning"}
    assert len(ROWS) > 100


@pytest.mark.parametrize(("section", "peer", "ours"), ROWS, ids=[f"{s}-{p}" for s, p, _ in ROWS])
def test_each_peer_name_maps_to_a_format(section: str, peer: str, ours: str) -> None:
    if ours == TEMPLATE_DRIVEN or (peer == "CONTENT_ONLY" and ours == "any format"):
        return  # built per model from its response template; or no format at all
    assert ours in FORMATS, f"{ours} is not a toolparse format"
    if section in ALIASED:
        assert get_format(peer).name == ours


# Formats of model families for which no peer registers a parser name (in the versions
# read): nothing to map yet.  A row for one of them must take it off this list.
NO_PEER_NAME = {"llmjp_harmony"}


def test_every_format_appears_in_the_document() -> None:
    named = {ours for _, _, ours in ROWS}
    own = {"generic_xml", "markdown_json"}  # toolparse's fallbacks for models without a format
    assert set(FORMATS) - named <= own | NO_PEER_NAME, sorted(set(FORMATS) - named - own)
    assert not named & NO_PEER_NAME, sorted(named & NO_PEER_NAME)


def test_names_under_reads_one_table() -> None:
    vllm, sglang = names_under("vLLM tool parsers"), names_under("SGLang function-call")
    assert {"hermes", "qwen3_xml", "openai"} <= vllm and "qwen25" not in vllm
    assert {"hermes", "qwen25", "gpt-oss"} <= sglang and "qwen3_xml" not in sglang
    assert not {"vLLM", "SGLang"} & (vllm | sglang)


@pytest.mark.parametrize("heading", sorted(REGISTRIES))
def test_every_registered_peer_name_has_a_row(heading: str) -> None:
    assert names_under(heading), f"docs/peer-names.md has no table under {heading!r}"
    registered = REGISTRIES[heading]()
    # toolparse's own adapters register toolparse_<format> names with the peers
    missing = {name for name in registered if not name.startswith("toolparse_")}
    missing -= names_under(heading)
    assert not missing, f"{heading}: registered but not in docs/peer-names.md: {sorted(missing)}"
