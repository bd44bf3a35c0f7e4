/*
 * texture_opencl.c — block features on OpenCL processors: one work item per
 * block, the arithmetic of texture_features.h made a string, in double
 * precision as on the CPU (the device needs cl_khr_fp64; PoCL has it).
 */
#include <stdlib.h>
#include "texture.h"
#include "texture_features.h"

#if TESS_HAVE_OPENCL
#include "tessera/tile_opencl.h"

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

typedef struct tex_cl {
    cl_program program;
    cl_kernel kernel;
} tex_cl;

static void tex_cl_release(void *user)
{
    tex_cl *c = user;
    if (c->kernel) clReleaseKernel(c->kernel);
    if (c->program) clReleaseProgram(c->program);
    free(c);
}

static int tex_cl_prepare(tess_tile_opencl *dev, tex_cl **out)
{
    if (dev->user) {
        *out = dev->user;
        return TESS_OK;
    }
    tex_cl *c = calloc(1, sizeof *c);
    if (c == NULL) return tess_set_error(dev->ctx, TESS_ERR_NOMEM, "out of memory");
    int rc = tess_tile_opencl_build(dev, tex_source, "", &c->program);
    cl_int err = CL_SUCCESS;
    if (rc == TESS_OK) c->kernel = clCreateKernel(c->program, "tex", &err);
    if (rc == TESS_OK && err != CL_SUCCESS)
        rc = tess_set_error(dev->ctx, TESS_ERR_KERNEL, "opencl: no kernel 'tex' (%d)", (int)err);
    if (rc != TESS_OK) {
        tex_cl_release(c);
        return rc;
    }
    dev->user = c;
    dev->release = tex_cl_release;
    *out = c;
    return TESS_OK;
}

static int tex_kernel_cl(const tess_tile_box *box, const void *in, void *out, void *device,
                         void *arg)
{
    tess_tile_opencl *dev = device;
    const tex_params *p = arg;
    tex_cl *c = NULL;
    int rc = tex_cl_prepare(dev, &c);
    if (rc != TESS_OK) return rc;
    cl_long tw = box->hi[1] - box->lo[1], n = tw * (box->hi[0] - box->lo[0]);
    size_t in_len = (size_t)n * tex_record_bytes(p->block), out_len = (size_t)n * TEX_OUT_BYTES;
    cl_int err, s = p->block;
    cl_mem din = clCreateBuffer(dev->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, in_len,
                                (void *)in, &err);
    cl_mem dout = err == CL_SUCCESS
                      ? clCreateBuffer(dev->context, CL_MEM_WRITE_ONLY, out_len, NULL, &err)
                      : NULL;
    if (err == CL_SUCCESS) {
        cl_long geo[6] = {box->lo[0], box->lo[1], tw, n, p->height, p->width};
        clSetKernelArg(c->kernel, 0, sizeof din, &din);
        clSetKernelArg(c->kernel, 1, sizeof dout, &dout);
        clSetKernelArg(c->kernel, 2, sizeof s, &s);
        for (int k = 0; k < 6; k++)
            clSetKernelArg(c->kernel, 3 + (cl_uint)k, sizeof geo[k], &geo[k]);
        err = tess_tile_opencl_enqueue_1d(dev, c->kernel, (size_t)n);
    }
    if (err == CL_SUCCESS)
        err = clEnqueueReadBuffer(dev->queue, dout, CL_TRUE, 0, out_len, out, 0, NULL, NULL);
    if (din) clReleaseMemObject(din);
    if (dout) clReleaseMemObject(dout);
    if (err != CL_SUCCESS)
        return tess_set_error(dev->ctx, TESS_ERR_KERNEL, "opencl: texture failed on %s (%d)",
                              dev->name, (int)err);
    return TESS_OK;
}

const tess_tile_kernel_fn tex_kernel_opencl = tex_kernel_cl;
#else
const tess_tile_kernel_fn tex_kernel_opencl = NULL;
#endif
