#!/usr/bin/env bash
# The test suite, on every supported stack. Needs uv (https://docs.astral.sh/uv/) and PyPI (or a warm uv cache).
#   1. verifiers 0.4.0 (the locked workspace env, .venv): everything but the adapter tests
#   2. verifiers 0.3.1 (.venv-v03): the same suite on the older stack, incl. the legacy v0 adapter
#   3. adapters (.venv-adapters): LoRA merge/PEFT tests on a tiny random AFMoE model (CPU torch)
# The three stages share nothing (each has its own venv, pytest cache and temp dirs), so they run at the same
# time; each one's output goes to a log that is printed whole, in stage order, when all are done. The exit
# status is non-zero when any stage failed. DRUGPROT_TEST_SERIAL=1 runs them one after another instead.
# Usage: scripts/test.sh [pytest args...]   (args go to every pytest run; e.g. -x, -k parsing, -m "not slow")
set -euo pipefail
cd "$(dirname "$0")/.."
export UV_PYTHON="${UV_PYTHON:-3.11}"
# What the suite installs outside uv.lock (stages 2 and 3, the packaging test's clean venv, the null harness's chat
# program) is resolved as of one date, so the suite tests the project, not the day's PyPI: the date drugprot pins
# the null harness's chat program to (drugprot.envs.harness.NULL_HARNESS_EXCLUDE_NEWER). A venv made as of
# another date is made anew (its date is in DIR/.drugprot-cutoff).
cutoff=$(sed -n 's/^NULL_HARNESS_EXCLUDE_NEWER: Final = "\(.*\)"$/\1/p' environments/drugprot/drugprot/envs/harness.py)
[ -n "$cutoff" ] || { echo "scripts/test.sh: no NULL_HARNESS_EXCLUDE_NEWER in drugprot/envs/harness.py" >&2; exit 2; }

# dated_venv DIR [uv venv options]: DIR as a venv made as of $cutoff (kept when its recorded date is $cutoff)
dated_venv() {
    local dir=$1
    shift
    [ -x "$dir/bin/python" ] && [ "$(cat "$dir/.drugprot-cutoff" 2>/dev/null)" = "$cutoff" ] && return 0
    rm -rf "$dir"
    UV_EXCLUDE_NEWER=$cutoff uv venv --quiet "$@" "$dir"
}

stage_v04() {
    uv sync --locked --group dev --quiet || return
    uv run --locked --no-sync python -m pytest --ignore=tests/tools/adapters -o cache_dir=.pytest_cache/v04 "$@"
}

stage_v03() {
    dated_venv .venv-v03 || return
    uv pip install --quiet -p .venv-v03 --exclude-newer "$cutoff" -e 'environments/drugprot[report]' \
        'verifiers==0.3.1' 'pytest>=8' 'pytest-asyncio>=0.23' 'scikit-learn>=1.3' 'hypothesis>=6.100' \
        'renderers>=0.1.12' 'scipy>=1.15' || return
    echo "$cutoff" >.venv-v03/.drugprot-cutoff
    .venv-v03/bin/python -m pytest --ignore=tests/tools/adapters -o cache_dir=.pytest_cache/v03 "$@"
}

stage_adapters() {
    dated_venv .venv-adapters --seed || return
    # pip, not uv, installs torch: pip honours a machine's local CPU wheel (find-links) where one is configured,
    # where uv would fetch the multi-GB CUDA build from PyPI. pip >= 26 (the seeded one) knows the date cutoff.
    local pip=(.venv-adapters/bin/python -m pip install --quiet --disable-pip-version-check --uploaded-prior-to "$cutoff")
    "${pip[@]}" 'torch==2.13.0' || "${pip[@]}" 'torch>=2.4' || return
    uv pip install --quiet -p .venv-adapters --exclude-newer "$cutoff" -e 'environments/drugprot[adapters]' \
        'pytest>=8' 'pytest-asyncio>=0.23' || return
    echo "$cutoff" >.venv-adapters/.drugprot-cutoff
    .venv-adapters/bin/python -m pytest tests/tools/adapters -o cache_dir=.pytest_cache/adapters "$@"
}

stages=(v04 v03 adapters)
declare -A title=(
    [v04]="[1/3] verifiers 0.4.0 (uv.lock)"
    [v03]="[2/3] verifiers 0.3.1"
    [adapters]="[3/3] adapters (torch CPU, transformers, peft)"
)
logs="$(mktemp -d "${TMPDIR:-/tmp}/drugprot-tests.XXXXXX")"
trap 'rm -rf "$logs"' EXIT

# One stage, its output to its log; writes its exit status and its wall and CPU seconds (children included).
run_stage() {
    local name=$1 rc=0
    shift
    local TIMEFORMAT="%R %U %S"
    { time "stage_$name" "$@" >"$logs/$name.log" 2>&1 || rc=$?; } 2>"$logs/$name.time"
    echo "$rc" >"$logs/$name.rc"
    echo "-- ${title[$name]}: exit $rc" >&2
}

if [ "${DRUGPROT_TEST_SERIAL:-0}" = 1 ]; then
    for name in "${stages[@]}"; do run_stage "$name" "$@"; done
else
    pids=()
    for name in "${stages[@]}"; do
        run_stage "$name" "$@" &
        pids+=("$!")
    done
    wait "${pids[@]}"
fi

status=0
for name in "${stages[@]}"; do
    echo "== ${title[$name]} =="
    cat "$logs/$name.log"
done
echo "== summary (seconds: wall, user CPU, system CPU) =="
for name in "${stages[@]}"; do
    rc=$(cat "$logs/$name.rc")
    read -r wall user sys <"$logs/$name.time"
    printf '%-48s exit %-3s %8s wall %8s user %8s sys\n' "${title[$name]}" "$rc" "$wall" "$user" "$sys"
    [ "$rc" = 0 ] || status=1
done
exit "$status"
