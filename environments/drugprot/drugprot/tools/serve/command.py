"""``drugprot serve``: the local OpenAI-compatible server as a ``drugprot`` subcommand.

It answers with a fixed or scripted reply (``--reply``, ``--script``: for tests and debugging), or with a model-free
baseline (``--baseline lexical``) on the questions of a run: start it with the same ``--data-path``, ``--split`` and
``--negatives`` as the ``vf-eval`` run it serves, then point ``vf-eval --client.base-url`` at it. The hub-user path
(package, server, ``vf-eval``, ``drugprot report``) without a model or a key: docs/index.md, "Without a key or a model".
"""

from __future__ import annotations

import argparse
import sys

from drugprot.core.errors import DrugprotConfigError, DrugprotError
from drugprot.core.options import TaskOptions
from drugprot.core.outputs import EXIT_ERROR, EXIT_OK, error_line
from drugprot.tools.serve.cli import add_arguments as add_server_arguments
from drugprot.tools.serve.cli import flag_error, serve_until_interrupted, server_from_args, settings_of
from drugprot.tools.serve.replies import Responder
from drugprot.tools.serve.server import ServerSettingError, check_settings

MAX_TEMPERATURE = 100.0
"""The largest ``--temperature`` (the lexical answer's weight ``e^(1/T)`` is then 1.01: nearly uniform)."""
BASELINE_MODEL = "drugprot-lexical-baseline"
"""The model id ``--baseline lexical`` lists by default (the demo's)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_server_arguments(parser)
    parser.add_argument(
        "--baseline",
        choices=("lexical",),
        default=None,
        help="answer as the lexical baseline on the questions of --data-path/--split/--negatives (those of the "
        f"vf-eval run it serves; model id {BASELINE_MODEL} unless --model)",
    )
    parser.add_argument("--data-path", default=None, help="with --baseline: the eval's data file (default: the hub)")
    parser.add_argument("--split", choices=("train", "validation"), default="validation", help="with --baseline")
    parser.add_argument("--negatives", default="0", help="with --baseline: the eval's negatives (default 0)")
    parser.add_argument(
        "--temperature",
        type=float,
        default=0.0,
        help="with --baseline: draw each answer at this temperature (the lexical answer scores 1, every other "
        "option 0; 0 = always the lexical answer), so a -r 4 run has vote shares to read",
    )
    parser.add_argument(
        "--seed", type=int, default=None, help="with --temperature above 0: the draws' seed (default 0)"
    )


def baseline_responder(args: argparse.Namespace) -> Responder:
    """The lexical baseline on the questions the served eval will ask.

    Raises:
        DrugprotConfigError: a bad ``--negatives``; DrugprotDataError / DrugprotHubError: the data does not load.
    """
    from drugprot.tools.demo.replier import lexical_replier  # the demo's "model" (imports the data layer)

    options = TaskOptions(split=args.split, data_path=args.data_path, negatives=args.negatives)
    return lexical_replier(options, temperature=args.temperature, seed=args.seed or 0)


def run(args: argparse.Namespace) -> int:
    """Serve until Ctrl-C (the server stopped, then ``drugprot serve: interrupted`` and exit 130, as every command);
    a bad option or data: one line, exit 2, before any work."""
    try:
        check_settings(**settings_of(args))  # the server's own rules, before the baseline's data is read
    except ServerSettingError as exc:
        print(error_line("serve", flag_error(exc)), file=sys.stderr)
        return EXIT_ERROR
    try:
        if not (0 <= args.temperature <= MAX_TEMPERATURE):  # NaN fails the comparison
            raise DrugprotConfigError(
                f"--temperature must be a number from 0 to {MAX_TEMPERATURE:g}, got {args.temperature}",
                knob="temperature",
            )
        if args.baseline is None and (
            args.data_path is not None or args.negatives != "0" or args.temperature != 0 or args.seed is not None
        ):
            raise DrugprotConfigError(
                "--data-path, --negatives, --temperature and --seed set the answers of --baseline; add --baseline "
                "lexical",
                knob="baseline",
            )
        if args.seed is not None and args.temperature == 0:
            raise DrugprotConfigError(
                "--seed seeds the draws of --temperature; at --temperature 0 every answer is the lexical one and "
                "nothing is drawn: add --temperature T (above 0) or leave --seed out",
                knob="seed",
            )
        responder = baseline_responder(args) if args.baseline else None
        if args.baseline and not args.model:
            args.model = [BASELINE_MODEL]
        serve_until_interrupted(server_from_args(args, responder))
    except (DrugprotError, OSError) as exc:
        print(error_line("serve", exc), file=sys.stderr)
        return EXIT_ERROR
    return EXIT_OK
