"""examples/python/kmeans.py against an independent NumPy Lloyd's k-means from the same
initial centres (within 1e-9 relative per coordinate, identical assignments), and
against `tessera run kmeans` with the same partition count (identical output bytes),
embedded and under mpirun -np 2."""

import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from conftest import EXAMPLES, run_python

KMEANS = os.path.join(EXAMPLES, "kmeans.py")
TESSERA = os.environ.get("TESSERA", "/nonexistent")


def reference_kmeans(x, k, iterations):
    """Lloyd's iterations with NumPy alone: the first k points as centres, nearest by
    squared distance (ties to the lowest index), a centre without points stays."""
    centres = x[:k].copy()
    for _ in range(iterations):
        dist = ((x[:, None, :] - centres[None, :, :]) ** 2).sum(axis=2)
        chosen = dist.argmin(axis=1)
        for j in range(k):
            if np.any(chosen == j):
                centres[j] = x[chosen == j].mean(axis=0)
    return centres, chosen


@pytest.fixture
def points(tmp_path):
    """1500 points in 4 dimensions around 7 centres, as a points file."""
    rng = np.random.default_rng(41)
    true = rng.random((7, 4)) * 100
    x = true[rng.integers(0, 7, 1500)] + rng.normal(0, 6, (1500, 4))
    path = tmp_path / "points.txt"
    with open(path, "w") as f:
        f.write("# test points\n")
        f.writelines(" ".join("%.17g" % v for v in row) + "\n" for row in x.tolist())
    return str(path), x


def run_kmeans(path, out, assign, *extra):
    r = run_python([KMEANS, "--points", path, "--k", "7", "--iterations", "6", "--output",
                    str(out), "--assignments", str(assign), "--quiet", *extra])
    assert r.returncode == 0, r.stderr


def test_kmeans_against_numpy(points, tmp_path):
    path, x = points
    out, assign = tmp_path / "centres.txt", tmp_path / "assign.txt"
    run_kmeans(path, out, assign, "--workers", "2", "--partitions", "5", "--mode", "embedded")
    want, want_assign = reference_kmeans(x, 7, 6)
    got = np.loadtxt(out, ndmin=2)
    assert got.shape == (7, 4)
    assert np.all(np.abs(got - want) <= 1e-9 * np.maximum(1, np.abs(want)))
    np.testing.assert_array_equal(np.loadtxt(assign, dtype=np.int64), want_assign)


@pytest.mark.skipif(not os.access(TESSERA, os.X_OK), reason="no tessera command built")
def test_kmeans_matches_tessera_run(points, tmp_path):
    path, _ = points
    run_kmeans(path, tmp_path / "py.txt", tmp_path / "pya.txt", "--workers", "2",
               "--partitions", "3", "--mode", "embedded")
    c = subprocess.run([TESSERA, "run", "kmeans", "--points", path, "--k", "7", "--iterations",
                        "6", "--partitions", "3", "--output", str(tmp_path / "c.txt"),
                        "--assignments", str(tmp_path / "ca.txt"), "--quiet"],
                       capture_output=True, text=True, timeout=60)
    assert c.returncode == 0, c.stderr
    # The same sums in the same order: the same bits, printed the same way.
    assert (tmp_path / "py.txt").read_text() == (tmp_path / "c.txt").read_text()
    assert (tmp_path / "pya.txt").read_text() == (tmp_path / "ca.txt").read_text()


def mpi_usable():
    return os.environ.get("TESS_HAVE_MPI") == "1" and shutil.which("mpirun") is not None


@pytest.mark.skipif(not mpi_usable(), reason="no MPI in this build or no mpirun")
def test_kmeans_mpi(points, tmp_path):
    path, x = points
    out, assign = tmp_path / "centres.txt", tmp_path / "assign.txt"
    env = dict(os.environ)
    for var, value in (("OMPI_ALLOW_RUN_AS_ROOT", "1"), ("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"),
                       ("OMPI_MCA_btl_vader_single_copy_mechanism", "none")):
        env.setdefault(var, value)
    r = subprocess.run(["mpirun", "-np", "2", "--oversubscribe", "--bind-to", "none",
                        sys.executable, KMEANS, "--points", path, "--k", "7", "--iterations", "6",
                        "--output", str(out), "--assignments", str(assign), "--workers", "1",
                        "--partitions", "4", "--mode", "mpi"],
                       capture_output=True, text=True, timeout=90, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "on 2 rank(s)" in r.stderr
    want, want_assign = reference_kmeans(x, 7, 6)
    got = np.loadtxt(out, ndmin=2)
    assert np.all(np.abs(got - want) <= 1e-9 * np.maximum(1, np.abs(want)))
    np.testing.assert_array_equal(np.loadtxt(assign, dtype=np.int64), want_assign)


def test_kmeans_gen_refused(points):
    r = run_python([KMEANS, "--gen", "100:2:3", "--k", "3", "--iterations", "2"])
    assert r.returncode == 2
    assert "--gen is not supported by kmeans.py yet" in r.stderr
