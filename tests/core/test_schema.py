"""Tests of drugprot.core.schema: the Entity / Relation / Document records and the entity types."""

from __future__ import annotations

import pytest

from drugprot.core.errors import DrugprotLookupError
from drugprot.core.schema import CHEMICAL_TYPES, ENTITY_TYPES, GENE_TYPES, Document, Entity, Relation

DOC = Document(
    pmid="1",
    title="Aspirin and COX-1.",
    abstract="",
    text="Aspirin and COX-1.",
    entities=(Entity("T1", "CHEMICAL", "Aspirin", 0, 7), Entity("T2", "GENE-Y", "COX-1", 12, 17)),
    relations=(Relation("INHIBITOR", "T1", "T2"),),
)

KINDS = ("CHEMICAL", "GENE", "GENE-Y", "GENE-N", "DISEASE")


def test_entity_types() -> None:
    assert {"CHEMICAL"} == CHEMICAL_TYPES and {"GENE", "GENE-Y", "GENE-N"} == GENE_TYPES
    assert ENTITY_TYPES == CHEMICAL_TYPES | GENE_TYPES
    kinds = {kind: (Entity("T1", kind, "x", 0, 1).is_chemical, Entity("T1", kind, "x", 0, 1).is_gene) for kind in KINDS}
    assert kinds == {
        "CHEMICAL": (True, False),
        "GENE": (False, True),
        "GENE-Y": (False, True),
        "GENE-N": (False, True),
        "DISEASE": (False, False),
    }


def test_records_are_plain_tuples_by_field() -> None:
    assert tuple(DOC.entities[1]) == ("T2", "GENE-Y", "COX-1", 12, 17)
    assert tuple(DOC.relations[0]) == ("INHIBITOR", "T1", "T2")
    assert DOC.text[DOC.entities[1].start : DOC.entities[1].end] == "COX-1"


def test_document_entity_by_id() -> None:
    assert DOC.entity("T2") == Entity("T2", "GENE-Y", "COX-1", 12, 17)
    with pytest.raises(DrugprotLookupError) as err:
        DOC.entity("T9")
    assert err.value.args[0] == "pmid 1 has no entity 'T9'"
    assert isinstance(err.value, KeyError)
