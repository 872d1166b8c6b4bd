"""Where the task mode (pair, extraction) is decided: in its own folder (``drugprot/modes``), not by branches.

A branch on a specific mode is an ``if`` / ``elif`` / conditional expression / comprehension ``if`` / ``while`` /
``match`` whose test compares with the constant ``"pair"`` or ``"extraction"`` or reads an extraction-only name
(``extraction``, ``extracting``, ``is_extraction``). Outside ``drugprot/modes`` there is none (issue 32 before: 38
in 16 modules): the knob check, the loader, both adapters and the report ask the task's or the run's mode.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "environments" / "drugprot" / "drugprot"
_EXTRACTION_ONLY = re.compile(r"^(is_)?extract")


def _names_a_mode(test: ast.expr) -> bool:
    for node in ast.walk(test):
        if isinstance(node, ast.Constant) and node.value in ("pair", "extraction"):
            return True
        if isinstance(node, ast.Name) and _EXTRACTION_ONLY.search(node.id):
            return True
        if isinstance(node, ast.Attribute) and _EXTRACTION_ONLY.search(node.attr):
            return True
    return False


def mode_branches(path: Path) -> int:
    count = 0
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.If | ast.IfExp | ast.While):
            tests = [node.test]
        elif isinstance(node, ast.comprehension):
            tests = node.ifs
        elif isinstance(node, ast.Match):
            tests = [node.subject]
        else:
            continue
        count += sum(_names_a_mode(test) for test in tests)
    return count


def test_no_module_outside_the_modes_branches_on_the_mode() -> None:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = path.relative_to(PACKAGE).as_posix()
        if not name.startswith("modes/") and (count := mode_branches(path)):
            found[name] = count
    assert found == {}


def test_the_counter_sees_a_branch_on_a_mode(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text(
        'a = 1 if mode == "pair" else 2\nif run.extraction:\n    pass\nb = [x for x in y if extracting]\n'
        "if mode.plot_refusal:\n    pass\n",
        encoding="utf-8",
    )
    assert mode_branches(source) == 3  # asking the mode object (mode.plot_refusal) is no branch on a mode
