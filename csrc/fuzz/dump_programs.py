"""Writes what the C fuzz target loads: every built-in format's compiled program(s), entry
names, marker strings and tool table, plus a libFuzzer dictionary of their strings.

    python csrc/fuzz/dump_programs.py OUT_DIR

OUT_DIR/manifest.txt has one line per format, in toolparse.formats() order (the order
the fuzz inputs' first byte indexes), of space-separated fields:

    name  program-file  repair-program-file|-  tools-file|-  entry[,entry]  marker-hex[,...]|-

The first entry is the format's default (Format.entry(None)).
The files are the program blobs (Format.program_bytes, Format.repair_program.to_bytes())
and the tool table blob (toolparse.stream.tools_blob of tests/fixtures/<format>/tools.json).
OUT_DIR/markers.dict holds every marker and program string, for libFuzzer's -dict.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import toolparse
from toolparse.stream import tools_blob

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"

MAX_DICT_ENTRY = 64  # libFuzzer's longest dictionary entry

# JSON and Python-literal pieces the argument scanners branch on.
EXTRA_TOKENS = (
    b'"name"',
    b'"arguments"',
    b'"parameters"',
    b"\\u",
    b"\\ud800",
    b"\\udc00",
    b"true",
    b"false",
    b"null",
    b"True",
    b"None",
    b"1e-7",
    b"\xef\xbf\xbd",
    b"\xed\xa0\x80",
    b"\xf0\x9f\x98",
)


def dict_entry(data: bytes) -> str:
    """One libFuzzer dictionary line: the bytes as a quoted string with \\xNN escapes."""
    out = []
    for b in data:
        if 0x20 <= b < 0x7F and b not in (0x22, 0x5C):
            out.append(chr(b))
        else:
            out.append(f"\\x{b:02x}")
    return '"' + "".join(out) + '"'


def dump(out_dir: Path) -> int:
    out_dir.mkdir(parents=True, exist_ok=True)
    lines = []
    strings: set[bytes] = set(EXTRA_TOKENS)
    for fmt in toolparse.formats():
        program_file = f"{fmt.name}.program"
        (out_dir / program_file).write_bytes(fmt.program_bytes)
        strings.update(s for s in fmt.program.strings if s)
        repair_file = "-"
        if fmt.repair_program is not None:
            repair_file = f"{fmt.name}.repair.program"
            (out_dir / repair_file).write_bytes(fmt.repair_program.to_bytes())
            strings.update(s for s in fmt.repair_program.strings if s)
        tools_file = "-"
        tools_path = FIXTURES / fmt.name / "tools.json"
        if tools_path.is_file():
            tools_file = f"{fmt.name}.tools"
            tools = json.loads(tools_path.read_text(encoding="utf-8"))
            (out_dir / tools_file).write_bytes(tools_blob(tools))
        markers = [m.encode("utf-8") for m in fmt.markers]
        strings.update(markers)
        default = fmt.entry(None)  # first: inputs pick the other one with a flag
        entries = ",".join([default, *(e for e in fmt.program.entries if e != default)])
        marker_field = ",".join(m.hex() for m in markers) or "-"
        fields = (fmt.name, program_file, repair_file, tools_file, entries, marker_field)
        lines.append(" ".join(fields))
    (out_dir / "manifest.txt").write_text("\n".join(lines) + "\n", encoding="ascii")
    # Byte sets of CHARS instructions are strings too; markers never hold a NUL.
    words = sorted(s for s in strings if b"\0" not in s and len(s) <= MAX_DICT_ENTRY)
    dictionary = "".join(f"{dict_entry(s)}\n" for s in words)
    (out_dir / "markers.dict").write_text(dictionary, encoding="ascii")
    return len(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir", type=Path)
    args = parser.parse_args()
    count = dump(args.out_dir)
    print(f"dump_programs: {count} formats written to {args.out_dir}")


if __name__ == "__main__":
    main()
