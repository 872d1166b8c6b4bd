"""Typed records of the DrugProt data: one ``Document`` per abstract, in ``OpenMed/drugprot-parquet``'s schema.

Offsets are character offsets into ``Document.text`` (title + " " + abstract), end-exclusive. Entity types
are ``CHEMICAL`` and ``GENE-Y``/``GENE-N`` (train) or ``GENE`` (the OpenMed validation split). A relation's
``arg1`` is always the chemical, ``arg2`` the gene.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from drugprot.core.errors import DrugprotLookupError

CHEMICAL_TYPES = frozenset({"CHEMICAL"})
GENE_TYPES = frozenset({"GENE", "GENE-Y", "GENE-N"})
ENTITY_TYPES = CHEMICAL_TYPES | GENE_TYPES


class Entity(NamedTuple):
    """A mention: its id (``T1``), type, surface text and ``[start, end)`` offsets into the document text.

    A named tuple rather than a dataclass: a split holds ~90k mentions and tuples are built in C, which keeps
    loading the full train split near a second (see bench/).
    """

    id: str
    type: str
    text: str
    start: int
    end: int

    @property
    def is_chemical(self) -> bool:
        return self.type in CHEMICAL_TYPES

    @property
    def is_gene(self) -> bool:
        return self.type in GENE_TYPES


class Relation(NamedTuple):
    """A gold relation: its official type name, the chemical mention id (arg1) and the gene mention id (arg2)."""

    type: str
    arg1: str
    arg2: str


@dataclass(frozen=True, slots=True)
class Document:
    """One abstract with its mentions and gold relations."""

    pmid: str
    title: str
    abstract: str
    text: str
    entities: tuple[Entity, ...]
    relations: tuple[Relation, ...]

    def entity(self, entity_id: str) -> Entity:
        """The mention with this id. Raises ``DrugprotLookupError`` (a ``KeyError``) if the document has none."""
        for entity in self.entities:
            if entity.id == entity_id:
                return entity
        raise DrugprotLookupError(f"pmid {self.pmid} has no entity {entity_id!r}")
