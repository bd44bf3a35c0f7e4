#!/usr/bin/env bash
# bench_ckpt.sh (fast tier) — a smoke test of the `tessera bench ckpt`
# driver, not a benchmark: the child command lines (--dry-run), one tiny real
# round of each app with and without checkpoints, one tiny restore
# measurement, the report and goal lines, bad options.  A few seconds.
#
# Environment: TESSERA (the CLI), TESS_SRC.  Exits 77 (skipped) without
# TESSERA, 1 at the first failure.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

step "--dry-run shows the three variants of the three apps"
"$TESSERA" bench ckpt --dry-run --rounds 1 --tmpdir "$tmp" > "$tmp/dry.out" 2> "$tmp/dry.err" ||
    die "dry run: exit $?: $(cat "$tmp/dry.err")"
for app in pagerank kmeans nbody; do
    iters=--iterations
    [ "$app" = nbody ] && iters=--steps
    [ "$(grep -c " run $app .*--metrics" "$tmp/dry.out")" = 3 ] || die "dry run, $app: $(cat "$tmp/dry.out")"
    grep -q " run $app .*$iters 1 .*--metrics" "$tmp/dry.out" ||
        die "dry run, $app: no load + 1 iteration variant: $(cat "$tmp/dry.out")"
    grep -q " run $app .*--checkpoint-dir [^ ]* --checkpoint-every 5" "$tmp/dry.out" ||
        die "dry run, $app: no checkpointing variant: $(cat "$tmp/dry.out")"
done

step "--compare-writer adds the competing-writer variant"
"$TESSERA" bench ckpt --dry-run --rounds 1 --apps kmeans --compare-writer --tmpdir "$tmp" \
    > "$tmp/dry.out" 2> "$tmp/dry.err" || die "dry run: exit $?: $(cat "$tmp/dry.err")"
[ "$(grep -c " run kmeans .*--checkpoint-every 5" "$tmp/dry.out")" = 2 ] ||
    die "--compare-writer: not two checkpointing runs: $(cat "$tmp/dry.out")"
grep -q "^TESS_CKPT_WRITER=normal .* run kmeans .*--checkpoint-every 5" "$tmp/dry.out" ||
    die "--compare-writer: no TESS_CKPT_WRITER=normal run: $(cat "$tmp/dry.out")"
"$TESSERA" bench ckpt --quick --rounds 1 --iterations 4 --every 2 --only overhead \
    --apps kmeans --compare-writer --tmpdir "$tmp" > "$tmp/cw.out" 2> "$tmp/cw.err" ||
    die "--compare-writer: exit $?: $(head -c 800 "$tmp/cw.err")"
grep -q "^kmeans round 1: ckpt, competing writer [0-9.]* s/it" "$tmp/cw.out" &&
    grep -q "^kmeans: competing writer (TESS_CKPT_WRITER=normal): ckpt [0-9.]*" "$tmp/cw.out" ||
    die "--compare-writer: no competing-writer lines: $(cat "$tmp/cw.out")"

step "bad options"
for args in "--only nothing" "--rounds 0" "--sizes" "--apps pagerank,bogus" "--bogus"; do
    rc=0
    # shellcheck disable=SC2086
    "$TESSERA" bench ckpt $args --tmpdir "$tmp" > /dev/null 2> "$tmp/err" || rc=$?
    [ "$rc" = 2 ] || die "'$args': exit $rc, wanted 2"
    [ "$(wc -l < "$tmp/err")" = 1 ] || die "'$args': stderr: $(cat "$tmp/err")"
done

step "one tiny round and one tiny restore"
"$TESSERA" bench ckpt --quick --rounds 1 --iterations 4 --every 2 --sizes 100000 \
    --restore-reps 1 --tmpdir "$tmp" > "$tmp/run.out" 2> "$tmp/run.err" ||
    die "tiny run: exit $?: $(head -c 800 "$tmp/run.err")"
for app in pagerank kmeans nbody; do
    grep -q "^$app round 1: plain [0-9.]* s/it .*ckpt [0-9.]* s/it" "$tmp/run.out" ||
        die "$app: no round line: $(cat "$tmp/run.out")"
    grep -q "^$app: goal: checkpoint overhead <= 2% per iteration: \(met\|NOT met\)" "$tmp/run.out" ||
        die "$app: no goal line: $(cat "$tmp/run.out")"
    grep -q "^$app: CPU of the checkpoints: " "$tmp/run.out" || die "$app: no CPU line: $(cat "$tmp/run.out")"
done
grep -q "^restore 100000 doubles (0.8 MB; .*MB/s$" "$tmp/run.out" || die "no restore line: $(cat "$tmp/run.out")"
[ -z "$(ls -A "$tmp" | grep tessera-bench-ckpt)" ] || die "left its temporary directory: $(ls "$tmp")"
echo "bench_ckpt: ok"
