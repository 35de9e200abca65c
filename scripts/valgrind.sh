#!/usr/bin/env bash
# Valgrind memcheck over toolparse built at -O0 -g without sanitizers (docs/sanitizers.md).
#
#   scripts/valgrind.sh                  the plain-C tests of tests/c, each under
#                                        valgrind --error-exitcode=99 --leak-check=full
#   scripts/valgrind.sh --python [-- ARGS]
#                                        a small pytest subset (ARGS; by default the JSON
#                                        conformance suite and the format fixtures, whole and
#                                        chunked, on the native engine) in .venv-valgrind,
#                                        with the errors that CPython and the test tools make
#                                        on their own suppressed: a baseline run that never
#                                        imports toolparse (scripts/valgrind_baseline.py)
#                                        gives the suppressions, which name no toolparse frame
#   scripts/valgrind.sh --python --rebaseline [-- ARGS]
#                                        the same, the baseline made again
#
# Environment: PYTHON (default python3) makes the virtualenv.  Fails on any memcheck error
# (exit 99) or failing test, and prints valgrind's log.
set -euo pipefail
cd "$(dirname "$0")/.."

venv=.venv-valgrind
work=build/valgrind
PYTHON=${PYTHON:-python3}
export PIP_DISABLE_PIP_VERSION_CHECK=1

say() { echo "valgrind: $*"; }
fail() {
    echo "valgrind: FAILED: $*" >&2
    exit 1
}

mode=c
rebaseline=0
while [ $# -gt 0 ]; do
    case $1 in
    --python) mode=python ;;
    --rebaseline) rebaseline=1 ;;
    --) shift && break ;;
    *) fail "unknown option $1 (pytest's options go after --)" ;;
    esac
    shift
done

command -v valgrind >/dev/null || fail "valgrind is not installed (Debian: apt-get install valgrind)"
say "$(valgrind --version)"
[ -x "$venv/bin/python" ] || "$PYTHON" -m venv "$venv"
mkdir -p "$work"

# memcheck WHAT OPTIONS... -- COMMAND...: valgrind with its log in $log, which is printed
# when memcheck found errors (exit 99) or the program failed.
memcheck() {
    local what=$1 status=0
    shift
    valgrind --log-file="$log" "$@" || status=$?
    if [ "$status" != 0 ]; then
        cat "$log" >&2
        case $status in
        99) fail "memcheck errors in $what (log: $log)" ;;
        *) fail "$what exited $status under valgrind (log: $log)" ;;
        esac
    fi
}

if [ "$mode" = c ]; then
    # CMake and Ninja from the virtualenv: a fresh machine need not have them.
    "$venv/bin/pip" install -q 'cmake>=3.21' ninja
    build=$work/c
    rm -rf "$build"
    # -O0: the optimizer must not remove or reorder the accesses memcheck is to see.
    "$venv/bin/cmake" -S . -B "$build" -G Ninja -DCMAKE_MAKE_PROGRAM="$PWD/$venv/bin/ninja" \
        -DTOOLPARSE_BUILD_C_TESTS=ON -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS="-O0 -g" \
        >"$work/cmake.log" || {
        cat "$work/cmake.log" >&2
        fail "configuring the C tests"
    }
    "$venv/bin/cmake" --build "$build" >>"$work/cmake.log" || {
        cat "$work/cmake.log" >&2
        fail "building the C tests"
    }
    count=0
    for source in tests/c/test_*.c; do
        name=$(basename "$source" .c)
        [ -x "$build/$name" ] || fail "$source built no $build/$name (CMakeLists.txt lists the tests)"
        log=$work/$name.log
        start=$SECONDS
        memcheck "$name" --error-exitcode=99 --leak-check=full --track-origins=yes "$build/$name"
        say "$name: no memcheck errors, no leaks ($((SECONDS - start))s)"
        count=$((count + 1))
    done
    say "ok: $count C test programs clean under memcheck"
    exit 0
fi

# --python: toolparse at -O0 -g, no sanitizer, with the test extra.
start=$SECONDS
"$venv/bin/pip" install -q '.[test]' -Cbuild-dir="$work/cmake" -Ccmake.build-type=Debug \
    -Ccmake.define.CMAKE_C_FLAGS="-O0 -g" -Ccmake.define.TOOLPARSE_WERROR=ON ||
    fail "building toolparse at -O0 -g"
say "built and installed into $venv in $((SECONDS - start))s"
python=$venv/bin/python

# Without PYTHONMALLOC=malloc, pymalloc's arenas hide Python objects' memory from memcheck.
# glibc's AVX2 wmemcmp, which CPython compares 4-byte strs with, reads whole 32-byte vectors
# past a str's end, which memcheck reports; its other variants do not.
export PYTHONMALLOC=malloc GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX2
version=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
suppressions=$work/python-$version.supp
if [ "$rebaseline" = 1 ] || [ ! -s "$suppressions" ]; then
    # The baseline loads what the tests load (pytest and its plugins, Hypothesis) but never
    # toolparse: everything it reports is CPython's or the tools'.  Each suppression keeps the
    # error's kind and its innermost function alone, since CPython 3.11's errors come from any
    # caller (it makes some zeros by way of an unset digit, and memcheck reports their
    # address wherever it goes: valgrind_baseline.py); an error that toolparse's own code
    # makes, innermost in csrc/ or the Cython glue, is never suppressed.
    log=$work/baseline.log
    start=$SECONDS
    valgrind --log-file="$log" --leak-check=no --gen-suppressions=all \
        "$python" -m pytest -q -p no:cacheprovider -n 0 scripts/valgrind_baseline.py ||
        fail "the baseline run (log: $log)"
    "$python" - "$log" "$suppressions" <<'PY'
import re
import sys

log, out = sys.argv[1:]
text = open(log, encoding="utf-8").read()
innermost = set()
for block in re.findall(r"^\{\n(.*?)^\}$", text, flags=re.M | re.S):
    lines = [line.strip() for line in block.splitlines()]
    innermost.add((lines[1], lines[2]))  # after the name: "Memcheck:KIND", the first frame
with open(out, "w", encoding="utf-8") as f:
    for kind, frame in sorted(innermost):
        f.write(f"{{\n   baseline {kind} {frame}\n   {kind}\n   {frame}\n}}\n")
print(f"valgrind: {len(innermost)} suppressions from the baseline")
PY
    if grep -Eiq 'toolparse|__pyx' "$suppressions"; then
        fail "the baseline suppressions name toolparse frames ($suppressions)"
    fi
    say "baseline in $((SECONDS - start))s: $suppressions"
fi

if [ $# -eq 0 ]; then
    # The reference engine is pure Python, nothing of toolparse's for memcheck to see, and
    # the comparison of the two engines spends most of its time there.
    set -- tests/core/test_json_conformance.py tests/formats/test_formats.py \
        -k "not reference and not engines_emit_identical_events"
fi
log=$work/pytest.log
start=$SECONDS
memcheck "the tests" --error-exitcode=99 --leak-check=no --track-origins=yes \
    --suppressions="$suppressions" "$python" -m pytest -q -p no:cacheprovider -n 0 "$@"
say "ok: no memcheck errors in the subset ($((SECONDS - start))s; log: $log)"
