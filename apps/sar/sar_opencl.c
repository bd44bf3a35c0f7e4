/*
 * sar_opencl.c — backprojection on OpenCL processors: one work item per
 * pixel, the same operations in the same order as sar_kernel.c, in double
 * precision where it is (the device needs cl_khr_fp64; PoCL has it).  The
 * cosine and sine are sar_trig.h's (made a string), not the device's, and
 * nothing is contracted, so the images equal the CPU's to the bit unless
 * the device's arithmetic is not IEEE (docs/tiles.md).  The scene is copied
 * to the device once per run.
 */
#include <stdlib.h>
#include "sar.h"
#include "sar_trig.h"

#if TESS_HAVE_OPENCL
#include "tile_cl.h"

static const char sar_source[] =
    "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
    "#pragma OPENCL FP_CONTRACT OFF\n"
    "typedef ulong sar_u64;\n"
    "typedef long sar_i64;\n"
    "ulong sar_bits(double x) { return as_ulong(x); }\n"
    "#define SAR_TABLE __constant\n" SAR_TRIG(
        SAR_AS_TEXT) "\n"
                     "__kernel void sar(__global const double *pos, __global const float *smp, uint pulses,\n"
                     "                  uint bins, double r0, double dr, double ku, double x0, double y0,\n"
                     "                  double dx, double dy, long ix0, long iy0, long tw, long n,\n"
                     "                  __global float *out) {\n"
                     "  long i = get_global_id(0);\n"
                     "  if (i >= n) return;\n"
                     "  double px = x0 + (double)(ix0 + i % tw) * dx, py = y0 + (double)(iy0 + i / tw) * dy;\n"
                     "  double last_bin = (double)(bins - 1);\n"
                     "  float re = 0.0f, im = 0.0f;\n"
                     "  for (uint p = 0; p < pulses; p++) {\n"
                     "    double ex = pos[3 * p] - px, ey = pos[3 * p + 1] - py, ez = pos[3 * p + 2];\n"
                     "    double r = sqrt(ex * ex + ey * ey + ez * ez);\n"
                     "    double bin = (r - r0) / dr;\n"
                     "    if (!(bin >= 0.0 && bin < last_bin)) continue;\n"
                     "    uint b = (uint)bin;\n"
                     "    float w = (float)(bin - (double)b);\n"
                     "    __global const float *v = smp + 2 * ((ulong)p * bins + b);\n"
                     "    float sr = (1.0f - w) * v[0] + w * v[2];\n"
                     "    float si = (1.0f - w) * v[1] + w * v[3];\n"
                     "    double phase = 2.0 * ku * r;\n"
                     "    double cd, sd;\n"
                     "    sar_cos_sin(phase, &cd, &sd);\n"
                     "    float c = (float)cd, sn = (float)sd;\n"
                     "    re += sr * c - si * sn;\n"
                     "    im += sr * sn + si * c;\n"
                     "  }\n"
                     "  out[2 * i] = re;\n"
                     "  out[2 * i + 1] = im;\n"
                     "}\n";

/* Copy the scene to the device, once per device: keep[0] the positions,
 * keep[1] the samples. */
static int sar_cl_setup(tess_tile_opencl *dev, app_tile_cl *c, const void *arg)
{
    const sar_scene *s = arg;
    size_t pos_len = 3 * sizeof(double) * s->pulses;
    size_t smp_len = 2 * sizeof(float) * (size_t)s->pulses * s->bins;
    cl_int err;
    c->keep[0] = clCreateBuffer(dev->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, pos_len,
                                s->pos, &err);
    if (err == CL_SUCCESS)
        c->keep[1] = clCreateBuffer(dev->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, smp_len,
                                    s->samples, &err);
    if (err != CL_SUCCESS)
        return tess_set_error(dev->ctx, TESS_ERR_KERNEL, "opencl: cannot set up sar on %s (%d)",
                              dev->name, (int)err);
    return TESS_OK;
}

static void sar_cl_args(const app_tile_cl *c, const tess_tile_box *box, const void *arg)
{
    const sar_scene *s = arg;
    cl_kernel k = c->kernel;
    cl_uint pulses = s->pulses, bins = s->bins;
    cl_double d[7] = {s->r0, s->dr, s->ku, s->x0, s->y0, s->dx, s->dy};
    cl_long tw = box->hi[1] - box->lo[1];
    cl_long geometry[4] = {box->lo[1], box->lo[0], tw, tw * (box->hi[0] - box->lo[0])};
    clSetKernelArg(k, 0, sizeof c->keep[0], &c->keep[0]);
    clSetKernelArg(k, 1, sizeof c->keep[1], &c->keep[1]);
    clSetKernelArg(k, 2, sizeof pulses, &pulses);
    clSetKernelArg(k, 3, sizeof bins, &bins);
    for (int i = 0; i < 7; i++) clSetKernelArg(k, 4 + (cl_uint)i, sizeof d[i], &d[i]);
    for (int i = 0; i < 4; i++)
        clSetKernelArg(k, 11 + (cl_uint)i, sizeof geometry[i], &geometry[i]);
}

static const app_tile_cl_kernel sar_cl = {.source = sar_source,
                                          .options = "",
                                          .name = "sar",
                                          .what = "sar",
                                          .out_arg = 15,
                                          .setup = sar_cl_setup,
                                          .args = sar_cl_args};

static int sar_kernel_cl(const tess_tile_box *box, const void *in, void *out, void *device,
                         void *arg)
{
    size_t n = (size_t)((box->hi[1] - box->lo[1]) * (box->hi[0] - box->lo[0]));
    return app_tile_cl_run(&sar_cl, device, box, arg, in, 0, out, n * SAR_PIXEL_BYTES, n);
}

const tess_tile_kernel_fn sar_kernel_opencl = sar_kernel_cl;
#else
const tess_tile_kernel_fn sar_kernel_opencl = NULL;
#endif
