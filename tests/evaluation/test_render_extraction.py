"""``drugprot.modes.extraction.render``: the text report of an extraction run and the comparison of two.

The figures are ``HAND_RUN``'s, computed by hand in ``tests/evaluation/test_extraction_summary.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from drugprot.core.extraction import answer_block
from drugprot.tools.cli import main as cli_main
from tests.evaluation.extraction_traces import HAND_RUN, THINK, episode, extraction_trace, hand_run, write_v1_run

PER_CLASS = """\
Per class (rollouts pooled)
     type                          P      R     F1  support  predicted
  A  INDIRECT-DOWNREGULATOR    0.000      -  0.000        0          1
  B  INDIRECT-UPREGULATOR          -      -      -        0          0
  C  DIRECT-REGULATOR              -      -      -        0          0
  D  ACTIVATOR                     -      -      -        0          0
  E  INHIBITOR                 0.667  0.667  0.667        3          3
  F  AGONIST                       -      -      -        0          0
  G  AGONIST-ACTIVATOR             -      -      -        0          0
  H  AGONIST-INHIBITOR             -      -      -        0          0
  I  ANTAGONIST                    -      -      -        0          0
  J  PRODUCT-OF                    -      -      -        0          0
  K  SUBSTRATE                 1.000  0.333  0.500        3          1
  L  SUBSTRATE_PRODUCT-OF          -      -      -        0          0
  M  PART-OF                       -      -      -        0          0
  (- = undefined: no prediction or no gold of that type; macro-F1 counts it as 0)
"""


def test_the_text_report_of_an_extraction_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = hand_run(tmp_path / "hand")
    assert cli_main(["report", str(run_dir), "--bootstrap", "100"]) == 0
    assert (
        capsys.readouterr().out
        == f"""\
drugprot report: hand (verifiers v1 traces.jsonl)
  {run_dir}
  model test-model | split train | mode extraction | limit none
  versions: env unknown | prompt unknown | scorer unknown | data unknown
  reward: unknown
  2 abstracts, 6 rollouts (3 per abstract), 2 gold relations
  setting: extraction: one task per abstract, the model lists every relation; every chemical-gene pair of the \
abstract is scored (a listed triple not in the gold is a false positive, an unlisted gold triple a false negative; no \
relation is the absence of a line). NOT comparable with BioCreative VII: INCOMPLETE RUN: 2 of the 3,500 abstracts of \
hub:OpenMed/drugprot-parquet[train] (one extraction task per abstract) (comparable needs a whole official split, every \
task (no limit) and, in pair mode, negatives=all with every gold relation a candidate).
  ceiling (candidates: same-sentence chemical-gene mention pairs, gold or not): 2 gold relations in this run's \
2 abstracts, 2 on candidates, 0 outside them (across sentences: the prompt says relations hold within one) (max \
recall 1.000, max F1 1.000)

Rewards (accuracy = the abstract's F1 over (chemical, gene, type) triples)
  mean accuracy              0.417  [0.333, 0.500]
  mean@3 (per abstract)      0.417
  exact match (rollouts)     0.333
  exact match (majority)     0.500
  mean reward                0.479

Official DrugProt metric (13 types, every chemical-gene pair of each abstract, NO-RELATION never scored)
                              P      R      F1      TP     FP     FN   F1 95% interval
  micro, rollouts pooled      0.600  0.500  0.545      3      2      3  [0.000, 0.600]
  micro, majority/abstract    1.000  0.500  0.667      1      0      1
  macro-F1 over the 13 types 0.090  [0.000, 0.090]; over the 2 types with gold support 0.583
  majority/abstract: the triples listed by more than half of an abstract's answering rollouts (--export-tsv)
  [low, high]: 95% percentile bootstrap over abstracts (all rollouts of an abstract together), 100 resamples of \
the 2 abstracts, seed 0 (--bootstrap N, --bootstrap-seed S; --bootstrap 0: none)
  calibration: micro-F1 F = 0.545 [0.000, 0.600]; F* (the 3-rollout vote-share F1) = 0.667 [0.000, 0.800] at vote \
share >= 0.667 (coarse below 4 rollouts per task); micro-F1 gains from stating a relation that is right with p > F*/2 \
= 0.333
    the utility's threshold is there at fp_cost = F(1+fn_cost)/(2-F) at F = F*: 1.000 [0.000, 1.333] with fn_cost 1 \
(the default: the run recorded no valid costs) (no recipe value from this run: 2 tasks (needs >= 200); 3 rollouts per \
task (needs the recipe's group size, 8); the F* interval 0.800 wide (needs <= 0.15); probe as \
docs/training/before-you-train.md shows)
    at stake between calibrations (F*, F or the default cost): <= 0.01 F1 near F* 0.4, about 0.05 at F* 0.17 (the \
sandbox: evidence/README.md)
  step-0 forecast (groups of 3 rollouts, the recorded rewards): 0 of 2 tasks (0.0%) earn equal rewards on every \
rollout: zero advantage, dropped by prime-rl
    at a smaller group size (subsets of the recorded rollouts) 2: 0.0%; all at the probe's one sampling temperature \
(another temperature needs another probe)
    tokens that teach: 960 of 960 prompt+completion tokens per rollout; 122,880 per step of 128 rollouts (the \
recipe's batch_size)
    power, two independent evals (different tasks): SE of micro-F1 0.1531 over 2 abstracts; two evals of 2 tasks \
detect ΔF1 0.606 with 80% power (5% two-sided)
      ΔF1 0.02 needs ~1,839 abstracts, ~1,839 tasks at 3 rollouts per task (90% interval 479-467,655 tasks, from the \
SE's own uncertainty); more than the validation split's 750 abstracts
      two runs on the same tasks (drugprot report A B) are compared paired: that report prints the ΔF1 its paired \
interval detects

{PER_CLASS}
Answer quality
  no answer: 2 of 6 rollouts (33.3%): no_relations_block 1, reasoning_incomplete 1
  rejected lines (never scored): malformed 0, unknown id 1, wrong entity type 0, duplicate 0 (in 1 rollouts)
  relations listed and scored: 5 (0.8 per rollout)
  format ok: 3 of 6 (50.0%); not ok: unknown_id 1, no_relations_block 1, reasoning_incomplete 1
Tokens per rollout: input 900.0, output 60.0 (max 60); total 5,400 in, 360 out; 0 rollouts stopped at max_tokens \
(finish_reason=length)
"""
    )


def test_two_extraction_runs_side_by_side(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first = hand_run(tmp_path / "hand")
    perfect = [episode(extraction_trace(p, g, THINK + answer_block(sorted(g.relations)))) for p, g, _ in HAND_RUN]
    second = write_v1_run(tmp_path / "perfect", perfect)
    assert cli_main(["report", str(first), str(second), "--bootstrap", "100"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("drugprot report: comparison of extraction runs\n")
    for line in (
        "  micro F1                         0.545    1.000",
        "  micro F1 (majority)              0.667    1.000",
        "  exact match                      0.333    1.000",
        "  no-answer rate                   0.333    0.000",
        "  F1 A INDIRECT-DOWNREGULATOR      0.000        -",  # "-": neither predicted nor gold, as in one run's table
        "  F1 B INDIRECT-UPREGULATOR            -        -",
        "  F1 E INHIBITOR                   0.667    1.000",
        "Paired comparison [2] - [1] over the same 2 abstracts (matched by PMID)",
        "  delta micro F1              +0.455  [+0.000, +0.455]  p = 0.5",
        "  exact-match test (abstracts whose majority triples are exactly the gold): in [1] only 0, in [2] only 1, "
        "both 1, neither 0",
        "  paired exact-match test: exact sign-flip test of the tasks right in one run only, abstracts as units, "
        "2 abstracts: p = 1",
    ):
        assert line in out.splitlines(), line
