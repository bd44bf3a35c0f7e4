#!/usr/bin/env python3
"""plot_tick_paper.py — the paper's Figures 6, 8-10 and 12-13 on the virtual clock.

Reads the runs of bench/bench_tick_matrix.sh (OUT_DIR/ID.job: the job line
`LABEL|ENV|APP|ARGS` and its exit status; OUT_DIR/ID.json: the run's
--metrics) and draws, from jobs whose LABEL starts with the figure's tag:

  fig6   tick-depth-<app>-virtual.png    sched ticks/s against the depth d,
                                          one line per latency profile, beside
                                          it sched / local (Figure 6);
  fig8   tick-layers-<app>-virtual.png   repl ticks/s against the layers m,
                                          one line per period k, local as
                                          m = 0 where repl k=1 m=0 was not run
                                          (Figures 8-10);
  fig12  tick-scaleup-<app>-virtual.png  local and combined ticks/s against
                                          the processes, and combined / local
                                          (the scale-up figure).

Every point is the median over the seeds run (each seed drawn as a dot).
Every figure says VIRTUAL clock / modelled step: these are what tessera's
models predict at the paper's settings, not measurements of a cluster.  The
paper's effects are drawn only as the docs quote them (the per-point values
of the paper are not available here).

With --table FILE it also writes every configuration's seeds, median, ratio
to local and tuples stepped per tick as text.

usage: plot_tick_paper.py --runs DIR [--runs DIR ...] [--out DIR] [--table FILE]
Exits 3 when matplotlib is missing (/usr/bin/python3 with python3-matplotlib).
"""
import argparse
import glob
import json
import os
import re
import statistics
import sys

import plot_tick  # scripts/plot_tick.py: save()

NO_MATPLOTLIB = 3
EMULATED = "EMULATED: virtual clock (simulated time), modelled 1 ms step"

# The paper's effects as docs/benchmarks.md and issue 40 quote them; no
# per-point values of the paper are known here.
PAPER = {
    "fig6": "paper, Figure 6 (as quoted): one tick of depth lifts\n"
            "fish throughput ~30% over local; per-point values\nnot available here",
    "fig8": "paper, Figures 8-10 (as quoted): gains up to m = 2-3\n"
            "at k = 1 and a jump at k = 5; per-point values\nnot available here",
    "fig12 fish": "paper (as quoted): combined 2.5x local for fish\n"
                  "at 800 per process; the advantage grows with scale;\n"
                  "per-point values not available here",
    "fig12 jacobi": "paper (as quoted): combined's advantage over local\n"
                    "grows with scale; per-point values not available here",
}


def arg(args, name, default=None):
    m = re.search(r"--%s (\S+)" % re.escape(name), args)
    return m.group(1) if m else default


def load(dirs):
    """[run] with the job's tag, app, workers, alg, d, k, m, jitter, seed and metrics."""
    runs = []
    for d in dirs:
        for job in sorted(glob.glob(os.path.join(d, "*.job"))):
            lines = open(job, encoding="utf-8").read().split("\n")
            label, _env, app, args = lines[0].split("|", 3)
            try:
                met = json.load(open(job[:-4] + ".json", encoding="utf-8"))
            except (OSError, ValueError):
                met = None
            name, _, workers = app.partition(":")
            runs.append({
                "tag": label.split()[0], "label": label, "app": name,
                "workers": int(workers or 49), "alg": arg(args, "alg"),
                "d": int(arg(args, "depth", 0)), "k": int(arg(args, "period", 0)),
                "m": int(arg(args, "layers", 0)), "jitter": arg(args, "jitter"),
                "seed": int(arg(args, "seed", 0)), "metrics": met, "job": lines[0],
            })
    return runs


def tps(run):
    return run["metrics"]["ticks_per_second"] if run["metrics"] else None


def group(runs, **want):
    """{seed: ticks/s} of the runs matching every key of want."""
    out = {}
    for r in runs:
        if all(r[k] == v for k, v in want.items()) and tps(r) is not None:
            out[r["seed"]] = tps(r)
    return out


def median(seeds):
    return statistics.median(seeds.values()) if seeds else float("nan")


def note(ax, text, x=0.02, y=0.02):
    ax.text(x, y, text, transform=ax.transAxes, fontsize=7, va="bottom",
            bbox={"boxstyle": "round", "facecolor": "lightyellow", "alpha": 0.9})


def dots(ax, x, seeds, color):
    ax.scatter([x] * len(seeds), list(seeds.values()), color=color, s=10, alpha=0.5)


def finish(plt, fig, out, title, sub, name):
    """Title the figure (with its seeds and the EMULATED label) and write OUT/NAME.png."""
    fig.suptitle(f"{title}{seeds_text(sub)}\n{EMULATED}", fontsize=9)
    return plot_tick.save(plt, fig, out, name)


def figure_runs(runs, tag, app, alg):
    """The runs of one figure, or None when its technique has not run."""
    sub = [r for r in runs if r["tag"] == tag and r["app"] == app]
    return sub if any(r["alg"] == alg for r in sub) else None


def seeds_text(sub):
    """Which seeds ran: every seed under a random profile, one under a fixed one."""
    random = sorted({r["seed"] for r in sub if not r["jitter"].startswith(("fixed", "none"))})
    fixed = sorted({r["seed"] for r in sub if r["jitter"].startswith(("fixed", "none"))})
    text = "seeds " + ", ".join(map(str, random)) if random else ""
    if fixed:
        text += (" under cloud; " if random else "") + \
            "fixed latency / no jitter: seed " + ", ".join(map(str, fixed)) + \
            " (every seed runs the same)"
    return text


def size_text(app, workers):
    if app == "fish":
        return f"{workers} processes x 800 fish"
    return f"{workers} processes x 100x100 cells"


def plot_depth(plt, sub, app, out):
    """Figure 6 from its runs SUB."""
    ds = sorted({r["d"] for r in sub if r["alg"] == "sched"})
    if not ds:
        return None
    fig, (ax, axr) = plt.subplots(1, 2, figsize=(11, 4.4))
    colors = ["tab:red", "tab:blue", "tab:green"]
    for i, prof in enumerate(sorted({r["jitter"] for r in sub})):
        c = colors[i % len(colors)]
        local = group(sub, alg="local", jitter=prof)
        meds = [median(group(sub, alg="sched", d=d, jitter=prof)) for d in ds]
        ax.plot(ds, meds, marker="o", color=c, label=f"sched, --jitter {prof}")
        for d in ds:
            dots(ax, d, group(sub, alg="sched", d=d, jitter=prof), c)
        ax.axhline(median(local), color=c, linestyle=":", label=f"local, --jitter {prof}")
        axr.plot(ds, [m / median(local) for m in meds], marker="o", color=c,
                 label=f"--jitter {prof}")
    axr.plot([1], [1.3], marker="*", markersize=14, color="grey", linestyle="none",
             label="paper: ~1.3 at d = 1 (quoted)")
    axr.axhline(1.0, color="black", linewidth=0.6)
    for a in (ax, axr):
        a.set_xscale("log", base=2)
        a.set_xticks(ds)
        a.set_xticklabels([str(d) for d in ds])
        a.set_xlabel("scheduling depth d")
    ax.set_ylabel("ticks per second (median of seeds; dots: each seed)")
    ax.set_ylim(bottom=0)
    axr.set_ylabel("sched / local (medians)")
    axr.set_ylim(0.9, max(1.45, axr.get_ylim()[1]))
    ax.legend(fontsize=7, loc="upper right")
    axr.legend(fontsize=7, loc="upper right")
    note(axr, PAPER["fig6"], 0.35, 0.45)
    return finish(plt, fig, out, f"Figure 6, {app}: dependency scheduling, "
                  f"{size_text(app, 49)}, 100 ticks, ", sub, f"tick-depth-{app}-virtual")


def plot_layers(plt, sub, app, out):
    """Figures 8-10 from its runs SUB."""
    profs = sorted({r["jitter"] for r in sub})
    fig, axes = plt.subplots(1, len(profs), figsize=(6.2 * len(profs), 4.6), squeeze=False)
    colors = {1: "tab:red", 2: "tab:blue", 5: "tab:green"}
    for ax, prof in zip(axes[0], profs):
        local = group(sub, alg="local", jitter=prof)
        for k in sorted({r["k"] for r in sub if r["alg"] == "repl"}):
            ms = sorted({r["m"] for r in sub if r["alg"] == "repl" and r["k"] == k})
            pts = [(m, group(sub, alg="repl", k=k, m=m, jitter=prof)) for m in ms]
            if k == 1 and 0 not in ms:
                pts.insert(0, (0, local))  # (k, m) = (1, 0) is local
            c = colors.get(k, "tab:purple")
            ax.plot([m for m, _ in pts], [median(s) for _, s in pts], marker="o", color=c,
                    label=f"repl k={k}" + (" (m=0: local)" if k == 1 and 0 not in ms else ""))
            for m, s in pts:
                dots(ax, m, s, c)
        ax.axhline(median(local), color="grey", linestyle=":", label="local")
        ax.set_xlabel("replica layers m (width m+1 at a received round)")
        ax.set_ylabel("ticks per second (median of seeds; dots: each seed)")
        ax.set_ylim(bottom=0)
        ax.set_title(f"--jitter {prof}", fontsize=9)
        ax.legend(fontsize=7, loc="lower right")
        note(ax, PAPER["fig8"])
    return finish(plt, fig, out, f"Figures 8-10, {app}: lazy replication, "
                  f"{size_text(app, 49)}, 100 ticks,\n", sub, f"tick-layers-{app}-virtual")


def plot_scaleup(plt, sub, app, out):
    """The scale-up figure from its runs SUB."""
    fig, (ax, axr) = plt.subplots(1, 2, figsize=(11, 4.4))
    ws = sorted({r["workers"] for r in sub})
    styles = {"cloud": "tab:red", "none": "tab:blue"}
    for prof in sorted({r["jitter"] for r in sub}):
        c = styles.get(prof, "tab:green")
        ratio = []
        for alg, line in (("local", "--"), ("combined", "-")):
            gs = [group(sub, alg=alg, workers=w, jitter=prof) for w in ws]
            ax.plot(ws, [median(g) for g in gs], marker="o", linestyle=line, color=c,
                    label=f"{alg}, --jitter {prof}")
            for w, g in zip(ws, gs):
                dots(ax, w, g, c)
            ratio.append([median(g) for g in gs])
        axr.plot(ws, [b / a for a, b in zip(*ratio)], marker="o", color=c,
                 label=f"combined / local, --jitter {prof}")
    if app == "fish":
        axr.plot([49], [2.5], marker="*", markersize=14, color="grey", linestyle="none",
                 label="paper: 2.5x at 49 x 800 fish (quoted)")
    axr.axhline(1.0, color="black", linewidth=0.6)
    for a in (ax, axr):
        a.set_xlabel("processes")
        a.set_xticks(ws)
    ax.set_ylabel("ticks per second (median of seeds; dots: each seed)")
    ax.set_ylim(bottom=0)
    axr.set_ylabel("combined / local (medians)")
    axr.set_ylim(0, max(axr.get_ylim()[1], 2.5) * 1.3)  # room for the legend above the lines
    ax.legend(fontsize=7)
    axr.legend(fontsize=7, loc="upper left")
    note(axr, PAPER["fig12 " + app], 0.45, 0.42)
    per = "800 fish, combined d=4 k=2 m=3" if app == "fish" else \
        "100x100 cells, combined d=8 k=8 m=14"
    return finish(plt, fig, out, f"scale-up, {app}: {per} per process, 100 ticks,\n", sub,
                  f"tick-scaleup-{app}-virtual")


def config_key(r):
    return (r["tag"], r["app"], r["workers"], r["jitter"], r["alg"], r["d"], r["k"], r["m"])


def write_table(runs, path):
    """Every configuration: ticks/s per seed, median, ratio to local's median."""
    configs = {}
    for r in runs:
        configs.setdefault(config_key(r), []).append(r)
    lines = ["# figure app processes jitter alg d k m | ticks/s per seed | median | "
             "/ local median | tuples stepped per tick (median) | runtime_cpu_fraction (median)"]
    for key in sorted(configs):
        rs = sorted(configs[key], key=lambda r: r["seed"])
        ok = [r for r in rs if r["metrics"]]
        med = statistics.median(tps(r) for r in ok) if ok else float("nan")
        local = [tps(x) for x in runs if x["metrics"] and config_key(x)[:4] == key[:4]
                 and x["alg"] == "local"]
        ratio = med / statistics.median(local) if local else float("nan")
        tup = statistics.median(r["metrics"]["tuple_ticks"] / r["metrics"]["ticks"] for r in ok) \
            if ok else float("nan")
        rt = statistics.median(r["metrics"].get("runtime_cpu_fraction", float("nan"))
                               for r in ok) if ok else float("nan")
        seeds = " ".join(f"s{r['seed']}=" + (f"{tps(r):.1f}" if r["metrics"] else "FAILED")
                         for r in rs)
        tag, app, w, jit, alg, d, k, m = key
        what = {"sched": f"d={d}", "repl": f"k={k} m={m}",
                "combined": f"d={d} k={k} m={m}"}.get(alg, "")
        lines.append(f"{tag:5} {app:6} {w:3} {jit:10} {alg:8} {what:13} | {seeds:24} | "
                     f"{med:7.1f} | {ratio:5.2f} | {tup:8.0f} | {rt:.4f}")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", action="append", required=True,
                    help="an OUT_DIR of bench/bench_tick_matrix.sh (repeatable)")
    ap.add_argument("--out", default="docs/figures", help="directory for the PNGs")
    ap.add_argument("--table", help="write the numbers behind the figures here")
    args = ap.parse_args()
    runs = load(args.runs)
    if not runs:
        print("plot_tick_paper.py: no runs in " + ", ".join(args.runs), file=sys.stderr)
        return 1
    if args.table:
        write_table(runs, args.table)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"plot_tick_paper.py: matplotlib is not importable by {sys.executable}",
              file=sys.stderr)
        return NO_MATPLOTLIB
    os.makedirs(args.out, exist_ok=True)
    for app in ("fish", "jacobi"):
        for fn, tag, alg in ((plot_depth, "fig6", "sched"), (plot_layers, "fig8", "repl"),
                             (plot_scaleup, "fig12", "combined")):
            sub = figure_runs(runs, tag, app, alg)
            if sub is not None:
                print(f"  wrote {fn(plt, sub, app, args.out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
