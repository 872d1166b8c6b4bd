"""What made a rollout, recorded in every rollout's info next to its prediction, so runs can be reproduced and
compared knowingly.

Both adapters store ``record(options)`` under ``info["drugprot"]["versions"]`` (v1 ``trace.info``, v0
``state["info"]``; see ``drugprot.core.scoring.INFO_KEY``)::

    {"env": "0.1.0", "prompt": "1", "scorer": "3", "data": {"source": "hub", "revision": null},
     "reward": {"kind": "utility", "fp_cost": 0.15, "fn_cost": 1.0, "threshold": 0.0697...,
                "weights": {"accuracy": 0.0, "utility": 1.0, "format": 0.1}}}

- ``env``: ``drugprot.__version__`` (the package version of ``pyproject.toml``);
- ``prompt``: ``drugprot.core.prompts.PROMPT_VERSION``; ``scorer``: ``drugprot.core.scoring.SCORER_VERSION``;
- ``data.source``: ``hub`` (``OpenMed/drugprot-parquet``), ``file`` (a local parquet/jsonl/json file) or ``tsv``
  (a directory of the official TSV files); ``data.revision``: the hub revision asked for (``revision`` knob),
  null for the hub's default branch, which can move between runs, and always null for local data. Only a
  commit sha makes a hub run reproducible.
- ``reward``: the run's reward (``drugprot.core.rewards.Reward.record()``: the ``reward`` knob, the utility's
  costs and decision threshold, the weights in effect); absent from runs made before scorer version 3, which had
  only the accuracy and format rewards.

``drugprot report`` reads the record back (``from_info``) and prints ``unknown`` for runs made before it
existed.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from drugprot.core.prompts import PROMPT_VERSION
from drugprot.core.rewards import describe_recorded
from drugprot.core.scoring import SCORER_VERSION

if TYPE_CHECKING:
    from drugprot.core.options import TaskOptions

VERSIONS_KEY = "versions"
"""Key of the record inside ``info["drugprot"]``."""
DATA_SOURCES = ("hub", "file", "tsv")
FIELDS = ("env", "prompt", "scorer", "data_source", "data_revision", "reward")
"""The flat names ``from_info`` returns, in the order the report prints them."""


def package_version() -> str:
    """The version in ``pyproject.toml``, its one source: read from the file itself in a source checkout (so an
    edit or ``prime env push --auto-bump`` counts before a reinstall), else from the installed metadata."""
    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    if pyproject.is_file():
        import tomllib

        project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
        if project.get("name") == "drugprot" and isinstance(project.get("version"), str):
            return project["version"]
    from importlib.metadata import version

    return version("drugprot")


_VERSION: list[str] = []  # package_version(), read once per process


def env_version() -> str:
    """``drugprot.__version__``: the package version, read on first use."""
    if not _VERSION:
        _VERSION.append(package_version())
    return _VERSION[0]


def data_source(data_path: str | None) -> str:
    """``hub`` without a ``data_path``, ``tsv`` for a directory, else ``file``."""
    if data_path is None:
        return "hub"
    return "tsv" if Path(data_path).expanduser().is_dir() else "file"


def record(options: TaskOptions) -> dict[str, Any]:
    """The record of a run with ``options``: the running versions, its data and its reward."""
    return {
        "env": env_version(),
        "prompt": PROMPT_VERSION,
        "scorer": SCORER_VERSION,
        "data": {"source": data_source(options.data_path), "revision": options.revision},
        "reward": options.make_reward().record(),
    }


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def from_info(info: Mapping[str, Any] | None) -> dict[str, str | None] | None:
    """The record in a ``info["drugprot"]`` mapping, flat (``FIELDS``), or None when it holds none.

    Best effort, never an error: a field of an unexpected type reads as None (unknown). ``data_revision`` is
    None both for an unpinned hub run and for local data; ``data_source`` tells them apart. ``reward`` is the
    reward's one-line description (``drugprot.core.rewards.describe_recorded``: ``accuracy (recorded before the
    reward knob)`` for a record made before scorer version 3).
    """
    value = info.get(VERSIONS_KEY) if isinstance(info, Mapping) else None
    if not isinstance(value, Mapping):
        return None
    data = value.get("data")
    data = data if isinstance(data, Mapping) else {}
    source = _text(data.get("source"))
    return {
        "env": _text(value.get("env")),
        "prompt": _text(value.get("prompt")),
        "scorer": _text(value.get("scorer")),
        "data_source": source if source in DATA_SOURCES else None,
        "data_revision": _text(data.get("revision")),
        "reward": describe_recorded(value),
    }
