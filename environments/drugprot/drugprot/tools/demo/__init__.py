"""``drugprot demo``: the whole evaluation flow offline, with no model, API key or dataset download.

1. Serves the ``lexical`` baseline (``drugprot.evaluation.baselines``) as an OpenAI-compatible streaming endpoint on
   127.0.0.1 (``drugprot.tools.serve.OpenAIServer``). It looks each prompt up among the run's questions (the
   same data and options) and answers from the pair's spans in the environment's format: reasoning in
   ``<think></think>``, then one ``\\boxed{}`` letter.
2. Runs the real verifiers v1 eval CLI on the package's SYNTHETIC sample set (``drugprot/tools/sample/``):
   ``vf-eval drugprot`` on verifiers 0.4, the ``eval`` script on 0.3.1 (whose ``vf-eval`` is the legacy
   CLI), with ``--env.taskset.data-path <sample> --env.taskset.data-label <what the sample is>
   --client.base-url <local server> --no-push``, and shows the rollouts done as ``traces.jsonl`` grows.
3. Prints ``drugprot report`` of the run (with 95% intervals; ``--plot``/``--plot-classes`` write its charts)
   and keeps the run directory (``outputs/`` by default) for ``drugprot report <run dir>``.

Each rollout is one chat turn sent in-process by the taskset's ``drugprot`` harness, so the demo needs
neither ``uv`` nor PyPI.

Modules: ``replier`` (the served "model"), ``sample_run`` (the sample and the run's size), ``progress`` (the rollout
count), ``eval_cli`` (verifiers' eval CLI), ``runner`` (one run), ``command`` (``drugprot demo``), ``errors``.
"""

from __future__ import annotations

from drugprot.tools.demo.command import DEFAULT_OUTPUT_DIR, DEFAULT_TASKS, add_arguments, report_command, run
from drugprot.tools.demo.errors import DemoError
from drugprot.tools.demo.eval_cli import MODEL, eval_arguments, eval_command, serves_env_workers
from drugprot.tools.demo.progress import (
    Progress,
    count_lines,
    new_run_files,
    progress_line,
    progress_phase,
    progress_step,
)
from drugprot.tools.demo.replier import LexicalReplier, lexical_replier
from drugprot.tools.demo.runner import DemoRun, run_demo
from drugprot.tools.demo.sample_run import SampleRun, plan_sample_run, sample_label, sample_options, sample_path

__all__ = [
    "DEFAULT_OUTPUT_DIR",
    "DEFAULT_TASKS",
    "MODEL",
    "DemoError",
    "DemoRun",
    "Progress",
    "LexicalReplier",
    "SampleRun",
    "add_arguments",
    "count_lines",
    "eval_arguments",
    "eval_command",
    "lexical_replier",
    "new_run_files",
    "plan_sample_run",
    "progress_line",
    "progress_phase",
    "progress_step",
    "report_command",
    "run",
    "run_demo",
    "sample_label",
    "sample_options",
    "sample_path",
    "serves_env_workers",
]
