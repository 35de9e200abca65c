"""The package's layers point down only, and its modules import one another in no cycle.

Every import of a toolparse module counts, at module level or inside a function (an import
hidden in a function is how a cycle hides).  Type-only imports (under TYPE_CHECKING) count
too: they are what a reader follows.  The compiled glue's stub (_core.pyi) is not read: it
names the package's types the glue is handed (toolparse._native), which is typing only.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers import HIDE_THE_CORE

PACKAGE = Path(__file__).resolve().parent.parent / "python" / "toolparse"

# Each layer, and the layers it may use (below it).  A module belongs to the first layer
# whose prefix it has: a prefix is a dotted module path inside the package.
LAYERS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # name: (its modules, the layers it may import)
    "glue": (("_core",), ()),
    "base": (
        (
            "_common",
            "arguments",
            "errors",
            "limits",
            "repair",
            "grammar",
            "message",
            "events",
            "_events_py",
            "tools",
        ),
        ("glue",),
    ),
    "formats": (("formats",), ("base",)),
    "reference": (("reference",), ("base", "formats")),
    "runtime": (
        ("_native", "stream", "batch", "vocab", "primitives", "toolparse"),
        ("glue", "base", "formats", "reference"),
    ),
    "derive": (("derive",), ("base", "formats", "runtime")),
    "export": (("export",), ("base", "formats", "runtime")),
    "wire": (("wire",), ("base", "formats", "runtime")),
    "agent": (("agent",), ("base", "formats", "runtime", "wire")),
    "adapters": (("adapters",), ("base", "formats", "runtime", "wire")),
    "cli": (("cli",), ("base", "formats", "runtime", "derive", "export", "wire", "agent")),
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path) -> Iterator[tuple[str, int]]:
    """(imported toolparse module, line) for every import in the file, wherever it is."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    modules = {module_name(p) for p in PACKAGE.rglob("*.py")} | {"toolparse._core"}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "toolparse":
                    yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            elif node.module and node.module.split(".")[0] == "toolparse":
                target = node.module
            else:
                continue
            for alias in node.names:  # `from . import x` may import the module x
                sub = f"{target}.{alias.name}"
                yield (sub if sub in modules else target), node.lineno


def layer_of(module: str) -> str:
    inner = module.removeprefix("toolparse.") if module != "toolparse" else "toolparse"
    for layer, (prefixes, _) in LAYERS.items():
        for prefix in prefixes:
            if inner == prefix or inner.startswith(prefix + "."):
                return layer
    raise AssertionError(f"{module} is in no layer: add it to LAYERS")


def graph() -> dict[str, set[tuple[str, int]]]:
    return {module_name(path): set(imports_of(path)) for path in sorted(PACKAGE.rglob("*.py"))}


def test_every_import_points_down() -> None:
    upward = []
    for module, targets in graph().items():
        here = layer_of(module)
        allowed = {here, *LAYERS[here][1]}
        for target, line in sorted(targets):
            there = layer_of(target)
            if there not in allowed:
                upward.append(f"{module}:{line} ({here}) imports {target} ({there})")
    assert not upward, "imports that do not point down:\n" + "\n".join(upward)


def _without_parents(deps: dict[str, set[str]]) -> dict[str, set[str]]:
    # importing a.b runs a/__init__ first; that edge is Python's, not a design choice, so a
    # package's own modules may be imported by its __init__ without forming a cycle
    return {m: {t for t in ts if t != m and not m.startswith(t + ".")} for m, ts in deps.items()}


def find_cycle(deps: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(deps.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (cycle := visit(nxt)) is not None:
                return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(deps):
        if node not in state and (cycle := visit(node)) is not None:
            return cycle
    return None


def test_no_import_cycle() -> None:
    deps = _without_parents({m: {t for t, _ in ts} for m, ts in graph().items()})
    cycle = find_cycle(deps)
    assert cycle is None, "an import cycle: " + " -> ".join(cycle or [])


def test_the_cycle_finder_finds_one() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_the_glue_imports_nothing_from_the_package() -> None:
    glue = PACKAGE.parent.parent / "src"
    found = [
        f"{path.name}:{number}: {line.strip()}"
        for path in sorted(glue.glob("*.p*"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.match(r"\s*(from|import|cimport)\s+toolparse\b", line)
    ]
    assert not found, "the glue imports the package:\n" + "\n".join(found)


def _without_the_core(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", HIDE_THE_CORE + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_reference_and_the_formats_run_without_the_compiled_core() -> None:
    run = _without_the_core(
        """
        import toolparse.reference, toolparse.formats
        import toolparse
        message = toolparse.parse(
            '<think>a</think>b<tool_call>{"name": "f", "arguments": {"x": 1}}</tool_call>',
            "qwen3",
            engine="reference",
        )
        assert message.reasoning_content == "a" and message.content == "b", message
        assert [(c.name, c.arguments) for c in message.tool_calls] == [("f", {"x": 1})]
        assert "toolparse._core" not in sys.modules
        print("ok")
        """
    )
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr


def test_without_the_core_a_native_parser_says_why() -> None:
    run = _without_the_core(
        """
        import toolparse
        try:
            toolparse.parse("x", "hermes")
        except ModuleNotFoundError as error:
            print(error.name)
        """
    )
    assert run.stdout.strip() == "toolparse._core", run.stderr


@pytest.mark.parametrize("layer", sorted(LAYERS))
def test_every_layer_has_modules(layer: str) -> None:
    modules = [m for m in graph() if layer_of(m) == layer]
    assert modules or layer == "glue", f"layer {layer} holds no module"
