#!/usr/bin/env python3
"""compare_ranks.py — compare two "id<TAB>rank" files (PageRank outputs).

    compare_ranks.py GOT REF [--tol 1e-12]

Both files must list the same ids in the same order (ascending, as tessera
writes them); for every vertex |got - ref| <= tol * |ref| (relative to the
second file, the reference).  Prints the maximum relative error and the
vertex where it occurs; exits 0 when within tolerance, 1 otherwise (or when
a file is malformed), with a one-line message saying what differs.
"""
import argparse
import math
import sys


def load(path):
    """List of (id, rank) in file order; exits 1 on a malformed line."""
    rows = []
    try:
        with open(path, "r", encoding="ascii") as f:
            for lineno, line in enumerate(f, 1):
                fields = line.rstrip("\n").split("\t")
                try:
                    if len(fields) != 2 or not fields[0].isdigit():
                        raise ValueError
                    rows.append((int(fields[0]), float(fields[1])))
                except ValueError:
                    sys.exit("compare_ranks: %s:%d: expected 'id<TAB>rank', got %r"
                             % (path, lineno, line.rstrip("\n")[:60]))
    except (OSError, UnicodeDecodeError) as e:
        sys.exit("compare_ranks: cannot read %s: %s" % (path, e))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("got")
    ap.add_argument("ref")
    ap.add_argument("--tol", type=float, default=1e-12,
                    help="maximum relative error (default 1e-12)")
    args = ap.parse_args()
    got, ref = load(args.got), load(args.ref)
    if len(got) != len(ref):
        sys.exit("compare_ranks: %s has %d vertices, %s has %d"
                 % (args.got, len(got), args.ref, len(ref)))
    worst, where = 0.0, None
    for line, ((gid, g), (rid, r)) in enumerate(zip(got, ref), 1):
        if gid != rid:
            sys.exit("compare_ranks: line %d: vertex %d in %s but %d in %s"
                     % (line, gid, args.got, rid, args.ref))
        err = abs(g - r) / abs(r) if r != 0.0 else abs(g)
        if where is None or not err <= worst:  # a NaN always wins
            worst, where = err, (gid, g, r)
            if math.isnan(err):
                break
    if where is None:
        sys.exit("compare_ranks: %s and %s are empty" % (args.got, args.ref))
    vid, g, r = where
    print("max relative error %.3g at vertex %d (%.17g vs %.17g), %d vertices"
          % (worst, vid, g, r, len(got)))
    if not worst <= args.tol:
        sys.exit("compare_ranks: %s differs from %s: relative error %.3g at vertex %d "
                 "exceeds %g" % (args.got, args.ref, worst, vid, args.tol))


if __name__ == "__main__":
    main()
