"""Tests of drugprot.core.candidates: sentence splitting, same-sentence candidate pairs, negative sampling."""

from __future__ import annotations

import random
import re

import pytest

from drugprot.core.candidates import (
    _ends_sentence,
    candidate_pairs,
    document_sentences,
    negative_pairs,
    negative_ratio,
    sample_negatives,
    sentence_index,
    split_sentences,
)
from drugprot.core.errors import DrugprotArgumentError
from drugprot.core.schema import Document, Entity, Relation

SPLIT_CASES = [
    # (id, text, expected sentences)
    ("plain", "Imatinib inhibits c-fms. It is potent.", ["Imatinib inhibits c-fms.", "It is potent."]),
    ("question", "Does X bind Y? We tested it!", ["Does X bind Y?", "We tested it!"]),
    (
        "e.g.",
        "We used agonists (e.g. Isoproterenol) in rats. Results were clear.",
        ["We used agonists (e.g. Isoproterenol) in rats.", "Results were clear."],
    ),
    ("i.e.", "Silymarin (i.e. 5 mg/kg) was given. It helped.", ["Silymarin (i.e. 5 mg/kg) was given.", "It helped."]),
    (
        "et al.",
        "As shown by Becker et al. (2004), X binds. Y binds.",
        ["As shown by Becker et al. (2004), X binds.", "Y binds."],
    ),
    (
        "vs.",
        "Clearance was lower (0.41 vs. 0.60 L). Next, we tested.",
        ["Clearance was lower (0.41 vs. 0.60 L).", "Next, we tested."],
    ),
    (
        "Fig.",
        "As shown in Fig. 2, it binds. The effect was strong.",
        ["As shown in Fig. 2, it binds.", "The effect was strong."],
    ),
    ("number ends", "The dose was 2. The effect was strong.", ["The dose was 2.", "The effect was strong."]),
    ("approx.", "We used approx. 5 mM ATP. Then it stopped.", ["We used approx. 5 mM ATP.", "Then it stopped."]),
    ("decimal", "The IC50 was 0.5 microM. It was potent.", ["The IC50 was 0.5 microM.", "It was potent."]),
    ("species", "E. coli expressed CYP3A4. H. pylori did not.", ["E. coli expressed CYP3A4.", "H. pylori did not."]),
    ("Ca(2+).", "It binds Ca(2+). The complex is stable.", ["It binds Ca(2+).", "The complex is stable."]),
    ("no space", "It binds Ca(2+).The complex is stable.", ["It binds Ca(2+).The complex is stable."]),
    ("closing paren", "(It binds Ca(2+).) The end.", ["(It binds Ca(2+).)", "The end."]),
    ("truncated", "It binds.(ABSTRACT TRUNCATED AT 250 WORDS)", ["It binds.(ABSTRACT TRUNCATED AT 250 WORDS)"]),
    (
        "lower-case names",
        "Levels rose. cAMP increased. mRNA fell. p53 was stable. siRNAs worked.",
        ["Levels rose.", "cAMP increased.", "mRNA fell.", "p53 was stable.", "siRNAs worked."],
    ),
    (
        "spelled greek",
        "It was blocked. beta 2-Adrenoceptor agonists failed. gamma-Globin rose.",
        ["It was blocked.", "beta 2-Adrenoceptor agonists failed.", "gamma-Globin rose."],
    ),
    ("greek letter", "Insulin fell. \u03b2-Cell mass fell.", ["Insulin fell.", "\u03b2-Cell mass fell."]),
    (
        "route",
        "It was given i.c.v. and i.p. in rats. Then i.v. The rats slept.",
        ["It was given i.c.v. and i.p. in rats.", "Then i.v.", "The rats slept."],
    ),
    (
        "single letter",
        "It is inhibited by protein kinase C. Upon activation, it rose.",
        ["It is inhibited by protein kinase C.", "Upon activation, it rose."],
    ),
    ("vitamin", "We gave vitamin E. Antimycin A. It failed.", ["We gave vitamin E.", "Antimycin A.", "It failed."]),
    (
        "list markers",
        "1. The drug was tested. 2. It worked. 3. DHE binds.",
        ["1. The drug was tested.", "2. It worked.", "3. DHE binds."],
    ),
    ("No.", "Compound No. 5 was active. It bound.", ["Compound No. 5 was active.", "It bound."]),
    (
        "initials",
        "Salem, M. A. E. L., Holtz, S. Basic evidence. It works.",
        ["Salem, M. A. E. L., Holtz, S. Basic evidence.", "It works."],
    ),
    ("receptor abbreviation", "It binds the MR. Eplerenone competed.", ["It binds the MR.", "Eplerenone competed."]),
    (
        "element symbols",
        "It chelates Ca. Exposure to Al. The brain. Cf. Ref. 3 and E.g. Fig. 4 differ.",
        ["It chelates Ca.", "Exposure to Al.", "The brain.", "Cf. Ref. 3 and E.g. Fig. 4 differ."],
    ),
    ("acronym", "Patients had CF. They improved.", ["Patients had CF.", "They improved."]),
    (
        "page numbers",
        "See p. 12 and No. 4. Then stop. Vitamin P. 5-HT rose.",
        ["See p. 12 and No. 4.", "Then stop.", "Vitamin P.", "5-HT rose."],
    ),
    ("comma after period", "It binds (Willd. et al., 2001). Next.", ["It binds (Willd. et al., 2001).", "Next."]),
    (
        "opening bracket",
        "It rose. (+)-Tramadol inhibits it. [3H]-spiperone binds.",
        ["It rose.", "(+)-Tramadol inhibits it.", "[3H]-spiperone binds."],
    ),
    ("unicode spaces", "It binds.\u2002The end.\u00a0Really.", ["It binds.", "The end.", "Really."]),
    ("trailing whitespace", "  It binds.   The end.  ", ["It binds.", "The end."]),
    ("empty", "   ", []),
]


@pytest.mark.parametrize(("text", "expected"), [case[1:] for case in SPLIT_CASES], ids=[c[0] for c in SPLIT_CASES])
def test_split_sentences(text: str, expected: list[str]) -> None:
    spans = split_sentences(text)
    assert [text[a:b] for a, b in spans] == expected
    # Spans are ordered, start and end on non-whitespace, and cover every non-whitespace character once.
    assert all(text[a].strip() and text[b - 1].strip() for a, b in spans)
    assert all(b1 <= a2 for (_, b1), (a2, _) in zip(spans, spans[1:], strict=False))
    covered = "".join(text[a:b] for a, b in spans)
    assert re.sub(r"\s", "", covered) == re.sub(r"\s", "", text)


def test_split_exact_spans_and_title() -> None:
    text = "Effects of Ca(2+) on PKC Imatinib is a kinase inhibitor. It binds ABL."
    title = "Effects of Ca(2+) on PKC"  # no final period
    assert split_sentences(text) == [(0, 56), (57, 70)]
    assert split_sentences(text, title_end=len(title)) == [(0, 24), (25, 56), (57, 70)]
    # A title with internal sentences is split further.
    text2 = "A novel receptor. Cloning and characterization. We cloned it."
    assert split_sentences(text2, title_end=47) == [(0, 17), (18, 47), (48, 61)]
    with pytest.raises(DrugprotArgumentError, match="title_end"):
        split_sentences(text, title_end=len(text) + 1)
    assert split_sentences(text, title_end=len(text)) == split_sentences(text)


def _reference_split(text: str, title_end: int | None = None) -> list[tuple[int, int]]:
    """The splitter's rule applied to every token in turn: what the fast ``split_sentences`` must equal."""
    regions = [(0, len(text))] if title_end is None else [(0, title_end), (title_end, len(text))]
    spans: list[tuple[int, int]] = []
    for start, end in regions:
        tokens = [(m.start() + start, m.end() + start) for m in re.finditer(r"\S+", text[start:end])]
        first = 0
        for i, (tok_start, tok_end) in enumerate(tokens):
            if i == len(tokens) - 1 or _ends_sentence(
                text[tok_start:tok_end],
                text[tokens[i + 1][0] : tokens[i + 1][1]],
                text[tokens[i - 1][0] : tokens[i - 1][1]] if i > first else "",
                i == first,
            ):
                spans.append((tokens[first][0], tok_end))
                first = i + 1
    return spans


# Tokens and separators that exercise every rule: abbreviations, initials, list markers, closers after a
# terminal, terminals inside tokens, lower-case and Greek continuations, and Unicode whitespace.
_PIECES = (
    "cells",
    "The",
    "e.g.",
    "(e.g.",
    "Fig.",
    "No.",
    "5",
    "1.",
    "al.",
    "et",
    "Ca(2+).",
    "A.",
    "J.",
    "Smith,",
    "coli",
    "beta",
    "cAMP",
    "p53",
    "mRNA.",
    ".",
    "?",
    "!",
    "x.)",
    "y.'",
    "z.\u201d",
    "(n = 5).",
    "0.5",
    ".The",
    "vs.",
    "pp.",
    "12",
    "M.",
    "A.,",
    "(J.",
    ")",
    ";",
    ",",
    "[",
    "...",
    "?!",
    "Alpha.",
    "Inhibition",
)
_SEPARATORS = (" ", " ", "", "\n", "  ", "\u00a0", "\u2009", "\t", "\x1c", "\u2028", "\u3000", "\x85")


def test_split_equals_token_by_token_rule_on_random_text() -> None:
    rng = random.Random(20261202)
    for _ in range(20_000):
        text = "".join(rng.choice(_PIECES) + rng.choice(_SEPARATORS) for _ in range(rng.randint(0, 14)))
        title_end = rng.choice([None, rng.randint(0, len(text))])
        assert split_sentences(text, title_end) == _reference_split(text, title_end), (text, title_end)


def test_sentence_index() -> None:
    spans = [(0, 10), (12, 20)]
    assert [sentence_index(spans, o) for o in (0, 9, 10, 11, 12, 25)] == [0, 0, 0, 0, 1, 1]
    assert sentence_index([], 3) == -1


# --------------------------------------------------------------------------------------------------
# Candidate pairs
# --------------------------------------------------------------------------------------------------

TITLE = "Aspirin and COX-1 in platelets"
ABSTRACT = (
    "Aspirin inhibits COX-1 and COX-2. Heme binds NADPH oxidase. Celecoxib spares "
    "platelet COX-1. Ibuprofen was tested (n = 5)."
)
TEXT = TITLE + " " + ABSTRACT


def ent(eid: str, etype: str, surface: str, nth: int = 0, offset: int = 0) -> Entity:
    """An entity on the ``nth`` occurrence of ``surface`` in TEXT, shifted by ``offset`` characters."""
    starts = [m.start() for m in re.finditer(re.escape(surface), TEXT)]
    start = starts[nth] + offset
    return Entity(eid, etype, TEXT[start : start + len(surface)], start, start + len(surface))


ENTITIES = (
    ent("T1", "CHEMICAL", "Aspirin", 0),  # title
    ent("T2", "GENE-Y", "COX-1", 0),  # title
    ent("T3", "CHEMICAL", "Aspirin", 1),  # sentence 1
    ent("T4", "GENE-Y", "COX-1", 1),  # sentence 1
    ent("T5", "GENE-Y", "COX-2", 0),  # sentence 1
    ent("T6", "CHEMICAL", "Heme", 0),  # sentence 2
    ent("T7", "CHEMICAL", "NADPH", 0),  # sentence 2, nested in T8
    ent("T8", "GENE-N", "NADPH oxidase", 0),  # sentence 2
    ent("T9", "CHEMICAL", "Celecoxib", 0),  # sentence 3
    ent("T10", "GENE", "COX-1", 2),  # sentence 3
    ent("T11", "CHEMICAL", "Ibuprofen", 0),  # sentence 4: no gene
)
RELATIONS = (
    Relation("INHIBITOR", "T3", "T4"),
    Relation("DIRECT-REGULATOR", "T3", "T4"),
    Relation("PART-OF", "T6", "T8"),
)


def document(
    entities: tuple[Entity, ...] = ENTITIES, relations: tuple[Relation, ...] = RELATIONS, pmid: str = "1"
) -> Document:
    return Document(pmid, TITLE, ABSTRACT, TEXT, entities, relations)


def test_document_sentences_title_forced() -> None:
    doc = document()
    assert [doc.text[a:b] for a, b in document_sentences(doc)] == [
        TITLE,
        "Aspirin inhibits COX-1 and COX-2.",
        "Heme binds NADPH oxidase.",
        "Celecoxib spares platelet COX-1.",
        "Ibuprofen was tested (n = 5).",
    ]


def test_candidate_pairs() -> None:
    doc = document()
    expected = [("T1", "T2"), ("T3", "T4"), ("T3", "T5"), ("T6", "T8"), ("T7", "T8"), ("T9", "T10")]
    assert candidate_pairs(doc) == expected
    assert candidate_pairs(doc, overlapping=False) == [p for p in expected if p != ("T7", "T8")]
    # Independent of the order of the entities.
    assert candidate_pairs(document(tuple(reversed(ENTITIES)))) == expected
    # Gold pairs of any type are removed; the multi-label pair once.
    assert negative_pairs(doc) == [("T1", "T2"), ("T3", "T5"), ("T7", "T8"), ("T9", "T10")]


def test_mention_crossing_a_boundary_counts_where_it_starts() -> None:
    # A gene mention spanning "COX-2. Heme" starts in sentence 1: it pairs with Aspirin, not with Heme.
    start = TEXT.index("COX-2")
    crossing = Entity("T20", "GENE-N", TEXT[start : start + 11], start, start + 11)
    doc = document((ENTITIES[2], ENTITIES[5], crossing), ())
    assert candidate_pairs(doc) == [("T3", "T20")]


def test_other_entity_types_are_ignored() -> None:
    doc = document((ENTITIES[2], ENTITIES[3], Entity("T30", "DISEASE", "platelets", 21, 30)), ())
    assert candidate_pairs(doc) == [("T3", "T4")]


# --------------------------------------------------------------------------------------------------
# Sampling
# --------------------------------------------------------------------------------------------------


def grid_document(pmid: str, chemicals: int, genes: int, gold: list[tuple[int, int]]) -> Document:
    """One sentence mentioning ``chemicals`` chemicals C<i> then ``genes`` genes G<j>."""
    words = [f"C{i}" for i in range(chemicals)] + [f"G{j}" for j in range(genes)]
    text = "Title. " + " ".join(words) + "."
    entities, pos = [], len("Title. ")
    for i, word in enumerate(words):
        entities.append(Entity(f"T{i + 1}", "CHEMICAL" if word[0] == "C" else "GENE-Y", word, pos, pos + len(word)))
        pos += len(word) + 1
    relations = tuple(Relation("INHIBITOR", f"T{c + 1}", f"T{chemicals + g + 1}") for c, g in gold)
    return Document(pmid, "Title.", text[len("Title. ") :], text, tuple(entities), relations)


DOCS = [
    grid_document("10", 10, 10, [(0, 0)]),  # 1 positive, 99 negatives
    grid_document("11", 3, 2, [(0, 0), (1, 1)]),  # 2 positives, 4 negatives
    grid_document("12", 2, 2, [(0, 0), (0, 1), (1, 0)]),  # 3 positives, 1 negative
    grid_document("13", 4, 1, []),  # no positive, 4 negatives
]


def test_sample_negatives_counts() -> None:
    for k, counts in ((0, [0, 0, 0, 0]), (1, [1, 2, 1, 1]), (2, [2, 4, 1, 2]), (3, [3, 4, 1, 3])):
        sampled = sample_negatives(DOCS, k, seed=0)
        assert [len(sampled[d.pmid]) for d in DOCS] == counts, k
        for doc in DOCS:  # a subset of the negatives, in candidate order
            pool = negative_pairs(doc)
            assert sampled[doc.pmid] == [p for p in pool if p in set(sampled[doc.pmid])]
    assert negative_ratio(DOCS, sample_negatives(DOCS, 1, seed=0)) == 5 / 6
    assert negative_ratio([], {}) == 0.0


def test_sample_negatives_deterministic() -> None:
    a = sample_negatives(DOCS, 3, seed=7)
    assert a == sample_negatives(DOCS, 3, seed=7)
    assert a["10"] != sample_negatives(DOCS, 3, seed=8)["10"]
    # Independent of the other documents and of their order.
    assert sample_negatives(list(reversed(DOCS)), 3, seed=7) == a
    assert sample_negatives(DOCS[:1], 3, seed=7)["10"] == a["10"]
    # Nested in k.
    assert set(sample_negatives(DOCS, 1, seed=7)["10"]) <= set(sample_negatives(DOCS, 2, seed=7)["10"])
    # Stable across Python versions and platforms (SHA-256 ranks, no `random`, no `hash`).
    assert sample_negatives(DOCS, 3, seed=0)["10"] == EXPECTED_SEED0


EXPECTED_SEED0 = [("T1", "T16"), ("T4", "T12"), ("T5", "T17")]


def test_negative_pairs_are_the_candidates_without_a_gold_relation() -> None:
    doc = DOCS[2]  # C0 C1 G0 G1 (T1-T4), gold (T1, T3), (T1, T4), (T2, T3)
    assert candidate_pairs(doc) == [("T1", "T3"), ("T1", "T4"), ("T2", "T3"), ("T2", "T4")]
    assert negative_pairs(doc) == [("T2", "T4")]
    assert [len(negative_pairs(d)) for d in DOCS] == [99, 4, 1, 4]


@pytest.mark.parametrize("bad", [-1, 1.5, True, "2"])
def test_sample_negatives_rejects_a_bad_count(bad: object) -> None:
    with pytest.raises(DrugprotArgumentError) as err:
        sample_negatives(DOCS, bad, seed=0)  # type: ignore[arg-type]
    assert str(err.value) == f"per_positive must be a non-negative int, got {bad!r}"
    assert isinstance(err.value, ValueError)
