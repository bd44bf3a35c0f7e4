#!/bin/bash
# ckpt_kill.sh (fast tier) — kill -9 of one rank of `mpirun -np 3` at 3
# seeded moments, under `tessera supervise --max-restarts 3`, for PageRank and
# k-means with a checkpoint every 2 of 20 iterations: each job must end with
# exit 0 and the output of the failure-free run (PageRank within 1e-12
# relative, k-means byte for byte).  ckpt_kill_long.sh does 10 moments.
# Prints per moment what happened (delay, rank killed, restarts, epoch
# restored or "starting afresh" when the kill came before the first
# checkpoint).
#
# Environment: TESSERA, TESS_SRC, TESS_HAVE_MPI=0|1, CKPT_KILL_SEED (default
# 1).  Exits 77 (skipped) without TESSERA or MPI, 1 at the first failure.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ckpt_lib.bash"
kill_setup

# Under a sanitizer (SANITIZED=1) every run is several times slower: two
# moments each, which still covers a kill before and after a checkpoint.
N=3
[ $SANITIZED = 1 ] && N=2
step "pagerank: $N moments (seed $SEED)"
kill_moments pagerank $N 1 "$SEED" --gen web:200000 --iterations 20 --partitions 6
step "kmeans: $N moments (seed $SEED)"
kill_moments kmeans $N 1 "$SEED" --gen 300000:4:16 --iterations 20 --partitions 6
echo "ok: ckpt_kill"
