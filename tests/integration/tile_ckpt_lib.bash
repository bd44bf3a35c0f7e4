# tile_ckpt_lib.bash — what tile_ckpt.sh and tile_ckpt_long.sh share; source
# it after lib.sh (not named *.sh: every *.sh here is registered as a test).
# Gives reference, journal_records, wait_records, killed_run and
# restored_same for tiles runs killed with SIGKILL and restored.

HEADER=16 RECORD=104 # tiles.journal: header, then fixed-size records
SLOW='cpu@0.02+cpu@0.02'

# reference APP_ARGS... NAME — an uninterrupted run's output in $tmp/NAME.ref.
reference() {
    local name=${*: -1}
    "$TESSERA" run "${@:1:$#-1}" --quiet --output "$tmp/$name.ref"
}

# journal_records DIR — whole records in DIR's journal (0 without one).
journal_records() {
    local size
    size=$(stat -c %s "$1/tiles.journal" 2> /dev/null || echo 0)
    [ "$size" -ge "$HEADER" ] || size=$HEADER
    echo $(((size - HEADER) / RECORD))
}

# wait_records DIR N PID — until DIR's journal holds N records (10 s at most,
# or until PID ended).
wait_records() {
    local i
    for i in $(seq 1 500); do
        [ "$(journal_records "$1")" -ge "$2" ] && return 0
        kill -0 "$3" 2> /dev/null || return 0
        sleep 0.02
    done
}

# killed_run DIR OUT APP_ARGS... — start the run journaling into DIR, SIGKILL
# it once $KILL_AFTER (default 2) more records are in, and check that it
# left no output (unless MAY_END is set: the run may have ended first).
killed_run() {
    local dir=$1 out=$2 pid
    shift 2
    "$TESSERA" run "$@" --quiet --output "$out" --checkpoint-dir "$dir" \
        --checkpoint-every 0.02 > /dev/null 2>&1 &
    pid=$!
    wait_records "$dir" $(($(journal_records "$dir") + ${KILL_AFTER:-2})) "$pid"
    kill -9 "$pid" 2> /dev/null || true
    wait "$pid" 2> /dev/null || true
    [ ! -e "$out" ] || [ -n "${MAY_END:-}" ] || die "$*: the run ended before the kill (make it slower)"
    echo "   killed with $(journal_records "$dir") journal records"
}

# restored_same NAME DIR APP_ARGS... — --restore from DIR gives NAME's reference.
restored_same() {
    local name=$1 dir=$2
    shift 2
    "$TESSERA" run "$@" --output "$tmp/$name.out" --checkpoint-dir "$dir" --restore \
        2> "$tmp/err" || die "$name: restore failed: $(cat "$tmp/err")"
    grep -q "restored [0-9]* of" "$tmp/err" || die "$name: nothing restored: $(cat "$tmp/err")"
    cmp "$tmp/$name.ref" "$tmp/$name.out" || die "$name: the restored output differs"
}

