#!/usr/bin/env python3
"""ref_pagerank.py — an independent sequential PageRank for checking tessera.

Reads a SNAP edge list (plain or gzip: '#' comment lines, blank lines, lines
"src dst" of unsigned decimal ids) and runs the power iteration of DESIGN §6
(tables face):

    PR0(v)  = 1/N
    PR'(v)  = (1-d)/N + d * (sum_{u->v} PR(u)/outdeg(u) + D/N)

where the vertices are all ids that appear, duplicate edges count, and D is
the total rank of the vertices with no out-edges.  Sums use math.fsum (exactly
rounded), so this reference carries almost no rounding error of its own and a
program under test can be held to a tight relative tolerance.

Output: "id<TAB>rank" per vertex, ascending numeric id, rank as C's "%.17g".
Pure python, standard library only; written for test graphs up to a few
hundred thousand edges.
"""
import argparse
import gzip
import math
import sys
import zlib


def open_text(path):
    with open(path, "rb") as f:
        magic = f.read(2)
    if magic == b"\x1f\x8b":
        return gzip.open(path, "rt", encoding="ascii", newline="")
    return open(path, "r", encoding="ascii", newline="")


def read_edges(path):
    """Return (srcs, dsts) as lists of python ints (original ids)."""
    srcs, dsts = [], []
    with open_text(path) as f:
        for lineno, line in enumerate(f, 1):
            text = line.strip()
            if not text or text.startswith("#"):
                continue
            fields = text.split()
            if len(fields) != 2 or not all(x.isdigit() for x in fields):
                sys.exit("%s:%d: expected two vertex ids, got %r" % (path, lineno, text))
            s, d = int(fields[0]), int(fields[1])
            if s >= 1 << 64 or d >= 1 << 64:
                sys.exit("%s:%d: vertex id does not fit in 64 bits" % (path, lineno))
            srcs.append(s)
            dsts.append(d)
    return srcs, dsts


def pagerank(srcs, dsts, iterations, damping):
    """Return (ids ascending, ranks in the same order)."""
    ids = sorted(set(srcs) | set(dsts))
    index = {v: i for i, v in enumerate(ids)}
    n = len(ids)
    outdeg = [0] * n
    in_edges = [[] for _ in range(n)]
    for s, d in zip(srcs, dsts):
        si = index[s]
        outdeg[si] += 1
        in_edges[index[d]].append(si)
    dangling = [u for u in range(n) if outdeg[u] == 0]
    rank = [1.0 / n] * n
    teleport = (1.0 - damping) / n
    for _ in range(iterations):
        contrib = [rank[u] / outdeg[u] if outdeg[u] else 0.0 for u in range(n)]
        spread = math.fsum(rank[u] for u in dangling) / n
        rank = [teleport + damping * (math.fsum([contrib[u] for u in srcs_of]) + spread)
                for srcs_of in in_edges]
    return ids, rank


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("graph", help="SNAP edge list, plain or gzip")
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--damping", type=float, default=0.85)
    ap.add_argument("--output", help="write here instead of stdout")
    args = ap.parse_args()
    if args.iterations < 1 or not 0.0 < args.damping < 1.0:
        sys.exit("ref_pagerank.py: need --iterations >= 1 and 0 < --damping < 1")
    try:
        srcs, dsts = read_edges(args.graph)
    except (OSError, EOFError, zlib.error, UnicodeDecodeError) as e:
        sys.exit("%s: cannot read: %s" % (args.graph, e))
    if not srcs:
        sys.exit("%s: no edges" % args.graph)
    ids, rank = pagerank(srcs, dsts, args.iterations, args.damping)
    text = "".join("%d\t%.17g\n" % (v, r) for v, r in zip(ids, rank))
    if args.output:
        with open(args.output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
