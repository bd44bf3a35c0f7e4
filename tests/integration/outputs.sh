#!/bin/bash
# outputs.sh (fast tier) — a run's outputs commit all or nothing, and two
# outputs of one run may not name the same file:
#   - kmeans, nbody, pagerank, matmul, jacobi and pagerank-tick with their
#     main outputs in a directory and --metrics on /dev/full (written in
#     place, failing at the end with ENOSPC): exit 1, the failure named, and
#     none of the run's other outputs left behind (neither file nor
#     temporary); the same run with a writable --metrics writes them all;
#   - --output and --metrics (or --dump, --assignments, and the tiles apps'
#     --stats, --save-input, --image, --map, --save-image) naming one file, also
#     spelled differently (x and ./x): a usage error (exit 2) naming both
#     options, nothing created; /dev/null may take several outputs;
#   - an output naming one of the run's input files (also through another
#     spelling or a symbolic link; `tessera convert IN IN`): a usage error,
#     the input unchanged.
#
# Environment: TESSERA.  Exits 77 (skipped) without TESSERA, 1 at the first
# failure.
set -u
. "$(dirname "$0")/lib.sh"

# Each app's run: OUT is the directory its main outputs go to.
run_app() {
    local app=$1 out=$2 metrics=$3
    case $app in
    kmeans)
        "$TESSERA" run kmeans --gen 2000:3:4 --iterations 3 --quiet --output "$out/centres.txt" \
            --assignments "$out/assign.txt" --metrics "$metrics" ;;
    nbody)
        "$TESSERA" run nbody --particles 200 --cutoff 1 --steps 2 --quiet --output "$out/p.txt" \
            --metrics "$metrics" ;;
    pagerank)
        "$TESSERA" run pagerank --gen web:2000 --iterations 3 --quiet --output "$out/ranks.txt" \
            --metrics "$metrics" ;;
    matmul)
        "$TESSERA" run matmul --n 64 --block 32 --quiet --output "$out/c.bin" --metrics "$metrics" ;;
    jacobi)
        "$TESSERA" run jacobi --rows 32 --cols 32 --ticks 3 --quiet --dump "$out/grid.bin" \
            --metrics "$metrics" ;;
    pagerank-tick)
        "$TESSERA" run pagerank-tick --gen web:2000 --ticks 3 --quiet --output "$out/ranks.txt" \
            --metrics "$metrics" ;;
    esac
}

APPS=(kmeans nbody pagerank matmul jacobi pagerank-tick)
if [ -w /dev/full ] && [ -w /dev ]; then
    for app in "${APPS[@]}"; do
        step "$app: the metrics cannot be written: no output is left"
        D="$tmp/$app"
        mkdir -p "$D/ok" "$D/fail"
        run_app "$app" "$D/ok" "$D/ok/m.json" > /dev/null 2> "$D/err" ||
            die "$app: the plain run failed: $(cat "$D/err")"
        [ "$(find "$D/ok" -type f | wc -l)" -ge 2 ] || die "$app: outputs missing: $(ls -A "$D/ok")"
        rc=0
        run_app "$app" "$D/fail" /dev/full > /dev/null 2> "$D/err" || rc=$?
        [ "$rc" = 1 ] || die "$app --metrics /dev/full: exit $rc, wanted 1: $(cat "$D/err")"
        grep -q "/dev/full" "$D/err" || die "$app --metrics /dev/full: not named: $(cat "$D/err")"
        [ -z "$(ls -A "$D/fail")" ] || die "$app --metrics /dev/full: left $(ls -A "$D/fail")"
        echo "   $(head -n 1 "$D/err")"
    done
else
    echo "   skipped: /dev/full or /dev not writable here"
fi

step "two outputs naming one file are refused"
S="$tmp/same"
mkdir -p "$S"
check_same() {
    local label=$1
    shift
    rc=0
    (cd "$S" && "$TESSERA" run "$@" > /dev/null 2> "$S/err") || rc=$?
    [ "$rc" = 2 ] || die "$label: exit $rc, wanted 2: $(cat "$S/err")"
    grep -q "name the same file" "$S/err" || die "$label: message $(cat "$S/err")"
    [ -z "$(find "$S" -mindepth 1 ! -name err)" ] || die "$label: created $(ls -A "$S")"
    echo "   $(cat "$S/err")"
}
check_same kmeans kmeans --gen 100:2:2 --iterations 1 --quiet --output x --metrics ./x
check_same kmeans-assign kmeans --gen 100:2:2 --iterations 1 --quiet --output x --assignments x
check_same pagerank pagerank --gen web:100 --iterations 1 --quiet --output x --metrics x
check_same nbody nbody --particles 10 --cutoff 1 --steps 1 --quiet --output x --metrics "$S/x"
check_same matmul matmul --n 8 --quiet --output x --metrics x
check_same jacobi jacobi --rows 8 --cols 8 --ticks 1 --quiet --dump x --metrics x
check_same pagerank-tick pagerank-tick --gen web:100 --ticks 1 --quiet --output x --metrics x
check_same workqueue workqueue --items 10 --quiet --output x --metrics x
check_same blackscholes blackscholes --options 100 --quiet --output x --stats ./x
check_same blackscholes-save blackscholes --options 100 --quiet --output x --save-input x
check_same sar sar --gen 16:16:16:16 --quiet --output x --image x
check_same texture texture --gen 64:64 --block 8 --quiet --map x --save-image "$S/x"

step "an output naming an input file is refused, the input left as it was"
I="$tmp/inputs"
mkdir -p "$I"
printf '0 1\n1 2\n2 0\n' > "$I/g.txt"
"$TESSERA" gen-points 50:2:2 "$I/p.txt" || die "gen-points"
"$TESSERA" run nbody --particles 20 --cutoff 1 --box 4 --steps 1 --quiet --output "$I/n.txt" ||
    die "nbody input"
"$TESSERA" run blackscholes --options 100 --quiet --save-input "$I/o.bin" || die "options input"
"$TESSERA" run sar --gen 16:16:16:16 --quiet --save-scene "$I/s.bin" || die "scene input"
"$TESSERA" run texture --gen 64:64 --block 8 --quiet --save-image "$I/t.pgm" || die "slide input"
head -c 512 /dev/zero > "$I/m.bin"  # 8 x 8 float64
ln -s g.txt "$I/link.txt"
cp -a "$I" "$tmp/inputs.orig"
check_input() {
    local label=$1
    shift
    rc=0
    (cd "$I" && "$TESSERA" "$@" > /dev/null 2> "$tmp/in.err") || rc=$?
    [ "$rc" = 2 ] || die "$label: exit $rc, wanted 2: $(cat "$tmp/in.err")"
    grep -Eq "is the input given to --|are the same file" "$tmp/in.err" ||
        die "$label: message $(cat "$tmp/in.err")"
    diff -r "$I" "$tmp/inputs.orig" > /dev/null || die "$label: an input changed"
    echo "   $(cat "$tmp/in.err")"
}
check_input convert convert g.txt ./g.txt
check_input convert-link convert link.txt g.txt
check_input pagerank run pagerank --graph g.txt --iterations 1 --quiet --output g.txt
check_input pagerank-tick run pagerank-tick --graph g.txt --ticks 1 --quiet --metrics "$I/g.txt"
check_input kmeans run kmeans --points p.txt --k 2 --iterations 1 --quiet --assignments p.txt
check_input nbody run nbody --input n.txt --cutoff 1 --box 4 --steps 1 --quiet --output n.txt
check_input matmul run matmul --n 8 --input-a m.bin --input-b m.bin --quiet --metrics m.bin
check_input blackscholes run blackscholes --input o.bin --quiet --stats o.bin
check_input sar run sar --input s.bin --quiet --output ./s.bin
check_input texture run texture --image t.pgm --block 8 --quiet --map t.pgm
"$TESSERA" run kmeans --gen 100:2:2 --iterations 1 --quiet --output /dev/null --metrics /dev/null \
    2> "$S/err" || die "/dev/null twice refused: $(cat "$S/err")"
echo "   PASS"
