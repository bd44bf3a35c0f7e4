#!/usr/bin/env bash
# bench_tile.sh (fast tier) — a smoke test of the `tessera bench tile`
# driver, not a benchmark: one tiny sweep of Black-Scholes on cpu*2 with
# its confirming rounds and the overhead part, their report lines and JSON
# Lines records, and bad options (each refused at once, before any run).
# Under a second here.
#
# Environment: TESSERA (the CLI), TESS_SRC.  Exits 77 (skipped) without
# TESSERA, 1 at the first failure.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

step "a tiny sweep and the overhead part"
# shellcheck disable=SC2054 # --ccr takes a comma-separated list
bt=(bench tile --apps blackscholes --options 20000 --mixes 'cpu*2' --ccr 1,3 --confirm 1
    --min-size 4096 --parts sweep,overhead --out "$tmp/bt.jsonl")
(cd "$tmp" && "$TESSERA" "${bt[@]}") > "$tmp/out" 2> "$tmp/err" ||
    die "bench tile: exit $?: $(head -c 500 "$tmp/err")"
for ccr in 1 3; do
    grep -Eq "^blackscholes +cpu\*2 +$ccr +(dd|static|ws) +[0-9]+ .* [0-9.]+ +[0-9.]+$" "$tmp/out" ||
        die "no sweep row for CCR $ccr: $(cat "$tmp/out")"
done
grep -q "^APC within 10% of the best fixed size in [0-9]* of 2 configurations" "$tmp/out" ||
    die "no sweep summary: $(cat "$tmp/out")"
grep -q "^confirmed (median of 1 alternating rounds" "$tmp/out" ||
    die "no confirmed summary: $(cat "$tmp/out")"
grep -q "^overhead: APC's cells/s on 1 cpu = [0-9.]* x the plain loop's" "$tmp/out" ||
    die "no overhead line: $(cat "$tmp/out")"

step "every record parses and every run priced all the options"
python3 - "$tmp/bt.jsonl" << 'PY' || die "records: $(head -c 500 "$tmp/bt.jsonl")"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
sweep = [r for r in rows if r["bench"] == "tile"]
assert len(sweep) >= 8, f"{len(sweep)} sweep records"  # 2 CCRs x (3 fixed policies x sizes + apc)
assert {r["ccr"] for r in sweep} == {1, 3}, "CCRs"
assert {r["policy"] for r in sweep} >= {"dd", "static", "ws", "apc"}, "policies"
for r in sweep:
    assert r["app"] == "blackscholes" and r["mix"] == "cpu*2" and r["seconds"] > 0, r
    assert r["stats"]["cells"] == 20000, (r["policy"], r["size"], r["stats"]["cells"])
assert any(r["bench"] == "tile-confirm" for r in rows), "no confirming run recorded"
PY

step "bad options: one line, exit 2, no run"
bad() { # bad EXPECTED-TEXT ARGS...
    local want=$1
    shift
    (cd "$tmp" && "$TESSERA" bench tile "$@") > "$tmp/bad.out" 2> "$tmp/bad.err"
    local rc=$?
    [ "$rc" = 2 ] || die "bench tile $*: exit $rc, wanted 2: $(head -c 300 "$tmp/bad.err")"
    grep -qF -- "$want" "$tmp/bad.err" || die "bench tile $*: wanted '$want': $(cat "$tmp/bad.err")"
    [ "$(wc -l < "$tmp/bad.err")" = 1 ] || die "bench tile $*: not one line: $(cat "$tmp/bad.err")"
    [ ! -s "$tmp/bad.out" ] || die "bench tile $*: ran: $(head -c 300 "$tmp/bad.out")"
}
bad "option --apps: unknown name 'bogus'" --apps blackscholes,bogus
bad "option --parts: unknown name 'overhed'" --parts sweep,overhed
bad "option --policies: unknown name 'wz'" --policies dd,wz
bad "option --ccr: expected an integer in [1, 1000000], got '-1'" --ccr 1,-1
bad "option --rounds" --rounds 0
bad "unknown option '--bogus'" --bogus 3
bad "option --apps needs a value" --apps
bad "option --out: cannot write $tmp/none/r.jsonl" --out "$tmp/none/r.jsonl"
echo "bench tile: sweep, confirm, overhead, records and bad options: ok"
