"""``drugprot baseline majority|lexical``: model-free baselines, reported exactly like a ``vf-eval`` run.

Two baselines, each answering one label per task (so its report has one rollout per task):

- ``majority``: always the majority class of the setting, INHIBITOR (about 31% of DrugProt relations)
  for positive-only tasks and NO-RELATION when negatives are offered (same-sentence candidates without a
  relation outnumber the gold pairs). A constant rule, not fitted to the evaluated data.
- ``lexical``: keyword cues (``CUES``) in the text between the two mentions, then in a small window around
  them (``WINDOW`` characters on each side, not crossing a sentence end ". "). Between the mentions, the
  cue nearest the gene mention wins; outside, the nearest one to the pair, the window after the pair
  first. No cue: INHIBITOR (positive-only) or NO-RELATION (with negatives). The rule (cue list, order,
  window) was chosen once by hand on a 350-abstract sample of the DrugProt training split and is fixed.

``--mode extraction`` (one task per abstract) applies the same pair rule, NO-RELATION offered, to every
same-sentence candidate pair of each abstract (``extraction_reply``): the pairs not answered NO-RELATION are listed in
a ``<relations>`` reply, scored by ``drugprot.core.scoring.score_extraction`` like a model's (``majority`` therefore
lists nothing).

``lexical_label`` works on any text with two character spans, so the offline demo can run the same
classifier behind a local OpenAI-compatible server (``drugprot.tools.demo``); ``reply_text`` renders a
prediction in the think/boxed format the environment expects.
"""

from __future__ import annotations

import argparse
import functools
import re
import sys
from dataclasses import dataclass

from drugprot.core.errors import DrugprotError
from drugprot.core.labels import NO_RELATION
from drugprot.core.options import TaskOptions
from drugprot.core.outputs import EXIT_ERROR, error_line, expand_inputs
from drugprot.core.rewards import DEFAULT_FN_COST, DEFAULT_FP_COST, DEFAULT_REWARD, REWARD_KINDS
from drugprot.core.schema import Document, Entity
from drugprot.core.scoring import INFO_KEY
from drugprot.core.sources import load_documents
from drugprot.core.tasks import PairTask
from drugprot.core.versions import VERSIONS_KEY
from drugprot.core.versions import record as versions_record
from drugprot.evaluation.decode import rollout_costs, rollout_versions
from drugprot.evaluation.records import Run
from drugprot.evaluation.report import add_output_arguments, emit
from drugprot.evaluation.report_outputs import prepare_outputs
from drugprot.modes.base import get_mode
from drugprot.modes.extraction import baseline as extraction_baseline
from drugprot.modes.pair.baseline import reply_text
from drugprot.modes.registry import mode_names

BASELINES = ("majority", "lexical")
MAJORITY = "INHIBITOR"
"""The most frequent DrugProt relation type (6,538 of 21,035 train+dev relations)."""
WINDOW = 40
"""Characters of context the lexical baseline reads before and after the pair."""

CUES: tuple[tuple[str, str], ...] = (
    (r"antagoni[sz]", "ANTAGONIST"),
    (r"(?<!ant)agonis", "AGONIST"),
    (r"inhibit", "INHIBITOR"),
    (r"substrate|metaboli", "SUBSTRATE"),
    (r"(?<!in)activat", "ACTIVATOR"),
    (r"increas|induc|up-?regulat", "INDIRECT-UPREGULATOR"),
    (r"decreas|reduc|down-?regulat|suppress", "INDIRECT-DOWNREGULATOR"),
    (r"produc", "PRODUCT-OF"),
    (r"bind", "DIRECT-REGULATOR"),
)
"""(regular expression, label): matched case-insensitively anywhere in a word ("inhibit" finds "inhibitor",
"inhibited", "inhibition"). ``antagoni[sz]`` and ``(?<!ant)agonis`` keep antagonists out of AGONIST;
``(?<!in)activat`` keeps "inactivation" out of ACTIVATOR."""
_CUE = re.compile("|".join(f"(?P<c{i}>{pattern})" for i, (pattern, _) in enumerate(CUES)), re.IGNORECASE)

Span = tuple[int, int]


class UnknownBaselineError(DrugprotError, ValueError):
    """A baseline name that is not one of ``BASELINES``."""

    def __init__(self, name: str) -> None:
        super().__init__(f"unknown baseline {name!r}; expected one of {', '.join(BASELINES)}")


@dataclass(frozen=True, slots=True)
class BaselineAnswer:
    """A baseline's answer (an official name, or NO-RELATION) and why, in one line."""

    label: str
    rationale: str


def fallback_label(with_no_relation: bool) -> str:
    """The answer when nothing else decides: NO-RELATION if offered, else the majority type."""
    return NO_RELATION.name if with_no_relation else MAJORITY


def majority_prediction(with_no_relation: bool) -> BaselineAnswer:
    """The ``majority`` baseline's constant answer."""
    label = fallback_label(with_no_relation)
    return BaselineAnswer(label, f"the majority class of this setting is {label}")


def _cues(text: str) -> list[tuple[int, int, str, str]]:
    """``(start, end, matched text, label)`` of every cue in ``text``, in order."""
    found = []
    for match in _CUE.finditer(text):
        index = int(next(name for name, value in match.groupdict().items() if value is not None)[1:])
        found.append((match.start(), match.end(), match.group(0), CUES[index][1]))
    return found


def window_before(text: str, start: int) -> str:
    """The ``WINDOW`` characters before ``start``, cut at the last sentence end among them."""
    before = text[max(0, start - WINDOW) : start]
    cut = before.rfind(". ")
    return before[cut + 2 :] if cut >= 0 else before


def window_after(text: str, end: int) -> str:
    """The ``WINDOW`` characters after ``end``, cut at the first sentence end among them."""
    after = text[end : end + WINDOW]
    cut = after.find(". ")
    return after[:cut] if cut >= 0 else after


def lexical_label(text: str, chemical: Span, gene: Span, *, with_no_relation: bool = False) -> BaselineAnswer:
    """The ``lexical`` baseline on one mention pair of ``text`` (``[start, end)`` character spans)."""
    first, second = sorted((chemical, gene))
    between = text[first[1] : second[0]] if first[1] < second[0] else ""
    cues = _cues(between)
    if cues:
        # The cue nearest the gene mention: the last one if the gene comes second, else the first.
        start, _, word, label = cues[-1] if gene == second else cues[0]
        return BaselineAnswer(label, f'"{word}" between the two mentions suggests {label}')
    for where, region, nearest in (
        ("after", window_after(text, second[1]), 0),
        ("before", window_before(text, first[0]), -1),
    ):
        cues = _cues(region)
        if cues:
            _, _, word, label = cues[nearest]
            return BaselineAnswer(label, f'"{word}" just {where} the pair suggests {label}')
    label = fallback_label(with_no_relation)
    return BaselineAnswer(label, f"no cue word near the pair, so {label}")


def predict_pair(baseline: str, text: str, chemical: Entity, gene: Entity, *, with_no_relation: bool) -> BaselineAnswer:
    """One baseline's answer for one mention pair of ``text``.

    Raises:
        UnknownBaselineError: an unknown baseline name.
    """
    if baseline == "majority":
        return majority_prediction(with_no_relation)
    if baseline == "lexical":
        spans = (chemical.start, chemical.end), (gene.start, gene.end)
        return lexical_label(text, *spans, with_no_relation=with_no_relation)
    raise UnknownBaselineError(baseline)


def predict(baseline: str, task: PairTask, *, with_no_relation: bool = False) -> BaselineAnswer:
    """One baseline's answer for one task.

    Raises:
        UnknownBaselineError: an unknown baseline name.
    """
    return predict_pair(baseline, task.document.text, task.chemical, task.gene, with_no_relation=with_no_relation)


def extraction_reply(baseline: str, document: Document) -> str:
    """The baseline's reply to an extraction task (``drugprot.modes.extraction.baseline.reply``: its pair answer,
    NO-RELATION offered, on every same-sentence candidate pair of the abstract, the pairs not answered NO-RELATION
    listed).

    Raises:
        UnknownBaselineError: an unknown baseline name.
    """
    return extraction_baseline.reply(functools.partial(predict_pair, baseline), document)


def baseline_run(baseline: str, options: TaskOptions) -> Run:
    """Run one baseline over the tasks ``options`` select; the result reads like a ``vf-eval`` run.

    The tasks, the reply and the run are the mode's (``Mode.baseline_run``; pair: each answer rendered with
    ``reply_text`` and scored with ``drugprot.core.scoring.score_reply``, extraction: ``extraction_reply`` scored
    with ``score_extraction``), as a model's reply would be; its reward is ``options.make_reward()``'s.

    Raises:
        DrugprotDataError / DrugprotHubError: from loading the split.
        UnknownBaselineError: an unknown baseline.
    """
    if baseline not in BASELINES:
        raise UnknownBaselineError(baseline)
    documents = load_documents(options.split, options.data_path, path_hint="--data-path", revision=options.revision)
    record = {INFO_KEY: {VERSIONS_KEY: versions_record(options)}}
    return get_mode(options.mode).baseline_run(
        baseline,
        functools.partial(predict_pair, baseline),
        options,
        documents,
        versions=rollout_versions(record),
        costs=rollout_costs(record),
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "baselines",
        nargs="+",
        choices=BASELINES,
        metavar="BASELINE",
        help="majority and/or lexical (several: a comparison table)",
    )
    parser.add_argument(
        "--split",
        choices=("train", "validation"),
        default="validation",
        help="split to evaluate (default validation; ignored for a single data file)",
    )
    parser.add_argument(
        "--data-path",
        help="local parquet/jsonl file or BioCreative TSV directory (default: OpenMed/drugprot-parquet from the hub)",
    )
    parser.add_argument(
        "--revision",
        default=None,
        help="hub dataset revision (commit sha, branch or tag; default: the hub's default branch)",
    )
    parser.add_argument(
        "--negatives",
        default="0",
        help="NO-RELATION candidates: 0 (positive-only), k per gold pair, or all (default 0)",
    )
    parser.add_argument(
        "--mode",
        choices=mode_names(),
        default="pair",
        help="pair: one task per chemical-gene pair (default); extraction: one task per abstract, the baseline's "
        "pair rule on every same-sentence pair, its relations listed as a model's reply would list them",
    )
    parser.add_argument(
        "--reward",
        choices=REWARD_KINDS,
        default=DEFAULT_REWARD,
        help="the reward the report's mean reward uses, as the env's `reward` knob (default utility)",
    )
    parser.add_argument("--fp-cost", type=float, default=DEFAULT_FP_COST, help="the utility's false-positive cost")
    parser.add_argument("--fn-cost", type=float, default=DEFAULT_FN_COST, help="the utility's false-negative cost")
    parser.add_argument(
        "--sampling-seed",
        type=int,
        default=0,
        metavar="S",
        help="seed of negative sampling and --shuffle (default 0; the bootstrap's is --bootstrap-seed)",
    )
    # The old spelling: --seed was this seed here (and the bootstrap's in drugprot report), so it keeps its meaning.
    parser.add_argument("--seed", dest="sampling_seed", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--num-tasks", type=int, default=None, help="keep the first N tasks")
    parser.add_argument("--shuffle", action="store_true", help="shuffle the tasks (with --sampling-seed) first")
    add_output_arguments(parser)


def run(args: argparse.Namespace) -> int:
    try:
        options = TaskOptions(
            split=args.split,
            data_path=args.data_path,
            num_tasks=args.num_tasks,
            shuffle=args.shuffle,
            seed=args.sampling_seed,
            negatives=args.negatives,  # normalised ("2" -> 2, " ALL" -> "all") by TaskOptions
            revision=args.revision,
            mode=args.mode,
            reward=args.reward,
            fp_cost=args.fp_cost,
            fn_cost=args.fn_cost,
        )
        outputs = prepare_outputs(args, expand_inputs([args.data_path]))  # before any work
        runs = [baseline_run(name, options) for name in dict.fromkeys(args.baselines)]
        return emit(runs, args, outputs=outputs)
    except (DrugprotError, OSError) as exc:
        print(error_line("baseline", exc), file=sys.stderr)
        return EXIT_ERROR


__all__ = [
    "BASELINES",
    "CUES",
    "MAJORITY",
    "UnknownBaselineError",
    "WINDOW",
    "BaselineAnswer",
    "baseline_run",
    "extraction_reply",
    "fallback_label",
    "lexical_label",
    "majority_prediction",
    "predict",
    "predict_pair",
    "reply_text",
    "window_after",
    "window_before",
]
