#!/usr/bin/env bash
# The trainer-settings grid (docs/training/gpu-sizing.md, "Trainer settings"): prime-rl's four offload settings at
# each given depth, one bench.trainer_step process each, both recipes' micro-batch lengths (10,240: drugprot.toml;
# 14,336: rl/extraction.toml) packed in 2,048-token samples; with COMPILE=1, prime-rl's offloads compiled instead.
#
#     bench/trainer_grid.sh PRIME_SRC OUT_DIR DEPTH [DEPTH ...]
#
# Writes OUT_DIR/settings_L<depth>_<setting>.json (a depth of 32 is the full model); a process that fails is
# reported and the grid goes on. python -m bench.trainer_settings OUT_DIR/*.json then fits and chooses.
set -uo pipefail
if [ $# -lt 3 ]; then
    echo "usage: bench/trainer_grid.sh PRIME_SRC OUT_DIR DEPTH [DEPTH ...]" >&2
    exit 2
fi
src=$1 out=$2
shift 2
step=("${PYTHON:-python3}" -m bench.trainer_step --prime-rl-src "$src" --seq-len 10240 14336 --sample-tokens 2048
    --micro-batches 2 --steps 2)
if [ "${COMPILE:-0}" = 1 ]; then settings=(compiled); else
    settings=(default no_ac_offload no_optim_offload no_offload); fi
failed=0
for depth in "$@"; do
    for setting in "${settings[@]}"; do
        case $setting in
            default) flags=() ;;
            no_ac_offload) flags=(--no-ac-offload) ;;
            no_optim_offload) flags=(--no-optim-offload) ;;
            no_offload) flags=(--no-ac-offload --no-optim-offload) ;;
            compiled) flags=(--compile) ;;
        esac
        echo "== depth $depth, $setting: $(date -u +%T)"
        "${step[@]}" --layers "$depth" "${flags[@]}" --json "$out/settings_L${depth}_${setting}.json" ||
            { echo "== depth $depth, $setting: failed ($?)"; failed=1; }
    done
done
exit $failed
