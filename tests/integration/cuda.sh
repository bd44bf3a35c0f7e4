#!/usr/bin/env bash
# cuda.sh — CUDA processors without a GPU.  Here (no driver): `cuda`,
# `cuda:N` and `cpu*2+cuda` parse, and each tiles application asking for one
# fails at once with one line saying no CUDA device or driver was found,
# exit != 0, no output file; `tessera info` shows the cuda kind with the
# architectures compiled in.  With the stand-in driver
# (build/tests/fake_cuda/libcuda.so.1, which runs host stand-ins of the
# kernels): the embedded fat binaries load, tiles split into parts over
# streams land in their places for 1-D and 2-D areas, mixes run, and a
# missing device, an out-of-range device, device out of memory and a failed
# launch are one line each with no output.  GPU results (bitwise equality
# with the CPU) come from scripts/gpu-check.sh on a GPU machine.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
FAKE="${TESS_BUILD:-$(dirname "$TESSERA")}/tests/fake_cuda"

# refuse PATTERN APP ARGS... : exit != 0, one line matching PATTERN, no output.
refuse() {
    local pattern=$1 app=$2
    shift 2
    rm -f "$tmp/out"
    if "$TESSERA" run "$app" --quiet --output "$tmp/out" "$@" 2> "$tmp/err"; then
        die "accepted: $app $*"
    fi
    [ "$(wc -l < "$tmp/err")" = 1 ] || die "$app $*: not one line: $(cat "$tmp/err")"
    grep -q -- "$pattern" "$tmp/err" || die "$app $*: $(cat "$tmp/err")"
    [ ! -e "$tmp/out" ] || die "$app $*: left an output file"
}

apps_refuse() { # apps_refuse PATTERN [env...]: the three apps, the three spellings
    local pattern=$1
    refuse "$pattern" blackscholes --options 5000 --processors cuda
    refuse "$pattern" blackscholes --options 5000 --processors 'cpu*2+cuda'
    refuse "$pattern" sar --gen 8:64:16:16 --processors cuda:0
    refuse "$pattern" sar --gen 8:64:16:16 --processors 'cpu*2+cuda'
    refuse "$pattern" texture --gen 256:256 --processors cuda
    refuse "$pattern" texture --gen 256:256 --processors 'cpu+cuda:1'
}

"$TESSERA" info > "$tmp/info"
if [ "${TESS_HAVE_CUDA:-0}" != 1 ]; then
    step "no CUDA in this build: a cuda processor is refused with one line"
    grep -q "^cuda: not in this build" "$tmp/info" || die "info: $(cat "$tmp/info")"
    # (run.c refuses it first: the applications have no CUDA kernel then)
    apps_refuse "has no kernel for it\|this build has no CUDA"
    exit 0
fi

step "tessera info: the cuda kind with its architectures"
grep -q "^cuda: kernels for sm_75 sm_80 sm_90 compute_90(PTX)" "$tmp/info" ||
    die "info: $(cat "$tmp/info")"
grep -q "^cpu: [0-9]* cores" "$tmp/info" || die "info: no cpu line"
grep -q "^opencl: " "$tmp/info" || die "info: no opencl line"

if grep -q "^cuda driver: no driver" "$tmp/info"; then
    step "no driver here: cuda, cuda:N, cpu*2+cuda fail at once, one line, no output"
    apps_refuse "no CUDA device or driver was found"
else
    echo "   (a CUDA driver is here: the no-driver refusals are not checked)"
fi

[ -e "$FAKE/libcuda.so.1" ] || die "no stand-in driver at $FAKE"
export LD_LIBRARY_PATH="$FAKE${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

step "stand-in driver: info lists its device"
"$TESSERA" info > "$tmp/info"
grep -q "^cuda driver: 13.0, 1 device" "$tmp/info" || die "info: $(cat "$tmp/info")"
grep -q "^  cuda:0 Fake GPU (sm_90)" "$tmp/info" || die "info: $(cat "$tmp/info")"

step "stand-in driver: Black-Scholes tiles in parts over streams land in place"
python3 - "$tmp/book" << 'PY'
import random, struct, sys
random.seed(7)
n = 300000  # 3.6 MB: a whole-area tile runs as 4 parts of 1 MiB over 3 streams
open(sys.argv[1], "wb").write(struct.pack(f"<{3 * n}f", *[random.uniform(1, 100) for _ in range(3 * n)]))
PY
check_bs() {
    python3 - "$tmp/book" "$tmp/bs.out" << 'PY'
import struct, sys
a, b = (open(p, "rb").read() for p in sys.argv[1:])
n = len(a) // 12
x, y = struct.unpack(f"<{3 * n}f", a), struct.unpack(f"<{2 * n}f", b)
bad = [i for i in range(n) if y[2 * i] != x[3 * i] or y[2 * i + 1] != x[3 * i + 1]]
assert not bad, f"{len(bad)} options out of place, first {bad[0]}"
PY
}
for policy in dd:300000 dd:70001 apc; do
    "$TESSERA" run blackscholes --quiet --input "$tmp/book" --output "$tmp/bs.out" \
        --processors cuda --policy "$policy"
    check_bs
done
"$TESSERA" run blackscholes --quiet --options 20000 --processors 'cpu*2+cuda' > /dev/null

step "stand-in driver: sar and texture 2-D tiles land in place (streams run when synchronised)"
"$TESSERA" run sar --quiet --gen 8:64:64:4096 --output "$tmp/s.tsim" --processors cuda \
    --policy dd:262144
"$TESSERA" run sar --quiet --gen 8:64:40:300 --output "$tmp/s2.tsim" --processors cuda \
    --policy dd:7x40
# Tiles narrower than the image: not contiguous in the output, so each
# lands in the processor's scratch, two tiles in flight (proc.c, cuda_loop).
"$TESSERA" run sar --quiet --gen 8:64:64:64 --output "$tmp/s3.tsim" --processors cuda \
    --policy dd:8x16
for f in s s2 s3; do
    python3 - "$tmp/$f.tsim" << 'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
W, H = struct.unpack_from("<II", d, 4)
v = struct.unpack_from(f"<{2 * W * H}f", d, 12)
bad = [i for i in range(W * H) if (v[2 * i], v[2 * i + 1]) != (i % W, i // W)]
assert not bad, f"{len(bad)} pixels out of place"
PY
done
"$TESSERA" run texture --quiet --gen 512:384 --block 16 --output "$tmp/t.tsv" --processors cuda \
    --policy dd:3x32
awk -F'\t' '$3 != $1 || $4 != $2 { bad++ } END { exit bad > 0 || NR != 24 * 32 }' "$tmp/t.tsv" ||
    die "texture: blocks out of place"
"$TESSERA" run sar --quiet --gen 8:64:16:64 --processors 'cpu+cuda' > /dev/null

step "stand-in driver: device errors are one line, exit != 0, no output"
FAKE_CUDA_DEVICES=0 apps_refuse "no CUDA device or driver was found (the driver sees no device)"
refuse "there are only 1 CUDA devices" blackscholes --options 5000 --processors cuda:1
FAKE_CUDA_OOM_ABOVE=1000000 refuse "cuda:0 (Fake GPU): cannot allocate .*CUDA_ERROR_OUT_OF_MEMORY" \
    blackscholes --input "$tmp/book" --processors cuda --policy dd:300000
FAKE_CUDA_LAUNCH_FAIL=1 refuse "cuda:0 (Fake GPU): cannot launch the kernel: CUDA_ERROR_LAUNCH_FAILED" \
    texture --gen 256:256 --processors cuda
echo "cuda.sh: all checks passed"
