#!/usr/bin/env bash
# The tick face's checking mode (tests/integration/tick_check.c):
# TESS_TICK_CHECK=1 changes no result of a correct program under local,
# sched and combined, and it turns the silent wrong answer of a too-large RX
# under sched and combined (the algorithms that compute ahead of late
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
for alg in sched combined; do
    TESS_TICK_CHECK=1 "$prog" $alg bad-rx > /dev/null 2> "$tmp/err" && die "$alg bad-rx: not caught"
    grep -q "TESS_TICK_CHECK: STEP at tick [0-9]* read a tuple this process does not hold" "$tmp/err" ||
        die "$alg bad-rx: $(cat "$tmp/err")"
    grep -q "cell ([0-9]*, [0-9]*) came out NaN" "$tmp/err" || die "$alg bad-rx: no cell in $(cat "$tmp/err")"
done
echo "ok: a too-large RX is caught under sched and combined ($(head -c 160 "$tmp/err"))"
