"""The data side of ``evidence.rl_sim``: every pair of the corpus with its features per policy class (``Corpus``), one
split of it (``Data``: train and held-out abstracts, tasks, the environment's scores of every answer looked up per
gold-label set, memoised extraction scores, held-out official cells), the warm start and the step-0 calibration."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sklearn.linear_model import LogisticRegression

from drugprot.core.metrics import official_pairs, score_relations
from drugprot.core.rewards import Costs, Reward, false_positives
from drugprot.core.schema import Document
from drugprot.core.tasks import build_tasks
from evidence import decision
from evidence.shared import (
    ACTIONS,
    N_INDEX,
    POLICY_CLASSES,
    PairRow,
    calibrated_fp,
    class_matrix,
    gold_rows,
    pair_rows,
    score_document,
    score_pair,
    split_by_pmid,
    target_index,
)

WARM_ACCURACY = 0.53


def softmax(logits: np.ndarray) -> np.ndarray:
    z = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return z / z.sum(axis=-1, keepdims=True)


def probabilities(w: np.ndarray, x: np.ndarray, with_n: bool) -> np.ndarray:
    logits = x @ w.T
    if not with_n:
        logits[..., N_INDEX] = -np.inf
    return softmax(logits)


@dataclass
class Corpus:
    """Every pair of the data (candidates and gold pairs) with its feature matrix per policy class."""

    documents: list[Document]
    rows: list[PairRow]
    x: dict[str, np.ndarray]

    @classmethod
    def of(cls, documents: Sequence[Document], classes: Sequence[str] = POLICY_CLASSES) -> Corpus:
        rows, cues = pair_rows(documents)
        return cls(list(documents), rows, {name: class_matrix(name, rows, cues) for name in classes})


@dataclass
class Data:
    """One split of the corpus for one policy class: train and held-out abstracts, every pair with its features."""

    train: list[Document]
    test: list[Document]
    rows: list[PairRow]
    x: np.ndarray
    index: dict[tuple[str, str, str], int]
    split: int = 0
    policy_class: str = "cues"
    key: np.ndarray = field(init=False)
    """Per row, the index of its gold-label set in ``labels`` (the scores are looked up by it)."""
    labels: list[tuple[str, ...]] = field(init=False)
    _scores: dict[bool, list[list[Any]]] = field(init=False, default_factory=dict)
    _terms: dict[bool, dict[str, np.ndarray]] = field(init=False, default_factory=dict)
    _tasks: dict[tuple[Any, ...], list[int]] = field(init=False, default_factory=dict)
    _official: list[Any] = field(init=False, default_factory=list)
    _documents: dict[tuple[Any, ...], Any] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        self.labels = sorted({r.labels for r in self.rows})
        position = {labels: k for k, labels in enumerate(self.labels)}
        self.key = np.array([position[r.labels] for r in self.rows], dtype=int)

    def candidates(self, documents: Sequence[Document]) -> dict[str, list[int]]:
        """PMID -> row indices of its same-sentence candidates, for ``documents``."""
        wanted = {d.pmid for d in documents}
        out: dict[str, list[int]] = {d.pmid: [] for d in documents}
        for i, r in enumerate(self.rows):
            if r.candidate and r.document.pmid in wanted:
                out[r.document.pmid].append(i)
        return out

    def tasks(self, documents: Sequence[Document], negatives: int | str) -> list[int]:
        """Row indices of the pair tasks of ``documents`` at ``negatives`` (built once per setting)."""
        key = (tuple(d.pmid for d in documents), negatives)
        if key not in self._tasks:
            built = build_tasks(documents, negatives=negatives)
            self._tasks[key] = [self.index[(t.pmid, t.chemical.id, t.gene.id)] for t in built]
        return self._tasks[key]

    def held_out_f1(self, rows: list[tuple[str, str, str, str]]) -> Any:
        """The official cells and micro-F1 of predicted rows on the held-out abstracts (their pairs built once)."""
        if not self._official:
            self._official = [gold_rows(self.test), official_pairs(self.test)]
        return score_relations(self._official[0], rows, pairs=self._official[1])

    def document_score(self, triples: list[tuple[str, str, str]], document: Document) -> Any:
        """``score_document`` of an extraction reply listing ``triples``, memoised on the abstract and the set of
        triples (the score depends on nothing else; a sharpened policy repeats its replies)."""
        key = (document.pmid, tuple(sorted(triples)))
        if key not in self._documents:
            self._documents[key] = score_document(triples, document)
        return self._documents[key]

    def scores(self, with_n: bool) -> list[list[Any]]:
        """The environment's score of every answer (``ACTIONS``) to every gold-label set."""
        if with_n not in self._scores:
            self._scores[with_n] = [
                [score_pair(a, labels, with_no_relation=with_n) for a in ACTIONS] for labels in self.labels
            ]
        return self._scores[with_n]

    def terms(self, with_n: bool) -> dict[str, np.ndarray]:
        """(gold-label sets, 14) arrays of every answer's reward terms and official cells, from ``scores``."""
        if with_n not in self._terms:
            scores = self.scores(with_n)
            self._terms[with_n] = {
                "accuracy": np.array([[s.accuracy for s in row] for row in scores]),
                "format": np.array([[s.format for s in row] for row in scores]),
                "official_tp": np.array([[s.tp for s in row] for row in scores], dtype=float),
                "official_fp": np.array([[s.fp for s in row] for row in scores], dtype=float),
                "charged_fp": np.array([[false_positives(s) for s in row] for row in scores], dtype=float),
                "official_fn": np.array([[s.fn for s in row] for row in scores], dtype=float),
            }
            self._terms[with_n]["correct"] = self._terms[with_n]["accuracy"]
        return self._terms[with_n]

    def table(self, with_n: bool, reward: Reward | None = None, cell: str | None = None) -> np.ndarray:
        """(gold-label sets, 14): the reward of each answer under ``reward`` (``Reward.value``'s weighted sum of its
        terms, on arrays), or one official cell / ``correct``."""
        t = self.terms(with_n)
        if reward is None:
            return t[cell or "correct"]
        weights, costs = reward.weighting, reward.costs
        utility = t["official_tp"] - costs.fp * t["charged_fp"] - costs.fn * t["official_fn"]
        return weights.accuracy * t["accuracy"] + weights.utility * utility + weights.format * t["format"]


def prepare(documents: Sequence[Document], split: int = 0, policy_class: str = "cues", corpus: Corpus | None = None):
    corpus = corpus or Corpus.of(documents, [policy_class])
    train, test = split_by_pmid(corpus.documents, split=split)
    index = {(r.document.pmid, r.chemical, r.gene): i for i, r in enumerate(corpus.rows)}
    return Data(train, test, corpus.rows, corpus.x[policy_class], index, split, policy_class)


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


def step0_cost(corpus: Corpus, data: Data, costs: Costs, folds: int = 3) -> tuple[float, float, float, float]:
    """(F, fp, F*, fp*): the warm start's step-0 answers (most probable of 14) scored on out-of-fold decisions of the
    train abstracts only, and the F1-calibrated ``fp_cost`` of that F; F*, the F1 of the best threshold on the most
    probable type's probability over the same out-of-fold decisions (``decision.optimal_threshold``: the F1 the
    policy reaches at its best threshold, what ``drugprot report`` estimates from vote shares), and its cost."""
    keep = [i for i, r in enumerate(corpus.rows) if r.candidate]
    pairs = decision.Pairs(
        [corpus.rows[i] for i in keep],
        {data.policy_class: data.x[keep]},
        np.array([target_index(corpus.rows[i]) for i in keep]),
    )
    oof = decision.cross_fit(pairs, data.policy_class, data.train, data.split, folds, 1.0)
    f1 = decision.decisions_f1(oof, np.argmax(oof.probabilities, axis=1))
    best = decision.optimal_threshold(oof)[1]
    return f1, calibrated_fp(f1, costs.fn), best, calibrated_fp(best, costs.fn)


def sample(p: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One action per row of ``p`` (rows of probabilities)."""
    return (rng.random((*p.shape[:-1], 1)) < np.cumsum(p, axis=-1)).argmax(axis=-1)


def _trainable(rewards: np.ndarray) -> np.ndarray:
    """Per group (rows of ``rewards``): whether its rollouts' rewards differ (a non-zero advantage somewhere)."""
    return rewards.max(axis=-1) - rewards.min(axis=-1) > 1e-9


def scoped_means(arrays: dict[str, np.ndarray], trainable: np.ndarray, kept: np.ndarray | None = None) -> dict:
    """A step's logged means in prime-rl's two scopes (``orchestrator.py`` 697-702): over every rollout (the arrays'
    rows are groups), with ``is_trainable`` the share of groups that differ; and under ``"effective"`` over the groups
    prime-rl ships (``kept``, default ``trainable``: its zero-advantage filter drops the rest), where
    ``is_trainable`` is 1.0; ``"effective"`` is empty when no group is shipped (an empty batch)."""
    kept = trainable if kept is None else kept
    means: dict[str, Any] = {name: float(values.mean()) for name, values in arrays.items()}
    means["is_trainable"] = float(trainable.mean())
    shipped = {name: float(values[kept].mean()) for name, values in arrays.items()} if kept.any() else {}
    means["effective"] = shipped | ({"is_trainable": 1.0} if shipped else {})
    return means
