"""The figures in configs/rl/slurm.toml's comment, recomputed from the configs they describe."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAIRS_PER_ABSTRACT = 17.28
"""Candidate pairs per abstract on the real 350-abstract sample (the comment's and docs/training/before-you-train.md's
figure); the train split has 3,500 abstracts."""


def test_the_slurm_comment_counts_the_pairs_a_run_sees() -> None:
    base = tomllib.loads((ROOT / "configs" / "drugprot.toml").read_text(encoding="utf-8"))
    slurm_text = (ROOT / "configs" / "rl" / "slurm.toml").read_text(encoding="utf-8")
    slurm = tomllib.loads(slurm_text)
    steps, group = base["max_steps"], base["orchestrator"]["group_size"]
    rollouts = steps * slurm["orchestrator"]["batch_size"]
    pairs = rollouts // group
    candidates = PAIRS_PER_ABSTRACT * 3500
    comment = " ".join(line.lstrip("# ").strip() for line in slurm_text.splitlines() if line.startswith("#"))
    assert (rollouts, pairs, round(candidates, -2)) == (51_200, 6_400, 60_500)
    assert f"{pairs / candidates:.1%}" == "10.6%"
    assert (
        f"100 steps then see {rollouts:,} rollouts: {pairs:,} pairs (x group_size {group}), 10.6% of the train "
        "split's ~60,500 candidate pairs" in comment
    )
