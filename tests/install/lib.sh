# lib.sh — what the install tests share: the environment ctest sets, a
# scratch folder removed at exit, and the install of the current build into
# a prefix inside it, as a user's `cmake --install` would.
#
# Sourced, after `set -euo pipefail`, with NAME set (the test's name in its
# messages).  Sets src, build, cmake, cc, extra (sanitizer flags the library
# was built with: a consumer must link with them), work, prefix; defines
# step, die and install_build (sets libdir).
src=${TESS_SRC:?TESS_SRC not set}
build=${TESS_BUILD:?TESS_BUILD not set}
cmake=${TESS_CMAKE:-cmake}
cc=${CC:-cc}
extra=${TESS_CONSUMER_CFLAGS:-}

work=$(mktemp -d "${TMPDIR:-/tmp}/tess-$NAME.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

step() { printf '== %s: %s\n' "$NAME" "$*"; }
die() {
    echo "FAIL: $*" >&2
    exit 1
}

# install_build: the build installed into $prefix; libdir is where
# libtessera.so went.
install_build() {
    "$cmake" --install "$build" --prefix "$prefix" > "$work/install.log" ||
        { cat "$work/install.log"; exit 1; }
    libdir=$(dirname "$(find "$prefix" -name 'libtessera.so' -print -quit)")
    [ -n "$libdir" ] && [ -d "$libdir" ] || die "libtessera.so not installed"
}
