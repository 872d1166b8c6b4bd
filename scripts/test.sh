#!/usr/bin/env bash
# The test suite, on every supported stack, from committed locks. Needs uv (https://docs.astral.sh/uv/) and PyPI
# (or a warm uv cache).
#   1. verifiers 0.4.0 (the locked workspace env, .venv): everything but the adapter tests
#   2. verifiers 0.3.1 (.venv-v03, locks/v03.txt): the same suite on the older stack, incl. the legacy v0 adapter
#   3. adapters (.venv-adapters, locks/adapters.txt): LoRA merge/PEFT tests on a tiny random AFMoE model (CPU torch)
# The three stages share nothing (each has its own venv, pytest cache and temp dirs), so they run at the same
# time; each one's output goes to a log that is printed whole, in stage order, when all are done. The exit
# status is non-zero when any stage failed. DRUGPROT_TEST_SERIAL=1 runs them one after another instead.
# Usage: scripts/test.sh [pytest args...]   (args go to every pytest run; e.g. -x, -k parsing, -m "not slow")
set -euo pipefail
cd "$(dirname "$0")/.."
export UV_PYTHON="${UV_PYTHON:-3.11}"
# Every install is a committed lock, installed with no resolution: uv.lock (stage 1), locks/v03.txt and
# locks/adapters.txt (stages 2 and 3; `python scripts/lock.py` writes them, tests/test_locks.py fails when one is
# stale), so the suite tests the project, not the day's PyPI. A stage's venv holds exactly its lock (uv pip sync);
# it is made anew when the lock changed (the lock's sha256 is in DIR/.drugprot-lock), and the package goes in
# editable, --no-deps.

lock_digest() { sha256sum "$1" | cut -d' ' -f1; }
# current DIR LOCK: DIR is a venv made from LOCK as it is now
current() { [ -x "$1/bin/python" ] && [ "$(cat "$1/.drugprot-lock" 2>/dev/null)" = "$(lock_digest "$2")" ]; }
# synced DIR LOCK: DIR made anew holding exactly LOCK's pins, each checked against its hashes
synced() {
    rm -rf "$1" && uv venv --quiet "$1" && uv pip sync --quiet --require-hashes -p "$1" "$2"
}
# editable DIR: the package itself, its build backend from locks/build.txt, its dependencies left to the lock
editable() {
    uv pip install --quiet -p "$1" --no-deps --build-constraint locks/build.txt -e environments/drugprot
}
# pins LOCK: LOCK's pins (markers kept) without their hashes, as pip takes constraints
pins() { sed -e 's/ *\\$//' -e '/^[A-Za-z0-9]/!d' "$1"; }

stage_v04() {
    uv sync --locked --group dev --quiet || return
    uv run --locked --no-sync python -m pytest --ignore=tests/tools/adapters -o cache_dir=.pytest_cache/v04 "$@"
}

stage_v03() {
    if ! current .venv-v03 locks/v03.txt; then
        synced .venv-v03 locks/v03.txt || return
        lock_digest locks/v03.txt >.venv-v03/.drugprot-lock
    fi
    editable .venv-v03 || return
    .venv-v03/bin/python -m pytest --ignore=tests/tools/adapters -o cache_dir=.pytest_cache/v03 "$@"
}

stage_adapters() {
    if ! current .venv-adapters locks/adapters.txt; then
        synced .venv-adapters locks/adapters.txt || return
        # pip, not uv, installs torch (the lock's `# torch==` line): pip honours a machine's local CPU wheel
        # (find-links) where uv would fetch the multi-GB CUDA build. Its dependencies are the lock's, installed above.
        local torch
        torch=$(sed -n 's/^# torch==\([^ ]*\).*/\1/p' locks/adapters.txt)
        [ -n "$torch" ] || { echo "scripts/test.sh: no '# torch==' line in locks/adapters.txt" >&2; return 2; }
        .venv-adapters/bin/python -m pip install --quiet --disable-pip-version-check \
            -c <(pins locks/adapters.txt) "torch==$torch" || return
        lock_digest locks/adapters.txt >.venv-adapters/.drugprot-lock
    fi
    editable .venv-adapters || return
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
