"""The versions every rollout records (``drugprot.core.versions``), and the pins that make a bump necessary.

``PROMPT_DIGESTS`` and ``SCORER_DIGESTS`` map each version to a digest of what it produces: the rendered prompts
of a pinned synthetic abstract, and the scores of a pinned table of replies. A change to the prompts or to the
reply rules changes the digest, and the test fails until the version is bumped and the new digest pinned under
the new version. Never edit a digest already pinned: add a version.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from pathlib import Path

import pytest

import drugprot
from drugprot.core import versions
from drugprot.core.extraction import gold_of
from drugprot.core.options import TaskOptions
from drugprot.core.prompts import PROMPT_VERSION, system_prompt, user_prompt
from drugprot.core.rewards import Costs, Reward
from drugprot.core.schema import Document, Entity, Relation
from drugprot.core.scoring import SCORER_VERSION, score_extraction, score_reply
from drugprot.core.tasks import PairTask, build_tasks
from tests.fixtures import FIXTURE_JSONL, FIXTURE_TSV

PYPROJECT = Path(__file__).resolve().parents[2] / "environments" / "drugprot" / "pyproject.toml"

PROMPT_DIGESTS = {"1": "26529b14868a8520ac9c74aeb71a5d5e05a914ebc1090b349d1b3cebc6c99e0c"}
"""PROMPT_VERSION -> sha256 of ``rendered_prompts()``."""
SCORER_DIGESTS = {
    "1": "116d406a4d75cd0a84397ef1e095bb3d8cef2ac2ebe5d3c226f9441efb1b1ea3",  # parsing/scoring.py before 081396c
    "2": "8166d17610627e02ad0dbf4e845dbd48b5c96ca6930e9000090ca71085c0540d",
    # 3: the utility term and the official cells (drugprot.core.rewards, default costs FP 0.5, FN 1), swapped
    # extraction arguments, Unicode whitespace around a boxed answer, the relations block cap
    "3": "3d6ffb127179c072159df2a8ad57b3b1b9eb8dcdb35a1df2a44d226332bf1f8f",
    # 4: costs, weights and the accuracy term on the 1/64 reward grid (extraction's per-document F1 snapped), the
    # format weight 1/8
    "4": "867a899fe843faf23d3e582d796311778942e36ad2c9825b1ea272e9bdee336c",
}
"""SCORER_VERSION -> sha256 of ``scored_replies()``."""

# A synthetic abstract (not DrugProt text): nested mentions, a repeated name, a multi-label pair and a Unicode letter.
TITLE = "Verotinib inhibits KIN-3 kinase."
ABSTRACT = "Verotinib (10 µM) is a substrate of CYP2X9 and blocks KIN-3; verotinib-KIN-3 complexes were not seen."
TEXT = f"{TITLE} {ABSTRACT}"


def _entity(entity_id: str, kind: str, text: str, occurrence: int = 0) -> Entity:
    start = -1
    for _ in range(occurrence + 1):
        start = TEXT.index(text, start + 1)
    return Entity(entity_id, kind, text, start, start + len(text))


DOCUMENT = Document(
    pmid="99999999",
    title=TITLE,
    abstract=ABSTRACT,
    text=TEXT,
    entities=(
        _entity("T1", "CHEMICAL", "Verotinib"),
        _entity("T2", "GENE-Y", "KIN-3 kinase"),
        _entity("T3", "GENE-Y", "CYP2X9"),
        _entity("T4", "CHEMICAL", "verotinib", 0),
        _entity("T5", "GENE-Y", "KIN-3", 2),
        _entity("T6", "GENE-N", "verotinib-KIN-3 complexes"),
    ),
    relations=(
        Relation("INHIBITOR", "T1", "T2"),
        Relation("SUBSTRATE", "T1", "T3"),
        Relation("INHIBITOR", "T1", "T3"),
        Relation("PART-OF", "T4", "T6"),
    ),
)

CONTENTS = (
    None,
    "",
    "\\boxed{E}",
    "<think>It inhibits.</think>\\boxed{E}",
    "<think>It inhibits.</think>\n\\boxed{e}",
    "<think>x</think>\\boxed{\\text{K}}",
    "<think>x</think>\\boxed{K. SUBSTRATE}",
    "<think>x</think>\\boxed{E. SUBSTRATE}",
    "<think>x</think>\\boxed{substrate}",
    "<think>x</think>\\boxed{Substrate_Product of}",
    "<think>x</think>\\boxed{E or K}",
    "<think>x</think>\\boxed{N}",
    "<think>x</think>\\boxed{no relation}",
    "<think>x</think>\\boxed{B} no, \\boxed{E}",
    "<think>x</think>\\boxed{E}</think>",
    "<think>x</think>\\boxed{E}<think>more",
    "<think>x</think>The answer is E.",
    "<think>Maybe \\boxed{E}",
    "<think> </think>\\boxed{E}",
    "It is clear.</think>\\boxed{A}",
    "<think>x</think>\\boxed{ı}",
    "<think>x</think>\\boxed{Ｅ}",
    "<think>x</think>\\boxed{\u00a0E\u2003}",  # Unicode whitespace around the letter (version 3)
    "<think>x</think>\\boxed{E",
    "<think>x</think>\\boxed{" + "E" * 300 + "}",
)
REASONINGS = (None, "", "It binds the enzyme.")
EXTRACTION_CONTENTS = (
    "<think>x</think><relations>\nT1 | T2 | E\nT1 | T3 | K\n</relations>",
    "<think>x</think><relations>\nT2 | T1 | E\nT6 | T4 | M\n</relations>",  # gene ids first
    "<think>x</think><relations>\nT1 | T4 | E\nT2 | T3 | E\nT1 | T2 | E\nT2 | T1 | E\n</relations>",
    "<think>x</think><relations>none</relations>",
    "<think>x</think><relations>\nT9 | T2 | E\nT1 | T2\n</relations>",
)


PINNED_PAIRS = (("T1", "T2", ("INHIBITOR",)), ("T1", "T3", ("INHIBITOR", "SUBSTRATE")), ("T4", "T6", ("PART-OF",)),
                ("T4", "T3", ("NO-RELATION",)), ("T4", "T5", ("NO-RELATION",)))  # fmt: skip
"""The pairs whose user prompts are pinned: the abstract's 3 gold pairs (T1-T3 across the title and the abstract,
no task since the one candidate rule, but its prompt is pinned as it was) and its 2 negative candidates."""


def rendered_prompts() -> list[str]:
    """Every prompt the model can see for the pinned abstract: both system prompts, and each pinned pair's user
    prompt with and without marked mentions and NO-RELATION."""
    prompts = [system_prompt(False), system_prompt(True)]
    entities = {entity.id: entity for entity in DOCUMENT.entities}
    for arg1, arg2, labels in PINNED_PAIRS:
        task = PairTask(DOCUMENT, entities[arg1], entities[arg2], labels)
        for mark in (True, False):
            prompts += [user_prompt(task, mark_entities=mark, with_no_relation=nr) for nr in (False, True)]
    return prompts


def scored_replies() -> list[dict[str, object]]:
    """The full score of every (content, reasoning) of the table against a multi-label gold and a negative."""
    out = []
    for gold, with_nr in ((("INHIBITOR", "SUBSTRATE"), False), (("NO-RELATION",), True)):
        for content in CONTENTS:
            for reasoning in REASONINGS:
                score = score_reply(content, reasoning, gold, with_no_relation=with_nr)
                terms = Reward().terms(score)  # accuracy, utility (default costs) and format
                out.append({**terms, "tp": score.tp, "fp": score.fp, "fn": score.fn, **score.as_info()})
    for content in EXTRACTION_CONTENTS:
        extracted = score_extraction(content, None, gold_of(DOCUMENT))
        out.append({**Reward().terms(extracted), **extracted.as_info()})
    return out


def digest(value: object) -> str:
    return hashlib.sha256(json.dumps(value, ensure_ascii=False, sort_keys=True).encode("utf-8")).hexdigest()


def test_the_prompts_of_this_version_are_the_pinned_ones() -> None:
    assert max(PROMPT_DIGESTS, key=int) == PROMPT_VERSION, "pin the digest of the new PROMPT_VERSION here"
    assert digest(rendered_prompts()) == PROMPT_DIGESTS[PROMPT_VERSION], (
        "the rendered prompts changed: bump PROMPT_VERSION in drugprot/core/prompts.py and pin the new digest in "
        f"PROMPT_DIGESTS under it ({digest(rendered_prompts())})"
    )


def test_the_scores_of_this_version_are_the_pinned_ones() -> None:
    assert max(SCORER_DIGESTS, key=int) == SCORER_VERSION, "pin the digest of the new SCORER_VERSION here"
    assert digest(scored_replies()) == SCORER_DIGESTS[SCORER_VERSION], (
        "a reply now parses or scores differently: bump SCORER_VERSION in drugprot/core/scoring.py and pin the new "
        f"digest in SCORER_DIGESTS under it ({digest(scored_replies())})"
    )


def test_the_pins_see_a_one_character_change() -> None:
    """The digests are sensitive: any change to one prompt or one score changes them."""
    prompts = rendered_prompts()
    assert digest([prompts[0] + " ", *prompts[1:]]) != digest(prompts)
    scores = scored_replies()
    assert digest([{**scores[0], "format": 1.0 - scores[0]["format"]}, *scores[1:]]) != digest(scores)
    # What the pins cover: 2 system prompts + 4 renderings of each of DOCUMENT's 5 pinned pairs (3 gold, 2
    # candidates), and 25 replies x 3 reasoning fields x 2 option sets. The tasks are those pairs but T1-T3, a
    # gold pair across sentences (the title and the abstract), which is no candidate.
    assert [(t.key, t.labels) for t in build_tasks([DOCUMENT], negatives="all")] == [
        ("99999999:T1:T2", ("INHIBITOR",)),
        ("99999999:T4:T6", ("PART-OF",)),
        ("99999999:T4:T3", ("NO-RELATION",)),
        ("99999999:T4:T5", ("NO-RELATION",)),
    ]
    assert (len(prompts), len(scores)) == (22, 155)  # 150 pair replies, 5 extraction replies


def test_the_package_version_is_the_pyproject_one() -> None:
    assert drugprot.__version__ == tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]["version"]
    assert "__version__ =" not in (Path(drugprot.__file__).read_text(encoding="utf-8"))  # one source


@pytest.mark.parametrize(
    ("data_path", "revision", "data"),
    [
        (None, None, {"source": "hub", "revision": None}),
        (None, "3f2a9c1", {"source": "hub", "revision": "3f2a9c1"}),
        (str(FIXTURE_JSONL), None, {"source": "file", "revision": None}),
        (str(FIXTURE_TSV), None, {"source": "tsv", "revision": None}),
    ],
)
def test_the_record(data_path: str | None, revision: str | None, data: dict[str, object]) -> None:
    record = versions.record(TaskOptions(data_path=data_path, revision=revision))
    reward = {
        "kind": "utility",
        "fp_cost": 0.5,
        "fn_cost": 1.0,
        "weights": {"accuracy": 0.0, "utility": 1.0, "format": 0.125},
        "threshold": 0.5 / 2.5,
    }
    assert record == {
        "env": drugprot.__version__,
        "prompt": PROMPT_VERSION,
        "scorer": SCORER_VERSION,
        "data": data,
        "reward": reward,
        "setting": {"split": "validation", "negatives": 0, "mode": "pair", "data_path": data_path},
    }
    assert versions.from_info({"versions": record}) == {
        "env": drugprot.__version__,
        "prompt": PROMPT_VERSION,
        "scorer": SCORER_VERSION,
        "data_source": data["source"],
        "data_revision": revision,
        "reward": "utility (TP 1, FP -0.5, FN -1; states a relation when p > 0.200), "
        "weights accuracy 0, utility 1, format 0.125",
    }
    assert versions.from_info({"letter": "E"}) is None  # recorded before versions existed


def test_a_record_made_before_the_reward_knob_reads_as_accuracy() -> None:
    """Scorer versions 1 and 2 had only the accuracy and format rewards, and recorded no reward: the report names
    it ``accuracy (recorded before the reward knob)``; a malformed reward record is unknown (None)."""
    old = {"env": "0.1.0", "prompt": "1", "scorer": "2", "data": {"source": "hub", "revision": None}}
    assert versions.from_info({"versions": old})["reward"] == "accuracy (recorded before the reward knob)"  # type: ignore[index]
    for broken in ("utility", {"kind": "utility"}, {"kind": 3, "fp_cost": 0, "fn_cost": 0, "weights": {}}):
        assert versions.from_info({"versions": old | {"reward": broken}})["reward"] is None  # type: ignore[index]
    accuracy = versions.record(TaskOptions(reward="accuracy"))
    shown = versions.from_info({"versions": accuracy})["reward"]  # type: ignore[index]
    assert shown == "accuracy, weights accuracy 1, utility 0, format 0.125"


def test_the_prompts_record_identifies_the_sent_prompts_and_the_report_shows_a_replaced_system_prompt() -> None:
    """``info["drugprot"]["prompts"]``: digests of the system and user messages sent, and whether the system one was
    drugprot's own. A replaced one (``--env.taskset.system-prompt FILE``) shows in the prompt version."""
    assert versions.digest("q") == hashlib.sha256(b"q").hexdigest()[:12] == "8e35c2cd3bf6"
    own = versions.prompts_record("sys", "q", "sys")
    assert own == {"system": versions.digest("sys"), "user": "8e35c2cd3bf6", "standard_system": True}
    other = versions.prompts_record("optimised", "q", "sys")
    assert other == {"system": versions.digest("optimised"), "user": "8e35c2cd3bf6", "standard_system": False}
    record = versions.record(TaskOptions())
    assert versions.from_info({"versions": record, "prompts": own})["prompt"] == PROMPT_VERSION  # type: ignore[index]
    shown = versions.from_info({"versions": record, "prompts": other})["prompt"]  # type: ignore[index]
    assert shown == f"{PROMPT_VERSION} · system {versions.digest('optimised')}"
    assert versions.from_info({"versions": record})["prompt"] == PROMPT_VERSION  # type: ignore[index]  # older runs


def test_a_rescored_rollout_records_the_costs_and_weights_it_was_scored_with() -> None:
    record = versions.record(TaskOptions())
    weights = {"accuracy": 0.0, "utility": 1.0, "format": 0.125}
    assert versions.with_costs_and_weights(record, Costs(), weights) is record
    rescored = versions.with_costs_and_weights(record, Costs(0.35, 1.0), None)  # 0.35 is scored, and recorded, as 22/64
    assert rescored["reward"] == record["reward"] | {"fp_cost": 0.34375, "threshold": 0.34375 / 2.34375}
    assert record["reward"]["fp_cost"] == 0.5  # pure: the shared record is not changed
    assert versions.from_info({"versions": rescored})["reward"] == (  # type: ignore[index]
        "utility (TP 1, FP -0.34375, FN -1; states a relation when p > 0.147), weights accuracy 0, utility 1, "
        "format 0.125"
    )
    assert versions.with_costs_and_weights(None, Costs(0.35, 1.0), None) is None  # a task built by hand
