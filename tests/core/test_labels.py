"""Tests of drugprot.core.labels: the one label table that the prompts, the parser and the report read."""

from __future__ import annotations

from pathlib import Path

import pytest

from drugprot.core import labels, prompts
from drugprot.core.errors import DrugprotLookupError
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


def test_the_official_order_and_letters() -> None:
    assert [(label.letter, label.name) for label in labels.options(True)] == [
        ("A", "INDIRECT-DOWNREGULATOR"),
        ("B", "INDIRECT-UPREGULATOR"),
        ("C", "DIRECT-REGULATOR"),
        ("D", "ACTIVATOR"),
        ("E", "INHIBITOR"),
        ("F", "AGONIST"),
        ("G", "AGONIST-ACTIVATOR"),
        ("H", "AGONIST-INHIBITOR"),
        ("I", "ANTAGONIST"),
        ("J", "PRODUCT-OF"),
        ("K", "SUBSTRATE"),
        ("L", "SUBSTRATE_PRODUCT-OF"),
        ("M", "PART-OF"),
        ("N", "NO-RELATION"),
    ]
    assert tuple(label.name for label in labels.options(False)) == labels.RELATION_NAMES
    assert {label.name: i for i, label in enumerate(labels.options(True))} == labels.LABEL_ORDER
    assert "".join(labels.by_letter(False)) == "ABCDEFGHIJKLM" and "".join(labels.by_letter(True))[-1] == "N"


def test_letter_of() -> None:
    assert [labels.letter_of(name) for name in ("INDIRECT-DOWNREGULATOR", "SUBSTRATE", "NO-RELATION")] == [
        "A",
        "K",
        "N",
    ]
    with pytest.raises(DrugprotLookupError) as err:
        labels.letter_of("INHIBITS")
    assert err.value.args[0] == (
        "unknown DrugProt relation type 'INHIBITS'; expected one of " + ", ".join(labels.RELATION_NAMES)
    )
    assert isinstance(err.value, KeyError)  # what callers caught before the typed error
