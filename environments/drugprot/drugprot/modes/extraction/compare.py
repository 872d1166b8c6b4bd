"""When two extraction-mode runs can be paired abstract by abstract."""

from __future__ import annotations

from drugprot.evaluation.records import Run


def same_abstracts(first: Run, second: Run) -> str | None:
    """None when two extraction runs evaluated the same abstracts with the same gold; else why not."""
    a = {r.pmid: r.gold for r in first.extraction}
    b = {r.pmid: r.gold for r in second.extraction}
    if a.keys() != b.keys():
        return f"the runs cover different abstracts ({len(a)} and {len(b)}; {len(a.keys() & b.keys())} shared)"
    changed = sum(a[key] != b[key] for key in a)
    if changed:
        return f"{changed} shared abstracts differ in their gold relations or mentions (different data)"
    return None
