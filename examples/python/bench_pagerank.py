#!/usr/bin/env python3
"""bench_pagerank.py -- Python PageRank (examples/python/pagerank.py, bulk NumPy
operations) against `tessera run pagerank` on the same graph; prints the ratio
of their iteration times (C time / Python time: 1.0 means as fast, the goal is
>= 0.5) and checks that their ranks agree within 1e-9 relative.

    PYTHONPATH=build/python python3 examples/python/bench_pagerank.py \\
        --tessera build/tessera --gen rmat:18 --iterations 20 --repeat 3

Each side runs --repeat times, interleaved (C, then Python, in each round);
it prints the ratio of the two fastest runs and the median of the rounds'
ratios (the machine may be shared: a round's two runs see about the same
load).  --kernel picks pagerank.py's kernel (pull, the default, or push).  Times exclude loading the graph: tessera's are the
sum of its metrics' iteration_seconds, Python's the control loop (PR_0 and the
iterations).
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def run_c(tessera, graph, iterations, workers, out, tmp):
    metrics = os.path.join(tmp, "metrics.json")
    cmd = [tessera, "run", "pagerank", "--graph", graph, "--iterations", str(iterations),
           "--metrics", metrics, "--output", out]
    if workers:
        cmd += ["--workers", str(workers)]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(metrics) as f:
        return sum(json.load(f)["iteration_seconds"])


def run_py(graph, iterations, workers, partitions, out, kernel):
    cmd = [sys.executable, os.path.join(HERE, "pagerank.py"), "--graph", graph, "--iterations",
           str(iterations), "--workers", str(workers), "--partitions", str(partitions),
           "--mode", "embedded", "--output", out, "--kernel", kernel]
    r = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return float(re.search(r"iterations in ([0-9.]+) s", r.stderr).group(1))


def ranks(path):
    return np.loadtxt(path, usecols=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tessera", default="build/tessera")
    ap.add_argument("--gen", default="rmat:18", help="generator spec (tessera gen)")
    ap.add_argument("--graph", help="a graph file instead of --gen")
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--workers", type=int, default=0)
    ap.add_argument("--partitions", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--kernel", default="pull", choices=["pull", "push"])
    opt = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        graph = opt.graph
        if graph is None:
            graph = os.path.join(tmp, "graph.bin")
            subprocess.run([opt.tessera, "gen", opt.gen, graph, "--cache"], check=True)
        c_out, py_out = os.path.join(tmp, "c.tsv"), os.path.join(tmp, "py.tsv")
        c_times, py_times = [], []
        for _ in range(opt.repeat):
            c_times.append(run_c(opt.tessera, graph, opt.iterations, opt.workers, c_out, tmp))
            py_times.append(run_py(graph, opt.iterations, opt.workers, opt.partitions, py_out,
                                   opt.kernel))
        a, b = ranks(c_out), ranks(py_out)
        err = float(np.max(np.abs(a - b) / np.abs(a)))
    c, py = min(c_times), min(py_times)
    print(f"graph {opt.graph or opt.gen}, {opt.iterations} iterations, {opt.repeat} rounds, "
          f"pagerank.py --kernel {opt.kernel}")
    print(f"tessera run pagerank: {c:.3f} s   (runs: {', '.join(f'{t:.3f}' for t in c_times)})")
    print(f"python pagerank.py:   {py:.3f} s   (runs: {', '.join(f'{t:.3f}' for t in py_times)})")
    rounds = np.array(c_times) / np.array(py_times)
    print(f"ratio (C time / Python time): best runs {c / py:.2f}x, median of rounds "
          f"{float(np.median(rounds)):.2f}x   max relative difference {err:.1e}")
    return 0 if err <= 1e-9 else 1


if __name__ == "__main__":
    sys.exit(main())
