"""The tiles face from Python: a CPU kernel over NumPy views of each tile's input
and output, on every policy, checked against NumPy on the whole area; and a
kernel exception ending the job with one line."""

import numpy as np
import pytest

import tessera


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
