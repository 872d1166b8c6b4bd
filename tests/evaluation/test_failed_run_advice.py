"""A failed run whose ``-m`` was a verifiers 0.3.x endpoint alias: the report's FAILED RUN banner says what to type
on verifiers 0.4 (``drugprot.envs.first_contact.legacy_alias_fix``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from drugprot.tools.cli import main as cli_main
from tests.evaluation.traces import good_line, provider_error, write_run


def run_with_model(directory: Path, model: str, lines: list[str]) -> Path:
    run_dir = write_run(directory, lines)
    config = run_dir / "configs" / "resolved" / "eval.json"
    config.write_text(json.dumps({**json.loads(config.read_text(encoding="utf-8")), "model": model}), encoding="utf-8")
    return run_dir


def test_a_failed_run_of_the_old_alias_names_the_model_id_to_type(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    refused = 'upstream 404: {"error": "model trinity-mini does not exist"}'
    run_dir = run_with_model(tmp_path / "old-habit", "trinity-mini", [provider_error(t, refused) for t in ("T1", "T3")])
    assert cli_main(["report", str(run_dir)]) == 3
    assert capsys.readouterr().out.splitlines()[:5] == [
        "drugprot report: FAILED RUN old-habit: 2 of 2 rollouts (100.0%) errored without an answer (ProviderError 2)",
        f"  first error: ProviderError: {refused}",
        "  The figures below measure the failure, not the model. Check the endpoint, model name and API key (or the "
        "harness log), then re-run.",
        "  `-m trinity-mini` is an endpoint alias of verifiers 0.3.x (configs/endpoints.toml), which verifiers 0.4 "
        "sends as the model id: for its endpoint type `-m arcee/trinity-mini`.",
        "",
    ]


def test_no_advice_for_a_model_id_or_a_run_that_did_not_fail(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    failed = run_with_model(tmp_path / "id", "arcee/trinity-mini", [provider_error("T1"), provider_error("T3")])
    assert cli_main(["report", str(failed)]) == 3
    assert "endpoint alias" not in capsys.readouterr().out
    fine = run_with_model(tmp_path / "fine", "trinity-mini", [good_line("T5")])
    assert cli_main(["report", str(fine)]) == 0
    assert "endpoint alias" not in capsys.readouterr().out
