#!/usr/bin/env bash
# deps.sh — make sure the build and test dependencies are installed.
#
#   scripts/deps.sh          compilers, cmake, MPI, zlib, cmocka, zstd, xxhash, METIS,
#                            OpenBLAS, OpenCL (loader, headers, PoCL), Python 3
#                            headers, NumPy and pytest (the Python module)
#   scripts/deps.sh fuzz     the above plus clang with libFuzzer
#   scripts/deps.sh plot     the above plus python3-matplotlib (bench figures)
#   scripts/deps.sh bench    the above plus the benches' peers: ScaLAPACK, MR-MPI,
#                            StarPU, and matplotlib
#   scripts/deps.sh format   the above plus clang-format (make format, format-check)
#
# Silent and quick when everything is present (make runs it every time).
# Otherwise installs the missing Debian packages: directly as root, through
# `sudo -n` when that works, or prints the command to run and exits 1.
set -euo pipefail

want_fuzz=0
want_plot=0
want_format=0
want_bench=0
for arg in "$@"; do
    case $arg in
        fuzz) want_fuzz=1 ;;
        plot) want_plot=1 ;;
        format) want_format=1 ;;
        bench) want_bench=1; want_plot=1 ;;
        -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
        *) echo "deps.sh: unknown argument '$arg' (expected: fuzz, plot, format, bench)" >&2; exit 2 ;;
    esac
done

missing=()
need() { missing+=("$@"); }
have() { command -v "$1" > /dev/null 2>&1; }

have cmake      || need cmake
have make       || need build-essential
have pkg-config || need pkg-config
have python3    || need python3
have mpicc      || need libopenmpi-dev
have mpirun     || need openmpi-bin

cc=""
for c in "${CC:-}" cc gcc; do
    if [ -n "$c" ] && have "$c"; then cc=$c; break; fi
done

# header -> Debian package; one preprocessor run when all are present.
# CL/cl.h: the tiles face's OpenCL processors (opencl-c-headers).
# png.h: the pictures of the tiles applications (sar --image, texture --map).
# curl/curl.h, libxml/HTMLparser.h, microhttpd.h: the crawler and serve-web.
headers=(zlib.h cmocka.h zstd.h xxhash.h metis.h CL/cl.h png.h curl/curl.h microhttpd.h)
packages=(zlib1g-dev libcmocka-dev libzstd-dev libxxhash-dev libmetis-dev opencl-c-headers libpng-dev
          libcurl4-openssl-dev libmicrohttpd-dev)
header_ok() {
    # cmocka.h expects these to be included first.
    printf '#include <stdarg.h>\n#include <stddef.h>\n#include <stdint.h>\n#include <setjmp.h>\n'
    for h in "$@"; do printf '#include <%s>\n' "$h"; done
}
if [ -z "$cc" ]; then
    need build-essential "${packages[@]}"
elif ! header_ok "${headers[@]}" | "$cc" -E -x c - > /dev/null 2>&1; then
    for i in "${!headers[@]}"; do
        header_ok "${headers[$i]}" | "$cc" -E -x c - > /dev/null 2>&1 || need "${packages[$i]}"
    done
fi

# libxml2's headers live under /usr/include/libxml2: ask pkg-config.
if ! have pkg-config || ! pkg-config --exists libxml-2.0; then need libxml2-dev; fi

# OpenBLAS for matmul's block products, found through pkg-config.
if ! have pkg-config || ! pkg-config --exists openblas; then need libopenblas-dev; fi

# The OpenCL ICD loader to link against, and PoCL, which runs OpenCL kernels
# on the CPU, so the tiles face's OpenCL path is built and tested on any
# machine (a GPU vendor's ICD runs the same code on a GPU).
ls /usr/lib/*/libOpenCL.so > /dev/null 2>&1 || need ocl-icd-opencl-dev
[ -e /etc/OpenCL/vendors/pocl.icd ] || need pocl-opencl-icd

if [ "$want_fuzz" = 1 ]; then
    if ! have clang; then
        need clang libclang-rt-14-dev
    else
        probe=$(mktemp -d)
        trap 'rm -rf "$probe"' EXIT
        printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
            'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }' \
            > "$probe/f.c"
        clang -fsanitize=fuzzer,address,undefined "$probe/f.c" -o "$probe/f" > /dev/null 2>&1 ||
            need libclang-rt-14-dev
    fi
fi

# Debian 12's clang-format is version 14, the one .clang-format is written for.
if [ "$want_format" = 1 ]; then
    have clang-format || need clang-format
fi

if [ "$want_bench" = 1 ]; then
    pkg-config --exists scalapack-openmpi 2> /dev/null || need libscalapack-openmpi-dev
    [ -e /usr/include/mrmpi/mapreduce.h ] || need libmrmpi-dev
    pkg-config --exists starpu-1.3 2> /dev/null || need libstarpu-dev
fi

# The Python module (docs/python.md): headers and NumPy for Debian's python3,
# pytest for its tests.
pyd=/usr/bin/python3; [ -x "$pyd" ] || pyd=python3
pyinc=$("$pyd" -c 'import sysconfig; print(sysconfig.get_paths()["include"])' 2> /dev/null || true)
[ -n "$pyinc" ] && [ -e "$pyinc/Python.h" ] || need python3-dev
"$pyd" -c 'import numpy' > /dev/null 2>&1 || need python3-numpy
"$pyd" -c 'import pytest' > /dev/null 2>&1 || need python3-pytest

if [ "$want_plot" = 1 ]; then
    # Debian's matplotlib is importable by Debian's python3 (not a pyenv one).
    py=/usr/bin/python3; [ -x "$py" ] || py=python3
    "$py" -c 'import matplotlib' > /dev/null 2>&1 || need python3-matplotlib
fi

[ ${#missing[@]} -eq 0 ] && exit 0

# De-duplicate, keep order.
declare -A seen=()
pkgs=()
for p in "${missing[@]}"; do
    [ -n "${seen[$p]:-}" ] && continue
    seen[$p]=1
    pkgs+=("$p")
done

echo "deps.sh: missing packages: ${pkgs[*]}" >&2
install_cmd=(env DEBIAN_FRONTEND=noninteractive apt-get install -y "${pkgs[@]}")
if [ "$(id -u)" = 0 ]; then
    apt-get update -q > /dev/null
    "${install_cmd[@]}"
elif have sudo && sudo -n true 2> /dev/null; then
    sudo -n apt-get update -q > /dev/null
    sudo -n "${install_cmd[@]}"
else
    echo "deps.sh: missing build dependencies; please run:" >&2
    echo "  sudo apt-get update && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y ${pkgs[*]}" >&2
    exit 1
fi
