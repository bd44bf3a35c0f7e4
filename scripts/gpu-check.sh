#!/usr/bin/env bash
# gpu-check.sh — the tiles face on a real GPU (issue 37): build, then check
# that Black-Scholes, SAR and texture give the CPU's bits on `cuda`,
# `cpu*N+cuda` (and `opencl` where an OpenCL ICD is), time one CPU thread
# against the GPU per tile size (the APC+ paper's Table 1), time APC against
# the best fixed tile size on `cpu*N+cuda`, and print one summary table.
#
# Written for a GPU machine without Debian's -dev packages and without a
# network (one H100/H200, CUDA 13 with nvcc, cmake, gcc, 16 cores):
#
#   scripts/gpu-check.sh pack [DIR]   HERE, on a machine with the -dev
#       packages (scripts/deps.sh): copies the headers and libraries the
#       tiles-only build needs (zlib, zstd, xxhash, libpng; the OpenCL
#       headers and ICD loader) into DIR (default build-gpu-deps, about
#       3 MB; git ignores build-*), to carry to the GPU machine.
#       Where nvcc is (every machine of this project), pack also builds
#       build-gpu here (the tiles-only build below, about 14 MB): carry it
#       too and the GPU machine runs it instead of building (device time is
#       scarce; its glibc is newer than Debian 12's, so the binary runs).
#   scripts/gpu-check.sh [run]        THERE: uses a carried build-gpu whose
#       binary starts, else builds build-gpu with -DTESS_TILES_ONLY=ON
#       -DTESS_WITH_MPI=OFF -DTESS_BUILD_TESTS=OFF (no MPI, OpenBLAS, METIS,
#       curl, libxml2, libmicrohttpd, OpenMP), using build-gpu-deps when
#       present, then runs the checks.
#
# Results: $OUT/gpu-check/ if OUT is set, else build-gpu/results/: the
# summary (summary.txt), every run's statistics (*.json) and log.  Exit 0
# when every output is bitwise equal to the CPU's, 1 when one differs or a
# run failed, 2 when the machine cannot run the check (no nvcc, no driver,
# no GPU, build failed).  Environment: GPU_CHECK_BUDGET_S (default 540: the
# checks stop starting new runs after it, so the whole script stays under
# 10 minutes; one run is stopped after GPU_CHECK_RUN_S, default 120),
# GPU_CHECK_ROUNDS (default 3: alternating rounds of the mix-against-alone
# comparison), GPU_CHECK_SECTIONS (default "bitwise mix table1 apc"),
# GPU_CHECK_MIX_SCALE and GPU_CHECK_MIX_APPS (the mix comparison's problem
# scale, default GPU_CHECK_SCALE, and applications), GPU_CHECK_REBUILD=1 (build even when a carried build-gpu
# starts), JOBS (default nproc), GPU_CHECK_SCALE (default 1; 0.1 for a
# smoke test: every problem 10x smaller).
set -u -o pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
MODE=${1:-run}
DEPS_DEFAULT="$ROOT/build-gpu-deps"

die() { # die CODE MESSAGE
    echo "gpu-check: $2" >&2
    exit "$1"
}

# ---------------------------------------------------------------- pack
pack() {
    local dir=${1:-$DEPS_DEFAULT}
    command -v dpkg > /dev/null || die 2 "pack needs dpkg (run it on a Debian machine with the packages)"
    mkdir -p "$dir" || die 2 "cannot create $dir"
    local pkgs="zlib1g zlib1g-dev libzstd1 libzstd-dev libxxhash0 libxxhash-dev libpng16-16
                libpng-dev ocl-icd-libopencl1 ocl-icd-opencl-dev opencl-c-headers"
    local n=0 p f
    for p in $pkgs; do
        if ! dpkg -L "$p" > /dev/null 2>&1; then
            echo "gpu-check pack: $p is not installed (scripts/deps.sh installs it): skipped" >&2
            continue
        fi
        while IFS= read -r f; do
            case "$f" in /usr/include/* | /usr/lib/* | /lib/*) ;; *) continue ;; esac
            if [ -f "$f" ] || [ -L "$f" ]; then
                mkdir -p "$dir$(dirname "$f")" && cp -a "$f" "$dir$f" && n=$((n + 1))
            fi
        done < <(dpkg -L "$p")
    done
    # /lib/x86_64-linux-gnu (merged /usr on Debian 12) holds some runtime
    # libraries: keep them beside the others so one path finds them all.
    if [ -d "$dir/lib" ]; then
        mkdir -p "$dir/usr/lib" && cp -a "$dir/lib/." "$dir/usr/lib/" && rm -rf "${dir:?}/lib"
    fi
    echo "gpu-check pack: $n files in $dir ($(du -sh "$dir" | cut -f1)); carry it to the GPU machine"
    pack_build
}

# pack_build: the tiles-only build with CUDA kernels, made here so that the
# GPU machine need not spend device time building it.
pack_build() {
    local nvcc=${CUDA_HOME:+$CUDA_HOME/bin/nvcc}
    [ -n "$nvcc" ] && [ -x "$nvcc" ] || nvcc=$(command -v nvcc 2> /dev/null || echo /usr/local/cuda/bin/nvcc)
    if [ ! -x "$nvcc" ]; then
        echo "gpu-check pack: no nvcc here: build-gpu not built (the GPU machine will build it)" >&2
        return 0
    fi
    cmake -S "$ROOT" -B "$ROOT/build-gpu" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTESS_TILES_ONLY=ON \
        -DTESS_WITH_MPI=OFF -DTESS_BUILD_TESTS=OFF -DTESS_WITH_CUDA=ON > /dev/null &&
        cmake --build "$ROOT/build-gpu" -j"$(nproc)" --target tessera_cli > /dev/null ||
        die 2 "pack: the tiles-only build failed (cmake --build build-gpu --target tessera_cli)"
    echo "gpu-check pack: built build-gpu ($(du -sh "$ROOT/build-gpu" | cut -f1)); carry it too"
}

case "$MODE" in
    pack)
        pack "${2:-}"
        exit 0
        ;;
    run) ;;
    -h | --help)
        sed -n '2,32p' "$0"
        exit 0
        ;;
    *) die 2 "unknown mode '$MODE' (pack [DIR] | run)" ;;
esac

# ---------------------------------------------------------------- run: setup
T0=$SECONDS
BUDGET=${GPU_CHECK_BUDGET_S:-540}
JOBS=${JOBS:-$(nproc 2> /dev/null || echo 4)}
SCALE=${GPU_CHECK_SCALE:-1}
RUN_S=${GPU_CHECK_RUN_S:-120}
SECTIONS=${GPU_CHECK_SECTIONS:-bitwise mix table1 apc}
MIX_SCALE=${GPU_CHECK_MIX_SCALE:-$SCALE}
MIX_APPS=${GPU_CHECK_MIX_APPS:-blackscholes sar texture}
ROUNDS=${GPU_CHECK_ROUNDS:-3}
BUILD="$ROOT/build-gpu"
if [ -n "${OUT:-}" ]; then RES="$OUT/gpu-check"; else RES="$BUILD/results"; fi
mkdir -p "$RES" || die 2 "cannot create $RES"
SUMMARY="$RES/summary.txt"
: > "$SUMMARY"
say() { echo "$*" | tee -a "$SUMMARY"; }
left() { echo $((BUDGET - (SECONDS - T0))); }

NVCC=""
for c in "${CUDA_HOME:-}/bin/nvcc" /usr/local/cuda/bin/nvcc "$(command -v nvcc 2> /dev/null)"; do
    if [ -n "$c" ] && [ -x "$c" ]; then
        NVCC=$c
        break
    fi
done
[ -n "$NVCC" ] || die 2 "no nvcc (set CUDA_HOME to the CUDA toolkit)"
command -v cmake > /dev/null || die 2 "no cmake on PATH"
command -v cc > /dev/null || command -v gcc > /dev/null || die 2 "no C compiler (gcc) on PATH"
export CUDA_HOME=${CUDA_HOME:-$(dirname "$(dirname "$NVCC")")}

CMAKE_EXTRA=()
if [ -d "$DEPS_DEFAULT/usr" ]; then
    CMAKE_EXTRA+=("-DCMAKE_PREFIX_PATH=$DEPS_DEFAULT/usr")
    for d in "$DEPS_DEFAULT"/usr/lib/*-linux-gnu "$DEPS_DEFAULT/usr/lib"; do
        [ -d "$d" ] && export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    done
    if [ -d "$DEPS_DEFAULT/usr/lib/x86_64-linux-gnu/pkgconfig" ]; then
        export PKG_CONFIG_PATH="$DEPS_DEFAULT/usr/lib/x86_64-linux-gnu/pkgconfig:$DEPS_DEFAULT/usr/share/pkgconfig"
        export PKG_CONFIG_SYSROOT_DIR="$DEPS_DEFAULT"
    fi
fi

# NVIDIA's OpenCL library without its ICD file (a container image): name it
# to the ICD loader through a vendors folder of our own.
if [ ! -e /etc/OpenCL/vendors/nvidia.icd ] && [ -z "${OCL_ICD_VENDORS:-}" ]; then
    for d in /usr/local/nvidia/lib64 /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/local/cuda/lib64; do
        if [ -e "$d/libnvidia-opencl.so.1" ]; then
            mkdir -p "$RES/icd" && echo "$d/libnvidia-opencl.so.1" > "$RES/icd/nvidia.icd"
            export OCL_ICD_VENDORS="$RES/icd"
            break
        fi
    done
fi

say "== gpu-check $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname)"
say "nvcc: $("$NVCC" --version | tail -1)"
if command -v nvidia-smi > /dev/null; then
    say "gpu: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -4 | tr '\n' ';')"
fi

# ---------------------------------------------------------------- build
b0=$SECONDS
T="$BUILD/tessera"
PREBUILT=0
if [ -x "$T" ] && [ "${GPU_CHECK_REBUILD:-0}" != 1 ]; then
    # Carried from the machine that packed it: its RPATH names that
    # machine's folder, so the libraries are found through the path.
    export LD_LIBRARY_PATH="$BUILD/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    "$T" info > /dev/null 2>&1 && PREBUILT=1
fi
if [ $PREBUILT = 1 ]; then
    say "build: carried build-gpu ($("$T" --version 2> /dev/null | head -1))"
else
    # A carried build-gpu that does not start here was configured
    # elsewhere: cmake refuses another source folder's cache.
    if [ -f "$BUILD/CMakeCache.txt" ] && ! grep -q "^CMAKE_HOME_DIRECTORY:INTERNAL=$ROOT\$" "$BUILD/CMakeCache.txt"; then
        rm -rf "$BUILD/CMakeCache.txt" "$BUILD/CMakeFiles"
    fi
fi
if [ $PREBUILT = 0 ] && ! cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTESS_TILES_ONLY=ON \
    -DTESS_WITH_MPI=OFF -DTESS_BUILD_TESTS=OFF -DTESS_WITH_CUDA=ON "${CMAKE_EXTRA[@]}" \
    > "$RES/configure.log" 2>&1; then
    tail -20 "$RES/configure.log" >&2
    die 2 "configure failed ($RES/configure.log); on a machine without the -dev packages run 'scripts/gpu-check.sh pack' where they are and carry build-gpu-deps here"
fi
if [ $PREBUILT = 0 ]; then
    if ! cmake --build "$BUILD" -j"$JOBS" --target tessera_cli > "$RES/build.log" 2>&1; then
        tail -30 "$RES/build.log" >&2
        die 2 "build failed ($RES/build.log)"
    fi
    say "build: $((SECONDS - b0)) s (tiles only, $JOBS jobs)"
fi
"$T" info > "$RES/info.txt" 2>&1
cat "$RES/info.txt" >> "$SUMMARY"
# GPU_CHECK_FAKE_CUDA=opencl (a dry run of the script's logic where there is
# no GPU): every `cuda` processor becomes that kind; its results mean nothing.
FAKE=${GPU_CHECK_FAKE_CUDA:-}
if [ -n "$FAKE" ]; then
    say "DRY RUN: 'cuda' is replaced by '$FAKE' (GPU_CHECK_FAKE_CUDA): no GPU result below"
else
    grep -q "^cuda: kernels for" "$RES/info.txt" || die 2 "the build has no CUDA kernels ($RES/info.txt)"
    grep -q "^  cuda:0 " "$RES/info.txt" || die 2 "no CUDA device or driver: $(grep '^cuda driver' "$RES/info.txt")"
fi
HAVE_CL=0
grep -q "^  opencl:0 " "$RES/info.txt" && HAVE_CL=1

CORES=$(nproc)
NCPU=$((CORES > 3 ? CORES - 2 : 1)) # the controller and the GPU's thread need cores too
MIX="cpu*$NCPU+cuda"

# The problems (GPU_CHECK_SCALE shrinks them).
# set_scale S: the problems at S times the default size per dimension.
set_scale() {
    scaled() { awk -v n="$1" -v s="$2" 'BEGIN { v = int(n * s); print (v < 1 ? 1 : v) }'; }
    BS_N=$(scaled 16000000 "$1")
    SAR_W=$(scaled 1024 "$1")
    SAR_H=$(scaled 1024 "$1")
    TEX_W=$(scaled 16384 "$1")
    TEX_H=$(scaled 16384 "$1")
}
set_scale "$SCALE"
want() { case " $SECTIONS " in *" $1 "*) return 0 ;; *) return 1 ;; esac }
app_args() { # app_args APP: the problem's options
    case "$1" in
        blackscholes) echo "--options $BS_N --iterations 4" ;;
        sar) echo "--gen 128:2048:$SAR_W:$SAR_H" ;;
        texture) echo "--gen $TEX_W:$TEX_H --block 32" ;;
    esac
}
app_rows() { # the work area's first extent and the width of a row (cells)
    case "$1" in
        blackscholes) echo "$BS_N 1" ;;
        sar) echo "$SAR_H $SAR_W" ;;
        texture) echo "$((TEX_H / 32)) $((TEX_W / 32))" ;;
    esac
}
# tile_size APP FRAC: a tile of 1/FRAC of the area's rows, whole rows (the
# policy's SIZE: a cell count in 1-D, ROWSxWIDTH in 2-D); nothing when
# that is under one row.
tile_size() {
    local rows width r
    read -r rows width <<< "$(app_rows "$1")"
    r=$((rows / $2))
    [ "$r" -ge 1 ] || return 0
    if [ "$width" = 1 ]; then echo "$r"; else echo "${r}x$width"; fi
}

FAILS="$RES/failures.txt" # runapp runs in a subshell: failures go to a file
: > "$FAILS"
# runapp LABEL APP PROCESSORS POLICY [OUTPUT]: one run; its seconds, or
# "fail" / "skip" (the budget is spent).
runapp() {
    local label=$1 app=$2 procs=$3 policy=$4 out=${5:-}
    if [ "$(left)" -le 0 ]; then
        echo skip
        return
    fi
    local args
    args=$(app_args "$app")
    [ -z "$FAKE" ] || procs=${procs//cuda/$FAKE}
    # shellcheck disable=SC2086 # app_args is a word list
    local cap=$(($(left) + 30))
    [ "$cap" -le "$RUN_S" ] || cap=$RUN_S
    if ! timeout "$cap" "$T" run "$app" --quiet $args --processors "$procs" \
        --policy "$policy" --stats "$RES/$label.json" ${out:+--output "$out"} \
        > "$RES/$label.log" 2>&1; then
        echo "run $label failed: $(tail -1 "$RES/$label.log")" | tee -a "$FAILS" >&2
        echo fail
        return
    fi
    sed -n 's/^ *"seconds": *\([0-9.eE+-]*\).*/\1/p' "$RES/$label.json" | head -1 |
        awk '{ printf "%.4f\n", $1 }'
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else print "-" }'; }

# ---------------------------------------------------------------- bitwise
if want bitwise; then
say ""
say "== outputs against a CPU run ($NCPU CPU threads), bitwise"
say "$(printf '%-13s %-16s %-10s %s' app processors seconds output)"
for app in blackscholes sar texture; do
    ref="$RES/$app.cpu.out"
    s=$(runapp "$app.cpu" "$app" "cpu*$NCPU" apc "$ref")
    say "$(printf '%-13s %-16s %-10s %s' "$app" "cpu*$NCPU" "$s" reference)"
    kinds="cuda $MIX"
    [ $HAVE_CL = 1 ] && kinds="$kinds opencl"
    for k in $kinds; do
        out="$RES/$app.$k.out"
        s=$(runapp "$app.${k//\*/x}" "$app" "$k" apc "$out")
        verdict=-
        if [ -f "$out" ] && [ -f "$ref" ]; then
            if cmp -s "$ref" "$out"; then
                verdict="EQUAL"
            else
                verdict="DIFFERS in $(cmp -l "$ref" "$out" 2> /dev/null | wc -l) bytes"
                echo "$app on $k: $verdict" >> "$FAILS"
            fi
        fi
        say "$(printf '%-13s %-16s %-10s %s' "$app" "$k" "$s" "$verdict")"
        rm -f "$out"
    done
    rm -f "$ref"
done
fi # bitwise

# ---------------------------------------------------------------- mix
# cells_share LABEL KIND: the share of the cells that processors of KIND
# computed in run LABEL (its --stats file).
cells_share() {
    python3 - "$RES/$1.json" "$2" << 'PY' 2> /dev/null || echo -
import json, sys
s = json.load(open(sys.argv[1]))
ps = s.get("processors", [])
tot = sum(p["cells"] for p in ps)
mine = sum(p["cells"] for p in ps if p["kind"] == sys.argv[2])
print(f"{mine / tot:.3f}" if tot else "-")
PY
}
median() { tr ' ' '\n' | grep -E '^[0-9.]+$' | sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.4f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

if want mix; then
set_scale "$MIX_SCALE"
say ""
say "== $MIX against cuda and cpu*$NCPU alone (APC), $ROUNDS alternating rounds: median seconds and ratios"
say "   (problems at $MIX_SCALE x the default size per dimension: $(app_args blackscholes); $(app_args sar); $(app_args texture))"
say "   (the goal: the mix faster than both wherever the slower kind does >= 10% of the faster's work)"
say "$(printf '%-13s %-9s %-9s %-9s %-9s %-9s %s' app mix cuda cpu mix/cuda mix/cpu 'cpu share in mix')"
for app in $MIX_APPS; do
    tm="" tg="" tc="" share=""
    for r in $(seq 1 "$ROUNDS"); do
        # Rotate which kind runs first in a round: the machine's state drifts.
        case $((r % 3)) in
            1) order="mix cuda cpu" ;;
            2) order="cuda cpu mix" ;;
            0) order="cpu mix cuda" ;;
        esac
        for k in $order; do
            case $k in
                mix) p=$MIX ;;
                cuda) p=cuda ;;
                cpu) p="cpu*$NCPU" ;;
            esac
            # The first round's mix leaves a per-tile trace (docs/tiles.md)
            # and the runtime's log (where the GPU's start-up went).
            if [ "$k$r" = mix1 ]; then
                v=$(TESS_VERBOSE=1 TESS_TILE_TRACE="$RES/trace.$app" runapp "alone.$app.$k.$r" "$app" "$p" apc)
            else
                v=$(runapp "alone.$app.$k.$r" "$app" "$p" apc)
            fi
            case $k in
                mix) tm="$tm $v" share="$share $(cells_share "alone.$app.mix.$r" cpu)" ;;
                cuda) tg="$tg $v" ;;
                cpu) tc="$tc $v" ;;
            esac
        done
    done
    m=$(echo "$tm" | median) g=$(echo "$tg" | median) c=$(echo "$tc" | median)
    say "$(printf '%-13s %-9s %-9s %-9s %-9s %-9s %s' "$app" "$m" "$g" "$c" "$(ratio "$m" "$g")" "$(ratio "$m" "$c")" "$(echo "$share" | median)")"
done
set_scale "$SCALE"
fi # mix

# ---------------------------------------------------------------- Table 1
if want table1; then
say ""
say "== one CPU thread against the GPU per tile size (the APC+ paper's Table 1): seconds, speedup"
say "$(printf '%-13s %-12s %-10s %-10s %s' app tile cpu cuda speedup)"
for app in blackscholes sar texture; do
    for frac in 4096 256 16 1; do
        size=$(tile_size "$app" $frac)
        [ -n "$size" ] || continue
        c=$(runapp "t1.$app.$size.cpu" "$app" cpu "dd:$size")
        g=$(runapp "t1.$app.$size.cuda" "$app" cuda "dd:$size")
        say "$(printf '%-13s %-12s %-10s %-10s %s' "$app" "$size" "$c" "$g" "$(ratio "$c" "$g")")"
    done
done
fi # table1

# ---------------------------------------------------------------- APC
if want apc; then
say ""
say "== APC against the best fixed tile size on $MIX: seconds (the target: apc/best <= 1.10)"
say "$(printf '%-13s %-10s %-22s %s' app apc 'best fixed (size)' apc/best)"
for app in blackscholes sar texture; do
    a=$(runapp "apc.$app" "$app" "$MIX" apc)
    best="" bsize=""
    for frac in 1024 256 64 16; do
        size=$(tile_size "$app" $frac)
        [ -n "$size" ] || continue
        f=$(runapp "fixed.$app.$size" "$app" "$MIX" "dd:$size")
        if awk -v f="$f" -v b="${best:-inf}" 'BEGIN { exit !(f + 0 > 0 && (b == "inf" || f < b)) }'; then
            best=$f
            bsize=$size
        fi
    done
    say "$(printf '%-13s %-10s %-22s %s' "$app" "$a" "${best:--} ($bsize)" "$(ratio "$a" "$best")")"
done
fi # apc


say ""
say "total: $((SECONDS - T0)) s; results in $RES"
if [ ! -s "$FAILS" ]; then
    say "gpu-check: PASSED (every output bitwise equal to the CPU's)"
    exit 0
fi
say "gpu-check: FAILED ($(wc -l < "$FAILS") problems, $FAILS):"
head -20 "$FAILS" | tee -a "$SUMMARY"
exit 1
