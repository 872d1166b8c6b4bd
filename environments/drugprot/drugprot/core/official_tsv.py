"""The official DrugProt TSV files: write predictions and gold entities for the official scorer, read relations.

Formats of the BioCreative VII release, UTF-8, no header: relations ``PMID<TAB>relation<TAB>Arg1:T#<TAB>Arg2:T#``,
entities ``PMID<TAB>T#<TAB>type<TAB>start<TAB>end<TAB>text``. Every bad row or field is a ``DrugprotDataError``
naming the file, pmid and field.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

from drugprot.core.errors import DrugprotDataError
from drugprot.core.labels import LABEL_ORDER, NO_RELATION, RELATION_NAMES
from drugprot.core.metrics import RelationRow, entity_id
from drugprot.core.outputs import write_text_atomic
from drugprot.core.schema import Document
from drugprot.core.sources.files import read_text

_SCORED = frozenset(RELATION_NAMES)
_READABLE = _SCORED | {NO_RELATION.name}

_ID = re.compile(r"[^\s:]+")
_PMID = re.compile(r"\S+")


def id_key(entity_id: str) -> tuple[str, int, str]:
    """Natural order of mention ids: ``T2`` before ``T10``."""
    match = re.fullmatch(r"(\D*)(\d+)(.*)", entity_id)
    return (match.group(1), int(match.group(2)), match.group(3)) if match else (entity_id, -1, "")


def sorted_rows(rows: Iterable[RelationRow]) -> list[RelationRow]:
    """Official rows sorted by PMID, then mention ids (natural order), then type (``LABEL_ORDER``)."""
    return sorted(rows, key=lambda row: (row[0], id_key(row[1]), id_key(row[2]), LABEL_ORDER[row[3]]))


def _clean_field(value: object, path: str | os.PathLike[str], pmid: str | None, field: str) -> str:
    """A field to write: a non-empty str without tabs or line breaks."""
    if not isinstance(value, str) or not value or any(ch in value for ch in "\t\r\n"):
        raise DrugprotDataError(
            f"cannot write {field} {value!r}: expected a non-empty string without tabs or line breaks",
            source=str(path),
            pmid=pmid,
            field=field,
        )
    return value


def write_predictions_tsv(path: str | os.PathLike[str], rows: Iterable[RelationRow]) -> int:
    """Write relation rows in the official format: ``PMID<TAB>relation<TAB>Arg1:T#<TAB>Arg2:T#``, no header.

    Rows are written in the given order, duplicates included. ``NO-RELATION`` rows are skipped (in the
    official format no-relation is the absence of a row). ``arg1``/``arg2`` may be bare ids (``T3``) or
    already prefixed (``Arg1:T3``).

    Returns:
        The number of lines written.

    Raises:
        DrugprotDataError: a row is not a 4-tuple, has an empty or tab/newline-containing field, or a
            relation type that is neither one of the 13 nor NO-RELATION (names the file, pmid and field).
    """
    lines = []
    for n, row in enumerate(rows):
        if not isinstance(row, tuple | list) or len(row) != 4:
            raise DrugprotDataError(
                f"row {n} must be (pmid, arg1, arg2, relation), got {row!r}", source=str(path), field="row"
            )
        pmid = _clean_field(row[0], path, None, "pmid")
        relation = _clean_field(row[3], path, pmid, "relation")
        if relation == NO_RELATION.name:
            continue
        if relation not in _SCORED:
            raise DrugprotDataError(
                f"unknown relation type {relation!r}; expected one of {', '.join(RELATION_NAMES)}",
                source=str(path),
                pmid=pmid,
                field="relation",
            )
        arg1 = entity_id(_clean_field(row[1], path, pmid, "arg1"))
        arg2 = entity_id(_clean_field(row[2], path, pmid, "arg2"))
        lines.append(f"{pmid}\t{relation}\tArg1:{arg1}\tArg2:{arg2}\n")
    write_text_atomic(path, "".join(lines))
    return len(lines)


def read_relations_tsv(path: str | os.PathLike[str], *, strict: bool = True) -> list[RelationRow]:
    """Read an official relations (gold or prediction) TSV into ``(pmid, arg1, arg2, relation)`` rows.

    Format: ``PMID<TAB>relation<TAB>Arg1:T#<TAB>Arg2:T#``, UTF-8 (a leading byte-order mark is accepted), no
    header. Blank lines are skipped
    (as pandas ``skip_blank_lines`` does); ``\\r\\n`` line ends are accepted. The relation must be one of the
    13 official types or ``NO-RELATION`` (kept, and ignored by ``score_relations``). Argument ids are
    returned without their ``Arg1:``/``Arg2:`` prefix. Duplicate rows are kept.

    Args:
        path: the file.
        strict: reject unknown relation types. With ``strict=False`` they are returned as they are, and
            ``score_relations`` ignores them, like the official scorer (whose own toy predictions contain
            a ``whatever`` type); malformed lines still raise.

    Raises:
        DrugprotDataError: a line without exactly 4 tab-separated fields, an empty or whitespace-containing
            PMID, an unknown relation type (when ``strict``), or an argument not of the form
            ``Arg1:<id>``/``Arg2:<id>``; ``source`` is ``<path>:<line number>`` (1-based) and ``field`` the
            offending column.
            A file that cannot be read or is not UTF-8 is one too (``source`` names the file, or its line).
    """
    rows: list[RelationRow] = []
    text = read_text(Path(path))
    for line_no, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        where = f"{path}:{line_no}"
        fields = raw.split("\t")
        if len(fields) != 4:
            raise DrugprotDataError(
                f"expected 4 tab-separated fields (PMID, relation, Arg1, Arg2), got {len(fields)}: {raw!r}",
                source=where,
                field="columns",
            )
        pmid, relation, arg1, arg2 = fields
        if not _PMID.fullmatch(pmid):
            raise DrugprotDataError(f"bad PMID {pmid!r}", source=where, field="pmid")
        if not relation:
            raise DrugprotDataError("empty relation type", source=where, pmid=pmid, field="relation")
        if strict and relation not in _READABLE:
            raise DrugprotDataError(
                f"unknown relation type {relation!r}; expected one of "
                f"{', '.join(RELATION_NAMES)} or {NO_RELATION.name}",
                source=where,
                pmid=pmid,
                field="relation",
            )
        ids = []
        for field, prefix, value in (("arg1", "Arg1:", arg1), ("arg2", "Arg2:", arg2)):
            if not (value.startswith(prefix) and _ID.fullmatch(value[len(prefix) :])):
                raise DrugprotDataError(
                    f"bad argument {value!r}; expected {prefix}<entity id>", source=where, pmid=pmid, field=field
                )
            ids.append(value[len(prefix) :])
        rows.append((pmid, ids[0], ids[1], relation))
    return rows


def write_entities_tsv(path: str | os.PathLike[str], docs: Iterable[Document]) -> int:
    """Write the documents' chemical and gene mentions as an official gold entities TSV.

    Columns ``PMID<TAB>T#<TAB>type<TAB>start<TAB>end<TAB>text``, in document and entity order, with every
    gene type written as ``GENE``: the official scorer only recognises ``CHEMICAL`` and ``GENE``.

    Returns:
        The number of lines written.

    Raises:
        DrugprotDataError: a mention text contains a tab or line break.
    """
    lines = []
    for doc in docs:
        for ent in doc.entities:
            if not (ent.is_chemical or ent.is_gene):
                continue
            text = _clean_field(ent.text, path, doc.pmid, f"entities[{ent.id}].text")
            kind = "CHEMICAL" if ent.is_chemical else "GENE"
            lines.append(f"{doc.pmid}\t{ent.id}\t{kind}\t{ent.start}\t{ent.end}\t{text}\n")
    write_text_atomic(path, "".join(lines))
    return len(lines)
