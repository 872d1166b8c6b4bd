"""drugprot: DrugProt (BioCreative VII track 1) drug-protein relation extraction as a verifiers environment.

The verifiers v1 names (``DrugprotTaskset``, ``DrugprotEnv``, ``DrugprotHarness``) and the v0 ``load_environment``
are imported lazily, so ``import drugprot`` and the ``drugprot`` CLI stay fast and work without verifiers' heavy
imports.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

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


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'drugprot' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
