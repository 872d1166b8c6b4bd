"""A model-free baseline's pair-mode run (``drugprot baseline``): one task per chemical-gene pair, the baseline's
pair rule answering each, its reply (``reply_text``) scored like a model's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from drugprot.core.labels import letter_of
from drugprot.core.options import TaskOptions
from drugprot.core.question import select_tasks
from drugprot.core.schema import Document
from drugprot.core.scoring import score_reply
from drugprot.core.tasks import build_tasks
from drugprot.evaluation.records import GoldPair, Rollout, Run, RunConfig, ScoredAnswer, Versions


def reply_text(prediction: Any) -> str:
    """The prediction (a ``BaselineAnswer``) as a model reply in the environment's format: reasoning, then one
    boxed letter."""
    return f"<think>{prediction.rationale}.</think>\n\\boxed{{{letter_of(prediction.label)}}}"


def baseline_run(
    baseline: str,
    rule: Callable[..., Any],
    options: TaskOptions,
    documents: list[Document],
    *,
    versions: Versions | None,
    costs: tuple[float, float] | None,
) -> Run:
    """The run of ``baseline`` (its pair ``rule``) over the pair tasks ``options`` select, scored with
    ``drugprot.core.scoring.score_reply``; its reward is ``options.make_reward()``'s."""
    with_nr = options.with_no_relation
    tasks = select_tasks(build_tasks(documents, negatives=options.negatives, seed=options.seed), options)
    reward, rollouts = options.make_reward(), []
    for task in tasks:
        prediction = rule(task.document.text, task.chemical, task.gene, with_no_relation=with_nr)
        score = score_reply(reply_text(prediction), None, task.labels, with_no_relation=with_nr)
        pair = GoldPair(task.pmid, task.chemical.id, task.gene.id, task.labels, with_nr)
        answer = ScoredAnswer.of(score, rescored=False)
        ceiling = (task.ceiling.gold, task.ceiling.candidates, task.ceiling.one_per_pair)
        rollouts.append(
            Rollout.of(pair, answer, reward=reward.value(score), versions=versions, costs=costs, ceiling=ceiling)
        )
    source = options.data_path or f"hub OpenMed/drugprot-parquet [{options.split}]"
    limit = f"num_tasks={options.num_tasks}" if options.num_tasks is not None else ""
    return Run(
        name=f"baseline {baseline}",
        path=str(source),
        source="drugprot baseline, no model",
        rollouts=rollouts,
        config=RunConfig(
            model=f"baseline:{baseline}",
            split=options.split,
            data_path=options.data_path,
            negatives=str(options.negatives),
            limit=limit,
        ),
        lines=len(rollouts),
        documents=documents,
    )
