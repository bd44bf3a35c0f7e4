/*
 * tile_cl.c — the OpenCL side the tiles applications share (tile_cl.h).
 */
#include <stdlib.h>
#include "tile_cl.h"

#if TESS_HAVE_OPENCL

static void release(void *user)
{
    app_tile_cl *c = user;
    for (int i = 0; i < 2; i++)
        if (c->keep[i]) clReleaseMemObject(c->keep[i]);
    if (c->kernel) clReleaseKernel(c->kernel);
    if (c->program) clReleaseProgram(c->program);
    free(c);
}

static int build(const app_tile_cl_kernel *k, tess_tile_opencl *dev, app_tile_cl *c,
                 const void *arg)
{
    int rc = tess_tile_opencl_build(dev, k->source, k->options, &c->program);
    cl_int err = CL_SUCCESS;
    if (rc == TESS_OK) c->kernel = clCreateKernel(c->program, k->name, &err);
    if (rc == TESS_OK && err != CL_SUCCESS)
        rc = tess_set_error(dev->ctx, TESS_ERR_KERNEL, "opencl: no kernel '%s' (%d)", k->name,
                            (int)err);
    if (rc == TESS_OK && k->setup) rc = k->setup(dev, c, arg);
    return rc;
}

/* The application's state on dev, made at its first tile. */
static int prepare(const app_tile_cl_kernel *k, tess_tile_opencl *dev, const void *arg,
                   app_tile_cl **out)
{
    if (dev->user) {
        *out = dev->user;
        return TESS_OK;
    }
    app_tile_cl *c = calloc(1, sizeof *c);
    if (c == NULL) return tess_set_error(dev->ctx, TESS_ERR_NOMEM, "out of memory");
    int rc = build(k, dev, c, arg);
    if (rc != TESS_OK) {
        release(c);
        return rc;
    }
    dev->user = c;
    dev->release = release;
    *out = c;
    return TESS_OK;
}

int app_tile_cl_run(const app_tile_cl_kernel *k, tess_tile_opencl *dev, const tess_tile_box *box,
                    const void *arg, const void *in, size_t in_len, void *out, size_t out_len,
                    size_t n)
{
    app_tile_cl *c = NULL;
    int rc = prepare(k, dev, arg, &c);
    if (rc != TESS_OK) return rc;
    cl_int err = CL_SUCCESS;
    cl_mem din = in_len ? clCreateBuffer(dev->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                         in_len, (void *)in, &err)
                        : NULL;
    cl_mem dout = err == CL_SUCCESS
                      ? clCreateBuffer(dev->context, CL_MEM_WRITE_ONLY, out_len, NULL, &err)
                      : NULL;
    if (err == CL_SUCCESS) {
        if (din) clSetKernelArg(c->kernel, k->in_arg, sizeof din, &din);
        clSetKernelArg(c->kernel, k->out_arg, sizeof dout, &dout);
        k->args(c, box, arg);
        err = tess_tile_opencl_enqueue_1d(dev, c->kernel, n);
    }
    if (err == CL_SUCCESS)
        err = clEnqueueReadBuffer(dev->queue, dout, CL_TRUE, 0, out_len, out, 0, NULL, NULL);
    if (din) clReleaseMemObject(din);
    if (dout) clReleaseMemObject(dout);
    if (err != CL_SUCCESS)
        return tess_set_error(dev->ctx, TESS_ERR_KERNEL, "opencl: %s failed on %s (%d)", k->what,
                              dev->name, (int)err);
    return TESS_OK;
}

#endif
