"""What made a rollout, recorded in every rollout's info next to its prediction, so runs can be reproduced and
compared knowingly.

Both adapters store ``record(options)`` under ``info["drugprot"]["versions"]`` (v1 ``trace.info``, v0
``state["info"]``; see ``drugprot.core.scoring.INFO_KEY``)::

    {"env": "0.1.0", "prompt": "1", "scorer": "3", "data": {"source": "hub", "revision": null},
     "reward": {"kind": "utility", "fp_cost": 0.15, "fn_cost": 1.0, "threshold": 0.0697...,
                "weights": {"accuracy": 0.0, "utility": 1.0, "format": 0.1}},
     "setting": {"split": "validation", "negatives": 0, "mode": "pair", "data_path": null}}

- ``env``: ``drugprot.__version__`` (the package version of ``pyproject.toml``);
- ``prompt``: ``drugprot.core.prompts.PROMPT_VERSION``; ``scorer``: ``drugprot.core.scoring.SCORER_VERSION``;
- ``data.source``: ``hub`` (``OpenMed/drugprot-parquet``), ``file`` (a local parquet/jsonl/json file) or ``tsv``
  (a directory of the official TSV files); ``data.revision``: the hub revision asked for (``revision`` knob),
  null for the hub's default branch, which can move between runs, and always null for local data. Only a
  commit sha makes a hub run reproducible.
- ``reward``: the run's reward (``drugprot.core.rewards.Reward.record()``: the ``reward`` knob, the utility's
  costs and decision threshold, the weights in effect); absent from runs made before scorer version 3, which had
  only the accuracy and format rewards. A re-scored rollout (``vf-replay`` with other costs or weights) records
  the ones it was scored with (``with_costs_and_weights``).
- ``setting``: ``split``, ``negatives``, ``mode`` and ``data_path`` of the run (``setting``), which
  ``drugprot report`` reads for a ``vf-replay`` output; absent from older runs.

``drugprot report`` reads the record back (``from_info``) and prints ``unknown`` for runs made before it
existed.

Beside it, ``info["drugprot"]["prompts"]`` (``prompts_record``; v1 only) identifies the prompts a rollout actually
sent: short SHA-256 digests of its system and user messages, and whether the system message was drugprot's own.
verifiers' ``--env.taskset.system-prompt FILE`` (how a ``vf-gepa`` result is used) replaces the system prompt after
drugprot built it; ``from_info`` then shows the prompt as ``1 · system <digest>``, so a comparison with a
standard-prompt run says the prompts differ.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from drugprot.core.prompts import PROMPT_VERSION
from drugprot.core.rewards import Costs, describe_recorded
from drugprot.core.scoring import SCORER_VERSION

if TYPE_CHECKING:
    from drugprot.core.options import TaskOptions

VERSIONS_KEY = "versions"
"""Key of the record inside ``info["drugprot"]``."""
PROMPTS_KEY = "prompts"
"""Key of the sent prompts' record (``prompts_record``) inside ``info["drugprot"]``."""
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
        "setting": setting(options),
    }


def setting(options: TaskOptions) -> dict[str, Any]:
    """The run's setting as the report reads it (``split``, ``negatives``, ``mode``, ``data_path``): in every
    rollout, so a re-scored copy of the rollouts (``vf-replay``, which saves no eval config) still says it."""
    return {
        "split": options.split,
        "negatives": options.negatives,
        "mode": options.mode,
        "data_path": options.data_path,
    }


def digest(text: str) -> str:
    """A short (12 hex digits) SHA-256 digest of ``text``: enough to tell two prompts apart in a report."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def prompts_record(system: str | None, user: str | None, standard_system: str | None) -> dict[str, Any]:
    """What identifies the prompts a rollout sent: the digests of its ``system`` and ``user`` messages (None where
    it sent none) and whether the system message is ``standard_system``, the one drugprot built for the task."""
    return {
        "system": None if system is None else digest(system),
        "user": None if user is None else digest(user),
        "standard_system": system == standard_system,
    }


def with_costs_and_weights(versions: Any, costs: Costs, weights: Mapping[str, float] | None) -> Any:
    """``versions`` with its reward record made to say ``costs`` (and their threshold) and ``weights``, the ones
    a rollout was scored with; the same object when it already says so or is not a record (pure)."""
    if not isinstance(versions, Mapping) or not isinstance(versions.get("reward"), Mapping):
        return versions
    reward = dict(versions["reward"])
    update: dict[str, Any] = {"fp_cost": costs.fp, "fn_cost": costs.fn, "threshold": costs.threshold}
    if weights is not None:
        update["weights"] = dict(weights)
    if all(reward.get(key) == value for key, value in update.items()):
        return versions
    return {**versions, "reward": reward | update}


def _shown_prompt(version: str | None, prompts: Any) -> str | None:
    """The prompt version as the report shows it: ``1``, or ``1 · system <digest>`` when the rollout sent a
    system prompt other than drugprot's own."""
    if not isinstance(prompts, Mapping) or prompts.get("standard_system") is not False:
        return version
    system = _text(prompts.get("system")) or "none"
    return f"{version or 'unknown'} · system {system}"


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
        "prompt": _shown_prompt(_text(value.get("prompt")), info.get(PROMPTS_KEY) if info is not None else None),
        "scorer": _text(value.get("scorer")),
        "data_source": source if source in DATA_SOURCES else None,
        "data_revision": _text(data.get("revision")),
        "reward": describe_recorded(value),
    }
