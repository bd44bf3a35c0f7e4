#!/usr/bin/env python3
"""kmeans.py -- Piccolo's k-means (its section 4.2) on tessera's tables, in Python.

Lloyd's algorithm as `tessera run kmeans` does it (docs/kmeans.md), with the
same options, tables and order of sums, so for the same points, K and
partition count the centres agree with it bit for bit:

- the initial centres are the first K points;
- kernel instance p assigns the points of partition p of the dense
  `assignment` table to their nearest centre (squared Euclidean distance
  summed in coordinate order, ties to the lowest index), writes their
  assignments with one put_range, and sums its points per centre in point
  order (np.bincount) into K rows of DIM sums and a count, written with one
  put_range to keys p*K*(DIM+1).. of the `partials` table;
- the control function adds the partial sums in partition order and moves
  each centre to the mean of its points (a centre without points stays).

Every rank reads the points and creates the same tables; under mpirun each
rank is one Python interpreter and rank 0 runs the control function.  The
centres travel to the kernels as their (pickled) arguments.

    PYTHONPATH=build/python python3 examples/python/kmeans.py \\
        --points FILE --k 8 --iterations 10 --output centres.txt
"""

import argparse
import sys
import time

import numpy as np

import tessera

BLOCK = 1 << 22  # distances per block (32 MiB of doubles): points per block = BLOCK // K


def read_points(path):
    """The points file of docs/kmeans.md: one point per line, DIM coordinates,
    '#' comment lines."""
    try:
        pts = np.loadtxt(path, dtype=np.float64, comments="#", ndmin=2)
    except (OSError, ValueError) as e:
        raise SystemExit(f"kmeans.py: {path}: {e}")
    if pts.shape[0] == 0:
        raise SystemExit(f"kmeans.py: {path}: no points")
    if not np.all(np.isfinite(pts)) or np.abs(pts).max() > 1e150:
        raise SystemExit(f"kmeans.py: {path}: a coordinate is not finite or beyond 1e150")
    return np.ascontiguousarray(pts)


def nearest(x, centres):
    """Index of each point's nearest centre: distances summed in coordinate order
    (as the C kernel sums them), ties to the lowest index (argmin's first)."""
    out = np.empty(len(x), dtype=np.int64)
    step = max(1, BLOCK // len(centres))
    for lo in range(0, len(x), step):
        block = x[lo:lo + step]
        dist = (block[:, None, 0] - centres[None, :, 0]) ** 2
        for d in range(1, x.shape[1]):
            dist += (block[:, None, d] - centres[None, :, d]) ** 2
        out[lo:lo + step] = np.argmin(dist, axis=1)
    return out


def sums_by_centre(x, chosen, k):
    """K rows of DIM coordinate sums and a count, each summed in point order."""
    acc = np.empty((k, x.shape[1] + 1))
    for d in range(x.shape[1]):
        acc[:, d] = np.bincount(chosen, weights=x[:, d], minlength=k)
    acc[:, -1] = np.bincount(chosen, minlength=k)
    return acc


class KMeans:
    """The points (on every rank), the tables and the assign kernel."""

    def __init__(self, ctx, points, k, partitions):
        self.pts, self.k = points, k
        self.n, self.dim = points.shape
        self.partitions = partitions
        self.row = k * (self.dim + 1)  # a partition's keys in `partials`
        self.assignment = ctx.table("assignment", key_count=self.n, partitions=partitions,
                                    value="int")
        self.partials = ctx.table("partials", key_count=partitions * self.row,
                                  partitions=partitions)
        self.moved = ctx.table("moved", key_count=1, value="int", accum="sum")
        ctx.kernel(self.assign)

    def assign(self, task, centres):
        """Instance p: assign partition p's points, publish its partial sums and moves."""
        p = task.instance
        first, count = self.assignment.dense_range(p)
        x = self.pts[first:first + count]
        prev = self.assignment.read_range(first, count)
        chosen = nearest(x, centres)
        self.assignment.put_range(first, chosen)
        self.partials.put_range(p * self.row, sums_by_centre(x, chosen, self.k).ravel())
        self.moved.update(0, int(np.count_nonzero(chosen != prev)))

    def control(self, ctx, iterations, progress):
        """Rank 0: the first K points as centres, then `iterations` rounds."""
        centres = self.pts[:self.k].copy()
        self.assignment.put_range(0, np.full(self.n, -1, dtype=np.int64))
        self.assignment.flush()
        ctx.barrier()
        moved_before, seconds = 0, []
        for it in range(iterations):
            t = time.perf_counter()
            ctx.run(self.assign, locality=self.assignment, args=centres)
            ctx.barrier()
            seconds.append(time.perf_counter() - t)
            parts = self.partials.gather().reshape(self.partitions, self.k, self.dim + 1)
            total = np.zeros((self.k, self.dim + 1))
            for p in range(self.partitions):  # partition order, as the C control adds them
                total += parts[p]
            filled = total[:, -1] > 0
            centres[filled] = total[filled, :-1] / total[filled, -1:]
            moved = self.moved.get(0)
            if progress:
                print(f"kmeans.py: iteration {it + 1}/{iterations}: {seconds[-1]:.3f} s, "
                      f"moved {moved - moved_before} points", file=sys.stderr)
            moved_before = moved
        return centres, self.assignment.gather(), seconds


def write_lines(path, lines):
    if path is None:
        sys.stdout.writelines(lines)
        return
    with open(path, "w") as f:
        f.writelines(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--points", help="points file (docs/kmeans.md)")
    ap.add_argument("--gen", help="not supported here: use `tessera gen-points SPEC FILE`")
    ap.add_argument("--k", type=int, required=True)
    ap.add_argument("--iterations", type=int, required=True)
    ap.add_argument("--workers", type=int, default=0, help="worker threads per rank (0: cores)")
    ap.add_argument("--partitions", type=int, default=0,
                    help="partitions (default min(2 x workers in total, N))")
    ap.add_argument("--output", help="K lines of DIM coordinates (default stdout)")
    ap.add_argument("--assignments", help="N lines: each point's centre index")
    ap.add_argument("--progress", action="store_true", help="a line per iteration on stderr")
    ap.add_argument("--quiet", action="store_true", help="no summary line on stderr")
    ap.add_argument("--mode", default="auto", choices=["auto", "embedded", "mpi"])
    opt = ap.parse_args(argv)
    if opt.gen is not None:
        ap.error("--gen is not supported by kmeans.py yet: write the points with "
                 "`tessera gen-points SPEC FILE` and pass --points FILE")
    if opt.points is None:
        ap.error("--points FILE is required")
    if opt.k < 1 or opt.iterations < 1 or opt.partitions < 0:
        ap.error("--k and --iterations must be at least 1, --partitions at least 0")
    t0 = time.perf_counter()
    pts = read_points(opt.points)
    if opt.k > len(pts):
        ap.error(f"--k {opt.k} is larger than the number of points ({len(pts)})")
    with tessera.Context(workers=opt.workers, mode=opt.mode) as ctx:
        parts = opt.partitions or min(2 * ctx.workers, len(pts))
        app = KMeans(ctx, pts, opt.k, min(parts, len(pts)))
        t1 = time.perf_counter()
        result = {}

        def control(c):
            result["out"] = app.control(c, opt.iterations, opt.progress)

        ctx.main(control)
        if ctx.rank == 0:
            centres, assignment, seconds = result["out"]
            write_lines(opt.output, (" ".join("%.17g" % v for v in row) + "\n"
                                     for row in centres.tolist()))
            if opt.assignments:
                write_lines(opt.assignments, (f"{a}\n" for a in assignment.tolist()))
            if not opt.quiet:
                print(f"kmeans.py: {app.n} points of {app.dim} dims loaded in {t1 - t0:.2f} s; "
                      f"{opt.iterations} iterations in {sum(seconds):.3f} s on {ctx.nranks} "
                      f"rank(s) x {ctx.workers // ctx.nranks} worker(s), {app.partitions} "
                      "partitions", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
