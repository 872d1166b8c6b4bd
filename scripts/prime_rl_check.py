"""Helper of scripts/prime_rl_check.sh: prime-rl's own rollout path with drugprot, without a GPU.

Subcommands (run with the Python of the prime-rl venv the shell script builds), each job in its own module:

* ``requirements``: prime-rl's direct dependencies as PyPI requirements, its ``uv.lock`` versions as
  constraints and its ``override-dependencies`` as overrides, leaving out every package prime-rl takes from
  a git or URL source (vLLM among them); path sources become the local checkouts.
* ``rollouts``: a byte-level tokenizer, a local token-route model server, prime-rl's ``env-server`` from a
  resolved env config, and one group of rollouts through prime-rl's orchestrator ``Env`` client; checks every
  reward against the gold labels and prints CPU seconds per rollout.

Where each job lives: ``prime_rl_check_install.py`` (install discovery: the requirements files),
``prime_rl_check_model.py`` (the stand-in model: byte-level tokenizer, scripted replies and their expected rewards,
the token-route server), ``prime_rl_check_rollouts.py`` (the dry-run configs pointed at the stand-ins, the
env-server, groups of rollouts through prime-rl's orchestrator), ``prime_rl_check_report.py`` (each rollout checked,
CPU accounting, the printed table). This file is the command line only.
"""

from __future__ import annotations

import argparse
import sys

from prime_rl_check_install import cmd_requirements
from prime_rl_check_rollouts import DEFAULT_TASKSET, cmd_rollouts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    req = sub.add_parser("requirements", help="requirements, constraints and overrides files for uv pip")
    req.add_argument("--prime-rl", required=True, help="prime-rl checkout")
    req.add_argument("--export", required=True, help="output of `uv export --frozen` in that checkout")
    req.add_argument("--out", required=True, help="directory for the three files")
    req.set_defaults(func=cmd_requirements)
    rol = sub.add_parser("rollouts", help="env-server + one group through the orchestrator Env client, checked")
    rol.add_argument("--configs", required=True, help="the configs/ directory `rl --dry-run` wrote")
    rol.add_argument("--work", required=True, help="directory for the tokenizer, configs and logs")
    rol.add_argument("--data", required=True, help="data_path for the taskset (parquet/jsonl/TSV dir)")
    rol.add_argument("--harness", nargs="+", default=["null"], help="harness ids, one env-server each")
    rol.add_argument("--group-size", type=int, default=0, help="rollouts per group (default: the config's)")
    rol.add_argument("--groups", type=int, default=2, help="groups per harness (the first starts the workers)")
    rol.add_argument(
        "--taskset",
        nargs="*",
        default=list(DEFAULT_TASKSET),
        metavar="KEY=VALUE",
        help=f"taskset fields to set (default: {' '.join(DEFAULT_TASKSET)}, a weight other than drugprot's default, "
        "which the env-server must score with; pass --taskset alone for none)",
    )
    rol.set_defaults(func=cmd_rollouts)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
