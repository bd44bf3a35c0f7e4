#!/usr/bin/env bash
# tile_central_long.sh — `tessera bench tile --parts central` on a small
# Black-Scholes: it prints the capc/apc comparison at 2 and 3 ranks with
# both policies' seven-part split, labels the figures emulated, and records
# every run (long tier: a dozen mpirun runs).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
if [ "$MPI" != 1 ]; then
    echo "SKIP: no MPI"
    exit 77
fi
"$TESSERA" bench tile --parts central --apps blackscholes --options 20000 --confirm 2 \
    --out "$tmp/c.jsonl" > "$tmp/out"
cat "$tmp/out"
grep -q "^EMULATED" "$tmp/out" || die "the figures are not labelled emulated"
for np in 2 3; do
    grep -q "^blackscholes $np ranks: capc/apc [0-9.]* \[" "$tmp/out" || die "no $np-rank ratio"
done
[ "$(grep -c "^    capc .* init .* tcp .* out .* over" "$tmp/out")" = 2 ] || die "no capc split"
[ "$(grep -c "^    apc .* init .* tcp .* out .* over" "$tmp/out")" = 2 ] || die "no apc split"
python3 - "$tmp/c.jsonl" << 'PY'
import json, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
assert len(runs) == 8, len(runs)
assert {r["policy"] for r in runs} == {"apc", "capc"}
assert all(r["stats"]["policy"] == r["policy"] for r in runs)
PY
