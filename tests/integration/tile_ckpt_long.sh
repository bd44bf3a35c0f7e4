#!/usr/bin/env bash
# tile_ckpt_long.sh (long tier) — tiles checkpoints at many kill moments:
# 12 seeded cases, texture or SAR, each killed with SIGKILL after a seeded
# number of journal records under a seeded policy, the restore killed again
# half of the time, then restored under another seeded policy and processor
# mix; the output must be byte for byte the uninterrupted run's every time.
# TESS_TEST_SEED picks the cases (printed, to rerun a failure).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tile_ckpt_lib.bash"

SEED=${TESS_TEST_SEED:-$RANDOM}
echo "seed $SEED (TESS_TEST_SEED=$SEED to rerun)"
RANDOM=$SEED
TEX=(texture --gen 1024:1024:5 --block 16)
SAR=(sar --gen 64:400:96:64:3)
POLICIES=(apc dd:64 dd:4x4 static:8x8 ws:128 ws:2x8)
MIXES=(cpu cpu*2 cpu*3 cpu+cpu@0.5)
reference "${TEX[@]}" tex
reference "${SAR[@]}" sar

for case in $(seq 1 12); do
    if [ $((RANDOM % 2)) = 0 ]; then name=tex args=("${TEX[@]}"); else name=sar args=("${SAR[@]}"); fi
    kill_policy=${POLICIES[RANDOM % ${#POLICIES[@]}]}
    policy=${POLICIES[RANDOM % ${#POLICIES[@]}]} mix=${MIXES[RANDOM % ${#MIXES[@]}]}
    step "case $case: $name killed under $kill_policy, restored under $policy on $mix"
    dir="$tmp/c$case"
    MAY_END=1 KILL_AFTER=$((1 + RANDOM % 12)) killed_run "$dir" "$tmp/c$case.out" "${args[@]}" \
        --processors "$SLOW" --policy "$kill_policy"
    if [ $((RANDOM % 2)) = 0 ]; then
        MAY_END=1 KILL_AFTER=$((1 + RANDOM % 6)) killed_run "$dir" "$tmp/c$case.out" "${args[@]}" \
            --processors "$SLOW" --policy "$policy" --restore
    fi
    restored_same "$name" "$dir" "${args[@]}" --processors "$mix" --policy "$policy"
done
echo "ok: tile_ckpt_long"
