#!/usr/bin/env bash
# Validate every RL config in configs/ with prime-rl's own RLConfig at the pinned commit, without GPUs.
#
# Sets up (once) a prime-rl checkout at PRIME_RL_COMMIT beside this repository, installs its slim config
# package (packages/prime-rl-configs, no torch/vLLM) with the pinned verifiers/renderers/pydantic-config
# submodules and this repository's drugprot package into a Python 3.12 venv inside that checkout, then runs
# tests/test_configs.py there: with prime-rl importable, its prime-rl tests run instead of skipping (each
# config's `# Usage:` chain goes through pydantic_config.cli(RLConfig, ...) as `uv run rl` would).
#
# Usage: bash scripts/validate_prime_rl.sh [extra pytest args]
# Environment:
#   PRIME_RL_DIR          prime-rl checkout (default: ../prime-rl beside this repository). Cloned at the
#                         pinned commit when missing; an existing checkout must already be at that commit.
#   PRIME_RL_PYTHON       Python 3.12 interpreter path or version request (default: a 3.12 found on this machine
#                         by scripts/prime_rl_python.sh; never downloaded; none found: the script stops at once).
#   PRIME_RL_VENV         venv to create/use (default: $PRIME_RL_DIR/.venv-configs).
#   PRIME_RL_PYPI_FALLBACK=1  install renderers / prime-pydantic-config from PyPI (prime-rl-configs' floors)
#                         when their submodule cannot be checked out (e.g. no access to GitHub).
# Everything installed from PyPI is resolved as of the pinned commit's date (uv --exclude-newer), the fallback's
# packages included, so the check runs what prime-rl ran then, not the day's releases.
# Needs git, uv, and network access to GitHub (first run) and PyPI.
set -euo pipefail

PRIME_RL_COMMIT=559b44772e471d1538537b8805cc77f3824a5e64
PRIME_RL_URL=https://github.com/PrimeIntellect-ai/prime-rl.git

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
prime_rl=${PRIME_RL_DIR:-$repo/../prime-rl}
venv=${PRIME_RL_VENV:-$prime_rl/.venv-configs}
# shellcheck source=scripts/prime_rl_python.sh
source "$repo/scripts/prime_rl_python.sh"
python=""
[ -x "$venv/bin/python" ] || python=$(prime_rl_python)  # before any clone or install: fail at once

if [ ! -e "$prime_rl" ]; then
    git clone "$PRIME_RL_URL" "$prime_rl"
    git -C "$prime_rl" checkout --detach "$PRIME_RL_COMMIT"
fi
head=$(git -C "$prime_rl" rev-parse HEAD)
if [ "$head" != "$PRIME_RL_COMMIT" ]; then
    echo "error: $prime_rl is at $head, not the pinned $PRIME_RL_COMMIT." >&2
    echo "       git -C $prime_rl checkout --detach $PRIME_RL_COMMIT  (or set PRIME_RL_DIR)" >&2
    exit 1
fi
cutoff=$(git -C "$prime_rl" log -1 --format=%cI HEAD)

# The submodules the config package needs, at the commits prime-rl pins.
declare -A pypi=([renderers]="renderers>=0.1.9" [pydantic-config]="prime-pydantic-config[toml]>=0.4.3")
sources=("$prime_rl/packages/prime-rl-configs")
for sub in verifiers renderers pydantic-config; do
    dir=$prime_rl/deps/$sub
    if [ ! -f "$dir/pyproject.toml" ]; then
        # .gitmodules names some submodules by SSH URL; fetch them over HTTPS (as prime-rl's installer does).
        GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=url.https://github.com/.insteadOf \
            GIT_CONFIG_VALUE_0=git@github.com: git -C "$prime_rl" submodule update --init "deps/$sub" || true
    fi
    if [ -f "$dir/pyproject.toml" ]; then
        sources+=("$dir")
        echo "$sub: $(git -C "$dir" rev-parse --short HEAD 2>/dev/null || echo '?') (submodule)"
    elif [ "${PRIME_RL_PYPI_FALLBACK:-0}" = 1 ] && [ -n "${pypi[$sub]:-}" ]; then
        sources+=("${pypi[$sub]}")
        echo "$sub: submodule unavailable, using PyPI ${pypi[$sub]}" >&2
    else
        echo "error: could not check out $prime_rl/deps/$sub" >&2
        exit 1
    fi
done

[ -x "$venv/bin/python" ] || UV_PYTHON_DOWNLOADS=never uv venv -q -p "$python" "$venv"
# --upgrade: an existing venv ends up as a fresh one would (the newest files before the cutoff)
uv pip install -q -p "$venv/bin/python" --upgrade --exclude-newer "$cutoff" "${sources[@]}" \
    -e "$repo/environments/drugprot" "pytest>=8" "pytest-asyncio>=0.23"

echo "prime-rl $(git -C "$prime_rl" rev-parse --short=7 HEAD) at $prime_rl; venv $venv; PyPI files before $cutoff"
"$venv/bin/python" -c "import prime_rl.configs.rl, verifiers; print('verifiers', verifiers.__version__)"
cd "$repo"
exec "$venv/bin/python" -m pytest tests/test_configs.py -p no:cacheprovider "$@"
