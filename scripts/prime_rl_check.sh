#!/usr/bin/env bash
# prime-rl's own rollout path with drugprot, at the pinned prime-rl commit, on a CPU-only machine.
#
#   1. installs prime-rl at PRIME_RL_COMMIT (the pin in scripts/validate_prime_rl.sh) into a Python 3.12 venv
#      with the dependencies PyPI serves, at the versions of prime-rl's uv.lock: no vLLM and none of the
#      packages prime-rl takes from GitHub (torchtitan, dion, flash-linear-attention, its torchao wheel);
#      verifiers at the commit prime-rl pins as its deps/verifiers submodule; this repository's drugprot;
#   2. runs `rl --dry-run` on every config chain (each configs/**/*.toml `# Usage:` line) the documented way:
#      `UV_PROJECT=<prime-rl checkout> uv run --no-sync rl @ ...` from this repository;
#   3. per harness: starts prime-rl's `env-server` from the resolved env config of configs/drugprot.toml
#      with `data_path` set to the sample data, and runs one group of rollouts through prime-rl's
#      orchestrator `Env` client against a local token-route server (scripts/prime_rl_check_model.py: POST
#      /inference/v1/generate with token ids and one logprob per token) and a byte-level tokenizer;
#      checks every reward against the gold labels, with a non-default reward weight (format_weight=0.2 unless
#      ROLLOUT OPTIONS give --taskset), and prints CPU-s per rollout;
#   4. runs prime-rl's orchestrator loop (the `orchestrator` entry point) for 2 steps of configs/drugprot.toml
#      scaled down against a local scripted inference server and a stand-in trainer, and checks the batches it
#      ships (rewards, group-relative advantages, whole groups) and the sampling of every eval and training
#      request it sends (scripts/prime_rl_check_loop.py).
#
# Not part of the test suite (the install is several GB: torch with its CUDA libraries from PyPI).
#
# Usage: bash scripts/prime_rl_check.sh [WORK_DIR [ROLLOUT OPTIONS]]   (default WORK_DIR: ../prime-rl-check)
#   WORK_DIR: a new or empty folder, or one an earlier run made (it holds .prime-rl-check); any other is refused
#   ROLLOUT OPTIONS go to `scripts/prime_rl_check.py rollouts`, e.g. --groups 1, --taskset accuracy_weight=0.5
# Environment:
#   PRIME_RL_SRC       git URL or local git repository of prime-rl (default: GitHub)
#   VERIFIERS_SRC      git URL or local git repository of verifiers (default: GitHub); checked out at the
#                      commit prime-rl pins for deps/verifiers
#   RENDERERS_SRC, PYDANTIC_CONFIG_SRC
#                      git URL/repository of renderers / pydantic-config (checked out at prime-rl's
#                      submodule commits), or `pypi` (default) for the newest PyPI release published
#                      before the prime-rl commit
#   DRUGPROT_PKG       the drugprot package to install (default: this repository's environments/drugprot)
#   DRUGPROT_DATA      the data the env runs on (default: the package's bundled synthetic sample)
#   HARNESSES          space-separated harness ids to run (default: "null")
#   GROUP_SIZE         rollouts in the group (default: the config's group_size)
#   PRIME_RL_PYTHON    Python 3.12 interpreter path or version request (default: a 3.12 found on this machine
#                      by scripts/prime_rl_python.sh; never downloaded; none found: the script stops at once)
# Needs git, uv, and access to PyPI (and to the git sources).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PRIME_RL_COMMIT=$(sed -n 's/^PRIME_RL_COMMIT=//p' "$repo/scripts/validate_prime_rl.sh")
prime_rl_src=${PRIME_RL_SRC:-https://github.com/PrimeIntellect-ai/prime-rl.git}
verifiers_src=${VERIFIERS_SRC:-https://github.com/PrimeIntellect-ai/verifiers.git}
renderers_src=${RENDERERS_SRC:-pypi}
pydantic_config_src=${PYDANTIC_CONFIG_SRC:-pypi}
drugprot_pkg=$(cd "${DRUGPROT_PKG:-$repo/environments/drugprot}" && pwd)
data=$(realpath "${DRUGPROT_DATA:-$drugprot_pkg/drugprot/tools/sample/drugprot_sample.jsonl}")
harnesses=${HARNESSES:-null}
work=${1:-$repo/../prime-rl-check}
shift $(($# > 0 ? 1 : 0))
mkdir -p "$work"
work=$(cd "$work" && pwd)
# The script replaces WORK/prime-rl, WORK/dry-run and WORK/loop: it works only in a folder it made (the marker) or
# an empty one, never in a folder of the user's (WORK_DIR=~ would have removed ~/prime-rl, ~/loop, ~/dry-run).
marker=$work/.prime-rl-check
if [ ! -e "$marker" ] && [ -n "$(ls -A "$work")" ]; then
    echo "error: WORK_DIR $work is not empty and was not made by this script (no .prime-rl-check in it), and the" \
        "check replaces its prime-rl, dry-run and loop folders: name a new or empty folder (a folder an earlier run" \
        "made: create $marker)" >&2
    exit 2
fi
touch "$marker"
prime_rl=$work/prime-rl
venv=$work/venv
# shellcheck source=scripts/prime_rl_python.sh
source "$repo/scripts/prime_rl_python.sh"
python=""
[ -x "$venv/bin/python" ] || python=$(prime_rl_python)  # before any clone or install: fail at once
helper=$repo/scripts/prime_rl_check.py

step() { printf '\n== %s\n' "$*"; }

# -- 1. sources and install ------------------------------------------------------------------------------
checkout() {  # checkout SRC DIR COMMIT: a clone of SRC at COMMIT (tags kept: hatch-vcs versions from them)
    local src=$1 dir=$2 commit=$3
    if [ ! -d "$dir/.git" ]; then
        rm -rf "$dir"
        git clone -q --no-checkout "$src" "$dir"
    fi
    if [ "$(git -C "$dir" rev-parse HEAD 2>/dev/null)" != "$commit" ] || [ -n "$(git -C "$dir" status --porcelain)" ]; then
        git -C "$dir" checkout -q -f --detach "$commit"
    fi
    echo "$(basename "$dir"): $(git -C "$dir" log -1 --format='%h %cs %s' HEAD)"
}

echo "WORK=$work"
step "sources"
checkout "$prime_rl_src" "$prime_rl" "$PRIME_RL_COMMIT"
gitlink() { git -C "$prime_rl" ls-tree HEAD "deps/$1" | awk '{print $3}'; }
checkout "$verifiers_src" "$prime_rl/deps/verifiers" "$(gitlink verifiers)"
for pair in "renderers:$renderers_src" "pydantic-config:$pydantic_config_src"; do
    sub=${pair%%:*} src=${pair#*:}
    if [ "$src" = pypi ]; then
        echo "$sub: PyPI (submodule commit $(gitlink "$sub" | cut -c1-7) not checked out)"
    else
        checkout "$src" "$prime_rl/deps/$sub" "$(gitlink "$sub")"
    fi
done
cutoff=$(git -C "$prime_rl" log -1 --format=%cI HEAD)

step "install into WORK/venv (PyPI files uploaded before $cutoff)"
[ -x "$venv/bin/python" ] || UV_PYTHON_DOWNLOADS=never uv venv -q -p "$python" "$venv"
uv pip install -q -p "$venv/bin/python" "packaging>=24"
(cd "$prime_rl" && uv export --frozen --no-hashes --no-dev --no-emit-workspace --package prime-rl \
    --no-header --no-annotate) >"$work/uv-export.txt"
"$venv/bin/python" "$helper" requirements --prime-rl "$prime_rl" --export "$work/uv-export.txt" --out "$work/req"
# --no-sources: the git and URL sources of the packages' own pyproject.toml files are not used;
# --upgrade: an existing venv ends up as a fresh one would (the newest files before the cutoff)
uv pip install -q -p "$venv/bin/python" --no-sources --upgrade --exclude-newer "$cutoff" \
    -r "$work/req/requirements.txt" \
    -c "$work/req/constraints.txt" --overrides "$work/req/overrides.txt" -e "$drugprot_pkg"
# prime-rl itself without its dependency list (which names vLLM and the GitHub-only packages)
uv pip install -q -p "$venv/bin/python" --no-sources --no-deps -e "$prime_rl"
# what the orchestrator imports beyond that list: prometheus-client (vLLM brings it in prime-rl's lock) and
# torchao (prime-rl takes a GitHub build of 0.17.0; PyPI's 0.17.0 imports the same); both at the locked versions
uv pip install -q -p "$venv/bin/python" --no-sources --exclude-newer "$cutoff" -c "$work/req/constraints.txt" \
    prometheus-client
uv pip install -q -p "$venv/bin/python" --no-sources --no-deps --exclude-newer "$cutoff" "torchao==0.17.0"
"$venv/bin/python" -c 'import importlib.metadata as m
print(", ".join(f"{p} {m.version(p)}" for p in ("prime-rl", "verifiers", "renderers", "prime-pydantic-config",
    "torch", "transformers", "drugprot")))'

# -- 2. rl --dry-run on every config chain -----------------------------------------------------------------
step "rl --dry-run on every config chain"
dry=$work/dry-run
rm -rf "$dry"
cd "$repo"
while IFS= read -r usage; do
    read -r -a words <<<"${usage#\# Usage: uv run --no-sync rl }"
    name=$(basename "${words[-1]}" .toml)
    extra=()
    [[ "${words[-1]}" == */slurm.toml ]] && extra=(--slurm.project-dir "$prime_rl")
    printf 'uv run --no-sync rl %s --dry-run ... ' "${words[*]}"
    # the documented command (docs/training/recipe.md, "Commands"): from this repository, UV_PROJECT naming prime-rl's
    # checkout, `uv run --no-sync`; UV_PROJECT_ENVIRONMENT names this install's venv (outside the checkout)
    if UV_PROJECT="$prime_rl" UV_PROJECT_ENVIRONMENT="$venv" uv run --no-sync rl "${words[@]}" "${extra[@]}" \
        --dry-run --output-dir "$dry" --run.name "$name" >"$work/dry-run-$name.log" 2>&1; then
        echo "ok: $(cd "$dry/$name" && find . -type f -printf '%P\n' | sort | tr '\n' ' ')"
    else
        echo "FAILED (log: WORK/dry-run-$name.log)"
        tail -20 "$work/dry-run-$name.log"
        exit 1
    fi
done < <(grep -h '^# Usage: uv run --no-sync rl @ ' configs/drugprot.toml configs/rl/*.toml)

# -- 3. env-server + prime-rl's orchestrator Env client -------------------------------------------------------
# What uv resolves at run time is date-cut like the install: verifiers' null harness runs `uv sync --script` on its
# chat program, whose dependencies are unpinned (resolved as of today, httpx 0.29 breaks its client). drugprot's env
# config copies this variable into the null harness's env, keeping verifiers' own program resolved as of this date
# (drugprot.envs.harness.choose_null_program) rather than drugprot-null's pins.
export UV_EXCLUDE_NEWER=$cutoff
step "rollouts: harnesses $harnesses, data $(basename "$data"), run-time uv resolution as of $cutoff"
read -r -a harness_ids <<<"$harnesses"
rc=0
"$venv/bin/python" "$helper" rollouts --configs "$dry/drugprot/configs" --work "$work/rollouts" \
    --data "$data" --harness "${harness_ids[@]}" ${GROUP_SIZE:+--group-size "$GROUP_SIZE"} "$@" || rc=1

# -- 4. prime-rl's orchestrator loop, its batches and its requests --------------------------------------------
step "orchestrator loop: configs/drugprot.toml scaled down, data $(basename "$data")"
rm -rf "$work/loop"
"$venv/bin/python" "$repo/scripts/prime_rl_check_loop.py" run --configs "$dry/drugprot/configs" \
    --work "$work/loop" --data "$data" || rc=1
exit $rc
