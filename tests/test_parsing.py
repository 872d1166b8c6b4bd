"""The reply parser's specification, scored through the real verifiers v1 path (``await task.score``)."""

from __future__ import annotations

import pytest
import verifiers.v1 as vf
from verifiers.v1.graph import MessageNode
from verifiers.v1.types import AssistantMessage, UserMessage

from drugprot import parsing
from drugprot.scoring import score_reply
from drugprot.taskset import INFO_KEY, DrugprotConfig, DrugprotData, DrugprotTask, DrugprotTaskset

GOLD = ["INHIBITOR", "SUBSTRATE"]  # a multi-label pair: E and K are both correct
T = "<think>The text says the chemical inhibits the enzyme.</think>"

# (content, reasoning_content, expected letter, accuracy, format, invalid reason, format reason)
CASES = [
    (T + "\\boxed{E}", None, "E", 1, 1, None, None),
    (T + "\\boxed{K}", None, "K", 1, 1, None, None),
    (T + "\\boxed{A}", None, "A", 0, 1, None, None),
    (T + "\\boxed{ e }", None, "E", 1, 1, None, None),
    (T + "\\boxed{\\text{E}}", None, "E", 1, 1, None, None),
    (T + "\\boxed{\\textbf{e}}", None, "E", 1, 1, None, None),
    (T + "\\boxed{$E$}", None, "E", 1, 1, None, None),
    (T + "\\boxed{(E)}", None, "E", 1, 1, None, None),
    (T + "\\boxed{E. INHIBITOR}", None, "E", 1, 1, None, None),
    (T + "\\boxed{E) INHIBITOR}", None, "E", 1, 1, None, None),
    (T + "\\boxed{e. Inhibitor}", None, "E", 1, 1, None, None),
    (T + "\\boxed{E: inhibitor}", None, "E", 1, 1, None, None),
    (T + "\\boxed{inhibitor}", None, "E", 1, 1, None, None),
    (T + "\\boxed{Substrate}", None, "K", 1, 1, None, None),
    (T + "\\boxed{substrate_product_of}", None, "L", 0, 1, None, None),
    (T + "\\boxed{SUBSTRATE-PRODUCT-OF}", None, "L", 0, 1, None, None),
    (T + "\\boxed{indirect_downregulator}", None, "A", 0, 1, None, None),
    (T + "\\boxed{Indirect Upregulator}", None, "B", 0, 1, None, None),
    (T + "\\boxed{Part-Of}", None, "M", 0, 1, None, None),
    (T + "\n\n**Answer:** \\boxed{E}", None, "E", 1, 1, None, None),
    ("The chemical inhibits it.</think>\\boxed{E}", None, "E", 1, 1, None, None),  # template opened <think>
    ("\\boxed{E}", "It inhibits the enzyme.", "E", 1, 1, None, None),  # reasoning_content (vLLM parser)
    (T + "\\boxed{E}", "separate reasoning too", "E", 1, 1, None, None),
    ("<think>\\boxed{A}</think>\\boxed{E}", None, "E", 1, 1, None, None),  # a box inside reasoning is ignored
    ("\\boxed{E}", None, "E", 1, 0, None, "no_reasoning"),
    ("<think>  </think>\\boxed{E}", None, "E", 1, 0, None, "no_reasoning"),
    (T + "\\boxed{A} or rather \\boxed{E}", None, "E", 1, 0, None, "several_boxed_answers"),
    (T + "\\boxed{E} or rather \\boxed{A}", None, "A", 0, 0, None, "several_boxed_answers"),
    ("<think>it inhibits", None, None, 0, 0, "unterminated_think", "unterminated_think"),
    ("<think>so \\boxed{E}", None, None, 0, 0, "unterminated_think", "unterminated_think"),
    (T + "<think>second thoughts \\boxed{E}", None, None, 0, 0, "unterminated_think", "unterminated_think"),
    (
        "<think>I pick \\boxed{E}</think>Final answer above.",
        None,
        None,
        0,
        0,
        "no_boxed_answer",
        "no_boxed_answer",
    ),
    (T + "The answer is E.", None, None, 0, 0, "no_boxed_answer", "no_boxed_answer"),
    (T + "\\boxed{E", None, None, 0, 0, "no_boxed_answer", "no_boxed_answer"),
    (T + "\\boxed{Z}", None, None, 0, 0, "unknown_answer", "unknown_answer"),
    (T + "\\boxed{N}", None, None, 0, 0, "unknown_answer", "unknown_answer"),  # N is not offered here
    (T + "\\boxed{NO-RELATION}", None, None, 0, 0, "unknown_answer", "unknown_answer"),
    (T + "\\boxed{EK}", None, None, 0, 0, "unknown_answer", "unknown_answer"),
    (T + "\\boxed{Inhibitor of CYP3A4}", None, None, 0, 0, "unknown_answer", "unknown_answer"),
    (T + "\\boxed{E. AGONIST}", None, None, 0, 0, "letter_label_mismatch", "letter_label_mismatch"),
    ("", "thinking only", None, 0, 0, "empty_reply", "empty_reply"),
    (None, None, None, 0, 0, "empty_reply", "empty_reply"),
]

# Replies when the task offers N. NO-RELATION and the pair has no gold relation.
NR_CASES = [
    (T + "\\boxed{N}", "N", 1, 1),
    (T + "\\boxed{no relation}", "N", 1, 1),
    (T + "\\boxed{NO_RELATION}", "N", 1, 1),
    (T + "\\boxed{N. NO-RELATION}", "N", 1, 1),
    (T + "\\boxed{E}", "E", 0, 1),
]


def make_task(labels: list[str], with_no_relation: bool = False) -> DrugprotTask:
    data = DrugprotData(
        prompt="q",
        system_prompt="s",
        pmid="1",
        arg1="T1",
        arg2="T2",
        labels=labels,
        chemical="c",
        gene="g",
        with_no_relation=with_no_relation,
    )
    config = DrugprotTaskset(DrugprotConfig(id="drugprot")).task_config()
    return DrugprotTask(data, config)


def make_trace(task: DrugprotTask, content: str | None, reasoning: str | None) -> vf.Trace:
    return vf.Trace(
        agent=vf.AgentInfo(config=vf.AgentConfig()),
        task=vf.TraceTask(type="DrugprotTask", data=task.data),
        nodes=[
            MessageNode(parent=None, message=UserMessage(content="q"), sampled=False),
            MessageNode(
                parent=0, message=AssistantMessage(content=content, reasoning_content=reasoning), sampled=True
            ),
        ],
    )


def test_table_is_big_enough() -> None:
    assert len(CASES) >= 30
    covered = {case[5] for case in CASES} | {case[6] for case in CASES}
    assert set(parsing.REASONS) <= covered


@pytest.mark.parametrize(
    ("content", "reasoning", "letter", "accuracy", "fmt", "invalid", "fmt_reason"), CASES
)
async def test_reply_through_verifiers(
    content, reasoning, letter, accuracy, fmt, invalid, fmt_reason
) -> None:
    task = make_task(GOLD)
    trace = make_trace(task, content, reasoning)
    await task.score(trace)
    assert trace.errors == []
    assert trace.rewards["accuracy"].score == accuracy
    assert trace.rewards["format"].score == fmt
    assert trace.rewards["accuracy"].weight == 1.0
    assert trace.rewards["format"].weight == 0.1
    assert trace.reward == pytest.approx(accuracy * 1.0 + fmt * 0.1)
    assert trace.metrics["answered"] == float(letter is not None)
    assert trace.info[INFO_KEY] == {
        "letter": letter,
        "label": {
            "E": "INHIBITOR",
            "K": "SUBSTRATE",
            "A": "INDIRECT-DOWNREGULATOR",
            "L": "SUBSTRATE_PRODUCT-OF",
            "B": "INDIRECT-UPREGULATOR",
            "M": "PART-OF",
            None: None,
        }[letter],
        "invalid_reason": invalid,
        "format_reason": fmt_reason,
    }


@pytest.mark.parametrize(("content", "letter", "accuracy", "fmt"), NR_CASES)
async def test_no_relation_option(content, letter, accuracy, fmt) -> None:
    task = make_task(["NO-RELATION"], with_no_relation=True)
    trace = make_trace(task, content, None)
    await task.score(trace)
    assert (
        trace.info[INFO_KEY]["letter"],
        trace.rewards["accuracy"].score,
        trace.rewards["format"].score,
    ) == (letter, accuracy, fmt)


async def test_weights_come_from_config() -> None:
    config = DrugprotTaskset(
        DrugprotConfig(id="drugprot", accuracy_weight=0.7, format_weight=0.3)
    ).task_config()
    task = DrugprotTask(make_task(GOLD).data, config)
    trace = make_trace(task, "\\boxed{E}", None)  # accurate, bad format
    await task.score(trace)
    assert trace.rewards["accuracy"].weight == 0.7
    assert trace.rewards["format"].weight == 0.3
    assert trace.reward == pytest.approx(0.7)


@pytest.mark.parametrize(
    "junk", ["\\boxed{" * 50, "}" * 10 + "\\boxed{}", "\x00\\boxed{\ud800}", "</think>" * 3]
)
def test_scoring_never_raises(junk: str) -> None:
    score = score_reply(junk, junk, GOLD)
    assert score.accuracy == 0.0 and score.letter is None and score.invalid_reason is not None


def test_boxed_contents_balances_braces() -> None:
    assert parsing.boxed_contents("a \\boxed{x{y}} b \\boxed{z} \\boxed{open") == ["x{y}", "z"]
