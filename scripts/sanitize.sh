#!/usr/bin/env bash
# The whole test suite against a build of toolparse under AddressSanitizer,
# UndefinedBehaviorSanitizer and LeakSanitizer (gcc): the C core and the Cython glue are
# instrumented, the interpreter runs with the sanitizer runtime preloaded, and any report
# fails the run.  docs/sanitizers.md explains the flags and how to read a report.
#
#   scripts/sanitize.sh                  build into .venv-asan, run `python -m pytest -k
#                                        "not reference"` without the grammar-export tests,
#                                        the serving-stack tests (adapters, OpenAI,
#                                        Anthropic) and the layers above the core (agent,
#                                        tools, template detection): the tests that run
#                                        the C core (the
#                                        reference engine's own runs and the exports, pure
#                                        Python and llguidance, check nothing the sanitizers
#                                        see; the serving-stack layers reach the core only
#                                        through StreamParser's feed and finish, which the
#                                        format tests drive at every chunking), in two
#                                        processes at once
#   scripts/sanitize.sh --no-build       run again against the existing .venv-asan
#   scripts/sanitize.sh [...] -- ARGS    pass ARGS to pytest instead (a subset, -x, ...)
#
# Environment: PYTHON (default python3) makes the virtualenv.  The compiler is gcc: the
# runtime preloaded below is gcc's (clang's is another library, named differently).
# Fails when pytest fails or when the log folder holds any sanitizer report; prints them.
set -euo pipefail
cd "$(dirname "$0")/.."

venv=.venv-asan
build_dir=build/sanitize/cmake # scikit-build-core's; apart from a normal build's
log_dir=build/sanitize/logs
PYTHON=${PYTHON:-python3}
CC=gcc
export PIP_DISABLE_PIP_VERSION_CHECK=1

say() { echo "sanitize: $*"; }
fail() {
    echo "sanitize: FAILED: $*" >&2
    exit 1
}

build=1
while [ $# -gt 0 ]; do
    case $1 in
    --no-build) build=0 ;;
    --) shift && break ;;
    *) fail "unknown option $1 (pytest's options go after --)" ;;
    esac
    shift
done

# -O1 keeps the run fast and the stacks whole; -fno-wrapv keeps signed overflow undefined,
# so that UBSan reports it, should CPython's -fwrapv ever come in with the flags.
san_cflags="-O1 -g -fno-omit-frame-pointer -fno-optimize-sibling-calls -fno-wrapv"
san_cflags+=" -fsanitize=address,undefined -fno-sanitize-recover=undefined"
san_ldflags="-fsanitize=address,undefined"

# The runtime must exist, and a program built with these flags must run: a fresh machine may
# have gcc without its sanitizer runtimes (Debian: libasan8 and libubsan1, which gcc-12
# normally pulls in).
command -v "$CC" >/dev/null || fail "no $CC (Debian: apt-get install gcc-12)"
asan_runtime=$("$CC" -print-file-name=libasan.so)
case $asan_runtime in
/*) [ -e "$asan_runtime" ] || fail "$CC names $asan_runtime as its ASan runtime; it is missing" ;;
*) fail "$CC has no AddressSanitizer runtime (libasan.so; Debian: apt-get install libasan8)" ;;
esac
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
printf 'int main(int argc, char **argv) { (void)argv; return argc - 1; }\n' >"$probe/probe.c"
# shellcheck disable=SC2086 # the flags are words
"$CC" $san_cflags $san_ldflags "$probe/probe.c" -o "$probe/probe" 2>"$probe/cc.log" ||
    {
        cat "$probe/cc.log" >&2
        fail "$CC cannot build with -fsanitize=address,undefined (libasan8, libubsan1 missing?)"
    }
"$probe/probe" || fail "a program built with -fsanitize=address,undefined does not run"
say "$("$CC" --version | head -n 1); ASan runtime $asan_runtime"

if [ "$build" = 1 ]; then
    start=$SECONDS
    [ -x "$venv/bin/python" ] || "$PYTHON" -m venv "$venv"
    # A fresh CMake cache: a cached configuration would keep the flags it was made with.
    rm -rf "$build_dir"
    # The flags go to toolparse's CMake alone (CFLAGS in the environment would reach any
    # dependency pip builds from source).  Debug: CMake's Release flags (-O3 -DNDEBUG) would
    # come after these and win.
    "$venv/bin/pip" install -q '.[test]' -Cbuild-dir="$build_dir" -Ccmake.build-type=Debug \
        -Ccmake.define.CMAKE_C_COMPILER="$CC" -Ccmake.define.CMAKE_C_FLAGS="$san_cflags" \
        -Ccmake.define.CMAKE_MODULE_LINKER_FLAGS="$san_ldflags" \
        -Ccmake.define.TOOLPARSE_WERROR=ON || fail "building toolparse with the sanitizers (above)"
    say "built and installed into $venv in $((SECONDS - start))s"
fi
# Not imported to find it: without the runtime preloaded, the import aborts.
site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("platlib"))')
cores=("$site"/toolparse/_core.*)
[ -e "${cores[0]}" ] || fail "no toolparse._core in $venv: run without --no-build"
grep -q __asan_init "${cores[0]}" ||
    fail "${cores[0]} is not instrumented: run without --no-build"

rm -rf "$log_dir"
mkdir -p "$log_dir"
log_path="$PWD/$log_dir/report" # absolute: the C tests run from their own build folder
suppressions="$PWD/scripts/lsan.supp"

# halt_on_error: the first report ends the process (what follows a memory error is noise);
# exitcode=86 tells a sanitizer's exit from a failing test's.  The C tests that
# test_c_core.py builds with CMake get CC/CFLAGS/LDFLAGS too, so they are instrumented alike.
# scripts/sanitized_pytest.py is `python -m pytest` that checks for leaks before the
# interpreter's teardown and keeps the runtime out of the programs the tests start.
# --capture=sys: pytest's default fd capture would swallow a report written as it dies.
sanitized() { # python -m pytest ARGS, under the sanitizers
    env CC="$CC" CFLAGS="$san_cflags" LDFLAGS="$san_ldflags" \
        LD_PRELOAD="$asan_runtime" PYTHONMALLOC=malloc \
        ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:exitcode=86:log_path=$log_path:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1" \
        LSAN_OPTIONS="suppressions=$suppressions:print_suppressions=0" \
        UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:exitcode=86" \
        "$venv/bin/python" scripts/sanitized_pytest.py --capture=sys -p no:cacheprovider "$@"
}
status=0
start=$SECONDS
if [ $# -gt 0 ]; then
    sanitized "$@" || status=$?
else
    # The tests of the C core: not the reference engine's own, nor the grammar exports'
    # (pure Python and llguidance), which put nothing of it under the sanitizers, nor the
    # serving-stack layers' (adapters, OpenAI, Anthropic, the stacks' serving tests: the
    # same fixtures through the same feed and finish as the format tests), nor the
    # command's runs on a terminal (a subprocess, which cannot load the sanitized build
    # without the runtime preloaded), nor the layers above the core that reach it only
    # through parse() on outputs the format tests already run (the agent boundary, the
    # tools reader, chat-template detection, the layering check), which cost the most
    # under the sanitizers (every Python allocation goes through ASan's malloc) and check
    # nothing of the C they have not seen.  Two processes at once, one per core: the
    # repair-mode properties (every fixture cut at every byte), and the rest (630 s and
    # 830 s on CI's machine before the layers above the core were left out).
    shards=build/sanitize/shards
    rm -rf "$shards" && mkdir -p "$shards"
    heavy=(tests/formats/test_repair_mode.py)
    ignored=(--ignore=tests/export --ignore=tests/adapters --ignore=tests/wire --ignore=tests/agent)
    for above in tests/core/test_tools.py tests/test_layers.py tests/formats/test_detect_format.py \
        tests/formats/test_detect_format_causes.py tests/formats/test_response_template.py \
        tests/formats/test_peer_names.py; do
        ignored+=("--ignore=$above")
    done
    for file in "${heavy[@]}"; do ignored+=("--ignore=$file"); done
    sanitized -k "not reference" "${heavy[@]}" >"$shards/1.log" 2>&1 &
    first=$!
    sanitized -k "not reference and not terminal" "${ignored[@]}" tests >"$shards/2.log" 2>&1 ||
        status=$?
    wait "$first" || { code=$?; [ "$status" -ne 0 ] || status=$code; }
    for shard in 1 2; do
        if [ "$status" -ne 0 ]; then
            echo "==== $shards/$shard.log (its end)"
            tail -n 60 "$shards/$shard.log"
        else
            say "shard $shard: $(tail -n 1 "$shards/$shard.log")"
        fi
    done
fi
seconds=$((SECONDS - start))

reports=("$log_dir"/*)
if [ -e "${reports[0]}" ]; then
    for report in "${reports[@]}"; do
        echo "==== $report"
        cat "$report"
    done
    fail "${#reports[@]} sanitizer report(s) in $log_dir (pytest exited $status after ${seconds}s)"
fi
case $status in
0) say "ok: no sanitizer reports, the tests passed in ${seconds}s" ;;
86) fail "UndefinedBehaviorSanitizer stopped the tests after ${seconds}s: its report is above" \
    "(\"runtime error:\"; beside ASan it writes to standard error, not to a log)" ;;
*) fail "pytest exited $status after ${seconds}s (no sanitizer report)" ;;
esac
