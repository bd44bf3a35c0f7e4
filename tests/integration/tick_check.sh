#!/usr/bin/env bash
# The tick face's checking mode (tests/integration/tick_check.c):
# TESS_TICK_CHECK=1 changes no result of a correct program under local,
# sched and combined, and it turns the silent wrong answer of a too-large RX
# or a too-small IX under sched and combined (the algorithms that compute ahead of late
# messages) into an error naming the tick.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
prog="$TESS_BUILD/tests/integration/tick_check"
want=$("$prog" local) || die "local: exit $?"
for alg in local sched combined; do
    got=$(TESS_TICK_CHECK=1 "$prog" $alg) || die "$alg under TESS_TICK_CHECK=1: exit $?"
    [ "$got" = "$want" ] || die "$alg under TESS_TICK_CHECK=1: '$got', local gives '$want'"
done
echo "ok: a correct program runs unchanged in the checking mode"
# caught ALG BAD [env...]: the run fails naming the tick and the cell.
caught() {
    local alg=$1 bad=$2
    shift 2
    env TESS_TICK_CHECK=1 "$@" "$prog" $alg $bad > /dev/null 2> "$tmp/err" && die "$alg $bad: not caught"
    grep -q "TESS_TICK_CHECK: STEP at tick [0-9]* read a tuple this process does not hold" "$tmp/err" ||
        die "$alg $bad: $(cat "$tmp/err")"
    grep -q "cell ([0-9]*, [0-9]*) came out NaN" "$tmp/err" || die "$alg $bad: no cell in $(cat "$tmp/err")"
}
# The stencil's IX (tick.h) decides what is computed ahead (per side, the
# default); with TESS_TICK_SIDES=off RX does instead.
for alg in sched combined; do
    got=$(TESS_TICK_CHECK=1 TESS_TICK_SIDES=off "$prog" $alg) || die "$alg, inner region: exit $?"
    [ "$got" = "$want" ] || die "$alg, TESS_TICK_SIDES=off: '$got', local gives '$want'"
    caught $alg bad-rx TESS_TICK_SIDES=off
    caught $alg bad-ix
done
echo "ok: a too-large RX and a too-small IX are caught under sched and combined ($(head -c 160 "$tmp/err"))"
