#!/bin/bash
# crawl_run.sh (fast tier) — the crawler's two modes beyond crawl.sh, checked
# the same way against `tessera serve-web`'s list and log (crawl_lib.bash):
#   1. --rounds (barrier rounds) is still complete, polite and once-only;
#   2. the long-running kernels on 3 ranks: the end is detected across ranks
#      with every page fetched, each once;
#   3. kill -9 of one rank while the long-running kernels crawl under
#      periodic checkpoints (CpPeriodic), then --restore on 2 ranks: no page
#      lost; the pages the server saw twice are the metrics' refetched plus
#      at most one cut transfer per site;
#   4. --max-pages: never more pages, the rest listed as to-fetch;
#   5. more partitions on a rank than workers is refused in one line (an
#      instance without a worker would never run, and the end needs it).
#
# Environment: TESSERA, TESS_SRC, TESS_BUILD, TESS_HAVE_MPI=0|1.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/crawl_lib.bash"

step "--rounds: complete, polite, robots-compliant, each page once"
C="$tmp/c"
mkdir -p "$C"
start_server "$C/log" "${web_args[@]}"
echo "http://127.0.0.1:$PORT/" > "$C/seeds"
crawl --rounds --seeds "$C/seeds" --output "$C/r" --workers 2 --metrics "$C/r/m.json" ||
    die "crawl --rounds failed"
twice=$(check_crawl "$C/r" "$C/log") || die "--rounds: $twice"
[ "$twice" = 0 ] || die "--rounds: $twice pages requested twice"
grep -q '"mode": "rounds"' "$C/r/m.json" || die "--rounds: metrics do not say so"
echo "   ok"

if [ "$MPI" = 1 ]; then
    step "long-running kernels on 3 ranks: the end found, every page once"
    start_server "$C/log3" "${web_args[@]}"
    echo "http://127.0.0.1:$PORT/" > "$C/seeds3"
    timeout 120 mpirun -np 3 --oversubscribe --bind-to none "$TESSERA" run crawl --quiet \
        --per-site-rate "$RATE" --fetchers 4 --workers 1 "${LOOPBACK[@]}" \
        --seeds "$C/seeds3" --output "$C/r3" --metrics "$C/r3/m.json" || die "3 ranks failed"
    twice=$(check_crawl "$C/r3" "$C/log3") || die "3 ranks: $twice"
    [ "$twice" = 0 ] || die "3 ranks: $twice pages requested twice"
    grep -q '"mode": "long-running"' "$C/r3/m.json" || die "3 ranks: not the long-running crawl"
    echo "   ok"

    step "kill -9 of a rank during a crawl under periodic checkpoints, --restore: no page lost"
    K="$tmp/k"
    mkdir -p "$K"
    start_server "$K/log" --sites 3 --pages 30
    echo "http://127.0.0.1:$PORT/" > "$K/seeds"
    kargs=(run crawl --quiet --seeds "$K/seeds" --output "$K/out" --per-site-rate 8 --workers 1
        --fetchers 2 "${LOOPBACK[@]}" --checkpoint-dir "$K/ck" --checkpoint-seconds 0.3
        --metrics "$K/out/m.json")
    mpirun -np 2 --oversubscribe --bind-to none "$TESSERA" "${kargs[@]}" 2> "$K/err1" &
    pid=$!
    for _ in $(seq 150); do
        ls "$K/ck" 2> /dev/null | grep -q '^epoch-[0-9]*$' && [ "$(wc -l < "$K/log")" -gt 30 ] && break
        sleep 0.1
    done
    # a rank: a process under mpirun (a child, or further down) running the crawl
    descendants() { local c; for c in $(pgrep -P "$1"); do echo "$c"; descendants "$c"; done; }
    rank=$(for c in $(descendants $pid); do ps -o pid=,args= -p "$c"; done |
        awk '/run crawl/ { p = $1 } END { print p }')
    [ -n "$rank" ] || die "no rank process of mpirun $pid found"
    kill -9 "$rank"
    timeout 60 tail --pid=$pid -f /dev/null
    wait $pid 2> /dev/null && die "the job survived the kill of rank $rank"
    [ -e "$K/out/manifest.tsv" ] && die "a killed crawl left a manifest"
    before=$(wc -l < "$K/log")
    timeout 120 mpirun -np 2 --oversubscribe --bind-to none "$TESSERA" "${kargs[@]}" --restore \
        2> "$K/err" || die "restore failed: $(cat "$K/err")"
    "$TESSERA" serve-web --sites 3 --pages 30 --port "$PORT" --list > "$K/list.txt"
    python3 - "$K/out/manifest.tsv" "$K/log" "$K/list.txt" "$K/out/m.json" <<'PY' || die "restore"
import collections, json, sys
rows = {l.split("\t")[0]: l.split("\t") for l in open(sys.argv[1]) if not l.startswith("#")}
for url in open(sys.argv[3]).read().split():
    if url not in rows or rows[url][1] != "done" or rows[url][2] != "200":
        sys.exit("after restore, %s was never fetched: %s" % (url, rows.get(url)))
reqs = collections.Counter((l.split("\t")[1], l.split("\t")[2]) for l in open(sys.argv[2]))
twice = sum(c - 1 for (p, path), c in reqs.items() if c > 1 and path != "/robots.txt")
m = json.load(open(sys.argv[4]))
# a transfer the kill cut short (one per site at most: 3 sites) was served
# but not stored: fetched again, it is not counted as refetched
if not m["refetched"] <= twice <= m["refetched"] + 3:
    sys.exit("metrics count %d pages fetched again, the server saw %d" % (m["refetched"], twice))
if m["restored_epoch"] == 0 or m["mode"] != "long-running":
    sys.exit("not a restored long-running crawl: %s" % m)
print("   restored epoch %d, %d pages fetched again" % (m["restored_epoch"], twice))
PY
    echo "   ($before requests before the kill)"
fi

step "--max-pages N: at most N pages, each partition its share, the rest to-fetch"
start_server "$C/logm" "${web_args[@]}"
echo "http://127.0.0.1:$PORT/" > "$C/seedsm"
crawl --seeds "$C/seedsm" --output "$C/m" --workers 2 --max-pages 9 --metrics "$C/m/m.json" ||
    die "crawl --max-pages failed"
python3 - "$C/m/manifest.tsv" "$C/m/m.json" <<'PY' || die "--max-pages"
import json, sys
states = [l.split("\t")[1] for l in open(sys.argv[1]) if not l.startswith("#")]
m = json.load(open(sys.argv[2]))
if not 0 < m["pages_fetched"] <= 9 or states.count("done") != m["pages_fetched"]:
    sys.exit("%d pages fetched, %d done, for --max-pages 9" % (m["pages_fetched"], states.count("done")))
if "to-fetch" not in states:
    sys.exit("nothing left to fetch after --max-pages 9")
PY
echo "   ok"

step "more partitions than workers: refused in one line"
"$TESSERA" run crawl --quiet "${LOOPBACK[@]}" --seeds "$C/seeds" --output "$tmp/p" --workers 2 \
    --partitions 3 > /dev/null 2> "$tmp/err" && die "3 partitions on 2 workers accepted"
[ "$(wc -l < "$tmp/err")" = 1 ] || die "not one line: $(cat "$tmp/err")"
grep -q "worker per partition" "$tmp/err" || die "unexpected message: $(cat "$tmp/err")"
"$TESSERA" run crawl --quiet --rounds "${LOOPBACK[@]}" --seeds "$C/seeds" --output "$tmp/p2" \
    --workers 2 --partitions 3 || die "--rounds with 3 partitions on 2 workers failed"
echo "   ok"
