/*
 * bs_opencl.c — the Black-Scholes kernel for OpenCL processors: the same
 * formula (bs_formula.h, made a string) in OpenCL C, one work item per
 * option, built with correctly rounded division and square root and without
 * contraction, so its prices equal the CPU kernel's unless the device's
 * float arithmetic is not IEEE (docs/tiles.md).
 */
#include <stdlib.h>
#include "blackscholes.h"
#include "bs_formula.h"

#if TESS_HAVE_OPENCL
#include "tile_cl.h"

static const char bs_source[] =
    "#pragma OPENCL FP_CONTRACT OFF\n"
    "uint bs_bits(float x) { return as_uint(x); }\n"
    "float bs_float(uint u) { return as_float(u); }\n"
    "#define bs_fabs fabs\n"
    "#define bs_sqrt sqrt\n" BS_FORMULA(
        BS_AS_TEXT) "\n"
                    "__kernel void bs(__global const float *in, __global float *out, float r, float v,\n"
                    "                 int iterations, int n) {\n"
                    "  int i = get_global_id(0);\n"
                    "  if (i >= n) return;\n"
                    "  volatile float vs = in[3 * i]; /* read anew each time: no merged iterations */\n"
                    "  float x = in[3 * i + 1], t = in[3 * i + 2], call = 0, put = 0;\n"
                    "  for (int k = 0; k < iterations; k++) bs_price_one(vs, x, t, r, v, &call, &put);\n"
                    "  out[2 * i] = call;\n"
                    "  out[2 * i + 1] = put;\n"
                    "}\n";

static void bs_cl_args(const app_tile_cl *c, const tess_tile_box *box, const void *arg)
{
    const bs_params *p = arg;
    cl_int n = (cl_int)(box->hi[0] - box->lo[0]), iters = p->iterations;
    clSetKernelArg(c->kernel, 2, sizeof(float), &p->riskfree);
    clSetKernelArg(c->kernel, 3, sizeof(float), &p->volatility);
    clSetKernelArg(c->kernel, 4, sizeof iters, &iters);
    clSetKernelArg(c->kernel, 5, sizeof n, &n);
}

static const app_tile_cl_kernel bs_cl = {.source = bs_source,
                                         .options = "-cl-fp32-correctly-rounded-divide-sqrt",
                                         .name = "bs",
                                         .what = "Black-Scholes",
                                         .in_arg = 0,
                                         .out_arg = 1,
                                         .args = bs_cl_args};

static int bs_kernel_cl(const tess_tile_box *box, const void *in, void *out, void *device,
                        void *arg)
{
    size_t n = (size_t)(box->hi[0] - box->lo[0]);
    return app_tile_cl_run(&bs_cl, device, box, arg, in, n * BS_IN_BYTES, out, n * BS_OUT_BYTES, n);
}

const tess_tile_kernel_fn bs_kernel_opencl = bs_kernel_cl;
#else
const tess_tile_kernel_fn bs_kernel_opencl = NULL;
#endif
