"""The official scorer's recipe in docs/evaluation/report.md: what it installs, and (given a checkout of the scorer)
that the scorer prints the report's figures on ``--export-tsv`` / ``--export-gold`` output.

The scorer (tonifuc3m/drugprot-evaluation-library) is third-party code and is never shipped here: the end-to-end
test runs when ``DRUGPROT_OFFICIAL_SCORER`` names a checkout of it, and is skipped otherwise.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from drugprot.tools.cli import main as cli_main
from tests.bounds import HANG_S

DOCS = Path(__file__).resolve().parents[1] / "docs" / "evaluation" / "report.md"


def scorer_recipe() -> str:
    """The shell block under "Running the official scorer on a run"."""
    section = DOCS.read_text(encoding="utf-8").split("## Running the official scorer on a run", 1)[1]
    return section.split("```bash\n", 1)[1].split("```", 1)[0]


def test_the_recipe_installs_what_the_scorer_imports_on_python_3_11() -> None:
    # the scorer's requirements.txt pins numpy 1.20.2 & co., which have no Python 3.11 wheels
    assert scorer_recipe() == (
        "drugprot report RUN_DIR --export-tsv pred.tsv --export-gold gold/ [--data-path DATA]\n"
        "git clone https://github.com/tonifuc3m/drugprot-evaluation-library && cd drugprot-evaluation-library\n"
        "uv run --no-project --python 3.11 --with pandas --with scikit-learn \\\n"
        "  python src/main.py -g ../gold/gold_relations.tsv -p ../pred.tsv -e ../gold/entities.tsv "
        "--pmids ../gold/pmids.txt\n"
    )


def test_the_official_scorer_prints_the_report_s_majority_figures(
    tmp_path: Path, fixture_jsonl: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    checkout = os.environ.get("DRUGPROT_OFFICIAL_SCORER")
    if not checkout:
        pytest.skip("DRUGPROT_OFFICIAL_SCORER (a checkout of tonifuc3m/drugprot-evaluation-library) is not set")
    pytest.importorskip("pandas")
    pytest.importorskip("sklearn")
    pred, gold = tmp_path / "pred.tsv", tmp_path / "gold"
    argv = ["baseline", "lexical", "--data-path", str(fixture_jsonl), "--negatives", "all", "--bootstrap", "0"]
    assert cli_main([*argv, "--export-tsv", str(pred), "--export-gold", str(gold)]) == 0
    assert "  micro, majority per task    0.500  0.571  0.533     16     16     12" in capsys.readouterr().out
    done = subprocess.run(
        [sys.executable, "src/main.py", "-g", str(gold / "gold_relations.tsv"), "-p", str(pred)]
        + ["-e", str(gold / "entities.tsv"), "--pmids", str(gold / "pmids.txt")],
        cwd=checkout,
        capture_output=True,
        text=True,
        check=True,
        timeout=HANG_S,
    )
    printed = dict(re.findall(r"^(p_micro|r_micro|f1_micro)=(\S+)$", done.stdout, flags=re.M))
    assert printed == {"p_micro": "0.5", "r_micro": "0.571", "f1_micro": "0.533"}
