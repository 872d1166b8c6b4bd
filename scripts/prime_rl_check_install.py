"""Install discovery for scripts/prime_rl_check.sh (``prime_rl_check.py requirements``): prime-rl's direct dependencies
as PyPI requirements, its ``uv.lock`` versions as constraints and its ``override-dependencies`` as overrides, leaving
out every package prime-rl takes from a git or URL source (vLLM among them); path sources become the local
checkouts."""

from __future__ import annotations

import argparse
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

LOCAL_VERSION = re.compile(r"^([A-Za-z0-9._-]+==[^+ ;]+)\+[^ ;]+")
CUDA_LIBRARIES = re.compile(r"^(nvidia-|cuda-)")
"""Locked CUDA 12.8 runtime packages (prime-rl takes torch from the cu128 index); PyPI's torch of the same
version brings its own CUDA libraries, so these are not constrained."""


@dataclass(frozen=True)
class Requirements:
    requirements: list[str]
    constraints: list[str]
    overrides: list[str]
    left_out: dict[str, str]
    """Package name -> why it is not installed."""


def _name(requirement: str) -> str:
    from packaging.requirements import Requirement

    return Requirement(requirement).name.lower().replace("_", "-")


def plan_requirements(pyproject: dict, export_lines: list[str], prime_rl: Path) -> Requirements:
    """What to install for prime-rl from PyPI (pure; ``export_lines`` is ``uv export --frozen`` output)."""
    from packaging.requirements import Requirement

    uv = pyproject["tool"]["uv"]
    sources = {name.lower().replace("_", "-"): src for name, src in uv["sources"].items()}
    requirements: list[str] = []
    left_out: dict[str, str] = {}
    for dep in pyproject["project"]["dependencies"]:
        name = _name(dep)
        source = sources.get(name)
        sources_list = source if isinstance(source, list) else [source] if source else []
        remote = [s.get("git") or s.get("url") for s in sources_list if "git" in s or "url" in s]
        if remote:
            left_out[name] = f"taken from {remote[0]}"
        elif sources_list and "path" in sources_list[0]:
            path = prime_rl / sources_list[0]["path"]
            if (path / "pyproject.toml").is_file():
                extras = Requirement(dep).extras
                requirements.append(f"-e {path}" + (f"[{','.join(sorted(extras))}]" if extras else ""))
            else:  # a submodule left unchecked out: PyPI's release
                requirements.append(dep)
        else:
            requirements.append(dep)
    constraints = []
    for line in export_lines:
        line = line.strip()
        if not line or line.startswith(("#", "-e ")) or " @ " in line.split(";")[0]:
            continue
        if CUDA_LIBRARIES.match(line):
            continue
        constraints.append(LOCAL_VERSION.sub(r"\1", line))
    overrides = list(uv.get("override-dependencies", []))
    # [[tool.uv.dependency-metadata]] replaces a package's published requirements (modelexpress 0.3.0 says
    # protobuf<6, which its code does not need); uv pip has no such setting, so its entries become overrides.
    overridden = {_name(o) for o in overrides}
    for meta in uv.get("dependency-metadata", []):
        for dep in meta.get("requires-dist", []):
            if _name(dep) not in overridden:
                overrides.append(dep)
                overridden.add(_name(dep))
    return Requirements(requirements, constraints, overrides, left_out)


def cmd_requirements(args: argparse.Namespace) -> int:
    prime_rl = Path(args.prime_rl).resolve()
    pyproject = tomllib.loads((prime_rl / "pyproject.toml").read_text(encoding="utf-8"))
    export = Path(args.export).read_text(encoding="utf-8").splitlines()
    plan = plan_requirements(pyproject, export, prime_rl)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "requirements.txt").write_text("\n".join(plan.requirements) + "\n")
    (out / "constraints.txt").write_text("\n".join(plan.constraints) + "\n")
    (out / "overrides.txt").write_text("\n".join(plan.overrides) + "\n")
    print(f"{len(plan.requirements)} direct requirements, {len(plan.constraints)} locked versions as constraints")
    for name, why in plan.left_out.items():
        print(f"  left out {name}: {why}")
    return 0
