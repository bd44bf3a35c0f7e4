#!/usr/bin/env bash
# supervise.sh (fast tier) — `tessera supervise`: restarts with --restore
# appended once, the restart limit and its report lines, exit statuses, exec
# failure, SIGTERM forwarded without a restart, and usage errors.  The
# supervised commands are small shell scripts written to $tmp.
#
# Environment: TESSERA (the CLI), TESS_SRC.  Exits 77 (skipped) without TESSERA.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

# A script that appends its arguments (one run per line) to $RUNS, then BODY.
export RUNS="$tmp/runs" STARTED="$tmp/started"
write_script() {
    printf '#!/bin/sh\necho "$*" >> "$RUNS"\n%s\n' "$2" > "$tmp/$1"
    chmod +x "$tmp/$1"
}
runs() { wc -l < "$tmp/runs" 2> /dev/null || echo 0; }
restarts() { grep -c "restart [0-9]*/[0-9]* with --restore" "$tmp/err"; }

# supervise ARGS...: runs the supervisor, stderr to $tmp/err, status in $rc.
supervise() {
    rm -f "$tmp/runs"
    rc=0
    timeout 15 "$TESSERA" supervise "$@" > "$tmp/out" 2> "$tmp/err" || rc=$?
}

step "fails twice, then succeeds"
write_script flaky '[ "$(wc -l < "$RUNS")" -ge 3 ] && exit 0; exit 1'
supervise --max-restarts 3 -- "$tmp/flaky" a "b c"
[ "$rc" = 0 ] || die "flaky: exit $rc, wanted 0"
[ "$(runs)" = 3 ] || die "flaky: $(runs) runs, wanted 3"
[ "$(restarts)" = 2 ] || die "flaky: $(restarts) restart lines, wanted 2"
printf 'a b c\na b c --restore\na b c --restore\n' | cmp -s - "$tmp/runs" ||
    die "flaky: arguments were: $(cat "$tmp/runs")"
grep -qx "tessera supervise: $tmp/flaky exited with status 1; restart 1/3 with --restore" "$tmp/err" ||
    die "flaky: report line: $(cat "$tmp/err")"

step "always fails: the last run's status and exactly K restarts"
write_script always 'exit 3'
supervise --max-restarts 2 -- "$tmp/always" --restore
[ "$rc" = 3 ] || die "always: exit $rc, wanted 3"
[ "$(runs)" = 3 ] || die "always: $(runs) runs, wanted 3"
[ "$(restarts)" = 2 ] || die "always: $(restarts) restart lines, wanted 2"
grep -q "restart 2/2 with --restore" "$tmp/err" || die "always: no 'restart 2/2' line"
# the command line already ended with --restore: it is not appended again
[ "$(sort -u "$tmp/runs")" = "--restore" ] || die "always: arguments were: $(cat "$tmp/runs")"

step "default limit is 3"
supervise -- "$tmp/always"
[ "$rc" = 3 ] && [ "$(runs)" = 4 ] && [ "$(restarts)" = 3 ] ||
    die "default: exit $rc, $(runs) runs, $(restarts) restarts; wanted 3, 4, 3"

step "--max-restarts 0 runs once"
supervise --max-restarts=0 -- "$tmp/always"
[ "$rc" = 3 ] && [ "$(runs)" = 1 ] && [ ! -s "$tmp/err" ] ||
    die "K=0: exit $rc, $(runs) runs, stderr: $(cat "$tmp/err")"

step "killed by a signal: restarted, then 128+S"
write_script killed 'kill -KILL $$'
supervise --max-restarts 1 -- "$tmp/killed"
[ "$rc" = 137 ] || die "killed: exit $rc, wanted 137"
[ "$(runs)" = 2 ] || die "killed: $(runs) runs, wanted 2"
grep -q "was killed by signal 9; restart 1/1 with --restore" "$tmp/err" ||
    die "killed: report line: $(cat "$tmp/err")"

step "a command that cannot be run: 127, no restart"
supervise --max-restarts 3 -- "$tmp/no-such-command" x
[ "$rc" = 127 ] || die "exec failure: exit $rc, wanted 127"
[ "$(wc -l < "$tmp/err")" = 1 ] &&
    grep -q "^tessera supervise: cannot run $tmp/no-such-command: " "$tmp/err" ||
    die "exec failure: stderr: $(cat "$tmp/err")"

step "SIGTERM is forwarded and stops supervision"
write_script sleeper 'trap "kill \$pid; exit 7" TERM
sleep 30 & pid=$!
touch "$STARTED"
wait $pid'
rm -f "$tmp/runs" "$tmp/started"
"$TESSERA" supervise --max-restarts 3 -- "$tmp/sleeper" 2> "$tmp/err" &
sup=$!
wait_for 100 test -e "$tmp/started" || { kill -9 $sup; die "sleeper never started"; }
kill -TERM $sup
timeout 10 tail --pid=$sup -f /dev/null || { kill -9 $sup; die "supervisor did not stop after SIGTERM"; }
rc=0
wait $sup || rc=$?
[ "$rc" = 7 ] || die "SIGTERM: exit $rc, wanted the child's 7"
[ "$(runs)" = 1 ] && [ "$(restarts)" = 0 ] || die "SIGTERM: restarted: $(cat "$tmp/err")"

step "usage errors: one line, exit 2"
usage_case() {
    supervise "$@"
    [ "$rc" = 2 ] || die "'supervise $*': exit $rc, wanted 2"
    [ "$(wc -l < "$tmp/err")" = 1 ] && grep -q "^tessera supervise: " "$tmp/err" ||
        die "'supervise $*': stderr: $(cat "$tmp/err")"
    [ ! -e "$tmp/runs" ] || die "'supervise $*': ran the command"
}
usage_case
usage_case "$tmp/always"
usage_case --max-restarts 2 "$tmp/always"
usage_case --
usage_case --max-restarts 2 --
usage_case --max-restarts -1 -- "$tmp/always"
usage_case --max-restarts abc -- "$tmp/always"
usage_case --max-restarts 2x -- "$tmp/always"
usage_case --max-restarts
usage_case --bogus -- "$tmp/always"

step "--help"
supervise --help
[ "$rc" = 0 ] && grep -q "^usage: tessera supervise" "$tmp/out" || die "--help: exit $rc"
"$TESSERA" --help | grep -q "supervise" || die "tessera --help does not list supervise"

step "a command that fails at once is restarted with a growing back-off"
start=$(date +%s.%N)
"$TESSERA" supervise --max-restarts 4 -- false 2> "$tmp/err"
took=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
grep -q "restart 2/4 with --restore in 0.25 s" "$tmp/err" &&
    grep -q "restart 4/4 with --restore in 1 s" "$tmp/err" || die "no back-off: $(cat "$tmp/err")"
awk -v t="$took" 'BEGIN { exit !(t >= 1.7) }' || die "4 restarts of false took only $took s"
echo "ok: 4 restarts of an instant failure took $took s (0 + 0.25 + 0.5 + 1)"

step "TESS_STEAL accepts 0 or 1 only"
TESS_STEAL=off "$TESSERA" run pagerank --gen rmat:8 --iterations 1 --workers 1 > /dev/null 2> "$tmp/err"
grep -q "TESS_STEAL: expected 0 or 1, got 'off'" "$tmp/err" || die "TESS_STEAL=off: $(cat "$tmp/err")"

echo "ok: supervise"
