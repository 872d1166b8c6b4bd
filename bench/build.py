"""Benchmark: from a data file to prompted tasks (load + validate + build + prompt), and its memory.

Stages, each timed alone and repeated (medians of wall and CPU seconds):

- ``load``: ``drugprot.core.sources.load_documents`` (read + validate), per file format of the corpus;
- ``build``: ``drugprot.core.tasks.build_tasks`` for ``negatives`` 0, 1 and "all";
- ``prompts``: ``drugprot.modes.pair.task.question_for`` over those tasks (system + user prompt);
- ``total``: ``drugprot.core.questions.load_questions``, the whole core path the tasksets call;
- ``v1_load``: ``DrugprotTaskset.load()``, i.e. ``total`` plus verifiers' pydantic ``TaskData``/``Task``
  objects (skipped with ``--no-v1``).

Peak memory of ``load_questions`` comes from fresh interpreters: ``ru_maxrss`` (after minus before the
call) and, in a second one, ``tracemalloc``'s peak and what stays allocated. Import costs come from fresh
interpreters too, with a check that the core does not import verifiers or datasets.

    python -m bench.build                       # generated 3,500-abstract corpus
    python -m bench.build --data-path FILE      # any file or TSV directory drugprot loads
    python -m bench.build --quick               # 100 abstracts, one repeat: the CI smoke test
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench import corpus
from bench.common import add_overwrite, check_outputs, emit, load_data, machine, maxrss_mib, measure, rate, run_child

NEGATIVES = ("0", "1", "all")


def _negatives(text: str) -> int | str:
    return "all" if text == "all" else int(text)


def _child(args: argparse.Namespace) -> dict[str, Any]:
    """One measurement in this fresh interpreter (run by the parent with ``--child``)."""
    if args.child == "imports":
        t0 = time.perf_counter()
        import drugprot  # noqa: F401

        t_pkg = time.perf_counter() - t0
        import drugprot.core.questions  # noqa: F401

        t_core = time.perf_counter() - t0
        heavy = sorted(m for m in ("verifiers", "datasets", "pyarrow", "openai", "pydantic") if m in sys.modules)
        out: dict[str, Any] = {
            "import_drugprot_s": round(t_pkg, 4),
            "import_core_s": round(t_core, 4),
            "heavy_modules_after_core_import": heavy,
        }
        if not args.no_v1:
            import drugprot.envs.taskset  # noqa: F401

            out["import_taskset_s"] = round(time.perf_counter() - t0, 4)
        return out

    from drugprot.core.options import TaskOptions
    from drugprot.core.questions import load_questions

    options = TaskOptions(
        split=args.split, data_path=args.data_path, negatives=_negatives(args.negatives[0]), seed=args.seed
    )
    if args.child == "rss":
        before = maxrss_mib()
        questions = load_questions(options)
        after = maxrss_mib()
        return {
            "tasks": len(questions),
            "maxrss_before_mib": before,
            "maxrss_after_mib": after,
            "maxrss_delta_mib": round(after - before, 1),
        }
    import tracemalloc

    tracemalloc.start()
    questions = load_questions(options)
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {
        "tasks": len(questions),
        "tracemalloc_peak_mib": round(peak / 2**20, 1),
        "tracemalloc_retained_mib": round(current / 2**20, 1),
    }


def _counts(tasks: Sequence[Any]) -> dict[str, int]:
    negatives = sum(1 for t in tasks if t.labels == ("NO-RELATION",))
    return {"tasks": len(tasks), "positive": len(tasks) - negatives, "negative": negatives}


def run(args: argparse.Namespace) -> dict[str, Any]:
    from drugprot.core.options import TaskOptions
    from drugprot.core.questions import load_questions
    from drugprot.core.sources import load_documents
    from drugprot.core.tasks import build_tasks
    from drugprot.modes.pair.task import question_for

    result: dict[str, Any] = {"benchmark": "build", "machine": machine(), "repeats": args.repeats}
    tmp = tempfile.TemporaryDirectory(prefix="drugprot-bench-")
    try:
        if args.data_path:
            data_path = args.data_path
            sources = {Path(data_path).suffix.lstrip(".") or "tsv": data_path}
            result["data"] = {"path": data_path}
        else:
            rows = corpus.generate(args.docs, args.seed)
            result["data"] = {"generated": True, "docs": args.docs, "seed": args.seed}
            result["corpus"] = corpus.corpus_stats(rows)
            sources = {}
            for fmt, name in (("jsonl", "corpus.jsonl"), ("parquet", "corpus.parquet"), ("tsv", "corpus_tsv")):
                if fmt == "parquet" and args.quick:
                    continue  # pyarrow's import alone would dominate the smoke test
                sources[fmt] = str(corpus.write(rows, Path(tmp.name) / name, fmt))
            data_path = sources["jsonl"]

        result["load"] = {}
        for fmt, path in sources.items():
            timing = measure(lambda p=path: load_documents(args.split, p), args.repeats, warmup=1)
            result["load"][fmt] = timing
        documents = load_documents(args.split, data_path)
        result["documents"] = len(documents)

        result["negatives"] = {}
        for neg_text in args.negatives:
            neg = _negatives(neg_text)
            tasks = build_tasks(documents, negatives=neg, seed=args.seed)
            with_nr = neg != 0
            entry: dict[str, Any] = _counts(tasks)
            entry["build"] = measure(lambda n=neg: build_tasks(documents, negatives=n, seed=args.seed), args.repeats)
            entry["prompts"] = measure(
                lambda ts=tasks, nr=with_nr: [question_for(t, with_no_relation=nr) for t in ts], args.repeats
            )
            options = TaskOptions(split=args.split, data_path=data_path, negatives=neg, seed=args.seed)
            entry["total"] = measure(lambda o=options: load_questions(o), args.repeats)
            entry["total"]["tasks_per_s_cpu"] = rate(len(tasks), entry["total"]["cpu_s"])
            questions = load_questions(options)
            entry["prompt_chars_mean"] = round(sum(len(q.prompt) for q in questions) / max(1, len(questions)), 1)
            if not args.no_v1:
                from drugprot.envs.taskset import DrugprotConfig, DrugprotTaskset

                knobs = {"split": args.split, "data_path": data_path, "negatives": neg, "seed": args.seed}
                # config validation loads and builds the questions and load() takes them: time both, as vf-eval
                # runs them
                entry["v1_load"] = measure(
                    lambda k=knobs: DrugprotTaskset(DrugprotConfig(id="drugprot", **k)).load(),
                    max(1, args.repeats // 2),
                )
            if not args.no_memory:
                child_args = [
                    "--split",
                    args.split,
                    "--data-path",
                    data_path,
                    "--seed",
                    str(args.seed),
                    "--negatives",
                    neg_text,
                ]
                entry["memory"] = {
                    **run_child("bench.build", ["--child", "rss", *child_args]),
                    **run_child("bench.build", ["--child", "tracemalloc", *child_args]),
                }
            result["negatives"][neg_text] = entry
        if not args.no_memory:
            result["imports"] = run_child("bench.build", ["--child", "imports"] + (["--no-v1"] if args.no_v1 else []))
    finally:
        tmp.cleanup()
    return result


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.build", description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-path", help="a file or TSV directory to load (default: a generated corpus)")
    parser.add_argument("--split", default="train", help="split passed to load_documents (default: train)")
    parser.add_argument("--docs", type=int, default=corpus.FULL_DOCS, help="abstracts of the generated corpus")
    parser.add_argument("--seed", type=int, default=0, help="corpus and negative-sampling seed")
    parser.add_argument("--negatives", nargs="+", default=list(NEGATIVES), help="settings to time (0 1 all)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="100 abstracts, 1 repeat, no parquet (CI smoke test)")
    parser.add_argument("--no-v1", action="store_true", help="skip DrugprotTaskset.load() (no verifiers import)")
    parser.add_argument("--no-memory", action="store_true", help="skip the fresh-interpreter memory/import runs")
    parser.add_argument("--json", help="also write the result to this file")
    parser.add_argument("--child", choices=("rss", "tracemalloc", "imports"), help=argparse.SUPPRESS)
    add_overwrite(parser)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(_child(args)))
        return 0
    check_outputs(parser.prog, [("--json", args.json)], inputs=[args.data_path], overwrite=args.overwrite)
    if args.data_path:
        load_data(parser.prog, args.data_path, split=args.split)
    if args.quick:
        args.docs, args.repeats = min(args.docs, 100), 1
    emit(run(args), args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
