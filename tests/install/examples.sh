#!/usr/bin/env bash
# install_examples: the walkthrough programs of the docs (examples/) as a
# new user builds them — install the current build into a temporary prefix
# (as check.sh does), build every example with pkg-config and with CMake
# (examples/CMakeLists.txt, find_package as docs/building.md shows), run
# both builds and compare their output with an independent computation
# (examples_ref.py); and check that the docs show each program as it is in
# examples/ (the fenced block after the line naming the file).
#
# Environment (set by ctest): TESS_SRC, TESS_BUILD, TESS_CMAKE, CC,
# TESS_CONSUMER_CFLAGS (sanitizer flags the library was built with).
set -euo pipefail

NAME=install_examples
. "$(dirname "$0")/lib.sh"
ref="$src/tests/install/examples_ref.py"

step "the docs show examples/ as they are"
# doc_block FILE NAME: the first fenced block after the line that links NAME
doc_block() {
    awk -v name="($2)" 'index($0, name) { want = 1 } want && /^```c$/ { on = 1; next }
         on && /^```$/ { exit } on { print }' "$1"
}
for pair in tables.md:sssp.c ticks.md:heat.c tiles.md:mandelbrot.c; do
    doc=${pair%%:*} file=${pair#*:}
    doc_block "$src/docs/$doc" "../examples/$file" > "$work/$file.doc"
    cmp -s "$work/$file.doc" "$src/examples/$file" ||
        die "docs/$doc's copy of examples/$file differs: $(diff "$work/$file.doc" "$src/examples/$file" | head -5)"
done

# the references, computed while the examples build
python3 "$ref" sssp 3000 4 > "$work/ref.sssp" &
python3 "$ref" heat 30 40 > "$work/ref.heat" &
python3 "$ref" mandelbrot 64 48 > "$work/ref.mandelbrot" &

step "install into $prefix"
install_build

step "pkg-config"
export PKG_CONFIG_PATH="$libdir/pkgconfig"
opencl= # mandelbrot.c compiles its OpenCL kernel where the headers are
if echo '#include <CL/cl.h>' | "$cc" -E - > /dev/null 2>&1; then opencl=-lOpenCL; fi
mkdir -p "$work/pc"
for e in sssp heat mandelbrot; do
    libs=; [ $e = mandelbrot ] && libs=$opencl
    # shellcheck disable=SC2046  # pkg-config output is meant to be word-split
    "$cc" $extra -o "$work/pc/$e" "$src/examples/$e.c" $(pkg-config --cflags --libs tessera) \
        $libs -Wl,-rpath,"$libdir" || die "$e does not build with pkg-config"
done

step "CMake (examples/CMakeLists.txt)"
"$cmake" -S "$src/examples" -B "$work/cm" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" \
    -DCMAKE_C_FLAGS="$extra" -DCMAKE_EXE_LINKER_FLAGS="$extra" > "$work/cm.log" 2>&1 ||
    { cat "$work/cm.log"; die "examples/CMakeLists.txt does not configure"; }
"$cmake" --build "$work/cm" > "$work/cm-build.log" 2>&1 || { cat "$work/cm-build.log"; die "examples do not build"; }

# expect WANT PROGRAM ARGS...: both builds print WANT
expect() {
    local want=$1 prog=$2
    shift 2
    for dir in pc cm; do
        got=$("$work/$dir/$prog" "$@") || die "$dir/$prog $*: exit $?"
        [ "$got" = "$want" ] || die "$dir/$prog $*: '$got', the reference says '$want'"
    done
    echo "   $prog $*: $got"
}
step "run, against examples_ref.py"
wait
expect "$(cat "$work/ref.sssp")" sssp 3000
expect "$(cat "$work/ref.heat")" heat 30 40 local
expect "$(cat "$work/ref.heat")" heat 30 40 combined
expect "$(cat "$work/ref.mandelbrot")" mandelbrot 64 48 cpu*2
if [ -n "$opencl" ] && [ -z "$extra" ] && "$work/pc/mandelbrot" 8 8 opencl > /dev/null 2>&1; then
    expect "$(cat "$work/ref.mandelbrot")" mandelbrot 64 48 cpu+opencl
else
    echo "   mandelbrot on OpenCL: skipped (no OpenCL platform, or a sanitized build)"
fi
step "ok"
