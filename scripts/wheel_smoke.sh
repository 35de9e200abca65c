#!/usr/bin/env bash
# Smoke test of toolparse as a user gets it: a wheel installed into a fresh virtualenv, run
# from a temporary folder (nothing imported from the source tree) with no C compiler, CMake
# or Ninja in reach.
#
#   scripts/wheel_smoke.sh               python -m build (an sdist, then the wheel built from
#                                        that sdist: an incomplete sdist fails here), check the
#                                        sdist against git ls-files, install the wheel, test
#   scripts/wheel_smoke.sh DIST/x.whl    install that wheel and test it
#   scripts/wheel_smoke.sh --installed   test the toolparse installed beside `python` on PATH
#                                        (cibuildwheel's test-command; examples/ must sit
#                                        beside this script's folder)
#
# Environment: PYTHON (default python3) makes the virtualenvs; WHEEL_SMOKE_DIST, if set, is a
# folder that keeps the built sdist and wheel.  Written for bash 3.2 too (macOS's /bin/bash).
set -euo pipefail

case $0 in */*) here=${0%/*} ;; *) here=. ;; esac # no dirname: see --checks
here=$(cd "$here" && pwd)
root=${here%/*}
self="$here/${0##*/}"
PYTHON=${PYTHON:-python3}
export PIP_DISABLE_PIP_VERSION_CHECK=1

say() { echo "wheel_smoke: $*"; }
fail() {
    echo "wheel_smoke: FAILED: $*" >&2
    exit 1
}

# The checks proper.  Run as `--checks BIN WORK` in an emptied environment whose PATH is only
# BIN (the virtualenv's scripts), from WORK (a copy of the examples): only shell builtins,
# python and toolparse can run, so nothing here may call any other program.
if [ "${1:-}" = "--checks" ]; then
    bin=$2
    cd "$3"
    for tool in cc gcc clang c99 cmake ninja make; do
        if where=$(command -v "$tool"); then
            fail "$tool is in reach ($where): the test must run without a compiler"
        fi
    done
    toolparse parse --format qwen3 --tools tools.json --stream --seed 7 qwen3_output.txt \
        >native.out || fail "toolparse parse exited $?"
    toolparse parse --format qwen3 --tools tools.json --stream --seed 7 --engine reference \
        qwen3_output.txt >reference.out || fail "toolparse parse --engine reference exited $?"
    toolparse formats >formats.out || fail "toolparse formats exited $?"
    toolparse scan-json truncated_call.json >scan.out || fail "toolparse scan-json exited $?"
    "$bin/python" -I - "$bin" <<'PY' || fail "the Python checks (above)"
import importlib.machinery
import importlib.metadata
import importlib.resources
import json
import os
import platform
import sys
import sysconfig
from pathlib import Path

import toolparse
import toolparse.primitives
import toolparse._core

bin_dir = Path(sys.argv[1]).resolve()
package = Path(toolparse.__file__).resolve().parent
site = {Path(sysconfig.get_path(k)).resolve() for k in ("purelib", "platlib")}
assert package.parent in site, f"toolparse comes from {package}, not from {site}"
assert Path(sys.prefix).resolve() in bin_dir.parents, (sys.prefix, bin_dir)
source = os.environ.get("SMOKE_SOURCE_ROOT")
assert not source or Path(source).resolve() not in package.parents, "imported the source tree"

core = Path(toolparse._core.__file__)
assert any(core.name.endswith(s) for s in importlib.machinery.EXTENSION_SUFFIXES), core
files = importlib.resources.files("toolparse")
assert files.joinpath("py.typed").is_file() and files.joinpath("_core.pyi").is_file()
for f in importlib.metadata.files("toolparse") or ():
    top = f.parts[0]
    assert top in ("toolparse", "..") or top.endswith(".dist-info"), f"stray file {f}"
scripts = importlib.metadata.entry_points(group="console_scripts", name="toolparse")
assert [e.value for e in scripts] == ["toolparse.cli:main"], scripts

native = Path("native.out").read_text(encoding="utf-8")
assert native == Path("reference.out").read_text(encoding="utf-8"), "engines disagree"
# in a pipe, --stream writes one JSON object per event; the last, "end", has the message
events = [json.loads(line) for line in native.splitlines()]
kinds = [event["type"] for event in events]
assert kinds[0] == "reasoning.delta" and kinds.count("tool_call.end") == 2, kinds
assert kinds[-1] == "end", kinds
cli_message = events[-1]["message"]
tools = json.loads(Path("tools.json").read_text(encoding="utf-8"))
text = Path("qwen3_output.txt").read_text(encoding="utf-8")
message = toolparse.parse(text, "qwen3", tools=tools, seed=7)
assert message == toolparse.parse(text, "qwen3", tools=tools, seed=7, engine="reference")
assert not message.errors and message.finish_reason == "tool_calls", message
assert [c.name for c in message.tool_calls] == ["get_weather", "set_reminder"]
assert message.tool_calls[0].arguments == {"city": "Zürich", "days": 3, "units": "metric"}
assert cli_message["content"] == message.content
assert [c["arguments"] for c in cli_message["tool_calls"]] == [
    c.arguments for c in message.tool_calls
]

rows = Path("formats.out").read_text(encoding="utf-8").splitlines()[1:]
assert sorted(r.split()[0] for r in rows) == sorted(f.name for f in toolparse.formats())
assert "incomplete" in Path("scan.out").read_text(encoding="utf-8")

scanner = toolparse.primitives.JsonScanner()
assert scanner.feed('{"city": "Par') == "need_more" and scanner.closing() == '"}'
matcher = toolparse.primitives.MarkerTrie(["<tool_call>", "</tool_call>"]).matcher()
assert matcher.feed("Sure. <tool_") == [] and matcher.holdback == 6
assert matcher.feed("call>") == [(0, 6, 17)]

print(
    f"wheel_smoke: toolparse {toolparse.__version__} on Python {platform.python_version()} "
    f"({platform.machine()}), {len(rows)} formats, core {core.name}"
)
PY
    exit 0
fi

# Runs the checks against the toolparse that BIN's python has, from a fresh temporary folder
# holding a copy of the examples.
smoke() {
    local bin=$1 work
    work=$(mktemp -d)
    cp "$root/examples/tools.json" "$root/examples/qwen3_output.txt" \
        "$root/examples/truncated_call.json" "$work/"
    env -i PATH="$bin" HOME="$work" TMPDIR="$work" SMOKE_SOURCE_ROOT="$root" \
        "$BASH" "$self" --checks "$bin" "$work" || fail "the checks (their files: $work)"
    rm -rf "$work"
}

if [ "${1:-}" = "--installed" ]; then
    python=$(command -v python) || fail "no python on PATH"
    smoke "$(cd "$(dirname "$python")" && pwd)"
    exit 0
fi

start=$SECONDS
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

wheel=${1:-}
build_seconds=0
if [ -z "$wheel" ]; then
    say "python -m build (sdist, then the wheel from the sdist)"
    # From the temporary folder: in the checkout, a build/ folder (scikit-build-core's
    # build-dir) would shadow the build package for `python -m build`.
    if (cd "$tmp" && "$PYTHON" -c 'import build.__main__') 2>/dev/null; then
        builder=$PYTHON
    else
        "$PYTHON" -m venv "$tmp/build-env"
        "$tmp/build-env/bin/pip" install -q build
        builder="$tmp/build-env/bin/python"
    fi
    (cd "$tmp" && "$builder" -m build --outdir "$tmp/dist" "$root") >"$tmp/build.log" 2>&1 ||
        {
            cat "$tmp/build.log" >&2
            fail "python -m build"
        }
    set -- "$tmp"/dist/*.tar.gz
    sdist=$1
    set -- "$tmp"/dist/*.whl
    wheel=$1
    if [ ! -f "$sdist" ] || [ ! -f "$wheel" ]; then fail "python -m build gave no sdist and wheel"; fi
    # Every tracked file goes into the sdist but the repository's CI and benchmarks (.ci/,
    # benchmarks/, .gitignore: sdist.exclude in pyproject.toml); untracked files that went in
    # are named (a work tree's leftovers; a clean clone has none).
    if git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
        git -C "$root" ls-files >"$tmp/tracked.txt"
        "$PYTHON" - "$sdist" "$tmp/tracked.txt" <<'PY' || fail "the sdist is incomplete"
import sys
import tarfile

with tarfile.open(sys.argv[1]) as tar:
    names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
members = {n for n in names if not any(n.startswith(m + "/") for m in names)} - {"PKG-INFO"}
out = (".ci/", ".github/", "benchmarks/", ".gitignore")
tracked = {t for t in open(sys.argv[2], encoding="utf-8").read().splitlines() if t}
missing = sorted(t for t in tracked if not t.startswith(out) and t not in members)
leaked = sorted(m for m in members if m.startswith(out))
extra = sorted(members - tracked)
for m in extra:
    print(f"wheel_smoke: note: the sdist has {m}, which git does not track")
if missing or leaked:
    sys.exit(f"missing from the sdist: {missing}; excluded but present: {leaked}")
PY
    fi
    build_seconds=$((SECONDS - start))
    if [ -n "${WHEEL_SMOKE_DIST:-}" ]; then
        mkdir -p "$WHEEL_SMOKE_DIST"
        cp "$sdist" "$wheel" "$WHEEL_SMOKE_DIST/"
    fi
    say "built $(basename "$sdist") and $(basename "$wheel") in ${build_seconds}s"
fi
[ -f "$wheel" ] || fail "no wheel at $wheel"
case $wheel in /*) ;; *) wheel="$PWD/$wheel" ;; esac

mark=$SECONDS
"$PYTHON" -m venv "$tmp/venv"
(cd "$tmp" && "$tmp/venv/bin/pip" install -q --only-binary=:all: "$wheel") ||
    fail "pip install $wheel"
install_seconds=$((SECONDS - mark))

mark=$SECONDS
smoke "$tmp/venv/bin"
smoke_seconds=$((SECONDS - mark))
say "ok: build ${build_seconds}s, install ${install_seconds}s, checks ${smoke_seconds}s," \
    "$((SECONDS - start))s in all"
