"""Rows of one local file: ``.parquet``, ``.jsonl`` or ``.json`` with the ``OpenMed/drugprot-parquet`` columns.

Files are UTF-8 (a leading byte-order mark is accepted); anything that cannot be read -- an undecodable byte,
truncated or too deeply nested JSON, a corrupt parquet file -- is a ``DrugprotDataError`` naming the file and
line and saying how to fix it. The rows are validated by ``validate``, not here.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from drugprot.core._gc import gc_paused
from drugprot.core.errors import DrugprotDataError

_BOM = b"\xef\xbb\xbf"
SUFFIXES = (".parquet", ".jsonl", ".json")
"""The file types ``file_rows`` reads."""


def read_text(path: Path) -> str:
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
def file_rows(path: Path) -> Iterable[Mapping[str, Any]]:
    """The rows of one ``.parquet``, ``.jsonl`` or ``.json`` file, not yet validated.

    Raises:
        DrugprotDataError: the file cannot be read or decoded, or is not a list of rows (names file and line).
    """
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        return _parquet_rows(path)
    if suffix == ".json":
        data = _json_value(read_text(path), path)
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
    for line_no, line in enumerate(read_text(path).split("\n"), 1):
        if line.strip():
            rows.append(_json_value(line, path, line_no))
    return rows
