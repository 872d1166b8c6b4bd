"""The demo's "model": the lexical baseline reading DrugProt prompts (``drugprot.tools.demo.replier``)."""

from __future__ import annotations

import pytest

from drugprot.core.data import load_documents
from drugprot.core.prompts import user_prompt
from drugprot.core.tasks import build_tasks
from drugprot.evaluation.baselines import predict, reply_text
from drugprot.tools import demo


@pytest.mark.parametrize("mark_entities", [True, False])
@pytest.mark.parametrize("negatives", [0, "all"])
def test_the_demo_model_reads_each_prompt_like_the_baseline_reads_the_data(
    mark_entities: bool, negatives: int | str
) -> None:
    with demo.sample_path() as path:
        tasks = build_tasks(load_documents("validation", path), negatives=negatives)
    with_nr = negatives != 0
    for task in tasks:
        prompt = user_prompt(task, mark_entities=mark_entities, with_no_relation=with_nr)
        pair = demo.pair_from_prompt(prompt)
        assert pair is not None and pair.text == task.document.text and pair.with_no_relation == with_nr
        if mark_entities:  # unmarked prompts fall back to the first occurrence of each name
            assert pair.chemical == (task.chemical.start, task.chemical.end)
            assert pair.gene == (task.gene.start, task.gene.end)
            assert demo.lexical_reply(prompt) == reply_text(predict("lexical", task, with_no_relation=with_nr))


def test_a_prompt_that_is_not_a_drugprot_prompt_gets_the_fallback() -> None:
    assert demo.pair_from_prompt("What is 2 + 2?") is None
    assert demo.lexical_reply("What is 2 + 2?").endswith("\\boxed{E}")
    assert demo.lexical_reply("Options:\nM. PART-OF\nN. NO-RELATION\n").endswith("\\boxed{N}")
