#!/usr/bin/env bash
# The tick face's checking mode for the graph and particles classes
# (tests/integration/tick_check_classes.c; tick_check.sh does the grid):
# TESS_TICK_CHECK=1 changes no result of a correct program under local,
# sched and combined, and it turns a too-large RX or a too-small IX under
# sched and combined and a too-small RD (particles) or a STEP reading beyond its in-neighbours
# (graph) into an error naming the tick and what was read, where without the
# mode the particles' answers are silently wrong.  The graph class checks a
# STEP's in-neighbours always: a too-small RD fails without the mode too.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
prog="$TESS_BUILD/tests/integration/tick_check_classes"
msg="TESS_TICK_CHECK: STEP at tick [0-9]* read a tuple this process does not hold then"

# caught CLASS ALG BAD WHAT [env...]: the run fails with the message and WHAT.
caught() {
    local class=$1 alg=$2 bad=$3 what=$4
    shift 4
    env TESS_TICK_CHECK=1 "$@" "$prog" "$class" "$alg" "$bad" > /dev/null 2> "$tmp/err" &&
        die "$class $alg $bad: not caught"
    grep -q "$msg" "$tmp/err" || die "$class $alg $bad: $(cat "$tmp/err")"
    grep -q "$what" "$tmp/err" || die "$class $alg $bad: no '$what' in $(cat "$tmp/err")"
}

for class in graph particles; do
    want=$("$prog" $class local) || die "$class local: exit $?"
    for alg in local sched combined; do
        got=$(TESS_TICK_CHECK=1 "$prog" $class $alg) || die "$class $alg under TESS_TICK_CHECK=1: exit $?"
        [ "$got" = "$want" ] || die "$class $alg under TESS_TICK_CHECK=1: '$got', local gives '$want'"
    done
done
echo "ok: correct graph and particles programs run unchanged in the checking mode"

for alg in sched combined; do
    caught graph $alg bad-rx "reads its in-neighbour [0-9]*"
    # the particles program gives IX: RX decides only without per side
    caught particles $alg bad-rx "particle [0-9]* at (.*) reads its neighbours within 2" \
        TESS_TICK_SIDES=off
done
echo "ok: a too-large RX is caught under sched and combined ($(head -c 300 "$tmp/err"))"

# IX (tick.h): what a late neighbour's tuples reach; with the particles
# program's IX, sched and combined compute ahead on the sides that are in
# (per side, the default; TESS_TICK_SIDES=off: the inner region alone).
# The identity claims they reach nothing beyond the neighbour's own query.
for alg in sched combined; do
    got=$(TESS_TICK_CHECK=1 TESS_TICK_SIDES=off "$prog" particles $alg) ||
        die "particles $alg, TESS_TICK_SIDES=off: exit $?"
    [ "$got" = "$("$prog" particles local)" ] || die "particles $alg: the inner region changed the answer"
    caught particles $alg bad-ix "particle [0-9]* at (.*) reads its neighbours within 2"
done
echo "ok: a too-small IX is caught under sched and combined"

caught particles local bad-rd "reads its neighbours within 2"
caught graph local bad-step "vertex [0-9]* came out NaN"
echo "ok: a too-small RD (particles) and a read beyond the in-neighbours (graph) are caught"

# Without the mode: the particles' wrong RX gives an answer (a wrong one);
# the graph's in-neighbour check needs no mode.
"$prog" particles sched bad-rx > /dev/null || die "particles sched bad-rx without the mode failed"
"$prog" graph local bad-rd > /dev/null 2> "$tmp/err" && die "graph bad-rd without the mode: not caught"
grep -q "^tick_check_classes: .*: STEP at tick [0-9]* read a tuple" "$tmp/err" ||
    die "graph bad-rd without the mode: $(cat "$tmp/err")"
grep -q TESS_TICK_CHECK "$tmp/err" && die "graph bad-rd without the mode names the mode: $(cat "$tmp/err")"
echo "ok: without the mode, only the graph's in-neighbour check fails ($(head -c 200 "$tmp/err"))"
