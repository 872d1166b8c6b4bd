"""Tests of drugprot.core.labels: the one label table that the prompts, the parser and the report read."""

from __future__ import annotations

from pathlib import Path

from drugprot.core import labels, prompts
from drugprot.core.options import TaskOptions
from drugprot.core.parsing import parse_reply
from drugprot.core.questions import load_questions


def test_prompts_and_parser_share_the_label_table(fixture_jsonl: Path) -> None:
    question = load_questions(TaskOptions(split="train", data_path=str(fixture_jsonl), num_tasks=1))[0]
    for with_nr in (False, True):
        system, opts = prompts.system_prompt(with_nr), prompts.options_block(with_nr)
        offered = labels.options(with_nr)
        assert len(offered) == (14 if with_nr else 13)
        for label in offered:
            assert f"\n{label.letter}. {label.name}: {label.description}\n" in system + "\n"
            assert f"{label.letter}. {label.name}" in opts.splitlines()
            assert (
                parse_reply(f"<think>x</think>\\boxed{{{label.letter}}}", with_no_relation=with_nr).letter
                == label.letter
            )
            assert (
                parse_reply(f"<think>x</think>\\boxed{{{label.name}}}", with_no_relation=with_nr).letter == label.letter
            )
        assert ("N. NO-RELATION" in system) is with_nr
    assert question.prompt.endswith(prompts.options_block() + "\n\nAnswer with the letter of one option in \\boxed{}.")
    assert [label.letter + label.name for label in labels.RELATION_LABELS][0] == "AINDIRECT-DOWNREGULATOR"
    assert labels.RELATION_LABELS[-1].letter + labels.RELATION_LABELS[-1].name == "MPART-OF"
