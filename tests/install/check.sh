#!/usr/bin/env bash
# install_consumer: install the current build into a temporary prefix, then
# build and run tests/install/consumer.c three times — through
# find_package(tessera), through docs/building.md's CMake example and through
# pkg-config — as a user of the installed library would; both package
# descriptions must hand the user -ffp-contract=off.
#
# Environment (set by ctest): TESS_SRC, TESS_BUILD, TESS_CMAKE (cmake binary),
# CC, TESS_CONSUMER_CFLAGS (sanitizer flags the library was built with).
set -euo pipefail

NAME=install_consumer
. "$(dirname "$0")/lib.sh"

step "install into $prefix"
install_build
for f in include/tessera/tessera.h; do
    [ -e "$prefix/$f" ] || { echo "missing $prefix/$f" >&2; exit 1; }
done
if find "$prefix" -name 'libtessera_static*' | grep -q .; then
    echo "the static test library must not be installed" >&2; exit 1
fi

step "find_package(tessera)"
"$cmake" -S "$src/tests/install" -B "$work/cmake-build" \
    -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
    -DCMAKE_C_FLAGS="$extra" -DCMAKE_EXE_LINKER_FLAGS="$extra" \
    > "$work/configure.log" 2>&1 || { cat "$work/configure.log"; exit 1; }
"$cmake" --build "$work/cmake-build" > "$work/build.log" 2>&1 ||
    { cat "$work/build.log"; exit 1; }
"$work/cmake-build/consumer"

grep -q -- '-ffp-contract=off' "$work/cmake-build/compile_commands.json" ||
    { echo "find_package: tessera::tessera did not add -ffp-contract=off" >&2; exit 1; }

# docs/building.md's CMake example as it stands (the block after "With
# CMake:"), with consumer.c as its app.c: the version it asks for must be
# the installed one.
step "docs/building.md's CMake example"
mkdir -p "$work/docs-example"
{
    echo 'cmake_minimum_required(VERSION 3.16)'
    echo 'project(app LANGUAGES C)'
    awk '/^With CMake:/ { want = 1 } want && /^```cmake/ { on = 1; next }
         on && /^```/ { exit } on { print }' "$src/docs/building.md"
} > "$work/docs-example/CMakeLists.txt"
grep -q 'find_package(tessera' "$work/docs-example/CMakeLists.txt" ||
    { echo "no CMake example found in docs/building.md" >&2; exit 1; }
cp "$src/tests/install/consumer.c" "$work/docs-example/app.c"
"$cmake" -S "$work/docs-example" -B "$work/docs-build" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_C_COMPILER="$cc" -DCMAKE_C_FLAGS="$extra" -DCMAKE_EXE_LINKER_FLAGS="$extra" \
    > "$work/docs-configure.log" 2>&1 ||
    { cat "$work/docs-configure.log"; echo "docs/building.md's example does not configure" >&2; exit 1; }
"$cmake" --build "$work/docs-build" > "$work/docs-build.log" 2>&1 ||
    { cat "$work/docs-build.log"; exit 1; }
"$work/docs-build/app"

step "pkg-config tessera"
export PKG_CONFIG_PATH="$libdir/pkgconfig"
pc_version=$(pkg-config --modversion tessera)
case " $(pkg-config --cflags tessera) " in
    *" -ffp-contract=off "*) ;;
    *) echo "pkg-config --cflags tessera lacks -ffp-contract=off" >&2; exit 1 ;;
esac
# shellcheck disable=SC2046  # pkg-config output is meant to be word-split
"$cc" $extra -o "$work/consumer-pc" "$src/tests/install/consumer.c" \
    $(pkg-config --cflags --libs tessera) -Wl,-rpath,"$libdir"
out=$("$work/consumer-pc")
echo "$out"
case $out in
    "tessera $pc_version "*) ;;
    *) echo "pkg-config says $pc_version, the library says: $out" >&2; exit 1 ;;
esac

if [ -x "$prefix/bin/tessera" ]; then
    step "installed bin/tessera resolves its library"
    resolved=$(ldd "$prefix/bin/tessera" | awk '/libtessera\.so/ { print $3 }')
    if [ -z "$resolved" ] || [ "$resolved" = "not" ] ||
        [ "$(dirname "$(realpath "$resolved")")" != "$(realpath "$libdir")" ]; then
        echo "bin/tessera does not load libtessera from $libdir:" >&2
        ldd "$prefix/bin/tessera" >&2
        exit 1
    fi
fi
step "ok"
