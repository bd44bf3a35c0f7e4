#!/bin/bash
# ckpt_owner.sh (fast tier) — a checkpoint directory belongs to one job, and
# nothing the apps write can be hijacked through a planted link:
#   - kmeans, pagerank, nbody and workqueue: a second, different job started
#     on the first one's --checkpoint-dir is refused in one line naming the
#     directory and --checkpoint-overwrite (exit 1) and the directory stays
#     byte for byte as it was; the first job then restores from it (under
#     MPI onto another rank count); --checkpoint-overwrite lets the second
#     job take it, and the first is refused in turn;
#   - --checkpoint-overwrite without --checkpoint-dir is a usage error, and
#     every checkpointing app lists the option in --help;
#   - symbolic links planted at the checkpoint store's old temporary names
#     (DIR/static/NAME.tmp, DIR/epoch-N.tmp) and at the outputs' old
#     temporary names (DIR/.NAME.tmp.PID, the PID known in advance through
#     exec) are never followed: their targets keep their bytes and files,
#     the outputs are regular files.
#
# Environment: TESSERA, TESS_HAVE_MPI=0|1.  Exits 77 (skipped) without
# TESSERA, 1 at the first failure.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ckpt_lib.bash"

# snapshot DIR — every file under DIR with its checksum, and every link.
snapshot() {
    (cd "$1" && find . -type f -print0 | sort -z | xargs -0 -r md5sum && find . -type l | sort)
}

# refused LABEL OUT DIR — exit 1, one line naming DIR and the override.
refused() {
    [ "$rc" = 1 ] || die "$1: exit $rc, wanted 1 -- stderr: $(head -c 800 "$2/err")"
    [ "$(wc -l < "$2/err")" = 1 ] || die "$1: stderr is not one line: $(cat "$2/err")"
    grep -qF "checkpoint directory $3 belongs to another job" "$2/err" ||
        die "$1: stderr does not name $3: $(cat "$2/err")"
    grep -qF -- "--checkpoint-overwrite" "$2/err" || die "$1: no override named: $(cat "$2/err")"
}

# two_jobs APP "JOB A" "JOB B" — the checks of the first item above.
two_jobs() {
    local app=$1 R="$tmp/$1"
    # shellcheck disable=SC2206 # word lists
    local a=($2 --iterations 5 --partitions 4 --quiet) b=($3 --iterations 5 --partitions 4 --quiet)
    if [ "$app" = nbody ]; then
        # shellcheck disable=SC2206 # word lists
        a=($2 --steps 5 --quiet) b=($3 --steps 5 --quiet)
    fi
    local D="$R/ck"
    mkdir -p "$R"
    step "$app: a second job on the first one's checkpoint directory"
    app_run "$app" "$R/ref" "${a[@]}" --workers 2
    [ "$rc" = 0 ] || die "$app plain run: exit $rc: $(cat "$R/ref/err")"
    app_run "$app" "$R/a" "${a[@]}" --workers 2 --checkpoint-dir "$D" --checkpoint-every 2
    [ "$rc" = 0 ] || die "$app job A: exit $rc: $(cat "$R/a/err")"
    local newest before
    newest=$(newest_epoch "$D")
    [ -n "$newest" ] || die "$app job A: no epoch in $D: $(ls "$D")"
    before=$(snapshot "$D")
    app_run "$app" "$R/b" "${b[@]}" --workers 2 --checkpoint-dir "$D" --checkpoint-every 2
    refused "$app job B" "$R/b" "$D"
    app_run "$app" "$R/b" "${b[@]}" --workers 2 --checkpoint-dir "$D" --restore
    refused "$app job B --restore" "$R/b" "$D"
    [ "$(snapshot "$D")" = "$before" ] || die "$app job B changed $D"
    echo "   refused: $(cat "$R/b/err")"

    step "$app: the first job still restores from it"
    if [ "$MPI" = 1 ]; then
        app_run "$app" "$R/a2" -np 2 "${a[@]}" --workers 1 --checkpoint-dir "$D" --restore
    else
        app_run "$app" "$R/a2" "${a[@]}" --workers 3 --checkpoint-dir "$D" --restore
    fi
    [ "$rc" = 0 ] || die "$app job A --restore: exit $rc: $(cat "$R/a2/err")"
    grep -q "restored checkpoint epoch $newest " "$R/a2/err" ||
        die "$app job A --restore: epoch $newest not restored: $(cat "$R/a2/err")"
    same_output "$app" "$R/a2" "$R/ref" > /dev/null 2>&1 || die "$app job A --restore: output differs"

    step "$app: --checkpoint-overwrite takes the directory"
    app_run "$app" "$R/b" "${b[@]}" --workers 2 --checkpoint-dir "$D" --checkpoint-every 2 \
        --checkpoint-overwrite
    [ "$rc" = 0 ] || die "$app job B --checkpoint-overwrite: exit $rc: $(cat "$R/b/err")"
    app_run "$app" "$R/a3" "${a[@]}" --workers 2 --checkpoint-dir "$D" --restore
    refused "$app job A after the overwrite" "$R/a3" "$D"
}

two_jobs kmeans "--gen 3000:3:4" "--gen 3000:3:4:2"
two_jobs pagerank "--gen web:3000" "--gen web:3000:2"
two_jobs nbody "--particles 300 --cutoff 1 --seed 3" "--particles 300 --cutoff 1 --seed 4"

step "workqueue: a second job on the first one's checkpoint directory"
wq() { "$TESSERA" run workqueue --seed 5 --work 10 --quiet --workers 2 "$@"; }
W="$tmp/wq"
mkdir -p "$W"
wq --items 2000 --checkpoint-dir "$W/ck" --output "$W/a.txt" 2> "$W/err" ||
    die "workqueue job A: $(cat "$W/err")"
before=$(snapshot "$W/ck")
rc=0
wq --items 3000 --checkpoint-dir "$W/ck" --output "$W/b.txt" > /dev/null 2> "$W/err" || rc=$?
refused "workqueue job B" "$W" "$W/ck"
[ "$(snapshot "$W/ck")" = "$before" ] || die "workqueue job B changed $W/ck"
[ ! -e "$W/b.txt" ] || die "workqueue job B wrote its report"
wq --items 2000 --checkpoint-dir "$W/ck" --restore --output "$W/a2.txt" 2> "$W/err" ||
    die "workqueue job A --restore: $(cat "$W/err")"
wq --items 3000 --checkpoint-dir "$W/ck" --checkpoint-overwrite --output "$W/b.txt" 2> "$W/err" ||
    die "workqueue job B --checkpoint-overwrite: $(cat "$W/err")"

step "--checkpoint-overwrite: a usage error without --checkpoint-dir; in every --help"
declare -A needs=([kmeans]="--gen 100:2:2 --iterations 1" [pagerank]="--gen web:100" [nbody]="--particles 10 --steps 1 --cutoff 1"
    [crawl]="--seeds $tmp/seeds --output $tmp/crawl" [workqueue]="")
for app in kmeans pagerank nbody crawl workqueue; do
    rc=0
    # shellcheck disable=SC2086 # a word list
    "$TESSERA" run "$app" ${needs[$app]} --checkpoint-overwrite > /dev/null 2> "$tmp/err" || rc=$?
    [ "$rc" = 2 ] || die "$app --checkpoint-overwrite alone: exit $rc: $(cat "$tmp/err")"
    grep -q -- "--checkpoint-overwrite" "$tmp/err" || die "$app: message $(cat "$tmp/err")"
    "$TESSERA" run "$app" --help 2>&1 | grep -q -- "--checkpoint-overwrite" ||
        die "$app --help does not list --checkpoint-overwrite"
done

step "links planted at the checkpoint store's old temporary names are not followed"
L="$tmp/links"
mkdir -p "$L/ck/static" "$L/victim-dir"
echo precious > "$L/victim"
echo keep > "$L/victim-dir/keep"
for t in 0 1 2 3 4 5; do
    for p in 0 1 2 3; do ln -s "$L/victim" "$L/ck/static/t$t-p$p.zst.tmp"; done
done
ln -s "$L/victim-dir" "$L/ck/epoch-00000002.tmp" # epoch 1 writes the static files
app_run kmeans "$L/run" --gen 3000:3:4 --iterations 5 --partitions 4 --quiet --workers 2 \
    --checkpoint-dir "$L/ck" --checkpoint-every 2
[ "$rc" = 0 ] || die "kmeans with planted links: exit $rc: $(cat "$L/run/err")"
[ "$(cat "$L/victim")" = precious ] || die "a link's target was overwritten"
[ -f "$L/victim-dir/keep" ] || die "a file was removed through a link"
n=$(find "$L/ck/static" -maxdepth 1 -type f -name 't*-p*.zst' | wc -l)
[ "$n" -ge 1 ] || die "no static file written: $(ls -l "$L/ck/static")"
app_run kmeans "$L/run2" --gen 3000:3:4 --iterations 5 --partitions 4 --quiet --workers 2 \
    --checkpoint-dir "$L/ck" --restore
[ "$rc" = 0 ] || die "kmeans restore beside planted links: exit $rc: $(cat "$L/run2/err")"
same_output kmeans "$L/run2" "$tmp/kmeans/ref" > /dev/null 2>&1 || die "restore: output differs"

step "links planted at the outputs' old temporary names (.NAME.tmp.PID) are not followed"
O="$tmp/out"
mkdir -p "$O"
echo precious > "$O/victim"
# exec keeps the PID: the names below are exactly the ones the run would have used
sh -c 'for f in centres.txt assign.txt m.json; do ln -s "$1/victim" "$1/.$f.tmp.$$"; done
       exec "$2" run kmeans --gen 3000:3:4 --k 4 --iterations 3 --quiet --output "$1/centres.txt" \
           --assignments "$1/assign.txt" --metrics "$1/m.json"' sh "$O" "$TESSERA" ||
    die "kmeans with links at its temporary names failed"
[ "$(cat "$O/victim")" = precious ] || die "an output was written through a planted link"
for f in centres.txt assign.txt m.json; do
    if [ ! -f "$O/$f" ] || [ -L "$O/$f" ] || [ ! -s "$O/$f" ]; then
        die "$f is not a regular file: $(ls -l "$O")"
    fi
done
echo "   PASS"
