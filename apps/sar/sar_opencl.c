/*
 * sar_opencl.c — backprojection on OpenCL processors: one work item per
 * pixel, the same operations in the same order as sar_kernel.c, in double
 * precision where it is (the device needs cl_khr_fp64; PoCL has it).  The
 * device's cos and sin may differ from the C library's in the last place,
 * so images agree with the CPU's within a stated tolerance (docs/tiles.md).
 * The scene is copied to the device once per run.
 */
#include <stdlib.h>
#include "sar.h"

#if TESS_HAVE_OPENCL
#include "tessera/tile_opencl.h"

static const char sar_source[] =
    "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
    "#pragma OPENCL FP_CONTRACT OFF\n"
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
    "    float c = (float)cos(phase), sn = (float)sin(phase);\n"
    "    re += sr * c - si * sn;\n"
    "    im += sr * sn + si * c;\n"
    "  }\n"
    "  out[2 * i] = re;\n"
    "  out[2 * i + 1] = im;\n"
    "}\n";

typedef struct sar_cl {
    cl_program program;
    cl_kernel kernel;
    cl_mem pos, samples;
} sar_cl;

static void sar_cl_release(void *user)
{
    sar_cl *c = user;
    if (c->pos) clReleaseMemObject(c->pos);
    if (c->samples) clReleaseMemObject(c->samples);
    if (c->kernel) clReleaseKernel(c->kernel);
    if (c->program) clReleaseProgram(c->program);
    free(c);
}

/* Build the program and copy the scene, once per device. */
static int sar_cl_setup(tess_tile_opencl *dev, const sar_scene *s, sar_cl *c)
{
    int rc = tess_tile_opencl_build(dev, sar_source, "", &c->program);
    if (rc != TESS_OK) return rc;
    cl_int err;
    c->kernel = clCreateKernel(c->program, "sar", &err);
    size_t pos_len = 3 * sizeof(double) * s->pulses;
    size_t smp_len = 2 * sizeof(float) * (size_t)s->pulses * s->bins;
    if (err == CL_SUCCESS)
        c->pos = clCreateBuffer(dev->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, pos_len,
                                s->pos, &err);
    if (err == CL_SUCCESS)
        c->samples = clCreateBuffer(dev->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, smp_len,
                                    s->samples, &err);
    if (err != CL_SUCCESS)
        return tess_set_error(dev->ctx, TESS_ERR_KERNEL, "opencl: cannot set up sar on %s (%d)",
                              dev->name, (int)err);
    return TESS_OK;
}

static int sar_cl_prepare(tess_tile_opencl *dev, const sar_scene *s, sar_cl **out)
{
    if (dev->user) {
        *out = dev->user;
        return TESS_OK;
    }
    sar_cl *c = calloc(1, sizeof *c);
    if (c == NULL) return tess_set_error(dev->ctx, TESS_ERR_NOMEM, "out of memory");
    int rc = sar_cl_setup(dev, s, c);
    if (rc != TESS_OK) {
        sar_cl_release(c);
        return rc;
    }
    dev->user = c;
    dev->release = sar_cl_release;
    *out = c;
    return TESS_OK;
}

static void sar_cl_args(cl_kernel k, const sar_scene *s, const sar_cl *c, const cl_long box[4],
                        cl_mem out)
{
    cl_uint pulses = s->pulses, bins = s->bins;
    cl_double d[7] = {s->r0, s->dr, s->ku, s->x0, s->y0, s->dx, s->dy};
    clSetKernelArg(k, 0, sizeof c->pos, &c->pos);
    clSetKernelArg(k, 1, sizeof c->samples, &c->samples);
    clSetKernelArg(k, 2, sizeof pulses, &pulses);
    clSetKernelArg(k, 3, sizeof bins, &bins);
    for (int i = 0; i < 7; i++) clSetKernelArg(k, 4 + (cl_uint)i, sizeof d[i], &d[i]);
    for (int i = 0; i < 4; i++) clSetKernelArg(k, 11 + (cl_uint)i, sizeof box[i], &box[i]);
    clSetKernelArg(k, 15, sizeof out, &out);
}

static int sar_kernel_cl(const tess_tile_box *box, const void *in, void *out, void *device,
                         void *arg)
{
    (void)in;
    tess_tile_opencl *dev = device;
    const sar_scene *s = arg;
    sar_cl *c = NULL;
    int rc = sar_cl_prepare(dev, s, &c);
    if (rc != TESS_OK) return rc;
    int64_t tw = box->hi[1] - box->lo[1], n = tw * (box->hi[0] - box->lo[0]);
    size_t out_len = (size_t)n * SAR_PIXEL_BYTES;
    cl_int err;
    cl_mem dout = clCreateBuffer(dev->context, CL_MEM_WRITE_ONLY, out_len, NULL, &err);
    if (err == CL_SUCCESS) {
        cl_long geometry[4] = {box->lo[1], box->lo[0], tw, n};
        sar_cl_args(c->kernel, s, c, geometry, dout);
        err = tess_tile_opencl_enqueue_1d(dev, c->kernel, (size_t)n);
    }
    if (err == CL_SUCCESS)
        err = clEnqueueReadBuffer(dev->queue, dout, CL_TRUE, 0, out_len, out, 0, NULL, NULL);
    if (dout) clReleaseMemObject(dout);
    if (err != CL_SUCCESS)
        return tess_set_error(dev->ctx, TESS_ERR_KERNEL, "opencl: sar failed on %s (%d)", dev->name,
                              (int)err);
    return TESS_OK;
}

const tess_tile_kernel_fn sar_kernel_opencl = sar_kernel_cl;
#else
const tess_tile_kernel_fn sar_kernel_opencl = NULL;
#endif
