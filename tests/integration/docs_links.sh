#!/bin/bash
# docs_links.sh (fast tier) — docs/ is a manual whose references resolve:
# every relative link and #anchor in docs/*.md and README.md, every
# results/ and figures/ file a page names (and no such file that no page
# names), every page linked from docs/README.md, and every page of docs/ that
# the code, tests and scripts cite by path (scripts/check_docs.py lists
# each problem).
# Needs python3 only, no build.  Exits 77 (skipped) without python3.
set -u
: "${TESS_SRC:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
if ! command -v python3 >/dev/null 2>&1; then
    echo "SKIP: python3 is not on PATH" >&2
    exit 77
fi
exec python3 "$TESS_SRC/scripts/check_docs.py" "$TESS_SRC"
