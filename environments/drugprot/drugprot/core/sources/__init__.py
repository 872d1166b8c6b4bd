"""Loading DrugProt abstracts: the Hugging Face hub, a local parquet/jsonl file, or the official TSVs.

Every source is read into validated ``Document``s (see ``schema``). Three sources, one schema:

- the hub dataset ``OpenMed/drugprot-parquet`` (splits ``train`` and ``validation``), via ``datasets``;
- a local ``.parquet``, ``.jsonl`` or ``.json`` file with that dataset's columns
  (``pmid, title, abstract, text, entities[id,type,text,start,end], relations[type,arg1,arg2]``);
- a directory with the original BioCreative VII files ``*_abstracs.tsv``, ``*_entities.tsv`` and
  ``*_relations.tsv`` (the official spelling is "abstracs"), or their ``training/`` and
  ``development/`` parent directory.

Validation is strict: an unknown relation type, an unknown entity type, a relation naming a missing
entity or pointing the wrong way (arg1 must be the chemical, arg2 the gene), and an offset outside the
text or not matching the entity's text raise ``DrugprotDataError`` naming the source, pmid and field.
One documented leniency: an exact duplicate of a relation already listed for the same pair is dropped
and counted in ``LoadStats.duplicate_relations`` (the official scorer de-duplicates them too).

Reading is as strict: files are UTF-8 (a leading byte-order mark is accepted), and anything that cannot
be read -- an undecodable byte, truncated or too deeply nested JSON, a corrupt parquet file, an empty
file, an empty pmid or entity id -- is a ``DrugprotDataError`` naming the file and line (or row) and
saying how to fix it. ``source_files`` and ``check_hub_offline`` are the checks that need neither the
network nor a full read.

One module per source: ``hub`` (the hub dataset, its splits and errors), ``files`` (parquet/jsonl/json
rows), ``tsv`` (the official TSV directory), and ``validate`` (rows -> ``Document``s), which all share.
"""

from __future__ import annotations

import os
from pathlib import Path

from drugprot.core.errors import DrugprotConfigError, DrugprotDataError
from drugprot.core.schema import Document
from drugprot.core.sources.files import SUFFIXES, file_rows
from drugprot.core.sources.hub import SPLITS, check_hub_offline, hub_rows, hub_source
from drugprot.core.sources.tsv import file_set, tsv_documents
from drugprot.core.sources.validate import LoadStats, document_from_row, validated_documents

__all__ = [
    "SPLITS",
    "LoadStats",
    "check_hub_offline",
    "document_from_row",
    "hub_source",
    "load_documents",
    "source_files",
]


def load_documents(
    split: str = "validation",
    data_path: str | os.PathLike[str] | None = None,
    *,
    stats: LoadStats | None = None,
    path_hint: str = "data_path={path}",
    revision: str | None = None,
) -> list[Document]:
    """Load and validate one split.

    Args:
        split: ``train`` or ``validation``. For a single local file the split is ignored (the file is the
            split); for a TSV directory it picks the ``training``/``development`` files.
        data_path: a local file or TSV directory; ``None`` loads ``OpenMed/drugprot-parquet`` from the hub.
        stats: filled with counts, when given.
        path_hint: how the caller's user sets ``data_path`` (e.g. ``--env.taskset.data-path {path}``, where
            ``{path}`` stands for the file), quoted in the error raised when the hub cannot be used.
        revision: the hub dataset's git revision (a commit sha, branch or tag) to load; None is its default
            branch, which can change between runs: pin a commit sha to make a run reproducible. Only for the
            hub (``TaskOptions`` rejects it together with ``data_path``).

    Raises:
        DrugprotConfigError: an unknown split.
        DrugprotDataError: a missing, unreadable or empty source, or a row that breaks the schema (names
            file, line or row, pmid and field).
        DrugprotHubError: ``data_path`` is unset and the hub cannot be reached (or is offline, uncached).
    """
    if split not in SPLITS:
        raise DrugprotConfigError(f"unknown split {split!r}; expected one of {', '.join(SPLITS)}", knob="split")
    stats = stats if stats is not None else LoadStats()
    if data_path is None:
        rows = hub_rows(split, path_hint, revision)
        return validated_documents(rows, hub_source(split, revision), stats)
    files = source_files(split, data_path)
    if len(files) == 3:
        return tsv_documents(files, stats)
    return validated_documents(file_rows(files[0]), str(files[0]), stats)


def source_files(split: str, data_path: str | os.PathLike[str]) -> tuple[Path, ...]:
    """The files ``load_documents(split, data_path)`` reads: one data file, or a split's three TSV files.

    Checks what needs no read: the path exists, a file has a supported suffix, a directory holds a
    complete set of official TSV files for ``split``.

    Raises:
        DrugprotDataError: naming the path and what is missing or wrong.
    """
    path = Path(data_path).expanduser()
    if path.is_dir():
        return file_set(path, split)
    if not path.is_file():
        raise DrugprotDataError(
            f"no such file or directory: {path}; pass a .parquet, .jsonl or .json file or a directory of the "
            "official BioCreative VII TSV files",
            source=str(path),
            field="data_path",
        )
    if path.suffix.lower() not in SUFFIXES:
        raise DrugprotDataError(
            f"unsupported file type {path.suffix.lower()!r}; expected .parquet, .jsonl, .json or a TSV directory",
            source=str(path),
            field="data_path",
        )
    return (path,)
