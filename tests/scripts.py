"""The repository's ``scripts/*.py`` loaded as modules, for their tests (``scripts/`` is no package)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def load_script(name: str) -> ModuleType:
    """``scripts/<name>.py`` as the module ``name``, registered in ``sys.modules`` (dataclasses look their module up
    there while a class is created). ``scripts/`` goes on ``sys.path`` as it does for ``python scripts/<name>.py``, so
    a script imports its sibling modules the same way; a module a script already imported is returned as it is."""
    path = SCRIPTS / f"{name}.py"
    if str(SCRIPTS) not in sys.path:
        sys.path.insert(0, str(SCRIPTS))
    loaded = sys.modules.get(name)
    if loaded is not None and getattr(loaded, "__file__", None) == str(path):
        return loaded
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
