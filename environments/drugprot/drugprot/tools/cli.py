"""The ``drugprot`` command: one subcommand per tool, each defined in the module that owns it.

Subcommand modules are imported only when their command runs, so ``drugprot report`` never imports
torch and ``drugprot --help`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from drugprot.core.outputs import EXIT_INTERRUPTED

# subcommand -> (module, one-line help). Each module defines ``add_arguments(parser)`` and ``run(args) -> int``.
COMMANDS: dict[str, tuple[str, str]] = {
    "report": ("drugprot.evaluation.report", "official micro-F1, per-class table and confusion matrix of vf-eval runs"),
    "baseline": (
        "drugprot.evaluation.baselines",
        "score a model-free baseline (majority, lexical) in the report format",
    ),
    "curves": (
        "drugprot.evaluation.curves",
        "official F1/precision/recall, reward terms, trainable share and length per step of prime-rl runs",
    ),
    "demo": (
        "drugprot.tools.demo.command",
        "offline end-to-end demo: a baseline behind a local OpenAI-compatible server",
    ),
    "serve": (
        "drugprot.tools.serve.command",
        "a local OpenAI-compatible server on 127.0.0.1 (a baseline, or fixed replies) for vf-eval without a model",
    ),
    "adapter": ("drugprot.tools.adapters.cli", "merge or inspect a prime-rl LoRA adapter of Trinity-Mini"),
    "predict": ("drugprot.tools.adapters.predict", "answer one abstract/chemical/gene question with a local model"),
}


def build_parser(argv: Sequence[str]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="drugprot", description="DrugProt environment tools.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    wanted = next((a for a in argv if not a.startswith("-")), None)
    for name, (module_name, help_text) in COMMANDS.items():
        cmd = sub.add_parser(name, help=help_text, description=help_text)
        if name == wanted:  # import only the module that will run
            importlib.import_module(module_name).add_arguments(cmd)
    return parser


def subcommand_parser(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    """The parser of subcommand ``name`` inside ``build_parser``'s parser."""
    (sub,) = (action for action in parser._actions if isinstance(action, argparse._SubParsersAction))
    return sub.choices[name]


def parse(argv: Sequence[str]) -> argparse.Namespace:
    """``argv`` parsed; an argument the subcommand does not know is reported by the subcommand's own parser
    (``drugprot report: error: unrecognized arguments: --foo``, its usage, exit 2), not by the top-level one."""
    parser = build_parser(argv)
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        subcommand_parser(parser, args.command).error(f"unrecognized arguments: {' '.join(unknown)}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse(argv)
    module = importlib.import_module(COMMANDS[args.command][0])
    try:
        return int(module.run(args) or 0)
    except KeyboardInterrupt:  # a command that starts a child stops it itself and says so; this is the rest
        print(f"drugprot {args.command}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
