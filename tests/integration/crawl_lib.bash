# crawl_lib.bash — what the crawl tests share (crawl.sh, crawl_run.sh): the
# synthetic web's shape, a server on a free block of ports, and the check of
# a finished crawl against the server's own list and log.  Sourced after
# lib.sh (uses tmp, die).  Not named *.sh: every *.sh here is a test.
SITES=3
PAGES=16
RATE=10
SERVER_PID=""
stop_server() {
    [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2> /dev/null && wait "$SERVER_PID" 2> /dev/null
    SERVER_PID=""
}
trap 'stop_server; rm -rf "$tmp"' EXIT

# random_port — the first of a block of ten ports below Linux's ephemeral
# range (32768 and up), where the other tests' connections take theirs.
random_port() { echo $((20000 + (RANDOM % 1200) * 10)); }

# start_server LOG ARGS... — a fresh server on a free block of ports ($PORT).
start_server() {
    local log=$1 tries
    shift
    stop_server
    for tries in 1 2 3 4 5 6 7 8; do
        PORT=$(random_port)
        rm -f "$log" "$tmp/server.out"
        "$TESSERA" serve-web --port "$PORT" --log "$log" "$@" > "$tmp/server.out" 2>&1 &
        SERVER_PID=$!
        for _ in $(seq 50); do
            grep -q "^serve-web:" "$tmp/server.out" 2> /dev/null && return 0
            kill -0 "$SERVER_PID" 2> /dev/null || break
            sleep 0.1
        done
        stop_server
    done
    die "serve-web did not start: $(cat "$tmp/server.out")"
}

web_args=(--sites "$SITES" --pages "$PAGES" --traps --junk-robots 2 --slow-site 1:20)
LOOPBACK=(--allow-addresses 127.0.0.1)
crawl() { "$TESSERA" run crawl --quiet --per-site-rate "$RATE" --fetchers 4 "${LOOPBACK[@]}" "$@"; }

# check_crawl DIR LOG — the manifest and the server's log agree with the
# server's page list; prints the number of pages requested twice.
check_crawl() {
    "$TESSERA" serve-web "${web_args[@]}" --port "$PORT" --list > "$1/list.txt" || die "--list failed"
    python3 - "$1/manifest.tsv" "$2" "$1/list.txt" "$PORT" "$RATE" "$1/m.json" <<'PY'
import collections, json, sys
manifest, log, listing, port, rate, metrics = sys.argv[1:7]
port, rate = int(port), float(rate)
rows = {}
for line in open(manifest):
    if line.startswith("#"):
        continue
    f = line.rstrip("\n").split("\t")
    assert len(f) == 6, line
    rows[f[0]] = f
def fail(msg):
    sys.exit("FAIL: " + msg)
# completeness: every page of the model, with status 200 and its file
for url in open(listing).read().split():
    r = rows.get(url)
    if r is None or r[1] != "done" or r[2] != "200" or r[4] == "-":
        fail("%s not fetched: %s" % (url, r))
base = "http://127.0.0.1:%d" % port
expect = {base + "/trap/missing": "404", base + "/trap/error": "500",
          base + "/trap/redirect": "301", base + "/r/target.html": "200",
          base + "/trap/garbage": "200"}
for url, status in expect.items():
    if url not in rows or rows[url][2] != status:
        fail("%s: expected status %s, got %s" % (url, status, rows.get(url)))
if rows.get(base + "/trap/big", [""] * 6)[5] != "too-large":
    fail("the 50 MB page is not recorded as too-large: %s" % rows.get(base + "/trap/big"))
dead = rows.get("http://127.0.0.1:1/")
if dead is None or dead[1] != "blacklisted" or "unreachable" not in dead[5]:
    fail("the dead site is not recorded: %s" % dead)
# robots: /private/ is disallowed on sites 0 and 1 (site 2's robots.txt is junk)
requests = collections.defaultdict(list)
for line in open(log):
    t, p, path, status = line.split("\t")
    requests[int(p)].append((float(t), path))
for p, reqs in requests.items():
    paths = collections.Counter(path for _, path in reqs)
    if p != port + 2 and any(path.startswith("/private/") for path in paths):
        fail("port %d: a path robots.txt disallows was fetched" % p)
    times = sorted(t for t, _ in reqs)
    window = max((sum(1 for u in times if t <= u < t + 1.0) for t in times), default=0)
    if window > rate + 1:
        fail("port %d: %d requests within one second (rate %g)" % (p, window, rate))
    # Starts are 1/R apart by the crawler's clock; the server logs arrivals,
    # and on a loaded machine one arrival logged late shortens the next gap
    # by as much (CI saw 0.038 s at R = 10 with the crawler's pacing right).
    # Three consecutive gaps absorb one late arrival of up to 1.5/R, while a
    # pacing that lets two requests go together still fails (0 + 1/R + 0).
    spans = [c - a for a, c in zip(times, times[3:])]
    if spans and min(spans) < 3 * 0.5 / rate:
        i = spans.index(min(spans)); fail("port %d: four requests within %.3f s (rate %g): %s" % (p, min(spans), rate, sorted(reqs)[i:i+4]))
for url, r in rows.items():
    if "/private/" in url and not url.startswith("http://127.0.0.1:%d/" % (port + 2)):
        if r[1] != "blacklisted":
            fail("%s should be blacklisted: %s" % (url, r))
# robots.txt rules hold however a path is spelled (the server decodes it)
for url in (base + "/%70rivate/enc.html", base + "/doc.pd%66"):
    if rows.get(url, [""] * 2)[1] != "blacklisted":
        fail("%s should be blacklisted: %s" % (url, rows.get(url)))
if any(path == "/doc.pdf" for t, path in requests[port]):
    fail("/doc.pd%66 was fetched despite Disallow: /*.pdf$")
# scope: the seeds' host only; the redirect to localhost is recorded, not followed
if rows.get(base + "/trap/away", [""] * 3)[2] != "301":
    fail("the redirect to another host is not recorded: %s" % rows.get(base + "/trap/away"))
if any(path == "/r/away.html" for reqs in requests.values() for t, path in reqs):
    fail("the redirect to another host (localhost) was followed")
for url in rows:
    if not url.startswith("http://127.0.0.1:"):
        fail("a URL off the seeds' host is in the manifest: %s" % url)
twice = sum(c - 1 for reqs in requests.values()
            for path, c in collections.Counter(p for _, p in reqs).items()
            if c > 1 and path != "/robots.txt")
m = json.load(open(metrics))
done = sum(1 for r in rows.values() if r[1] == "done")
if m["pages_fetched"] != done:
    fail("metrics count %d pages, the manifest %d" % (m["pages_fetched"], done))
print(twice)
PY
}
