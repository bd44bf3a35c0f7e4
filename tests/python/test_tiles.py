"""The tiles face from Python: a CPU kernel over NumPy views of each tile's input
and output, on every policy, checked against NumPy on the whole area; a kernel
exception ending the job with one line; OpenCL kernels given as source strings
(bitwise equal to NumPy where the formula allows); and examples/python/mandelbrot.py
against NumPy and a scalar reference."""

import os
import re
import sys

import numpy as np
import pytest

import tessera
from conftest import EXAMPLES, SOURCE, run_python


def test_tile_kernel_every_policy():
    x = np.random.default_rng(7).random((240, 64, 3))
    out = np.zeros((240, 64))
    with tessera.Context(workers=1, mode="embedded") as ctx:
        def luminance(lo, hi, inp, o):
            assert inp.shape == (hi[0] - lo[0], hi[1] - lo[1], 3) and o.shape == inp.shape[:2]
            np.dot(inp, [0.25, 0.5, 0.25], out=o)

        job = ctx.tile_job("lum", luminance, (240, 64), min_tile=(1, 64), max_tile=(240, 64),
                           input=x, output=out)
        got = {}

        def control(c):
            for policy in (None, "dd:16x64", "static:1024", "ws:32x64"):
                out[:] = 0
                stats = c.tile_run(job, processors="cpu*2", policy=policy)
                got[stats["policy"]] = (out.copy(), stats["cells"])

        ctx.main(control)
    want = x @ np.array([0.25, 0.5, 0.25])
    assert len(got) == 4
    for policy, (o, cells) in got.items():
        np.testing.assert_array_equal(o, want, err_msg=policy)
        assert cells == 240 * 64


def test_tile_kernel_exception():
    x = np.ones((50, 10))
    with tessera.Context(workers=1, mode="embedded") as ctx:
        def bad(lo, hi, inp, o):
            raise ZeroDivisionError("no tiles today")

        job = ctx.tile_job("bad", bad, x.shape, min_tile=(1, 10), max_tile=(50, 10), input=x,
                           output=np.zeros_like(x))

        def control(c):
            with pytest.raises(tessera.KernelError,
                               match="python tile kernel of job bad raised ZeroDivisionError"):
                c.tile_run(job, processors="cpu")

        ctx.main(control)


# ---------------------------------------------------------------- OpenCL kernels from Python

SQUARE = tessera.OpenCLKernel(
    "__kernel void sq(__global const double *x, __global double *y, int n)\n"
    "{ int i = get_global_id(0); if (i < n) y[i] = x[i] * x[i]; }", "sq", "in,out,cells")


need_opencl = pytest.mark.skipif(not tessera.have_opencl, reason="built without OpenCL")


def run_or_skip(c, job, processors, **kw):
    """tile_run, skipped where this machine has no OpenCL platform (as tests/integration/tiles.sh)."""
    try:
        return c.tile_run(job, processors=processors, **kw)
    except tessera.Error as e:
        if re.search("no OpenCL platform|has no OpenCL", str(e)):
            pytest.skip(f"no OpenCL here: {e}")
        raise


@need_opencl
def test_opencl_kernel_from_source():
    x = np.random.default_rng(11).random((300, 32))
    out = np.zeros_like(x)
    with tessera.Context(workers=1, mode="embedded") as ctx:
        job = ctx.tile_job("sq", lambda lo, hi, inp, o: np.multiply(inp, inp, out=o), x.shape,
                           min_tile=(1, 32), max_tile=(300, 32), input=x, output=out,
                           opencl=SQUARE)
        got = {}

        def control(c):
            for procs in ("opencl", "cpu+opencl", "cpu"):
                out[:] = 0
                stats = run_or_skip(c, job, procs, policy="dd:20x32")
                got[procs] = (out.copy(), stats["processors"])

        ctx.main(control)
    for procs, (o, nprocs) in got.items():  # x*x is exact: the same bits on any processor
        np.testing.assert_array_equal(o, x * x, err_msg=procs)
        assert nprocs == procs.count("+") + 1


@need_opencl
def test_opencl_only_job_and_errors():
    x = np.arange(64.0).reshape(8, 8)
    out = np.zeros_like(x)
    bad = tessera.OpenCLKernel("__kernel void sq(__global double *y) { y[0] = oops; }", "sq",
                               "out")
    with tessera.Context(workers=1, mode="embedded") as ctx:
        job = ctx.tile_job("only", None, x.shape, min_tile=(1, 8), max_tile=(8, 8), input=x,
                           output=out, opencl=SQUARE)
        broken = ctx.tile_job("broken", None, x.shape, min_tile=(1, 8), max_tile=(8, 8),
                              input=x, output=np.zeros_like(x), opencl=bad)
        with pytest.raises(ValueError, match="give a kernel, an opencl kernel or both"):
            ctx.tile_job("none", None, x.shape, min_tile=(1, 8), max_tile=(8, 8), input=x)

        def control(c):
            run_or_skip(c, job, "opencl")
            with pytest.raises(tessera.Error):  # no CPU kernel
                c.tile_run(job, processors="cpu")
            with pytest.raises(tessera.KernelError, match="oops"):  # the build log
                c.tile_run(broken, processors="opencl")

        ctx.main(control)
    np.testing.assert_array_equal(out, x * x)


# ---------------------------------------------------------------- examples/python/mandelbrot.py

sys.path.insert(0, EXAMPLES)
import mandelbrot  # noqa: E402  (the example's kernel, checked in process)


def numpy_mandelbrot(width, height):
    """The counts of the whole view with plain NumPy: every pixel iterated MAX_ITER times,
    counting the iterations that started inside |z| <= 2 (binary32 throughout)."""
    grid = mandelbrot.points(width, height)
    cx, cy = grid[..., 0], grid[..., 1]
    x, y, x2, y2 = (np.zeros_like(cx) for _ in range(4))
    counts = np.zeros(cx.shape, np.uint32)
    inside = np.ones(cx.shape, bool)
    with np.errstate(over="ignore", invalid="ignore"):
        for _ in range(mandelbrot.MAX_ITER):
            inside &= x2 + y2 <= np.float32(4.0)
            y = np.where(inside, (np.float32(2.0) * x) * y + cy, y)
            x = np.where(inside, (x2 - y2) + cx, x)
            x2, y2 = x * x, y * y
            counts += inside
    return counts


def test_mandelbrot_tiles_against_numpy():
    w, h = 96, 40
    want = numpy_mandelbrot(w, h)
    counts = np.zeros((h, w), np.uint32)
    cl = tessera.OpenCLKernel(mandelbrot.OPENCL_SOURCE, "mandel", "in,out,cells",
                              f"-DMAX_ITER={mandelbrot.MAX_ITER}") if tessera.have_opencl else None
    runs = [("cpu*2", None), ("cpu", "ws:4x96"), ("cpu", "static:960")]
    if cl is not None:
        runs += [("opencl", None), ("cpu+opencl", "dd:8x96")]
    with tessera.Context(workers=1, mode="embedded") as ctx:
        job = ctx.tile_job("mandel", mandelbrot.cpu_kernel, (h, w), min_tile=(1, w),
                           max_tile=(h, w), input=mandelbrot.points(w, h), output=counts,
                           out_dtype="uint32", opencl=cl)
        got = {}

        def control(c):
            for procs, policy in runs:
                counts[:] = 0
                run_or_skip(c, job, procs, policy=policy)
                got[procs, policy] = counts.copy()

        ctx.main(control)
    for key, o in got.items():
        np.testing.assert_array_equal(o, want, err_msg=str(key))


def test_opencl_refused_without_opencl():
    if tessera.have_opencl:
        pytest.skip("built with OpenCL")
    with tessera.Context(workers=1, mode="embedded") as ctx:
        with pytest.raises(tessera.Error, match="not supported: an OpenCL kernel"):
            ctx.tile_job("sq", None, (4,), min_tile=(1,), max_tile=(4,), input=np.ones(4),
                         opencl=SQUARE)


def test_mandelbrot_example_against_scalar_reference():
    """The example's printed line equals tests/install/examples_ref.py's, a scalar Python
    loop rounding to binary32 after every operation (the C example is checked against it)."""
    ref = run_python([os.path.join(SOURCE, "tests", "install", "examples_ref.py"), "mandelbrot",
                      "64", "48"])
    assert ref.returncode == 0, ref.stderr
    r = run_python([os.path.join(EXAMPLES, "mandelbrot.py"), "--width", "64", "--height", "48",
                    "--processors", "cpu*2"])
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == ref.stdout.strip() == "sum 141874 inside 639"
