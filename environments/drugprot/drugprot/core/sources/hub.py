"""The Hugging Face hub source: ``OpenMed/drugprot-parquet``, its splits, the offline/unreachable checks and errors.

The hub is probed with one TCP connect before ``datasets`` is imported, so a machine without the hub fails
within seconds with the ``hf download`` command for the split's file and the ``data_path`` to pass instead.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlparse
from urllib.request import getproxies_environment, proxy_bypass_environment

from drugprot.core.errors import DrugprotHubError

HUB_DATASET = "OpenMed/drugprot-parquet"
SPLITS = ("train", "validation")
HUB_FILES = {"train": "data/train.parquet", "validation": "data/validation.parquet"}
"""The parquet file of each split in the hub dataset's repository."""
SPLIT_SIZES: dict[str, dict[str, int | None]] = {
    "train": {"abstracts": 3_500, "with_relations": 2_433, "relations": 17_274, "candidate_pairs": None},
    "validation": {"abstracts": 750, "with_relations": 542, "relations": 3_761, "candidate_pairs": None},
}
"""What each split of the hub dataset holds, pinned from sources (no machine here can reach the hub):

- ``abstracts``: the dataset card of ``OpenMed/drugprot-parquet`` (train 3,500 rows, validation 750, one row per
  abstract), which are BioCreative VII's training and development sets;
- ``relations``: the census of the full splits (train 17,274, validation 3,761 gold relations; their sum 21,035 is
  the BioCreative VII train + development total);
- ``with_relations``: abstracts with at least one gold relation, derived from the same census (1,067 train and 208
  validation abstracts have none: 3,500 - 1,067 and 750 - 208);
- ``candidate_pairs``: the pair-mode tasks of ``negatives=all`` (same-sentence chemical-gene pairs, gold or not)
  are NOT known from any source (no census counts them under our candidate rule; other teams' candidate counts use
  other rules), so None: a pair-mode run is checked against ``with_relations`` instead, since every abstract with a
  gold relation has at least its gold pairs as tasks, whatever ``negatives`` is.
"""
HUB_DOWNLOAD_DIR = "drugprot-parquet"
"""Where the hub error message tells the user to download the split (``hf download --local-dir``)."""
_HUB_TIMEOUT_S = 1.5  # a TCP connect to the hub takes well under a second; fail fast when it does not
_OFFLINE_VARS = ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")


def hub_source(split: str, revision: str | None = None) -> str:
    """The hub dataset's split as messages name it: ``hub:OpenMed/drugprot-parquet[validation]``, with
    ``@<revision>`` after the dataset when one is pinned."""
    pinned = f"@{revision}" if revision is not None else ""
    return f"hub:{HUB_DATASET}{pinned}[{split}]"


def hub_help(split: str, path_hint: str = "data_path={path}", revision: str | None = None) -> str:
    """How to load ``split`` without the hub: the ``hf`` command that downloads its file, and how to pass it.

    ``path_hint`` is how the caller's user sets ``data_path``; ``{path}`` in it stands for the file
    (without it, the file is appended). A pinned ``revision`` is part of the download command.
    """
    local = f"{HUB_DOWNLOAD_DIR}/{HUB_FILES[split]}"
    use = path_hint.replace("{path}", local) if "{path}" in path_hint else f"{path_hint} {local}"
    pinned = f" --revision {revision}" if revision is not None else ""
    return (
        f"Download the split once with `hf download {HUB_DATASET} {HUB_FILES[split]} --repo-type dataset"
        f"{pinned} --local-dir {HUB_DOWNLOAD_DIR}` (the hf command of huggingface_hub) and pass the file: {use} "
        "(a directory of the official BioCreative VII TSV files works the same way)."
    )


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def _hub_offline() -> bool:
    return any(_env_flag(name) for name in _OFFLINE_VARS)


def _hub_cache_dirs() -> tuple[Path, Path]:
    """Where ``huggingface_hub`` and ``datasets`` keep this dataset (their own rules, read at call time)."""
    home = Path(
        os.environ.get("HF_HOME") or Path(os.environ.get("XDG_CACHE_HOME") or "~/.cache") / "huggingface"
    ).expanduser()
    hub = Path(os.environ.get("HF_HUB_CACHE") or os.environ.get("HUGGINGFACE_HUB_CACHE") or home / "hub").expanduser()
    datasets_cache = Path(os.environ.get("HF_DATASETS_CACHE") or home / "datasets").expanduser()
    owner, name = HUB_DATASET.split("/")
    return hub / f"datasets--{owner}--{name}" / "snapshots", datasets_cache / f"{owner}___{name}"


def _hub_cached() -> bool:
    return any(path.is_dir() and any(path.iterdir()) for path in _hub_cache_dirs())


def check_hub_offline(split: str, path_hint: str = "data_path={path}", revision: str | None = None) -> None:
    """Fail now if the hub is switched off (``HF_HUB_OFFLINE``/``HF_DATASETS_OFFLINE``) and nothing is cached.

    Opens no socket and imports nothing heavy: the loader runs it before it probes the network or imports
    ``datasets``.

    Raises:
        DrugprotHubError: with the download command and the file to pass instead.
    """
    if _hub_offline() and not _hub_cached():
        offline = "/".join(name for name in _OFFLINE_VARS if _env_flag(name))
        raise DrugprotHubError(
            f"cannot load {_hub_what(split, revision)}: {offline} is set and no copy is cached "
            f"({' or '.join(str(p.parent if p.name == 'snapshots' else p) for p in _hub_cache_dirs())}). "
            + hub_help(split, path_hint, revision)
        )


def _probe_target(endpoint: str) -> tuple[str, int]:
    """The host and port a hub request connects to first: the proxy the environment sets for the endpoint's
    scheme (unless ``NO_PROXY`` exempts its host), else the endpoint itself."""
    parsed = urlparse(endpoint)
    proxies = getproxies_environment()
    proxy = None
    if not (parsed.hostname and proxy_bypass_environment(parsed.hostname, proxies)):
        proxy = proxies.get(parsed.scheme) or proxies.get("all")
    target = urlparse(proxy if "://" in proxy else f"http://{proxy}") if proxy else parsed
    return target.hostname or endpoint, target.port or (443 if target.scheme == "https" else 80)


def _hub_reachable(endpoint: str) -> bool:
    try:
        socket.create_connection(_probe_target(endpoint), timeout=_HUB_TIMEOUT_S).close()
    except OSError:
        return False
    return True


def _hub_what(split: str, revision: str | None) -> str:
    """``'OpenMed/drugprot-parquet' (validation)``, with ``at revision <rev>`` when one is pinned."""
    return f"{HUB_DATASET!r} ({split}" + (f", revision {revision}" if revision is not None else "") + ")"


def hub_rows(split: str, path_hint: str, revision: str | None = None) -> Iterable[Mapping[str, Any]]:
    """Rows of the hub dataset at ``revision`` (None: its default branch); fails within seconds (not after
    datasets' retries) when offline."""
    check_hub_offline(split, path_hint, revision)
    endpoint = os.environ.get("HF_ENDPOINT", "https://huggingface.co")
    if not _hub_offline() and not _hub_reachable(endpoint):
        raise DrugprotHubError(
            f"cannot load {_hub_what(split, revision)}: the Hugging Face hub at {endpoint} is unreachable. "
            + hub_help(split, path_hint, revision)
        )
    import datasets  # heavy: imported only when the hub is actually used

    try:
        return datasets.load_dataset(HUB_DATASET, split=split, revision=revision)
    except Exception as exc:  # datasets raises many unrelated types for "not available"
        raise DrugprotHubError(
            f"cannot load {_hub_what(split, revision)} from the Hugging Face hub ({type(exc).__name__}: {exc}). "
            + hub_help(split, path_hint, revision)
        ) from exc
