"""The package's architecture, checked: four layers, imports only downward, no cycles, small modules.

``drugprot/core`` (the framework-free domain) <- ``drugprot/envs`` (verifiers adapters) <- ``drugprot/evaluation``
(reports, metrics of runs, baselines) <- ``drugprot/tools`` (the CLI, demo, test server, LoRA tooling).
``drugprot/modes`` (one folder per task mode) spans two layers: what the environment asks of a mode
(``modes/task.py``, ``modes/registry.py`` and each mode's ``task.py``: building, prompting and scoring its tasks) is
core, and the rest (what a run of that mode reports, built on the evaluation's shared summary and rendering) is part
of the evaluation layer. A module
may import its own layer and the layers below it; ``drugprot/__init__.py`` names the public classes lazily. Every
import counts, also one inside a function: a lazy upward import is still an upward dependency.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "environments" / "drugprot" / "drugprot"
LAYERS = ("core", "envs", "evaluation", "tools")
FRAMEWORKS = ("verifiers", "openai", "httpx", "matplotlib", "torch", "transformers", "peft", "safetensors")
"""What the core never imports: the domain runs (and is tested) without any of them."""
MAX_LINES = 450
""""No module above ~400 lines" (issue 15), with a little slack for a docstring."""


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports(path: Path, name: str) -> set[str]:
    """Every module ``path`` imports (absolute names; relative imports resolved against ``name``)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)  # ``from pkg import module``
    return found


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: {m for m in imports(path, name) if m in known and m != name} for name, path in known.items()}


PLACED = {"modes": "evaluation"}
"""Packages that belong to a layer without being named after it."""
MODE_CORE = ("drugprot.modes", "drugprot.modes.registry", "drugprot.modes.task")
"""The modules of ``drugprot/modes`` the environment imports (with every ``drugprot.modes.<mode>.task`` and the
mode folders' import-free ``__init__``): core, below the adapters."""


def layer(name: str) -> int | None:
    parts = name.split(".")
    in_modes = parts[:2] == ["drugprot", "modes"]
    if name in MODE_CORE or (in_modes and (parts[-1] == "task" or modules()[name].name == "__init__.py")):
        return LAYERS.index("core")
    top = PLACED.get(parts[1], parts[1]) if len(parts) > 1 else None
    return LAYERS.index(top) if top in LAYERS else None


def test_every_module_lives_in_a_layer() -> None:
    assert [name for name in modules() if name != "drugprot" and layer(name) is None] == []


def test_no_upward_imports() -> None:
    upward = sorted(
        f"{name} imports {target}"
        for name, targets in graph().items()
        if layer(name) is not None
        for target in targets
        if layer(target) is None or layer(target) > layer(name)  # type: ignore[operator]
    )
    assert upward == []


def test_no_import_cycles() -> None:
    edges = graph()
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    cycles: list[list[str]] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for target in sorted(edges[node]):
            if state.get(target) == 1:
                cycles.append([*path[path.index(target) :], target])
            elif target not in state:
                visit(target, [*path, target])
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node, [node])
    assert cycles == []


@pytest.mark.parametrize("name", [n for n in modules() if layer(n) == 0])
def test_the_core_imports_no_framework(name: str) -> None:
    third_party = {m.split(".")[0] for m in imports(modules()[name], name)}
    assert sorted(third_party & set(FRAMEWORKS)) == []


def test_no_module_is_over_the_size_limit() -> None:
    sizes = {name: len(path.read_text(encoding="utf-8").splitlines()) for name, path in modules().items()}
    assert {name: n for name, n in sizes.items() if n > MAX_LINES} == {}


def test_the_checker_sees_what_it_checks() -> None:
    """The graph is not vacuous: the adapters import the core, the report CLI the evaluation layer."""
    edges = graph()
    assert "drugprot.core.questions" in edges["drugprot.envs.taskset"]
    assert any(t.startswith("drugprot.core.") for t in edges["drugprot.envs.legacy"])
    assert layer("drugprot.tools.cli") == 3 and layer("drugprot.core.labels") == 0
