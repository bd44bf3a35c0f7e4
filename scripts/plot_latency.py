#!/usr/bin/env python3
"""plot_latency.py — the round-trip-time histogram of `tessera bench latency`.

Draws the CSV that `tessera bench latency --histogram FILE.csv` writes (log
bins, ten a decade) as the SoCC 2011 paper's Figure 1: the share of messages
per RTT bin on a log RTT axis, so the spikes of a shared network show as a
long right tail.

  /usr/bin/python3 scripts/plot_latency.py FILE.csv OUT.png [--title TEXT]

(Debian's python3 has matplotlib: scripts/deps.sh plot.)
"""
import argparse
import csv
import sys


def read_bins(path):
    """[(low, high, count)] from the bench's CSV; exits with a one-line error."""
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
        return [(float(r["rtt_us_low"]), float(r["rtt_us_high"]), int(r["count"])) for r in rows]
    except (OSError, KeyError, ValueError) as e:
        sys.exit(f"plot_latency.py: {path}: not a bench latency histogram ({e})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv")
    ap.add_argument("out")
    ap.add_argument("--title", default="round-trip times (tessera bench latency)")
    args = ap.parse_args()
    bins = read_bins(args.csv)
    total = sum(c for _, _, c in bins)
    if total == 0:
        sys.exit(f"plot_latency.py: {args.csv}: no samples")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.bar([lo for lo, _, _ in bins], [c / total for _, _, c in bins],
           width=[hi - lo for lo, hi, _ in bins], align="edge", edgecolor="black")
    ax.set_xscale("log")
    ax.set_xlabel("round-trip time (µs)")
    ax.set_ylabel("share of messages")
    ax.set_title(args.title)
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)


if __name__ == "__main__":
    main()
