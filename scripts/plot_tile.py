#!/usr/bin/env python3
"""plot_tile.py — figures of `tessera bench tile` results.

  python3 scripts/plot_tile.py RESULTS.jsonl [MORE.jsonl ...] OUTDIR

For every (application, processor mix, CCR) of the sweep: time against the
fixed tile size per policy, APC as a horizontal line (tile-APP-MIX-kK.png,
Black-Scholes keeps the name tile-MIX-kK.png); one chart of the BOOT / PROC /
L-IMB / OVER split of APC and of the best fixed run per configuration
(tile-breakdown.png); weak scaling as the APC+ paper's Figures 9-14, stacked
PROC / L-IMB / OVER / BOOT bars per policy and rank count for each
application (tile-weak-APP.png); strong scaling of the CCR application as
its Figure 15 (tile-strong.png).  Medians over repeated rounds.  Records
without an "app" (older results) are Black-Scholes.  Needs
python3-matplotlib (scripts/deps.sh plot).
"""
import collections
import json
import os
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

PARTS = (("boot", "#999"), ("proc", "#4c72b0"), ("limb", "#dd8452"), ("init", "#55a868"),
         ("tcp", "#8172b3"), ("out", "#937860"), ("over", "#c44e52"))
TITLES = {"blackscholes": "Black-Scholes", "sar": "SAR backprojection", "texture": "slide texture"}
UNITS = {"blackscholes": "options", "sar": "pixels", "texture": "blocks"}


def load(paths):
    sweep, weak, strong = (collections.defaultdict(list) for _ in range(3))
    for path in paths:
        for line in open(path):
            r = json.loads(line)
            if r.get("bench") != "tile" or not r.get("stats"):
                continue
            app, mix = r.get("app", "blackscholes"), r["mix"]
            if mix == "weak":
                weak[(app, r["policy"], r["ranks"])].append(r)
            elif mix == "strong":
                strong[(r["ccr"], r["ranks"])].append(r)
            elif not mix.startswith("np"):
                sweep[(app, mix, r["ccr"], r["policy"], r["size"])].append(r)
    return sweep, weak, strong


def median_run(rs):
    """The run of median time (its statistics are those plotted)."""
    return sorted(rs, key=lambda r: r["seconds"])[len(rs) // 2]


def stacked(ax, x, stats, first):
    bottom = 0
    for part, color in PARTS:
        v = stats.get(part, 0.0)  # init, tcp and out: absent from older results
        ax.bar(x, v, bottom=bottom, color=color, label=part.upper() if first else None)
        bottom += v


def plot_sweep(sweep, outdir):
    breakdown = []
    for app, mix, ccr in sorted({k[:3] for k in sweep}):
        fig, ax = plt.subplots(figsize=(6, 4))
        best = None
        for policy in ("dd", "static", "ws"):
            pts = sorted((k[4], statistics.median(r["seconds"] for r in rs))
                         for k, rs in sweep.items() if k[:4] == (app, mix, ccr, policy))
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=policy)
                for s, t in pts:
                    if best is None or t < best[1]:
                        best = ((app, mix, ccr, policy, s), t)
        apc = sweep.get((app, mix, ccr, "apc", 0))
        if apc:
            t = statistics.median(r["seconds"] for r in apc)
            ax.axhline(t, color="black", linestyle="--", label=f"apc {t:.3f} s")
            label = f"{app} {mix}" + (f" K={ccr}" if ccr else "")
            breakdown.append((label, median_run(apc)["stats"],
                              median_run(sweep[best[0]])["stats"] if best else None))
        ax.set_xscale("log", base=2)
        ax.set_xlabel(f"fixed tile size ({UNITS.get(app, 'cells')})")
        ax.set_ylabel("seconds (run start to last output)")
        ax.set_title(f"{TITLES.get(app, app)}, {mix}" + (f", CCR {ccr}" if ccr else ""))
        ax.legend()
        fig.tight_layout()
        name = mix.replace("*", "x").replace("+", "_").replace("@", "at")
        prefix = "tile-" if app == "blackscholes" else f"tile-{app}-"
        fig.savefig(os.path.join(outdir, f"{prefix}{name}-k{ccr}.png"), dpi=100)
        plt.close(fig)
    if breakdown:
        fig, ax = plt.subplots(figsize=(max(6, len(breakdown) * 1.2), 4))
        for i, (label, apc, fixed) in enumerate(breakdown):
            for j, s in enumerate((apc, fixed)):
                if s is not None:
                    stacked(ax, i * 3 + j, s, i == 0 and j == 0)
        ax.set_xticks([i * 3 + 0.5 for i in range(len(breakdown))])
        ax.set_xticklabels([b[0] for b in breakdown], rotation=30, ha="right", fontsize=7)
        ax.set_ylabel("seconds (left bar APC, right bar best fixed)")
        ax.legend()
        fig.tight_layout()
        fig.savefig(os.path.join(outdir, "tile-breakdown.png"), dpi=100)
        plt.close(fig)


def plot_weak(weak, outdir):
    for app in sorted({k[0] for k in weak}):
        fig, ax = plt.subplots(figsize=(7, 4))
        ticks, labels, x = [], [], 0
        for policy in ("apc", "dd", "static", "ws"):
            for ranks in (1, 2, 4):
                rs = weak.get((app, policy, ranks))
                if rs:
                    stacked(ax, x, median_run(rs)["stats"], not ticks)
                    ticks.append(x)
                    labels.append(f"{policy}\n{ranks}" + ("*" if ranks > 2 else ""))
                x += 1
            x += 1
        ax.set_xticks(ticks)
        ax.set_xticklabels(labels, fontsize=7)
        ax.set_ylabel("seconds (work per rank fixed)")
        ax.set_title(f"weak scaling, {TITLES.get(app, app)}: policy / ranks "
                     "(* oversubscribed: 4 ranks on 2 cores)", fontsize=9)
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(os.path.join(outdir, f"tile-weak-{app}.png"), dpi=100)
        plt.close(fig)


def plot_strong(strong, outdir):
    if not strong:
        return
    fig, ax = plt.subplots(figsize=(6, 4))
    for ccr in sorted({k[0] for k in strong}):
        t = {r: statistics.median(x["seconds"] for x in strong[(ccr, r)])
             for (k, r) in strong if k == ccr}
        if 1 not in t:
            continue
        ranks = sorted(t)
        ax.plot(ranks, [t[1] / t[r] for r in ranks], marker="o", label=f"K={ccr}")
    ax.plot([1, 4], [1, 4], color="gray", linestyle=":", label="linear")
    ax.set_xlabel("ranks (1 cpu each; 3 and 4 share 2 cores here)")
    ax.set_ylabel("speedup over 1 rank")
    ax.set_title("strong scaling, Black-Scholes, APC")
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(outdir, "tile-strong.png"), dpi=100)
    plt.close(fig)


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: plot_tile.py RESULTS.jsonl [MORE.jsonl ...] OUTDIR")
    outdir = sys.argv[-1]
    os.makedirs(outdir, exist_ok=True)
    sweep, weak, strong = load(sys.argv[1:-1])
    plot_sweep(sweep, outdir)
    plot_weak(weak, outdir)
    plot_strong(strong, outdir)
    print(f"figures in {outdir}")


if __name__ == "__main__":
    main()
