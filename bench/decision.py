"""``python -m bench.decision --data-path FILE``: the decisions each reward asks for, and their official micro-F1.

A calibrated stand-in classifier (multinomial softmax regression, scikit-learn, over ``bench.evidence.FEATURES``:
the lexical baseline's cues by region, distances, entity types) is fit on the train abstracts of a PMID split
(``bench.evidence.split_by_pmid``: 70 % train) and gives, for every same-sentence candidate pair of the held-out
abstracts, a probability for each of the 13 types and N. For each reward the script takes the action that maximises
that reward's expected value under these probabilities and reports the held-out official micro-F1 of the decisions:

* pair accuracy, ``negatives="all"``: the most probable of the 14 answers (N wins unless a type is likelier);
* pair accuracy, ``negatives`` k = 1, 2: the same, after the prior shift to the k-negatives-per-positive mix the
  reward is earned on (Bayes: each class probability times its prior ratio, renormalised);
* pair accuracy, ``negatives=0``: N is never offered, so every candidate gets its most probable type;
* utility (both modes; per candidate): the most probable type when its probability exceeds
  ``fp_cost / (1 + fp_cost + fn_cost)``, else N / no line;
* extraction per-document F1: per abstract, the prefix of candidates (most probable first) that maximises the
  expected per-document F1, estimated by sampling gold from the same probabilities (200 draws).

Next to them: the F1-optimal threshold (every threshold tried on the held-out pairs themselves, so an upper bound
for any threshold rule) and half its F1 (the F*/2 rule of Lipton, Elkan and Narayanaswamy 2014), and a sweep of
``fp_cost`` (``fn_cost`` 1) saying which costs give the F1-optimal decisions.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.linear_model import LogisticRegression

from bench.common import add_overwrite, check_held_out, check_outputs, fail, load_data, too_small, write_json
from bench.evidence import (
    ACTIONS,
    N_INDEX,
    PairRow,
    gold_rows,
    official_f1,
    pair_rows,
    split_by_pmid,
    target_index,
)
from drugprot.core.metrics import official_pairs, score_relations
from drugprot.core.rewards import Costs
from drugprot.core.schema import Document

FP_SWEEP = (0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.6, 0.75, 1.0)
MATCH = 0.005
"""An fp cost "matches" the F1-optimal decisions when its held-out F1 is within this of the optimal threshold's."""
SAMPLES = 200


@dataclass
class StandIn:
    """The fitted classifier and the held-out candidates it decides on."""

    model: LogisticRegression
    rows: list[PairRow]
    probabilities: np.ndarray
    """(held-out candidates, 14): every class of ``ACTIONS``; classes unseen in training have probability 0."""
    documents: list[Document]
    train_negative_share: float


def fit(documents: Sequence[Document], *, c: float = 1.0) -> StandIn:
    """Fit the stand-in on the train abstracts' candidate pairs; probabilities for the held-out candidates."""
    train, test = split_by_pmid(documents)
    train_rows, x_train = pair_rows(train)
    keep = [i for i, r in enumerate(train_rows) if r.candidate]
    y = np.array([target_index(train_rows[i]) for i in keep])
    model = LogisticRegression(C=c, max_iter=3000)
    model.fit(x_train[keep], y)
    test_rows, x_test = pair_rows(test)
    held = [i for i, r in enumerate(test_rows) if r.candidate]
    probabilities = np.zeros((len(held), len(ACTIONS)))
    probabilities[:, model.classes_] = model.predict_proba(x_test[held])
    return StandIn(model, [test_rows[i] for i in held], probabilities, test, float(np.mean(y == N_INDEX)))


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


def analysis(documents: Sequence[Document], costs: Costs, *, c: float = 1.0) -> dict[str, Any]:
    stand_in = fit(documents, c=c)
    p = stand_in.probabilities
    t_star, f1_star = optimal_threshold(stand_in)
    positives = np.mean([bool(r.gold) for r in stand_in.rows])
    rows = [
        ("pair accuracy, negatives=all (today)", decisions_f1(stand_in, np.argmax(p, axis=1))),
        *(
            (
                f"pair accuracy, negatives={k} (today)",
                decisions_f1(stand_in, np.argmax(prior_shift(p, stand_in.train_negative_share, k / (1 + k)), axis=1)),
            )
            for k in (1, 2)
        ),
        ("pair accuracy, negatives=0 (seed recipe)", decisions_f1(stand_in, np.argmax(p[:, :N_INDEX], axis=1))),
        ("extraction per-document F1 (today)", decisions_f1(stand_in, per_document_rule(stand_in))),
        (
            f"utility fp={costs.fp:g} fn={costs.fn:g} (t={costs.threshold:.3f}), both modes",
            decisions_f1(stand_in, threshold_rule(p, costs.threshold)),
        ),
        (f"F1-optimal threshold t={t_star:.3f} (oracle)", f1_star),
        (f"F*/2 rule t={f1_star / 2:.3f}", decisions_f1(stand_in, threshold_rule(p, f1_star / 2))),
    ]
    sweep = []
    for fp in FP_SWEEP:
        swept = Costs(fp=fp, fn=1.0)
        f1 = decisions_f1(stand_in, threshold_rule(p, swept.threshold))
        sweep.append({"fp_cost": fp, "threshold": swept.threshold, "f1": f1, "matches": f1 >= f1_star - MATCH})
    return {
        "train_documents": len(documents) - len(stand_in.documents),
        "held_out_documents": len(stand_in.documents),
        "held_out_candidates": len(stand_in.rows),
        "held_out_positive_share": float(positives),
        "type_accuracy": type_accuracy(stand_in),
        "f1_optimal": {"threshold": t_star, "f1": f1_star},
        "rewards": [{"decision": name, "f1": f1} for name, f1 in rows],
        "fp_sweep": sweep,
    }


def format_analysis(result: dict[str, Any]) -> str:
    out = [
        f"stand-in: softmax regression on {result['train_documents']} train abstracts; "
        f"{result['held_out_candidates']} candidate pairs of {result['held_out_documents']} held-out abstracts "
        f"({result['held_out_positive_share']:.1%} with a gold relation)",
        f"operating point: most probable type right on {result['type_accuracy']:.1%} of held-out gold pairs",
        "",
        f"{'expected-reward-maximising decision':<60}{'held-out official F1':>22}",
    ]
    out += [f"{r['decision']:<60}{r['f1']:>22.3f}" for r in result["rewards"]]
    out += ["", f"{'fp_cost (fn_cost 1)':<22}{'threshold':>10}{'held-out F1':>14}{'matches F1-optimal':>20}"]
    out += [
        f"{s['fp_cost']:<22g}{s['threshold']:>10.3f}{s['f1']:>14.3f}{'yes' if s['matches'] else 'no':>20}"
        for s in result["fp_sweep"]
    ]
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.decision", description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-path", required=True, help="a data file or TSV directory drugprot loads")
    parser.add_argument("--c", type=float, default=1.0, help="inverse L2 strength of the softmax regression")
    parser.add_argument("--json", metavar="OUT", help="also write the result as JSON")
    add_overwrite(parser)
    args = parser.parse_args(argv)
    if not 0 < args.c < float("inf"):
        fail(parser.prog, f"--c must be a positive finite number (the inverse L2 strength), got {args.c}")
    check_outputs(parser.prog, [("--json", args.json)], inputs=[args.data_path], overwrite=args.overwrite)
    what = "the decision analysis"
    documents = load_data(parser.prog, args.data_path, min_abstracts=2, relations=True, what=what)
    check_held_out(parser.prog, args.data_path, documents, what=what)
    with too_small(parser.prog, what):
        result = analysis(documents, Costs(), c=args.c)
    print(format_analysis(result))
    if args.json:
        write_json(result, args.json, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
