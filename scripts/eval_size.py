"""How large the RL eval must be: the standard error of its headline number against its size.

The headline number of a pair-mode eval is the official DrugProt micro-F1 over the eval's (pair, type) cells,
rollouts pooled (``drugprot report``'s "micro, rollouts pooled"); with ``--negatives 0`` (no NO-RELATION
candidates) it is the accuracy, which the positive-only setting reports instead. Its standard error is computed
by resampling abstracts, since the pairs of one abstract are correlated:

1. draw ``--split-abstracts`` abstracts with replacement from the data file's (a cluster bootstrap over PMIDs:
   the validation split is 750 abstracts, the file stands for the population they come from);
2. shuffle their tasks and keep the first N, as ``num_tasks`` with ``shuffle = true`` does;
3. draw each kept task's ``R`` rollouts from the policy and pool the official cells (TP, FP, FN).

The standard error is the standard deviation of the headline over the resamples. Policies:

* ``lexical``: the lexical baseline (``drugprot baseline lexical``), deterministic: the sampling error alone.
* ``noisy-gold``: a stand-in for a model at Trinity-Mini's starting point. On a gold pair it answers a gold
  type with probability ``--accuracy`` (the seed run's step-1 accuracy on positive pairs was 0.53), else a
  wrong type; on a NO-RELATION candidate it answers N with probability ``--no-relation-rate``, else a type.
  Each rollout is an independent draw, so rollouts add their own noise.

Every reply is rendered as a model's reply and scored by ``drugprot.core.scoring.score_reply``; the cells come
from there. The cost of one eval is ``N x R x (prompt + completion tokens)``, with the prompt at <= 1 token per
UTF-8 byte plus the chat template (``scripts/prompt_lengths.py``) and the completion at ``--max-tokens`` (the
cap) or ``--completion-tokens`` (a typical length).

Usage: python scripts/eval_size.py --data-path FILE [--split train] [--negatives all] [--resamples 1000]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root, for bench.common
from bench.common import fail, load_data, positive_int  # noqa: E402  (the CLI convention of every bench module and script)

TEMPLATE_OVERHEAD_TOKENS = 128  # scripts/prompt_lengths.py: the chat template around system + user prompt
SEED_STEP1_ACCURACY = 0.53  # the seed run's step-1 accuracy on positive pairs (docs/training/before-you-train.md)
SEED_STEP1_COMPLETION_TOKENS = 830  # its mean completion length at step 1


@dataclass(frozen=True)
class TaskCells:
    """A policy on one task: with probability ``p`` the reply scored ``a``, else ``b``; each a tuple
    (tp, fp, fn, accuracy) from ``score_reply``."""

    pmid: str
    p: float
    a: tuple[int, int, int, float]
    b: tuple[int, int, int, float]
    prompt_tokens: int


@dataclass(frozen=True)
class SizeRow:
    tasks: int
    rollouts: int
    abstracts: float
    """Mean number of distinct abstracts the N tasks come from."""
    mean: float
    se: float


def _cells(reply: str, labels: Sequence[str], with_no_relation: bool) -> tuple[int, int, int, float]:
    from drugprot.core.scoring import score_reply

    score = score_reply(reply, None, tuple(labels), with_no_relation=with_no_relation)
    return score.tp, score.fp, score.fn, score.accuracy


def _reply(label: str) -> str:
    from drugprot.core.labels import letter_of

    return f"<think>A stand-in answer.</think>\n\\boxed{{{letter_of(label)}}}"


def wrong_type(labels: Sequence[str]) -> str:
    """The first relation type (official order) that is not a gold type of the pair: a wrong answer."""
    from drugprot.core.labels import RELATION_NAMES

    return next(name for name in RELATION_NAMES if name not in labels)


def policy_cells(policy: str, tasks: Sequence, *, with_no_relation: bool, accuracy: float, no_relation_rate: float):
    """``TaskCells`` of every task under ``policy`` (``lexical`` or ``noisy-gold``)."""
    from drugprot.core.labels import NO_RELATION
    from drugprot.core.prompts import system_prompt, user_prompt
    from drugprot.evaluation.baselines import predict, reply_text

    out = []
    for task in tasks:
        prompt = system_prompt(with_no_relation) + user_prompt(task, with_no_relation=with_no_relation)
        tokens = len(prompt.encode("utf-8")) + TEMPLATE_OVERHEAD_TOKENS
        labels = task.labels
        if policy == "lexical":
            cells = _cells(
                reply_text(predict("lexical", task, with_no_relation=with_no_relation)), labels, with_no_relation
            )
            out.append(TaskCells(task.pmid, 1.0, cells, cells, tokens))
            continue
        wrong = _cells(_reply(wrong_type(labels)), labels, with_no_relation)
        if NO_RELATION.name in labels:
            right, p = _cells(_reply(NO_RELATION.name), labels, with_no_relation), no_relation_rate
        else:
            right, p = _cells(_reply(labels[0]), labels, with_no_relation), accuracy
        out.append(TaskCells(task.pmid, p, right, wrong, tokens))
    return out


def headline(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray, acc: np.ndarray, n: np.ndarray, f1: bool) -> np.ndarray:
    """Official micro-F1 ``2TP / (2TP + FP + FN)`` (0 with no cell), or the mean accuracy over ``n`` rollouts."""
    if not f1:
        return acc / n
    denominator = 2 * tp + fp + fn
    return np.divide(2 * tp, denominator, out=np.zeros_like(tp, dtype=float), where=denominator > 0)


def resample(
    cells: Sequence[TaskCells],
    sizes: Sequence[int],
    rollouts: Sequence[int],
    *,
    split_abstracts: int,
    resamples: int,
    seed: int,
    f1: bool,
    abstracts: bool = False,
) -> list[SizeRow]:
    """The headline's mean and standard error for every (tasks, rollouts), over ``resamples`` cluster bootstraps.

    A size of 0 (or one above the resampled split's task count) means every task of the resampled split. With
    ``abstracts`` a size counts whole abstracts (every task of the first N drawn), as extraction mode's
    ``num_tasks`` does.
    """
    rng = np.random.default_rng(seed)
    pmids = sorted({c.pmid for c in cells})
    by_pmid: dict[str, list[int]] = {pmid: [] for pmid in pmids}
    for i, c in enumerate(cells):
        by_pmid[c.pmid].append(i)
    groups = [np.array(by_pmid[pmid]) for pmid in pmids]
    p = np.array([c.p for c in cells])
    a = np.array([c.a for c in cells], dtype=float)
    b = np.array([c.b for c in cells], dtype=float)
    values = {(n, r): [] for n in sizes for r in rollouts}
    distinct = {n: [] for n in sizes}
    for _ in range(resamples):
        drawn = rng.integers(0, len(groups), split_abstracts)
        pool = np.concatenate([groups[g] for g in drawn])
        owner = np.repeat(np.arange(split_abstracts), [len(groups[g]) for g in drawn])
        order = rng.permutation(len(pool))
        for n in sizes:
            if abstracts:
                keep = order if n <= 0 else order[owner[order] < n]  # owners are in draw order: random
            else:
                keep = order if n <= 0 or n >= len(pool) else order[:n]
            idx = pool[keep]
            distinct[n].append(len(np.unique(owner[keep])))
            for r in rollouts:
                k = rng.binomial(r, p[idx])  # rollouts that drew reply a
                total = (k[:, None] * a[idx] + (r - k)[:, None] * b[idx]).sum(axis=0)
                values[(n, r)].append([*total, len(idx) * r])
    rows = []
    for (n, r), totals in values.items():
        t = np.array(totals)
        h = headline(t[:, 0], t[:, 1], t[:, 2], t[:, 3], t[:, 4], f1)
        rows.append(SizeRow(n, r, float(np.mean(distinct[n])), float(np.mean(h)), float(np.std(h, ddof=1))))
    return rows


def smallest(rows: Sequence[SizeRow], target: float, rollouts: int) -> SizeRow | None:
    """The smallest task count (whole split last) whose standard error is <= target at ``rollouts``."""
    fits = [row for row in rows if row.rollouts == rollouts and row.se <= target]
    return min(fits, key=lambda row: (row.tasks <= 0, row.tasks), default=None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="eval_size.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-path", required=True, help="DrugProt jsonl/parquet file or TSV directory")
    parser.add_argument("--split", default="train", choices=("train", "validation"))
    parser.add_argument("--negatives", default="all", help='0, k per gold pair, or "all" (default)')
    parser.add_argument("--policy", nargs="+", default=["noisy-gold", "lexical"], choices=("noisy-gold", "lexical"))
    parser.add_argument("--accuracy", type=float, default=SEED_STEP1_ACCURACY, help="noisy-gold: P(gold type)")
    parser.add_argument("--no-relation-rate", type=float, default=0.5, help="noisy-gold: P(N | no relation)")
    parser.add_argument("--split-abstracts", type=positive_int, default=750, help="abstracts of the eval split (750)")
    parser.add_argument("--tasks", type=int, nargs="+", default=[500, 1000, 2000, 3000, 4000, 6000, 0])
    parser.add_argument("--rollouts", type=positive_int, nargs="+", default=[1, 2])
    parser.add_argument("--resamples", type=positive_int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--target", type=float, default=0.02, help="the standard error to reach (0.02)")
    parser.add_argument("--max-tokens", type=int, default=2048, help="the eval's completion cap")
    parser.add_argument("--completion-tokens", type=int, default=SEED_STEP1_COMPLETION_TOKENS)
    parser.add_argument(
        "--abstracts", action="store_true", help="sizes count whole abstracts (extraction mode's num_tasks)"
    )
    args = parser.parse_args(argv)

    from drugprot.core.errors import DrugprotConfigError
    from drugprot.core.options import parse_negatives
    from drugprot.core.tasks import build_tasks

    if any(tasks < 0 for tasks in args.tasks):
        fail(parser.prog, f"--tasks: expected eval sizes >= 1, or 0 for the whole split; got {args.tasks}")
    try:
        negatives = parse_negatives(args.negatives)
    except DrugprotConfigError as exc:
        fail(parser.prog, f"--negatives: {exc}")
    what = "the eval-size analysis"
    documents = load_data(parser.prog, args.data_path, split=args.split, min_abstracts=2, relations=True, what=what)
    tasks = build_tasks(documents, negatives=negatives)
    with_nr, f1 = negatives != 0, negatives != 0
    name = "official micro-F1 (rollouts pooled)" if f1 else "accuracy"
    per_abstract = len(tasks) / len(documents)
    print(
        f"{len(tasks):,} tasks of {len(documents)} abstracts ({per_abstract:.2f} per abstract), negatives="
        f"{args.negatives}, from {args.data_path}; headline: {name}"
    )
    print(
        f"standard error over {args.resamples} cluster-bootstrap resamples of {args.split_abstracts} abstracts "
        f"(~{per_abstract * args.split_abstracts:,.0f} tasks), then N shuffled tasks, seed {args.seed}"
    )
    for policy in args.policy:
        cells = policy_cells(
            policy, tasks, with_no_relation=with_nr, accuracy=args.accuracy, no_relation_rate=args.no_relation_rate
        )
        prompt = sum(c.prompt_tokens for c in cells) / len(cells)
        rollouts = [1] if policy == "lexical" else args.rollouts
        rows = resample(
            cells, args.tasks, rollouts, split_abstracts=args.split_abstracts, resamples=args.resamples,
            seed=args.seed, f1=f1, abstracts=args.abstracts,
        )  # fmt: skip
        what = (
            "deterministic"
            if policy == "lexical"
            else f"P(gold type | gold pair) {args.accuracy}, P(N | no relation) {args.no_relation_rate}"
        )
        print(f"\npolicy {policy} ({what}); mean prompt token bound {prompt:,.0f}")
        unit = "abstracts" if args.abstracts else "tasks"
        print(f"  {unit[:5]:>6} {'R':>2} {'abstracts':>9} {'mean':>6} {'SE':>6}  tokens/eval (cap / typical)")
        for row in rows:
            n = row.tasks if row.tasks > 0 else round(per_abstract * args.split_abstracts)
            label = f"{row.tasks:>6}" if row.tasks > 0 else " whole"
            cap = n * row.rollouts * (prompt + args.max_tokens)
            typical = n * row.rollouts * (prompt + args.completion_tokens)
            cost = "-" if args.abstracts else f"{cap / 1e6:6.1f}M / {typical / 1e6:5.1f}M"
            print(f"  {label} {row.rollouts:>2} {row.abstracts:9.0f} {row.mean:6.3f} {row.se:6.4f}  {cost}")
        for r in rollouts:
            best = smallest(rows, args.target, r)
            verdict = (
                f"{best.tasks if best.tasks > 0 else 'the whole split:'} {unit} (SE {best.se:.4f})"
                if best
                else f"no size listed (the whole split: SE {min(row.se for row in rows if row.rollouts == r):.4f})"
            )
            print(f"  smallest size with SE <= {args.target} at R={r}: {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
