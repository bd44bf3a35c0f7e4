#!/usr/bin/env bash
# bench/tile_stream.sh — streamed input and output of Black-Scholes against
# reading, computing and writing alone (docs/tiles.md, "Streamed input and
# output").  The APC+ goal: a job that reads its input from disk, computes
# and writes its output to disk takes about the largest of the three, not
# their sum.
#
#   TESSERA=build/tessera bench/tile_stream.sh [OPTIONS] [ITERATIONS] [ROUNDS] [DIR]
#
# Makes DIR/stream.in (OPTIONS options of 12 bytes, default 40000000: 480 MB)
# once, then runs in alternating rounds (R C W S M, R C W S M, ...):
#   R  read-only: the input read into nothing (dd, 4 MiB blocks)
#   C  compute-only: --input FILE --in-memory without --output, right after
#      R left the input in the page cache: the process's wall time (its
#      read is a copy from memory)
#   W  write-only: the output's bytes (8 per option) written and fsync'ed
#      (dd conv=fsync)
#   S  the streamed job: --input FILE --output FILE (the default), the
#      process's wall time until the output was renamed into place
#   M  the same with --in-memory: read all, compute, write all
# Before R, S and M the input's pages are dropped from the page cache (dd
# iflag=nocache), so they read from the disk as far as the machine lets a
# process make it.  Prints the medians, S / max(R, C, W) (the goal: at most
# 1.15), M / max and S / (R + C + W).  Environment: PROCESSORS (default:
# one cpu per core).  A benchmark: it prints ratios and never fails on them.
set -euo pipefail
tessera=${TESSERA:-build/tessera}
n=${1:-40000000}; iters=${2:-1}; rounds=${3:-5}; dir=${4:-/tmp}
procs=()
[ -n "${PROCESSORS:-}" ] && procs=(--processors "$PROCESSORS")
in="$dir/stream.in" out="$dir/stream.out"
bs() { "$tessera" run blackscholes --quiet --iterations "$iters" ${procs[@]+"${procs[@]}"} "$@"; }
drop() { dd if="$1" iflag=nocache count=0 status=none 2> /dev/null || true; }
now() { date +%s.%N; }
timed() { # VAR COMMAND...: VAR += " seconds"
    local var=$1 t0 t1
    shift
    t0=$(now)
    "$@"
    t1=$(now)
    printf -v "$var" "%s %s" "${!var}" "$(awk -v a="$t0" -v b="$t1" "BEGIN{print b - a}")"
}
if [ ! -s "$in" ] || [ "$(stat -c %s "$in")" != $((n * 12)) ]; then
    echo "making $in ($((n * 12)) bytes)"
    "$tessera" run blackscholes --quiet --options "$n" --save-input "$in"
fi
R="" C="" W="" S="" M=""
for ((r = 1; r <= rounds; r++)); do
    drop "$in"
    timed R dd if="$in" of=/dev/null bs=4M status=none
    timed C bs --input "$in" --in-memory
    rm -f "$out"
    timed W dd if=/dev/zero of="$out" bs=4M count=$((n * 8 / 4194304)) conv=fsync status=none
    rm -f "$out"
    drop "$in"
    timed S bs --input "$in" --output "$out"
    rm -f "$out"
    drop "$in"
    timed M bs --input "$in" --output "$out" --in-memory
    rm -f "$out"
    echo "round $r: R$(echo "$R" | awk '{print $NF}') C$(echo "$C" | awk '{print $NF}')" \
        "W$(echo "$W" | awk '{print $NF}') S$(echo "$S" | awk '{print $NF}')" \
        "M$(echo "$M" | awk '{print $NF}')"
done
python3 - "$R" "$C" "$W" "$S" "$M" "$n" "$iters" << 'PY'
import statistics, sys
med = [statistics.median(float(x) for x in a.split()) for a in sys.argv[1:6]]
r, c, w, s, m = med
top = max(r, c, w)
print(f"blackscholes {sys.argv[6]} options, K={sys.argv[7]}: medians read {r:.3f} s, "
      f"compute {c:.3f} s, write {w:.3f} s; streamed {s:.3f} s, in-memory {m:.3f} s")
print(f"streamed / max(read, compute, write) = {s / top:.3f} (goal <= 1.15); "
      f"in-memory / max = {m / top:.3f}; streamed / (read + compute + write) = {s / (r + c + w):.3f}")
PY
