"""``drugprot report RUN_DIR [RUN_DIR ...]``: the DrugProt numbers of ``vf-eval`` runs, not just mean reward.

Reads a run directory written by the verifiers v1 CLI (``traces.jsonl``: one episode per line, each with
``traces[]``; ``vf-eval`` on 0.4, ``eval`` on 0.3.1) or by the legacy 0.3.x ``vf-eval`` (``results.jsonl``
plus ``metadata.json``), and reports, per run:

- tasks (one per chemical-gene mention pair) and rollouts;
- accuracy: mean over rollouts, mean@k (per-task mean, then mean over tasks), pass@k (any rollout right)
  and majority-vote accuracy (one vote per valid answer; see ``modes.pair.summary.majority_label`` for ties);
- the official DrugProt metric (``drugprot.core.metrics``): micro P/R/F1 over the 13 relation types, pairs
  multi-label, NO-RELATION never a scored class, macro-F1, per-class P/R/F1/support, once with every
  rollout as one prediction for its pair ("rollouts pooled") and once with the majority answer per task
  (what ``--export-tsv`` writes, so the official scorer can reproduce it);
- the confusion matrix (text; a PNG with ``--plot``), invalid-reply rate and reasons, format rate, tokens;
- what made the run (``run_versions``: env, prompt and scorer versions and the data revision recorded in
  ``info["drugprot"]["versions"]``, ``unknown`` for older runs); a comparison warns when runs differ in them.

An extraction-mode run (``mode="extraction"``: one task per abstract, the model lists every relation) is read and
reported by its own mode (``drugprot.modes.extraction``: ``decode``, ``summary``, ``render``): the official
metric over (chemical, gene, type) triples, rollouts pooled and as a per-triple majority per abstract, macro-F1,
per class, answer quality and intervals resampling abstracts. The mode is detected per rollout; a run file mixing
the modes, or a comparison of a pair run with an extraction run, is refused.

The gold set of the micro-F1 is the gold relations of the *evaluated* pairs. What that measures depends on
the setting, which the report states (``modes.pair.summary.setting_of``): positive-only runs (``negatives=0``) are not
comparable with BioCreative VII; ``negatives=all`` on a whole split is. ``docs/evaluation.md`` explains
every number.

A prediction comes from the trace's ``info["drugprot"]`` record (written by the taskset's scorer). A trace
without one (an older run) or whose scoring failed is re-scored from its last assistant message with
``drugprot.core.scoring.score_reply``, and the report says how many.

One bad line never stops the report: ``decode.validate_record`` turns each raw JSON record into a typed ``Rollout``
or a ``Skip`` (line, reason naming the field), so bad JSON, wrong types, non-finite numbers and deep nesting
are counted and listed, never a traceback. Rollouts whose task cannot be identified are counted apart. A run
in which most rollouts errored without an answer (``summary.errored_summary``; no API key, no route ...) is flagged
before any metric and makes the command exit ``EXIT_FAILED_RUN`` unless ``--allow-errors``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from drugprot.core.errors import DrugprotError
from drugprot.core.outputs import EXIT_ERROR, CheckedOutput, error_line, expand_inputs
from drugprot.evaluation.compare import check_modes, compare_runs
from drugprot.evaluation.export import export_gold, export_tsv
from drugprot.evaluation.plots import check_plot_paths, plot_classes, plot_confusion
from drugprot.evaluation.records import EXIT_FAILED_RUN, LEGACY_FILE, MOSTLY_ERRORED, V1_FILE, ReportError, Run
from drugprot.evaluation.render import counts_text
from drugprot.evaluation.report_outputs import add_overwrite_argument, prepare_outputs, written_line
from drugprot.evaluation.runs import find_run_file, load_run, run_documents, run_inputs, skipped_folders
from drugprot.evaluation.stats import DEFAULT_RESAMPLES, DEFAULT_SEED, LEVEL, MAX_RESAMPLES
from drugprot.modes.base import get_mode


def add_output_arguments(parser: argparse.ArgumentParser, *, seed_alias: bool = False) -> None:
    """The output options shared by ``drugprot report`` and ``drugprot baseline``.

    The bootstrap seed is ``--bootstrap-seed``; ``seed_alias`` also accepts the old spelling ``--seed`` (hidden
    from the help: ``drugprot baseline``'s ``--seed`` is its sampling seed, ``--sampling-seed``).
    """
    parser.add_argument(
        "--json",
        action="store_true",
        help='print one JSON object (several runs: {"runs": [...], "comparisons": [...]}) instead of text',
    )
    parser.add_argument(
        "--bootstrap",
        type=resamples_arg,
        default=DEFAULT_RESAMPLES,
        metavar="N",
        help=f"resamples of the abstracts (each with all its tasks and rollouts) for the {LEVEL:.0%}% intervals and "
        "the paired comparison "
        f"(default {DEFAULT_RESAMPLES}; 0: no intervals; at most {MAX_RESAMPLES:,})",
    )
    parser.add_argument(
        "--bootstrap-seed",
        dest="bootstrap_seed",
        type=seed_arg,
        default=DEFAULT_SEED,
        metavar="S",
        help=f"seed of the bootstrap (default {DEFAULT_SEED}; the same seed gives the same intervals)",
    )
    if seed_alias:
        hidden = argparse.SUPPRESS
        parser.add_argument("--seed", dest="bootstrap_seed", type=seed_arg, default=DEFAULT_SEED, help=hidden)
    parser.add_argument(
        "--plot",
        metavar="PATH",
        help="write the confusion matrix as a picture (the extension picks it: .png, .jpg, .pdf, .svg): label names, "
        "counts in the cells, colour = share of the gold row (needs matplotlib)",
    )
    parser.add_argument(
        "--plot-counts", action="store_true", help="colour the --plot confusion matrix by count, not by row share"
    )
    parser.add_argument(
        "--plot-classes",
        metavar="PATH",
        help="write per-class precision/recall/F1 bars with gold support as a picture (.png, .jpg, .pdf, .svg), "
        "one bar per run (needs matplotlib)",
    )
    parser.add_argument(
        "--export-tsv",
        metavar="PATH",
        help="write one prediction per task (majority over rollouts) in the official TSV format",
    )
    parser.add_argument(
        "--export-gold",
        metavar="DIR",
        help="write the official scorer's gold inputs to DIR: gold_relations.tsv (gold of the "
        "evaluated pairs), pmids.txt and, when the abstracts are known, entities.tsv",
    )
    add_overwrite_argument(parser)


def resamples_arg(text: str) -> int:
    """``--bootstrap``'s value: a whole number from 0 to ``stats.MAX_RESAMPLES`` (checked when the command line is
    read, before any work: a larger number would only cost time and memory, see ``MAX_RESAMPLES``)."""
    shown = text if len(text) <= 40 else f"{text[:37]}... ({len(text)} characters)"
    try:
        value = int(text)
    except ValueError:  # also an integer of more digits than Python converts
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number of resamples >= 0 (0: no intervals), got {shown!r}")
    if value > MAX_RESAMPLES:
        raise argparse.ArgumentTypeError(
            f"at most {MAX_RESAMPLES:,} resamples, got {shown}: beyond that the bootstrap's own Monte Carlo error "
            "of a 95% bound is under 0.0005 in probability, and every resample costs time and memory"
        )
    return value


def seed_arg(text: str) -> int:
    """``--bootstrap-seed``'s value: a whole number >= 0 (numpy's generator refuses a negative seed)."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0 as the bootstrap's seed, got {text!r}")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "runs",
        nargs="+",
        metavar="RUN_DIR",
        help="a vf-eval run directory (traces.jsonl, or legacy results.jsonl + metadata.json); with several, "
        "each later run is compared with the first (paired when they cover the same tasks)",
    )
    add_output_arguments(parser, seed_alias=True)
    parser.add_argument(
        "--data-path",
        help="the run's data file or TSV directory, for --export-gold's entities.tsv "
        "(default: the data path saved in the run's config)",
    )
    parser.add_argument(
        "--allow-errors",
        action="store_true",
        help=f"report a failed run (more than {MOSTLY_ERRORED:.0%}% of its rollouts errored without an answer) with "
        f"exit status 0 and write its --export-tsv/--export-gold/--plot/--plot-classes files (default: flag it, "
        f"write no files, "
        f"exit {EXIT_FAILED_RUN})",
    )
    parser.epilog = (
        f"exit status: 0 reported; {EXIT_ERROR} refused before any work (a run cannot be read: no run file, no "
        "DrugProt rollout; the same run named twice; bad options; an output that is an input, exists without "
        "--overwrite or cannot be written); "
        f"{EXIT_FAILED_RUN} a run failed: more than {MOSTLY_ERRORED:.0%} of its rollouts errored without an answer "
        "(e.g. no API key, no route to the endpoint); its report is printed, flagged at the top, and no file is "
        "written unless --allow-errors. Malformed lines are skipped, counted and listed, never fatal."
    )


def emit(
    runs: Sequence[Run],
    args: argparse.Namespace,
    *,
    allow_errors: bool = False,
    outputs: Mapping[Path, CheckedOutput] | None = None,
) -> int:
    """Print the report(s) of ``runs`` and write the requested files; returns the exit code.

    ``outputs``: the files ``args`` name, already checked by ``prepare_outputs`` against the command's inputs
    (None: checked here, against the runs' files). A failed run (``errored_summary``) is flagged at the top of the
    report; unless ``allow_errors``, no file is written (its predictions would look like a result) and the exit
    code is ``EXIT_FAILED_RUN``.

    Raises:
        ReportError / OutputError: options that do not fit the runs, or an output the policy refuses.
    """
    check_plot_paths(args.plot, getattr(args, "plot_classes", None))  # a bad extension stops before any work
    if (args.export_tsv or args.export_gold) and len(runs) != 1:
        raise ReportError("--export-tsv and --export-gold take exactly one run")
    check_modes(list(runs))
    mode = get_mode(runs[0].mode)
    if args.plot and mode.plot_refusal is not None:
        raise ReportError(mode.plot_refusal)
    if outputs is None:
        outputs = prepare_outputs(args, [Path(run.path) / name for run in runs for name in (V1_FILE, LEGACY_FILE)])
    resamples = getattr(args, "bootstrap", DEFAULT_RESAMPLES)
    seed = getattr(args, "bootstrap_seed", DEFAULT_SEED)
    reports = [mode.summarize(run, resamples=resamples, seed=seed) for run in runs]
    comparisons = [compare_runs(runs[0], other, resamples=resamples, seed=seed) for other in runs[1:]]
    failed = [report for report in reports if report["failed"]]
    refused = bool(failed) and not allow_errors
    written = []
    if refused:
        files = [name for name in ("plot", "plot_classes", "export_tsv", "export_gold") if getattr(args, name, None)]
        if files:
            written.append(
                f"not written ({', '.join('--' + f.replace('_', '-') for f in files)}): the run failed; "
                "pass --allow-errors to write them anyway"
            )
    else:
        if args.plot:
            plot_confusion(reports, args.plot, normalize=not getattr(args, "plot_counts", False))
        if getattr(args, "plot_classes", None):
            plot_classes(reports, args.plot_classes)
        if args.export_tsv:
            rows = export_tsv(runs[0], args.export_tsv)
            written.append(written_line(f"{rows} predictions", args.export_tsv, outputs))
        if args.export_gold:
            documents = run_documents(runs[0], getattr(args, "data_path", None))
            paths = export_gold(runs[0], args.export_gold, documents)
            replaced = [str(p) for p in paths if (c := outputs.get(p)) is not None and c.replaces]
            written.append(
                "wrote " + ", ".join(str(p) for p in paths) + (f" (replaced {', '.join(replaced)})" if replaced else "")
            )
            if documents is None:
                written.append("entities.tsv not written: pass --data-path (the run's data file or TSV directory)")
        if args.plot:
            written.append(written_line("the confusion matrix", args.plot, outputs))
        if getattr(args, "plot_classes", None):
            written.append(written_line("the per-class chart", args.plot_classes, outputs))
    if args.json:
        payload: Any = reports[0] if len(reports) == 1 else {"runs": reports, "comparisons": comparisons}
        print(json.dumps(payload, indent=2, allow_nan=False))
    elif len(reports) == 1:
        print(mode.format_report(reports[0]))
    else:
        print(mode.format_comparison(reports, runs, comparisons))
    for report in reports:
        written += [f"{report['run']['name']}: WARNING: {warning}" for warning in report.get("warnings", [])]
    for report in failed:
        errored = report["errored"]
        written.append(
            f"{report['run']['name']}: FAILED RUN, {errored['rollouts']} of {report['n_rollouts']} rollouts errored "
            f"without an answer ({counts_text(errored['types'])})"
            + ("" if allow_errors else f"; exit {EXIT_FAILED_RUN} (--allow-errors reports it with exit 0)")
        )
    for line in written:
        print(line, file=sys.stderr)
    return EXIT_FAILED_RUN if refused else 0


def check_distinct_runs(paths: Sequence[str | Path]) -> None:
    """Refuse a run named twice (``report A A``, or ``A`` and ``A/traces.jsonl``): compared with itself it differs in
    nothing, which reads as a finding. Checked on the run files the paths resolve to, before any run is read.

    Raises:
        ReportError: two paths name the same run file.
    """
    seen: dict[Path, int] = {}
    for i, path in enumerate(paths):
        file = find_run_file(path).resolve()
        if file in seen:
            first = seen[file]
            raise ReportError(
                f"[{i + 1}] {path} is the same run as [{first + 1}] {paths[first]}: a run compared with itself differs "
                "in nothing; name each run once"
            )
        seen[file] = i


def run(args: argparse.Namespace) -> int:
    try:
        check_distinct_runs(args.runs)
        inputs = [file for path in args.runs for file in run_inputs(path)] + expand_inputs([args.data_path])
        outputs = prepare_outputs(args, inputs)  # before any work: a refused output costs nothing
        runs = [load_run(path) for path in args.runs]
        for path in args.runs:
            for folder, why in skipped_folders(path):
                print(f"drugprot report: skipped {folder}: not an eval run ({why})", file=sys.stderr)
        return emit(runs, args, allow_errors=args.allow_errors, outputs=outputs)
    except (DrugprotError, OSError) as exc:
        print(error_line("report", exc), file=sys.stderr)
        return EXIT_ERROR


__all__ = ["add_arguments", "add_output_arguments", "emit", "resamples_arg", "run"]
