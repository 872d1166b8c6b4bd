"""When a pair-mode run's micro-F1 is comparable with BioCreative VII: every candidate pair asked
(``negatives=all``), at least every abstract with a gold relation of a hub split, the split's gold census, and
every gold relation a candidate (``drugprot.evaluation.comparability.verdict`` applies these rules)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drugprot.core.sources.hub import SPLIT_SIZES
from drugprot.evaluation.records import RunConfig


class PairRules:
    covers = "every candidate pair of "

    def setting_gaps(self, config: RunConfig, missing: list[str], unknown: list[str]) -> None:
        if config.negatives != "all":
            (missing if config.negatives is not None else unknown).append(
                f"negatives={config.negatives} (not every candidate pair was asked)"
                if config.negatives is not None
                else "the negatives setting (no saved config)"
            )

    def hub_shortfall(self, sizes: Mapping[str, int | None], source: str, abstracts: int) -> str | None:
        if abstracts < (with_relations := sizes["with_relations"] or 0):
            return (
                f"{abstracts} abstracts with tasks, fewer than the {with_relations:,} abstracts of {source} that have "
                "a gold relation (each has its gold pairs as tasks)"
            )
        return None

    def subset(self, named: str, abstracts: int) -> str | None:
        return None

    def census_gap(self, config: RunConfig, ceiling: Mapping[str, Any]) -> str | None:
        if ceiling.get("known") and ceiling["gold_relations"] < (SPLIT_SIZES[config.split or ""]["relations"] or 0):
            census = SPLIT_SIZES[config.split or ""]["relations"]
            return (
                f"whether the run covers the whole split: its abstracts hold {ceiling['gold_relations']:,} gold "
                f"relations, the split's census {census:,} (fewer when the eval stopped early)"
            )
        return None

    def ceiling_gaps(self, ceiling: Mapping[str, Any], missing: list[str], unknown: list[str]) -> None:
        if not ceiling.get("known"):
            unknown.append("whether every gold relation of these abstracts is a candidate (not recorded)")
        elif ceiling["never_predicted"]:
            missing.append(
                f"{ceiling['never_predicted']} gold relations of these abstracts are not candidates (the official "
                "script counts them as false negatives, this report leaves them out)"
            )


RULES = PairRules()
