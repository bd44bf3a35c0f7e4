#!/usr/bin/env python3
"""plot_tick.py — figures of `tessera bench tick` from its JSON Lines file.

In the style of Figures 6-13 of "Making Time-stepped Applications Tick in the
Cloud" (SoCC 2011):

  tick-<app>-w<W>-<real|emulated|virtual>.png
      one per configuration: ticks/s of every technique with and without
      jitter (mean, error bars one sample standard deviation over the rounds),
      and beside it the efficiency (with jitter / without) of each technique;
  tick-scaleup-<app>[-virtual].png
      the scale-up curve (Figure 13): ticks/s against workers for local and
      combined, with and without jitter, for configurations that differ only
      in the worker count (at least three counts);
  tick-rounds-<app>-w<W>-<real|emulated|virtual>.png
      the variance plot (Figure 5), for configurations with at least five
      rounds: the raw time of every run (its ticks, `tick_seconds`) against
      the round, per technique, with jitter (solid) and without (dotted);
  tick-layers-<app>.png
      replication (Figures 8-10): ticks/s of repl against the layers m, one
      line per period k, with and without jitter, for configurations that
      measured repl alone and differ only in k and m (`--regime layers`);
  tick-depth-<app>.png
      dependency scheduling (Figures 6-7): ticks/s of sched against the depth
      d, with and without jitter (`--regime depth`).

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
import textwrap

TECHNIQUES = ["local", "sched", "repl", "combined", "bsp", "auto"]
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


def save(plt, fig, out_dir, name):
    """Write fig as OUT_DIR/NAME.png and close it; the path."""
    fig.tight_layout()
    path = os.path.join(out_dir, name + ".png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def mean_sd(values):
    if not values:
        return math.nan, math.nan
    m = sum(values) / len(values)
    if len(values) < 2:
        return m, 0.0
    return m, math.sqrt(sum((v - m) ** 2 for v in values) / (len(values) - 1))


def figures(measurements, technique, with_jitter, key="ticks_per_second"):
    return [r[key] for (t, _, j), r in measurements.items()
            if t == technique and j == with_jitter and key in r]


def kind_of(rec):
    """real compute, EMULATED (sleeping workers) or VIRTUAL (simulated time)."""
    if rec.get("clock") == "virtual":
        return "virtual"
    return "emulated" if rec.get("step_cost_us") else "real"


def cost_text(rec):
    kind = kind_of(rec)
    if kind == "real":
        return "real compute"
    what = "on the VIRTUAL clock (simulated time)" if kind == "virtual" else "EMULATED"
    return f"step cost {rec['step_cost_us']:g} us/tick {what}"


def describe(rec):
    """Title text for a configuration, from one of its records."""
    if rec["app"] == "jacobi":
        size = f"{rec['rows']}x{rec['cols']} cells ({rec['side']}x{rec['side']}/worker)"
    elif rec["app"] == "pagerank-tick":
        size = f"web graph, {rec['pages']} pages, {rec.get('edges', 0):.0f} edges"
    else:
        size = f"{rec['fish']} fish ({rec['fish'] // rec['workers']}/worker)"
    cost = ", " + cost_text(rec)
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
    kind = kind_of(first)
    ranks = f"-np{first['ranks']}" if first.get("ranks", 1) > 1 else ""
    name = unique_name(f"tick-{first['app']}-w{first['workers']}{ranks}-{kind}", config, used)
    return save(plt, fig, out_dir, name)


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
               rec.get("ranks", 1), rec["d"], rec["k"], rec["m"], rec.get("repart_every"),
               kind_of(rec))
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
    cost = cost_text(first)
    ax.set_title(textwrap.fill(f"scale-up, {first['app']}: {per_worker} per worker, "
                               f"{first['ticks']} ticks, {cost}", 80), fontsize=9)
    suffix = "-virtual" if kind_of(first) == "virtual" else ""
    name = unique_name(f"tick-scaleup-{first['app']}{suffix}", repr(sorted(group)), used)
    return save(plt, fig, out_dir, name)


def plot_rounds(plt, config, measurements, out_dir, used):
    """Figure 5: the raw time of each run, round by round (None if < 5 rounds)."""
    rounds = sorted({k[1] for k in measurements})
    if len(rounds) < 5:
        return None
    first = next(iter(measurements.values()))
    fig, ax = plt.subplots(figsize=(9.5, 4.5))
    colors = dict(zip(TECHNIQUES, ["tab:blue", "tab:orange", "tab:green", "tab:red",
                                   "tab:purple", "tab:brown"]))
    for t in TECHNIQUES:
        for j, line in ((True, "-"), (False, ":")):
            pts = sorted((r, measurements[(t, r, j)].get("tick_seconds")
                          or measurements[(t, r, j)]["wall_seconds"])
                         for r in rounds if (t, r, j) in measurements)
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], color=colors[t], marker=".",
                        linestyle=line, label=f"{t}{'' if j else ', no jitter'}")
    ax.set_xlabel("round (techniques alternate within a round)")
    ax.set_ylabel(f"seconds for {first['ticks']} ticks")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.set_title(textwrap.fill("raw time per run: " + describe(first), 100), fontsize=8)
    kind = kind_of(first)
    name = unique_name(f"tick-rounds-{first['app']}-w{first['workers']}-{kind}", config, used)
    return save(plt, fig, out_dir, name)


def sweep_groups(configs, technique, varying):
    """Configurations that measured `technique` alone, equal in everything but
    the parameters `varying` (("k", "m") or ("d",)): {group: {values: ...}}."""
    groups = {}
    for config, measurements in configs.items():
        rec = next(iter(measurements.values()))
        if {k[0] for k in measurements} != {technique}:
            continue
        key = (rec["app"], rec["workers"], rec.get("side"), rec.get("fish"), rec.get("pages"),
               rec["ticks"],
               rec.get("step_cost_us"), rec["profile"], rec.get("ranks", 1))
        groups.setdefault(key, {})[tuple(rec[v] for v in varying)] = (rec, measurements)
    return {k: v for k, v in groups.items() if len(v) >= 3}


def layers_groups(configs):
    return sweep_groups(configs, "repl", ("k", "m"))


def plot_depth(plt, group, out_dir, used):
    first = next(iter(group.values()))[0]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ds = sorted(group)
    # PageRank's throughput as the paper counts it: edges processed per second.
    edges = first["app"] == "pagerank-tick"
    key = "edge_ticks_per_second" if edges else "ticks_per_second"
    for j, color in ((True, "tab:red"), (False, "tab:blue")):
        stats = [mean_sd(figures(group[d][1], "sched", j, key)) for d in ds]
        ax.errorbar([d[0] for d in ds], [s[0] for s in stats], yerr=[s[1] for s in stats],
                    color=color, marker="o", capsize=3,
                    label=f"sched, {'jitter ' + first['profile'] if j else 'no jitter'}")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("scheduling depth d")
    ax.set_ylabel("edge-ticks per second" if edges else "ticks per second")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8)
    ax.set_title("dependency scheduling: " + describe(first), fontsize=8)
    name = unique_name(f"tick-depth-{first['app']}", repr(sorted(group)), used)
    return save(plt, fig, out_dir, name)


def plot_layers(plt, group, out_dir, used):
    first = next(iter(group.values()))[0]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    colors = ["tab:red", "tab:blue", "tab:green", "tab:purple", "tab:orange"]
    for i, k in enumerate(sorted({k for k, _ in group})):
        ms = sorted(m for kk, m in group if kk == k)
        for j, line in ((True, "-"), (False, ":")):
            stats = [mean_sd(figures(group[(k, m)][1], "repl", j)) for m in ms]
            label = f"k={k}, {'jitter ' + first['profile'] if j else 'no jitter'}"
            ax.errorbar(ms, [s[0] for s in stats], yerr=[s[1] for s in stats],
                        color=colors[i % len(colors)], marker="o", linestyle=line, capsize=3,
                        label=label)
    ax.set_xlabel("replica layers m (width m+1 at a received round)")
    ax.set_ylabel("ticks per second")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8)
    size = (f"{first['rows']}x{first['cols']} cells" if first["app"] == "jacobi"
            else f"{first['fish']} fish")
    ax.set_title(f"replication, {first['app']}: {size}, {first['workers']} workers, "
                 f"{first['ticks']} ticks, real compute", fontsize=9)
    name = unique_name(f"tick-layers-{first['app']}", repr(sorted(group)), used)
    return save(plt, fig, out_dir, name)


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
    layers = layers_groups(configs)
    depth = sweep_groups(configs, "sched", ("d",))
    in_layers = {id(m) for g in list(layers.values()) + list(depth.values())
                 for _, m in g.values()}
    written = [plot_config(plt, c, m, args.out, used) for c, m in sorted(configs.items())
               if id(m) not in in_layers]
    written += [plot_scaleup(plt, g, args.out, used)
                for _, g in sorted(scaleup_groups(configs).items(), key=lambda kv: repr(kv[0]))]
    written += [p for p in (plot_rounds(plt, c, m, args.out, used)
                            for c, m in sorted(configs.items()) if id(m) not in in_layers) if p]
    written += [plot_layers(plt, g, args.out, used)
                for _, g in sorted(layers.items(), key=lambda kv: repr(kv[0]))]
    written += [plot_depth(plt, g, args.out, used)
                for _, g in sorted(depth.items(), key=lambda kv: repr(kv[0]))]
    for path in written:
        print(f"  wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
