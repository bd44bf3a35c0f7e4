#!/usr/bin/env python3
"""pagerank.py -- the Piccolo paper's PageRank (its Figure 2) on tessera's tables, in Python.

Two kernels (--kernel):

- pull (the default, as `tessera run pagerank` does it): a replicated dense
  table of shares PR(u)/outdeg(u) and a dense table of ranks.  Kernel
  instance p sums, for each of its vertices, the shares of the previous
  iteration over its in-edges, read from its rank's replica of the shares
  (replica_sums: one pass in C over a CSR of in-edges, GIL released), then
  writes its vertices' new ranks and shares with one put_range each (the
  shares reach every replica at the barrier).  The sums come in the same
  order as in `tessera run pagerank`, so the ranks are the same bits.
- push (Figure 2's form): two dense tables of ranks, curr and next, with a
  sum accumulator.  Kernel instance p reads its partition of curr (one
  read_range), gives each out-edge of its vertices the share
  d*PR(u)/outdeg(u) and sends all of them to next in one update_fanout (its
  out-edges as a CSR and a share per vertex; the GIL is released while
  tessera applies them), plus the teleport and dangling term for its own
  vertices; the control function clears the old table and swaps.

The results match `tessera run pagerank` (same update, same vertex numbering
and output format):

    PR_0(v) = 1/N
    PR_{k+1}(v) = (1-d)/N + d * (sum over u->v of PR_k(u)/outdeg(u) + D_k/N)

where D_k is the rank held by vertices without out-edges.  Every rank loads
the graph and creates the same tables; under mpirun each rank is one Python
interpreter and rank 0 runs the control function.

    PYTHONPATH=build/python python3 examples/python/pagerank.py \\
        --graph GRAPH --iterations 20 --output ranks.tsv
"""

import argparse
import gzip
import sys
import time

import numpy as np

import tessera


def load_graph(path):
    """(ids, src, dst): a SNAP edge list (plain or gzip) or a tessera graph cache
    (docs/formats.md), renumbered so internal index i is the i-th smallest id."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    if data[:8] == b"TSSGRAPH":
        nv, ne = (int(x) for x in np.frombuffer(data, np.uint64, 2, 16))
        ids = np.frombuffer(data, np.uint64, nv, 40)
        src = np.frombuffer(data, np.uint32, ne, 40 + 8 * nv)
        dst = np.frombuffer(data, np.uint32, ne, 40 + 8 * nv + 4 * ne)
        return ids, src.astype(np.int64), dst.astype(np.int64)
    lines = [ln for ln in data.split(b"\n") if ln.strip() and not ln.lstrip().startswith(b"#")]
    nums = np.array(b" ".join(lines).split(), dtype=np.uint64)
    if nums.size % 2:
        raise SystemExit(f"pagerank.py: {path}: an edge line without its destination")
    ids, inv = np.unique(nums, return_inverse=True)
    return ids, inv[0::2].astype(np.int64), inv[1::2].astype(np.int64)


class PullPageRank:
    """The graph by destination (a CSR of in-edges), the rank table, the replicated table
    of shares and the kernel."""

    def __init__(self, ctx, ids, src, dst, partitions, damping):
        self.ids, self.n, self.d = ids, len(ids), damping
        order = np.argsort(dst, kind="stable")
        self.in_src = np.ascontiguousarray(src[order], dtype=np.int64)
        self.in_offsets = np.concatenate(([0], np.cumsum(np.bincount(dst, minlength=self.n))))
        outdeg = np.bincount(src, minlength=self.n)
        # A dangling vertex has no share to give: its entry holds its rank (times 1.0).
        self.inv_outdeg = np.where(outdeg > 0, 1.0 / np.maximum(outdeg, 1), 1.0)
        self.dangling = np.flatnonzero(outdeg == 0)
        self.ranks = ctx.table("ranks", key_count=self.n, partitions=partitions)
        self.shares = ctx.table("shares", key_count=self.n, partitions=partitions,
                                group_with=self.ranks, replicated=True)
        self.parts = {}  # partition -> its first vertex and its in-edges as a CSR
        for p in range(partitions):
            first, count = self.ranks.dense_range(p)
            off = self.in_offsets[first:first + count + 1]
            self.parts[p] = (first, self.in_src[off[0]:off[-1]], off - off[0])
        ctx.kernel(self.pr_pull)

    def pr_pull(self, task, a):
        """Instance p: the new ranks and shares of partition p's vertices."""
        first, srcs, offsets = self.parts[task.instance]
        pr = a["teleport"] + self.d * (self.shares.replica_sums(srcs, offsets) + a["spread"])
        self.ranks.put_range(first, pr)
        self.shares.put_range(first, pr * self.inv_outdeg[first:first + len(pr)])

    def control(self, ctx, iterations):
        """Rank 0: PR_0, then `iterations` rounds; returns the final ranks."""
        pr0 = np.full(self.n, 1.0 / self.n)
        self.ranks.put_range(0, pr0)
        self.shares.put_range(0, pr0 * self.inv_outdeg)
        ctx.barrier()
        no_edges = np.array([0, len(self.dangling)])
        for _ in range(iterations):
            # D_k: the dangling vertices' ranks from the replica, added in vertex order.
            spread = self.shares.replica_sums(self.dangling, no_edges)[0] / self.n
            ctx.run(self.pr_pull, locality=self.ranks,
                    args={"teleport": (1.0 - self.d) / self.n, "spread": spread})
            ctx.barrier()
        return self.ranks.gather()


class PushPageRank:
    """The graph by source (CSR), the two rank tables and the kernel."""

    def __init__(self, ctx, ids, src, dst, partitions, damping):
        self.ids, self.n, self.d = ids, len(ids), damping
        order = np.argsort(src, kind="stable")
        self.dst = np.ascontiguousarray(dst[order], dtype=np.uint64)
        self.outdeg = np.bincount(src, minlength=self.n)
        self.offsets = np.concatenate(([0], np.cumsum(self.outdeg)))
        self.inv_outdeg = 1.0 / np.maximum(self.outdeg, 1)  # no share without out-edges
        self.dangling = np.flatnonzero(self.outdeg == 0)
        curr = ctx.table("curr", key_count=self.n, partitions=partitions, accum="sum")
        nxt = ctx.table("next", key_count=self.n, partitions=partitions, accum="sum",
                        group_with=curr)
        self.tables = [curr, nxt]
        self.cache = {}
        ctx.kernel(self.pr_step)

    def edges_of(self, p, first, last):
        """Partition p's out-edges as a CSR: destinations and offsets (made once: the
        ranges of a dense table never change)."""
        if p not in self.cache:
            lo, hi = self.offsets[first], self.offsets[last]
            self.cache[p] = (self.dst[lo:hi], self.offsets[first:last + 1] - lo)
        return self.cache[p]

    def pr_step(self, task, a):
        """Instance p: push the shares of partition p's vertices into the next table."""
        cur, nxt = self.tables[a["cur"]], self.tables[1 - a["cur"]]
        first, pr = cur.read_partition(task.instance)
        last = first + len(pr)
        share = self.d * pr * self.inv_outdeg[first:last]
        dst, offsets = self.edges_of(task.instance, first, last)
        nxt.update_fanout(dst, offsets, share)
        nxt.update_many(np.arange(first, last, dtype=np.uint64), a["base"])

    def control(self, ctx, iterations):
        """Rank 0: PR_0, then `iterations` rounds; returns the final ranks."""
        cur = 0
        self.tables[cur].put_range(0, np.full(self.n, 1.0 / self.n))
        self.tables[cur].flush()
        ctx.barrier()
        for _ in range(iterations):
            pr = self.tables[cur].gather()
            spread = pr[self.dangling].sum() / self.n
            base = (1.0 - self.d) / self.n + self.d * spread
            ctx.run(self.pr_step, locality=self.tables[cur], args={"cur": cur, "base": base})
            ctx.barrier()
            self.tables[cur].clear()
            cur = 1 - cur
        return self.tables[cur].gather()


def write_ranks(path, ids, pr):
    with open(path, "w") as f:
        f.writelines(f"{i}\t{r:.17g}\n" for i, r in zip(ids.tolist(), pr.tolist()))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--graph", required=True, help="SNAP edge list (plain/gzip) or graph cache")
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--damping", type=float, default=0.85)
    ap.add_argument("--output", help="write id<TAB>rank lines here")
    ap.add_argument("--partitions", type=int, default=8)
    ap.add_argument("--workers", type=int, default=0, help="worker threads per rank (0: cores)")
    ap.add_argument("--mode", default="auto", choices=["auto", "embedded", "mpi"])
    ap.add_argument("--kernel", default="pull", choices=["pull", "push"])
    opt = ap.parse_args(argv)
    t0 = time.perf_counter()
    ids, src, dst = load_graph(opt.graph)
    with tessera.Context(workers=opt.workers, mode=opt.mode) as ctx:
        kind = PullPageRank if opt.kernel == "pull" else PushPageRank
        app = kind(ctx, ids, src, dst, opt.partitions, opt.damping)
        t1 = time.perf_counter()
        result = {}

        def control(c):
            result["pr"] = app.control(c, opt.iterations)
            result["seconds"] = time.perf_counter() - t1

        ctx.main(control)
        if ctx.rank == 0:
            if opt.output:
                write_ranks(opt.output, ids, result["pr"])
            print(f"pagerank.py: {app.n} vertices, {len(src)} edges loaded in {t1 - t0:.2f} s; "
                  f"{opt.iterations} iterations in {result['seconds']:.3f} s on {ctx.nranks} "
                  f"rank(s) x {ctx.workers // ctx.nranks} worker(s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
