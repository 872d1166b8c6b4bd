"""drugprot: DrugProt (BioCreative VII track 1) drug-protein relation extraction as a verifiers environment.

The verifiers v1 names (``DrugprotTaskset``, ``DrugprotEnv``, ``DrugprotHarness``) and the v0 ``load_environment``
are imported lazily, so ``import drugprot`` and the ``drugprot`` CLI stay fast and work without verifiers' heavy
imports. ``drugprot.__version__`` is the package version of ``pyproject.toml``.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

_LAZY = {
    "DrugprotTaskset": "drugprot.taskset",
    "DrugprotEnv": "drugprot.taskset",
    "DrugprotConfig": "drugprot.taskset",
    "DrugprotTask": "drugprot.taskset",
    "DrugprotData": "drugprot.taskset",
    "DrugprotHarness": "drugprot.harness",
    "load_environment": "drugprot.legacy",
}

# verifiers v1 takes the taskset, the env and the harness (id "drugprot") from here: one subclass of each.
__all__ = ["DrugprotTaskset", "DrugprotEnv", "DrugprotHarness", "load_environment"]


def _package_version() -> str:
    """The version in ``pyproject.toml``, its one source: read from the file itself in a source checkout (so an
    edit or ``prime env push --auto-bump`` counts before a reinstall), else from the installed metadata."""
    pyproject = Path(__file__).resolve().parent.parent / "pyproject.toml"
    if pyproject.is_file():
        import tomllib

        project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
        if project.get("name") == "drugprot" and isinstance(project.get("version"), str):
            return project["version"]
    from importlib.metadata import version

    return version("drugprot")


def __getattr__(name: str) -> Any:
    if name == "__version__":  # computed on first use: ``import drugprot`` reads no file
        value = globals()["__version__"] = _package_version()
        return value
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'drugprot' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | {"__version__"})
