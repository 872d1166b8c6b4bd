"""``drugprot report`` (``drugprot.evaluation.report``): exit codes, options, files written, a real vf-eval run.

The traces follow the real ``traces.jsonl`` layout of the verifiers v1 CLI (``tests/evaluation/traces.py``).
"""

from __future__ import annotations

import json
import sys
from fractions import Fraction
from pathlib import Path

import pytest

import drugprot
from drugprot.core.extras import install_hint
from drugprot.core.labels import RELATION_NAMES
from drugprot.core.official_tsv import read_relations_tsv
from drugprot.core.prompts import PROMPT_VERSION
from drugprot.core.rewards import Reward
from drugprot.core.scoring import SCORER_VERSION
from drugprot.evaluation.export import export_tsv
from drugprot.evaluation.records import EXIT_FAILED_RUN, INVALID
from drugprot.evaluation.runs import load_run
from drugprot.modes.pair.summary import summarize
from drugprot.tools.cli import main as cli_main
from drugprot.tools.serve import OpenAIServer, count_tokens, scripted_responder
from tests.conftest import FixtureRun
from tests.e2e import run_vf_eval
from tests.evaluation.traces import (
    PMID,
    close,
    good_line,
    multilabel_run,
    mutated,
    provider_error,
    put,
    rollouts_run,
    write_run,
)
from tests.fixtures import FIXTURE_JSONL


def test_json_has_the_documented_keys(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["report", "--json", str(multilabel_run(tmp_path))]) == 0
    payload = json.loads(capsys.readouterr().out)
    for key in (
        "n_tasks",
        "n_rollouts",
        "accuracy",
        "micro_precision",
        "micro_recall",
        "micro_f1",
        "macro_f1",
        "per_class",
        "invalid_rate",
        "confusion",
        "majority",
        "tokens",
        "setting",
        "calibration",
        "forecast",
    ):
        assert key in payload
    assert list(payload["per_class"]) == list(RELATION_NAMES)


def test_json_output_is_strict_even_for_extreme_values(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    huge = [mutated(put("reward", 1e308)), mutated(put("reward", 1e308)), mutated(put("reward", float("nan")))]
    assert cli_main(["report", "--json", str(write_run(tmp_path / "run", huge))]) == 0

    def refuse(constant: str) -> None:
        raise AssertionError(f"non-standard JSON constant {constant}")

    payload = json.loads(capsys.readouterr().out, parse_constant=refuse)
    assert (payload["mean_reward"], payload["n_rollouts"], payload["lines"]["corrupt"]) == (1e308, 2, 1)


def test_a_run_where_most_rollouts_errored_is_flagged_first_and_exits_3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = write_run(tmp_path / "nokey", [provider_error("T1"), provider_error("T3"), good_line("T5")])
    tsv = tmp_path / "pred.tsv"
    assert cli_main(["report", str(run_dir), "--export-tsv", str(tsv)]) == EXIT_FAILED_RUN == 3
    captured = capsys.readouterr()
    assert captured.out.splitlines()[:3] == [
        "drugprot report: FAILED RUN nokey: 2 of 3 rollouts (66.7%) errored without an answer (ProviderError 2)",
        "  first error: ProviderError: upstream 401: missing API key",
        "  The figures below measure the failure, not the model. Check the endpoint, model name and API key (or the "
        "harness log), then re-run.",
    ]
    assert captured.err.splitlines() == [
        "not written (--export-tsv): the run failed; pass --allow-errors to write them anyway",
        "nokey: FAILED RUN, 2 of 3 rollouts errored without an answer (ProviderError 2); exit 3 (--allow-errors "
        "reports it with exit 0)",
    ]
    assert not tsv.exists()
    assert cli_main(["report", str(run_dir), "--export-tsv", str(tsv), "--allow-errors"]) == 0
    assert tsv.read_text(encoding="utf-8") == f"{PMID}\tINHIBITOR\tArg1:T5\tArg2:T2\n"
    assert capsys.readouterr().out.startswith("drugprot report: FAILED RUN nokey")
    assert cli_main(["report", "--json", str(run_dir)]) == 3
    payload = json.loads(capsys.readouterr().out)
    assert list(payload)[:2] == ["failed", "errored"]
    assert payload["errored"] == {
        "failed": True,
        "rollouts": 2,
        "rate": 2 / 3,
        "types": {"ProviderError": 2},
        "example": "ProviderError: upstream 401: missing API key",
    }
    assert payload["invalid_reasons"] == {"rollout_error: ProviderError": 2}


def test_plot_writes_a_png(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    png = tmp_path / "confusion.png"
    assert cli_main(["report", str(multilabel_run(tmp_path)), str(rollouts_run(tmp_path)), "--plot", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_without_matplotlib_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert cli_main(["report", str(multilabel_run(tmp_path)), "--plot", str(tmp_path / "x.png")]) == 2
    assert f"--plot needs matplotlib (the drugprot[report] extra): {install_hint('report')}" in capsys.readouterr().err
    assert cli_main(["report", str(multilabel_run(tmp_path))]) == 0  # everything else works without it


def test_report_on_a_real_vf_eval_run(tmp_path: Path, fixture_run: FixtureRun) -> None:
    """The shared run (tests/conftest.py): every pair answered with reasoning + its first gold letter, except
    FIXTURE_RUN_REPLIES: 4 wrong, 4 invalid (2 without reasoning, 1 cut off while thinking, 1 without a box), and 1
    right whose format fails (two boxed answers)."""
    run_dir = fixture_run.run_dir
    got = summarize(load_run(run_dir))
    assert (got["n_tasks"], got["n_rollouts"], got["rescored"], got["lines"]["corrupt"]) == (27, 27, 0, 0)
    assert (got["run"]["split"], got["run"]["limit"], got["setting"]["mode"]) == ("train", "-n 27", "positive-only")
    assert got["run"]["versions"] == {
        "env": drugprot.__version__,
        "prompt": PROMPT_VERSION,
        "scorer": SCORER_VERSION,
        "data": "file",
        "reward": Reward().describe(),
    }
    # 19 right answers; 28 gold relations; FP: the 4 wrong types; FN: E of T1:T2, the 4 wrong and 4 invalid.
    assert close(got["accuracy"], Fraction(19, 27))
    assert got["micro_counts"] == {"tp": 19, "fp": 4, "fn": 9}
    assert close(got["micro_precision"], Fraction(19, 23))
    assert close(got["micro_recall"], Fraction(19, 28))
    assert close(got["micro_f1"], Fraction(38, 51))
    # F1 1 for A C D G J M; B 1/2 (1 TP, 2 invalid); E 1/2; F and K 3/4; I 2/5 (1 TP, 1 FP, 2 invalid); H and L 0.
    assert close(got["macro_f1"], Fraction(89, 130))
    assert close(got["per_class"]["INDIRECT-UPREGULATOR"]["f1"], Fraction(1, 2))
    assert close(got["per_class"]["ANTAGONIST"]["f1"], Fraction(2, 5))
    assert close(got["invalid_rate"], Fraction(4, 27))
    assert got["invalid_reasons"] == {"no_boxed_answer": 1, "reasoning_incomplete": 3}
    assert close(got["format_rate"], Fraction(22, 27))
    assert sorted(got["format_reasons"].items()) == [
        ("no_boxed_answer", 1),
        ("reasoning_incomplete", 3),
        ("several_boxed_answers", 1),
    ]
    # the default reward, utility + 1/8 x format: (19 TP - 0.5 x 4 FP - 9 FN) / 27 + 1/8 x 22 / 27
    assert close(got["mean_reward"], (19 - Fraction(1, 2) * 4 - 9) / 27 + Fraction(22, 27 * 8))
    replies = fixture_run.replies.values()
    outputs = sum(count_tokens(r.content) + count_tokens(r.reasoning_content) for r in replies)
    assert (got["tokens"]["rollouts_with_usage"], got["tokens"]["total_output"]) == (27, outputs)
    labels, matrix = got["confusion"]["columns"], got["confusion"]["matrix"]
    cells = {(labels[i], labels[j]): v for i, row in enumerate(matrix) for j, v in enumerate(row) if v}
    off_diagonal = {cell: v for cell, v in cells.items() if cell[0] != cell[1]}
    assert off_diagonal == {
        ("SUBSTRATE", "INHIBITOR"): 1,
        ("AGONIST", "ANTAGONIST"): 1,
        ("INDIRECT-UPREGULATOR", INVALID): 2,
        ("ANTAGONIST", INVALID): 2,
        ("SUBSTRATE_PRODUCT-OF", "SUBSTRATE"): 1,
        ("AGONIST-INHIBITOR", "AGONIST"): 1,
    }
    path = tmp_path / "pred.tsv"
    assert export_tsv(load_run(run_dir), path) == 23
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[:3] == [
        "90000001\tSUBSTRATE\tArg1:T1\tArg2:T2",
        "90000001\tINHIBITOR\tArg1:T3\tArg2:T4",
        "90000001\tSUBSTRATE\tArg1:T5\tArg2:T4",
    ]


def test_a_real_vf_eval_run_with_a_wrong_api_key_is_flagged_and_exits_3(
    tmp_path: Path, fixture_jsonl: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with OpenAIServer(scripted_responder({}), api_key="the-right-key") as server:
        base_url = server.base_url
        extra = ["--env.taskset.data-path", str(fixture_jsonl), "--env.taskset.split", "train"]
        run_dir = run_vf_eval(
            "drugprot",
            server.base_url,
            tmp_path / "outputs",
            n=2,
            extra_args=extra,
            api_key="a-wrong-key",
            require_ok=False,
            stderr_file=tmp_path / "vf-eval.log",
        )
    # The harness says once, on the first model call, what is wrong and how to fix it (drugprot.envs.first_contact)
    log = (tmp_path / "vf-eval.log").read_text(encoding="utf-8")
    assert log.count(f"drugprot: the model endpoint {base_url} rejected the API key (HTTP 401: ") == 1
    assert "the key is read from $" in log and "Fix: export " in log
    # vf-eval itself exits 0 here; the report does not let the run pass as a result.
    assert cli_main(["report", str(run_dir), "--export-tsv", str(tmp_path / "pred.tsv")]) == 3
    banner, first_error = capsys.readouterr().out.splitlines()[:2]
    assert banner == (
        f"drugprot report: FAILED RUN {run_dir.name}: 2 of 2 rollouts (100.0%) errored without an answer "
        "(ProviderError 2)"
    )
    assert first_error.startswith("  first error: ProviderError: ")
    assert "invalid or missing API key" in first_error  # the server's own message, relayed
    assert not (tmp_path / "pred.tsv").exists()


def test_the_report_shows_95_percent_intervals(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = multilabel_run(tmp_path, pmids=("1001", "1002", "1003"))
    assert cli_main(["report", "--json", "--bootstrap", "500", "--seed", "3", str(run_dir)]) == 0
    intervals = json.loads(capsys.readouterr().out)["intervals"]
    assert {k: intervals[k] for k in ("level", "abstracts", "tasks", "resamples", "seed")} == {
        "level": 0.95,
        "abstracts": 3,
        "tasks": 7,
        "resamples": 500,
        "seed": 3,
    }
    assert intervals["method"] == "percentile bootstrap over abstracts"
    # The estimates are the report's own figures; 4/11 micro-F1 and 3/7 accuracy (see the multilabel test).
    assert close(intervals["micro_f1"]["estimate"], Fraction(4, 11))
    assert close(intervals["accuracy"]["estimate"], Fraction(3, 7))
    for name in ("accuracy", "micro_f1", "macro_f1"):
        assert 0.0 <= intervals[name]["low"] <= intervals[name]["estimate"] <= intervals[name]["high"] <= 1.0
    expected = summarize(load_run(run_dir), resamples=500, seed=3)["intervals"]
    assert intervals == expected  # the seed fixes them

    assert cli_main(["report", "--bootstrap", "500", "--seed", "3", str(run_dir)]) == 0
    out = capsys.readouterr().out
    acc, micro = intervals["accuracy"], intervals["micro_f1"]
    assert f"  mean over rollouts         0.429  [{acc['low']:.3f}, {acc['high']:.3f}]" in out
    assert f"micro, rollouts pooled      0.500  0.286  0.364      2      2      5  [{micro['low']:.3f}, " in out
    assert (
        "95% percentile bootstrap over abstracts (all pairs and rollouts of an abstract together), 500 resamples of "
        "the 3 abstracts (7 tasks), seed 3"
    ) in out


def test_bootstrap_zero_disables_the_intervals(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["report", "--json", "--bootstrap", "0", str(multilabel_run(tmp_path))]) == 0
    assert json.loads(capsys.readouterr().out)["intervals"] is None
    assert cli_main(["report", "--bootstrap", "0", str(multilabel_run(tmp_path))]) == 0
    out = capsys.readouterr().out
    metrics = out.split("Accuracy")[1].split("Per class")[0]
    assert "95%" not in out and "[" not in metrics and "mean over rollouts         0.429\n" in metrics


@pytest.mark.parametrize("value", ["-1", "many", "1.5"])
def test_a_bad_bootstrap_count_is_a_usage_error(tmp_path: Path, value: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        cli_main(["report", "--bootstrap", value, str(multilabel_run(tmp_path))])
    assert exc.value.code == 2
    assert "expected a whole number of resamples >= 0" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["report", "demo"])
def test_more_bootstraps_than_the_maximum_are_refused_before_any_work(
    tmp_path: Path, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """100,000,000 resamples once ran unbounded (memory toward 3 GiB); refused when the command line is read (the run
    folder is not even looked at)."""
    argv = [command, "--bootstrap", "100000001", *([str(tmp_path / "missing")] if command == "report" else [])]
    with pytest.raises(SystemExit) as exc:
        cli_main(argv)
    assert exc.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"drugprot {command}: error: argument --bootstrap: at most 100,000 resamples, got 100000001: beyond that the "
        "bootstrap's own Monte Carlo error of a 95% bound is under 0.0005 in probability, and every resample costs "
        "time and memory"
    )
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(SystemExit):  # more digits than Python converts: shortened, not 5,000 characters of them
        cli_main([*argv[:2], "9" * 5000, *argv[3:]])
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"drugprot {command}: error: argument --bootstrap: expected a whole number of resamples >= 0 (0: no "
        f"intervals), got '{'9' * 37}... (5000 characters)'"
    )


@pytest.mark.parametrize("command", ["report", "baseline"])
def test_help_names_the_bootstrap_options(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        cli_main([command, "--help"])
    out = capsys.readouterr().out
    assert exc.value.code == 0
    # the bootstrap resamples abstracts (an abstract's pairs are not independent), never single tasks
    assert (
        "--bootstrap N resamples of the abstracts (each with all its tasks and rollouts) for the 95% intervals and "
        "the paired comparison (default 1000; 0: no intervals; at most 100,000)" in " ".join(out.split())
    )
    assert "resamples of the tasks" not in " ".join(out.split())
    assert "--bootstrap-seed S" in out
    # --seed is the old spelling (report: the bootstrap seed, baseline: the sampling seed): accepted, not shown
    assert "--seed" not in out.replace("--bootstrap-seed", "").replace("--sampling-seed", "")
    assert ("--sampling-seed S" in out) == (command == "baseline")


def test_an_extraction_run_is_reported_in_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.evaluation.extraction_traces import hand_run

    tsv = tmp_path / "pred.tsv"
    assert cli_main(["report", "--json", "--bootstrap", "0", "--export-tsv", str(tsv), str(hand_run(tmp_path))]) == 0
    captured = capsys.readouterr()
    payload = json.loads(captured.out)
    assert (payload["setting"]["mode"], payload["n_tasks"], payload["micro_counts"]) == (
        "extraction", 2, {"tp": 3, "fp": 2, "fn": 3}
    )  # fmt: skip
    assert "confusion" not in payload and list(payload["per_class"]) == list(RELATION_NAMES)
    assert captured.err == f"wrote 1 predictions to {tsv}\n"


def test_the_confusion_plot_is_refused_for_an_extraction_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.evaluation.extraction_traces import hand_run

    png = tmp_path / "confusion.png"
    assert cli_main(["report", "--plot", str(png), str(hand_run(tmp_path / "run"))]) == 2
    assert capsys.readouterr().err == (
        "drugprot report: error: --plot draws the confusion matrix of pair-mode answers; an extraction run has none "
        "(use --plot-classes for its per-class chart)\n"
    )
    assert not png.exists()
    assert cli_main(["report", "--plot-classes", str(png), "--bootstrap", "0", str(tmp_path / "run")]) == 0
    assert png.read_bytes().startswith(b"\x89PNG")
    assert capsys.readouterr().err == f"wrote the per-class chart to {png}\n"


def test_report_on_a_real_vf_eval_extraction_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A real ``vf-eval drugprot --env.taskset.mode extraction -r 2`` (``eval`` on 0.3.x) against the local server,
    with ``tests/core/test_extraction.py``'s scripted replies (perfect unless said): 90000001 finds 2 of its 4
    relations, 90000002 1 of 3 plus a line with an unknown id, 90000004 lists a relation where there is none,
    90000005 answers without reasoning (no answer; 5 relations missed). Per abstract (each rollout the same
    reply): TP 19, FP 1, FN 9; pooled over the two rollouts twice that."""
    from tests.envs.test_extraction import e2e_replies
    from tests.fixtures import FIXTURE_JSONL

    questions, replies = e2e_replies()
    with OpenAIServer(scripted_responder({q.prompt: replies[q.key] for q in questions})) as server:
        extra = ["--env.taskset.data-path", str(FIXTURE_JSONL), "--env.taskset.split", "train",
                 "--env.taskset.mode", "extraction"]  # fmt: skip
        run_dir = run_vf_eval("drugprot", server.base_url, tmp_path / "out", n=9, rollouts=2, timeout=900,
                              extra_args=extra)  # fmt: skip
    tsv = tmp_path / "pred.tsv"
    assert cli_main(["report", str(run_dir), "--json", "--bootstrap", "0", "--export-tsv", str(tsv)]) == 0
    got = json.loads(capsys.readouterr().out)
    assert (got["setting"]["mode"], got["n_tasks"], got["n_rollouts"], got["rescored"]) == ("extraction", 9, 18, 0)
    assert got["run"]["versions"] == {
        "env": drugprot.__version__, "prompt": PROMPT_VERSION, "scorer": SCORER_VERSION, "data": "file",
        "reward": Reward().describe(),
    }  # fmt: skip
    assert got["micro_counts"] == {"tp": 38, "fp": 2, "fn": 18}
    assert got["majority"]["micro_counts"] == {"tp": 19, "fp": 1, "fn": 9}
    assert close(got["majority"]["micro_f1"], Fraction(19, 24)) and close(got["micro_f1"], Fraction(19, 24))
    # the recorded accuracy rewards (per-document F1 on the 1/64 grid: 2/3 -> 43/64); the five perfect abstracts: 1
    accuracy = (Fraction(43, 64) + Fraction(1, 2) + 5) / 9
    assert close(got["accuracy"], accuracy) and close(got["format_rate"], Fraction(7, 9))  # not 90000002, 90000005
    # the default reward: utility (19 TP - 0.5 x (1 FP + 1 unknown id) - 9 FN per 9 abstracts) + 1/8 x format
    assert close(got["mean_reward"], (19 - Fraction(1, 2) * 2 - 9) / 9 + Fraction(7, 72))
    assert got["quality"]["rejected_lines"]["unknown_id"] == 2 and got["quality"]["reasoning_incomplete"] == 2
    assert close(got["exact_match"], Fraction(5, 9)) and close(got["invalid_rate"], Fraction(1, 9))
    assert got["lines"]["corrupt"] == 0 and got["errored"]["rollouts"] == 0
    assert len(read_relations_tsv(tsv)) == 20  # the 19 right triples and the one on 90000004


@pytest.mark.skipif(
    __import__("importlib").util.find_spec("verifiers.legacy") is None,
    reason="verifiers >= 0.4 has no legacy (v0) stack",
)
def test_report_on_a_legacy_vf_eval_extraction_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The legacy ``vf-eval drugprot -m trinity-mini -a '{"mode": "extraction", ...}' -s`` (verifiers 0.3.x) on the
    same scripted replies, one rollout each: its ``results.jsonl`` gives the per-abstract counts of the v1 run."""
    from tests.e2e import run_legacy_vf_eval, write_endpoints_toml
    from tests.envs.test_extraction import e2e_replies
    from tests.fixtures import FIXTURE_JSONL

    questions, replies = e2e_replies()
    with OpenAIServer(scripted_responder({q.prompt: replies[q.key] for q in questions})) as server:
        write_endpoints_toml(tmp_path, "trinity-mini", "trinity-mini", server.base_url)
        run_dir = run_legacy_vf_eval(
            "drugprot", "trinity-mini", tmp_path, tmp_path / "outputs", n=9, timeout=900,
            env_args={"split": "train", "data_path": str(FIXTURE_JSONL), "mode": "extraction"},
        )  # fmt: skip
    assert cli_main(["report", str(run_dir), "--json", "--bootstrap", "0"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert (got["run"]["source"], got["n_tasks"], got["n_rollouts"], got["rescored"]) == (
        "legacy vf-eval results.jsonl", 9, 9, 0
    )  # fmt: skip
    assert got["micro_counts"] == got["majority"]["micro_counts"] == {"tp": 19, "fp": 1, "fn": 9}
    assert close(got["accuracy"], (Fraction(43, 64) + Fraction(1, 2) + 5) / 9)  # 2/3 on the 1/64 grid, as on v1
    assert got["quality"]["rejected_lines"]["unknown_id"] == 1 and got["quality"]["reasoning_incomplete"] == 1


def test_a_failed_extraction_run_is_flagged_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.evaluation.extraction_traces import GOLD_100, GOLD_200, episode, extraction_trace, write_v1_run

    error = [{"type": "ProviderError", "message": "upstream 401: missing API key"}]
    lines = [
        episode(extraction_trace(pmid, gold, None, errors=error))
        for pmid, gold in (("100", GOLD_100), ("200", GOLD_200))
    ]
    run_dir = write_v1_run(tmp_path / "failed", lines)
    tsv = tmp_path / "pred.tsv"
    assert cli_main(["report", str(run_dir), "--export-tsv", str(tsv), "--bootstrap", "0"]) == EXIT_FAILED_RUN
    captured = capsys.readouterr()
    assert captured.out.startswith(
        "drugprot report: FAILED RUN failed: 2 of 2 rollouts (100.0%) errored without an answer (ProviderError 2)\n"
        "  first error: ProviderError: upstream 401: missing API key\n"
    )
    assert not tsv.exists() and "not written (--export-tsv): the run failed" in captured.err


@pytest.mark.parametrize("command", ["report", "baseline"])
@pytest.mark.parametrize("value", ["-1", "seven"])
def test_a_bad_bootstrap_seed_is_a_usage_error_before_any_work(
    tmp_path: Path, command: str, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """numpy refuses a negative seed with a ValueError; the option refuses it first, in one error line."""
    baseline = ["lexical", "--data-path", str(FIXTURE_JSONL)]
    target = baseline if command == "baseline" else [str(multilabel_run(tmp_path))]
    with pytest.raises(SystemExit) as exc:
        cli_main([command, *target, "--bootstrap-seed", value])
    captured = capsys.readouterr()
    assert (exc.value.code, captured.out) == (2, "")
    assert captured.err.endswith(
        f"drugprot {command}: error: argument --bootstrap-seed: expected a whole number >= 0 as the bootstrap's "
        f"seed, got '{value}'\n"
    )
