"""A model-free baseline's extraction-mode run (``drugprot baseline --mode extraction``): one task per abstract, the
baseline's pair rule, NO-RELATION offered, on every same-sentence candidate pair, its relations listed in a
``<relations>`` reply (``reply``) scored like a model's (``majority`` therefore lists nothing)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from drugprot.core.candidates import candidate_pairs
from drugprot.core.extraction import answer_block
from drugprot.core.labels import NO_RELATION
from drugprot.core.options import TaskOptions
from drugprot.core.schema import Document
from drugprot.core.scoring import score_extraction
from drugprot.evaluation.records import ExtractionAnswer, ExtractionRollout, Run, RunConfig, Versions
from drugprot.modes.extraction.task import extraction_questions


def reply(rule: Callable[..., Any], document: Document) -> str:
    """The reply to an extraction task: the pair ``rule``'s answer, NO-RELATION offered, on every same-sentence
    candidate pair of the abstract (``candidate_pairs``, the pairs of pair mode's ``negatives=all``), the reasons in
    the reasoning and every pair not answered NO-RELATION listed in the relations block."""
    entities = {entity.id: entity for entity in document.entities}
    notes, relations = [], []
    for chemical, gene in candidate_pairs(document):
        answer = rule(document.text, entities[chemical], entities[gene], with_no_relation=True)
        notes.append(f"{chemical}-{gene}: {answer.rationale}")
        if answer.label != NO_RELATION.name:
            relations.append((chemical, gene, answer.label))
    reasoning = "; ".join(notes) or "no chemical and gene/protein mention share a sentence"
    return f"<think>{reasoning}.</think>\n{answer_block(relations)}"


def baseline_run(
    baseline: str,
    rule: Callable[..., Any],
    options: TaskOptions,
    documents: list[Document],
    *,
    versions: Versions | None,
    costs: tuple[float, float] | None,
) -> Run:
    """The run of ``baseline`` (its pair ``rule``) over the extraction tasks ``options`` select: each reply
    (``reply``) scored with ``drugprot.core.scoring.score_extraction``, as a model's reply would be."""
    by_pmid = {document.pmid: document for document in documents}
    questions = extraction_questions(documents, options)
    reward, rollouts = options.make_reward(), []
    for question in questions:
        assert question.gold is not None and question.ceiling is not None  # an extraction question carries both
        score = score_extraction(reply(rule, by_pmid[question.pmid]), None, question.gold)
        answer = ExtractionAnswer.of(score, rescored=False)
        rollouts.append(
            ExtractionRollout(
                question.pmid,
                question.gold,
                answer,
                reward=reward.value(score),
                versions=versions,
                costs=costs,
                ceiling=(question.ceiling.gold, question.ceiling.candidates, question.ceiling.one_per_pair),
            )  # fmt: skip
        )
    return Run(
        name=f"baseline {baseline}",
        path=str(options.data_path or f"hub OpenMed/drugprot-parquet [{options.split}]"),
        source="drugprot baseline, no model",
        rollouts=[],
        config=RunConfig(
            model=f"baseline:{baseline}",
            split=options.split,
            data_path=options.data_path,
            limit=f"num_tasks={options.num_tasks}" if options.num_tasks is not None else "",
        ),
        lines=len(rollouts),
        documents=documents,
        extraction=rollouts,
        mode="extraction",
    )
