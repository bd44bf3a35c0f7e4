#!/usr/bin/env bash
# tile_stream.sh — streamed input and output of the tiles applications
# (docs/tiles.md, "Streamed input and output"): blackscholes, sar and
# texture write the same bytes streamed (the default for files) as with
# --in-memory, embedded and as 2 ranks, for several policies; a streamed
# Black-Scholes run holds well under its input in memory; bad input (a
# missing or truncated file, an output in a missing directory) gives one
# line naming the file, exit 1 and no output or temporary left behind.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
app() { "$TESSERA" run "$@" --quiet; }
same() { cmp "$1" "$2" > /dev/null || die "$3: $1 and $2 differ"; }

# streamed APP OUT REF ARGS...: APP ARGS --output OUT streamed, embedded
# (three policies) and, where MPI works, as 2 ranks: each equal to REF.
streamed() {
    local name=$1 out=$2 ref=$3
    shift 3
    local policies=("apc" "static:7x5" "dd:9")
    [ $SANITIZED = 1 ] && policies=("apc")
    for pol in "${policies[@]}"; do
        [ "$name" = blackscholes ] && [ "$pol" = static:7x5 ] && pol=static:1000
        app "$name" "$@" --output "$out" --policy "$pol" --processors 'cpu*2'
        same "$out" "$ref" "$name streamed, --policy $pol"
    done
    if [ "$MPI" = 1 ]; then
        mpi 2 "$TESSERA" run "$name" "$@" --output "$out" --quiet
        same "$out" "$ref" "$name streamed as 2 ranks"
    fi
    echo "$name: streamed output equals --in-memory ($(wc -c < "$ref") bytes)"
}

step "blackscholes: --input read by region, --output written by tiles"
n=200000
[ $SANITIZED = 1 ] && n=20000
app blackscholes --options $n --seed 4 --save-input "$tmp/bs.in" --output "$tmp/bs.gen"
app blackscholes --input "$tmp/bs.in" --output "$tmp/bs.mem" --in-memory
same "$tmp/bs.mem" "$tmp/bs.gen" "blackscholes --input of --save-input"
streamed blackscholes "$tmp/bs.out" "$tmp/bs.mem" --input "$tmp/bs.in"

step "sar: --output written by tiles; the brightest pixel line unchanged"
"$TESSERA" run sar --gen 40:128:90:70:2 --output "$tmp/sar.mem" --in-memory 2> "$tmp/sar.mem.err"
"$TESSERA" run sar --gen 40:128:90:70:2 --output "$tmp/sar.out" 2> "$tmp/sar.out.err"
diff <(grep brightest "$tmp/sar.mem.err") <(grep brightest "$tmp/sar.out.err") ||
    die "sar: the brightest pixel differs streamed"
streamed sar "$tmp/sar.out" "$tmp/sar.mem" --gen 40:128:90:70:2

step "texture: the slide read by band, the features printed as tiles finish"
app texture --gen 600:400:5 --save-image "$tmp/slide.pgm" --output "$tmp/tex.gen" --block 16
app texture --image "$tmp/slide.pgm" --output "$tmp/tex.mem" --block 16 --in-memory
same "$tmp/tex.mem" "$tmp/tex.gen" "texture --image of --save-image"
streamed texture "$tmp/tex.out" "$tmp/tex.mem" --image "$tmp/slide.pgm" --block 16
python3 - "$tmp/slide.pgm" "$tmp/slide.ppm" << 'PY'
import sys
d = open(sys.argv[1], "rb").read()
i = d.index(b"255\n") + 4
rgb = bytearray()
for v in d[i:]:
    rgb += bytes((v, max(0, v - 1), min(255, v + 2)))  # grey = (r+g+b)/3 = v
open(sys.argv[2], "wb").write(d[:i].replace(b"P5", b"P6") + rgb)
PY
app texture --image "$tmp/slide.ppm" --output "$tmp/tex.ppm" --block 16 --policy static:3x4
same "$tmp/tex.ppm" "$tmp/tex.mem" "texture streamed from a PPM"

step "a device as --output is written in place, not by offsets"
app blackscholes --input "$tmp/bs.in" --output /dev/null

if [ $SANITIZED = 0 ]; then
    step "blackscholes: a streamed run holds the tiles in flight, not the input"
    m=5000000 # 60 MB of input, 40 MB of output
    app blackscholes --options $m --save-input "$tmp/big.in" --output /dev/null --processors cpu
    rss() { # max RSS in KB of the command
        python3 -c 'import resource, subprocess, sys
rc = subprocess.run(sys.argv[1:]).returncode
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss if rc == 0 else -1)' "$@"
    }
    run_rss=$(rss "$TESSERA" run blackscholes --input "$tmp/big.in" --output "$tmp/big.out" \
        --quiet --processors 'cpu*2')
    mem_rss=$(rss "$TESSERA" run blackscholes --input "$tmp/big.in" --output "$tmp/big.mem" \
        --quiet --processors 'cpu*2' --in-memory)
    same "$tmp/big.out" "$tmp/big.mem" "blackscholes 5M options streamed"
    # The process itself (code, libraries, thread stacks: about 14 MB) is
    # not what streaming saves: measured on a run of 1000 options and taken
    # off, so that a few more tiles in flight on a loaded machine do not
    # read as holding the input.
    base_rss=$(rss "$TESSERA" run blackscholes --options 1000 --output /dev/null --quiet \
        --processors 'cpu*2')
    in_kb=$(($(wc -c < "$tmp/big.in") / 1024))
    echo "max RSS: streamed $run_rss KB, in memory $mem_rss KB, the process alone $base_rss KB, input $in_kb KB"
    [ "$run_rss" -gt 0 ] && [ "$base_rss" -gt 0 ] && [ $((run_rss - base_rss)) -lt $((in_kb / 2)) ] ||
        die "blackscholes streamed: max RSS $run_rss KB less the process's $base_rss KB is not under half the input ($in_kb KB)"
    rm -f "$tmp/big.in" "$tmp/big.out" "$tmp/big.mem"
fi

step "bad input or output: one line naming the file, exit 1, nothing left behind"
bad() { # PATTERN APP ARGS... (writing into the empty $tmp/bad)
    local pattern=$1
    shift
    rm -rf "$tmp/bad" && mkdir "$tmp/bad"
    set +e
    "$TESSERA" run "$@" --quiet 2> "$tmp/err"
    local rc=$?
    set -e
    [ $rc = 1 ] || die "$*: exit $rc, expected 1 ($(cat "$tmp/err"))"
    [ "$(wc -l < "$tmp/err")" = 1 ] || die "$*: stderr is not one line: $(cat "$tmp/err")"
    grep -qF -- "$pattern" "$tmp/err" || die "$*: stderr lacks '$pattern': $(cat "$tmp/err")"
    [ -z "$(ls -A "$tmp/bad")" ] || die "$*: left files behind: $(ls -A "$tmp/bad")"
}
head -c 1000 "$tmp/bs.in" > "$tmp/short.in"
head -c 5000 "$tmp/slide.pgm" > "$tmp/short.pgm"
bad "missing.in" blackscholes --input "$tmp/missing.in" --output "$tmp/bad/p.out"
bad "short.in" blackscholes --input "$tmp/short.in" --output "$tmp/bad/p.out"
bad "missing.pgm" texture --image "$tmp/missing.pgm" --output "$tmp/bad/f.txt"
bad "short.pgm" texture --image "$tmp/short.pgm" --output "$tmp/bad/f.txt"
bad "nodir/p.out" blackscholes --input "$tmp/bs.in" --output "$tmp/bad/nodir/p.out"
bad "nodir/f.txt" texture --image "$tmp/slide.pgm" --output "$tmp/bad/nodir/f.txt"
echo "bad input and output: 6 cases refused"
