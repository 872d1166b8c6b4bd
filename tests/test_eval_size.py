"""scripts/eval_size.py: the standard error of the eval's headline number against its size, by resampling abstracts.

The figures in configs/ come from the real sample (not in the repository); these tests pin the pieces on the
fixture and on hand-made cells: the policies' replies as drugprot scores them, the headline, the resampling.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from drugprot.core.sources import load_documents
from drugprot.core.tasks import build_tasks
from tests.scripts import load_script

from .conftest import FIXTURE_JSONL

ROOT = Path(__file__).resolve().parents[1]


size = load_script("eval_size")
TASKS = build_tasks(load_documents("train", FIXTURE_JSONL), negatives="all")


def test_noisy_gold_cells_are_the_official_cells_of_a_right_and_a_wrong_answer() -> None:
    """(tp, fp, fn, accuracy) of the right reply (probability p) and of a wrong type; a multi-label pair answered
    with one of its types still misses the other; N on a no-relation pair states nothing."""
    cells = size.policy_cells("noisy-gold", TASKS, with_no_relation=True, accuracy=0.53, no_relation_rate=0.5)
    by_key = {task.key: (task.labels, (c.p, c.a, c.b)) for task, c in zip(TASKS, cells, strict=True)}
    assert by_key["90000001:T1:T2"] == (("INHIBITOR", "SUBSTRATE"), (0.53, (1, 0, 1, 1.0), (0, 1, 2, 0.0)))
    assert by_key["90000001:T3:T4"] == (("SUBSTRATE",), (0.53, (1, 0, 0, 1.0), (0, 1, 1, 0.0)))
    assert by_key["90000001:T6:T7"] == (("NO-RELATION",), (0.5, (0, 0, 0, 1.0), (0, 1, 0, 0.0)))


def test_lexical_cells_are_the_baselines_answers_scored() -> None:
    """Deterministic (p = 1); over the fixture's 42 candidate pairs its cells total TP 16, FP 16, FN 12."""
    cells = size.policy_cells("lexical", TASKS, with_no_relation=True, accuracy=0.53, no_relation_rate=0.5)
    assert {c.p for c in cells} == {1.0} and all(c.a == c.b for c in cells)
    assert [sum(c.a[i] for c in cells) for i in range(3)] == [16, 16, 12]
    assert (len(cells), len({c.pmid for c in cells})) == (42, 9)


def test_headline_is_the_official_micro_f1_or_the_accuracy() -> None:
    tp, fp, fn = np.array([16.0, 0.0]), np.array([16.0, 0.0]), np.array([12.0, 0.0])
    acc, n = np.array([20.0, 3.0]), np.array([42.0, 4.0])
    assert size.headline(tp, fp, fn, acc, n, True).tolist() == pytest.approx([32 / 60, 0.0])
    assert size.headline(tp, fp, fn, acc, n, False).tolist() == pytest.approx([20 / 42, 0.75])


def _cells(pmid: str, a: tuple, b: tuple = (0, 1, 1, 0.0), p: float = 1.0) -> Any:
    return size.TaskCells(pmid, p, a, b, 100)


def test_abstracts_that_score_alike_have_no_sampling_error() -> None:
    """Two abstracts, each one right and one wrong pair: any resample's F1 is 2/4; every pair of the split kept."""
    cells = [_cells("1", (1, 0, 0, 1.0)), _cells("1", (0, 1, 1, 0.0)), _cells("2", (1, 0, 0, 1.0))]
    cells.append(_cells("2", (0, 1, 1, 0.0)))
    rows = size.resample(cells, [2, 0], [1], split_abstracts=10, resamples=50, seed=0, f1=True)
    whole = next(row for row in rows if row.tasks == 0)
    assert (whole.mean, whole.se, whole.abstracts) == (pytest.approx(0.5), pytest.approx(0.0), 10.0)
    two = next(row for row in rows if row.tasks == 2)
    assert two.se > 0  # two shuffled pairs: right+right, right+wrong or wrong+wrong
    assert two.abstracts <= 2


def test_abstracts_mode_keeps_whole_abstracts() -> None:
    """N counts abstracts: an abstract all right and one all wrong give F1 1 or 0 for N = 1, never between."""
    cells = [_cells("1", (1, 0, 0, 1.0)), _cells("1", (1, 0, 0, 1.0)), _cells("2", (0, 1, 1, 0.0))]
    [row] = size.resample(cells, [1], [1], split_abstracts=5, resamples=200, seed=1, f1=True, abstracts=True)
    assert row.abstracts == 1.0
    assert 0.3 < row.mean < 0.7 and row.se == pytest.approx(np.sqrt(row.mean * (1 - row.mean) * 200 / 199))


def test_rollouts_add_their_noise_to_a_stochastic_policy() -> None:
    cells = [_cells(str(i), (1, 0, 0, 1.0), (0, 1, 1, 0.0), p=0.5) for i in range(20)]
    rows = size.resample(cells, [0], [1, 8], split_abstracts=20, resamples=300, seed=0, f1=False)
    one, eight = sorted(rows, key=lambda row: row.rollouts)
    assert one.se > eight.se > 0


def test_smallest_size_meeting_the_target() -> None:
    rows = [size.SizeRow(1000, 1, 458, 0.32, 0.022), size.SizeRow(2000, 1, 588, 0.32, 0.015)]
    rows += [size.SizeRow(0, 1, 750, 0.32, 0.008), size.SizeRow(1000, 2, 458, 0.32, 0.016)]
    assert size.smallest(rows, 0.02, 1) == rows[1]
    assert size.smallest(rows, 0.02, 2) == rows[3]
    assert size.smallest(rows, 0.01, 1) == rows[2]
    assert size.smallest(rows, 0.001, 1) is None


def test_command_on_the_fixture(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--data-path", str(FIXTURE_JSONL), "--tasks", "10", "0", "--resamples", "20", "--policy", "lexical"]
    assert size.main(argv) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == (
        f"42 tasks of 9 abstracts (4.67 per abstract), negatives=all, from {FIXTURE_JSONL}; "
        "headline: official micro-F1 (rollouts pooled)"
    )
    assert out[3].startswith("policy lexical (deterministic); mean prompt token bound ")
    assert out[-1].startswith("  smallest size with SE <= 0.02 at R=1: ")
