"""Writes the seed corpus of both fuzz targets: every format fixture and JSON test suite
document behind the 4-byte header the targets read (fuzz/differential.py describes it).

    python fuzz/seeds.py MANIFEST OUT_DIR [JSON_SUITE_DIR]

MANIFEST is the manifest.txt csrc/fuzz/dump_programs.py wrote: the formats in the order
the header's first byte indexes, their default entry and their markers.  Each fixture
gives three seeds with its own options (tools, reasoning entry, repair, finish reason):
fed as bytes in random pieces, as token ids with its markers as special tokens one token
at a time, and as token ids through a batch.  Each JSON suite document gives two: the
arguments of a hermes call, and the whole output of llama3_json (markerless JSON).
Standard library only, so any Python runs it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"

TOOLS = 0x02
REPAIR = 0x04
TOKENS = 0x10
SPECIAL = 0x20
LENGTH = 0x40
BATCH = 0x80


@dataclass(frozen=True)
class FormatInfo:
    index: int
    reasoning_default: bool  # the default entry is start_in_reasoning
    markers: tuple[bytes, ...]


def read_manifest(path: Path) -> dict[str, FormatInfo]:
    formats = {}
    for index, line in enumerate(path.read_text(encoding="ascii").splitlines()):
        name, _, _, _, entries, markers = line.split(" ")
        formats[name] = FormatInfo(
            index=index,
            reasoning_default=entries.split(",")[0] == "start_in_reasoning",
            markers=tuple(bytes.fromhex(m) for m in markers.split(",")) if markers != "-" else (),
        )
    return formats


def as_special_tokens(text: bytes, markers: tuple[bytes, ...]) -> bytes:
    """The output with each marker as its special token (0xFF, k), 0xFF as 0xFF 0xFF."""
    if not markers:
        return text
    longest_first = sorted(range(len(markers)), key=lambda k: -len(markers[k]))
    out = bytearray()
    at = 0
    while at < len(text):
        for k in longest_first:
            if text.startswith(markers[k], at):
                out += bytes([0xFF, k])
                at += len(markers[k])
                break
        else:
            out += b"\xff\xff" if text[at] == 0xFF else text[at : at + 1]
            at += 1
    return bytes(out)


def fixture_flags(info: FormatInfo, expected: dict[str, object]) -> int:
    options = expected.get("options") or {}
    assert isinstance(options, dict)
    flags = TOOLS
    in_prompt = options.get("reasoning_in_prompt")
    if in_prompt is not None and bool(in_prompt) != info.reasoning_default:
        flags |= 0x01
    if options.get("repair"):
        flags |= REPAIR
    if options.get("finish") == "length":
        flags |= LENGTH
    return flags


def write(out_dir: Path, header: bytes, body: bytes) -> None:
    data = header + body
    (out_dir / hashlib.sha1(data).hexdigest()).write_bytes(data)


def fixture_seeds(formats: dict[str, FormatInfo], out_dir: Path) -> int:
    count = 0
    for txt in sorted(FIXTURES.glob("*/*.txt")):
        info = formats.get(txt.parent.name)
        expected_path = txt.with_name(txt.name.removesuffix(".txt") + ".expected.json")
        if info is None or not expected_path.is_file():
            continue
        flags = fixture_flags(info, json.loads(expected_path.read_text(encoding="utf-8")))
        text = txt.read_bytes()
        tokens = as_special_tokens(text, info.markers)
        spread = hashlib.sha1(txt.name.encode()).digest()[0]
        write(out_dir, bytes([info.index, flags, 3 | (spread & 0xFC), 0]), text)
        write(out_dir, bytes([info.index, flags | TOKENS | SPECIAL, 1, 0]), tokens)
        write(out_dir, bytes([info.index, flags | BATCH | SPECIAL, 0, spread & 0x3E]), tokens)
        count += 3
    return count


def json_suite_seeds(formats: dict[str, FormatInfo], suite: Path, out_dir: Path) -> int:
    hermes, llama = formats["hermes"].index, formats["llama3_json"].index
    count = 0
    for doc in sorted(suite.glob("*.json")):
        value = doc.read_bytes()
        call = b'<tool_call>\n{"name": "get_weather", "arguments": ' + value + b"}\n</tool_call>"
        write(out_dir, bytes([hermes, TOOLS, 0, 0]), call)
        write(out_dir, bytes([llama, 0, 0, 0]), value)
        count += 2
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("manifest", type=Path)
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("json_suite", type=Path, nargs="?")
    args = parser.parse_args()
    formats = read_manifest(args.manifest)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    count = fixture_seeds(formats, args.out_dir)
    if args.json_suite is not None:
        count += json_suite_seeds(formats, args.json_suite, args.out_dir)
    print(f"seeds: {count} written to {args.out_dir}")


if __name__ == "__main__":
    main()
