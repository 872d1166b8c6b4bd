"""Extraction mode (``mode="extraction"``): one task per abstract, the ``<relations>`` answer, per-document F1.

The spec, as tests: the tasks and prompts on the fixture; a table of replies -> (accuracy, format, counts,
reasons) on two fixture abstracts; the gaming checks with their exact values on the fixture; per-document
F1 equal to the official metric (``score_relations``) on the fixture and, when ``DRUGPROT_REAL_SAMPLE`` names
the 350-abstract real training sample, on it (read only in the test run). The same mode through the v1 taskset,
the v0 rubric and a real ``vf-eval``: ``tests/envs/test_extraction.py``.
"""

from __future__ import annotations

import os
import random

import pytest

from drugprot.core import extraction
from drugprot.core.candidates import candidate_pairs
from drugprot.core.errors import DrugprotConfigError, DrugprotDataError
from drugprot.core.extraction import (
    ExtractionGold,
    ParsedExtraction,
    answer_block,
    gold_of,
    marked_sentences,
    parse_extraction,
)
from drugprot.core.labels import RELATION_LABELS, RELATION_NAMES
from drugprot.core.metrics import official_pairs, score_relations
from drugprot.core.options import TaskOptions
from drugprot.core.questions import load_questions
from drugprot.core.rewards import Reward
from drugprot.core.schema import Document, Entity
from drugprot.core.scoring import ExtractionScoreCache, score_extraction
from drugprot.core.sources import load_documents
from drugprot.core.versions import record as versions_record
from drugprot.modes.extraction.task import extraction_question
from drugprot.modes.task import score_task
from tests.fixtures import FIXTURE_JSONL

FIXTURE_VERSIONS = versions_record(TaskOptions(split="train", data_path=str(FIXTURE_JSONL), mode="extraction"))
"""What every extraction-mode rollout over the fixture's train split records next to its prediction
(``drugprot.core.versions``)."""

THINK = "<think>The abstract states how each chemical acts on each gene product.</think>\n"
REAL_SAMPLE = os.environ.get("DRUGPROT_REAL_SAMPLE")


@pytest.fixture(scope="module")
def docs() -> dict[str, Document]:
    return {d.pmid: d for d in load_documents("train", str(FIXTURE_JSONL))}


def reply(*lines: str) -> str:
    return THINK + "<relations>\n" + "\n".join(lines) + "\n</relations>"


# ------------------------------------------------------------------------------------------------ tasks


def test_one_task_per_abstract_with_its_gold() -> None:
    questions = load_questions(TaskOptions(split="train", data_path=str(FIXTURE_JSONL), mode="extraction"))
    assert all(q.mode == "extraction" and q.chemical is None and q.key == q.pmid for q in questions)
    assert [(q.key, len(q.gold.relations)) for q in questions] == [
        ("90000001", 4), ("90000002", 3), ("90000003", 2), ("90000004", 0), ("90000005", 5),
        ("90000006", 4), ("90000007", 4), ("90000008", 3), ("90000009", 3),
    ]  # fmt: skip
    first = questions[0].gold
    assert first.relations == {
        ("T1", "T2", "INHIBITOR"), ("T1", "T2", "SUBSTRATE"), ("T3", "T4", "SUBSTRATE"), ("T5", "T4", "SUBSTRATE"),
    }  # fmt: skip
    assert (first.chemicals, first.genes) == ({"T1", "T3", "T5", "T6"}, {"T2", "T4", "T7"})
    assert ExtractionGold.from_record(first.as_record()) == first
    shuffled = load_questions(
        TaskOptions(split="train", data_path=str(FIXTURE_JSONL), mode="extraction", shuffle=True, seed=3, num_tasks=3)
    )
    assert [q.key for q in shuffled] == ["90000002", "90000006", "90000007"]  # the shuffle and limit of pair mode


def test_user_prompt_marks_every_mention_one_sentence_per_line(docs: dict[str, Document]) -> None:
    """Nested mentions stay nested (a chemical inside a gene name), the title is its own line."""
    assert extraction.user_prompt(docs["90000009"]) == (
        "Abstract (PMID 90000009):\n"
        'Binding of <chemical id="T1">GABA</chemical> to the <gene id="T2"><chemical id="T3">GABA</chemical>(A) '
        "receptor</gene>\n"
        '<chemical id="T4">Diazepam</chemical> binds the <gene id="T5">benzodiazepine site</gene> and directly '
        "modulates it.\n"
        '<chemical id="T6">Bicuculline</chemical> did not affect <gene id="T7">GAT-1</gene>.\n\n'
        "List every relation between a marked chemical and a marked gene/protein of the same sentence, one per "
        "line as chemical id | gene/protein id | type, inside <relations>...</relations> "
        "(<relations>none</relations> if there is none)."
    )


def test_marking_keeps_the_text() -> None:
    """Removing the tags and joining the lines with the original whitespace gives the text back."""
    text = "Aspirin  inhibits COX-1.\tIbuprofen binds it."
    doc = Document("1", "", text, text, (
        Entity("T1", "CHEMICAL", "Aspirin", 0, 7), Entity("T2", "GENE-Y", "COX-1", 18, 23),
        Entity("T3", "CHEMICAL", "Ibuprofen", 25, 34),
    ), ())  # fmt: skip
    assert marked_sentences(doc) == (
        '<chemical id="T1">Aspirin</chemical>  inhibits <gene id="T2">COX-1</gene>.\n'
        '<chemical id="T3">Ibuprofen</chemical> binds it.'
    )


def test_system_prompt_has_every_type_with_its_description_and_the_format() -> None:
    prompt = extraction.system_prompt()
    for label in RELATION_LABELS:
        assert f"\n{label.letter}. {label.name}: {label.description}\n" in prompt
    assert "Relations only hold between a chemical and a gene/protein of the same sentence." in prompt
    assert "<relations>\nT3 | T7 | INHIBITOR\nT3 | T9 | E\n</relations>\n" in prompt
    assert prompt.endswith("If the abstract states none, answer <relations>none</relations>.")


def test_bad_knobs_and_uncitable_ids() -> None:
    with pytest.raises(DrugprotConfigError, match="unknown mode 'extract'; expected one of pair, extraction") as err:
        TaskOptions(mode="extract")  # type: ignore[arg-type]
    assert err.value.knob == "mode"
    with pytest.raises(DrugprotConfigError, match="negatives is a pair-mode knob") as err:
        TaskOptions(mode="extraction", negatives="all")
    assert err.value.knob == "negatives"
    with pytest.raises(DrugprotConfigError, match="needs mark_entities=true") as err:
        TaskOptions(mode="extraction", mark_entities=False)
    assert err.value.knob == "mark_entities"
    doc = Document("7", "", "Aspirin inhibits COX-1.", "Aspirin inhibits COX-1.", (
        Entity("T 1", "CHEMICAL", "Aspirin", 0, 7), Entity("T2", "GENE-Y", "COX-1", 17, 22)), ())  # fmt: skip
    with pytest.raises(DrugprotDataError) as data_err:
        extraction_question(doc, source="x.jsonl")
    assert str(data_err.value) == (
        "entity id 'T 1' cannot be cited in extraction mode (it holds whitespace, '|', '<', '>' or '\"'); rename it "
        '(the official ids are T1, T2, ...) or use mode "pair" (source x.jsonl, pmid 7, field entities[0].id)'
    )


# ------------------------------------------------------------------------------------------ reply table

ALL4 = ("T1 | T2 | INHIBITOR", "T1 | T2 | SUBSTRATE", "T3 | T4 | SUBSTRATE", "T5 | T4 | SUBSTRATE")
# pmid, content, reasoning -> accuracy, format, (tp, fp, fn), (malformed, unknown, wrong type, duplicate),
# invalid_reason, format_reason. 90000001's gold: T1-T2 INHIBITOR+SUBSTRATE, T3-T4 and T5-T4 SUBSTRATE.
# 90000004 has no relation.
# fmt: off
TABLE: list[tuple[str, str | None, str | None, float, float, tuple[int, int, int], tuple[int, int, int, int],
                  str | None, str | None]] = [
    ("90000001", reply(*ALL4), None, 1.0, 1.0, (4, 0, 0), (0, 0, 0, 0), None, None),
    ("90000001", reply("T1|T2|E", "t1 | T2 | K"), None, 0.4, 0.0, (1, 0, 3), (0, 1, 0, 0), None, "unknown_id"),
    ("90000001", reply("T1 | T2 | e", "T1 | T2 | k", " T3 | T4 |substrate ", "T5 | T4 | (K)"), None, 1.0, 1.0,
     (4, 0, 0), (0, 0, 0, 0), None, None),
    ("90000001", reply("T1 | T2 | E", "T3 | T4 | K"), None, 2 / 3, 1.0, (2, 0, 2), (0, 0, 0, 0), None, None),
    ("90000001", reply("T1 | T2 | E", "T1 | T2 | K", "T3 | T4 | K", "T5 | T4 | E"), None, 0.75, 1.0, (3, 1, 1),
     (0, 0, 0, 0), None, None),
    ("90000001", reply("T1 | T2 | E", "T6 | T7 | E"), None, 1 / 3, 1.0, (1, 1, 3), (0, 0, 0, 0), None, None),
    ("90000001", reply("none"), None, 0.0, 1.0, (0, 0, 4), (0, 0, 0, 0), None, None),
    ("90000001", THINK + "<relations></relations>", None, 0.0, 0.0, (0, 0, 4), (0, 0, 0, 0), None, "empty_block"),
    ("90000001", reply(*ALL4, "T1 | T2 | E. INHIBITOR"), None, 1.0, 0.0, (4, 0, 0), (0, 0, 0, 1), None,
     "duplicate_relation"),
    ("90000001", reply(*ALL4, "T9 | T2 | E"), None, 1.0, 0.0, (4, 0, 0), (0, 1, 0, 0), None, "unknown_id"),
    # two chemicals (T1, T3) are a wrong entity type; a gene id first is the same relation, here a duplicate
    ("90000001", reply(*ALL4, "T2 | T1 | E", "T1 | T3 | E"), None, 1.0, 0.0, (4, 0, 0), (0, 0, 1, 1), None,
     "wrong_entity_type"),
    # arguments swapped (gene id first): read chemical-first, scored like the official scorer scores them
    ("90000001", reply("T2 | T1 | E", "T4 | T3 | K"), None, 2 / 3, 1.0, (2, 0, 2), (0, 0, 0, 0), None, None),
    ("90000001", reply("T2 | T4 | E"), None, 0.0, 0.0, (0, 0, 4), (0, 0, 1, 0), None, "wrong_entity_type"),
    ("90000001", reply(*ALL4, "T1, T2, E", "T1 | T2 | E or K", "T3 | T4 | N", "T3 | T4 | E. SUBSTRATE",
                       "T3 | T4", "T3 | T4 | E | K", "none"), None, 1.0, 0.0, (4, 0, 0), (7, 0, 0, 0), None,
     "malformed_line"),
    ("90000001", reply("T1 | T2 | E") + "\nOn second thought:\n" + reply(*ALL4).removeprefix(THINK), None, 1.0, 0.0,
     (4, 0, 0), (0, 0, 0, 0), None, "several_relations_blocks"),
    ("90000001", "<think>x</think></think>" + reply(*ALL4).removeprefix(THINK), None, 1.0, 0.0, (4, 0, 0),
     (0, 0, 0, 0), None, "stray_think_tag"),
    ("90000001", reply(*ALL4).removeprefix(THINK), "It says so.", 1.0, 1.0, (4, 0, 0), (0, 0, 0, 0), None, None),
    # no answer: no completed reasoning, the block only inside the reasoning, no block, an unclosed block
    ("90000001", reply(*ALL4).removeprefix(THINK), None, 0.0, 0.0, (0, 0, 4), (0, 0, 0, 0),
     *["reasoning_incomplete"] * 2),
    ("90000001", "<think>" + reply(*ALL4).removeprefix(THINK), None, 0.0, 0.0, (0, 0, 4), (0, 0, 0, 0),
     *["reasoning_incomplete"] * 2),
    ("90000001", "<think><relations>\nT1 | T2 | E\n</relations></think>So that is it.", None, 0.0, 0.0, (0, 0, 4),
     (0, 0, 0, 0), *["no_relations_block"] * 2),
    ("90000001", THINK + "<relations>\nT1 | T2 | E\n", None, 0.0, 0.0, (0, 0, 4), (0, 0, 0, 0),
     *["no_relations_block"] * 2),
    ("90000001", "", None, 0.0, 0.0, (0, 0, 4), (0, 0, 0, 0), *["empty_reply"] * 2),
    # the abstract without relations: only an answer claiming nothing is right
    ("90000004", reply("none"), None, 1.0, 1.0, (0, 0, 0), (0, 0, 0, 0), None, None),
    ("90000004", THINK + "<relations>NONE</relations>", None, 1.0, 1.0, (0, 0, 0), (0, 0, 0, 0), None, None),
    ("90000004", THINK + "<relations>\n</relations>", None, 1.0, 0.0, (0, 0, 0), (0, 0, 0, 0), None, "empty_block"),
    ("90000004", reply("T1 | T2 | E"), None, 0.0, 1.0, (0, 1, 0), (0, 0, 0, 0), None, None),
    ("90000004", reply("T9 | T2 | E"), None, 0.0, 0.0, (0, 0, 0), (0, 1, 0, 0), None, "unknown_id"),
    ("90000004", reply("nothing here"), None, 0.0, 0.0, (0, 0, 0), (1, 0, 0, 0), None, "malformed_line"),
    ("90000004", THINK + "No relation.", None, 0.0, 0.0, (0, 0, 0), (0, 0, 0, 0), *["no_relations_block"] * 2),
]
# fmt: on


@pytest.mark.parametrize(("pmid", "content", "reasoning", "accuracy", "fmt", "counts", "rejected", "invalid",
                          "fmt_reason"), TABLE)  # fmt: skip
def test_reply_table(docs, pmid, content, reasoning, accuracy, fmt, counts, rejected, invalid, fmt_reason) -> None:
    score = score_extraction(content, reasoning, gold_of(docs[pmid]))
    assert score.accuracy == pytest.approx(accuracy, abs=1e-12)
    assert (score.format, (score.tp, score.fp, score.fn)) == (fmt, counts)
    assert (score.malformed, score.unknown_id, score.wrong_type, score.duplicate) == rejected
    assert (score.invalid_reason, score.format_reason) == (invalid, fmt_reason)
    assert score.answered is (invalid is None)


def test_info_record(docs: dict[str, Document]) -> None:
    score = score_extraction(reply("T1 | T2 | E", "T6 | T7 | k", "T6 | T7 | SUBSTRATE", "T2 | T1 | E", "x"), None,
                             gold_of(docs["90000001"]))  # fmt: skip
    assert score.as_info() == {
        "mode": "extraction",
        "relations": [["T1", "T2", "INHIBITOR"], ["T6", "T7", "SUBSTRATE"]],
        "tp": 1, "fp": 1, "fn": 3,
        "malformed": 1, "unknown_id": 0, "wrong_entity_type": 0, "duplicate": 2,
        "invalid_reason": None, "format_reason": "malformed_line",
    }  # fmt: skip
    assert (score.accuracy, Reward("accuracy").value(score)) == (
        1 / 3,
        21 / 64,
    )  # 2TP / (2TP + FP + FN) = 2 / 6; the reward's accuracy term on the 1/64 grid; format 0
    # utility: 1 TP, 1 FP (the swapped line is the first one again: a duplicate), 3 FNs: 1 - 0.5 - 3, the default
    assert Reward().value(score) == pytest.approx(-2.5)


def test_never_raises_and_caches(docs: dict[str, Document]) -> None:
    gold = gold_of(docs["90000001"])
    broken = score_extraction(12345, None, gold)  # type: ignore[arg-type]
    assert (broken.accuracy, broken.format, broken.format_reason) == (0.0, 0.0, "scoring_error")
    assert broken.invalid_reason.startswith("scoring_error: AttributeError")
    cache = ExtractionScoreCache(size=2)
    first = cache.score(reply(*ALL4), None, gold)
    assert cache.score(reply(*ALL4), None, gold) is first and len(cache) == 1
    other = cache.score(reply(*ALL4), None, gold_of(docs["90000004"]))
    assert other.accuracy == 0.0 and len(cache) == 2


def test_a_block_up_to_the_cap_is_read_and_a_longer_one_is_no_answer(docs: dict[str, Document]) -> None:
    """The cap bounds the work on any reply (``bench/score_bounds.py`` times the worst cases; no time asserted)."""
    line = "T1 | T2 | E\n"
    fits = line * (extraction.MAX_RELATIONS_CHARS // len(line))
    parsed = parse_extraction(THINK + "<relations>" + fits + "</relations>")
    assert parsed.lines is not None and len(parsed.lines) == len(fits) // len(line)
    over = "\n" + fits + "x" * (extraction.MAX_RELATIONS_CHARS - len(fits))  # one character over the cap
    assert len(over) == extraction.MAX_RELATIONS_CHARS + 1
    assert parse_extraction(THINK + "<relations>" + over + "</relations>") == ParsedExtraction(
        None, "relations_block_too_long", 1, False
    )
    score = score_extraction(THINK + "<relations>\n" + line * 80_000 + "</relations>", None, gold_of(docs["90000001"]))
    assert (score.accuracy, score.format, score.invalid_reason) == (0.0, 0.0, "relations_block_too_long")
    # far above the real sample's longest gold answer (908 bytes) and every pair with all 13 types (33,700)
    assert extraction.MAX_RELATIONS_CHARS >= 60 * 908 and extraction.MAX_RELATIONS_CHARS >= 33_700


@pytest.mark.parametrize(
    ("record", "detail"),
    [
        ([], "expected a mapping, got list (field extraction)"),
        ({"chemicals": ["T1"], "genes": ["T2"]}, "expected a list, got 'None' (field extraction.relations)"),
        ({"chemicals": "T1", "genes": ["T2"], "relations": []}, "expected a list of id strings, got 'T1'"),
        ({"chemicals": ["T1"], "genes": [["T2"]], "relations": []}, "expected a list of id strings, got \"[['T2']]\""),
        ({"chemicals": ["T1"], "genes": ["T2"], "relations": [["T1", "T2"]]}, "expected [chemical, gene, type]"),
        ({"chemicals": ["T1"], "genes": ["T2"], "relations": [[1, 2, 3]]}, "(field extraction.relations[0])"),
    ],
)
def test_a_malformed_gold_record_is_a_scoring_error_never_an_exception(record: object, detail: str) -> None:
    score = score_task(reply("T1 | T2 | E"), None, {"extraction": record})
    assert (score.accuracy, score.format, score.format_reason) == (0.0, 0.0, "scoring_error")
    assert score.invalid_reason.startswith("scoring_error: malformed extraction gold record (DrugprotDataError: ")
    assert detail in score.invalid_reason
    with pytest.raises(DrugprotDataError):
        ExtractionGold.from_record(record)


# -------------------------------------------------------------------------------------------- gaming

NEXT_TYPE = {name: RELATION_NAMES[(i + 1) % len(RELATION_NAMES)] for i, name in enumerate(RELATION_NAMES)}


def every_pair_every_type(doc: Document) -> list[tuple[str, str, str]]:
    return [(c, g, t) for c, g in candidate_pairs(doc) for t in RELATION_NAMES]


def every_sentence_pair_inhibitor(doc: Document) -> list[tuple[str, str, str]]:
    return [(c, g, "INHIBITOR") for c, g in candidate_pairs(doc)]


def every_pair_inhibitor(doc: Document) -> list[tuple[str, str, str]]:
    gold = gold_of(doc)
    return [(c, g, "INHIBITOR") for c in sorted(gold.chemicals) for g in sorted(gold.genes)]


def plausible(doc: Document) -> list[tuple[str, str, str]]:
    """The gold answer with one mistake per abstract: its first triple gets the next type."""
    triples = sorted(gold_of(doc).relations)
    if triples:
        triples[0] = (triples[0][0], triples[0][1], NEXT_TYPE[triples[0][2]])
    return triples


def per_doc(documents: list[Document], strategy) -> list[float]:
    return [score_extraction(THINK + answer_block(strategy(d)), None, gold_of(d)).accuracy for d in documents]


# fmt: off
@pytest.mark.parametrize(
    ("strategy", "expected", "mean"),
    [
        (every_pair_every_type, [1 / 7, 6 / 55, 4 / 93, 0.0, 5 / 48, 1 / 7, 1 / 7, 2 / 27, 6 / 55], 0.0964),
        (every_sentence_pair_inhibitor, [0.25, 0.0, 2 / 9, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], 0.0525),
        (every_pair_inhibitor, [0.125, 0.0, 1 / 9, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], 0.0262),
        (plausible, [0.75, 2 / 3, 0.5, 1.0, 0.8, 0.75, 0.75, 2 / 3, 2 / 3], 0.7278),
    ],
    ids=["every-same-sentence-pair-every-type", "every-same-sentence-pair-inhibitor", "every-pair-inhibitor",
         "plausible"],
)
# fmt: on
def test_gaming_scores_far_below_a_plausible_answer(docs, strategy, expected, mean) -> None:
    """Listing every same-sentence pair with all 13 types keeps every gold triple (recall 1) and still scores
    0.096 on average, the most frequent type (INHIBITOR) on every pair 0.026-0.053, against 0.728 for an answer
    with one wrong type per abstract. The abstract without relations scores 0 for any guess."""
    scores = per_doc(list(docs.values()), strategy)
    assert scores == pytest.approx(expected, abs=1e-12)
    assert round(sum(scores) / len(scores), 4) == mean


# ------------------------------------------------------------------------------------ official metric


def agrees_with_official(doc: Document, triples: list[tuple[str, str, str]]) -> None:
    """Per-document F1 equals the official metric on that one document (``zero_division=1``: both empty is 1)."""
    gold = gold_of(doc)
    score = score_extraction(THINK + answer_block(triples), None, gold)
    gold_rows = [(doc.pmid, r.arg1, r.arg2, r.type) for r in doc.relations]
    rows = [(doc.pmid, c, g, t) for c, g, t in triples]
    official = score_relations(gold_rows, rows, pairs=official_pairs([doc]), zero_division=1.0)
    assert (score.tp, score.fp, score.fn) == (official.tp, official.fp, official.fn), doc.pmid
    assert score.accuracy == official.f1, doc.pmid


def noisy(doc: Document, seed: int) -> list[tuple[str, str, str]]:
    """Half the gold triples, retyped at random one time in three, plus random same-sentence guesses."""
    rng = random.Random(f"{seed}:{doc.pmid}")
    kept = [(c, g, rng.choice(RELATION_NAMES) if rng.random() < 1 / 3 else t)
            for c, g, t in sorted(gold_of(doc).relations) if rng.random() < 0.5]  # fmt: skip
    guesses = [(c, g, rng.choice(RELATION_NAMES)) for c, g in candidate_pairs(doc) if rng.random() < 0.3]
    return list(dict.fromkeys(kept + guesses))


def gold_answer(doc: Document) -> list[tuple[str, str, str]]:
    return sorted(gold_of(doc).relations)


def swapped(triples: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    """Every other line with its arguments swapped (gene id first), as the official scorer accepts them."""
    return [(g, c, t) if i % 2 == 0 else (c, g, t) for i, (c, g, t) in enumerate(triples)]


STRATEGIES = [
    every_pair_every_type, every_sentence_pair_inhibitor, every_pair_inhibitor, plausible, gold_answer,
    lambda d: [], lambda d: noisy(d, 0), lambda d: noisy(d, 1), lambda d: swapped(gold_answer(d)),
    lambda d: swapped(noisy(d, 2)),
]  # fmt: skip


def test_a_swapped_line_is_the_relation_the_official_matching_finds(docs: dict[str, Document]) -> None:
    # T2 is a gene and T1 a chemical of 90000001 (gold T1-T2 INHIBITOR and SUBSTRATE): the official matching
    # (``score_relations`` with the documents' pairs, which mirrors prepro_relations) counts the gene-first row
    # as a TP; the reward counts the line the same way and records it chemical-first, which is what the report
    # scores and ``--export-tsv`` writes.
    doc = docs["90000001"]
    gold_rows = [(doc.pmid, r.arg1, r.arg2, r.type) for r in doc.relations]
    official = score_relations(gold_rows, [(doc.pmid, "T2", "T1", "INHIBITOR")], pairs=official_pairs([doc]))
    assert (official.tp, official.fp, official.fn) == (1, 0, 3)
    score = score_extraction(reply("T2 | T1 | INHIBITOR"), None, gold_of(doc))
    assert (score.tp, score.fp, score.fn, score.accuracy) == (1, 0, 3, official.f1)
    assert (score.relations, score.wrong_type, score.format_reason) == ((("T1", "T2", "INHIBITOR"),), 0, None)
    exported = score_relations(gold_rows, [(doc.pmid, *score.relations[0])], pairs=official_pairs([doc]))
    assert exported == official


def test_per_document_f1_is_the_official_metric_on_the_fixture(docs: dict[str, Document]) -> None:
    for doc in docs.values():
        for strategy in STRATEGIES:
            agrees_with_official(doc, strategy(doc))


@pytest.mark.skipif(not REAL_SAMPLE, reason="set DRUGPROT_REAL_SAMPLE to the 350-abstract real training sample")
def test_per_document_f1_is_the_official_metric_on_the_real_sample() -> None:
    documents = load_documents("train", REAL_SAMPLE)
    assert len(documents) == 350
    for doc in documents:
        for strategy in STRATEGIES:
            agrees_with_official(doc, strategy(doc))
    means = {s.__name__: round(sum(per_doc(documents, s)) / 350, 4) for s in STRATEGIES[:4]}
    assert means == {  # mean per-abstract accuracy; 103 of the 350 abstracts have no relation
        "every_pair_every_type": 0.1035,
        "every_sentence_pair_inhibitor": 0.1695,
        "every_pair_inhibitor": 0.0522,
        "plausible": 0.7799,
    }


# ------------------------------------------------------------------------------------ the v1 taskset








# ---------------------------------------------------------------------------------------- the v0 stack







# ------------------------------------------------------------------------------------------ end to end










# --------------------------------------------------------------------------------------------- properties


def test_any_reply_scores_without_error_and_within_bounds(docs: dict[str, Document]) -> None:
    """Replies assembled from the format's own pieces (tags, ids, separators, types, newlines, junk) always
    score: no scoring error, accuracy and format in [0, 1], counts consistent with the answer."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    gold = gold_of(docs["90000001"])
    tokens = ["<think>", "</think>", "<relations>", "</relations>", "none", "T1", "T2", "T3", "T4", "T9", " | ", "|"]
    tokens += ["\n", " ", "E", "SUBSTRATE", "k", "(E)", "x", "\\boxed{E}", "é"]
    pieces = st.sampled_from(tokens)

    @settings(max_examples=400, deadline=None, derandomize=True)
    @given(st.lists(pieces, max_size=40), st.one_of(st.none(), st.sampled_from(["", "Because.", "<think>"])))
    def check(parts: list[str], reasoning: str | None) -> None:
        score = score_extraction("".join(parts), reasoning, gold)
        assert score.format_reason != "scoring_error"
        assert 0.0 <= score.accuracy <= 1.0 and score.format in (0.0, 1.0)
        assert score.tp + score.fn == len(gold.relations) and score.tp + score.fp == len(score.relations)
        assert (score.format == 1.0) is (score.format_reason is None)

    check()
