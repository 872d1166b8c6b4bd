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
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse
from urllib.request import getproxies_environment, proxy_bypass_environment

from drugprot.core._gc import gc_paused
from drugprot.core.errors import DrugprotConfigError, DrugprotDataError, DrugprotHubError
from drugprot.core.labels import RELATION_NAMES
from drugprot.core.schema import CHEMICAL_TYPES, ENTITY_TYPES, GENE_TYPES, Document, Entity, Relation

HUB_DATASET = "OpenMed/drugprot-parquet"
SPLITS = ("train", "validation")
# Official file prefixes of each split in the BioCreative VII release.
TSV_SPLIT_PREFIXES = {"train": ("training", "train"), "validation": ("development", "dev", "validation")}
_RELATION_TYPES = frozenset(RELATION_NAMES)
HUB_FILES = {"train": "data/train.parquet", "validation": "data/validation.parquet"}
"""The parquet file of each split in the hub dataset's repository."""
HUB_DOWNLOAD_DIR = "drugprot-parquet"
"""Where the hub error message tells the user to download the split (``hf download --local-dir``)."""
_HUB_TIMEOUT_S = 1.5  # a TCP connect to the hub takes well under a second; fail fast when it does not
_OFFLINE_VARS = ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")
_BOM = b"\xef\xbb\xbf"
_SUFFIXES = (".parquet", ".jsonl", ".json")
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
        rows = _hub_rows(split, path_hint, revision)
        return _documents(rows, hub_source(split, revision), stats)
    files = source_files(split, data_path)
    if len(files) == 3:
        return _tsv_documents(files, stats)
    return _documents(_file_rows(files[0]), str(files[0]), stats)


def source_files(split: str, data_path: str | os.PathLike[str]) -> tuple[Path, ...]:
    """The files ``load_documents(split, data_path)`` reads: one data file, or a split's three TSV files.

    Checks what needs no read: the path exists, a file has a supported suffix, a directory holds a
    complete set of official TSV files for ``split``.

    Raises:
        DrugprotDataError: naming the path and what is missing or wrong.
    """
    path = Path(data_path).expanduser()
    if path.is_dir():
        return _tsv_file_set(path, split)
    if not path.is_file():
        raise DrugprotDataError(
            f"no such file or directory: {path}; pass a .parquet, .jsonl or .json file or a directory of the "
            "official BioCreative VII TSV files",
            source=str(path),
            field="data_path",
        )
    if path.suffix.lower() not in _SUFFIXES:
        raise DrugprotDataError(
            f"unsupported file type {path.suffix.lower()!r}; expected .parquet, .jsonl, .json or a TSV directory",
            source=str(path),
            field="data_path",
        )
    return (path,)


# ---------------------------------------------------------------------------------------------- sources


def hub_source(split: str, revision: str | None = None) -> str:
    """The hub dataset's split as messages name it: ``hub:OpenMed/drugprot-parquet[validation]``, with
    ``@<revision>`` after the dataset when one is pinned."""
    pinned = f"@{revision}" if revision is not None else ""
    return f"hub:{HUB_DATASET}{pinned}[{split}]"


def hub_help(split: str, path_hint: str = "data_path={path}", revision: str | None = None) -> str:
    """How to load ``split`` without the hub: the ``hf`` command that downloads its file, and how to pass it.

    ``path_hint`` is how the caller's user sets ``data_path``; ``{path}`` in it stands for the file
    (without it, the file is appended). A pinned ``revision`` is part of the download command.
    """
    local = f"{HUB_DOWNLOAD_DIR}/{HUB_FILES[split]}"
    use = path_hint.replace("{path}", local) if "{path}" in path_hint else f"{path_hint} {local}"
    pinned = f" --revision {revision}" if revision is not None else ""
    return (
        f"Download the split once with `hf download {HUB_DATASET} {HUB_FILES[split]} --repo-type dataset"
        f"{pinned} --local-dir {HUB_DOWNLOAD_DIR}` (the hf command of huggingface_hub) and pass the file: {use} "
        "(a directory of the official BioCreative VII TSV files works the same way)."
    )


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def _hub_offline() -> bool:
    return any(_env_flag(name) for name in _OFFLINE_VARS)


def _hub_cache_dirs() -> tuple[Path, Path]:
    """Where ``huggingface_hub`` and ``datasets`` keep this dataset (their own rules, read at call time)."""
    home = Path(
        os.environ.get("HF_HOME") or Path(os.environ.get("XDG_CACHE_HOME") or "~/.cache") / "huggingface"
    ).expanduser()
    hub = Path(os.environ.get("HF_HUB_CACHE") or os.environ.get("HUGGINGFACE_HUB_CACHE") or home / "hub").expanduser()
    datasets_cache = Path(os.environ.get("HF_DATASETS_CACHE") or home / "datasets").expanduser()
    owner, name = HUB_DATASET.split("/")
    return hub / f"datasets--{owner}--{name}" / "snapshots", datasets_cache / f"{owner}___{name}"


def _hub_cached() -> bool:
    return any(path.is_dir() and any(path.iterdir()) for path in _hub_cache_dirs())


def check_hub_offline(split: str, path_hint: str = "data_path={path}", revision: str | None = None) -> None:
    """Fail now if the hub is switched off (``HF_HUB_OFFLINE``/``HF_DATASETS_OFFLINE``) and nothing is cached.

    Opens no socket and imports nothing heavy: the loader runs it before it probes the network or imports
    ``datasets``.

    Raises:
        DrugprotHubError: with the download command and the file to pass instead.
    """
    if _hub_offline() and not _hub_cached():
        offline = "/".join(name for name in _OFFLINE_VARS if _env_flag(name))
        raise DrugprotHubError(
            f"cannot load {_hub_what(split, revision)}: {offline} is set and no copy is cached "
            f"({' or '.join(str(p.parent if p.name == 'snapshots' else p) for p in _hub_cache_dirs())}). "
            + hub_help(split, path_hint, revision)
        )


def _probe_target(endpoint: str) -> tuple[str, int]:
    """The host and port a hub request connects to first: the proxy the environment sets for the endpoint's
    scheme (unless ``NO_PROXY`` exempts its host), else the endpoint itself."""
    parsed = urlparse(endpoint)
    proxies = getproxies_environment()
    proxy = None
    if not (parsed.hostname and proxy_bypass_environment(parsed.hostname, proxies)):
        proxy = proxies.get(parsed.scheme) or proxies.get("all")
    target = urlparse(proxy if "://" in proxy else f"http://{proxy}") if proxy else parsed
    return target.hostname or endpoint, target.port or (443 if target.scheme == "https" else 80)


def _hub_reachable(endpoint: str) -> bool:
    try:
        socket.create_connection(_probe_target(endpoint), timeout=_HUB_TIMEOUT_S).close()
    except OSError:
        return False
    return True


def _hub_what(split: str, revision: str | None) -> str:
    """``'OpenMed/drugprot-parquet' (validation)``, with ``at revision <rev>`` when one is pinned."""
    return f"{HUB_DATASET!r} ({split}" + (f", revision {revision}" if revision is not None else "") + ")"


def _hub_rows(split: str, path_hint: str, revision: str | None = None) -> Iterable[Mapping[str, Any]]:
    """Rows of the hub dataset at ``revision`` (None: its default branch); fails within seconds (not after
    datasets' retries) when offline."""
    check_hub_offline(split, path_hint, revision)
    endpoint = os.environ.get("HF_ENDPOINT", "https://huggingface.co")
    if not _hub_offline() and not _hub_reachable(endpoint):
        raise DrugprotHubError(
            f"cannot load {_hub_what(split, revision)}: the Hugging Face hub at {endpoint} is unreachable. "
            + hub_help(split, path_hint, revision)
        )
    import datasets  # heavy: imported only when the hub is actually used

    try:
        return datasets.load_dataset(HUB_DATASET, split=split, revision=revision)
    except Exception as exc:  # datasets raises many unrelated types for "not available"
        raise DrugprotHubError(
            f"cannot load {_hub_what(split, revision)} from the Hugging Face hub ({type(exc).__name__}: {exc}). "
            + hub_help(split, path_hint, revision)
        ) from exc


# ------------------------------------------------------------------------------------------------ files


def _read_text(path: Path) -> str:
    """The whole file as text: UTF-8, with an optional leading byte-order mark.

    Raises:
        DrugprotDataError: the file cannot be read, or a byte is not UTF-8 (naming the line).
    """
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise DrugprotDataError(
            f"cannot read the file: {exc.strerror or exc}", source=str(path), field="data_path"
        ) from exc
    if data.startswith(_BOM):
        data = data[len(_BOM) :]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line_start = data.rfind(b"\n", 0, exc.start) + 1
        line = data.count(b"\n", 0, exc.start) + 1
        raise DrugprotDataError(
            f"byte 0x{data[exc.start]:02x} at byte {exc.start - line_start + 1} of the line is not UTF-8 "
            "(the file is in another encoding, e.g. Latin-1, or damaged); convert it to UTF-8",
            source=f"{path}:{line}",
        ) from exc


def _json_value(text: str, path: Path, line_no: int | None = None) -> Any:
    """``json.loads`` with every failure as a ``DrugprotDataError`` naming the file and line.

    ``line_no`` is the line of a ``.jsonl`` row; for a whole ``.json`` file the decoder's line is used.
    """
    source = f"{path}:{line_no}" if line_no is not None else str(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        ends_early = exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string")
        where = f"column {exc.colno}" if line_no is not None else f"line {exc.lineno} column {exc.colno}"
        raise DrugprotDataError(
            f"invalid JSON at {where}: {exc.msg}" + ("; the text ends early (a truncated file?)" if ends_early else ""),
            source=source if line_no is not None else f"{path}:{exc.lineno}",
        ) from exc
    except RecursionError as exc:
        raise DrugprotDataError(
            "JSON nested too deeply to be a DrugProt row (rows nest 3 levels)", source=source
        ) from exc
    except ValueError as exc:  # e.g. an integer literal longer than Python's int-conversion limit
        raise DrugprotDataError(f"invalid JSON: {exc}", source=source) from exc


@gc_paused()  # bulk build of acyclic records: see drugprot.core._gc
def _file_rows(path: Path) -> Iterable[Mapping[str, Any]]:
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        return _parquet_rows(path)
    if suffix == ".json":
        data = _json_value(_read_text(path), path)
        if not isinstance(data, list):
            raise DrugprotDataError(
                f"a .json file must hold a list of rows, got {type(data).__name__}", source=str(path)
            )
        return data
    if suffix == ".jsonl":
        return _jsonl_rows(path)
    raise DrugprotDataError(
        f"unsupported file type {suffix!r}; expected .parquet, .jsonl, .json or a TSV directory",
        source=str(path),
        field="data_path",
    )


def _parquet_rows(path: Path) -> list[dict[str, Any]]:
    import pyarrow as pa  # installed with datasets
    import pyarrow.parquet as pq

    try:
        return pq.read_table(path).to_pylist()
    except (pa.ArrowException, OSError, ValueError, TypeError, IndexError, KeyError) as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DrugprotDataError(
            f"not a readable parquet file ({reason}); re-download or re-export it", source=str(path)
        ) from exc


def _jsonl_rows(path: Path) -> list[Any]:
    rows = []
    for line_no, line in enumerate(_read_text(path).split("\n"), 1):
        if line.strip():
            rows.append(_json_value(line, path, line_no))
    return rows


# -------------------------------------------------------------------------------------------- validation


@gc_paused()  # bulk build of acyclic records: see drugprot.core._gc
def _documents(rows: Iterable[Mapping[str, Any]], source: str, stats: LoadStats) -> list[Document]:
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


# ------------------------------------------------------------------------------------------ official TSVs


def _tsv_file_set(directory: Path, split: str) -> tuple[Path, Path, Path]:
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
    128 KiB field limit.
    """
    for line_no, line in enumerate(_read_text(path).split("\n"), 1):
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
def _tsv_documents(files: tuple[Path, ...], stats: LoadStats) -> list[Document]:
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
    return _documents(rows.values(), str(abstracts_path.parent), stats)


def _tsv_row(rows: dict[str, dict[str, Any]], pmid: str, path: Path, line_no: int) -> dict[str, Any]:
    row = rows.get(pmid)
    if row is None:
        raise DrugprotDataError("pmid has no abstract in the abstracts file", source=f"{path}:{line_no}", pmid=pmid)
    return row
