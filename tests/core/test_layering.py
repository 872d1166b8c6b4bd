"""The core's tests are framework-free like the core: no file in ``tests/core`` imports verifiers, a layer above
the core, or a test module of one (read with ``ast``). The package's own layers: ``tests/test_layers.py``."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

TESTS_CORE = Path(__file__).parent
ABOVE_CORE = ("verifiers", "drugprot.envs", "drugprot.evaluation", "drugprot.tools")
TESTS_ABOVE_CORE = ("tests.envs", "tests.evaluation", "tests.tools", "tests.e2e", "tests.conftest")


def imported_modules(path: Path) -> list[str]:
    """Every module ``path`` imports, anywhere in the file (inside functions too), as absolute names."""
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}: relative import"
            names += [node.module or ""] + [f"{node.module}.{alias.name}" for alias in node.names]
    return names


def under(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == prefix or name.startswith(prefix + ".") for prefix in prefixes)


def test_imported_modules_reads_every_import_form(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("import a.b, c\nfrom d import e\ndef f():\n    from g.h import i\n", encoding="utf-8")
    assert imported_modules(probe) == ["a.b", "c", "d", "d.e", "g.h", "g.h.i"]
    assert under("verifiers.v1", ABOVE_CORE) and under("drugprot.envs", ABOVE_CORE)
    assert not under("drugprot.environment", ("drugprot.envs",))


@pytest.mark.parametrize("path", sorted(TESTS_CORE.rglob("*.py")), ids=lambda p: p.name)
def test_core_tests_import_nothing_above_the_core(path: Path) -> None:
    assert [name for name in imported_modules(path) if under(name, ABOVE_CORE + TESTS_ABOVE_CORE)] == []
