"""The official DrugProt metric (BioCreative VII track 1), plus a confusion matrix of single answers.

``score_relations`` reproduces ``tonifuc3m/drugprot-evaluation-library`` (``src/main.py``,
``src/utils.py``, ``src/compute_metrics.py``) without pandas or scikit-learn. What the official scorer does,
and what is mirrored here:

* The unit is a (PMID, chemical, gene) pair x one of the 13 relation types: a binary indicator per cell,
  so a pair can carry several types (multi-label) and each type is scored on its own.
* Rows whose type is not one of the 13 (``NO-RELATION`` included) are dropped, in gold and predictions:
  no-relation is never scored; it is expressed by the absence of a row.
* Exact duplicate rows are dropped (``drop_duplicates``): predicting a relation twice counts once.
* Only (chemical, gene) combinations of the evaluated documents are scored (``get_chemical_gene_combinations``
  over the gold entities file): predictions for another PMID (the ``--pmids`` filter), for an unknown
  entity id, or for a chemical-chemical or gene-gene pair are silently ignored, not counted as false
  positives. A prediction with the arguments swapped (gene as Arg1) is accepted: the chemical is
  recognised by its id. This needs the documents' pairs (``pairs=``); without them every row counts and
  ``arg1`` is taken as the chemical.
* Argument ids are the text after the last ``:`` (``Arg1:T3`` -> ``T3``).
* Micro P/R/F1 pool every cell: ``P = TP / (TP + FP)``, ``R = TP / (TP + FN)``,
  ``F1 = 2TP / (2TP + FP + FN)``, 0.0 when a denominator is 0 (scikit-learn ``average='micro'``, whose
  default ``zero_division`` gives 0). Per-type P/R/F1 are the binary scores of one type's column
  (``zero_division=0``); the official script prints them, rounded to 3 decimals, only for types present in
  the gold standard, then the micro figures, also rounded to 3 decimals.

One quirk of the official script is reproduced only on request (``official_layout=True``): its
``format_relations`` advances the vector position by ``len(combinations) - 1`` instead of
``len(combinations)`` per PMID (``pos0 = pos0 + idx``), so the last (chemical, gene) combination of each PMID
(in sorted PMID order, entities in file order) shares one vector cell with the first combination of the next
PMID that has any. Their indicators are OR-ed: a relation on one matches the same type on the other, and two
gold relations of one type on them count once. With ``official_layout=True`` and the documents' pairs in the
scorer's order (``official_pairs``: document entity order, which is the order ``official_tsv.write_entities_tsv`` gives
the official script), the figures equal the official script's exactly; by default every pair is its own
cell (the metric as specified). The two differ only when a relation sits on such a boundary pair: by up
to 0.0015 micro-F1 in our runs of noisy predictions on 350 real training abstracts.

The official script recognises only the entity types ``CHEMICAL`` and ``GENE``: given the released
``GENE-Y``/``GENE-N`` entity files it finds no gene and crashes in scikit-learn ("unknown is not
supported"); ``official_tsv.write_entities_tsv`` writes files it accepts.

Macro scores (not part of the official output) follow scikit-learn ``average='macro'`` with
``labels=`` the 13 types: the unweighted mean over all 13 per-type scores, a type with no gold and no
predicted relation scoring ``zero_division`` (0.0 by default, like scikit-learn's default). So on data
where a type never occurs the macro-F1 ceiling is below 1; ``Scores.supported_macro_f1`` averages only
the types with gold support.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from drugprot.core.errors import DrugprotArgumentError
from drugprot.core.labels import NO_RELATION, RELATION_NAMES
from drugprot.core.schema import Document

RelationRow = tuple[str, str, str, str]
"""``(pmid, arg1, arg2, relation)``: arg1 the chemical mention id, arg2 the gene mention id (``T3``)."""

Pair = tuple[str, str]
_SCORED = frozenset(RELATION_NAMES)
_READABLE = _SCORED | {NO_RELATION.name}


# --------------------------------------------------------------------------------------------------
# Result records
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ClassScores:
    """Scores of one relation type (one binary column of the official scorer)."""

    label: str
    precision: float
    recall: float
    f1: float
    support: int
    """Gold relations of this type (true cells)."""
    predicted: int
    """Scored predictions of this type (predicted cells)."""
    tp: int
    fp: int
    fn: int


@dataclass(frozen=True, slots=True)
class Scores:
    """The official micro P/R/F1, macro averages over the 13 types, per-type scores and counts."""

    precision: float
    recall: float
    f1: float
    tp: int
    fp: int
    fn: int
    macro_precision: float
    macro_recall: float
    macro_f1: float
    per_class: tuple[ClassScores, ...]
    """One entry per official type, in the official order (``RELATION_NAMES``)."""
    unscored_predictions: int
    """Predicted rows not scored: a type outside the 13 (e.g. NO-RELATION), or a PMID/pair not in ``pairs``.
    """
    duplicate_predictions: int
    """Predicted rows dropped because an earlier row gave the same (pmid, chemical, gene, type)."""

    @property
    def supported_macro_f1(self) -> float:
        """Mean F1 over the types with gold support (0.0 if none has any)."""
        supported = [scores.f1 for scores in self.per_class if scores.support > 0]
        return sum(supported) / len(supported) if supported else 0.0


# --------------------------------------------------------------------------------------------------
# Scoring
# --------------------------------------------------------------------------------------------------


def _ratio(numerator: int, denominator: int, zero_division: float) -> float:
    return numerator / denominator if denominator else zero_division


def check_counts(**counts: float) -> None:
    """The rule every reader of official cells applies: TP, FP and FN are counts (or means of counts), never
    negative; a negative one would put precision, recall or F1 outside 0..1. ``check_counts(tp=3, fp=-1)``.

    Raises:
        DrugprotArgumentError: the first negative count, named (``official cell fp = -1 is negative; ...``).
    """
    for name, value in counts.items():
        if value < 0:
            shown = f"{value:g}" if isinstance(value, float) else str(value)[:40]
            raise DrugprotArgumentError(f"official cell {name} = {shown} is negative; TP, FP and FN are counts")


def prf(tp: int, fp: int, fn: int, zero_division: float = 0.0) -> tuple[float, float, float]:
    """Precision, recall and F1 from counts, scikit-learn style.

    ``F1 = 2TP / (2TP + FP + FN)`` (equal to the harmonic mean of P and R when both are defined); each value
    whose denominator is 0 is ``zero_division``.

    Raises:
        DrugprotArgumentError: a count is negative (``check_counts``).
    """
    check_counts(tp=tp, fp=fp, fn=fn)
    return (
        _ratio(tp, tp + fp, zero_division),
        _ratio(tp, tp + fn, zero_division),
        _ratio(2 * tp, 2 * tp + fp + fn, zero_division),
    )


def entity_id(arg: str) -> str:
    """The mention id of an argument field, as the official scorer reads it: the text after the last ``:``."""
    return arg.split(":")[-1]


def official_pairs(docs: Iterable[Document]) -> dict[str, list[Pair]]:
    """Every (chemical id, gene id) combination of each document, in the official scorer's order.

    Chemicals (type ``CHEMICAL``) x genes (``GENE``, ``GENE-Y``, ``GENE-N``), each in the document's entity
    order, like ``itertools.product`` over the gold entities file. This is the scorer's universe of pairs;
    pass it as ``pairs=`` to ``score_relations``. Note that the official script itself only knows the
    entity type ``GENE``: an entities file typed ``GENE-Y``/``GENE-N`` gives it no genes at all (write it
    with ``official_tsv.write_entities_tsv``, which maps gene types to ``GENE``).
    """
    out: dict[str, list[Pair]] = {}
    for doc in docs:
        chems = [e.id for e in doc.entities if e.is_chemical]
        genes = [e.id for e in doc.entities if e.is_gene]
        out[doc.pmid] = [(c, g) for c in chems for g in genes]
    return out


def _official_slots(pairs: Mapping[str, Sequence[Pair]]) -> dict[tuple[str, str, str], list[int]]:
    """(pmid, chemical, gene) -> vector positions, reproducing the official ``format_relations`` layout.

    PMIDs are taken in sorted (string) order, PMIDs without combinations are skipped, and the start
    position advances by ``len(combinations) - 1``, so consecutive PMIDs share one position.
    """
    slots: dict[tuple[str, str, str], list[int]] = {}
    pos0 = 0
    for pmid in sorted(pairs):
        combs = pairs[pmid]
        if not combs:
            continue
        for idx, (chem, gene) in enumerate(combs):
            slots.setdefault((pmid, chem, gene), []).append(pos0 + idx)
        pos0 += len(combs) - 1
    return slots


def _resolve(row: RelationRow, pairs: Mapping[str, Collection[Pair]] | None) -> tuple[str, str, str] | None:
    """The scored (pmid, chemical, gene) of a row, or None when the official scorer would ignore it."""
    pmid, arg1, arg2 = row[0], entity_id(row[1]), entity_id(row[2])
    if pairs is None:
        return (pmid, arg1, arg2)
    doc_pairs = pairs.get(pmid)
    if doc_pairs is None:
        return None
    if (arg1, arg2) in doc_pairs:
        return (pmid, arg1, arg2)
    if (arg2, arg1) in doc_pairs:  # swapped arguments: the official scorer finds the chemical by id
        return (pmid, arg2, arg1)
    return None


Cell = tuple[object, str]


def _cells(
    rows: Iterable[RelationRow],
    pairs: Mapping[str, Collection[Pair]] | None,
    slots: Mapping[tuple[str, str, str], list[int]] | None,
) -> tuple[set[Cell], int, int]:
    """Scored cells ``(pair key or slot, type)`` of some rows, with the unscored and duplicate row counts.

    A duplicate is a row whose (pmid, chemical, gene, type) was already seen (after id normalisation and
    argument swapping, like the official double ``drop_duplicates``).
    """
    cells: set[Cell] = set()
    seen: set[tuple[tuple[str, str, str], str]] = set()
    unscored = duplicates = 0
    for row in rows:
        if len(row) != 4:
            raise DrugprotArgumentError(f"a relation row must be (pmid, arg1, arg2, relation), got {row!r}")
        label = row[3]
        key = _resolve(row, pairs)
        if label not in _SCORED or key is None:
            unscored += 1
            continue
        if (key, label) in seen:
            duplicates += 1
            continue
        seen.add((key, label))
        if slots is None:
            cells.add((key, label))
        else:
            cells.update((slot, label) for slot in slots.get(key, ()))
    return cells, unscored, duplicates


def score_relations(
    gold: Iterable[RelationRow],
    predicted: Iterable[RelationRow],
    *,
    pairs: Mapping[str, Sequence[Pair]] | None = None,
    official_layout: bool = False,
    zero_division: float = 0.0,
) -> Scores:
    """Score predicted relations against gold relations with the official DrugProt metric.

    Args:
        gold: gold rows ``(pmid, arg1, arg2, relation)``; rows whose type is not one of the 13 are ignored.
        predicted: predicted rows, same shape; duplicates and ``NO-RELATION`` rows are ignored.
        pairs: the evaluated documents' (chemical id, gene id) combinations, PMID -> pairs (e.g.
            ``official_pairs(docs)``). When given, rows for other PMIDs or pairs are ignored, as the official
            scorer does, and swapped arguments are accepted; when None, every row is scored with ``arg1``
            as the chemical.
        official_layout: reproduce the official script's shared vector cell between consecutive PMIDs
            (see the module docstring); needs ``pairs`` in the official order (``official_pairs``).
        zero_division: the value of a ratio whose denominator is 0 (scikit-learn's ``zero_division``).

    Returns:
        ``Scores``: micro P/R/F1 and TP/FP/FN over all cells, macro P/R/F1 over the 13 types, per-type scores.

    Raises:
        DrugprotArgumentError: a row is not a 4-tuple, or ``official_layout`` without ``pairs``.
    """
    if official_layout and pairs is None:
        raise DrugprotArgumentError("official_layout=True needs pairs (e.g. official_pairs(docs))")
    lookup = {pmid: set(doc_pairs) for pmid, doc_pairs in pairs.items()} if pairs is not None else None
    slots = _official_slots(pairs) if official_layout and pairs is not None else None
    gold_cells, _, _ = _cells(gold, lookup, slots)
    pred_cells, unscored, duplicates = _cells(predicted, lookup, slots)

    support = Counter(label for _, label in gold_cells)
    predicted_n = Counter(label for _, label in pred_cells)
    tp_n = Counter(label for _, label in gold_cells & pred_cells)
    per_class = []
    for label in RELATION_NAMES:
        tp, fp, fn = tp_n[label], predicted_n[label] - tp_n[label], support[label] - tp_n[label]
        p, r, f = prf(tp, fp, fn, zero_division)
        per_class.append(ClassScores(label, p, r, f, support[label], predicted_n[label], tp, fp, fn))
    tp = sum(tp_n.values())
    fp, fn = len(pred_cells) - tp, len(gold_cells) - tp
    p, r, f = prf(tp, fp, fn, zero_division)
    n = len(per_class)
    return Scores(
        precision=p,
        recall=r,
        f1=f,
        tp=tp,
        fp=fp,
        fn=fn,
        macro_precision=sum(c.precision for c in per_class) / n,
        macro_recall=sum(c.recall for c in per_class) / n,
        macro_f1=sum(c.f1 for c in per_class) / n,
        per_class=tuple(per_class),
        unscored_predictions=unscored,
        duplicate_predictions=duplicates,
    )


# --------------------------------------------------------------------------------------------------
# One prediction per pair: the confusion matrix
# --------------------------------------------------------------------------------------------------


def confusion_matrix(
    gold_labels_per_item: Sequence[Collection[str]],
    predicted_per_item: Sequence[str],
    labels: Sequence[str],
) -> list[list[int]]:
    """Confusion matrix of single predictions against possibly multi-label gold: rows gold, columns predicted.

    Convention: every item adds exactly 1 to the matrix.

    * A prediction that is one of the item's gold labels is correct and counts on the diagonal of that label.
    * Otherwise it counts in column ``predicted`` of the row of the item's first gold label in ``labels``
      order (with the official order A-M then N, a wrong answer on a {DIRECT-REGULATOR, INHIBITOR} pair is
      charged to DIRECT-REGULATOR). Multi-label pairs are about 1.7% of gold pairs in the DrugProt training
      sample, so this rarely matters; it keeps the matrix integer and deterministic.

    Hence the matrix total is the number of items and its trace / total is the accuracy; row sums
    count items by (first) gold label; column sums count predictions per label.

    Args:
        gold_labels_per_item: each item's non-empty collection of gold labels.
        predicted_per_item: each item's predicted label; map invalid answers to a label of your own
            (e.g. ``"INVALID"``) and include it in ``labels``.
        labels: row and column labels, in display order, distinct.

    Returns:
        ``len(labels) x len(labels)`` counts, ``matrix[gold][predicted]``.

    Raises:
        DrugprotArgumentError: lengths differ, ``labels`` repeats a label, an item has no gold label, or a gold or
            predicted label is not in ``labels`` (the message names the item index).
    """
    _same_length(gold_labels_per_item, predicted_per_item)
    index = {label: i for i, label in enumerate(labels)}
    if len(index) != len(labels):
        raise DrugprotArgumentError(f"labels must be distinct, got {list(labels)!r}")
    matrix = [[0] * len(labels) for _ in labels]
    for item, (gold, pred) in enumerate(zip(gold_labels_per_item, predicted_per_item, strict=True)):
        if not gold:
            raise DrugprotArgumentError(f"item {item} has no gold label")
        unknown = [label for label in [*gold, pred] if label not in index]
        if unknown:
            raise DrugprotArgumentError(f"item {item}: label {unknown[0]!r} is not in labels {list(labels)!r}")
        row = index[pred] if pred in gold else min(index[label] for label in gold)
        matrix[row][index[pred]] += 1
    return matrix


def _same_length(a: Sequence[object], b: Sequence[object]) -> None:
    if len(a) != len(b):
        raise DrugprotArgumentError(f"expected sequences of equal length, got {len(a)} and {len(b)}")
