"""Whether a run's micro-F1 is comparable with BioCreative VII's, and if not, what is missing.

The official script scores every relation a system outputs against all gold relations of the evaluated abstracts
(its candidate space: every chemical x gene combination of an abstract). A run's micro-F1 equals what it would
print for that system only when the run covers a whole official split (3,500 training or 750 development
abstracts; the test gold is hidden) and, in pair mode, asks every candidate pair (``negatives=all``, no task
limit) and no gold relation of those abstracts lies outside the candidates (the report scores the run's tasks;
the official script would count such a relation as a false negative). ``verdict`` checks each of these; what
depends on the task mode is the mode's ``Rules``.

Completeness is checked for every data source: a local file by its abstract count, the hub's splits by the counts
pinned in ``drugprot.core.sources.hub.SPLIT_SIZES`` (``hub_shortfall``): an extraction run covers every abstract of
the split, a pair-mode run at least every abstract with a gold relation (each has its gold pairs as tasks) and, when
the run records its abstracts' gold, every gold relation of the split. A run that stopped early (killed, out of
time) is INCOMPLETE and never comparable.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from drugprot.core.sources.hub import SPLIT_SIZES, hub_source
from drugprot.evaluation.records import RunConfig

OFFICIAL_ABSTRACTS = {split: sizes["abstracts"] for split, sizes in SPLIT_SIZES.items()}
"""Abstracts of the official splits (``OpenMed/drugprot-parquet``): training, and development (our validation)."""


class Rules(Protocol):
    """What makes a task mode's micro-F1 comparable with BioCreative VII: each mode's ``Mode.comparability``
    (``drugprot.modes.pair.comparability``, ``drugprot.modes.extraction.comparability``)."""

    covers: str
    """How the comparable sentence names what a run asked: ``every candidate pair of `` ..."""

    def setting_gaps(self, config: RunConfig, missing: list[str], unknown: list[str]) -> None:
        """Append what the run's setting lacks (pair: ``negatives=all``)."""

    def hub_shortfall(self, sizes: Mapping[str, int | None], source: str, abstracts: int) -> str | None:
        """Why ``abstracts`` are too few to be the whole hub split of ``sizes``; None when enough."""

    def subset(self, named: str, abstracts: int) -> str | None:
        """Why a named local data set of ``abstracts`` is known not to be a whole split; None when unknown."""

    def census_gap(self, config: RunConfig, ceiling: Mapping[str, Any]) -> str | None:
        """Why a hub run may not cover the split's gold census (pair); None when it does or cannot tell."""

    def ceiling_gaps(self, ceiling: Mapping[str, Any], missing: list[str], unknown: list[str]) -> None:
        """Append what the candidates leave out (pair: gold relations no task asks)."""


def hub_shortfall(config: RunConfig, *, rules: Rules, abstracts: int) -> str | None:
    """Why a run of a hub split (no local data) holds too few abstracts to be the whole split (``rules``: its
    mode's); None when it holds enough, reads local data, or does not record its split. ``abstracts``: the
    abstracts with rollouts."""
    if config.data_path or config.data_label or config.split not in SPLIT_SIZES:
        return None
    return rules.hub_shortfall(SPLIT_SIZES[config.split], hub_source(config.split), abstracts)


NEEDS = (
    "comparable needs a whole official split, every task (no limit) and, in pair mode, negatives=all with every "
    "gold relation a candidate"
)


def verdict(
    config: RunConfig,
    *,
    rules: Rules,
    abstracts: int,
    ceiling: dict[str, Any],
) -> tuple[bool | None, str]:
    """``(comparable_with_official, the sentence that says why)``: True only when nothing is missing; False
    naming every missing condition; None naming what the run does not record (an older run, or local data the
    report cannot recognise as a whole split). ``rules``: the run's mode's (``Mode.comparability``)."""
    missing: list[str] = []
    unknown: list[str] = []
    rules.setting_gaps(config, missing, unknown)
    if config.limit is None:
        unknown.append("whether the tasks were limited (no saved config)")
    elif config.limit:
        missing.append(f"tasks limited ({config.limit})")
    named = config.data_label or config.data_path
    whole = OFFICIAL_ABSTRACTS.get(config.split or "")
    shortfall = None if config.limit else hub_shortfall(config, rules=rules, abstracts=abstracts)
    subset = rules.subset(named, abstracts) if named else None
    if subset is not None:
        missing.append(subset)
    elif named:
        unknown.append(f"whether {named} is a whole official split ({abstracts} abstracts with tasks)")
    elif whole is None:
        unknown.append(f"the split ({config.split or 'not recorded'})")
    elif shortfall is not None:
        missing.append(f"INCOMPLETE RUN: {shortfall}")
    elif (census := rules.census_gap(config, ceiling)) is not None:
        unknown.append(census)
    rules.ceiling_gaps(ceiling, missing, unknown)
    if missing:
        return False, f"NOT comparable with BioCreative VII: {'; '.join(missing)} ({NEEDS})."
    if unknown:
        return None, f"comparability with BioCreative VII unknown: {'; '.join(unknown)} ({NEEDS})."
    split = "validation split (the official development set)" if config.split == "validation" else "train split"
    return True, (
        f"{rules.covers}the whole {split}: comparable with the official metric (the published anchors are on the "
        "hidden test set)."
    )
