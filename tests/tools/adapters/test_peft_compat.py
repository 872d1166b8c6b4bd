"""docs/adapters.md's PEFT table: what the installed transformers/PEFT pair does with prime-rl's adapter.

Each row of the table is this module's measurement on the tiny AFMoE, in a venv with that pair installed:
plain ``PeftModel.from_pretrained`` on the adapter as prime-rl writes it, the naive rewrite (``experts``
dropped from ``target_modules``, keys as written or with PEFT's prefix), and drugprot's helper
(``apply_adapter``, what ``load_model_with_adapter`` and ``drugprot predict`` use). The test measures the
installed pair and asserts the table's row for it says the same. A pair with no row is skipped, the reason
giving the row to add:

    .venv-adapters/bin/python -m pytest tests/tools/adapters/test_peft_compat.py -rs

A cell reads "correct" when the logits are within ``conftest.LOGITS_TOL`` of the reference (the test's own
``W + scale * B @ A``), "no effect" when they equal the base model's, and otherwise counts the modules whose
LoRA ``verify_deltas`` finds missing or wrong.
"""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from drugprot.tools.adapters import AdapterError, AdapterNotAppliedError
from drugprot.tools.adapters.layout import collect_lora_modules
from drugprot.tools.adapters.peft_loading import apply_adapter
from drugprot.tools.adapters.peft_verify import verify_deltas
from drugprot.tools.adapters.safetensors_files import read_safetensors_header

ROOT = Path(__file__).resolve().parents[3]
DOC = ROOT / "docs" / "adapters.md"
SECTION = "## What plain PEFT does with it"
# The first words of each refusal PEFT gives for 'experts' in target_modules, as the table shows them.
REFUSALS = {
    "Target module AfmoeExperts(": "`ValueError: Target module AfmoeExperts(...) is not supported`",
    "Trying to wrap an `nn.Parameter` of layer": (
        "`ValueError: Trying to wrap an nn.Parameter of layer '…experts' of type AfmoeExperts`"
    ),
}


def _loaded(model: Any, adapter: Path, reference: Any, base: Any, kit: SimpleNamespace) -> str:
    """The cell for a load that did not raise: correct, no effect, or how many modules' LoRA is off."""
    logits = kit.logits(model)
    if float((logits - base).abs().max()) == 0.0:
        return "loads, **no effect** (logits equal the base)"
    change = float((logits - reference).abs().max())
    if change <= kit.LOGITS_TOL:
        return "correct"
    adapter_file = adapter / "adapter_model.safetensors"
    modules = collect_lora_modules(read_safetensors_header(adapter_file))
    try:
        verify_deltas(model, modules, adapter_file, kit.SCALE)
    except AdapterNotAppliedError as exc:
        more = re.search(r"\(and (\d+) more modules\)", str(exc))
        wrong = 1 + (int(more[1]) if more else 0)
        return f"loads, the LoRA of {wrong} of {len(modules)} modules **silently lost** (Δ {change:.2g})"
    return f"loads, **wrong** (Δ {change:.2g}) though every module's delta checks"


def _plain(directory: Path, adapter: Path, reference: Any, base: Any, kit: SimpleNamespace, load_base: Any) -> str:
    from peft import PeftModel

    try:
        model = PeftModel.from_pretrained(load_base(), str(directory))
    except ValueError as exc:
        found = [cell for start, cell in REFUSALS.items() if str(exc).startswith(start)]
        return found[0] if found else f"`ValueError: {str(exc).splitlines()[0]}`"
    return _loaded(model, adapter, reference, base, kit)


def _helper(adapter: Path, reference: Any, kit: SimpleNamespace, load_base: Any) -> str:
    try:
        model, report = apply_adapter(load_base(), adapter)
    except AdapterError as exc:
        needs = re.search(r"needs peft >= [\d.]+", str(exc))
        return f"refused (`{needs[0] if needs else type(exc).__name__}`)"
    change = float((kit.logits(model) - reference).abs().max())
    verdict = "correct" if change <= kit.LOGITS_TOL else f"**wrong** (Δ {change:.2g})"
    return f"{verdict}, {report.modules_verified} modules verified"


def _doc_rows() -> dict[str, list[str]]:
    """The table's rows by their ``transformers / PEFT`` pair (the first cell, before any ``(`` note)."""
    text = DOC.read_text(encoding="utf-8")
    start = text.index(f"\n{SECTION}\n")
    end = text.find("\n## ", start + 1)
    rows: dict[str, list[str]] = {}
    for line in text[start : end if end > 0 else None].splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("| ") and re.fullmatch(r"[\d.]+ / [\d.]+", cells[0].split(" (")[0]):
            rows[cells[0].split(" (")[0]] = cells[1:]
    return rows


def test_the_docs_table_row_for_the_installed_pair_is_what_it_does(
    load_base: Any,
    prime_rl_adapter: Path,
    reference_logits: Any,
    base_logits: Any,
    kit: SimpleNamespace,
    heavy: dict[str, Any],
    tmp_path: Path,
) -> None:
    args = (prime_rl_adapter, reference_logits, base_logits, kit, load_base)
    measured = [
        _plain(prime_rl_adapter, *args),
        _plain(kit.naive_rewrite(prime_rl_adapter, tmp_path / "as-written", prefix=False), *args),
        _plain(kit.naive_rewrite(prime_rl_adapter, tmp_path / "prefix", prefix=True), *args),
        _helper(prime_rl_adapter, reference_logits, kit, load_base),
    ]
    pair = f"{heavy['transformers'].__version__} / {heavy['peft'].__version__}"
    rows = _doc_rows()
    if pair not in rows:
        row = " | ".join([pair, *measured])
        pytest.skip(f"docs/adapters.md has no row for transformers / PEFT {pair}; measured: | {row} |")
    assert rows[pair] == measured
