#!/usr/bin/env python3
"""mandelbrot.py -- the tiles face from Python: the iteration counts of a W x H view of the
Mandelbrot set, one cell per pixel, as examples/mandelbrot.c computes them.

The job's input is each pixel's point (cx, cy) as two float32 numbers; its output the
pixel's count (uint32, at most 200).  The CPU kernel is NumPy over the tile's views (the
escape loop vectorized over the tile's pixels, the GIL released inside NumPy's loops);
with --opencl the job also has an OpenCL kernel given as a Python string, the same loop in
OpenCL C, so `--processors cpu*2+opencl` lets both kinds of processor take tiles.  Both do
the same binary32 operations in the same order (no contraction into fused multiply-adds),
so every processor mix and policy gives the same bits, and the sum equals the C
example's.  Prints "sum S inside I" (the counts' sum and the pixels that never escaped),
as examples/mandelbrot.c does; --output writes the counts as a PGM picture.

    PYTHONPATH=build/python python3 examples/python/mandelbrot.py \\
        --width 640 --height 480 --processors 'cpu*2+opencl' --opencl
"""

import argparse
import sys

import numpy as np

import tessera

MAX_ITER = 200

OPENCL_SOURCE = """
#pragma OPENCL FP_CONTRACT OFF
__kernel void mandel(__global const float2 *in, __global uint *out, int n) {
  int i = get_global_id(0);
  if (i >= n) return;
  float cx = in[i].x, cy = in[i].y, x = 0, y = 0, x2 = 0, y2 = 0;
  uint k = 0;
  while (x2 + y2 <= 4.0f && k < MAX_ITER) {
    y = (2.0f * x) * y + cy; x = (x2 - y2) + cx; x2 = x * x; y2 = y * y; k++;
  }
  out[i] = k;
}
"""


def points(width, height):
    """(height, width, 2) float32: pixel (r, c) is x0 + c*dx, y0 + r*dy (binary32, as in C)."""
    f = np.float32
    x0, y0, dx, dy = f(-2.0), f(-1.25), f(3.0) / f(width), f(2.5) / f(height)
    grid = np.empty((height, width, 2), dtype=np.float32)
    grid[:, :, 0] = x0 + np.arange(width, dtype=np.float32) * dx
    grid[:, :, 1] = (y0 + np.arange(height, dtype=np.float32) * dy)[:, None]
    return grid


def escape_counts(c, out):
    """The counts of points c (..., 2) into out: the C loop, run on the pixels still inside."""
    cx, cy = c[..., 0].ravel(), c[..., 1].ravel()
    counts = out.reshape(-1)
    counts[:] = 0
    live = np.arange(cx.size)  # pixels whose loop still runs
    x = np.zeros(cx.size, np.float32)
    y, x2, y2 = x.copy(), x.copy(), x.copy()
    for _ in range(MAX_ITER):
        keep = x2 + y2 <= np.float32(4.0)
        if not keep.all():
            live, x, y, x2, y2 = live[keep], x[keep], y[keep], x2[keep], y2[keep]
            if live.size == 0:
                break
        y = (np.float32(2.0) * x) * y + cy[live]
        x = (x2 - y2) + cx[live]
        x2, y2 = x * x, y * y
        counts[live] += 1


def cpu_kernel(lo, hi, inp, out):
    escape_counts(inp, out)


def write_pgm(path, counts):
    with open(path, "wb") as f:
        f.write(b"P5\n%d %d\n255\n" % (counts.shape[1], counts.shape[0]))
        f.write((255 - counts * 255 // MAX_ITER).astype(np.uint8).tobytes())


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--width", type=int, default=640)
    ap.add_argument("--height", type=int, default=480)
    ap.add_argument("--processors", default="cpu", help='e.g. "cpu*2", "opencl", "cpu+opencl"')
    ap.add_argument("--policy", default=None, help='None (APC+), "dd:RxC", "static:N", "ws:RxC"')
    ap.add_argument("--opencl", action="store_true", help="give the job its OpenCL kernel")
    ap.add_argument("--output", help="write the counts as a PGM picture")
    ap.add_argument("--workers", type=int, default=1)
    opt = ap.parse_args(argv)
    if opt.width < 1 or opt.height < 1:
        ap.error("--width and --height must be at least 1")
    grid = points(opt.width, opt.height)
    counts = np.zeros((opt.height, opt.width), dtype=np.uint32)
    cl = tessera.OpenCLKernel(OPENCL_SOURCE, "mandel", "in,out,cells",
                              f"-DMAX_ITER={MAX_ITER}") if opt.opencl else None
    with tessera.Context(workers=opt.workers) as ctx:
        job = ctx.tile_job("mandelbrot", cpu_kernel, (opt.height, opt.width),
                           min_tile=(1, opt.width), max_tile=(opt.height, opt.width),
                           input=grid, output=counts, out_dtype="uint32", opencl=cl)
        result = {}

        def control(c):
            result["stats"] = c.tile_run(job, processors=opt.processors, policy=opt.policy)

        ctx.main(control)
        if ctx.rank == 0:
            st = result["stats"]
            print(f"sum {int(counts.sum(dtype=np.uint64))} inside "
                  f"{int(np.count_nonzero(counts == MAX_ITER))}")
            print(f"mandelbrot.py: {st['cells']} cells in {st['tiles']} tiles on "
                  f"{st['processors']} processor(s), policy {st['policy']}: "
                  f"{st['seconds']:.3f} s", file=sys.stderr)
            if opt.output:
                write_pgm(opt.output, counts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
