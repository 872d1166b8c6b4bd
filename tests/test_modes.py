"""Where the task mode (pair, extraction) is decided: in its own folder (``drugprot/modes``), not by branches.

A branch on a specific mode is an ``if`` / ``elif`` / conditional expression / comprehension ``if`` / ``while`` /
``match`` whose test compares with the constant ``"pair"`` or ``"extraction"`` or reads an extraction-only name
(``extraction``, ``extracting``, ``is_extraction``). Outside ``drugprot/modes`` the report side (evaluation, tools)
has none; the task side still has the ones ``TASK_SIDE`` lists (issue 32: task building, prompts, the scorer the
environment calls, the knob checks), and a new one fails here.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "environments" / "drugprot" / "drugprot"
_EXTRACTION_ONLY = re.compile(r"^(is_)?extract")

TASK_SIDE = {
    "core/options.py": 2,
    "core/questions.py": 1,
    "core/scoring.py": 1,
    "envs/legacy.py": 4,
    "envs/taskset.py": 3,
}
"""The mode branches left outside ``drugprot/modes``, per module (issue 32 before: 38 in 16 modules)."""


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


def test_only_the_listed_task_side_modules_branch_on_the_mode() -> None:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = path.relative_to(PACKAGE).as_posix()
        if not name.startswith("modes/") and (count := mode_branches(path)):
            found[name] = count
    assert found == TASK_SIDE


def test_the_counter_sees_a_branch_on_a_mode(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text(
        'a = 1 if mode == "pair" else 2\nif run.extraction:\n    pass\nb = [x for x in y if extracting]\n'
        "if mode.plot_refusal:\n    pass\n",
        encoding="utf-8",
    )
    assert mode_branches(source) == 3  # asking the mode object (mode.plot_refusal) is no branch on a mode
