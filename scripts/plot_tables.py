#!/usr/bin/env python3
"""plot_tables.py — figures of the tables face's benches from their JSON Lines.

In the style of the Piccolo paper's evaluation:

  tables-scaling-strong.png   Figure 6: speedup t(1)/t(R) against processes R
                              for every application (`tessera bench scaling`);
  tables-scaling-weak.png     Figure 7: time per iteration against R with the
                              input grown with R, relative to R = 1;
  tables-mapreduce.png        Figure 9: seconds per iteration, tessera and
                              MR-MPI, per application and R (log scale;
                              `tessera bench mapreduce`);
  tables-matmul.png           Figure 10: GFLOP/s of tessera, ScaLAPACK's
                              pdgemm (best block size) and the dgemm limit
                              against R, one panel per N (`tessera bench matmul`);
  tables-crawl.png            Figure 14: crawler pages/s and MB/s against
                              fetchers per worker, one line per process count
                              (`tessera bench crawl`, a loopback web).

Every point is the median over the rounds in the file.  Rows measured with
more processes than cores are drawn hollow and labelled oversubscribed.

  /usr/bin/python3 scripts/plot_tables.py RESULTS.jsonl... [--out DIR]

(Debian's python3 has matplotlib: scripts/deps.sh plot.)
"""
import argparse
import collections
import json
import os
import statistics
import sys


def load(paths):
    rows = []
    for p in paths:
        with open(p) as f:
            for line in f:
                line = line.strip()
                if line:
                    rows.append(json.loads(line))
    return rows


def medians(rows, key_fn, value):
    groups = collections.defaultdict(list)
    for r in rows:
        groups[key_fn(r)].append(r[value])
    return {k: statistics.median(v) for k, v in groups.items()}


def save(plt, fig, out, name):
    """Write fig as OUT/NAME and close it; the path."""
    path = os.path.join(out, name)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def save_titled(plt, fig, out, name, title, fontsize=10):
    """save() under a title over all the figure's plots; [the path]."""
    fig.suptitle(title, fontsize=fontsize)
    return [save(plt, fig, out, name)]


def of_bench(rows, bench):
    return [r for r in rows if r.get("bench") == bench]


def cores_of(rows):
    return max((r.get("cores", 0) for r in rows), default=0)


def plot_scaling(plt, rows, out):
    made = []
    med = medians(rows, lambda r: (r["app"], r["mode"], r["ranks"]), "seconds_per_iteration")
    cores = cores_of(rows)
    for mode, title, ylabel in (("strong", "Figure 6: the same input, R processes", "speedup t(1)/t(R)"),
                                ("weak", "Figure 7: input grown with R", "t(R)/t(1) (ideal 1)")):
        fig, ax = plt.subplots(figsize=(6, 4))
        for app in sorted({a for a, m, _ in med if m == mode}):
            rs = sorted(r for a, m, r in med if a == app and m == mode)
            if 1 not in rs:
                continue
            t1 = med[(app, mode, 1)]
            ys = [t1 / med[(app, mode, r)] if mode == "strong" else med[(app, mode, r)] / t1 for r in rs]
            line, = ax.plot(rs, ys, "-", label=app)
            for r, y in zip(rs, ys):
                ax.plot([r], [y], "o", color=line.get_color(),
                        fillstyle="none" if cores and r > cores else "full")
        rmax = max(r for _, _, r in med)
        ideal = list(range(1, rmax + 1))
        # weak: the work grows R times, so with fewer cores than R the best is R/cores
        weak_ideal = [max(1.0, r / cores) if cores else 1.0 for r in ideal]
        ax.plot(ideal, ideal if mode == "strong" else weak_ideal, "k:", label="ideal")
        if cores:
            ax.axvline(cores + 0.5, color="grey", lw=0.5)
            ax.text(cores + 0.6, ax.get_ylim()[1] * 0.95, "oversubscribed ->", fontsize=7, va="top")
        ax.set_xlabel("processes R (one worker each; %d cores)" % cores)
        ax.set_ylabel(ylabel)
        ax.set_title(title, fontsize=10)
        ax.legend(fontsize=8)
        path = save(plt, fig, out, "tables-scaling-%s.png" % mode)
        made.append(path)
    return made


def plot_mapreduce(plt, rows, out):
    med = medians(rows, lambda r: (r["app"], r["system"], r["ranks"]), "seconds_per_iteration")
    apps = sorted({a for a, _, _ in med})
    fig, axes = plt.subplots(1, len(apps), figsize=(5 * len(apps), 4), squeeze=False)
    for ax, app in zip(axes[0], apps):
        rs = sorted({r for a, _, r in med if a == app})
        width = 0.38
        for i, system in enumerate(("tessera", "mrmpi")):
            ys = [med.get((app, system, r), float("nan")) for r in rs]
            ax.bar([x + (i - 0.5) * width for x in range(len(rs))], ys, width,
                   label="tessera" if system == "tessera" else "MR-MPI (MapReduce)")
        for x, r in enumerate(rs):
            a, b = med.get((app, "tessera", r)), med.get((app, "mrmpi", r))
            if a and b:
                ax.text(x, b, "%.0fx" % (b / a), ha="center", va="bottom", fontsize=8)
        ax.set_yscale("log")
        ax.set_xticks(range(len(rs)))
        ax.set_xticklabels(["R=%d" % r for r in rs])
        ax.set_ylabel("seconds per iteration")
        ax.set_title("%s (%s)" % (app, rows[0]["input"] if len(apps) == 1 else
                                  next(r["input"] for r in rows if r["app"] == app)), fontsize=10)
        ax.legend(fontsize=8)
    return save_titled(plt, fig, out, "tables-mapreduce.png",
                       "Figure 9 stand-in: tessera against MapReduce over MPI")


def plot_matmul(plt, rows, out):
    med = medians(rows, lambda r: (r["n"], r["system"], r["ranks"]), "gflops")
    ns = sorted({n for n, _, _ in med})
    fig, axes = plt.subplots(1, len(ns), figsize=(4.5 * len(ns), 4), squeeze=False)
    for ax, n in zip(axes[0], ns):
        rs = sorted({r for m, s, r in med if m == n and s == "tessera"})
        ax.plot(rs, [med[(n, "tessera", r)] for r in rs], "o-", label="tessera")
        best = [max((v for (m, s, rr), v in med.items() if m == n and rr == r and s.startswith("pdgemm")),
                    default=float("nan")) for r in rs]
        ax.plot(rs, best, "s--", label="ScaLAPACK pdgemm (best nb)")
        if (n, "dgemm", 1) in med:
            ax.axhline(med[(n, "dgemm", 1)], color="k", ls=":", label="one dgemm, all cores")
        ax.set_xlabel("processes R")
        ax.set_ylabel("GFLOP/s")
        ax.set_title("N = %d" % n, fontsize=10)
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=7)
    return save_titled(plt, fig, out, "tables-matmul.png",
                       "Figure 10: matrix multiply against ScaLAPACK")


def plot_crawl(plt, rows, out):
    pages = medians(rows, lambda r: (r["ranks"], r["fetchers"]), "pages_per_second")
    mb = medians(rows, lambda r: (r["ranks"], r["fetchers"]), "megabytes_per_second")
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.8))
    for ax, med, label in ((axes[0], pages, "pages/s"), (axes[1], mb, "MB/s")):
        for ranks in sorted({r for r, _ in med}):
            fs = sorted(f for r, f in med if r == ranks)
            ax.plot(fs, [med[(ranks, f)] for f in fs], "o-", label="%d process%s" % (ranks, "es" if ranks > 1 else ""))
        ax.set_xscale("log", base=2)
        ax.set_xlabel("fetchers per worker")
        ax.set_ylabel(label)
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=7)
    r0 = rows[0]
    return save_titled(plt, fig, out, "tables-crawl.png",
                       "Figure 14: crawler throughput, loopback web of %d sites at most %g fetches/s each "
                       "(server on the same cores)" % (r0["sites"], r0["per_site_rate"]), fontsize=9)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--out", default="docs/figures")
    args = ap.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("plot_tables.py: matplotlib is missing (scripts/deps.sh plot; use /usr/bin/python3)")
    rows = load(args.files)
    os.makedirs(args.out, exist_ok=True)
    made = []
    for bench, plot in (("scaling", plot_scaling), ("mapreduce", plot_mapreduce),
                        ("matmul", plot_matmul), ("crawl", plot_crawl)):
        of_this = of_bench(rows, bench)
        if of_this:
            made += plot(plt, of_this, args.out)
    for p in made:
        print(p)
    if not made:
        sys.exit("plot_tables.py: no scaling, mapreduce, matmul or crawl records in the input")


if __name__ == "__main__":
    main()
