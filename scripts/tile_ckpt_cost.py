#!/usr/bin/env python3
"""tile_ckpt_cost.py — what --checkpoint-dir costs a tiles run.

Runs `TESSERA run APP ARGS --output FILE` without and with
`--checkpoint-dir DIR` (a fresh directory each time), alternating, ROUNDS
times each, and prints per round two times and their ratios: the wall time
of the whole process (the journal's set-up and last flush included) and
the tiles run's own (`seconds` of --stats), and the time the journal took
on rank 0's controller thread (what the run reports) against the plain
run; then the medians.  On a loaded machine the ratios carry its noise;
the journal's own time does not depend on how the processors were
scheduled.  Alternating rounds keep a machine's drift (other jobs, clock
changes) out of the ratio.  docs/checkpoints.md ("Tiles") cites its results.

Usage: tile_ckpt_cost.py TESSERA ROUNDS APP ARGS...
"""
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


JOURNALED = re.compile(r"journaled .* ([0-9.]+) s of rank 0's controller")


def timed(cmd, stats):
    """Wall seconds of the process, the tiles run's own (--stats), and the
    journal's time on rank 0's controller (0 without one)."""
    t0 = time.perf_counter()
    p = subprocess.run(cmd + ["--stats", stats], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    m = JOURNALED.search(p.stderr)
    with open(stats) as f:
        return wall, json.load(f)["seconds"], float(m.group(1)) if m else 0.0


def main():
    if len(sys.argv) < 4:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    tessera, rounds, app, args = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
    work = tempfile.mkdtemp(prefix="tile-ckpt-cost.")
    base = [tessera, "run", app] + args + ["--output", os.path.join(work, "out")]
    stats = os.path.join(work, "stats.json")
    walls, runs, shares = [], [], []
    try:
        for r in range(rounds):
            ckpt = os.path.join(work, "ckpt")
            shutil.rmtree(ckpt, ignore_errors=True)
            plain = timed(base, stats)
            with_ckpt = timed(base + ["--checkpoint-dir", ckpt], stats)
            walls.append(with_ckpt[0] / plain[0])
            runs.append(with_ckpt[1] / plain[1])
            shares.append(with_ckpt[2] / plain[1])
            journal = os.path.getsize(os.path.join(ckpt, "tiles.journal"))
            print(f"round {r + 1}: wall {plain[0]:.3f} -> {with_ckpt[0]:.3f} s "
                  f"(ratio {walls[-1]:.4f}), tiles run {plain[1]:.3f} -> {with_ckpt[1]:.3f} s "
                  f"(ratio {runs[-1]:.4f}), {(journal - 16) // 104} tiles journaled in "
                  f"{with_ckpt[2]:.3f} s ({100 * shares[-1]:.2f}% of the plain run)", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{app} {' '.join(args)}: {rounds} rounds, median ratio with/without "
          f"--checkpoint-dir: wall {statistics.median(walls):.4f} "
          f"(min {min(walls):.4f}, max {max(walls):.4f}), tiles run "
          f"{statistics.median(runs):.4f} (min {min(runs):.4f}, max {max(runs):.4f}); "
          f"the journal's own time {100 * statistics.median(shares):.2f}% of the plain run "
          f"(max {100 * max(shares):.2f}%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
