#!/bin/bash
# bad_input.sh (fast tier) — malformed files, missing files and nonsense
# options (DESIGN §7).  Every case must exit non-zero (2 for usage and option
# errors, 1 for input and runtime errors), print exactly one line on stderr,
# starting "tessera" and naming the file (and 1-based physical line, comments
# counted) or the option, and leave nothing in the output directory: no
# partial --output/--metrics file and no temporary file.  Also: --help and
# --version succeed.
#
# Environment: TESSERA (the CLI), TESS_SRC, TESS_HAVE_MPI=0|1.  Exits 77
# (skipped) without TESSERA; runs every case and exits 1 if any failed.
set -u
. "$(dirname "$0")/lib.sh"
# some cases make read-only directories
trap 'chmod -R u+rwx "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
IN="$tmp/in"   # inputs
OUT="$tmp/out" # the output directory every case writes into; must stay empty
mkdir -p "$IN" "$OUT"
cases=0

# expect CODE WHAT COMMAND... — CODE: the exit status wanted, or "nonzero";
# WHAT: a fixed string the single stderr line must contain.
expect() {
    local code=$1 what=$2
    shift 2
    cases=$((cases + 1))
    rm -rf "$OUT" && mkdir -p "$OUT"
    "$@" >"$tmp/stdout" 2>"$tmp/stderr" </dev/null
    local rc=$? cmd="$*"
    cmd=${cmd#"$TESSERA" }
    local label="'${cmd//$tmp\//}'"
    local lines
    lines=$(wc -l <"$tmp/stderr")
    echo "-- $label -> exit $rc: $(head -n 1 "$tmp/stderr")"
    if [ "$rc" = 0 ]; then
        fail "$label: exit 0, expected an error"
    elif [ "$code" != nonzero ] && [ "$rc" != "$code" ]; then
        fail "$label: exit $rc, expected $code"
    fi
    if [ "$lines" != 1 ]; then
        fail "$label: $lines lines on stderr, expected one: $(head -c 400 "$tmp/stderr")"
    fi
    head -n 1 "$tmp/stderr" | grep -q '^tessera' ||
        fail "$label: the message does not start with 'tessera'"
    grep -qF -- "$what" "$tmp/stderr" || fail "$label: the message does not mention '$what'"
    local left
    left=$(ls -A "$OUT")
    [ -z "$left" ] || fail "$label: left behind in the output directory: $left"
}

# pr_expect CODE WHAT ARGS... — `tessera run pagerank ARGS` with both outputs in $OUT.
pr_expect() {
    local code=$1 what=$2
    shift 2
    expect "$code" "$what" "$TESSERA" run pagerank --iterations 3 \
        --output "$OUT/ranks.txt" --metrics "$OUT/metrics.json" "$@"
}

# ----------------------------------------------------------- input files
printf '1 2\n2 3\n3 1\n' >"$IN/good.txt"
pr_expect 1 "$IN/missing.txt" --graph "$IN/missing.txt"
mkdir -p "$IN/adir"
pr_expect 1 "adir" --graph "$IN/adir"
# A FIFO with no writer used to block forever, a pipe said "Illegal seek".
mkfifo "$IN/fifo"
pr_expect 1 "not a regular file" --graph "$IN/fifo"
pr_expect 1 "not a regular file" --graph /dev/stdin
if [ "$(id -u)" != 0 ]; then
    cp "$IN/good.txt" "$IN/secret.txt" && chmod 000 "$IN/secret.txt"
    pr_expect 1 "secret.txt" --graph "$IN/secret.txt"
else
    echo "-- (unreadable file case skipped: root can read anything)"
fi
printf '# comment 1\n# comment 2\n1 2\nfoo bar\n3 4\n' >"$IN/malformed.txt"
pr_expect 1 "malformed.txt:4" --graph "$IN/malformed.txt"
printf '# ids\n\n1 2\n18446744073709551615 1\n18446744073709551616 3\n' >"$IN/too_big.txt"
pr_expect 1 "too_big.txt:5" --graph "$IN/too_big.txt"
printf '# negative\n1 -2\n' >"$IN/negative.txt"
pr_expect 1 "negative.txt:2" --graph "$IN/negative.txt"
printf '1 2\n3\n' >"$IN/one_field.txt"
pr_expect 1 "one_field.txt:2" --graph "$IN/one_field.txt"
printf '1 2\r\n2 3 4\r\n' >"$IN/three_fields.txt"
pr_expect 1 "three_fields.txt:2" --graph "$IN/three_fields.txt"
printf '# a comment line\n1 2\n2 x\n' | gzip -c >"$IN/bad_line.txt.gz"
pr_expect 1 "bad_line.txt.gz:3" --graph "$IN/bad_line.txt.gz"
# a gzip stream cut in half
seq 1 20000 | awk '{print $1, ($1 * 7919) % 20000}' | gzip -c >"$IN/whole.txt.gz"
size=$(wc -c <"$IN/whole.txt.gz")
head -c $((size / 2)) "$IN/whole.txt.gz" >"$IN/truncated.txt.gz"
pr_expect 1 "truncated.txt.gz" --graph "$IN/truncated.txt.gz"
# a gzip stream with a damaged body (header intact)
python3 - "$IN/whole.txt.gz" "$IN/corrupt.txt.gz" <<'PY'
import sys
data = bytearray(open(sys.argv[1], "rb").read())
for i in range(40, 80):
    data[i] ^= 0x5a
open(sys.argv[2], "wb").write(data)
PY
pr_expect 1 "corrupt.txt.gz" --graph "$IN/corrupt.txt.gz"

# binary caches: a flipped byte in the middle, and a truncated file
"$TESSERA" gen rmat:8 "$IN/good.cache" --cache 2>/dev/null ||
    fail "tessera gen rmat:8 --cache failed; the cache cases below will fail too"
python3 - "$IN/good.cache" "$IN/flipped.cache" "$IN/short.cache" <<'PY'
import sys
data = bytearray(open(sys.argv[1], "rb").read())
half = bytes(data[: len(data) // 2])
data[len(data) // 2] ^= 0xff
open(sys.argv[2], "wb").write(data)
open(sys.argv[3], "wb").write(half)
PY
pr_expect 1 "flipped.cache" --graph "$IN/flipped.cache"
pr_expect 1 "short.cache" --graph "$IN/short.cache"
head -c 100 "$IN/good.cache" >"$IN/tiny.cache" # counts past the file: no "needs 0"
pr_expect 1 "too short for the" --graph "$IN/tiny.cache"

# --------------------------------------------------------------- outputs
# The run would succeed but an output cannot be written: nothing may remain,
# in particular not the --output file when only --metrics fails.
expect 1 "nodir" "$TESSERA" run pagerank --graph "$IN/good.txt" --workers 1 --iterations 3 --output "$OUT/ranks.txt" --metrics "$IN/nodir/m.json"
expect 1 "nodir" "$TESSERA" run pagerank --graph "$IN/good.txt" --iterations 3 \
    --output "$IN/nodir/ranks.txt" --metrics "$OUT/metrics.json"

# --------------------------------------------------------------- options
expect 2 "nosuchapp" "$TESSERA" run nosuchapp --graph "$IN/good.txt"
expect 2 "nosuchcommand" "$TESSERA" nosuchcommand
expect 2 "--frob" "$TESSERA" info --frob

# --------------------------------------------------------------- a full disk (issue 15)
# Each command writes onto a 64 KiB tmpfs (its own mount namespace): it must
# fail, give the reason, and leave nothing behind.
FULL="$tmp/full"
mkdir -p "$FULL"
nospc() { # WHAT COMMAND...
    local what=$1 rc=0
    shift
    cases=$((cases + 1))
    local ns=(unshare -m)
    [ "$(id -u)" = 0 ] || ns=(unshare -rm)
    "${ns[@]}" bash -c 'mount -t tmpfs -o size=64k tmpfs "$0" 2> /dev/null || exit 99
        "$@"; rc=$?
        left=$(ls -A "$0"); [ -z "$left" ] || { echo "left behind: $left" >&2; exit 98; }
        exit $rc' "$FULL" "$@" > /dev/null 2> "$tmp/nospc.err" < /dev/null || rc=$?
    if [ "$rc" = 99 ]; then
        echo "-- $what: skipped (cannot mount a tmpfs here)"
        return
    fi
    echo "-- $what -> exit $rc: $(tail -n 1 "$tmp/nospc.err")"
    [ "$rc" != 0 ] || fail "$what: exit 0 on a full disk"
    [ "$rc" != 98 ] || fail "$what: $(tail -n 1 "$tmp/nospc.err")"
    grep -q "No space left on device" "$tmp/nospc.err" ||
        fail "$what: the reason is not given: $(head -c 300 "$tmp/nospc.err")"
}
nospc "gen on a full disk" "$TESSERA" gen rmat:12 "$FULL/g.txt"
nospc "gen --cache on a full disk" "$TESSERA" gen rmat:12 "$FULL/g.tgc" --cache
nospc "jacobi --dump on a full disk" "$TESSERA" run jacobi --rows 200 --cols 200 --ticks 1 \
    --dump "$FULL/u.bin"

# A device is written in place, never replaced by a renamed temporary: as
# root, `gen SPEC /dev/full` used to turn /dev/full into a regular file.
if [ -c /dev/full ]; then
    expect 1 "/dev/full: write failed: No space left on device" "$TESSERA" gen rmat:8 /dev/full
    expect 1 "/dev/full: write failed: No space left on device" "$TESSERA" gen rmat:8 /dev/full --cache
    [ -c /dev/full ] || fail "tessera gen replaced /dev/full with a regular file"
fi

# A file-size limit is a full disk too: SIGXFSZ no longer kills the command
# halfway (leaving temporaries); the write fails with its reason.
expect 1 "File too large" bash -c 'ulimit -f 100; exec "$0" "$@"' "$TESSERA" gen rmat:12 "$OUT/g.txt"
expect 1 "File too large" bash -c 'ulimit -f 100; exec "$0" "$@"' "$TESSERA" run jacobi \
    --rows 300 --cols 300 --ticks 1 --dump "$OUT/u.bin"

# --------------------------------------------------------------- outputs and overflow (issue 15)
# A --metrics path that is a directory fails before the work, exit 1, nothing written.
expect 1 "Is a directory" "$TESSERA" run pagerank --gen uniform:100:400 --iterations 2 \
    --output "$OUT/ranks.txt" --metrics "$OUT"
expect 1 "Is a directory" "$TESSERA" run jacobi --rows 5 --cols 5 --ticks 2 \
    --dump "$OUT/u.bin" --metrics "$OUT"
# Finite but huge coordinates would overflow the squared distances: refused with the line.
printf '1 2\n1e308 1e308\n3 4\n' >"$IN/huge.txt"
expect 1 "huge.txt:2: coordinate 1 is 1e+308, beyond the limit" "$TESSERA" run kmeans \
    --points "$IN/huge.txt" --k 2 --iterations 2 --output "$OUT/c.txt"
expect 2 "nosuchbench" "$TESSERA" bench nosuchbench
# A throttle on a rank that does not exist slows nothing: refused (issue 15 item 8).
expect 1 "slowed rank 5 is not one of the 1 rank" "$TESSERA" run pagerank --gen uniform:100:400 \
    --iterations 2 --workers 1 --slow-worker 5:2 --output "$OUT/ranks.txt"
pr_expect 2 "--bogus" --graph "$IN/good.txt" --bogus
pr_expect 2 "--iterations" --graph "$IN/good.txt" --iterations 0
pr_expect 2 "--iterations" --graph "$IN/good.txt" --iterations -3
pr_expect 2 "--iterations" --graph "$IN/good.txt" --iterations abc
pr_expect 2 "--iterations" --graph "$IN/good.txt" --iterations 5x
pr_expect 2 "--damping" --graph "$IN/good.txt" --damping 1.5
pr_expect 2 "--damping" --graph "$IN/good.txt" --damping -0.1
pr_expect 2 "--workers" --graph "$IN/good.txt" --workers 0
pr_expect 2 "--graph" --workers 1
expect 2 "--iterations" "$TESSERA" run pagerank --graph "$IN/good.txt" \
    --output "$OUT/ranks.txt" --iterations
pr_expect 2 "rmat:abc" --gen rmat:abc
pr_expect 2 "nosuchgen:5" --gen nosuchgen:5
pr_expect 2 "uniform:10" --gen uniform:10
expect 2 "--bogus" "$TESSERA" bench pagerank --bogus
expect 2 "--scale" "$TESSERA" bench pagerank --scale 0

# ------------------------------------------------------- gen and convert
expect nonzero "rmat:abc" "$TESSERA" gen rmat:abc "$OUT/g.txt"
expect nonzero "web:-5" "$TESSERA" gen web:-5 "$OUT/g.txt"
expect nonzero "nodir" "$TESSERA" gen rmat:6 "$IN/nodir/g.txt"
expect nonzero "nodir" "$TESSERA" gen rmat:6 "$IN/nodir/g.cache" --cache
expect nonzero "missing.txt" "$TESSERA" convert "$IN/missing.txt" "$OUT/g.cache"
expect nonzero "malformed.txt:4" "$TESSERA" convert "$IN/malformed.txt" "$OUT/g.cache"
if [ "$(id -u)" != 0 ]; then
    mkdir -p "$IN/readonly" && chmod 555 "$IN/readonly"
    expect nonzero "readonly" "$TESSERA" gen rmat:6 "$IN/readonly/g.txt"
    [ -z "$(ls -A "$IN/readonly")" ] || fail "gen into a read-only directory left files"
fi

# ------------------------------------------------------------- under MPI
# mpirun adds its own lines on stderr, so only: non-zero, the message, no files.
if [ "$MPI" = 1 ]; then
    for spec in "malformed.txt:4 $IN/malformed.txt" "truncated.txt.gz $IN/truncated.txt.gz"; do
        what=${spec%% *} file=${spec#* }
        cases=$((cases + 1))
        rm -rf "$OUT" && mkdir -p "$OUT"
        timeout 120 mpirun -np 2 --oversubscribe --bind-to none "$TESSERA" run pagerank \
            --graph "$file" --workers 1 --output "$OUT/ranks.txt" --metrics "$OUT/m.json" \
            >"$tmp/stdout" 2>"$tmp/stderr" </dev/null
        rc=$?
        echo "-- mpirun -np 2 ... --graph $what -> exit $rc"
        [ "$rc" != 0 ] || fail "mpirun -np 2, $what: exit 0"
        [ "$rc" != 124 ] || fail "mpirun -np 2, $what: hung (killed after 120 s)"
        grep -q "^tessera.*$what" "$tmp/stderr" || fail "mpirun -np 2, $what: no message naming it"
        [ -z "$(ls -A "$OUT")" ] || fail "mpirun -np 2, $what: left $(ls -A "$OUT")"
    done
fi

# ----------------------------------------------------------- help, version
ok_cmd() { # WHAT-IN-STDOUT COMMAND...
    local what=$1
    shift
    cases=$((cases + 1))
    "$@" >"$tmp/stdout" 2>"$tmp/stderr" </dev/null
    local rc=$? cmd="$*"
    echo "-- '${cmd#"$TESSERA" }' -> exit $rc"
    [ "$rc" = 0 ] || fail "'$*': exit $rc"
    grep -qE -- "$what" "$tmp/stdout" || fail "'$*': stdout lacks /$what/"
}
ok_cmd "usage" "$TESSERA" --help
ok_cmd "--iterations" "$TESSERA" run pagerank --help
ok_cmd "--scale" "$TESSERA" bench pagerank --help
ok_cmd "^tessera [0-9]+\.[0-9]+" "$TESSERA" --version

if [ $failures -ne 0 ]; then
    echo "bad_input.sh: $failures of $cases cases failed" >&2
    exit 1
fi
echo "bad_input.sh: all $cases cases passed"
