"""drugprot: DrugProt (BioCreative VII track 1) drug-protein relation extraction as a verifiers environment.

The verifiers v1 names (``DrugprotTaskset``, ``DrugprotEnv``, ``DrugprotHarness``) and the v0 ``load_environment``
are imported lazily, so ``import drugprot`` and the ``drugprot`` CLI stay fast and work without verifiers' heavy
imports. ``drugprot.__version__`` is the package version of ``pyproject.toml``. Importing the package registers the
built-in task modes, pair and extraction (``drugprot.modes.builtin``), before any other module of it runs.
"""

from __future__ import annotations

import importlib
from typing import Any

from drugprot.modes import builtin as _builtin  # registers the task modes pair and extraction (drugprot.modes)

del _builtin

_LAZY = {
    "DrugprotTaskset": "drugprot.envs.taskset",
    "DrugprotEnv": "drugprot.envs.taskset",
    "DrugprotConfig": "drugprot.envs.taskset",
    "DrugprotTask": "drugprot.envs.taskset",
    "DrugprotData": "drugprot.envs.taskset",
    "DrugprotHarness": "drugprot.envs.harness",
    "load_environment": "drugprot.envs.legacy",
}

# verifiers v1 takes the taskset, the env and the harness (id "drugprot") from here: one subclass of each.
__all__ = ["DrugprotTaskset", "DrugprotEnv", "DrugprotHarness", "load_environment"]


def __getattr__(name: str) -> Any:
    if name == "__version__":  # computed on first use: ``import drugprot`` reads no file
        from drugprot.core.versions import env_version

        value = globals()["__version__"] = env_version()
        return value
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'drugprot' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | {"__version__"})
