#!/usr/bin/env bash
# Measured latency profiles (issue 40 item 4): `tessera bench latency` under
# mpirun writes one-way delays; `--jitter trace:FILE` replays them in the tick
# face, whose results stay bitwise equal to a run without delays; a bad trace
# is one line naming the file and line, exit 2, nothing written.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

jacobi=(--rows 120 --cols 90 --ticks 12 --workers 2)
step "a hand-written trace replays bitwise equal (combined and sched)"
printf '# one-way delays, us\n100\n120\n 90 \n3000 # a spike\n110\n' > "$tmp/hand.txt"
run none "$TESSERA" run jacobi "${jacobi[@]}" --dump "$tmp/none.txt"
for alg in "combined --layers 1 --period 2" "sched --depth 2"; do
    # shellcheck disable=SC2086  # alg holds the algorithm's options
    run trace "$TESSERA" run jacobi "${jacobi[@]}" --alg $alg --jitter "trace:$tmp/hand.txt" \
        --dump "$tmp/trace.txt"
    cmp -s "$tmp/none.txt" "$tmp/trace.txt" || die "trace replay under $alg changed the result"
done

step "bad traces: one line naming file and line, exit 2, no output"
bad_trace() {
    printf "$1" > "$tmp/bad.txt"
    expect_fail_of jacobi --dump d.txt 2 "$2" "${jacobi[@]}" --jitter "trace:$tmp/bad.txt"
}
bad_trace '12\nabc\n' "bad.txt:2: expected a delay"
bad_trace '12\n-5\n' "bad.txt:2: expected a delay"
bad_trace 'inf\n' "bad.txt:1: expected a delay"
bad_trace '0x10\n' "bad.txt:1: expected a delay"
bad_trace '# only a comment\n' "no delays in the file"
expect_fail_of jacobi --dump d.txt 2 "No such file" "${jacobi[@]}" --jitter "trace:$tmp/none/x"
expect_fail_of jacobi --dump d.txt 2 "not a regular file" "${jacobi[@]}" --jitter "trace:/dev/zero"
expect_fail_of jacobi --dump d.txt 2 "missing file" "${jacobi[@]}" --jitter "trace:"

step "bench latency outside mpirun: a one-line refusal"
if "$TESSERA" bench latency > /dev/null 2> "$tmp/err"; then die "bench latency on one rank exit 0"; fi
grep -q "needs 2 or more ranks\|has no MPI" "$tmp/err" || die "bench latency: $(cat "$tmp/err")"

if mpi_usable; then
    step "bench latency under mpirun -np 3 writes a profile that replays"
    run bench timeout 120 mpirun -np 3 --oversubscribe --bind-to none "$TESSERA" bench latency \
        --rounds 100 --bytes 4096 --profile "$tmp/prof.txt" --histogram "$tmp/hist.csv"
    grep -q "3 ranks, 3 pairs x 100 round trips" "$tmp/bench.stdout" || die "bench: $(cat "$tmp/bench.stdout")"
    [ "$(grep -vc '^#' "$tmp/prof.txt")" -eq 300 ] || die "profile does not hold 300 delays"
    head -1 "$tmp/hist.csv" | grep -q "rtt_us_low,rtt_us_high,count" || die "histogram header"
    run measured "$TESSERA" run jacobi "${jacobi[@]}" --alg combined --layers 1 \
        --jitter "trace:$tmp/prof.txt" --dump "$tmp/measured.txt"
    cmp -s "$tmp/none.txt" "$tmp/measured.txt" || die "measured profile changed the result"
else
    echo "== mpirun not available: bench latency cases skipped"
fi
echo "ok: latency traces ($cases refusals)"
