#!/usr/bin/env bash
# tile_central.sh — the centralised APC (--policy capc): Black-Scholes, sar
# and texture give the same bits as under the default policy (APC+),
# embedded and under mpirun at 2 and 3 ranks (input spread, on one rank,
# through messages); its statistics add up, with INIT, TCP and OUT; a
# capc run moves input only for tiles run away from it.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
bs() { "$TESSERA" run blackscholes --quiet "$@"; }
sar() { "$TESSERA" run sar --quiet "$@"; }
tex() { "$TESSERA" run texture --quiet "$@"; }

step "reference outputs under the default policy"
bs --options 20011 --output "$tmp/bs.ref" --processors cpu*2
sar --gen 48:200:24:16:3 --save-scene "$tmp/g.tsar" --output "$tmp/sar.ref" --processors cpu*2
tex --gen 200:150:4 --block 16 --save-image "$tmp/s.pgm" --output "$tmp/tex.ref" --processors cpu*2

same() { # same APP NAME CMD...: APP's output of CMD equals its reference to the bit
    local app=$1 name=$2
    shift 2
    case $app in
    bs) "$@" --options 20011 --output "$tmp/$name.out" --stats "$tmp/$name.json" ;;
    sar) "$@" --input "$tmp/g.tsar" --output "$tmp/$name.out" --stats "$tmp/$name.json" ;;
    tex) "$@" --image "$tmp/s.pgm" --block 16 --output "$tmp/$name.out" --stats "$tmp/$name.json" ;;
    esac
    cmp "$tmp/$app.ref" "$tmp/$name.out" || die "$app $name: output differs from the default policy's"
}

step "capc embedded: the same bits, on one or more processors, slowed ones too"
same bs bs1 bs --policy capc --processors cpu
same bs bs2 bs --policy capc --processors cpu+cpu@0.5
same sar sar2 sar --policy capc --processors cpu*2
same tex tex2 tex --policy capc --processors cpu*3

if [ "$MPI" = 1 ]; then
    step "capc under mpirun: 2 and 3 ranks, input spread, on one rank, outputs as messages"
    same bs bs_np2 mpi 2 "$TESSERA" run blackscholes --quiet --policy capc --processors cpu
    same bs bs_np3_on2 mpi 3 "$TESSERA" run blackscholes --quiet --policy capc --processors cpu \
        --data-on 2
    same sar sar_np2 mpi 2 "$TESSERA" run sar --quiet --policy capc --processors cpu
    TESS_NODE_SHARE=0 same sar sar_np3_msg mpi 3 "$TESSERA" run sar --quiet --policy capc \
        --processors cpu+cpu@0.5
    same tex tex_np2 mpi 2 "$TESSERA" run texture --quiet --policy capc --processors cpu \
        --tile-chunk 4096
    same tex tex_np3_on2 mpi 3 "$TESSERA" run texture --quiet --policy capc --processors cpu \
        --data-on 2
fi

step "the statistics add up, INIT, TCP and OUT included"
python3 - "$tmp"/*.json << 'PY'
import json, sys
parts = ("boot", "proc", "limb", "init", "tcp", "out", "over")
for path in sys.argv[1:]:
    s = json.load(open(path))
    split = sum(s[k] for k in parts)
    assert abs(split - s["seconds"]) < 1e-6, (path, split, s["seconds"])
    assert min(s[k] for k in parts) >= 0, (path, s)
    assert sum(p["cells"] for p in s["processors"]) == s["cells"], path
    assert s["policy"] == "capc", (path, s["policy"])
    if "on2" in path:  # rank 2 holds the input: the others' tiles fetched it
        r = s["per_rank"]
        assert r[2]["bytes_out"] > 0 and sum(x["bytes_in"] for x in r) == r[2]["bytes_out"], r
PY

step "a bad policy names capc among the choices"
set +e
bs --options 100 --policy capc:5 2> "$tmp/err"
rc=$?
set -e
[ $rc = 2 ] && grep -q "capc" "$tmp/err" || die "capc:5: exit $rc, $(cat "$tmp/err")"
