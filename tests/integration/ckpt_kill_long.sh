#!/bin/bash
# ckpt_kill_long.sh (long tier) — ckpt_kill.sh with 10 seeded moments per
# application (PageRank, k-means, n-body): kill -9 of one rank of `mpirun -np 3` under
# `tessera supervise --max-restarts 3`; then 3 moments in which a rank of the
# restarted run is killed too (a restore from a restored run's checkpoints,
# with leftovers of interrupted writes).  Every job must end with exit 0 and
# the output of the failure-free run (PageRank within 1e-12 relative,
# k-means and n-body byte for byte).
#
# Environment: TESSERA, TESS_SRC, TESS_HAVE_MPI=0|1, CKPT_KILL_SEED (default
# 1).  Exits 77 (skipped) without TESSERA or MPI, 1 at the first failure.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ckpt_lib.bash"
kill_setup

step "pagerank: 10 moments (seed $SEED)"
kill_moments pagerank 10 1 "$SEED" --gen web:200000 --iterations 20 --partitions 6
step "kmeans: 10 moments (seed $SEED)"
kill_moments kmeans 10 1 "$SEED" --gen 300000:4:16 --iterations 20 --partitions 6
step "nbody: 10 moments (seed $SEED)"
kill_moments nbody 10 1 "$SEED" --particles 30000 --cutoff 1 --steps 20 --partitions 6
step "pagerank: 3 moments with two kills (seed $SEED)"
kill_moments pagerank 3 2 "$SEED" --gen web:200000 --iterations 20 --partitions 6
step "kmeans: 3 moments with two kills (seed $SEED)"
kill_moments kmeans 3 2 "$SEED" --gen 300000:4:16 --iterations 20 --partitions 6
echo "ok: ckpt_kill_long"
