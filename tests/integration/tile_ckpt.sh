#!/usr/bin/env bash
# tile_ckpt.sh (fast tier) — checkpoints of the tiles applications
# (docs/checkpoints.md, "Tiles"): texture, SAR and Black-Scholes killed with
# SIGKILL once their journal has entries, then run with --restore: the
# output is byte for byte that of an uninterrupted run, with the same or
# another processor mix and policy, after two kills in a row, under
# `mpirun -np 2` (a rank killed) and under `tessera supervise`.  A checkpoint
# of another job (other options, another application, a tables job's
# directory) or a damaged one (a byte flipped in the journal or in the
# outputs) is refused with one line and no output; a torn last journal
# record is left out.
#
# The killed runs use slowed processors (cpu@F), so a kill lands mid-run
# while the inputs stay small.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ckpt_lib.bash"      # rank_pids
. "$(dirname "$0")/tile_ckpt_lib.bash" # killed_run, restored_same, ...
TEX=(texture --gen 1024:1024:5 --block 16)
SAR=(sar --gen 64:400:96:64:3)
BS=(blackscholes --options 200000 --seed 3)

# refused PATTERN APP_ARGS... — exit 1, one line holding PATTERN, no output.
refused() {
    local pattern=$1 out="$tmp/refused"
    shift
    rm -rf "$out" && mkdir -p "$out"
    local rc=0
    "$TESSERA" run "$@" --output "$out/o" > /dev/null 2> "$tmp/err" || rc=$?
    [ "$rc" = 1 ] || die "$*: exit $rc, wanted 1 ($(cat "$tmp/err"))"
    [ "$(wc -l < "$tmp/err")" = 1 ] || die "$*: not one line: $(cat "$tmp/err")"
    grep -qF -- "$pattern" "$tmp/err" || die "$*: no '$pattern' in: $(cat "$tmp/err")"
    [ -z "$(ls -A "$out")" ] || die "$*: left $(ls -A "$out")"
}

flip_at() { # flip_at FILE OFFSET
    python3 -c "import sys; p=sys.argv[1]; b=bytearray(open(p,'rb').read()); b[int(sys.argv[2])]^=0xff; open(p,'wb').write(b)" "$1" "$2"
}

reference "${TEX[@]}" tex
reference "${SAR[@]}" sar
reference "${BS[@]}" bs

step "texture killed, restored at full speed"
killed_run "$tmp/t1" "$tmp/t1.out" "${TEX[@]}" --processors "$SLOW"
restored_same tex "$tmp/t1" "${TEX[@]}" --processors cpu*2

step "texture killed twice (the second time while restoring), then another mix and policy"
if [ $SANITIZED = 0 ]; then # lighter cover under a sanitizer (lib.sh)
    killed_run "$tmp/t2" "$tmp/t2.out" "${TEX[@]}" --processors "$SLOW" --policy dd:64
    before=$(journal_records "$tmp/t2")
    "$TESSERA" run "${TEX[@]}" --quiet --output "$tmp/t2.out" --checkpoint-dir "$tmp/t2" --restore \
        --checkpoint-every 0.02 --processors "$SLOW" 2> /dev/null &
    pid=$!
    wait_records "$tmp/t2" $((before + 2)) "$pid"
    kill -9 "$pid" 2> /dev/null || true
    wait "$pid" 2> /dev/null || true
    restored_same tex "$tmp/t2" "${TEX[@]}" --processors cpu*3 --policy ws:8x8
fi

step "texture restored with an OpenCL processor in the mix (PoCL: bitwise the CPU kernel's)"
if [ $SANITIZED = 0 ] && "$TESSERA" info 2> /dev/null | grep -q "Portable Computing Language"; then
    killed_run "$tmp/t3" "$tmp/t3.out" "${TEX[@]}" --processors "$SLOW"
    restored_same tex "$tmp/t3" "${TEX[@]}" --processors cpu+opencl
else
    echo "   (skipped: no PoCL platform, or under a sanitizer)"
fi

step "sar killed under static:8x8, restored under apc"
killed_run "$tmp/s1" "$tmp/s1.out" "${SAR[@]}" --processors "$SLOW" --policy static:8x8
restored_same sar "$tmp/s1" "${SAR[@]}" --processors cpu

step "blackscholes killed, restored with another --iterations (a cost knob, not the job)"
if [ $SANITIZED = 0 ]; then
    killed_run "$tmp/b1" "$tmp/b1.out" "${BS[@]}" --iterations 3 --processors "$SLOW"
    restored_same bs "$tmp/b1" "${BS[@]}" --policy dd:4096
fi

step "SIGINT: exit 130, no output, what was finished journaled; the restore goes on"
"$TESSERA" run "${TEX[@]}" --quiet --output "$tmp/i.out" --checkpoint-dir "$tmp/i" \
    --checkpoint-every 100 --processors "$SLOW" 2> /dev/null &
pid=$!
for i in $(seq 1 500); do # a tile finished: its output is in tiles.data
    [ "$(stat -c %s "$tmp/i/tiles.data" 2> /dev/null || echo 0)" -gt 0 ] && break
    sleep 0.02
done
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
[ "$rc" = 130 ] || die "SIGINT: exit $rc, wanted 130"
[ ! -e "$tmp/i.out" ] || die "SIGINT: an output was left"
[ "$(journal_records "$tmp/i")" -gt 0 ] || die "SIGINT: nothing journaled (--checkpoint-every 100)"
restored_same tex "$tmp/i" "${TEX[@]}"

step "a torn last journal record is left out; the tiles it named are computed again"
truncate -s -50 "$tmp/t1/tiles.journal"
restored_same tex "$tmp/t1" "${TEX[@]}"

step "another job's checkpoint, or a damaged one, is refused with one line"
refused "--gen 1024:1024:5 there, 512:512:5 here" texture --gen 512:512:5 --block 16 \
    --checkpoint-dir "$tmp/t1" --restore
refused "app texture there, sar here" "${SAR[@]}" --checkpoint-dir "$tmp/t1" --restore
refused "app texture there, sar here" "${SAR[@]}" --checkpoint-dir "$tmp/t1"
cp -r "$tmp/t1" "$tmp/bad1" && flip_at "$tmp/bad1/tiles.journal" $((HEADER + 20))
refused "journal record 1 is damaged" "${TEX[@]}" --checkpoint-dir "$tmp/bad1" --restore
cp -r "$tmp/t1" "$tmp/bad2" && flip_at "$tmp/bad2/tiles.data" 100
refused "the output of journal record 1 fails its checksum" "${TEX[@]}" \
    --checkpoint-dir "$tmp/bad2" --restore
cp -r "$tmp/t1" "$tmp/bad3" && flip_at "$tmp/bad3/tiles.journal" 3
refused "tiles.journal has a damaged header" "${TEX[@]}" --checkpoint-dir "$tmp/bad3" --restore
# a damaged identity's control characters are shown as '?' (fuzz_tile_identity found them raw)
cp -r "$tmp/t1" "$tmp/bad4" && sed -i 's/^app texture$/app texture\r\x1b[2K/' "$tmp/bad4/tiles.identity"
refused "app texture??[2K there, texture here" "${TEX[@]}" --checkpoint-dir "$tmp/bad4" --restore
! grep -q $'[\r\x1b]' "$tmp/err" || die "control characters in: $(cat -v "$tmp/err")"
"$TESSERA" run pagerank --gen web:2000 --iterations 3 --checkpoint-dir "$tmp/pr" \
    --checkpoint-every 1 --quiet --output "$tmp/pr.txt"
refused "belongs to another job" "${TEX[@]}" --checkpoint-dir "$tmp/pr" --restore
[ ! -e "$tmp/pr/tiles.journal" ] || die "a tables job's directory was written into"

step "--checkpoint-overwrite replaces another job's checkpoint"
"$TESSERA" run "${SAR[@]}" --quiet --output "$tmp/sar.out" --checkpoint-dir "$tmp/t1" \
    --checkpoint-overwrite
cmp "$tmp/sar.ref" "$tmp/sar.out" || die "sar over texture's checkpoint: output differs"
grep -q "^app sar$" "$tmp/t1/tiles.identity" || die "the identity was not replaced"

step "options need --checkpoint-dir"
for opt in --restore --checkpoint-overwrite "--checkpoint-every 1"; do
    rc=0
    # shellcheck disable=SC2086 # the option and its value
    "$TESSERA" run "${TEX[@]}" $opt --output "$tmp/x" 2> "$tmp/err" || rc=$?
    [ "$rc" = 2 ] && grep -q "needs --checkpoint-dir" "$tmp/err" || die "$opt alone: exit $rc"
done
for app in texture sar blackscholes; do
    "$TESSERA" run "$app" --help | grep -q -- "--checkpoint-dir DIR" || die "$app --help"
done

step "tessera supervise restarts a killed run with --restore"
cat > "$tmp/killer" << 'SH'
#!/usr/bin/env bash
# The first run is killed once its journal has records; a restart runs as is.
for a in "$@"; do [ "$a" = --restore ] && exec "$@"; done
"$@" --processors cpu@0.02+cpu@0.02 --checkpoint-every 0.02 & pid=$!
for i in $(seq 1 500); do
    [ "$(stat -c %s "$JOURNAL" 2> /dev/null || echo 0)" -ge 224 ] && break
    kill -0 $pid 2> /dev/null || break
    sleep 0.02
done
kill -9 $pid; wait $pid
SH
chmod +x "$tmp/killer"
JOURNAL="$tmp/sv/tiles.journal" timeout 60 "$TESSERA" supervise --max-restarts 2 -- \
    "$tmp/killer" "$TESSERA" run "${TEX[@]}" --quiet --output "$tmp/sv.out" \
    --checkpoint-dir "$tmp/sv" 2> "$tmp/err" || die "supervise: $(cat "$tmp/err")"
grep -q "restart 1/2 with --restore" "$tmp/err" || die "supervise did not restart: $(cat "$tmp/err")"
cmp "$tmp/tex.ref" "$tmp/sv.out" || die "supervise: the output differs"

step "mpirun -np 2: a rank killed, restored on two ranks"
if mpi_usable; then
    timeout 60 mpirun -np 2 --oversubscribe --bind-to none "$TESSERA" run "${SAR[@]}" --quiet \
        --output "$tmp/m.out" --checkpoint-dir "$tmp/m" --checkpoint-every 0.02 \
        --processors cpu@0.01 > /dev/null 2>&1 &
    pid=$!
    wait_records "$tmp/m" 2 "$pid"
    victim=$(rank_pids "$tmp/m" | head -n 1 || true) # rank_pids fails on a last non-rank
    [ -n "$victim" ] || die "mpi: no rank process to kill"
    kill -9 "$victim" 2> /dev/null || true
    wait "$pid" 2> /dev/null || true
    [ ! -e "$tmp/m.out" ] || die "mpi: the run ended before the kill"
    echo "   killed rank process $victim with $(journal_records "$tmp/m") journal records"
    timeout 60 mpirun -np 2 --oversubscribe --bind-to none "$TESSERA" run "${SAR[@]}" \
        --output "$tmp/sar.out" --checkpoint-dir "$tmp/m" --restore --processors cpu*2 \
        2> "$tmp/err" || die "mpi restore: $(cat "$tmp/err")"
    cmp "$tmp/sar.ref" "$tmp/sar.out" || die "mpi: the restored output differs"
else
    echo "== mpirun not available: multi-rank case skipped"
fi
echo "ok: tile_ckpt"
