#!/usr/bin/env bash
# Fuzzing under ASan + UBSan (docs/fuzzing.md).
#
#   scripts/fuzz.sh stream SECONDS        the C core alone: csrc/fuzz/fuzz_stream.c (libFuzzer)
#   scripts/fuzz.sh api SECONDS           the Python API: fuzz/fuzz_api.py (atheris)
#   scripts/fuzz.sh replay PATH [TARGET]  each input in PATH (a file or a folder) once, through
#                                         TARGET (stream or api; both when left out)
#
# Builds what the target needs under build/fuzz/ (TOOLPARSE_FUZZ_BUILD moves it): the
# libFuzzer binary with clang-14, or the extension with clang-14 and
# -fsanitize=address,undefined,fuzzer-no-link in a virtualenv of its own; the formats'
# programs (csrc/fuzz/dump_programs.py) and the dictionary of their markers; the seeds
# (fuzz/seeds.py) from tests/fixtures and ../shared/conformance/jsontestsuite.  The corpus
# grows in build/fuzz/corpus/TARGET; findings land in build/fuzz/artifacts/TARGET.
#
# Environment: CLANG (clang-14), PYTHON (python3) makes the virtualenvs,
# TOOLPARSE_FUZZ_PYTHON a Python with toolparse installed to dump the programs with
# (default: a virtualenv of its own, an editable install), FUZZ_ARGS more libFuzzer flags.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${TOOLPARSE_FUZZ_BUILD:-$root/build/fuzz}
CLANG=${CLANG:-clang-14}
PYTHON=${PYTHON:-python3}
export PIP_DISABLE_PIP_VERSION_CHECK=1

ignorelist="$root/fuzz/ubsan_known.ignorelist"
sanitize=(-fsanitize=address,undefined -fno-sanitize-recover=undefined "-fsanitize-ignorelist=$ignorelist")
libfuzzer_flags=(-timeout=5 -rss_limit_mb=2048 -malloc_limit_mb=256 -max_len=65536)
json_suite="$root/../shared/conformance/jsontestsuite"
export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"

say() { echo "fuzz: $*" >&2; }
fail() {
    echo "fuzz: FAILED: $*" >&2
    exit 1
}
usage() {
    sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

# -- building ----------------------------------------------------------------------------------

# A Python that imports toolparse, for dump_programs.py (it compiles the grammars).
dump_python() {
    if [ -n "${TOOLPARSE_FUZZ_PYTHON:-}" ]; then
        echo "$TOOLPARSE_FUZZ_PYTHON"
        return
    fi
    local venv="$build/venv-dump"
    if ! "$venv/bin/python" -c 'import toolparse' >/dev/null 2>&1; then
        say "building toolparse for dumping the programs ($venv)"
        "$PYTHON" -m venv "$venv"
        "$venv/bin/pip" install -q -e "$root" -Cbuild-dir="$build/dump-build" >&2
    fi
    echo "$venv/bin/python"
}

# The programs, tool tables and dictionary (into $1), and the seeds (into $2).
prepare_inputs() {
    local programs=$1 seeds=$2 python=$3
    shift 3
    rm -rf "$programs" "$seeds"
    "$@" "$python" "$root/csrc/fuzz/dump_programs.py" "$programs" >&2
    if [ -d "$json_suite" ]; then
        "$PYTHON" "$root/fuzz/seeds.py" "$programs/manifest.txt" "$seeds" "$json_suite" >&2
    else
        say "no JSON test suite at ../shared/conformance/jsontestsuite: its seeds are skipped"
        "$PYTHON" "$root/fuzz/seeds.py" "$programs/manifest.txt" "$seeds" >&2
    fi
}

build_stream() {
    local out="$build/stream"
    mkdir -p "$out"
    prepare_inputs "$out/programs" "$build/seeds/stream" "$(dump_python)" env
    say "compiling csrc/fuzz/fuzz_stream.c with $CLANG"
    "$CLANG" -std=c99 -O1 -g -fno-omit-frame-pointer -Wall -Wextra -Wpedantic -Werror \
        -fsanitize=fuzzer "${sanitize[@]}" -I"$root/csrc" \
        "$root"/csrc/*.c "$root"/csrc/fuzz/*.c -o "$out/fuzz_stream"
}

# The runtime atheris ships for extensions built with -fsanitize=fuzzer-no-link.
api_runtime() {
    "$build/venv-api/bin/python" -c \
        'import atheris, os; print(os.path.join(atheris.path(), "asan_with_fuzzer.so"))'
}

# Runs a command under the atheris runtime (the sanitized extension needs it first).
api_env() {
    LD_PRELOAD="$(api_runtime)" PYTHONMALLOC=malloc "$@"
}

build_api() {
    local venv="$build/venv-api" flags
    if [ ! -x "$venv/bin/python" ]; then
        "$PYTHON" -m venv "$venv"
    fi
    if ! "$venv/bin/python" -c 'import atheris, scikit_build_core, Cython' >/dev/null 2>&1; then
        "$venv/bin/pip" install -q atheris scikit-build-core cython cython-cmake cmake ninja >&2
    fi
    say "building the extension with $CLANG, ASan, UBSan and libFuzzer coverage"
    flags="-O1 -g -fno-omit-frame-pointer ${sanitize[*]} -fsanitize=fuzzer-no-link"
    CC="$CLANG" CFLAGS="$flags" LDFLAGS="-fsanitize=address,undefined,fuzzer-no-link" \
        "$venv/bin/pip" install -q --no-build-isolation "$root" \
        -Cbuild-dir="$build/api-build" -Ccmake.build-type=Debug >&2
    local so
    so=$(find "$build/api-build" -name '_core*.so' | head -n 1)
    if [ -z "$so" ] || [ "$(nm "$so" | grep -c sanitizer_cov)" -eq 0 ]; then
        fail "the extension has no coverage instrumentation ($so)"
    fi
    mkdir -p "$build/api"
    prepare_inputs "$build/api/programs" "$build/seeds/api" "$venv/bin/python" \
        env ASAN_OPTIONS=detect_leaks=0 LD_PRELOAD="$(api_runtime)" PYTHONMALLOC=malloc
}

# -- running -------------------------------------------------------------------------------

# Runs a target with the given libFuzzer arguments.
run_target() {
    local target=$1
    shift
    case $target in
    stream) TOOLPARSE_FUZZ_PROGRAMS="$build/stream/programs" "$build/stream/fuzz_stream" "$@" ;;
    api) api_env "$build/venv-api/bin/python" "$root/fuzz/fuzz_api.py" "$@" ;;
    esac
}

summarize() {
    local log=$1 artifacts=$2 runs line
    runs=$(sed -n 's/^Done \([0-9]*\) runs in \([0-9]*\) second.*/\1 executions in \2 s/p' "$log" | tail -n 1)
    line=$(grep -E '^#[0-9]+' "$log" | tail -n 1 || true)
    echo "== $(basename "$artifacts"): ${runs:-no final count (stopped at a finding)}"
    echo "   last status: ${line:-none}"
    local found
    found=$(find "$artifacts" -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' \
        -o -name 'oom-*' -o -name 'slow-unit-*' \) | sort)
    if [ -n "$found" ]; then
        echo "   findings ($(echo "$found" | wc -l)):"
        echo "$found" | sed 's/^/     /'
    else
        echo "   findings: none"
    fi
}

fuzz() {
    local target=$1 seconds=$2 corpus="$build/corpus/$1" artifacts="$build/artifacts/$1"
    local log="$build/$1.log" status
    case $seconds in '' | *[!0-9]*) usage ;; esac
    "build_$target"
    mkdir -p "$corpus" "$artifacts"
    say "running $target for $seconds s (log: $log)"
    set +e
    # shellcheck disable=SC2086 # FUZZ_ARGS holds several flags
    run_target "$target" -max_total_time="$seconds" "${libfuzzer_flags[@]}" \
        -dict="$build/$target/programs/markers.dict" -artifact_prefix="$artifacts/" \
        -print_final_stats=1 ${FUZZ_ARGS:-} "$corpus" "$build/seeds/$target" 2>&1 | tee "$log" >&2
    status=${PIPESTATUS[0]}
    set -e
    summarize "$log" "$artifacts"
    return "$status"
}

# Whether fuzz/known_findings.txt lists input $2 as a finding of target $1 not fixed yet.
is_known() {
    grep -q "^$1 $(basename "$2") " "$root/fuzz/known_findings.txt" 2>/dev/null
}

replay() {
    local path=$1 target=$2 failed=0 known=0 total=0 input
    local -a inputs
    if [ -d "$path" ]; then
        mapfile -t inputs < <(find "$path" -type f ! -name '*.md' | sort)
    else
        inputs=("$path")
    fi
    "build_$target"
    for input in "${inputs[@]}"; do
        total=$((total + 1))
        if run_target "$target" "${libfuzzer_flags[@]}" -runs=1 "$input" >"$build/replay.log" 2>&1; then
            if is_known "$target" "$input"; then
                failed=$((failed + 1))
                echo "PASSED but listed in fuzz/known_findings.txt (fixed? remove the line): $input"
            fi
        elif is_known "$target" "$input"; then
            known=$((known + 1))
            echo "known, not fixed yet ($target): $input"
        else
            failed=$((failed + 1))
            echo "FAILED ($target): $input"
            grep -E 'ERROR|runtime error|invariant|Error' "$build/replay.log" | head -n 5
        fi
    done
    echo "== replay $target: $total inputs, $failed failed, $known known findings"
    [ "$failed" -eq 0 ]
}

mkdir -p "$build"
case ${1:-} in
stream | api)
    [ $# -eq 2 ] || usage
    fuzz "$1" "$2"
    ;;
replay)
    [ $# -ge 2 ] && [ $# -le 3 ] || usage
    [ -e "$2" ] || fail "no such input: $2"
    status=0
    for target in ${3:-stream api}; do
        case $target in stream | api) ;; *) usage ;; esac
        replay "$2" "$target" || status=1
    done
    exit "$status"
    ;;
*) usage ;;
esac
