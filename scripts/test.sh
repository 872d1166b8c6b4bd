#!/usr/bin/env bash
# The test suite, on every supported stack. Needs uv (https://docs.astral.sh/uv/) and PyPI (or a warm uv cache).
#   1. verifiers 0.4.0 (the locked workspace env, .venv): everything but the adapter tests
#   2. verifiers 0.3.1 (.venv-v03): the same suite on the older stack, incl. the legacy v0 adapter
#   3. adapters (.venv-adapters): LoRA merge/PEFT tests on a tiny random AFMoE model (CPU torch)
# Usage: scripts/test.sh [pytest args...]   (args go to every run; e.g. -x, -k parsing)
set -euo pipefail
cd "$(dirname "$0")/.."
export UV_PYTHON="${UV_PYTHON:-3.11}"
status=0

echo "== [1/3] verifiers 0.4.0 (uv.lock) =="
uv sync --locked --group dev --quiet
uv run --locked --no-sync python -m pytest --ignore=tests/adapters "$@" || status=1

echo "== [2/3] verifiers 0.3.1 =="
[ -x .venv-v03/bin/python ] || uv venv --quiet .venv-v03
uv pip install --quiet -p .venv-v03 -e 'environments/drugprot[report]' 'verifiers==0.3.1' \
    'pytest>=8' 'pytest-asyncio>=0.23' 'scikit-learn>=1.3' 'hypothesis>=6.100'
.venv-v03/bin/python -m pytest --ignore=tests/adapters "$@" || status=1

echo "== [3/3] adapters (torch CPU, transformers, peft) =="
[ -x .venv-adapters/bin/python ] || uv venv --quiet --seed .venv-adapters
# pip, not uv, installs torch: pip honours a machine's local CPU wheel (find-links) where one is configured,
# where uv would fetch the multi-GB CUDA build from PyPI.
.venv-adapters/bin/python -m pip install --quiet --disable-pip-version-check 'torch==2.13.0' \
    || .venv-adapters/bin/python -m pip install --quiet --disable-pip-version-check 'torch>=2.4'
uv pip install --quiet -p .venv-adapters -e 'environments/drugprot[adapters]' 'pytest>=8' 'pytest-asyncio>=0.23'
.venv-adapters/bin/python -m pytest tests/adapters "$@" || status=1

exit "$status"
