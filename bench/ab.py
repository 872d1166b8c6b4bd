"""Interleaved A/B of the core hot paths: an old copy of the ``drugprot`` package against the installed one.

Old and new code run alternately in one process (``load_documents``, ``load_questions`` for the positive
tasks, ``build_tasks`` with ``negatives`` 1 and "all", ``score_reply`` over 5,000 realistic replies), so a
drifting machine load hits both alike; prints median and minimum CPU seconds of each. The old copy is
imported as ``drugprot_old`` from a temporary rewrite of its imports.

    git archive HEAD environments/drugprot/drugprot | tar -x -C OLD    # any earlier version
    python -m bench.ab --old OLD/environments/drugprot/drugprot --data-path corpus.jsonl --rounds 9
"""

from __future__ import annotations

import argparse
import gc
import importlib
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench.common import add_overwrite, check_outputs, emit, fail, load_data, machine
from bench.score import _golds, make_replies


def _import_old(package_dir: Path, tmp: Path) -> dict[str, Any]:
    target = tmp / "drugprot_old"
    shutil.copytree(package_dir, target, ignore=shutil.ignore_patterns("__pycache__"))
    for path in target.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        text = re.sub(r"\b(from|import) drugprot\b", r"\1 drugprot_old", text)
        text = re.sub(r"([\"'])drugprot\.", r"\1drugprot_old.", text)
        path.write_text(text, encoding="utf-8")
    sys.path.insert(0, str(tmp))
    return {name: importlib.import_module(f"drugprot_old.{name}") for name in ("data", "questions", "scoring", "tasks")}


def _cpu(fn: Callable[[], Any]) -> float:
    gc.collect()
    start = time.process_time()
    result = fn()
    elapsed = time.process_time() - start
    del result  # freeing the result is not part of what is timed
    return elapsed


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.ab", description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", type=Path, required=True, help="directory of the old drugprot package")
    parser.add_argument("--data-path", required=True, help="file or TSV directory to load")
    parser.add_argument("--split", default="train")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--json", help="also write the result to this file")
    add_overwrite(parser)
    args = parser.parse_args(argv)
    if not args.old.is_dir():
        fail(parser.prog, f"--old {args.old}: no such folder; pass the directory of the old drugprot package")
    old_files = [path for path in args.old.rglob("*") if path.is_file()]  # the whole tree is copied and read
    inputs = [args.data_path, args.old, *old_files]
    check_outputs(parser.prog, [("--json", args.json)], inputs=inputs, overwrite=args.overwrite)
    load_data(parser.prog, args.data_path, split=args.split)

    import drugprot.core.questions
    import drugprot.core.scoring
    import drugprot.core.sources
    import drugprot.core.tasks

    with tempfile.TemporaryDirectory(prefix="drugprot-ab-") as tmp:
        old = _import_old(args.old, Path(tmp))
        new = {
            "data": drugprot.core.sources,
            "questions": drugprot.core.questions,
            "scoring": drugprot.core.scoring,
            "tasks": drugprot.core.tasks,
        }
        documents = {
            tag: mod["data"].load_documents(args.split, args.data_path) for tag, mod in (("old", old), ("new", new))
        }
        replies = make_replies(_golds(args.data_path, args.split, 0), 5000, 0)
        runs: dict[str, list[float]] = {}
        for i in range(args.rounds):
            order = [("old", old), ("new", new)]
            for tag, mod in order if i % 2 == 0 else order[::-1]:
                options = mod["questions"].TaskOptions(split=args.split, data_path=args.data_path)
                score = mod["scoring"].score_reply
                timings = {
                    "load_documents": _cpu(lambda m=mod: m["data"].load_documents(args.split, args.data_path)),
                    "load_questions": _cpu(lambda m=mod, o=options: m["questions"].load_questions(o)),
                    "build_tasks_negatives_1": _cpu(
                        lambda m=mod, t=tag: m["tasks"].build_tasks(documents[t], negatives=1, seed=0)
                    ),
                    "build_tasks_negatives_all": _cpu(
                        lambda m=mod, t=tag: m["tasks"].build_tasks(documents[t], negatives="all", seed=0)
                    ),
                    "score_reply_x5000": _cpu(
                        lambda s=score: [
                            s(r.content, r.reasoning, r.gold, with_no_relation=r.with_no_relation) for r in replies
                        ]
                    ),
                }
                for name, seconds in timings.items():
                    runs.setdefault(f"{name}/{tag}", []).append(seconds)
    result = {
        "benchmark": "ab",
        "machine": machine(),
        "rounds": args.rounds,
        "cpu_s": {k: {"median": round(statistics.median(v), 4), "min": round(min(v), 4)} for k, v in runs.items()},
    }
    emit(result, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
