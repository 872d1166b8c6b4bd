"""Hub-ready packaging of ``environments/drugprot``: metadata, README contract, and a real build + clean install.

- The README's options table is ``labels.RELATION_LABELS``; its knob table is every ``DrugprotConfig`` field (plus the
  legacy-only ``train_split``) with its default; the docs' endpoint alias table is ``configs/endpoints.toml``.
- ``prime env push`` classifies the package as verifiers v1 (a floored ``verifiers`` requirement); checked with the
  ``prime`` CLI's own classifier when ``prime`` is installed (``pip install prime``), skipped otherwise.
- ``packaging``-marked tests run ``uv build`` (sdist, then the wheel from the sdist; the build backend from
  ``locks/build.txt``), install the wheel into a fresh venv holding exactly ``locks/clean-<verifiers>.txt`` (the
  declared dependencies as locked for the verifiers this stage runs; ``uv pip check`` then proves the wheel's own
  requirements are met) and import every module there: they need ``uv`` and PyPI or a warm uv cache (about 30 s warm).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from email.parser import Parser as EmailParser
from pathlib import Path
from typing import Any

import pytest

from drugprot.core import labels

from .conftest import FIXTURE_JSONL

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "environments" / "drugprot"
README = PACKAGE / "README.md"
PYPROJECT = tomllib.loads((PACKAGE / "pyproject.toml").read_text(encoding="utf-8"))
VERIFIERS_REQUIREMENT = "verifiers>=0.3.1.dev59,<0.5"
LOCKS = ROOT / "locks"


def readme() -> str:
    return README.read_text(encoding="utf-8")


def between(text: str, name: str) -> str:
    """The README text between ``<!-- name:start -->`` and ``<!-- name:end -->``."""
    match = re.search(rf"<!-- {name}:start -->\n(.*?)<!-- {name}:end -->", text, re.DOTALL)
    assert match is not None, f"README has no {name} markers"
    return match.group(1)


def table_rows(block: str) -> list[list[str]]:
    """Cells of a markdown table's body rows (header and separator dropped)."""
    lines = [line for line in block.strip().splitlines() if line.startswith("|")]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[2:]]


# ------------------------------------------------------------------------------------------------ README


def test_readme_options_table_is_the_label_table() -> None:
    expected = "| Letter | Relation | Meaning |\n|---|---|---|\n" + "".join(
        f"| {label.letter} | `{label.name}` | {label.description} |\n" for label in labels.RELATION_LABELS
    )
    assert between(readme(), "options") == expected


def test_readme_documents_every_knob_with_its_default() -> None:
    import inspect

    import verifiers.v1 as vf

    from drugprot.envs.legacy import load_environment
    from drugprot.envs.taskset import DrugprotConfig

    base = set(vf.TasksetConfig.model_fields)
    expected = {name: str(field.default) for name, field in DrugprotConfig.model_fields.items() if name not in base}
    expected["train_split"] = str(inspect.signature(load_environment).parameters["train_split"].default)
    documented = {row[0].strip("`"): row[2].strip("`") for row in table_rows(between(readme(), "knobs"))}
    assert documented == expected
    assert list(documented) == list(expected)  # in the config's order


def test_the_docs_alias_table_matches_the_endpoint_registry() -> None:
    """The endpoints table of the docs' Running evaluations page is ``configs/endpoints.toml``."""
    entries = tomllib.loads((ROOT / "configs" / "endpoints.toml").read_text(encoding="utf-8"))["endpoint"]
    text = (ROOT / "docs" / "evaluation" / "running.md").read_text(encoding="utf-8")
    table = text[text.index("| Provider | Model id |") :]
    rows = table_rows(table[: table.index("\n\n")])
    documented = {row[4].strip("`"): (row[1].split()[0].strip("`"), row[2].strip("`"), row[3].split()[0].strip("`"))
                  for row in rows}  # fmt: skip
    assert documented == {e["endpoint_id"]: (e["model"], e["url"], e["key"]) for e in entries}


def test_readme_names_install_paths_configs_and_citation() -> None:
    text = readme()
    for needle in (
        "prime env install primeintellect/drugprot",
        "uv pip install -e environments/drugprot",
        "OpenMed/drugprot-parquet",
        "CC BY 4.0",
        "10.5281/zenodo.4955410",
        "Overview of {DrugProt} {BioCreative} {VII} track",
        "configs/drugprot.toml",
        VERIFIERS_REQUIREMENT.replace("verifiers", "`verifiers", 1) + "`",
    ):
        assert needle in text, needle
    for config in sorted((ROOT / "configs" / "eval").glob("*.toml")):
        assert f"vf-eval @ configs/eval/{config.name}" in text
    for heading in (
        "## Overview",
        "## Datasets",
        "## Task",
        "## Quickstart",
        "## Environment arguments",
        "## Metrics",
        "## Links",
        "## Citation",
    ):  # fmt: skip  (the Environments Hub page's sections)
        assert f"\n{heading}\n" in text, heading


# ---------------------------------------------------------------------------------------------- metadata


def test_pyproject_metadata() -> None:
    project = PYPROJECT["project"]
    assert project["name"] == "drugprot"
    assert project["readme"] == "README.md"
    assert project["requires-python"] == ">=3.11"
    assert VERIFIERS_REQUIREMENT in project["dependencies"]
    assert {"biomedical", "relation-extraction", "single-turn", "eval", "train"} <= set(project["tags"])
    # drugprot_null: the package of the drugprot-null harness id (verifiers imports an id's package)
    assert PYPROJECT["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"] == ["drugprot", "drugprot_null"]


def test_prime_classifies_the_package_as_v1() -> None:
    """``prime env push`` sends the runtime its classifier derives from the verifiers requirement."""
    runtime = pytest.importorskip("prime_cli.utils.environment_runtime", reason="the prime CLI is not installed")
    assert runtime.classify_runtime_from_metadata(PYPROJECT["project"]["dependencies"]) == runtime.VERIFIERS_V1
    assert runtime.classify_runtime_from_metadata(["verifiers"]) == runtime.VERIFIERS_V0  # vf-init's bare pin


# ------------------------------------------------------------------------------------- build and install


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    uv = shutil.which("uv")
    if uv is None:
        pytest.skip("uv is not on PATH")
    out = tmp_path_factory.mktemp("dist")
    proc = subprocess.run([uv, "build", str(PACKAGE), "--out-dir", str(out), "--build-constraint",
                           str(LOCKS / "build.txt")], capture_output=True, text=True, cwd=ROOT, env=_clean_env(),
                          timeout=600)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def _clean_env() -> dict[str, str]:
    """The environment of the build and the clean venv: this process's, less what would point uv or Python at the
    test's own venv."""
    drop = ("VIRTUAL_ENV", "PYTHONPATH", "UV_PROJECT_ENVIRONMENT")
    return {k: v for k, v in os.environ.items() if k not in drop}


def _artifacts(dist: Path) -> tuple[Path, Path]:
    version = PYPROJECT["project"]["version"]
    wheel, sdist = dist / f"drugprot-{version}-py3-none-any.whl", dist / f"drugprot-{version}.tar.gz"
    assert wheel.is_file() and sdist.is_file(), sorted(p.name for p in dist.iterdir())
    return wheel, sdist


def _sources() -> set[str]:
    """Package files that must ship: the Python modules and the bundled sample (tracked, not generated)."""
    return {
        p.relative_to(PACKAGE).as_posix()
        for package_dir in (PACKAGE / "drugprot", PACKAGE / "drugprot_null")
        for p in package_dir.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix in (".py", ".jsonl", ".md")
    }


@pytest.mark.packaging
def test_sdist_and_wheel_contents(dist: Path) -> None:
    wheel, sdist = _artifacts(dist)
    with zipfile.ZipFile(wheel) as whl:
        names = set(whl.namelist())
        metadata = EmailParser().parsestr(whl.read(f"drugprot-{PYPROJECT['project']['version']}.dist-info/METADATA")
                                          .decode("utf-8"))  # fmt: skip
        entry_points = whl.read(f"drugprot-{PYPROJECT['project']['version']}.dist-info/entry_points.txt").decode()
    assert _sources() <= names
    assert {"drugprot/envs/legacy.py", "drugprot/envs/taskset.py", "drugprot/__init__.py", "drugprot_null/__init__.py",
            "drugprot/envs/null_pins.py"} <= names  # fmt: skip
    assert not [n for n in names if "__pycache__" in n or n.startswith(("tests/", "outputs/"))]
    requires = metadata.get_all("Requires-Dist") or []
    assert "verifiers<0.5,>=0.3.1.dev59" in requires
    assert metadata["Name"] == "drugprot" and metadata["Description-Content-Type"] == "text/markdown"
    assert metadata.get_all("Project-URL") == [f"{k}, {v}" for k, v in PYPROJECT["project"]["urls"].items()]
    assert "drugprot = drugprot.tools.cli:main" in entry_points
    with tarfile.open(sdist) as tar:
        members = {m.name.split("/", 1)[1] for m in tar.getmembers() if "/" in m.name}
    assert {"pyproject.toml", "README.md", "PKG-INFO"} | _sources() <= members
    assert not [m for m in members if "outputs/" in m or "__pycache__" in m]


@pytest.mark.packaging
def test_prime_classifies_the_built_wheel_as_v1(dist: Path) -> None:
    """The classification ``prime env push`` makes from the built wheel's Requires-Dist."""
    runtime = pytest.importorskip("prime_cli.utils.environment_runtime", reason="the prime CLI is not installed")
    env_cmd = pytest.importorskip("prime_cli.commands.env", reason="the prime CLI is not installed")
    wheel, _ = _artifacts(dist)
    requires = env_cmd.extract_requires_dist_from_wheel(wheel)
    assert runtime.classify_runtime_from_metadata(requires) == runtime.VERIFIERS_V1


CLEAN_VENV_CHECK = r"""
import importlib, json, pkgutil, sys
import drugprot, verifiers
from drugprot import DrugprotEnv, DrugprotTaskset, load_environment
from drugprot.envs.legacy import LegacyVerifiersUnavailable
from drugprot.envs.taskset import DrugprotConfig

fixture = sys.argv[1]
failed = {}
for name in [m.name for m in pkgutil.walk_packages(drugprot.__path__, "drugprot.")] + ["drugprot_null"]:
    try:
        importlib.import_module(name)
    except Exception as exc:
        failed[name] = f"{type(exc).__name__}: {exc}"
tasks = DrugprotTaskset(DrugprotConfig(id="drugprot", split="train", data_path=fixture)).load()
try:
    legacy = len(load_environment(split="train", data_path=fixture).get_eval_dataset())
except LegacyVerifiersUnavailable:
    legacy = None
print(json.dumps({"file": drugprot.__file__, "prefix": sys.prefix, "verifiers": verifiers.__version__,
                  "failed": failed, "v1": len(tasks), "legacy": legacy}))
"""


def clean_lock(verifiers_version: str) -> Path:
    """The lock of the clean venv for the verifiers this stage runs (``scripts/lock.py`` writes one per stage)."""
    lock = LOCKS / f"clean-{verifiers_version}.txt"
    assert lock.is_file(), f"no {lock.name} for verifiers {verifiers_version}: add it to scripts/lock.py's LOCKS"
    return lock


@pytest.mark.packaging
def test_wheel_installs_and_imports_in_a_clean_venv(dist: Path, tmp_path: Path) -> None:
    """Only the declared dependencies: a fresh venv holding the clean lock, the wheel (``--no-deps``), ``uv pip
    check`` (the wheel's requirements are met), and every drugprot module imports and works."""
    from importlib.metadata import version

    uv = shutil.which("uv")
    assert uv is not None
    wheel, _ = _artifacts(dist)
    venv = tmp_path / "venv"
    env = _clean_env()
    running = version("verifiers")
    subprocess.run([uv, "venv", "-q", "--python", sys.executable, str(venv)], check=True, env=env, timeout=300)
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    for command in (
        ["sync", "-q", "--require-hashes", "--python", str(python), str(clean_lock(running))],
        ["install", "-q", "--no-deps", "--python", str(python), str(wheel)],
        ["check", "--python", str(python)],
    ):
        step = subprocess.run([uv, "pip", *command], capture_output=True, text=True, env=env, timeout=900)
        assert step.returncode == 0, (command, step.stdout[-3000:], step.stderr[-3000:])

    proc = subprocess.run([str(python), "-c", CLEAN_VENV_CHECK, str(FIXTURE_JSONL)], capture_output=True, text=True,
                          cwd=tmp_path, env=env, timeout=600)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    assert Path(result["file"]).is_relative_to(Path(result["prefix"]))  # the installed copy, not the checkout
    assert result["failed"] == {}
    assert result["verifiers"] == running
    assert result["v1"] == 27
    assert result["legacy"] == (None if result["verifiers"].startswith("0.4") else 27)

    cli = subprocess.run([str(venv / "bin" / "drugprot"), "--help"], capture_output=True, text=True, env=env,
                         timeout=300)  # fmt: skip
    assert cli.returncode == 0 and "report" in cli.stdout
