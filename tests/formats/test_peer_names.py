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
NO_PEER_NAME = {"llmjp_harmony", "step5"}


def test_every_format_appears_in_the_document() -> None:
    named = {ours for _, _, ours in ROWS}
    own = {"generic_xml", "markdown_json"}  # toolparse's fallbacks for models without a format
    assert set(FORMATS) - named <= own | NO_PEER_NAME, sorted(set(FORMATS) - named - own)
    assert not named & NO_PEER_NAME, sorted(named & NO_PEER_NAME)
