#!/usr/bin/env bash
# tiles.sh — the tiles face through `tessera run blackscholes`: prices agree
# with an independent double-precision computation; the output is bitwise
# identical for every policy, processor mix (slowed processors included),
# tile bound, rank count and data placement; input moves once; OpenCL output
# within 2 ulp of the CPU's; statistics add up; bad input is refused.
# ctest: run-serial (it times a slowed mix against one processor)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
REFBS="$TESS_SRC/tests/integration/ref_blackscholes.py"
ULP="$TESS_SRC/tests/integration/ulp_compare.py"
bs() { "$TESSERA" run blackscholes --quiet "$@"; }
# Under a sanitizer: no OpenCL (PoCL maps memory behind the sanitizers' backs,
# ASan cannot unmap it) and no timing (the stress test measures speed).

step "an option book written independently (python), with extreme but valid options"
python3 - "$tmp/book" << 'PY'
import random, struct, sys
rnd = random.Random(7)
vals = []
for i in range(30011):
    vals += [rnd.uniform(5, 30), rnd.uniform(1, 100), rnd.uniform(0.25, 10)]
vals[:6] = [30, 1, 10, 5, 100, 0.25]  # deep in and out of the money
open(sys.argv[1], "wb").write(struct.pack(f"<{len(vals)}f", *vals))
PY
bs --input "$tmp/book" --output "$tmp/ref.out" --processors cpu
python3 "$REFBS" "$tmp/book" "$tmp/ref.out"
bs --input "$tmp/book" --output "$tmp/r2.out" --riskfree 0.05 --volatility 0.5 --iterations 3
python3 "$REFBS" "$tmp/book" "$tmp/r2.out" --riskfree 0.05 --volatility 0.5

same() { # same NAME ARGS...: the output equals ref.out to the bit
    local name=$1
    shift
    "$@" --input "$tmp/book" --output "$tmp/$name.out" --stats "$tmp/$name.json"
    cmp "$tmp/ref.out" "$tmp/$name.out" || die "$name: output differs from the reference run"
}

step "policies, processor mixes and tile bounds give the same bits"
same apc bs --processors cpu*2
same dd bs --policy dd:1000 --processors cpu*2
same dd_small bs --policy dd:64 --processors cpu*3
same static bs --policy static:777 --processors cpu*2
same ws bs --policy ws:500 --processors cpu*3
same slowed bs --processors cpu+cpu@0.25
same slowed_ws bs --policy ws:300 --processors cpu@0.5+cpu*2
same bounds bs --min-tile 1 --max-tile 100 --processors cpu*2
same k3 bs --iterations 3 --processors cpu*2

step "the statistics add up"
python3 - "$tmp/apc.json" "$tmp/slowed.json" << 'PY'
import json, sys
for path in sys.argv[1:]:
    s = json.load(open(path))
    parts = ("boot", "proc", "limb", "init", "tcp", "out", "over")
    split = sum(s[k] for k in parts)
    assert abs(split - s["seconds"]) < 1e-6, (path, split, s["seconds"])
    assert min(s[k] for k in parts) >= 0, s
    assert s["cells"] == 30011, s["cells"]
    assert sum(p["cells"] for p in s["processors"]) == 30011
    assert sum(p["tiles"] for p in s["processors"]) == s["tiles"]
PY

if [ "$MPI" = 1 ]; then
    step "ranks 2 and 3, input spread or on one rank, give the same bits"
    same np2 mpi 2 "$TESSERA" run blackscholes --quiet --processors cpu
    # --iterations 100 (same prices): long enough that the other ranks steal
    same np2_on0 mpi 2 "$TESSERA" run blackscholes --quiet --processors cpu --data-on 0 \
        --iterations 100
    same np3 mpi 3 "$TESSERA" run blackscholes --quiet --processors cpu --policy ws:2000
    same np3_on2 mpi 3 "$TESSERA" run blackscholes --quiet --processors cpu --data-on 2 \
        --tile-chunk 4096 --iterations 100
    same np3_static mpi 3 "$TESSERA" run blackscholes --quiet --processors cpu --policy static:999
    same np2_dd mpi 2 "$TESSERA" run blackscholes --quiet --processors cpu+cpu@0.5 --policy dd:700

    step "input moves once: bytes moved = 12 x the cells processed away from their owner"
    python3 - "$tmp/np3_on2.json" "$tmp/np2_on0.json" << 'PY'
import json, sys
for path, owner in zip(sys.argv[1:], (2, 0)):
    s = json.load(open(path))
    ranks = s["per_rank"]
    moved_in = sum(r["bytes_in"] for r in ranks)
    moved_out = sum(r["bytes_out"] for r in ranks)
    remote = sum(r["cells"] for r in ranks if r["rank"] != owner)
    assert moved_in == moved_out == 12 * remote, (path, moved_in, moved_out, remote)
    assert ranks[owner]["bytes_in"] == 0
    assert remote > 0, f"{path}: no rank stole from the owner"
    print(f"{path}: {moved_in} bytes moved for {remote} remote options")
PY
fi

step "OpenCL: the same prices within 2 ulp (PoCL runs them on the CPU)"
if opencl_probe "$tmp/cl.err" bs --input "$tmp/book" --output "$tmp/cl.out" \
    --processors opencl; then
    python3 "$ULP" "$tmp/ref.out" "$tmp/cl.out" 2
    bs --input "$tmp/book" --output "$tmp/mix.out" --processors cpu+opencl
    python3 "$ULP" "$tmp/ref.out" "$tmp/mix.out" 2
    step "OpenCL program cache: written, reused, a corrupt entry rebuilt, TESS_CL_CACHE=0 off"
    cache="$tmp/clcache"
    TESS_CL_CACHE="$cache" bs --input "$tmp/book" --output "$tmp/c1.out" --processors opencl
    entry=$(ls "$cache"/*.clbin) || die "no cache entry written in $cache"
    [ "$(head -c 8 "$entry")" = TESSCLB1 ] || die "cache entry without its magic"
    cmp "$tmp/cl.out" "$tmp/c1.out" || die "a run that filled the cache: output differs"
    cp "$entry" "$tmp/entry.good"
    TESS_CL_CACHE="$cache" bs --input "$tmp/book" --output "$tmp/c2.out" --processors opencl
    cmp "$tmp/cl.out" "$tmp/c2.out" || die "a run from the cache: output differs"
    for bad in flip truncate; do
        python3 - "$entry" "$bad" << 'PY'
import sys
p, how = sys.argv[1], sys.argv[2]
b = bytearray(open(p, "rb").read())
if how == "flip":
    for i in range(len(b) // 2, len(b) // 2 + 64): b[i] ^= 0x5A
else:
    b = b[: len(b) // 3]
open(p, "wb").write(b)
PY
        cp "$entry" "$tmp/entry.bad"
        TESS_CL_CACHE="$cache" bs --input "$tmp/book" --output "$tmp/c3.out" --processors opencl ||
            die "a corrupt cache entry ($bad) failed the run"
        cmp "$tmp/cl.out" "$tmp/c3.out" || die "a corrupt cache entry ($bad): output differs"
        [ "$(head -c 8 "$entry")" = TESSCLB1 ] && ! cmp -s "$entry" "$tmp/entry.bad" ||
            die "a corrupt cache entry ($bad) was not written anew"
    done
    XDG_CACHE_HOME="$tmp/xdg" TESS_CL_CACHE=0 bs --input "$tmp/book" --output "$tmp/c4.out" \
        --processors opencl
    [ ! -e "$tmp/xdg/tessera" ] || die "TESS_CL_CACHE=0 still wrote a cache"
    env -u TESS_CL_CACHE XDG_CACHE_HOME="$tmp/xdg" "$TESSERA" run blackscholes --quiet \
        --input "$tmp/book" --output "$tmp/c5.out" --processors opencl
    ls "$tmp/xdg/tessera/"*.clbin > /dev/null || die "no cache under \$XDG_CACHE_HOME/tessera"
fi

if [ "$MPI" = 1 ] && [ $SANITIZED = 0 ]; then
    step "a rank killed mid-run: the job ends with an error within seconds, no output"
    rm -f "$tmp/dead.out"
    start=$(date +%s)
    set +e
    timeout 120 mpirun -np 2 --oversubscribe --bind-to none "$TESSERA" run blackscholes --quiet \
        --options 2000000 --iterations 250 --processors cpu --output "$tmp/dead.out" \
        > /dev/null 2>&1 &
    job=$!
    sleep 2
    pkill -9 -n -f "run blackscholes --quiet --options 2000000 --iterations 250"
    wait $job
    rc=$?
    set -e
    took=$(( $(date +%s) - start ))
    [ $rc != 0 ] && [ $rc != 124 ] || die "killed rank: exit $rc"
    [ $took -lt 30 ] || die "killed rank: the job took $took s to end"
    [ ! -e "$tmp/dead.out" ] && ! ls "$tmp"/.dead.out.tmp.* > /dev/null 2>&1 ||
        die "killed rank: output or temporaries left"
    echo "   ended with exit $rc after $took s"
fi

step "the API: 2-D and 3-D areas, reader and writer callbacks, slabs over ranks"
API="$TESS_BUILD/tests/integration/tile_api"
for pol in apc dd:100 static:50 ws:3x4; do "$API" grid2d "$pol" cpu*2; done
# fixed tiles below the job's smallest tile (3 whole rows) are made that large
for pol in dd:1x1 static:1x1 ws:1 dd:1 ws:2x300; do "$API" rows "$pol" cpu*2; done
TESS_VERBOSE=1 "$API" rows dd:1x1 cpu > /dev/null 2> "$tmp/err"
grep -q "kept within its smallest and largest tile (771 cells" "$tmp/err" ||
    die "rows dd:1x1: no log line saying the tile was fitted"
for pol in apc dd:100 ws:7x8x5 static:7x2x5; do "$API" grid3d "$pol" cpu+cpu@0.5; done
if [ "$MPI" = 1 ]; then
    mpi 3 "$API" grid3d apc cpu
    mpi 2 "$API" grid2d ws:100 cpu*2
    # outputs as messages, as from ranks on other nodes
    TESS_NODE_SHARE=0 mpi 3 "$API" grid3d ws:7x8x5 cpu
    # "nodes" of 2 ranks: ranks 1 through rank 0's image, 2 and 3 in messages
    TESS_NODE_RANKS=2 mpi 4 "$API" grid3d apc cpu
fi

step "wrong input slabs end the run with a message naming them"
badslab() { # ranks how expected-text
    set +e
    if [ "$1" = 1 ]; then "$API" badslab "$2" > /dev/null 2> "$tmp/err"
    else timeout 60 mpirun -np "$1" --oversubscribe --bind-to none "$API" badslab "$2" > /dev/null 2> "$tmp/err"; fi
    local rc=$?
    set -e
    [ $rc != 0 ] && [ $rc != 124 ] && grep -q "$3" "$tmp/err" ||
        die "badslab $2 on $1 rank(s): exit $rc, $(cat "$tmp/err")"
}
badslab 1 outside "rank 0's input rows \[0, 51) are outside the area"
badslab 1 gap "the ranks own input for 49 of the 50 rows"
if [ "$MPI" = 1 ]; then
    badslab 2 overlap "ranks 0 and 1 both own input rows"
    badslab 3 gap "the ranks own input for 49 of the 50 rows"
    badslab 2 outside "rank 1's input rows \[25, 51) are outside the area"
fi

step "a failing kernel ends the run with its message, on every rank"
set +e
"$API" fail cpu*2 2> "$tmp/err"
rc=$?
set -e
[ $rc = 3 ] && grep -q "cell 1234 is poisoned" "$tmp/err" || die "fail: exit $rc, $(cat "$tmp/err")"
if [ "$MPI" = 1 ]; then
    set +e
    timeout 60 mpirun -np 3 --oversubscribe --bind-to none "$API" fail cpu > /dev/null 2> "$tmp/err"
    rc=$?
    set -e
    [ $rc != 0 ] && [ $rc != 124 ] && grep -q "cell 1234 is poisoned" "$tmp/err" ||
        die "fail under mpirun: exit $rc, $(cat "$tmp/err")"
fi
rc=77
if [ $SANITIZED = 0 ]; then
    set +e
    "$API" clbuild 2> "$tmp/err"
    rc=$?
    set -e
fi
if [ $rc = 3 ]; then
    grep -q "does not build on .*undeclared identifier" "$tmp/err" ||
        grep -q "no OpenCL platform" "$tmp/err" || die "clbuild: $(cat "$tmp/err")"
elif [ $rc != 77 ]; then
    die "clbuild: exit $rc"
fi

step "the OpenCL kernel helper: grid2d's kernel in 5 lines of OpenCL C, alone and beside a CPU"
if [ $SANITIZED = 0 ] && [ $rc != 77 ] && ! grep -q "no OpenCL platform" "$tmp/err"; then
    "$API" clhelper opencl
    "$API" clhelper cpu+opencl
    set +e
    "$API" clparams 2> "$tmp/err"
    rc=$?
    set -e
    [ $rc = 3 ] && grep -q "opencl kernel 'g': params: unknown 'width'" "$tmp/err" ||
        die "clparams: exit $rc, $(cat "$tmp/err")"
else
    echo "   skipped: no OpenCL here"
fi

# The fast tier's bound catches a controller that cannot take work back from
# a processor that slowed (that gives 2-3x); tiles_long.sh holds it to the
# issue's 1.3x over more rounds (timing on a shared machine is noisy).
step "a processor slowed to 5% mid-run: the job still ends within 1.6x the ideal"
if [ "$(nproc)" -ge 2 ] && [ $SANITIZED = 0 ]; then
    python3 "$TESS_SRC/tests/integration/tile_stress.py" "$TESSERA" 2 1.6 ||
        die "the slowed mix took more than 1.6x the ideal"
else
    echo "   (skipped: fewer than 2 cores, or under a sanitizer)"
fi

step "NaN and negative prices give NaN, not a crash"
python3 -c "
import struct, sys
open(sys.argv[1], 'wb').write(struct.pack('<9f', float('nan'), 10, 1, -5, 10, 1, 10, 10, 1))" "$tmp/nan"
bs --input "$tmp/nan" --output "$tmp/nan.out"
python3 -c "
import math, struct, sys
v = struct.unpack('<6f', open(sys.argv[1], 'rb').read())
assert all(map(math.isnan, v[:4])) and not any(map(math.isnan, v[4:])), v" "$tmp/nan.out"

step "bad input: one line naming the cause, exit != 0, no output"
refuse() { # refuse PATTERN ARGS...
    local pattern=$1
    shift
    rm -f "$tmp/bad.out"
    if "$TESSERA" run blackscholes --quiet --output "$tmp/bad.out" "$@" 2> "$tmp/err"; then
        die "accepted: $*"
    fi
    grep -q -- "$pattern" "$tmp/err" || { cat "$tmp/err" >&2; die "no '$pattern' for: $*"; }
    [ "$(wc -l < "$tmp/err")" -le 2 ] || { cat "$tmp/err" >&2; die "more than one line: $*"; }
    [ ! -e "$tmp/bad.out" ] || die "partial output left by: $*"
}
head -c 100 "$tmp/book" > "$tmp/short"
refuse "short: size 100 is not a multiple of 12 bytes" --input "$tmp/short"
refuse "min-tile" --options 1000 --min-tile 10 --max-tile 5
refuse "processors" --options 1000 --processors gpu
refuse "processors" --options 1000 --processors cpu*0
refuse "policy 'fifo'" --options 1000 --policy fifo
refuse "policy 'dd:0'" --options 1000 --policy dd:0
refuse "policy 'ws:4x4'" --options 1000 --policy ws:4x4
refuse "option --options" --options 0
refuse "data-on" --options 1000 --data-on 3
refuse "either --options" --options 10 --input "$tmp/book"
refuse "missing-file" --input "$tmp/missing-file"
mkfifo "$tmp/fifo"
refuse "fifo: not a regular file" --input "$tmp/fifo"
mkdir "$tmp/dir"
refuse "cannot write .*dir: Is a directory" --options 100 --stats "$tmp/dir"
if [ -c /dev/full ]; then # written in place, never replaced by a file
    refuse "cannot write /dev/full: No space left on device" --options 1000 --stats /dev/full
    [ -c /dev/full ] || die "/dev/full is no longer a device"
fi
bs --options 3 --output /dev/stdout | cmp -s - /dev/null && die "nothing written to /dev/stdout"
echo "tiles: all checks passed"
