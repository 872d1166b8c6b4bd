"""Tests of drugprot.core.prompts: the marked abstract and the user prompt, on the fixture."""

from __future__ import annotations

from pathlib import Path

from drugprot.core import prompts
from drugprot.core.options import TaskOptions
from drugprot.core.questions import load_questions
from drugprot.core.sources import load_documents
from drugprot.core.tasks import build_tasks


def test_repeated_names_are_mention_level(fixture_jsonl: Path) -> None:
    tasks = {t.key: t for t in build_tasks(load_documents("train", fixture_jsonl))}
    agonist = tasks["90000002:T5:T6"]  # the second "tamoxifen"/"estrogen receptor alpha" pair
    marked = prompts.marked_text(agonist)
    assert marked.count("<chemical>") == 1 and marked.count("<gene>") == 1
    assert (
        "In endometrium, however, <chemical>tamoxifen</chemical> acts as an agonist of "
        "<gene>estrogen receptor alpha</gene>." in marked
    )
    assert (
        marked.replace("<chemical>", "").replace("</chemical>", "").replace("<gene>", "").replace("</gene>", "")
        == agonist.document.text
    )


def test_nested_mentions_stay_well_nested(fixture_jsonl: Path) -> None:
    tasks = {t.key: t for t in build_tasks(load_documents("train", fixture_jsonl))}
    assert prompts.marked_text(tasks["90000009:T3:T2"]).startswith(
        "Binding of GABA to the <gene><chemical>GABA</chemical>(A) receptor</gene>"
    )


def test_unmarked_prompt(fixture_jsonl: Path) -> None:
    q = load_questions(TaskOptions(split="train", data_path=str(fixture_jsonl), num_tasks=1, mark_entities=False))[0]
    assert "<chemical>" not in q.prompt and 'between "Lorvastatin" and "CYP3A4"' in q.prompt
