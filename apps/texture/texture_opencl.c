/*
 * texture_opencl.c — block features on OpenCL processors: one work item per
 * block, the arithmetic of texture_features.h made a string, in double
 * precision as on the CPU (the device needs cl_khr_fp64; PoCL has it).
 */
#include <stdlib.h>
#include "texture.h"
#include "texture_features.h"

#if TESS_HAVE_OPENCL
#include "tile_cl.h"

static const char tex_source[] =
    "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
    "#pragma OPENCL FP_CONTRACT OFF\n"
    "#define TEX_GLOBAL __global\n"
    "#define tex_sqrt sqrt\n" TEX_FORMULA(
        TEX_AS_TEXT) "\n"
                     "__kernel void tex(__global const uchar *in, __global float *out, int s, long by0,\n"
                     "                  long bx0, long tw, long n, long h, long w) {\n"
                     "  long i = get_global_id(0);\n"
                     "  if (i >= n) return;\n"
                     "  __global const uchar *rec = in + i * (long)(s + 2) * (s + 2);\n"
                     "  float f[16];\n"
                     "  tex_glcm(rec, s, f);\n"
                     "  tex_lbp(rec, s, (by0 + i / tw) * s, (bx0 + i % tw) * s, h, w, f);\n"
                     "  for (int k = 0; k < 16; k++) out[16 * i + k] = f[k];\n"
                     "}\n";

static void tex_cl_args(const app_tile_cl *c, const tess_tile_box *box, const void *arg)
{
    const tex_params *p = arg;
    cl_long tw = box->hi[1] - box->lo[1], n = tw * (box->hi[0] - box->lo[0]);
    cl_long geo[6] = {box->lo[0], box->lo[1], tw, n, p->height, p->width};
    cl_int s = p->block;
    clSetKernelArg(c->kernel, 2, sizeof s, &s);
    for (int k = 0; k < 6; k++) clSetKernelArg(c->kernel, 3 + (cl_uint)k, sizeof geo[k], &geo[k]);
}

static const app_tile_cl_kernel tex_cl = {.source = tex_source,
                                          .options = "",
                                          .name = "tex",
                                          .what = "texture",
                                          .in_arg = 0,
                                          .out_arg = 1,
                                          .args = tex_cl_args};

static int tex_kernel_cl(const tess_tile_box *box, const void *in, void *out, void *device,
                         void *arg)
{
    const tex_params *p = arg;
    size_t n = (size_t)((box->hi[1] - box->lo[1]) * (box->hi[0] - box->lo[0]));
    return app_tile_cl_run(&tex_cl, device, box, arg, in, n * tex_record_bytes(p->block), out,
                           n * TEX_OUT_BYTES, n);
}

const tess_tile_kernel_fn tex_kernel_opencl = tex_kernel_cl;
#else
const tess_tile_kernel_fn tex_kernel_opencl = NULL;
#endif
