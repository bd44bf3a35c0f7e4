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
#include "tessera/tile_opencl.h"

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

typedef struct bs_cl {
    cl_program program;
    cl_kernel kernel;
} bs_cl;

static void bs_cl_release(void *user)
{
    bs_cl *b = user;
    if (b->kernel) clReleaseKernel(b->kernel);
    if (b->program) clReleaseProgram(b->program);
    free(b);
}

static int bs_cl_prepare(tess_tile_opencl *dev, bs_cl **out)
{
    if (dev->user) {
        *out = dev->user;
        return TESS_OK;
    }
    bs_cl *b = calloc(1, sizeof *b);
    if (b == NULL) return tess_set_error(dev->ctx, TESS_ERR_NOMEM, "out of memory");
    int rc = tess_tile_opencl_build(dev, bs_source, "-cl-fp32-correctly-rounded-divide-sqrt",
                                    &b->program);
    cl_int err = CL_SUCCESS;
    if (rc == TESS_OK) b->kernel = clCreateKernel(b->program, "bs", &err);
    if (rc == TESS_OK && err != CL_SUCCESS)
        rc = tess_set_error(dev->ctx, TESS_ERR_KERNEL, "opencl: no kernel 'bs' (%d)", (int)err);
    if (rc != TESS_OK) {
        bs_cl_release(b);
        return rc;
    }
    dev->user = b;
    dev->release = bs_cl_release;
    *out = b;
    return TESS_OK;
}

static int bs_kernel_cl(const tess_tile_box *box, const void *in, void *out, void *device,
                        void *arg)
{
    tess_tile_opencl *dev = device;
    const bs_params *p = arg;
    bs_cl *b = NULL;
    int rc = bs_cl_prepare(dev, &b);
    if (rc != TESS_OK) return rc;
    cl_int n = (cl_int)(box->hi[0] - box->lo[0]), err;
    size_t in_len = (size_t)n * BS_IN_BYTES, out_len = (size_t)n * BS_OUT_BYTES;
    cl_mem din = clCreateBuffer(dev->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, in_len,
                                (void *)in, &err);
    cl_mem dout = err == CL_SUCCESS
                      ? clCreateBuffer(dev->context, CL_MEM_WRITE_ONLY, out_len, NULL, &err)
                      : NULL;
    cl_int iters = p->iterations;
    if (err == CL_SUCCESS) {
        clSetKernelArg(b->kernel, 0, sizeof din, &din);
        clSetKernelArg(b->kernel, 1, sizeof dout, &dout);
        clSetKernelArg(b->kernel, 2, sizeof(float), &p->riskfree);
        clSetKernelArg(b->kernel, 3, sizeof(float), &p->volatility);
        clSetKernelArg(b->kernel, 4, sizeof iters, &iters);
        clSetKernelArg(b->kernel, 5, sizeof n, &n);
        err = tess_tile_opencl_enqueue_1d(dev, b->kernel, (size_t)n);
    }
    if (err == CL_SUCCESS)
        err = clEnqueueReadBuffer(dev->queue, dout, CL_TRUE, 0, out_len, out, 0, NULL, NULL);
    if (din) clReleaseMemObject(din);
    if (dout) clReleaseMemObject(dout);
    if (err != CL_SUCCESS)
        return tess_set_error(dev->ctx, TESS_ERR_KERNEL, "opencl: Black-Scholes failed on %s (%d)",
                              dev->name, (int)err);
    return TESS_OK;
}

const tess_tile_kernel_fn bs_kernel_opencl = bs_kernel_cl;
#else
const tess_tile_kernel_fn bs_kernel_opencl = NULL;
#endif
