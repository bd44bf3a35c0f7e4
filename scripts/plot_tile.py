#!/usr/bin/env python3
"""plot_tile.py — figures of `tessera bench tile` results.

  python3 scripts/plot_tile.py RESULTS.jsonl OUTDIR

For every (processor mix, CCR): time against the fixed tile size per policy,
APC as a horizontal line (tile-MIX-kK.png); and one chart of the
BOOT / PROC / L-IMB / OVER split of APC and of the best fixed run per
configuration (tile-breakdown.png).  Medians over repeated rounds.  Needs
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


def load(path):
    runs = collections.defaultdict(list)
    for line in open(path):
        r = json.loads(line)
        if r.get("bench") == "tile" and r.get("stats"):
            runs[(r["mix"], r["ccr"], r["policy"], r["size"])].append(r)
    return runs


def main():
    path, outdir = sys.argv[1], sys.argv[2]
    os.makedirs(outdir, exist_ok=True)
    runs = load(path)
    configs = sorted({(m, k) for (m, k, p, s) in runs if not m.startswith("np")})
    breakdown = []
    for mix, ccr in configs:
        fig, ax = plt.subplots(figsize=(6, 4))
        best = None
        for policy in ("dd", "static", "ws"):
            pts = sorted((s, statistics.median(r["seconds"] for r in rs))
                         for (m, k, p, s), rs in runs.items()
                         if (m, k, p) == (mix, ccr, policy))
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=policy)
                for s, t in pts:
                    if best is None or t < best[1]:
                        best = ((mix, ccr, policy, s), t)
        apc = runs.get((mix, ccr, "apc", 0))
        if apc:
            t = statistics.median(r["seconds"] for r in apc)
            ax.axhline(t, color="black", linestyle="--", label=f"apc {t:.3f} s")
            breakdown.append((f"{mix} K={ccr}", apc[0]["stats"],
                              runs[best[0]][0]["stats"] if best else None))
        ax.set_xscale("log", base=2)
        ax.set_xlabel("fixed tile size (options)")
        ax.set_ylabel("seconds (run start to last output)")
        ax.set_title(f"Black-Scholes, {mix}, CCR {ccr}")
        ax.legend()
        fig.tight_layout()
        name = mix.replace("*", "x").replace("+", "_").replace("@", "at")
        fig.savefig(os.path.join(outdir, f"tile-{name}-k{ccr}.png"), dpi=100)
        plt.close(fig)
    if breakdown:
        fig, ax = plt.subplots(figsize=(max(6, len(breakdown) * 1.2), 4))
        parts = ("boot", "proc", "limb", "over")
        for i, (label, apc, fixed) in enumerate(breakdown):
            for j, s in enumerate((apc, fixed)):
                if s is None:
                    continue
                bottom = 0
                for p, color in zip(parts, ("#999", "#4c72b0", "#dd8452", "#c44e52")):
                    ax.bar(i * 3 + j, s[p], bottom=bottom, color=color,
                           label=p.upper() if i == 0 and j == 0 else None)
                    bottom += s[p]
        ax.set_xticks([i * 3 + 0.5 for i in range(len(breakdown))])
        ax.set_xticklabels([b[0] for b in breakdown], rotation=30, ha="right", fontsize=7)
        ax.set_ylabel("seconds (left bar APC, right bar best fixed)")
        ax.legend()
        fig.tight_layout()
        fig.savefig(os.path.join(outdir, "tile-breakdown.png"), dpi=100)
        plt.close(fig)
    print(f"figures in {outdir}")


if __name__ == "__main__":
    main()
