"""``python -m bench.rl_sim --data-path FILE --out DIR``: GRPO on CPU with the environment's own rewards.

A stand-in policy, log-linear over the features of a (chemical, gene) pair (``bench.evidence.FEATURES``), is
trained with GRPO: each step draws prompts from the train abstracts of a PMID split, 8 rollouts per prompt, and
pushes up the log-probability of each rollout's actions in proportion to its group-relative advantage
(reward minus the group's mean, as prime-rl's default). Every reward comes from the environment's scoring path:
the rollout is rendered as a model's reply (a boxed letter; or a ``<relations>`` block listing the candidate pairs
whose sampled action is a type) and scored by ``drugprot.core.scoring.score_task_reply``, then weighted by
``bench.evidence.reward_value``.

* pair recipes: a prompt is one pair task of the recipe's ``negatives`` setting; the actions are the 13 types, plus
  N when negatives are offered;
* extraction recipes: a prompt is one abstract; a rollout samples include + type for every same-sentence candidate.

Warm start (the same for every recipe and seed): a softmax regression fit on the train abstracts' candidates, its
logits divided by a temperature chosen so that the policy's sampled answer is a gold type on ``WARM_ACCURACY`` of
the train gold pairs (N not offered): Trinity-Mini answered 0.53 of the positive pairs right at step 1 of the seed
run. Every ``--eval-every`` steps the run logs, on the held-out abstracts, the official micro-F1 of the policy's
most probable answer on every same-sentence candidate (N only where the recipe offers it), the recipe's mean
reward and the share of N answers (pair) or ``none`` replies (extraction), in prime-rl's ``metrics.jsonl`` format
(``drugprot.evaluation.curves``): the held-out F1 and the N / none share as the eval scope ``heldout``'s
``metrics/official_f1/mean`` and ``metrics/none_share/mean``, which ``drugprot curves`` draws in its "eval accuracy /
official F1" panel (0-1), and the held-out mean of the recipe's reward (whose scale differs between rewards) as
``metrics/recipe_reward/mean``, which it does not draw.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.linear_model import LogisticRegression

from bench.common import (
    add_overwrite,
    check_held_out,
    check_run_folders,
    load_data,
    positive_int,
    too_small,
    write_json,
)
from bench.evidence import (
    ACTIONS,
    N_INDEX,
    PairRow,
    official_f1,
    pair_rows,
    reward_value,
    score_document,
    score_pair,
    split_by_pmid,
    target_index,
)
from drugprot.core.rewards import Costs, utility
from drugprot.core.schema import Document
from drugprot.core.tasks import build_tasks

GROUP = 8
TAIL = 4
"""A run's end figures are the mean of its last ``1/TAIL`` of evaluations."""
WARM_ACCURACY = 0.53
AGENT = "train/agg/effective/agent"
REWARD_KEY = "eval/heldout/effective/agent/metrics/recipe_reward/mean"
F1_KEY = "eval/heldout/effective/agent/metrics/official_f1/mean"
NONE_KEY = "eval/heldout/effective/agent/metrics/none_share/mean"


@dataclass(frozen=True)
class Recipe:
    name: str
    mode: str
    reward: str
    negatives: int | str = "all"


RECIPES = (
    Recipe("pair-accuracy-neg0", "pair", "accuracy", 0),
    Recipe("pair-accuracy-all", "pair", "accuracy", "all"),
    Recipe("pair-utility-all", "pair", "utility", "all"),
    Recipe("extraction-accuracy", "extraction", "accuracy"),
    Recipe("extraction-utility", "extraction", "utility"),
)


@dataclass(frozen=True)
class Settings:
    steps: int = 600
    eval_every: int = 20
    pair_prompts: int = 32
    """Pair tasks per step (x 8 rollouts)."""
    documents: int = 4
    """Abstracts per step in extraction mode (x 8 rollouts)."""
    lr: float = 0.05


@dataclass
class Data:
    """Train and held-out abstracts, every pair of them with its features."""

    train: list[Document]
    test: list[Document]
    rows: list[PairRow]
    x: np.ndarray
    index: dict[tuple[str, str, str], int]

    def candidates(self, documents: Sequence[Document]) -> dict[str, list[int]]:
        """PMID -> row indices of its same-sentence candidates, for ``documents``."""
        wanted = {d.pmid for d in documents}
        out: dict[str, list[int]] = {d.pmid: [] for d in documents}
        for i, r in enumerate(self.rows):
            if r.candidate and r.document.pmid in wanted:
                out[r.document.pmid].append(i)
        return out

    def tasks(self, documents: Sequence[Document], negatives: int | str) -> list[int]:
        """Row indices of the pair tasks of ``documents`` at ``negatives``."""
        return [self.index[(t.pmid, t.chemical.id, t.gene.id)] for t in build_tasks(documents, negatives=negatives)]


def prepare(documents: Sequence[Document]) -> Data:
    train, test = split_by_pmid(documents)
    rows, x = pair_rows([*train, *test])
    index = {(r.document.pmid, r.chemical, r.gene): i for i, r in enumerate(rows)}
    return Data(train, test, rows, x, index)


def softmax(logits: np.ndarray) -> np.ndarray:
    z = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return z / z.sum(axis=-1, keepdims=True)


def probabilities(w: np.ndarray, x: np.ndarray, with_n: bool) -> np.ndarray:
    logits = x @ w.T
    if not with_n:
        logits[..., N_INDEX] = -np.inf
    return softmax(logits)


def warm_start(data: Data) -> tuple[np.ndarray, float]:
    """The supervised fit's weights (14 x features) divided by the temperature that gives ``WARM_ACCURACY``."""
    train_pmids = {d.pmid for d in data.train}
    keep = [i for i, r in enumerate(data.rows) if r.candidate and r.document.pmid in train_pmids]
    y = np.array([target_index(data.rows[i]) for i in keep])
    model = LogisticRegression(max_iter=3000).fit(data.x[keep], y)
    w = np.zeros((len(ACTIONS), data.x.shape[1]))
    w[:, 0] = -10.0  # classes the train abstracts never show stay improbable
    w[model.classes_] = model.coef_
    w[model.classes_, 0] += model.intercept_
    gold = [i for i in keep if data.rows[i].gold]
    hits = np.zeros((len(gold), len(ACTIONS)))
    for k, i in enumerate(gold):
        hits[k, [ACTIONS.index(t) for t in data.rows[i].gold]] = 1.0
    low, high = 0.05, 20.0
    for _ in range(40):  # sampled accuracy falls as the temperature rises
        tau = (low * high) ** 0.5
        accuracy = float((probabilities(w / tau, data.x[gold], False) * hits).sum(axis=1).mean())
        low, high = (tau, high) if accuracy > WARM_ACCURACY else (low, tau)
    return w / tau, tau


def sample(p: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One action per row of ``p`` (rows of probabilities)."""
    return (rng.random((*p.shape[:-1], 1)) < np.cumsum(p, axis=-1)).argmax(axis=-1)


Step = tuple[np.ndarray, float, float, float]
"""(gradient of the GRPO objective, mean reward, mean accuracy term, mean utility term) of one step's rollouts."""


def pair_step(
    w: np.ndarray,
    data: Data,
    recipe: Recipe,
    costs: Costs,
    tasks: list[int],
    settings: Settings,
    rng: np.random.Generator,
) -> Step:
    with_n = recipe.negatives != 0
    chosen = rng.choice(tasks, size=min(settings.pair_prompts, len(tasks)), replace=False)
    x = data.x[chosen]
    p = probabilities(w, x, with_n)
    actions = sample(np.repeat(p[:, None], GROUP, axis=1), rng)  # (prompts, GROUP)
    rewards = np.zeros(actions.shape)
    accuracy = util = 0.0
    for k, i in enumerate(chosen):
        labels = data.rows[i].labels
        for g in range(GROUP):
            score = score_pair(ACTIONS[actions[k, g]], labels, with_no_relation=with_n)
            rewards[k, g] = reward_value(score, recipe.reward, costs)
            accuracy, util = accuracy + score.accuracy, util + utility(score, costs)
    advantages = rewards - rewards.mean(axis=1, keepdims=True)
    onehot = np.eye(len(ACTIONS))[actions]  # (prompts, GROUP, 14)
    grad = np.einsum("kg,kga,kf->af", advantages, onehot - p[:, None], x) / actions.size
    return grad, float(rewards.mean()), accuracy / actions.size, util / actions.size


def extraction_step(
    w: np.ndarray,
    data: Data,
    recipe: Recipe,
    costs: Costs,
    by_pmid: dict[str, list[int]],
    settings: Settings,
    rng: np.random.Generator,
) -> Step:
    pmids = rng.choice(sorted(by_pmid), size=min(settings.documents, len(by_pmid)), replace=False)
    grad = np.zeros_like(w)
    total = accuracy = util = 0.0
    for pmid in pmids:
        indices = by_pmid[pmid]
        x = data.x[indices]
        p = probabilities(w, x, True)
        actions = sample(np.repeat(p[None], GROUP, axis=0), rng)  # (GROUP, candidates)
        document = data.rows[indices[0]].document if indices else next(d for d in data.train if d.pmid == pmid)
        rewards = np.zeros(GROUP)
        for g in range(GROUP):
            triples = [
                (data.rows[i].chemical, data.rows[i].gene, ACTIONS[a])
                for i, a in zip(indices, actions[g], strict=True)
                if a != N_INDEX
            ]
            score = score_document(triples, document)
            rewards[g] = reward_value(score, recipe.reward, costs)
            accuracy, util = accuracy + score.accuracy, util + utility(score, costs)
        advantages = rewards - rewards.mean()
        if indices:
            onehot = np.eye(len(ACTIONS))[actions]  # (GROUP, candidates, 14)
            grad += np.einsum("g,gca,cf->af", advantages, onehot - p[None], x)
        total += rewards.sum()
    n = len(pmids) * GROUP
    return grad / n, total / n, accuracy / n, util / n


def evaluate(w: np.ndarray, data: Data, recipe: Recipe, costs: Costs) -> dict[str, float]:
    """Held-out official F1 of the most probable answers, the recipe's mean reward, and the N / none share."""
    with_n = recipe.negatives != 0
    by_pmid = data.candidates(data.test)
    rows_out, none_docs, n_answers, answers = [], 0, 0, 0
    rewards = []
    for document in data.test:
        indices = by_pmid[document.pmid]
        chosen = probabilities(w, data.x[indices], with_n).argmax(axis=1) if indices else np.array([], dtype=int)
        triples = [
            (data.rows[i].chemical, data.rows[i].gene, ACTIONS[a])
            for i, a in zip(indices, chosen, strict=True)
            if a != N_INDEX
        ]
        rows_out += [(document.pmid, *t) for t in triples]
        n_answers, answers, none_docs = (
            n_answers + int((chosen == N_INDEX).sum()),
            answers + len(chosen),
            none_docs + (not triples),
        )
        if recipe.mode == "extraction":
            rewards.append(reward_value(score_document(triples, document), recipe.reward, costs))
    if recipe.mode == "pair":
        tasks = data.tasks(data.test, recipe.negatives)
        greedy = probabilities(w, data.x[tasks], with_n).argmax(axis=1)
        rewards = [
            reward_value(score_pair(ACTIONS[a], data.rows[i].labels, with_no_relation=with_n), recipe.reward, costs)
            for i, a in zip(tasks, greedy, strict=True)
        ]
    none_share = n_answers / max(answers, 1) if recipe.mode == "pair" else none_docs / max(len(data.test), 1)
    return {
        F1_KEY: official_f1(data.test, rows_out),
        REWARD_KEY: float(np.mean(rewards)),
        NONE_KEY: none_share,
    }


def train(
    data: Data, w0: np.ndarray, recipe: Recipe, seed: int, settings: Settings, out: Path, costs: Costs
) -> dict[str, Any]:
    """One GRPO run; writes ``out/metrics.jsonl`` and returns its first evaluation and the mean of its last
    quarter of evaluations (``TAIL``: one held-out evaluation of about 100 abstracts is noisy)."""
    rng = np.random.default_rng(seed)
    w, m, v = w0.copy(), np.zeros_like(w0), np.zeros_like(w0)
    tasks = data.tasks(data.train, recipe.negatives) if recipe.mode == "pair" else []
    by_pmid = data.candidates(data.train) if recipe.mode == "extraction" else {}
    out.mkdir(parents=True, exist_ok=True)
    evals = []
    start = time.time()
    with (out / "metrics.jsonl").open("w", encoding="utf-8") as log:
        for step in range(settings.steps + 1):
            line: dict[str, Any] = {"step": step, "time": round(time.time() - start, 3)}
            if step % settings.eval_every == 0 or step == settings.steps:
                evals.append({"step": step, **evaluate(w, data, recipe, costs)})
                line.update(evals[-1])
            if step < settings.steps:
                if recipe.mode == "pair":
                    grad, reward, accuracy, util = pair_step(w, data, recipe, costs, tasks, settings, rng)
                else:
                    grad, reward, accuracy, util = extraction_step(w, data, recipe, costs, by_pmid, settings, rng)
                m = 0.9 * m + 0.1 * grad
                v = 0.999 * v + 0.001 * grad**2
                w += settings.lr * (m / (1 - 0.9 ** (step + 1))) / (np.sqrt(v / (1 - 0.999 ** (step + 1))) + 1e-8)
                line.update(
                    {
                        f"{AGENT}/reward/mean": reward,
                        f"{AGENT}/rewards/accuracy/mean": accuracy,
                        f"{AGENT}/rewards/utility/mean": util,
                    }
                )
            log.write(json.dumps(line) + "\n")
    tail = evals[-max(1, len(evals) // TAIL) :]
    last = {key: float(np.mean([e[key] for e in tail])) for key in evals[-1] if key != "step"}
    return {"recipe": recipe.name, "seed": seed, "first": evals[0], "last": last | {"from_step": tail[0]["step"]}}


def summarise(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    table = []
    for recipe in RECIPES:
        runs = [r for r in results if r["recipe"] == recipe.name]
        if not runs:
            continue
        f1 = np.array([r["last"][F1_KEY] for r in runs])
        none = np.array([r["last"][NONE_KEY] for r in runs])
        table.append(
            {
                "recipe": recipe.name,
                "seeds": len(runs),
                "start_f1": runs[0]["first"][F1_KEY],
                "start_none": runs[0]["first"][NONE_KEY],
                "f1_mean": float(f1.mean()),
                "f1_sd": float(f1.std(ddof=1)) if len(f1) > 1 else 0.0,
                "f1_min": float(f1.min()),
                "f1_max": float(f1.max()),
                "none_mean": float(none.mean()),
                "reward_mean": float(np.mean([r["last"][REWARD_KEY] for r in runs])),
            }
        )
    return table


COMPARISONS = (
    ("pair-utility-all", "pair-accuracy-all"),
    ("pair-utility-all", "pair-accuracy-neg0"),
    ("extraction-utility", "extraction-accuracy"),
)


def comparisons(table: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per pair of recipes: the difference of their mean end F1, and whether their seeds' ranges are disjoint (the
    sandbox separates the two rewards beyond the seed spread)."""
    rows = {t["recipe"]: t for t in table}
    out = []
    for a, b in COMPARISONS:
        if a in rows and b in rows:
            x, y = rows[a], rows[b]
            separated = x["f1_min"] > y["f1_max"] or y["f1_min"] > x["f1_max"]
            out.append({"a": a, "b": b, "difference": x["f1_mean"] - y["f1_mean"], "separated": separated})
    return out


def format_summary(table: list[dict[str, Any]]) -> str:
    out = [
        f"{'recipe':<22}{'seeds':>6}{'F1 start':>10}{'F1 end (mean +- sd, min-max)':>34}"
        f"{'N/none start':>14}{'N/none end':>12}"
    ]
    for t in table:
        spread = f"{t['f1_mean']:.3f} +- {t['f1_sd']:.3f} ({t['f1_min']:.3f}-{t['f1_max']:.3f})"
        out.append(
            f"{t['recipe']:<22}{t['seeds']:>6}{t['start_f1']:>10.3f}{spread:>34}{t['start_none']:>14.3f}{t['none_mean']:>12.3f}"
        )
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.rl_sim", description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-path", required=True, help="a data file or TSV directory drugprot loads")
    parser.add_argument("--out", required=True, help="directory for one prime-rl style run directory per recipe/seed")
    parser.add_argument("--seeds", type=positive_int, default=6)
    parser.add_argument("--steps", type=positive_int, default=Settings.steps)
    parser.add_argument("--eval-every", type=positive_int, default=Settings.eval_every)
    parser.add_argument("--recipes", nargs="+", choices=[r.name for r in RECIPES], default=[r.name for r in RECIPES])
    parser.add_argument("--smoke", action="store_true", help="a few steps, one seed: a test-sized run")
    add_overwrite(parser)
    args = parser.parse_args(argv)
    settings = Settings(steps=4, eval_every=2) if args.smoke else Settings(steps=args.steps, eval_every=args.eval_every)
    seeds = 1 if args.smoke else args.seeds
    runs = [f"{recipe.name}-seed{seed}" for recipe in RECIPES if recipe.name in args.recipes for seed in range(seeds)]
    check_run_folders(parser.prog, "--out", args.out, runs, inputs=[args.data_path], overwrite=args.overwrite)
    what = "the RL sandbox"
    documents = load_data(parser.prog, args.data_path, min_abstracts=2, relations=True, what=what)
    check_held_out(parser.prog, args.data_path, documents, what=what)
    with too_small(parser.prog, what):
        data = prepare(documents)
        w0, tau = warm_start(data)
    costs = Costs()
    out = Path(args.out)
    results = [
        train(data, w0, recipe, seed, settings, out / f"{recipe.name}-seed{seed}", costs)
        for recipe in RECIPES
        if recipe.name in args.recipes
        for seed in range(seeds)
    ]
    table = summarise(results)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu = usage.ru_utime + usage.ru_stime
    print(format_summary(table))
    for c in comparisons(table):
        verdict = "separated beyond the seed spread" if c["separated"] else "NOT separated: the seed ranges overlap"
        print(f"{c['a']} - {c['b']}: end F1 {c['difference']:+.3f}, {verdict}")
    print(f"warm start temperature {tau:.3f}; costs fp={costs.fp:g} fn={costs.fn:g}; {cpu:.1f} CPU seconds")
    summary = {
        "settings": vars(settings) | {"seeds": seeds},
        "temperature": tau,
        "cpu_seconds": cpu,
        "table": table,
        "comparisons": comparisons(table),
        "runs": results,
    }
    out.mkdir(parents=True, exist_ok=True)  # checked writable before any work (check_run_folders)
    write_json(summary, out / "summary.json", indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
