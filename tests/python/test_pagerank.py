"""examples/python/pagerank.py against an independent NumPy PageRank (1e-9 relative),
embedded (both kernels) and under mpirun -np 2, and against `tessera run pagerank` (the
pull kernel: the same bits; push: 1e-9 relative)."""

import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from conftest import EXAMPLES, read_ranks, reference_pagerank, run_python

PAGERANK = os.path.join(EXAMPLES, "pagerank.py")


def check(out, ids, src, dst, iterations):
    got_ids, got = read_ranks(out)
    want = reference_pagerank(len(ids), src, dst, iterations)
    assert np.array_equal(got_ids, ids)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=0)


@pytest.mark.parametrize("kernel", ["pull", "push"])
def test_pagerank_embedded(small_graph, tmp_path, kernel):
    path, ids, src, dst = small_graph
    out = tmp_path / "ranks.tsv"
    r = run_python([PAGERANK, "--graph", path, "--iterations", "15", "--output", str(out),
                    "--workers", "2", "--partitions", "5", "--mode", "embedded", "--kernel",
                    kernel])
    assert r.returncode == 0, r.stderr
    check(out, ids, src, dst, 15)


def mpi_usable():
    return os.environ.get("TESS_HAVE_MPI") == "1" and shutil.which("mpirun") is not None


@pytest.mark.skipif(not mpi_usable(), reason="no MPI in this build or no mpirun")
def test_pagerank_mpi(small_graph, tmp_path):
    path, ids, src, dst = small_graph
    out = tmp_path / "ranks.tsv"
    cmd = ["mpirun", "-np", "2", "--oversubscribe", "--bind-to", "none", sys.executable, PAGERANK, "--graph", path,
           "--iterations", "10", "--output", str(out), "--workers", "1", "--partitions", "4",
           "--mode", "mpi"]
    env = dict(os.environ)
    for var, value in (("OMPI_ALLOW_RUN_AS_ROOT", "1"), ("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"),
                       ("OMPI_MCA_btl_vader_single_copy_mechanism", "none")):
        env.setdefault(var, value)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=90, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "on 2 rank(s)" in r.stderr
    check(out, ids, src, dst, 10)


@pytest.mark.skipif(not os.access(os.environ.get("TESSERA", "/nonexistent"), os.X_OK),
                    reason="no tessera command built")
@pytest.mark.parametrize("kernel", ["pull", "push"])
def test_pagerank_matches_tessera_run(small_graph, tmp_path, kernel):
    path, ids, src, dst = small_graph
    mine, theirs = tmp_path / "py.tsv", tmp_path / "c.tsv"
    r = run_python([PAGERANK, "--graph", path, "--iterations", "12", "--output", str(mine),
                    "--workers", "2", "--mode", "embedded", "--kernel", kernel])
    assert r.returncode == 0, r.stderr
    c = subprocess.run([os.environ["TESSERA"], "run", "pagerank", "--graph", path,
                        "--iterations", "12", "--output", str(theirs)],
                       capture_output=True, text=True, timeout=60)
    assert c.returncode == 0, c.stderr
    if kernel == "pull":  # the same sums in the same order: the same output bytes
        assert mine.read_text() == theirs.read_text()
    a_ids, a = read_ranks(mine)
    b_ids, b = read_ranks(theirs)
    assert np.array_equal(a_ids, b_ids)
    np.testing.assert_allclose(a, b, rtol=1e-9, atol=0)
