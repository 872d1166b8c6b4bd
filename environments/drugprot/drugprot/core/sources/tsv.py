"""The official BioCreative VII TSV directory: ``*_abstracs.tsv``, ``*_entities.tsv``, ``*_relations.tsv``.

The official spelling is "abstracs"; ``*_abstracts.tsv`` is accepted too. A directory may hold one split's
files or be their ``training/`` and ``development/`` parent. Lines are read without the ``csv`` module and
turned into ``OpenMed/drugprot-parquet`` rows, which ``validate`` checks like any other source.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from drugprot.core._gc import gc_paused
from drugprot.core.errors import DrugprotDataError
from drugprot.core.schema import Document
from drugprot.core.sources.files import read_text
from drugprot.core.sources.validate import LoadStats, validated_documents

# Official file prefixes of each split in the BioCreative VII release.
TSV_SPLIT_PREFIXES = {"train": ("training", "train"), "validation": ("development", "dev", "validation")}


def file_set(directory: Path, split: str) -> tuple[Path, Path, Path]:
    """The (abstracts, entities, relations) files of ``split`` in ``directory`` or its split subfolder."""
    candidates = [directory] + [directory / name for name in TSV_SPLIT_PREFIXES[split] if (directory / name).is_dir()]
    for folder in reversed(candidates):  # a split subfolder wins over the parent
        abstracts = sorted(folder.glob("*_abstracs.tsv")) + sorted(folder.glob("*_abstracts.tsv"))
        if not abstracts:
            continue
        if len(abstracts) > 1:
            matching = [
                p
                for p in abstracts
                if p.name.split("_")[-2] in TSV_SPLIT_PREFIXES[split]
                or any(p.name.startswith(f"drugprot_{pre}") for pre in TSV_SPLIT_PREFIXES[split])
            ]
            if len(matching) != 1:
                raise DrugprotDataError(
                    f"{len(abstracts)} abstract files and none clearly for split {split!r}: "
                    f"{[p.name for p in abstracts]}",
                    source=str(folder),
                    field="data_path",
                )
            abstracts = matching
        stem = abstracts[0].name.rsplit("_", 1)[0]
        entities, relations = folder / f"{stem}_entities.tsv", folder / f"{stem}_relations.tsv"
        for needed in (entities, relations):
            if not needed.is_file():
                raise DrugprotDataError(
                    f"missing {needed.name} beside {abstracts[0].name}", source=str(folder), field="data_path"
                )
        return abstracts[0], entities, relations
    raise DrugprotDataError(
        "no *_abstracs.tsv file (official BioCreative VII layout) in this directory",
        source=str(directory),
        field="data_path",
    )


def _tsv_lines(path: Path, columns: int) -> Iterable[tuple[int, list[str]]]:
    """The tab-separated cells of each non-empty line (1-based line numbers), and a non-empty pmid in the first.

    No ``csv`` module: the official files quote nothing, and a field (an abstract) can exceed ``csv``'s
    128 KiB field limit. Lines end in ``\n``, ``\r\n`` or, in a file without any ``\n`` (old Mac editors), ``\r``.
    """
    text = read_text(path)
    newline = "\n" if "\n" in text or "\r" not in text else "\r"
    for line_no, line in enumerate(text.split(newline), 1):
        if line.endswith("\r"):
            line = line[:-1]
        if not line:
            continue
        cells = line.split("\t")
        if len(cells) != columns:
            raise DrugprotDataError(
                f"expected {columns} tab-separated columns, got {len(cells)}", source=f"{path}:{line_no}"
            )
        if not cells[0].strip():
            raise DrugprotDataError("empty pmid in the first column", source=f"{path}:{line_no}", field="pmid")
        yield line_no, cells


@gc_paused()  # bulk build of acyclic records: see drugprot.core._gc
def tsv_documents(files: tuple[Path, ...], stats: LoadStats) -> list[Document]:
    """The validated documents of one split's (abstracts, entities, relations) files (``file_set``).

    Raises:
        DrugprotDataError: a malformed line (names file and line), or a row that breaks the schema.
    """
    abstracts_path, entities_path, relations_path = files
    rows: dict[str, dict[str, Any]] = {}
    for line_no, (pmid, title, abstract) in _tsv_lines(abstracts_path, 3):
        if pmid in rows:
            raise DrugprotDataError("duplicate abstract", source=f"{abstracts_path}:{line_no}", pmid=pmid)
        rows[pmid] = {
            "pmid": pmid,
            "title": title,
            "abstract": abstract,
            "text": f"{title} {abstract}",
            "entities": [],
            "relations": [],
        }
    if not rows:
        raise DrugprotDataError("no abstract: the abstracts file is empty", source=str(abstracts_path))
    for line_no, (pmid, ent_id, ent_type, start, end, text) in _tsv_lines(entities_path, 6):
        row = _tsv_row(rows, pmid, entities_path, line_no)
        if not ent_id.strip():
            raise DrugprotDataError(
                "empty entity id in the second column", source=f"{entities_path}:{line_no}", pmid=pmid, field="id"
            )
        try:
            offsets = int(start), int(end)
        except ValueError as exc:
            raise DrugprotDataError(
                f"offsets {start!r}, {end!r} are not integers",
                source=f"{entities_path}:{line_no}",
                pmid=pmid,
                field="start",
            ) from exc
        row["entities"].append({"id": ent_id, "type": ent_type, "text": text, "start": offsets[0], "end": offsets[1]})
    for line_no, (pmid, rel_type, arg1, arg2) in _tsv_lines(relations_path, 4):
        row = _tsv_row(rows, pmid, relations_path, line_no)
        args = []
        for value, prefix in ((arg1, "Arg1:"), (arg2, "Arg2:")):
            if not value.startswith(prefix) or not value[len(prefix) :].strip():
                raise DrugprotDataError(
                    f"expected {prefix}T<n>, got {value!r}",
                    source=f"{relations_path}:{line_no}",
                    pmid=pmid,
                    field=prefix.rstrip(":").lower(),
                )
            args.append(value[len(prefix) :])
        row["relations"].append({"type": rel_type, "arg1": args[0], "arg2": args[1]})
    return validated_documents(rows.values(), str(abstracts_path.parent), stats)


def _tsv_row(rows: dict[str, dict[str, Any]], pmid: str, path: Path, line_no: int) -> dict[str, Any]:
    row = rows.get(pmid)
    if row is None:
        raise DrugprotDataError("pmid has no abstract in the abstracts file", source=f"{path}:{line_no}", pmid=pmid)
    return row
