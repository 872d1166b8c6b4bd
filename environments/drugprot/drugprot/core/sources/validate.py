"""Rows -> validated ``Document``s: the ``OpenMed/drugprot-parquet`` schema, checked strictly.

An unknown relation or entity type, a relation naming a missing entity or pointing the wrong way (arg1 must be
the chemical, arg2 the gene), and an offset outside the text or not matching the entity's text raise
``DrugprotDataError`` naming the source, pmid and field. One documented leniency: an exact duplicate of a
relation already listed for the same pair is dropped and counted in ``LoadStats.duplicate_relations`` (the
official scorer de-duplicates them too).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from drugprot.core._gc import gc_paused
from drugprot.core.errors import DrugprotDataError
from drugprot.core.labels import RELATION_NAMES
from drugprot.core.schema import CHEMICAL_TYPES, ENTITY_TYPES, GENE_TYPES, Document, Entity, Relation

_RELATION_TYPES = frozenset(RELATION_NAMES)
# ``NamedTuple._make`` is ``tuple.__new__`` (C); calling the class goes through a generated Python __new__.
_make_entity, _make_relation = Entity._make, Relation._make


@dataclass
class LoadStats:
    """What a load read and what it dropped (only exact duplicate relations are ever dropped)."""

    documents: int = 0
    entities: int = 0
    relations: int = 0
    duplicate_relations: int = 0
    duplicates: list[str] = field(default_factory=list)
    """``pmid:TYPE:arg1:arg2`` of every dropped duplicate."""


@gc_paused()  # bulk build of acyclic records: see drugprot.core._gc
def validated_documents(rows: Iterable[Mapping[str, Any]], source: str, stats: LoadStats) -> list[Document]:
    """Every row of one source as a validated ``Document`` (``source#row<i>`` in errors); counts go to ``stats``.

    Raises:
        DrugprotDataError: a row breaks the schema, two rows share a pmid, or the source has no row.
    """
    documents: list[Document] = []
    seen: set[str] = set()
    for index, row in enumerate(rows):
        doc = document_from_row(row, source=f"{source}#row{index}", stats=stats)
        if doc.pmid in seen:
            raise DrugprotDataError("duplicate abstract", source=f"{source}#row{index}", pmid=doc.pmid, field="pmid")
        seen.add(doc.pmid)
        documents.append(doc)
    if not documents:
        raise DrugprotDataError("no abstract: the source is empty; pass a file with at least one row", source=source)
    stats.documents += len(documents)
    return documents


def _require(
    row: Mapping[str, Any],
    key: str,
    kind: type | tuple[type, ...],
    source: str,
    pmid: str | None,
    prefix: str = "",
) -> Any:
    if key not in row:
        raise DrugprotDataError("missing field", source=source, pmid=pmid, field=prefix + key)
    value = row[key]
    if not isinstance(value, kind) or isinstance(value, bool):
        raise DrugprotDataError(
            f"expected {getattr(kind, '__name__', kind)}, got {type(value).__name__}",
            source=source,
            pmid=pmid,
            field=prefix + key,
        )
    return value


def document_from_row(row: Mapping[str, Any], *, source: str = "<row>", stats: LoadStats | None = None) -> Document:
    """Validate one row of the ``OpenMed/drugprot-parquet`` schema and build its ``Document``.

    Raises:
        DrugprotDataError: naming ``source``, the pmid and the offending field.
    """
    if type(row) is not dict and not isinstance(row, Mapping):
        raise DrugprotDataError(f"a row must be an object, got {type(row).__name__}", source=source)
    pmid = str(_require(row, "pmid", (str, int), source, None))
    if not pmid.strip():
        raise DrugprotDataError("empty pmid; every abstract needs its PubMed id", source=source, field="pmid")
    text = _require(row, "text", str, source, pmid)
    title = row.get("title") or ""
    abstract = row.get("abstract") or ""
    entities: dict[str, Entity] = {}
    raw_entities = _require(row, "entities", (list, tuple), source, pmid)
    text_len = len(text)
    for i, raw in enumerate(raw_entities):
        # Fast path for a well-formed plain dict (what every loader produces): the same checks as the
        # checked path below, without building error context. Anything it does not accept goes through the
        # checked path, which accepts the same rows and raises the same errors.
        if type(raw) is dict:
            ent_id, ent_type, ent_text = raw.get("id"), raw.get("type"), raw.get("text")
            start, end = raw.get("start"), raw.get("end")
            if (
                type(ent_id) is str
                and type(ent_type) is str
                and type(ent_text) is str
                and type(start) is int
                and type(end) is int
                and ent_id.strip()
                and ent_type in ENTITY_TYPES
                and 0 <= start < end <= text_len
                and text[start:end] == ent_text
                and ent_id not in entities
            ):
                entities[ent_id] = _make_entity((ent_id, ent_type, ent_text, start, end))
                continue
        where = f"entities[{i}]."
        if not isinstance(raw, Mapping):
            raise DrugprotDataError("an entity must be an object", source=source, pmid=pmid, field=f"entities[{i}]")
        ent = Entity(
            id=str(_require(raw, "id", str, source, pmid, where)),
            type=_require(raw, "type", str, source, pmid, where),
            text=_require(raw, "text", str, source, pmid, where),
            start=_require(raw, "start", int, source, pmid, where),
            end=_require(raw, "end", int, source, pmid, where),
        )
        if not ent.id.strip():
            raise DrugprotDataError(
                "empty entity id; every mention needs its id (T1, T2, ...)",
                source=source,
                pmid=pmid,
                field=where + "id",
            )
        _check_entity(ent, text, source, pmid, where)
        if ent.id in entities:
            raise DrugprotDataError(f"duplicate entity id {ent.id!r}", source=source, pmid=pmid, field=where + "id")
        entities[ent.id] = ent
    relations: list[Relation] = []
    seen: set[Relation] = set()
    raw_relations = _require(row, "relations", (list, tuple), source, pmid)
    for i, raw in enumerate(raw_relations):
        rel: Relation | None = None
        if type(raw) is dict:  # fast path, as for entities; duplicates are handled below for both paths
            rel_type, arg1, arg2 = raw.get("type"), raw.get("arg1"), raw.get("arg2")
            if type(rel_type) is str and type(arg1) is str and type(arg2) is str and rel_type in _RELATION_TYPES:
                chem, gene = entities.get(arg1), entities.get(arg2)
                if chem is not None and gene is not None and chem.type in CHEMICAL_TYPES and gene.type in GENE_TYPES:
                    rel = _make_relation((rel_type, arg1, arg2))
        if rel is None:
            where = f"relations[{i}]."
            if not isinstance(raw, Mapping):
                raise DrugprotDataError(
                    "a relation must be an object", source=source, pmid=pmid, field=f"relations[{i}]"
                )
            rel = Relation(
                type=_require(raw, "type", str, source, pmid, where),
                arg1=_require(raw, "arg1", str, source, pmid, where),
                arg2=_require(raw, "arg2", str, source, pmid, where),
            )
            _check_relation(rel, entities, source, pmid, where)
        if rel in seen:
            if stats is not None:
                stats.duplicate_relations += 1
                stats.duplicates.append(f"{pmid}:{rel.type}:{rel.arg1}:{rel.arg2}")
            continue
        seen.add(rel)
        relations.append(rel)
    if stats is not None:
        stats.entities += len(entities)
        stats.relations += len(relations)
    return Document(
        pmid=pmid,
        title=str(title),
        abstract=str(abstract),
        text=text,
        entities=tuple(entities.values()),
        relations=tuple(relations),
    )


def _check_entity(ent: Entity, text: str, source: str, pmid: str, where: str) -> None:
    if ent.type not in ENTITY_TYPES:
        raise DrugprotDataError(
            f"unknown entity type {ent.type!r}; expected one of {sorted(ENTITY_TYPES)}",
            source=source,
            pmid=pmid,
            field=where + "type",
        )
    if not 0 <= ent.start < ent.end <= len(text):
        raise DrugprotDataError(
            f"offsets [{ent.start}, {ent.end}) of {ent.id} lie outside the text (length {len(text)})",
            source=source,
            pmid=pmid,
            field=where + "start",
        )
    if text[ent.start : ent.end] != ent.text:
        raise DrugprotDataError(
            f"text at [{ent.start}, {ent.end}) is {text[ent.start : ent.end]!r}, but entity {ent.id} says {ent.text!r}",
            source=source,
            pmid=pmid,
            field=where + "text",
        )


def _check_relation(rel: Relation, entities: Mapping[str, Entity], source: str, pmid: str, where: str) -> None:
    if rel.type not in _RELATION_TYPES:
        raise DrugprotDataError(
            f"unknown relation type {rel.type!r}; expected one of {', '.join(RELATION_NAMES)}",
            source=source,
            pmid=pmid,
            field=where + "type",
        )
    for arg, want in (("arg1", "chemical"), ("arg2", "gene")):
        ent = entities.get(getattr(rel, arg))
        if ent is None:
            raise DrugprotDataError(
                f"relation names entity {getattr(rel, arg)!r}, which does not exist",
                source=source,
                pmid=pmid,
                field=where + arg,
            )
        if not (ent.is_chemical if want == "chemical" else ent.is_gene):
            raise DrugprotDataError(
                f"{arg} must be a {want} mention, but {ent.id} is {ent.type}",
                source=source,
                pmid=pmid,
                field=where + arg,
            )
