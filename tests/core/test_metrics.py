"""Tests of drugprot.core.metrics: the official DrugProt metric (against scikit-learn) and the confusion matrix."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

from drugprot.core.errors import DrugprotArgumentError
from drugprot.core.labels import NO_RELATION, RELATION_NAMES
from drugprot.core.metrics import confusion_matrix, official_pairs, prf, score_relations
from drugprot.core.schema import Document, Entity, Relation


def close(value: float, expected: Fraction | int) -> bool:
    """``value`` equals the exact fraction up to float rounding."""
    return abs(value - float(expected)) < 1e-12


# --------------------------------------------------------------------------------------------------
# The hand-made example, scored by the official scorer for real
# --------------------------------------------------------------------------------------------------
# Three abstracts. Gold entities (official order: file order):
#   100: T1 T2 CHEMICAL, T3 T4 GENE   -> combinations (T1,T3) (T1,T4) (T2,T3) (T2,T4)
#   200: T1 CHEMICAL, T2 T3 GENE      -> (T1,T2) (T1,T3)
#   300: T1 CHEMICAL, T2 GENE         -> (T1,T2); no gold relation
EX_ENTITIES = [
    ("100", "T1", "CHEMICAL"),
    ("100", "T2", "CHEMICAL"),
    ("100", "T3", "GENE"),
    ("100", "T4", "GENE"),
    ("200", "T1", "CHEMICAL"),
    ("200", "T2", "GENE"),
    ("200", "T3", "GENE"),
    ("300", "T1", "CHEMICAL"),
    ("300", "T2", "GENE"),
]
EX_PAIRS = {
    "100": [("T1", "T3"), ("T1", "T4"), ("T2", "T3"), ("T2", "T4")],
    "200": [("T1", "T2"), ("T1", "T3")],
    "300": [("T1", "T2")],
}
EX_GOLD = [
    ("100", "T1", "T3", "INHIBITOR"),
    ("100", "T1", "T3", "DIRECT-REGULATOR"),  # multi-label pair
    ("100", "T2", "T3", "ACTIVATOR"),
    ("200", "T1", "T2", "AGONIST"),
    ("200", "T1", "T3", "ANTAGONIST"),  # missed: no prediction on this pair
]
EX_PRED = [
    ("100", "T1", "T3", "INHIBITOR"),  # TP INHIBITOR (DIRECT-REGULATOR of the same pair missed: FN)
    ("100", "T1", "T3", "INHIBITOR"),  # duplicate: counts once
    ("100", "T2", "T3", "INHIBITOR"),  # wrong type: FP INHIBITOR, and ACTIVATOR is a FN
    ("100", "T1", "T4", "NO-RELATION"),  # never scored
    ("200", "T2", "T1", "AGONIST"),  # arguments swapped: still TP AGONIST
    ("300", "T1", "T2", "INHIBITOR"),  # pair with no gold relation: FP INHIBITOR
    ("999", "T1", "T2", "INHIBITOR"),  # PMID not evaluated: ignored
    ("100", "T9", "T3", "INHIBITOR"),  # unknown entity: ignored
]
# By hand: TP = 2 (INHIBITOR 100 T1-T3, AGONIST 200), FP = 2 (INHIBITOR 100 T2-T3, INHIBITOR 300),
# FN = 3 (DIRECT-REGULATOR 100 T1-T3, ACTIVATOR 100 T2-T3, ANTAGONIST 200 T1-T3).
# Micro P = 2/4 = 1/2, R = 2/5, F1 = 2*2 / (2*2 + 2 + 3) = 4/9.
# INHIBITOR: support 1, predicted 3, TP 1 -> P 1/3, R 1, F1 2/(2+2+0) = 1/2. AGONIST: 1, 1, 1.
# DIRECT-REGULATOR, ACTIVATOR, ANTAGONIST: support 1, nothing predicted -> 0, 0, 0.
# The 8 other types: no support, no prediction -> 0 (zero_division=0).
# Macro over the 13 types: P = (1/3 + 1)/13 = 4/39, R = (1 + 1)/13 = 2/13, F1 = (1/2 + 1)/13 = 3/26.
# Macro-F1 over the 5 supported types: (1/2 + 1)/5 = 3/10.
#
# The official scorer (tonifuc3m/drugprot-evaluation-library at 6b93955, Python 3.8, pandas 1.2.4,
# scikit-learn 0.24.2), run on these rows written as its TSVs, printed:
OFFICIAL_EX_PRINTED = {
    "p_DIRECT-REGULATOR": 0.0,
    "r_DIRECT-REGULATOR": 0.0,
    "f1_DIRECT-REGULATOR": 0.0,
    "p_ACTIVATOR": 0.0,
    "r_ACTIVATOR": 0.0,
    "f1_ACTIVATOR": 0.0,
    "p_INHIBITOR": 0.333,
    "r_INHIBITOR": 1.0,
    "f1_INHIBITOR": 0.5,
    "p_AGONIST": 1.0,
    "r_AGONIST": 1.0,
    "f1_AGONIST": 1.0,
    "p_ANTAGONIST": 0.0,
    "r_ANTAGONIST": 0.0,
    "f1_ANTAGONIST": 0.0,
    "p_micro": 0.5,
    "r_micro": 0.4,
    "f1_micro": 0.444,
}


def printed(scores) -> dict[str, float]:
    """Our scores in the official script's printed form: 3 decimals, per type only for gold types."""
    out = {}
    for c in scores.per_class:
        if c.support:
            out.update(
                {
                    f"p_{c.label}": round(c.precision, 3),
                    f"r_{c.label}": round(c.recall, 3),
                    f"f1_{c.label}": round(c.f1, 3),
                }
            )
    out.update(
        {"p_micro": round(scores.precision, 3), "r_micro": round(scores.recall, 3), "f1_micro": round(scores.f1, 3)}
    )
    return out


def test_hand_example_exact() -> None:
    s = score_relations(EX_GOLD, EX_PRED, pairs=EX_PAIRS)
    assert (s.tp, s.fp, s.fn) == (2, 2, 3)
    assert s.precision == 0.5 and close(s.recall, Fraction(2, 5)) and close(s.f1, Fraction(4, 9))
    c = {scores.label: scores for scores in s.per_class}
    assert (c["INHIBITOR"].support, c["INHIBITOR"].predicted, c["INHIBITOR"].tp) == (1, 3, 1)
    assert close(c["INHIBITOR"].precision, Fraction(1, 3)) and c["INHIBITOR"].recall == 1.0
    assert c["INHIBITOR"].f1 == 0.5
    assert (c["AGONIST"].precision, c["AGONIST"].recall, c["AGONIST"].f1) == (1.0, 1.0, 1.0)
    for label in ("DIRECT-REGULATOR", "ACTIVATOR", "ANTAGONIST"):
        assert (c[label].support, c[label].predicted, c[label].fn) == (1, 0, 1)
        assert (c[label].precision, c[label].recall, c[label].f1) == (0.0, 0.0, 0.0)
    assert sum(x.support for x in s.per_class) == 5
    assert [x.label for x in s.per_class] == list(RELATION_NAMES)
    assert close(s.macro_precision, Fraction(4, 39))
    assert close(s.macro_recall, Fraction(2, 13))
    assert close(s.macro_f1, Fraction(3, 26))
    assert close(s.supported_macro_f1, Fraction(3, 10))
    # NO-RELATION, PMID 999 and the unknown entity are unscored; the repeated row is a duplicate.
    assert (s.unscored_predictions, s.duplicate_predictions) == (3, 1)


def test_hand_example_equals_official_printout() -> None:
    assert printed(score_relations(EX_GOLD, EX_PRED, pairs=EX_PAIRS)) == OFFICIAL_EX_PRINTED
    # No relation of the example sits on a PMID-boundary cell, so the official layout agrees.
    assert printed(score_relations(EX_GOLD, EX_PRED, pairs=EX_PAIRS, official_layout=True)) == OFFICIAL_EX_PRINTED


def test_without_pairs_every_row_counts() -> None:
    s = score_relations(EX_GOLD, EX_PRED)
    # The swapped AGONIST row (T2, T1) is now a FP and the AGONIST gold a FN; PMID 999 and T9 rows are FPs.
    assert (s.tp, s.fp, s.fn) == (1, 5, 4)
    assert s.unscored_predictions == 1 and s.duplicate_predictions == 1


def test_official_shared_cell_quirk() -> None:
    # Two one-pair abstracts: the official layout puts both pairs in cell 0, so a prediction on the wrong
    # abstract is a hit. The official scorer printed p_micro=1.0, r_micro=1.0, f1_micro=1.0 (and
    # p/r/f1_INHIBITOR=1.0) for these files.
    pairs = {"1": [("T1", "T2")], "2": [("T1", "T2")]}
    gold = [("1", "T1", "T2", "INHIBITOR")]
    pred = [("2", "T1", "T2", "INHIBITOR")]
    official = score_relations(gold, pred, pairs=pairs, official_layout=True)
    assert (official.precision, official.recall, official.f1) == (1.0, 1.0, 1.0)
    spec = score_relations(gold, pred, pairs=pairs)
    assert (spec.tp, spec.fp, spec.fn) == (0, 1, 1)
    assert (spec.precision, spec.recall, spec.f1) == (0.0, 0.0, 0.0)


def test_official_layout_positions() -> None:
    # PMIDs in string order ("10" < "9"); a PMID without combinations is skipped; the last pair of one
    # PMID shares a cell with the first pair of the next.
    pairs = {"9": [("A", "B"), ("A", "C")], "10": [("X", "Y"), ("X", "Z")], "11": []}
    gold = [("10", "X", "Z", "SUBSTRATE"), ("9", "A", "B", "SUBSTRATE")]  # cells 1 and 1
    s = score_relations(gold, [], pairs=pairs, official_layout=True)
    assert s.fn == 1  # the two gold relations collapse into one cell
    assert score_relations(gold, [], pairs=pairs).fn == 2
    with pytest.raises(DrugprotArgumentError, match="official_layout"):
        score_relations(gold, [], official_layout=True)


def test_edge_cases_zero_division() -> None:
    empty = score_relations([], [])
    assert (empty.precision, empty.recall, empty.f1, empty.macro_f1) == (0.0, 0.0, 0.0, 0.0)
    no_pred = score_relations([("1", "T1", "T2", "INHIBITOR")], [("1", "T1", "T2", "NO-RELATION")])
    assert (no_pred.tp, no_pred.fp, no_pred.fn, no_pred.precision, no_pred.f1) == (0, 0, 1, 0.0, 0.0)
    assert score_relations([], [], zero_division=1.0).macro_f1 == 1.0
    assert prf(0, 0, 0) == (0.0, 0.0, 0.0)
    assert prf(3, 1, 2) == (0.75, 0.6, 6 / 9)
    with pytest.raises(DrugprotArgumentError, match="pmid, arg1, arg2, relation"):
        score_relations([("1", "T1", "T2")], [])  # type: ignore[list-item]


def test_multi_label_and_prefixed_ids() -> None:
    gold = [("1", "T1", "T2", "INHIBITOR"), ("1", "T1", "T2", "DIRECT-REGULATOR")]
    pred = [("1", "Arg1:T1", "Arg2:T2", "DIRECT-REGULATOR"), ("1", "T1", "T2", "INHIBITOR")]
    s = score_relations(gold, pred)
    assert (s.tp, s.fp, s.fn, s.f1) == (2, 0, 0, 1.0)
    s = score_relations(gold, pred[:1])
    assert (s.tp, s.fp, s.fn) == (1, 0, 1) and close(s.f1, Fraction(2, 3))


# --------------------------------------------------------------------------------------------------
# Equality with scikit-learn
# --------------------------------------------------------------------------------------------------


def random_rows(rng: random.Random) -> tuple[list, list]:
    """Deterministic random gold and predictions over 40 pairs, with multi-label pairs and duplicates."""
    keys = [(f"{p}", f"T{c}", f"T{g}") for p in range(4) for c in range(1, 3) for g in range(3, 8)]
    gold, pred = [], []
    for key in keys:
        for label in rng.sample(RELATION_NAMES, rng.choice([0, 0, 1, 1, 1, 2])):
            gold.append((*key, label))
        for label in rng.sample(RELATION_NAMES, rng.choice([0, 1, 1, 2])):
            pred.append((*key, label))
        if rng.random() < 0.2:
            pred.append((*key, NO_RELATION.name))
    pred += pred[:5]  # duplicates
    return gold, pred


@pytest.mark.parametrize("seed", range(5))
def test_equals_sklearn(seed: int) -> None:
    metrics = pytest.importorskip("sklearn.metrics")
    gold, pred = random_rows(random.Random(seed))
    keys = sorted({row[:3] for row in gold + pred})
    col = {label: i for i, label in enumerate(RELATION_NAMES)}
    y_true = [[0] * 13 for _ in keys]
    y_pred = [[0] * 13 for _ in keys]
    index = {key: i for i, key in enumerate(keys)}
    for rows, y in ((gold, y_true), (pred, y_pred)):
        for *key, label in rows:
            if label in col:
                y[index[tuple(key)]][col[label]] = 1
    s = score_relations(gold, pred)
    labels = list(range(13))
    for average, (p, r, f) in (
        ("micro", (s.precision, s.recall, s.f1)),
        ("macro", (s.macro_precision, s.macro_recall, s.macro_f1)),
    ):
        sp, sr, sf, _ = metrics.precision_recall_fscore_support(
            y_true, y_pred, average=average, labels=labels, zero_division=0
        )
        assert (p, r, f) == pytest.approx((sp, sr, sf), abs=1e-12)
    sp, sr, sf, support = metrics.precision_recall_fscore_support(
        y_true, y_pred, average=None, labels=labels, zero_division=0
    )
    for i, c in enumerate(s.per_class):
        assert (c.precision, c.recall, c.f1) == pytest.approx((sp[i], sr[i], sf[i]), abs=1e-12)
        assert c.support == support[i]


# --------------------------------------------------------------------------------------------------
# Items: accuracy, official rows, confusion matrix
# --------------------------------------------------------------------------------------------------

ITEM_GOLD = [
    {"INHIBITOR"},
    {"INHIBITOR", "DIRECT-REGULATOR"},
    {"INHIBITOR", "DIRECT-REGULATOR"},
    {"NO-RELATION"},
    {"AGONIST"},
    {"NO-RELATION"},
]
ITEM_PRED = ["INHIBITOR", "INHIBITOR", "ANTAGONIST", "INHIBITOR", "NO-RELATION", "NO-RELATION"]


def test_confusion_matrix_convention() -> None:
    labels = ["DIRECT-REGULATOR", "INHIBITOR", "AGONIST", "ANTAGONIST", "NO-RELATION"]
    m = confusion_matrix(ITEM_GOLD, ITEM_PRED, labels)
    assert m == [
        # predicted: DIR INH AGO ANT NO
        [0, 0, 0, 1, 0],  # gold DIRECT-REGULATOR: the wrong answer on the {DIR, INH} pair (first label)
        [0, 2, 0, 0, 0],  # gold INHIBITOR: two correct (one on the multi-label pair)
        [0, 0, 0, 0, 1],  # gold AGONIST answered NO-RELATION
        [0, 0, 0, 0, 0],
        [0, 1, 0, 0, 1],  # a negative called INHIBITOR, a negative right
    ]
    assert sum(map(sum, m)) == len(ITEM_PRED)
    assert sum(m[i][i] for i in range(len(labels))) == 3  # the trace: the 3 right answers of 6
    # The row of a wrong multi-label item follows the order of `labels`: here INHIBITOR comes first.
    other = ["AGONIST", "INHIBITOR", "DIRECT-REGULATOR", "ANTAGONIST"]
    assert confusion_matrix(ITEM_GOLD[2:3], ITEM_PRED[2:3], other) == [
        [0, 0, 0, 0],
        [0, 0, 0, 1],
        [0, 0, 0, 0],
        [0, 0, 0, 0],
    ]


def test_confusion_matrix_errors() -> None:
    with pytest.raises(DrugprotArgumentError, match="not in labels") as err:
        confusion_matrix([{"INHIBITOR"}], ["INVALID"], ["INHIBITOR"])
    assert str(err.value) == "item 0: label 'INVALID' is not in labels ['INHIBITOR']"
    assert isinstance(err.value, ValueError)  # what callers caught before the typed error
    with pytest.raises(DrugprotArgumentError, match="^item 0 has no gold label$"):
        confusion_matrix([set()], ["INHIBITOR"], ["INHIBITOR"])
    with pytest.raises(DrugprotArgumentError, match="distinct"):
        confusion_matrix([{"INHIBITOR"}], ["INHIBITOR"], ["INHIBITOR", "INHIBITOR"])
    with pytest.raises(DrugprotArgumentError, match="^expected sequences of equal length, got 1 and 0$"):
        confusion_matrix([{"INHIBITOR"}], [], ["INHIBITOR"])


def make_doc(pmid: str, entities: list[tuple[str, str]], relations: list[Relation] = ()) -> Document:
    """A document whose mentions are the words ``m<id>`` of a one-line text."""
    words = [f"m{eid}" for eid, _ in entities]
    text = " ".join(words)
    ents, pos = [], 0
    for (eid, etype), word in zip(entities, words, strict=True):
        ents.append(Entity(eid, etype, word, pos, pos + len(word)))
        pos += len(word) + 1
    return Document(pmid, text, "", text, tuple(ents), tuple(relations))


def test_official_pairs_are_chemicals_x_genes_in_entity_order() -> None:
    docs = [
        make_doc("100", [("T3", "GENE-Y"), ("T1", "CHEMICAL"), ("T4", "GENE-N"), ("T2", "CHEMICAL")]),
        make_doc("300", [("T1", "CHEMICAL"), ("T2", "GENE")]),
        make_doc("400", [("T1", "CHEMICAL")]),
    ]
    assert official_pairs(docs) == {
        "100": [("T1", "T3"), ("T1", "T4"), ("T2", "T3"), ("T2", "T4")],
        "300": [("T1", "T2")],
        "400": [],
    }
