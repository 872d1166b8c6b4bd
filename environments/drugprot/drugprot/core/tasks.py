"""From abstracts to tasks: one task per (chemical mention, gene mention) pair.

A DrugProt relation links two *mentions* (entity ids), not two names: the same name can occur several
times in an abstract, and the same pair can carry several gold types (the official scorer is multi-label
per pair). So each gold pair becomes exactly one task that carries all of its gold labels, and a reply is
correct when it names any of them. Negative (NO-RELATION) candidates are added on request. Gold and negative
pairs follow one rule, ``drugprot.core.candidates``: only same-sentence pairs are tasks; a gold pair across
sentences is no task in any setting and counts in the abstract's ``Ceiling``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from drugprot.core._gc import gc_paused
from drugprot.core.candidates import Ceiling, candidate_pairs, ceiling_of, negative_pairs, sample_negatives
from drugprot.core.labels import LABEL_ORDER, NO_RELATION
from drugprot.core.options import Negatives
from drugprot.core.schema import Document, Entity


@dataclass(frozen=True, slots=True)
class PairTask:
    """One question: which relation holds between this chemical mention and this gene mention?"""

    document: Document
    chemical: Entity
    gene: Entity
    labels: tuple[str, ...]
    """Official names of every gold type of the pair, in label order; ``("NO-RELATION",)`` for a negative."""
    ceiling: Ceiling = Ceiling(0, 0, 0)
    """The abstract's gold relations and how many are on candidate pairs (the same for all its tasks)."""

    @property
    def pmid(self) -> str:
        return self.document.pmid

    @property
    def key(self) -> str:
        """Stable id ``pmid:arg1:arg2`` (also the official TSV's PMID, Arg1, Arg2)."""
        return f"{self.document.pmid}:{self.chemical.id}:{self.gene.id}"


def positive_pairs(document: Document) -> dict[tuple[str, str], tuple[str, ...]]:
    """Gold (chemical id, gene id) pairs of one abstract -> their types, in first-listed order."""
    pairs: dict[tuple[str, str], list[str]] = {}
    for rel in document.relations:
        types = pairs.setdefault((rel.arg1, rel.arg2), [])
        if rel.type not in types:
            types.append(rel.type)
    return {pair: tuple(sorted(types, key=LABEL_ORDER.__getitem__)) for pair, types in pairs.items()}


@gc_paused()  # see drugprot.core._gc
def build_tasks(documents: Iterable[Document], *, negatives: Negatives = 0, seed: int = 0) -> list[PairTask]:
    """All tasks of a split, in document order, each document's gold pairs first (in listed order).

    Args:
        documents: validated abstracts.
        negatives: ``0`` for gold pairs only; ``k`` to add up to k NO-RELATION candidates per gold pair,
            sampled deterministically with ``seed``; ``"all"`` for every candidate pair without a gold relation.
            Gold pairs that are not candidates (``drugprot.core.candidates``) are never tasks.
        seed: the negative-sampling seed.

    """
    documents = list(documents)
    tasks: list[PairTask] = []
    sampled: dict[str, list[tuple[str, str]]] = {}
    if negatives not in (0, "all"):
        sampled = sample_negatives(documents, per_positive=negatives, seed=seed)
    for doc in documents:
        index = {ent.id: ent for ent in doc.entities}
        candidates = candidate_pairs(doc) if doc.relations or negatives == "all" else []
        ceiling = ceiling_of(doc, candidates)
        allowed = set(candidates)
        for (arg1, arg2), labels in positive_pairs(doc).items():
            if (arg1, arg2) in allowed:
                tasks.append(PairTask(doc, index[arg1], index[arg2], labels, ceiling))
        chosen: Sequence[tuple[str, str]] = (
            negative_pairs(doc, candidates=candidates) if negatives == "all" else sampled.get(doc.pmid, ())
        )
        for arg1, arg2 in chosen:
            tasks.append(PairTask(doc, index[arg1], index[arg2], (NO_RELATION.name,), ceiling))
    return tasks
