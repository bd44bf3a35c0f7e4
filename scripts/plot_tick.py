#!/usr/bin/env python3
"""plot_tick.py — figures of `tessera bench tick` from its JSON Lines file.

In the style of Figures 6-13 of "Making Time-stepped Applications Tick in the
Cloud" (SoCC 2011):

  tick-<app>-w<W>-<real|emulated>.png
      one per configuration: ticks/s of every technique with and without
      jitter (mean, error bars one sample standard deviation over the rounds),
      and beside it the efficiency (with jitter / without) of each technique;
  tick-scaleup-<app>.png
      the scale-up curve (Figure 13): ticks/s against workers for local and
      combined, with and without jitter, for configurations that differ only
      in the worker count (at least three counts).

Reading rules (the same as the bench's resume): only lines with
"bench": "tick"; a line {"config": K, "reset": true} forgets the earlier
measurements of configuration K; a later measurement of the same
(configuration, technique, round, jitter) replaces an earlier one; lines that
do not parse (a run cut short) are skipped.

usage: plot_tick.py --json FILE [--out DIR] [--rounds R]
Exits 3 when matplotlib is missing (install: bash scripts/deps.sh plot).
"""
import argparse
import hashlib
import json
import math
import os
import sys

TECHNIQUES = ["local", "sched", "repl", "combined", "bsp"]
NO_MATPLOTLIB = 3


def load(path, max_rounds=None):
    """{config: {(technique, round, with_jitter): record}} by the reading rules."""
    configs = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if not isinstance(rec, dict) or rec.get("bench") != "tick" or "config" not in rec:
                continue
            key = rec["config"]
            if rec.get("reset"):
                configs.pop(key, None)
                continue
            if rec.get("technique") not in TECHNIQUES or rec.get("ticks_per_second") is None:
                continue
            if max_rounds is not None and rec.get("round", 0) >= max_rounds:
                continue
            slot = (rec["technique"], rec["round"], bool(rec["with_jitter"]))
            configs.setdefault(key, {})[slot] = rec
    return configs


def mean_sd(values):
    if not values:
        return math.nan, math.nan
    m = sum(values) / len(values)
    if len(values) < 2:
        return m, 0.0
    return m, math.sqrt(sum((v - m) ** 2 for v in values) / (len(values) - 1))


def figures(measurements, technique, with_jitter):
    return [r["ticks_per_second"] for (t, _, j), r in measurements.items()
            if t == technique and j == with_jitter]


def describe(rec):
    """Title text for a configuration, from one of its records."""
    if rec["app"] == "jacobi":
        size = f"{rec['rows']}x{rec['cols']} cells ({rec['side']}x{rec['side']}/worker)"
    else:
        size = f"{rec['fish']} fish ({rec['fish'] // rec['workers']}/worker)"
    cost = (f", EMULATED step cost {rec['step_cost_us']:g} us/tick"
            if rec.get("step_cost_us") else ", real compute")
    ranks = f" in {rec['ranks']} ranks" if rec.get("ranks", 1) > 1 else ""
    return (f"{rec['app']}: {rec['workers']} workers{ranks}, {size}, {rec['ticks']} ticks"
            f"{cost}, jitter {rec['profile']}")


def tech_label(rec, t):
    if t == "sched":
        return f"sched\nd={rec['d']}"
    if t == "repl":
        return f"repl\nk={rec['k']} m={rec['m']}"
    if t == "combined":
        return f"combined\nd={rec['d']} k={rec['k']} m={rec['m']}"
    return t


def unique_name(base, config, used):
    name = base
    if name in used:
        name = f"{base}-{hashlib.sha1(config.encode()).hexdigest()[:8]}"
    used.add(name)
    return name


def plot_config(plt, config, measurements, out_dir, used):
    first = next(iter(measurements.values()))
    present = [t for t in TECHNIQUES if any(k[0] == t for k in measurements)]
    stats = {(t, j): mean_sd(figures(measurements, t, j)) for t in present for j in (True, False)}
    rounds = len({k[1] for k in measurements})
    fig, (ax, ax_eff) = plt.subplots(1, 2, figsize=(11, 4.2),
                                     gridspec_kw={"width_ratios": [3, 2]})
    x = range(len(present))
    width = 0.38
    for offset, with_jitter, label, color in ((-width / 2, True, f"jitter {first['profile']}",
                                               "tab:red"),
                                              (width / 2, False, "no jitter", "tab:blue")):
        means = [stats[(t, with_jitter)][0] for t in present]
        sds = [stats[(t, with_jitter)][1] for t in present]
        ax.bar([i + offset for i in x], means, width, yerr=sds, capsize=3, label=label,
               color=color, alpha=0.8)
    ax.set_xticks(list(x))
    ax.set_xticklabels([tech_label(first, t) for t in present], fontsize=8)
    ax.set_ylabel("ticks per second")
    ax.set_title(f"throughput (mean ± sd over {rounds} round{'s' if rounds != 1 else ''})", fontsize=10)
    top = max((m + s for m, s in stats.values() if not math.isnan(m)), default=1.0)
    ax.set_ylim(0, top * 1.18)
    ax.legend(fontsize=8, loc="upper center", ncol=2)
    eff = [stats[(t, True)][0] / stats[(t, False)][0] for t in present]
    ax_eff.bar(list(x), eff, 0.6, color="tab:green", alpha=0.8)
    ax_eff.axhline(1.0, color="grey", linewidth=0.8, linestyle="--")
    ax_eff.set_xticks(list(x))
    ax_eff.set_xticklabels([tech_label(first, t) for t in present], fontsize=8)
    ax_eff.set_ylim(0, max(1.05, max((e for e in eff if not math.isnan(e)), default=1) * 1.1))
    ax_eff.set_ylabel("efficiency (with jitter / without)")
    ax_eff.set_title("efficiency", fontsize=10)
    fig.suptitle(describe(first), fontsize=10)
    fig.tight_layout()
    kind = "emulated" if first.get("step_cost_us") else "real"
    ranks = f"-np{first['ranks']}" if first.get("ranks", 1) > 1 else ""
    name = unique_name(f"tick-{first['app']}-w{first['workers']}{ranks}-{kind}", config, used)
    path = os.path.join(out_dir, name + ".png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def scaleup_groups(configs):
    """Configurations equal in everything but the worker count (and the size
    that follows from it), with local and combined measured."""
    groups = {}
    for config, measurements in configs.items():
        rec = next(iter(measurements.values()))
        techs = {k[0] for k in measurements}
        if not {"local", "combined"} <= techs:
            continue
        per_worker = rec.get("side") if rec["app"] == "jacobi" else rec["fish"] // rec["workers"]
        key = (rec["app"], per_worker, rec["ticks"], rec.get("step_cost_us"), rec["profile"],
               rec.get("ranks", 1), rec["d"], rec["k"], rec["m"], rec.get("repart_every"))
        groups.setdefault(key, {})[rec["workers"]] = (rec, measurements)
    return {k: v for k, v in groups.items() if len(v) >= 3}


def plot_scaleup(plt, group, out_dir, used):
    workers = sorted(group)
    first = group[workers[0]][0]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    styles = {("local", True): ("tab:red", "o", "--"), ("local", False): ("tab:blue", "o", "--"),
              ("combined", True): ("tab:red", "s", "-"),
              ("combined", False): ("tab:blue", "s", "-")}
    for (t, j), (color, marker, line) in styles.items():
        ms = [mean_sd(figures(group[w][1], t, j)) for w in workers]
        label = f"{t}, {'jitter ' + first['profile'] if j else 'no jitter'}"
        ax.errorbar(workers, [m for m, _ in ms], yerr=[s for _, s in ms], color=color,
                    marker=marker, linestyle=line, capsize=3, label=label)
    if first.get("step_cost_us"):
        ax.axhline(1e6 / first["step_cost_us"], color="grey", linewidth=0.8, linestyle=":",
                   label="1 / step cost")
    ax.set_xlabel("workers (tick processes)")
    ax.set_ylabel("ticks per second")
    ax.set_ylim(bottom=0)
    ax.set_xticks(workers)
    ax.legend(fontsize=8)
    per_worker = (f"{first['side']}x{first['side']} cells" if first["app"] == "jacobi"
                  else f"{first['fish'] // first['workers']} fish")
    cost = (f"EMULATED step cost {first['step_cost_us']:g} us/tick" if first.get("step_cost_us")
            else "real compute")
    ax.set_title(f"scale-up, {first['app']}: {per_worker} per worker, {first['ticks']} ticks, "
                 f"{cost}", fontsize=9)
    fig.tight_layout()
    name = unique_name(f"tick-scaleup-{first['app']}", repr(sorted(group)), used)
    path = os.path.join(out_dir, name + ".png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", required=True, help="the bench's JSON Lines file")
    ap.add_argument("--out", default="docs/figures", help="directory for the PNGs")
    ap.add_argument("--rounds", type=int, default=None, help="use only rounds < R")
    args = ap.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"plot_tick.py: matplotlib is not importable by {sys.executable}; "
              "install it with `bash scripts/deps.sh plot`", file=sys.stderr)
        return NO_MATPLOTLIB
    try:
        configs = load(args.json, args.rounds)
    except OSError as e:
        print(f"plot_tick.py: cannot read {args.json}: {e.strerror}", file=sys.stderr)
        return 1
    if not configs:
        print(f"plot_tick.py: no tick measurements in {args.json}", file=sys.stderr)
        return 1
    os.makedirs(args.out, exist_ok=True)
    used = set()
    written = [plot_config(plt, c, m, args.out, used) for c, m in sorted(configs.items())]
    written += [plot_scaleup(plt, g, args.out, used)
                for _, g in sorted(scaleup_groups(configs).items(), key=lambda kv: repr(kv[0]))]
    for path in written:
        print(f"  wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
