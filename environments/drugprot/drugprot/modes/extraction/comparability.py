"""When an extraction-mode run's micro-F1 is comparable with BioCreative VII: every abstract of an official split
(``drugprot.evaluation.comparability.verdict`` applies these rules); every chemical-gene pair of an abstract is
scored, so no setting or candidate rule can leave a gold relation out."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drugprot.evaluation.comparability import OFFICIAL_ABSTRACTS
from drugprot.evaluation.records import RunConfig


class ExtractionRules:
    covers = "every abstract of "

    def setting_gaps(self, config: RunConfig, missing: list[str], unknown: list[str]) -> None:
        return None

    def hub_shortfall(self, sizes: Mapping[str, int | None], source: str, abstracts: int) -> str | None:
        if abstracts < (whole := sizes["abstracts"] or 0):
            return f"{abstracts} of the {whole:,} abstracts of {source} (one extraction task per abstract)"
        return None

    def subset(self, named: str, abstracts: int) -> str | None:
        if abstracts not in OFFICIAL_ABSTRACTS.values():
            return f"a subset: {abstracts} abstracts of {named} (the official splits have 3,500 and 750)"
        return None

    def census_gap(self, config: RunConfig, ceiling: Mapping[str, Any]) -> str | None:
        return None

    def ceiling_gaps(self, ceiling: Mapping[str, Any], missing: list[str], unknown: list[str]) -> None:
        return None


RULES = ExtractionRules()
