#!/usr/bin/env bash
# Installs vLLM's and SGLang's parser and serving code into a virtual environment, for
# the adapter tests (tests/test_adapters_*.py, tests/test_serving_*.py) and the peer
# benchmarks, on a machine with no GPU: the stacks without their dependencies, then what
# their code imports.  The pins are in requirements/stacks.txt.
#   bash scripts/install_stacks.sh [VENV]        (default .venv)
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${1:-.venv}
pip=("$venv/bin/python" -m pip install -q --disable-pip-version-check)
"${pip[@]}" --no-deps -r requirements/stacks.txt
"${pip[@]}" -r requirements/stacks-deps.txt
# The stacks import cleanly: a missing module fails here, not as a skip in the tests.
"$venv/bin/python" - <<'PY'
import importlib
for name in (
    "vllm.parser",
    "vllm.entrypoints.openai.chat_completion.serving",
    "sglang.srt.function_call.function_call_parser",
    "sglang.srt.parser.reasoning_parser",
    "sglang.srt.entrypoints.openai.serving_chat",
):
    importlib.import_module(name)
print("vLLM and SGLang import")
PY
