"""Whether a run's micro-F1 is comparable with BioCreative VII's, and if not, what is missing.

The official script scores every relation a system outputs against all gold relations of the evaluated abstracts
(its candidate space: every chemical x gene combination of an abstract). A run's micro-F1 equals what it would
print for that system only when the run covers a whole official split (3,500 training or 750 development
abstracts; the test gold is hidden) and, in pair mode, asks every candidate pair (``negatives=all``, no task
limit) and no gold relation of those abstracts lies outside the candidates (the report scores the run's tasks;
the official script would count such a relation as a false negative). ``verdict`` checks each of these.

Completeness is checked for every data source: a local file by its abstract count, the hub's splits by the counts
pinned in ``drugprot.core.sources.hub.SPLIT_SIZES`` (``hub_shortfall``): an extraction run covers every abstract of
the split, a pair-mode run at least every abstract with a gold relation (each has its gold pairs as tasks) and, when
the run records its abstracts' gold, every gold relation of the split. A run that stopped early (killed, out of
time) is INCOMPLETE and never comparable.
"""

from __future__ import annotations

from typing import Any, Literal

from drugprot.core.sources.hub import SPLIT_SIZES, hub_source
from drugprot.evaluation.records import RunConfig

OFFICIAL_ABSTRACTS = {split: sizes["abstracts"] for split, sizes in SPLIT_SIZES.items()}
"""Abstracts of the official splits (``OpenMed/drugprot-parquet``): training, and development (our validation)."""


def hub_shortfall(config: RunConfig, *, mode: Literal["pair", "extraction"], abstracts: int) -> str | None:
    """Why a run of a hub split (no local data) holds too few abstracts to be the whole split; None when it holds
    enough, reads local data, or does not record its split. ``abstracts``: the abstracts with rollouts."""
    if config.data_path or config.data_label or config.split not in SPLIT_SIZES:
        return None
    sizes, source = SPLIT_SIZES[config.split], hub_source(config.split)
    if mode == "extraction" and abstracts < (whole := sizes["abstracts"] or 0):
        return f"{abstracts} of the {whole:,} abstracts of {source} (one extraction task per abstract)"
    if mode == "pair" and abstracts < (with_relations := sizes["with_relations"] or 0):
        return (
            f"{abstracts} abstracts with tasks, fewer than the {with_relations:,} abstracts of {source} that have a "
            "gold relation (each has its gold pairs as tasks)"
        )
    return None


NEEDS = (
    "comparable needs a whole official split, every task (no limit) and, in pair mode, negatives=all with every "
    "gold relation a candidate"
)


def verdict(
    config: RunConfig,
    *,
    mode: Literal["pair", "extraction"],
    abstracts: int,
    ceiling: dict[str, Any],
) -> tuple[bool | None, str]:
    """``(comparable_with_official, the sentence that says why)``: True only when nothing is missing; False
    naming every missing condition; None naming what the run does not record (an older run, or local data the
    report cannot recognise as a whole split)."""
    missing: list[str] = []
    unknown: list[str] = []
    if mode == "pair" and config.negatives != "all":
        (missing if config.negatives is not None else unknown).append(
            f"negatives={config.negatives} (not every candidate pair was asked)"
            if config.negatives is not None
            else "the negatives setting (no saved config)"
        )
    if config.limit is None:
        unknown.append("whether the tasks were limited (no saved config)")
    elif config.limit:
        missing.append(f"tasks limited ({config.limit})")
    named = config.data_label or config.data_path
    whole = OFFICIAL_ABSTRACTS.get(config.split or "")
    shortfall = None if config.limit else hub_shortfall(config, mode=mode, abstracts=abstracts)
    if named and mode == "extraction" and abstracts not in OFFICIAL_ABSTRACTS.values():
        missing.append(f"a subset: {abstracts} abstracts of {named} (the official splits have 3,500 and 750)")
    elif named:
        unknown.append(f"whether {named} is a whole official split ({abstracts} abstracts with tasks)")
    elif whole is None:
        unknown.append(f"the split ({config.split or 'not recorded'})")
    elif shortfall is not None:
        missing.append(f"INCOMPLETE RUN: {shortfall}")
    elif (
        mode == "pair"
        and ceiling.get("known")
        and ceiling["gold_relations"] < (SPLIT_SIZES[config.split or ""]["relations"] or 0)
    ):
        census = SPLIT_SIZES[config.split or ""]["relations"]
        unknown.append(
            f"whether the run covers the whole split: its abstracts hold {ceiling['gold_relations']:,} gold relations, "
            f"the split's census {census:,} (fewer when the eval stopped early)"
        )
    if mode == "pair":
        if not ceiling.get("known"):
            unknown.append("whether every gold relation of these abstracts is a candidate (not recorded)")
        elif ceiling["never_predicted"]:
            missing.append(
                f"{ceiling['never_predicted']} gold relations of these abstracts are not candidates (the official "
                "script counts them as false negatives, this report leaves them out)"
            )
    if missing:
        return False, f"NOT comparable with BioCreative VII: {'; '.join(missing)} ({NEEDS})."
    if unknown:
        return None, f"comparability with BioCreative VII unknown: {'; '.join(unknown)} ({NEEDS})."
    split = "validation split (the official development set)" if config.split == "validation" else "train split"
    what = "every candidate pair of " if mode == "pair" else "every abstract of "
    return True, (
        f"{what}the whole {split}: comparable with the official metric (the published anchors are on the hidden "
        "test set)."
    )
