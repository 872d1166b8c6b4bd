"""Shared helpers of the tests of drugprot.core.sources: fixture copies, rows, byte-level corruption."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from drugprot.core.errors import DrugprotDataError
from drugprot.core.options import TaskOptions
from drugprot.core.questions import load_questions

HUB_HELP_VALIDATION = (
    "Download the split once with `hf download OpenMed/drugprot-parquet data/validation.parquet --repo-type dataset "
    "--local-dir drugprot-parquet` (the hf command of huggingface_hub) and pass the file: --env.taskset.data-path "
    "drugprot-parquet/data/validation.parquet (a directory of the official BioCreative VII TSV files works the same "
    "way)."
)


def rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def write_rows(path: Path, data: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in data), encoding="utf-8")
    return path


def copy_tsv(fixture_tsv: Path, tmp_path: Path) -> Path:
    target = tmp_path / "tsv"
    shutil.copytree(fixture_tsv, target)
    return target


CORRUPTIONS = st.lists(
    st.tuples(
        st.sampled_from(["flip", "delete", "insert", "truncate", "duplicate"]),
        st.integers(min_value=0, max_value=2**31),
        st.binary(min_size=1, max_size=12),
    ),
    min_size=1,
    max_size=4,
)


def corrupt(data: bytes, operations: list[tuple[str, int, bytes]]) -> bytes:
    """Apply byte-level damage: flip a byte, delete or insert a run, cut the file, or repeat a stretch."""
    for kind, position, payload in operations:
        i = position % (len(data) + 1)
        if kind == "flip" and i < len(data):
            data = data[:i] + bytes([data[i] ^ (payload[0] | 1)]) + data[i + 1 :]
        elif kind == "delete":
            data = data[:i] + data[i + len(payload) :]
        elif kind == "insert":
            data = data[:i] + payload + data[i:]
        elif kind == "truncate":
            data = data[:i]
        elif kind == "duplicate":
            data = data[:i] + data[i : i + 40 * len(payload)] + data[i:]
    return data


def loads_or_data_error(split: str, path: Path) -> None:
    """The property: the loader (and the task builder, negatives included) succeeds or raises DrugprotDataError."""
    try:
        questions = load_questions(TaskOptions(split=split, data_path=str(path), negatives="all"))
    except DrugprotDataError as exc:
        assert str(exc)  # a message for the user, never empty
    else:
        assert questions and all(q.prompt and q.labels for q in questions)


PROPERTY = settings(
    max_examples=75, derandomize=True, database=None, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
