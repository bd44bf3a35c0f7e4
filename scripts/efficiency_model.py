#!/usr/bin/env python3
"""efficiency_model.py — Piccolo's Figure 13 for tessera: the expected efficiency of a
checkpointed job on a large cluster, from measured checkpoint and restore rates.

A first-order model (after Young and Daly): n machines, each failing at random with mean
time between failures M; the job fails with mean time M/n, then restarts from its last
checkpoint. A checkpoint every tau seconds costs C seconds of the job's time; a restart
costs R seconds plus, on average, the work since the last checkpoint, (tau + C) / 2. The
fraction of useful time is

    E(tau) = tau / (tau + C) * (1 - (R + (tau + C) / 2) / (M / n))

and the best interval is found numerically for each n. C and R come from the state per
machine and measured rates:

    synchronous   C = state / write rate      (the job stops while the checkpoint is written)
    tessera       C = state / cut rate + i * state / write rate
                                              (workers wait only for the in-memory copy; the
                                               compression and writing run beside them and
                                               slow them by the fraction i meanwhile)
    R = state / restore rate

The rates default to `tessera bench ckpt` on this machine (docs/results/bench-ckpt-*.txt:
PageRank, 36.3 MB per checkpoint written in 0.6 s, cut 0.02-0.13 s; restore 206-238 MB/s;
about 2% more time per iteration with a checkpoint every 5 iterations of 0.25 s, the writer
busy about half of that time: i = 0.04).

  /usr/bin/python3 scripts/efficiency_model.py [--state-gb 4] [--mtbf-years 1] [--png FILE]
"""
import argparse
import math


def best_efficiency(n, mtbf, c, r):
    """max over tau of E(tau), and the tau that gives it (seconds)."""
    ms = mtbf / n
    best, best_tau = 0.0, float("nan")
    tau = max(c, 1.0)
    while tau < 100 * ms + 10:
        e = tau / (tau + c) * (1.0 - (r + (tau + c) / 2.0) / ms)
        if e > best:
            best, best_tau = e, tau
        tau *= 1.05
    return max(best, 0.0), best_tau


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--state-gb", type=float, default=4.0, help="checkpointed state per machine, GB")
    ap.add_argument("--mtbf-years", type=float, default=1.0, help="mean time between failures of one machine")
    ap.add_argument("--write-mbps", type=float, default=60.0, help="checkpoint write rate, MB/s")
    ap.add_argument("--cut-mbps", type=float, default=400.0, help="rate of the in-memory cut, MB/s")
    ap.add_argument("--restore-mbps", type=float, default=210.0, help="restore rate, MB/s")
    ap.add_argument("--interference", type=float, default=0.04,
                    help="fraction of the job's time the background writer takes while it writes")
    ap.add_argument("--png", help="write the figure here (needs matplotlib)")
    args = ap.parse_args()
    mb = args.state_gb * 1000.0
    mtbf = args.mtbf_years * 365.25 * 86400.0
    r = mb / args.restore_mbps
    write = mb / args.write_mbps
    models = [("synchronous", write), ("tessera", mb / args.cut_mbps + args.interference * write)]
    sizes = [1, 10, 100, 1000, 3000, 10000, 30000, 100000]
    print("state %.1f GB per machine, machine MTBF %.2f years, restore %.0f s" %
          (args.state_gb, args.mtbf_years, r))
    for name, c in models:
        print("%-12s a checkpoint costs the job %.1f s" % (name, c))
    print("%10s %22s %22s" % ("machines", "synchronous E (tau)", "tessera E (tau)"))
    for n in sizes:
        row = []
        for _, c in models:
            e, tau = best_efficiency(n, mtbf, c, r)
            row.append("%5.1f%% (%7.0f s)" % (100 * e, tau))
        print("%10d %22s %22s" % (n, row[0], row[1]))
    if args.png:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        xs = [int(10 ** (k / 8.0)) for k in range(0, 41)]
        fig, ax = plt.subplots(figsize=(6, 4))
        for name, c in models:
            ax.plot(xs, [100 * best_efficiency(n, mtbf, c, r)[0] for n in xs],
                    label="%s (C = %.0f s)" % (name, c))
        ax.set_xscale("log")
        ax.set_ylim(0, 100)
        ax.set_xlabel("machines")
        ax.set_ylabel("expected efficiency, % (best checkpoint interval)")
        ax.set_title("Figure 13 model: %.0f GB per machine, MTBF %.1f years, restore %.0f s" %
                     (args.state_gb, args.mtbf_years, r), fontsize=9)
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(args.png, dpi=110)
        print(args.png)


if __name__ == "__main__":
    main()
