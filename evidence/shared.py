"""Shared pieces of the alignment evidence (``evidence.alignment``, ``evidence.decision``, ``evidence.rl_sim``).

* ``reward_value``: the one place these scripts turn a scored reply into a reward: the environment's own
  ``drugprot.core.rewards.Reward`` for the ``reward`` knob value and the costs (its preset weights: ``accuracy`` =
  accuracy 1, utility 0, format 0.1; ``utility`` = accuracy 0, utility 1, format 0.1).
* replies rendered exactly as a model would write them (``pair_reply``, ``extraction_reply``), so every reward
  comes from the environment's own scoring path (``drugprot.modes.task.score_task``);
* the official micro-F1 of a set of predicted (pmid, chemical, gene, type) rows (``official_f1``);
* candidate pairs with their features (``PairRow``, ``pair_rows``): the lexical baseline's cues by region, the
  distance between the mentions, entity types; the policy features of the decision analysis and the sandbox;
* deterministic train / held-out splits by PMID (``split_by_pmid``, one per ``split`` number) and training folds
  inside a split's train part (``folds``), so constants are chosen on training abstracts only;
* a second policy class's features (``word_features``: hashed words between and around the mentions), to check
  that a ranking of recipes does not depend on the first class's hand-made cues;
* the F1-calibrated cost (``calibrated_fp``) and a one-thread BLAS guard (``single_thread``).
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np

from bench.common import fail
from drugprot.core.candidates import candidate_pairs, document_sentences, sentence_index
from drugprot.core.extraction import answer_block, gold_of
from drugprot.core.labels import NO_RELATION, RELATION_NAMES
from drugprot.core.metrics import official_pairs, score_relations
from drugprot.core.rewards import Costs, Reward
from drugprot.core.schema import Document, Entity
from drugprot.core.scoring import ExtractionScore, Score
from drugprot.core.sources import load_documents
from drugprot.core.tasks import positive_pairs
from drugprot.evaluation.baselines import CUES, BaselineAnswer, lexical_label, reply_text, window_after, window_before
from drugprot.modes.task import score_task

REWARDS: Final = ("accuracy", "utility")
"""The two values of the ``reward`` knob the evidence compares: today's (accuracy) and the aligned one (utility)."""
ACTIONS: Final = (*RELATION_NAMES, NO_RELATION.name)
"""The 14 pair-mode answers, in letter order: the 13 types, then NO-RELATION (index 13)."""
N_INDEX: Final = len(RELATION_NAMES)

Row = tuple[str, str, str, str]


def reward_value(score: Score | ExtractionScore, kind: str, costs: Costs) -> float:
    """The reward RL would receive for a scored reply under the ``reward`` knob value ``kind``."""
    return Reward(kind, costs).value(score)


def pair_reply(label: str) -> str:
    """A well-formed pair-mode reply answering ``label`` (an official name or NO-RELATION)."""
    return reply_text(BaselineAnswer(label, "the sandbox policy's answer"))


def extraction_reply(triples: Iterable[tuple[str, str, str]]) -> str:
    """A well-formed extraction reply listing ``triples`` (``none`` when empty)."""
    return "<think>the sandbox policy's answer.</think>\n" + answer_block(triples)


def score_pair(label: str, gold: Sequence[str], *, with_no_relation: bool) -> Score:
    """``label`` rendered as a reply and scored against a pair's gold labels by the environment's scorer."""
    score = score_task(pair_reply(label), None, {"labels": list(gold), "with_no_relation": with_no_relation})
    assert isinstance(score, Score)
    return score


def score_document(triples: Iterable[tuple[str, str, str]], document: Document) -> ExtractionScore:
    """``triples`` rendered as an extraction reply and scored against ``document``'s gold."""
    gold = gold_of(document).as_record()
    score = score_task(extraction_reply(triples), None, {"extraction": gold})
    assert isinstance(score, ExtractionScore)
    return score


def gold_rows(documents: Iterable[Document]) -> list[Row]:
    return [(d.pmid, r.arg1, r.arg2, r.type) for d in documents for r in d.relations]


def official_f1(documents: Sequence[Document], predicted: Iterable[Row]) -> float:
    """The official DrugProt micro-F1 of ``predicted`` rows on ``documents`` (NO-RELATION rows ignored)."""
    return score_relations(gold_rows(documents), list(predicted), pairs=official_pairs(documents)).f1


def load(data_path: str) -> list[Document]:
    """The abstracts of a data file (any format ``drugprot`` loads)."""
    return load_documents("train", data_path, path_hint="--data-path")


def stable_unit(text: str) -> float:
    """A stable number in [0, 1) from ``text``: the scripts' only source of per-item randomness."""
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little") / 2**64


HELD_OUT = 0.3
"""The share of abstracts each PMID split holds out (``split_by_pmid``)."""


def _split_salt(split: int) -> str:
    return "split" if split == 0 else f"split{split}"


def split_by_pmid(
    documents: Sequence[Document], held_out: float = HELD_OUT, split: int = 0
) -> tuple[list[Document], list[Document]]:
    """(train, held-out) abstracts of split number ``split``: a PMID is held out when its stable hash (salted with
    the split number) falls below ``held_out``. Split 0 is the one the single-split figures used."""
    salt = _split_salt(split)
    train = [d for d in documents if stable_unit(f"{salt}:{d.pmid}") >= held_out]
    test = [d for d in documents if stable_unit(f"{salt}:{d.pmid}") < held_out]
    return train, test


def folds(documents: Sequence[Document], k: int, split: int = 0) -> list[int]:
    """The training fold (0..k-1) of each abstract of a split's train part, by a stable hash of its PMID."""
    return [min(k - 1, int(stable_unit(f"fold{split}:{d.pmid}") * k)) for d in documents]


def calibrated_fp(f1: float, fn: float = 1.0) -> float:
    """The ``fp_cost`` whose utility threshold ``fp / (1 + fp + fn)`` is ``F/2``, the F1-optimal threshold of a
    policy whose micro-F1 is ``F`` (Lipton, Elkan and Narayanaswamy 2014): ``F (1 + fn) / (2 - F)``."""
    return f1 * (1.0 + fn) / (2.0 - f1)


def spread(values: Sequence[float]) -> dict[str, float]:
    """Mean, sample sd (0 for one value), min and max of ``values``: how a figure varies over splits."""
    a = np.asarray(values, dtype=float)
    sd = float(a.std(ddof=1)) if len(a) > 1 else 0.0
    return {"mean": float(a.mean()), "sd": sd, "min": float(a.min()), "max": float(a.max()), "n": len(a)}


def corrected_test(diffs: Sequence[float], held_out: float = HELD_OUT, level: float = 0.95) -> dict[str, float]:
    """The paired t-test over splits corrected for their overlap (Nadeau and Bengio 2003): the splits share training
    abstracts, so the variance of the mean difference is ``(1/J + n_test/n_train) s^2``, not ``s^2 / J``. The mean,
    the interval at ``level`` (t with J - 1 degrees of freedom) and the two-sided p-value; with one split, no test
    (``low``/``high``/``p`` NaN)."""
    from scipy.stats import t

    a = np.asarray(diffs, dtype=float)
    j, mean = len(a), float(a.mean())
    if j < 2:
        return {"mean": mean, "low": float("nan"), "high": float("nan"), "p": float("nan"), "n": j}
    se = float(np.sqrt((1 / j + held_out / (1 - held_out)) * a.var(ddof=1)))
    if se == 0:
        return {"mean": mean, "low": mean, "high": mean, "p": 1.0 if mean == 0 else 0.0, "n": j}
    half = float(t.ppf(0.5 + level / 2, j - 1)) * se
    return {"mean": mean, "low": mean - half, "high": mean + half, "p": float(2 * t.sf(abs(mean) / se, j - 1)), "n": j}


def show(s: dict[str, float], digits: int = 3) -> str:
    """``mean +- sd (min-max)`` of a ``spread``."""
    return f"{s['mean']:.{digits}f} +- {s['sd']:.{digits}f} ({s['min']:.{digits}f}-{s['max']:.{digits}f})"


def single_thread() -> object:
    """A context in which numpy / scikit-learn use one BLAS thread: on a shared 2-core machine their default
    thread pools spin and cost 20x the CPU of the work itself (a 0.4 s regression fit measured 10 s)."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1)


# ------------------------------------------------------------------------------------------------ features

_CUE_LABELS: Final = tuple(dict.fromkeys(label for _, label in CUES))
_CUE = re.compile("|".join(f"(?P<c{i}>{pattern})" for i, (pattern, _) in enumerate(CUES)), re.IGNORECASE)
_REGIONS: Final = ("between", "after", "before")
_LEXICAL: Final = (*_CUE_LABELS, NO_RELATION.name)
FEATURES: Final = (
    "bias",
    *(f"cue_{region}={label}" for region in _REGIONS for label in _CUE_LABELS),
    *(f"lexical={label}" for label in _LEXICAL),
    "log_gap",
    "gap<20",
    "gap<60",
    "mentions_between",
    "cues_between",
    "chemical_first",
    "gene_y",
    "overlap",
    "same_sentence",
    "log_pairs_in_sentence",
)
"""The policy's features of one (chemical, gene) pair, in column order."""
_COLUMN: Final = {name: i for i, name in enumerate(FEATURES)}


def _nearest_cue(text: str, last: bool) -> str | None:
    found = [m for m in _CUE.finditer(text)]
    if not found:
        return None
    match = found[-1] if last else found[0]
    index = int(next(k for k, v in match.groupdict().items() if v is not None)[1:])
    return CUES[index][1]


def features(document: Document, chemical: Entity, gene: Entity, sentence_pairs: int, same_sentence: bool) -> list:
    """The feature vector (``FEATURES`` order) of one mention pair of ``document``."""
    x = [0.0] * len(FEATURES)
    x[_COLUMN["bias"]] = 1.0
    text = document.text
    first, second = sorted(((chemical.start, chemical.end), (gene.start, gene.end)))
    between = text[first[1] : second[0]] if first[1] < second[0] else ""
    regions = {
        "between": _nearest_cue(between, last=gene.start == second[0]),
        "after": _nearest_cue(window_after(text, second[1]), last=False),
        "before": _nearest_cue(window_before(text, first[0]), last=True),
    }
    for region, label in regions.items():
        if label is not None:
            x[_COLUMN[f"cue_{region}={label}"]] = 1.0
    spans = (chemical.start, chemical.end), (gene.start, gene.end)
    lexical = lexical_label(text, *spans, with_no_relation=True).label
    x[_COLUMN[f"lexical={lexical}"]] = 1.0
    gap = max(0, second[0] - first[1])
    x[_COLUMN["log_gap"]] = math.log1p(gap) / 5.0
    x[_COLUMN["gap<20"]] = float(gap < 20)
    x[_COLUMN["gap<60"]] = float(gap < 60)
    inside = sum(1 for e in document.entities if first[1] <= e.start and e.end <= second[0])
    x[_COLUMN["mentions_between"]] = math.log1p(inside)
    x[_COLUMN["cues_between"]] = math.log1p(sum(1 for _ in _CUE.finditer(between)))
    x[_COLUMN["chemical_first"]] = float(chemical.start <= gene.start)
    x[_COLUMN["gene_y"]] = float(gene.type == "GENE-Y")
    x[_COLUMN["overlap"]] = float(chemical.start < gene.end and gene.start < chemical.end)
    x[_COLUMN["same_sentence"]] = float(same_sentence)
    x[_COLUMN["log_pairs_in_sentence"]] = math.log1p(sentence_pairs) / 3.0
    return x


@dataclass(frozen=True, slots=True)
class PairRow:
    """One (chemical, gene) mention pair of an abstract: its gold types (empty: no relation) and whether it is a
    same-sentence candidate (what extraction replies and ``negatives="all"`` cover)."""

    document: Document
    chemical: str
    gene: str
    gold: tuple[str, ...]
    candidate: bool

    @property
    def labels(self) -> tuple[str, ...]:
        """The pair task's gold labels (``("NO-RELATION",)`` for a negative)."""
        return self.gold or (NO_RELATION.name,)


def pair_rows(documents: Iterable[Document]) -> tuple[list[PairRow], np.ndarray]:
    """Every same-sentence candidate pair and every gold pair of ``documents`` (candidates first, per abstract), and
    their feature matrix (one row per pair, ``FEATURES`` columns)."""
    rows: list[PairRow] = []
    matrix: list[list[float]] = []
    for document in documents:
        entities = {e.id: e for e in document.entities}
        gold = positive_pairs(document)
        candidates = candidate_pairs(document)
        spans = document_sentences(document)
        per_sentence: dict[int, int] = {}
        for chemical, _ in candidates:
            k = sentence_index(spans, entities[chemical].start)
            per_sentence[k] = per_sentence.get(k, 0) + 1
        listed = set(candidates)
        for pair in [*candidates, *(p for p in gold if p not in listed)]:
            chemical, gene = entities[pair[0]], entities[pair[1]]
            in_candidates = pair in listed
            count = per_sentence.get(sentence_index(spans, chemical.start), 0) if in_candidates else 0
            rows.append(PairRow(document, pair[0], pair[1], gold.get(pair, ()), in_candidates))
            matrix.append(features(document, chemical, gene, count, in_candidates))
    return rows, np.asarray(matrix, dtype=np.float64).reshape(len(rows), len(FEATURES))


WORD_BUCKETS: Final = 128
"""Hashed word buckets per region of the second policy class (``word_features``)."""
_WORD = re.compile(r"[a-z][a-z-]{2,}")
WORD_FEATURES: Final = (
    "bias",
    *(f"{region}#{b}" for region in ("between", "around") for b in range(WORD_BUCKETS)),
    "log_gap",
    "chemical_first",
    "same_sentence",
)
"""The second policy class's features: no cue list, only which words occur between the mentions and within the
baseline's window around them (``crc32`` buckets), the distance, the order and whether the pair shares a sentence."""


def _buckets(text: str) -> set[int]:
    return {zlib.crc32(w.encode()) % WORD_BUCKETS for w in _WORD.findall(text.lower())}


def word_features(rows: Sequence[PairRow]) -> np.ndarray:
    """The ``WORD_FEATURES`` matrix of ``rows`` (one row per pair)."""
    matrix = np.zeros((len(rows), len(WORD_FEATURES)))
    for i, row in enumerate(rows):
        entities = {e.id: e for e in row.document.entities}
        chemical, gene = entities[row.chemical], entities[row.gene]
        text = row.document.text
        first, second = sorted(((chemical.start, chemical.end), (gene.start, gene.end)))
        between = text[first[1] : second[0]] if first[1] < second[0] else ""
        matrix[i, 0] = 1.0
        for b in _buckets(between):
            matrix[i, 1 + b] = 1.0
        for b in _buckets(window_before(text, first[0]) + " " + window_after(text, second[1])):
            matrix[i, 1 + WORD_BUCKETS + b] = 1.0
        matrix[i, -3] = math.log1p(max(0, second[0] - first[1])) / 5.0
        matrix[i, -2] = float(chemical.start <= gene.start)
        matrix[i, -1] = float(row.candidate)
    return matrix


POLICY_CLASSES: Final = ("cues", "words")
"""The stand-in policy classes: log-linear over ``FEATURES`` (the lexical baseline's cues) or ``WORD_FEATURES``."""


def class_matrix(policy_class: str, rows: Sequence[PairRow], cues: np.ndarray) -> np.ndarray:
    """The feature matrix of ``rows`` for ``policy_class`` (``cues`` is ``pair_rows``'s own matrix)."""
    return cues if policy_class == "cues" else word_features(rows)


def target_index(row: PairRow) -> int:
    """The class index (``ACTIONS``) a classifier learns for ``row``: its first gold type, or N."""
    return ACTIONS.index(row.gold[0]) if row.gold else N_INDEX


def check_held_out(prog: str, data_path: str | os.PathLike[str], documents: Sequence[Document], *, what: str) -> None:
    """Exit 2 with one line unless ``split_by_pmid`` gives ``documents`` a training part with a gold
    relation and a held-out part: an analysis that fits on the one and scores on the other needs both."""
    train, held_out = split_by_pmid(documents)
    if not held_out or not any(document.relations for document in train):
        fail(
            prog,
            f"--data-path {data_path}: too small for {what}: its {len(documents)} abstracts split into {len(train)} "
            f"training abstracts ({sum(len(d.relations) for d in train)} gold relations) and {len(held_out)} held-out "
            "ones, and it needs both, with gold relations to fit on; pass more abstracts",
        )


def check_splits(prog: str, splits: int, documents: Sequence[Document], *, what: str) -> None:
    """Exit 2 with one line when ``splits`` is more PMID splits than ``documents`` has abstracts: beyond that, splits
    repeat the same few held-out sets and only cost time (and a program that names a folder per split, memory),
    so it is refused before any work."""
    if splits > len(documents):
        fail(
            prog,
            f"--splits {splits:,}: more PMID splits than the data's {len(documents):,} abstracts for {what}; pass "
            f"--splits {len(documents):,} or fewer",
        )
