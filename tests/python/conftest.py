"""Shared helpers for the Python module's tests (tests/python): the paths of the
build and the examples, a small generated graph and an independent PageRank."""

import os
import subprocess
import sys

import numpy as np
import pytest

SOURCE = os.environ.get("TESS_SOURCE_DIR",
                        os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
EXAMPLES = os.path.join(SOURCE, "examples", "python")


def run_python(code_or_args, timeout=60, **kw):
    """Run python3 (this interpreter) with PYTHONPATH as ours; returns the CompletedProcess."""
    args = code_or_args if isinstance(code_or_args, list) else ["-c", code_or_args]
    return subprocess.run([sys.executable, *args], capture_output=True, text=True,
                          timeout=timeout, env=dict(os.environ), **kw)


def reference_pagerank(n, src, dst, iterations, d=0.85):
    """Power iteration with NumPy alone, the update tessera run pagerank makes."""
    outdeg = np.bincount(src, minlength=n).astype(float)
    pr = np.full(n, 1.0 / n)
    for _ in range(iterations):
        share = np.divide(pr, outdeg, out=np.zeros(n), where=outdeg > 0)
        spread = pr[outdeg == 0].sum() / n
        pr = (1 - d) / n + d * (np.bincount(dst, weights=share[src], minlength=n) + spread)
    return pr


@pytest.fixture
def small_graph(tmp_path):
    """A random graph with sparse ids, dangling vertices, duplicates and self-loops,
    as a SNAP file; returns (path, ids, src, dst) with internal indices."""
    rng = np.random.default_rng(41)
    n, m = 300, 2000
    ids = np.sort(rng.choice(10**9, n, replace=False)).astype(np.uint64)
    src = rng.integers(0, n - 20, m)  # the last 20 vertices have no out-edges
    dst = rng.integers(0, n, m)
    used = np.unique(np.concatenate([src, dst]))
    remap = np.full(n, -1)
    remap[used] = np.arange(len(used))
    ids, src, dst = ids[used], remap[src], remap[dst]
    path = tmp_path / "graph.txt"
    with open(path, "w") as f:
        f.write("# a test graph\n")
        f.writelines(f"{ids[s]}\t{ids[t]}\n" for s, t in zip(src, dst))
    return str(path), ids, src, dst


def read_ranks(path):
    data = np.loadtxt(path, dtype=str, ndmin=2)
    return data[:, 0].astype(np.uint64), data[:, 1].astype(float)
