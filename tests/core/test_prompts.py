"""Tests of drugprot.core.prompts: the marked abstract and the user prompt, on the fixture."""

from __future__ import annotations

from pathlib import Path

from drugprot.core import prompts
from drugprot.core.options import TaskOptions
from drugprot.core.questions import load_questions
from drugprot.core.sources import load_documents
from drugprot.core.tasks import build_tasks
from tests.core.test_tasks import DOC


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


OPTIONS_A_TO_M = """Options:
A. INDIRECT-DOWNREGULATOR
B. INDIRECT-UPREGULATOR
C. DIRECT-REGULATOR
D. ACTIVATOR
E. INHIBITOR
F. AGONIST
G. AGONIST-ACTIVATOR
H. AGONIST-INHIBITOR
I. ANTAGONIST
J. PRODUCT-OF
K. SUBSTRATE
L. SUBSTRATE_PRODUCT-OF
M. PART-OF"""


def test_the_user_prompt_as_the_model_sees_it() -> None:
    task = build_tasks([DOC])[1]  # Drug Y (T3) and the second CYP3A4 mention (T4)
    assert prompts.user_prompt(task) == (
        "Abstract (PMID 7):\n"
        "Drug X inhibits and is a substrate of CYP3A4. <chemical>Drug Y</chemical> blocks <gene>CYP3A4</gene> and "
        "CYP2D6.\n\n"
        'Chemical: "Drug Y" (the mention marked <chemical>...</chemical>)\n'
        'Gene/protein: "CYP3A4" (the mention marked <gene>...</gene>)\n\n'
        "What is the relation between the marked chemical and the marked gene/protein?\n\n"
        f"{OPTIONS_A_TO_M}\n\n"
        "Answer with the letter of one option in \\boxed{}."
    )
    assert prompts.user_prompt(task, mark_entities=False, with_no_relation=True) == (
        "Abstract (PMID 7):\n"
        "Drug X inhibits and is a substrate of CYP3A4. Drug Y blocks CYP3A4 and CYP2D6.\n\n"
        'Chemical: "Drug Y"\n'
        'Gene/protein: "CYP3A4"\n\n'
        'What is the relation between "Drug Y" and "CYP3A4"?\n\n'
        f"{OPTIONS_A_TO_M}\nN. NO-RELATION\n\n"
        "Answer with the letter of one option in \\boxed{}."
    )
