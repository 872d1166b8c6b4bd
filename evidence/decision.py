"""``python -m evidence.decision --data-path FILE``: the decisions each reward asks for, and their official micro-F1,
over many PMID splits, every constant chosen on the training abstracts of its split.

A calibrated stand-in classifier (multinomial softmax regression, scikit-learn) over one of two policy classes'
features (``evidence.shared.POLICY_CLASSES``: the lexical baseline's cues by region, distances and entity types; or
hashed words between and around the mentions) is fit on the train abstracts of a PMID split
(``evidence.shared.split_by_pmid``: 70 % train, ``--splits`` splits) and gives, for every same-sentence candidate pair
of the held-out abstracts, a probability for each of the 13 types and N. For each reward the script takes the action
that maximises that reward's expected value under these probabilities and reports the held-out official micro-F1:

* pair accuracy, ``negatives="all"``: the most probable of the 14 answers (N wins unless a type is likelier);
* pair accuracy, ``negatives`` k = 1, 2: the same, after the prior shift to the k-negatives-per-positive mix the
  reward is earned on (Bayes: each class probability times its prior ratio, renormalised);
* pair accuracy, ``negatives=0``: N is never offered, so every candidate gets its most probable type;
* utility (both modes; per candidate): the most probable type when its probability exceeds
  ``fp_cost / (1 + fp_cost + fn_cost)``, else N / no line: at the default cost, at the cost whose decisions score
  best on the training folds, and at the F1-calibrated cost ``F (1 + fn) / (2 - F)`` for two operating points F
  measured on the training folds (the step-0 policy's own answers, i.e. the most probable of 14; and the best
  threshold's F1);
* extraction per-document F1: per abstract, the prefix of candidates (most probable first) that maximises the
  expected per-document F1, estimated by sampling gold from the same probabilities (200 draws).

Constants are chosen by nested cross-fitting: the train abstracts are cut into ``--folds`` PMID folds, each fold's
probabilities come from a fit on the other folds, and thresholds and costs are read off those out-of-fold decisions
only. The F1-optimal threshold on the held-out pairs themselves is printed too, labelled as the oracle (an upper
bound for any threshold rule, never a choice). Per rule: mean +- sd over splits and min-max.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import spearmanr
from sklearn.linear_model import LogisticRegression

from bench.common import add_overwrite, check_outputs, fail, load_data, too_small, write_json
from drugprot.core.metrics import official_pairs, score_relations
from drugprot.core.rewards import Costs
from drugprot.core.schema import Document
from evidence.shared import (
    ACTIONS,
    N_INDEX,
    POLICY_CLASSES,
    PairRow,
    calibrated_fp,
    check_held_out,
    check_splits,
    class_matrix,
    folds,
    gold_rows,
    official_f1,
    pair_rows,
    show,
    single_thread,
    split_by_pmid,
    spread,
    target_index,
)

FP_SWEEP = (0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.6, 0.75, 1.0)
SAMPLES = 200
SPLITS = 10
FOLDS = 3


@dataclass
class StandIn:
    """Probabilities for a set of candidate pairs (one row of ``ACTIONS`` each) and the abstracts they belong to."""

    rows: list[PairRow]
    probabilities: np.ndarray
    """(candidates, 14): every class of ``ACTIONS``; classes unseen in training have probability 0."""
    documents: list[Document]
    train_negative_share: float


def fit_predict(x_train: np.ndarray, y: np.ndarray, x_test: np.ndarray, c: float) -> np.ndarray:
    """Softmax-regression probabilities (14 columns) for ``x_test``, fit on (``x_train``, ``y``)."""
    model = LogisticRegression(C=c, max_iter=3000).fit(x_train, y)
    out = np.zeros((len(x_test), len(ACTIONS)))
    out[:, model.classes_] = model.predict_proba(x_test)
    return out


@dataclass
class Pairs:
    """Every candidate pair of the data with its feature matrix per policy class."""

    rows: list[PairRow]
    x: dict[str, np.ndarray]
    y: np.ndarray

    @classmethod
    def of(cls, documents: Sequence[Document], classes: Sequence[str] = POLICY_CLASSES) -> Pairs:
        rows, cues = pair_rows(documents)
        keep = [i for i, r in enumerate(rows) if r.candidate]
        rows = [rows[i] for i in keep]
        x = {name: class_matrix(name, rows, cues[keep]) for name in classes}
        return cls(rows, x, np.array([target_index(r) for r in rows]))

    def indices(self, documents: Sequence[Document]) -> list[int]:
        wanted = {d.pmid for d in documents}
        return [i for i, r in enumerate(self.rows) if r.document.pmid in wanted]


def fit(pairs: Pairs, policy_class: str, train: Sequence[Document], test: Sequence[Document], c: float) -> StandIn:
    """The stand-in fit on ``train``'s candidates, with probabilities for ``test``'s."""
    a, b = pairs.indices(train), pairs.indices(test)
    x = pairs.x[policy_class]
    p = fit_predict(x[a], pairs.y[a], x[b], c)
    return StandIn([pairs.rows[i] for i in b], p, list(test), float(np.mean(pairs.y[a] == N_INDEX)))


def cross_fit(pairs: Pairs, policy_class: str, train: Sequence[Document], split: int, k: int, c: float) -> StandIn:
    """Out-of-fold probabilities for the candidates of ``train``: each fold's from a fit on the other folds."""
    fold = dict(zip((d.pmid for d in train), folds(train, k, split), strict=True))
    index = pairs.indices(train)
    x = pairs.x[policy_class]
    p = np.zeros((len(index), len(ACTIONS)))
    for f in range(k):
        inside = np.array([fold[pairs.rows[i].document.pmid] == f for i in index])
        if inside.all() or not inside.any():
            continue
        chosen, rest = np.asarray(index)[inside], np.asarray(index)[~inside]
        p[inside] = fit_predict(x[rest], pairs.y[rest], x[chosen], c)
    return StandIn([pairs.rows[i] for i in index], p, list(train), float(np.mean(pairs.y[index] == N_INDEX)))


def type_accuracy(stand_in: StandIn) -> float:
    """Share of held-out gold candidate pairs whose most probable type (N excluded) is a gold type: the operating
    point Trinity-Mini's step 1 is compared with (about half of the positive pairs right)."""
    hits = [
        ACTIONS[int(np.argmax(p[:N_INDEX]))] in r.gold
        for r, p in zip(stand_in.rows, stand_in.probabilities, strict=True)
        if r.gold
    ]
    return float(np.mean(hits))


def decisions_f1(stand_in: StandIn, chosen: np.ndarray) -> float:
    """Held-out official micro-F1 of one answer index per candidate (N states nothing)."""
    rows = [
        (r.document.pmid, r.chemical, r.gene, ACTIONS[a])
        for r, a in zip(stand_in.rows, chosen, strict=True)
        if a != N_INDEX
    ]
    return official_f1(stand_in.documents, rows)


def threshold_rule(p: np.ndarray, threshold: float) -> np.ndarray:
    """The most probable type where its probability exceeds ``threshold``, else N."""
    best = np.argmax(p[:, :N_INDEX], axis=1)
    return np.where(p[np.arange(len(p)), best] > threshold, best, N_INDEX)


def prior_shift(p: np.ndarray, from_negative: float, to_negative: float) -> np.ndarray:
    """Class probabilities re-weighted from one N prior to another (Bayes' rule), renormalised."""
    weights = np.full(p.shape[1], (1 - to_negative) / (1 - from_negative))
    weights[N_INDEX] = to_negative / from_negative
    shifted = p * weights
    return shifted / shifted.sum(axis=1, keepdims=True)


def expected_f1_prefix(p: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One abstract's per-document-F1-optimal answer: the prefix of its candidates (most probable type first) whose
    expected per-document F1 under ``p`` is highest (gold drawn ``SAMPLES`` times, one class per candidate)."""
    n = len(p)
    chosen = np.full(n, N_INDEX)
    if n == 0:
        return chosen
    best = np.argmax(p[:, :N_INDEX], axis=1)
    order = np.argsort(-p[np.arange(n), best], kind="stable")
    cumulative = np.cumsum(p, axis=1)
    draws = (rng.random((SAMPLES, n, 1)) < cumulative[None]).argmax(axis=2)  # (samples, n) sampled classes
    gold = (draws != N_INDEX).sum(axis=1)  # (samples,)
    hit = draws[:, order] == best[order][None]  # (samples, n) in decision order
    tp = np.concatenate([np.zeros((SAMPLES, 1)), np.cumsum(hit, axis=1)], axis=1)  # TP of each prefix size
    k = np.arange(n + 1)[None]
    denominator = k + gold[:, None]
    f1 = np.where(denominator == 0, 1.0, 2 * tp / np.maximum(denominator, 1))
    size = int(np.argmax(f1.mean(axis=0)))
    chosen[order[:size]] = best[order[:size]]
    return chosen


def per_document_rule(stand_in: StandIn, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    chosen = np.full(len(stand_in.rows), N_INDEX)
    by_pmid: dict[str, list[int]] = {}
    for i, r in enumerate(stand_in.rows):
        by_pmid.setdefault(r.document.pmid, []).append(i)
    for indices in by_pmid.values():
        chosen[indices] = expected_f1_prefix(stand_in.probabilities[indices], rng)
    return chosen


def optimal_threshold(stand_in: StandIn) -> tuple[float, float]:
    """(threshold, held-out official F1) of the best threshold on the most probable type's probability: every
    prefix of the candidates sorted by that probability is tried (``F1 = 2TP / (stated + gold cells)``), the best
    one's F1 then recomputed by the official metric."""
    p = stand_in.probabilities
    best = np.argmax(p[:, :N_INDEX], axis=1)
    confidence = p[np.arange(len(p)), best]
    order = np.argsort(-confidence, kind="stable")
    hits = np.array([ACTIONS[best[i]] in stand_in.rows[i].gold for i in order], dtype=float)
    gold_cells = score_relations(gold_rows(stand_in.documents), [], pairs=official_pairs(stand_in.documents)).fn
    stated = np.arange(1, len(order) + 1)
    size = int(np.argmax(2 * np.cumsum(hits) / (stated + gold_cells))) + 1
    threshold = float(confidence[order[size]]) if size < len(order) else 0.0
    return threshold, decisions_f1(stand_in, threshold_rule(p, threshold))


RULES: dict[str, str] = {
    "accuracy_all": "pair accuracy, negatives=all: most probable of 14",
    "accuracy_neg1": "pair accuracy, negatives=1 (prior shift)",
    "accuracy_neg2": "pair accuracy, negatives=2 (prior shift)",
    "accuracy_neg0": "pair accuracy, negatives=0: N never offered",
    "extraction_doc_f1": "extraction per-document F1",
    "utility_default": "utility, default fp_cost",
    "utility_fp_cv": "utility, fp_cost best on train folds",
    "utility_calibrated_step0": "utility, fp = F(1+fn)/(2-F), F = step-0 F1 (train folds)",
    "utility_calibrated_best": "utility, fp = F(1+fn)/(2-F), F = best F1 (train folds)",
    "threshold_cv": "threshold best on train folds",
    "oracle": "F1-optimal threshold on the held-out pairs (oracle)",
}
"""Every decision rule: its key in the JSON and its row label."""


def split_decisions(
    pairs: Pairs, policy_class: str, documents: Sequence[Document], split: int, costs: Costs, k: int, c: float
) -> dict[str, Any]:
    """One split: constants chosen on the out-of-fold decisions of its train abstracts, F1 on its held-out ones."""
    train, test = split_by_pmid(documents, split=split)
    held = fit(pairs, policy_class, train, test, c)
    oof = cross_fit(pairs, policy_class, train, split, k, c)
    t_cv, best_cv = optimal_threshold(oof)
    step0_cv = decisions_f1(oof, np.argmax(oof.probabilities, axis=1))
    sweep_cv = [decisions_f1(oof, threshold_rule(oof.probabilities, Costs(fp, costs.fn).threshold)) for fp in FP_SWEEP]
    fp_cv = FP_SWEEP[int(np.argmax(sweep_cv))]
    choices = {
        "threshold_cv": t_cv,
        "best_f1_cv": best_cv,
        "step0_f1_cv": step0_cv,
        "fp_cv": fp_cv,
        "fp_calibrated_step0": calibrated_fp(step0_cv, costs.fn),
        "fp_calibrated_best": calibrated_fp(best_cv, costs.fn),
    }
    p = held.probabilities

    def at_cost(fp: float) -> float:
        return decisions_f1(held, threshold_rule(p, Costs(fp, costs.fn).threshold))

    shifted = {n: np.argmax(prior_shift(p, held.train_negative_share, n / (1 + n)), axis=1) for n in (1, 2)}
    f1 = {
        "accuracy_all": decisions_f1(held, np.argmax(p, axis=1)),
        "accuracy_neg1": decisions_f1(held, shifted[1]),
        "accuracy_neg2": decisions_f1(held, shifted[2]),
        "accuracy_neg0": decisions_f1(held, np.argmax(p[:, :N_INDEX], axis=1)),
        "extraction_doc_f1": decisions_f1(held, per_document_rule(held, seed=split)),
        "utility_default": at_cost(costs.fp),
        "utility_fp_cv": at_cost(fp_cv),
        "utility_calibrated_step0": at_cost(choices["fp_calibrated_step0"]),
        "utility_calibrated_best": at_cost(choices["fp_calibrated_best"]),
        "threshold_cv": decisions_f1(held, threshold_rule(p, t_cv)),
        "oracle": optimal_threshold(held)[1],
    }
    return {
        "split": split,
        "policy_class": policy_class,
        "train_documents": len(train),
        "held_out_documents": len(test),
        "held_out_candidates": len(held.rows),
        "held_out_positive_share": float(np.mean([bool(r.gold) for r in held.rows])),
        "type_accuracy": type_accuracy(held),
        "held_out_step0_f1": f1["accuracy_all"],
        "held_out_step0_fp": calibrated_fp(f1["accuracy_all"], costs.fn),
        "choices": choices,
        "f1": f1,
        "sweep": [at_cost(fp) for fp in FP_SWEEP],
    }


def summarise(runs: Sequence[dict[str, Any]], costs: Costs) -> dict[str, Any]:
    """Per rule: the spread of its held-out F1 over splits, and its paired difference to the default utility."""
    base = [r["f1"]["utility_default"] for r in runs]
    rules = {}
    for key in RULES:
        values = [r["f1"][key] for r in runs]
        diff = [v - b for v, b in zip(values, base, strict=True)]
        rules[key] = {"f1": spread(values), "minus_default": spread(diff), "beats_default": sum(d > 0 for d in diff)}
    choices = {key: spread([r["choices"][key] for r in runs]) for key in runs[0]["choices"]}
    return {
        "splits": len(runs),
        "type_accuracy": spread([r["type_accuracy"] for r in runs]),
        "held_out_step0_f1": spread([r["held_out_step0_f1"] for r in runs]),
        "held_out_step0_fp": spread([r["held_out_step0_fp"] for r in runs]),
        "rules": rules,
        "choices": choices,
        "fp_cv_chosen": [r["choices"]["fp_cv"] for r in runs],
        "sweep": [
            {"fp_cost": fp, "threshold": Costs(fp, costs.fn).threshold, "f1": spread([r["sweep"][i] for r in runs])}
            for i, fp in enumerate(FP_SWEEP)
        ],
    }


def analysis(
    documents: Sequence[Document],
    costs: Costs,
    *,
    c: float = 1.0,
    splits: int = SPLITS,
    k: int = FOLDS,
    classes: Sequence[str] = POLICY_CLASSES,
) -> dict[str, Any]:
    pairs = Pairs.of(documents, classes)
    out: dict[str, Any] = {"costs": {"fp": costs.fp, "fn": costs.fn}, "splits": splits, "folds": k, "classes": {}}
    with single_thread():
        for policy_class in classes:
            runs = [split_decisions(pairs, policy_class, documents, s, costs, k, c) for s in range(splits)]
            out["classes"][policy_class] = {"summary": summarise(runs, costs), "runs": runs}
    if len(classes) > 1:
        rules = [r for r in RULES if r != "oracle"]
        means = [[out["classes"][n]["summary"]["rules"][r]["f1"]["mean"] for r in rules] for n in classes]
        out["rank_agreement"] = float(spearmanr(means[0], means[1]).statistic)
    return out


def format_analysis(result: dict[str, Any]) -> str:
    out = [f"{result['splits']} PMID splits (70/30), constants chosen on {result['folds']} training folds of each"]
    for name, block in result["classes"].items():
        s = block["summary"]
        run0 = block["runs"][0]
        out += [
            "",
            f"policy class '{name}': {run0['train_documents']} train / {run0['held_out_documents']} held-out "
            f"abstracts on split 0; most probable type right on {show(s['type_accuracy'])} of held-out gold pairs",
            f"step-0 answers' held-out F1 {show(s['held_out_step0_f1'])} "
            f"-> calibrated fp {show(s['held_out_step0_fp'])}",
            "choices on the train folds: " + "; ".join(f"{key} {show(v)}" for key, v in s["choices"].items()),
            f"fp_cost chosen on the train folds per split: {s['fp_cv_chosen']}",
            f"{'decision (expected-reward-maximising)':<58}{'held-out F1, mean +- sd (min-max)':>36}"
            f"{'minus default utility':>36}{'splits above':>14}",
        ]
        for key, label in RULES.items():
            r = s["rules"][key]
            out.append(
                f"{label:<58}{show(r['f1']):>36}{show(r['minus_default']):>36}{r['beats_default']:>10}/{s['splits']}"
            )
        out.append(f"{'fp_cost (fn 1)':<16}{'threshold':>10}{'held-out F1':>36}")
        out += [f"{w['fp_cost']:<16g}{w['threshold']:>10.3f}{show(w['f1']):>36}" for w in s["sweep"]]
    if "rank_agreement" in result:
        out.append(f"\nSpearman of the rules' mean F1 between the two policy classes: {result['rank_agreement']:.3f}")
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evidence.decision", description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-path", required=True, help="a data file or TSV directory drugprot loads")
    parser.add_argument("--c", type=float, default=1.0, help="inverse L2 strength of the softmax regression")
    parser.add_argument("--splits", type=int, default=SPLITS, help="PMID splits (default 10)")
    parser.add_argument("--folds", type=int, default=FOLDS, help="training folds per split for the choices")
    parser.add_argument("--classes", nargs="+", choices=POLICY_CLASSES, default=list(POLICY_CLASSES))
    parser.add_argument("--quick", action="store_true", help="2 splits, 2 folds, one class: a test-sized run")
    parser.add_argument("--json", metavar="OUT", help="also write the result as JSON")
    add_overwrite(parser)
    args = parser.parse_args(argv)
    if not 0 < args.c < float("inf"):
        fail(parser.prog, f"--c must be a positive finite number (the inverse L2 strength), got {args.c}")
    for flag, value in (("--splits", args.splits), ("--folds", args.folds)):
        if value < 1:
            fail(parser.prog, f"{flag} must be a positive whole number, got {value}")
    check_outputs(parser.prog, [("--json", args.json)], inputs=[args.data_path], overwrite=args.overwrite)
    what = "the decision analysis"
    documents = load_data(parser.prog, args.data_path, min_abstracts=2, relations=True, what=what)
    splits, k, classes = (2, 2, ["cues"]) if args.quick else (args.splits, args.folds, args.classes)
    check_held_out(parser.prog, args.data_path, documents, what=what)
    check_splits(parser.prog, splits, documents, what=what)
    with too_small(parser.prog, what):
        result = analysis(documents, Costs(), c=args.c, splits=splits, k=k, classes=classes)
    print(format_analysis(result))
    if args.json:
        write_json(result, args.json, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
