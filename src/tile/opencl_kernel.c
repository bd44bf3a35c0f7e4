/*
 * opencl_kernel.c — tess_tile_opencl_run (tile_opencl.h): the setup every
 * one-work-item-per-cell OpenCL tile kernel repeated around its few lines
 * of OpenCL C (52 lines around 5 in a user's Mandelbrot, issue 42): build
 * once per device and keep, per tile make the buffers, set the parameters,
 * run, read back.  Only with TESS_HAVE_OPENCL.
 */
#include <stdlib.h>
#include <string.h>
#include "core/internal.h"

#if TESS_HAVE_OPENCL
#include "tessera/tile_opencl.h"

/* What a kernel keeps on one device (dev->user). */
typedef struct cl_kstate {
    const tess_tile_opencl_kernel *k;
    cl_program program;
    cl_kernel kernel;
} cl_kstate;

static void kstate_release(void *user)
{
    cl_kstate *s = user;
    if (s->kernel) clReleaseKernel(s->kernel);
    if (s->program) clReleaseProgram(s->program);
    free(s);
}

static int kstate_build(tess_tile_opencl *dev, const tess_tile_opencl_kernel *k, cl_kstate *s)
{
    int rc = tess_tile_opencl_build(dev, k->source, k->options, &s->program);
    cl_int err = CL_SUCCESS;
    if (rc == TESS_OK) s->kernel = clCreateKernel(s->program, k->name, &err);
    TESS_RETURN_IF(dev->ctx, rc == TESS_OK && err != CL_SUCCESS, TESS_ERR_KERNEL,
                   "opencl: the program has no kernel '%s' (OpenCL error %d)", k->name, (int)err);
    return rc;
}

/* The kernel's state on dev, built at its first tile there. */
static int kstate_of(tess_tile_opencl *dev, const tess_tile_opencl_kernel *k, cl_kstate **out)
{
    cl_kstate *s = dev->user;
    if (s != NULL && dev->release == kstate_release && s->k == k) {
        *out = s;
        return TESS_OK;
    }
    TESS_RETURN_IF(dev->ctx, s != NULL, TESS_ERR_INVAL,
                   "opencl kernel '%s': the device's user state holds something else", k->name);
    s = calloc(1, sizeof *s);
    TESS_RETURN_IF(dev->ctx, s == NULL, TESS_ERR_NOMEM, "out of memory");
    s->k = k;
    int rc = kstate_build(dev, k, s);
    if (rc != TESS_OK) {
        kstate_release(s);
        return rc;
    }
    dev->user = s;
    dev->release = kstate_release;
    *out = s;
    return TESS_OK;
}

/* "loD" or "hiD" with D a dimension of the box: *edge, 1; else 0. */
static int edge_param(const char *name, size_t len, const tess_tile_box *box, cl_long *edge)
{
    if (len != 3 || name[2] < '0' || name[2] >= '0' + box->ndims) return 0;
    int d = name[2] - '0';
    if (memcmp(name, "lo", 2) == 0) *edge = box->lo[d];
    else if (memcmp(name, "hi", 2) == 0) *edge = box->hi[d];
    else return 0;
    return 1;
}

/* The value of one named parameter for a tile; 0 when the name is unknown. */
static int param_value(const char *name, size_t len, const tess_tile_box *box, const cl_mem *bufs,
                       const void **value, size_t *size, cl_int *cells, cl_long *edge)
{
    if (len == 2 && memcmp(name, "in", 2) == 0) *value = &bufs[0], *size = sizeof(cl_mem);
    else if (len == 3 && memcmp(name, "out", 3) == 0) *value = &bufs[1], *size = sizeof(cl_mem);
    else if (len == 5 && memcmp(name, "cells", 5) == 0) *value = cells, *size = sizeof *cells;
    else if (edge_param(name, len, box, edge)) *value = edge, *size = sizeof *edge;
    else return 0;
    return 1;
}

/* Set the parameters `params` names; *next gets the index after them. */
static int set_params(tess_tile_opencl *dev, const tess_tile_opencl_kernel *k, cl_kernel kernel,
                      const tess_tile_box *box, cl_mem *bufs, cl_int cells, cl_uint *next)
{
    const char *p = k->params ? k->params : "";
    cl_uint i = 0;
    while (*p) {
        while (*p == ' ' || *p == ',') p++;
        size_t len = strcspn(p, ", ");
        if (len == 0) break;
        const void *value = NULL;
        size_t size = 0;
        cl_long edge = 0;
        TESS_RETURN_IF(dev->ctx, !param_value(p, len, box, bufs, &value, &size, &cells, &edge),
                       TESS_ERR_INVAL,
                       "opencl kernel '%s': params: unknown '%.*s' (in, out, cells, loD, hiD for "
                       "D below %d)",
                       k->name, (int)len, p, box->ndims);
        cl_int err = clSetKernelArg(kernel, i++, size, value);
        TESS_RETURN_IF(dev->ctx, err != CL_SUCCESS, TESS_ERR_KERNEL,
                       "opencl kernel '%s': parameter %u (%.*s) not set (OpenCL error %d)", k->name,
                       i - 1, (int)len, p, (int)err);
        p += len;
    }
    *next = i;
    return TESS_OK;
}

static uint64_t box_cells(const tess_tile_box *b)
{
    uint64_t n = 1;
    for (int d = 0; d < b->ndims; d++) n *= (uint64_t)(b->hi[d] - b->lo[d]);
    return n;
}

/* Buffers for a tile: bufs[0] the input (NULL without), bufs[1] the output. */
static cl_int make_buffers(tess_tile_opencl *dev, const tess_tile_opencl_kernel *k, const void *in,
                           size_t n, cl_mem *bufs)
{
    cl_int err = CL_SUCCESS;
    size_t in_len = k->in_bytes * n, out_len = k->out_bytes * n;
    bufs[0] = in_len && in ? clCreateBuffer(dev->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                            in_len, (void *)in, &err)
                           : NULL;
    bufs[1] = err == CL_SUCCESS ? clCreateBuffer(dev->context, CL_MEM_WRITE_ONLY,
                                                 out_len ? out_len : 1, NULL, &err)
                                : NULL;
    return err;
}

static cl_int run_tile(tess_tile_opencl *dev, const tess_tile_opencl_kernel *k, cl_kstate *s,
                       const tess_tile_box *box, void *out, void *arg, cl_mem *bufs, int *rc)
{
    size_t n = (size_t)box_cells(box);
    cl_uint next = 0;
    *rc = set_params(dev, k, s->kernel, box, bufs, (cl_int)n, &next);
    if (*rc != TESS_OK) return CL_SUCCESS;
    cl_int err = k->args ? k->args(s->kernel, next, box, arg) : CL_SUCCESS;
    if (err == CL_SUCCESS) err = tess_tile_opencl_enqueue_1d(dev, s->kernel, n);
    if (err == CL_SUCCESS)
        err = clEnqueueReadBuffer(dev->queue, bufs[1], CL_TRUE, 0, k->out_bytes * n, out, 0, NULL,
                                  NULL);
    return err;
}

int tess_tile_opencl_run(const tess_tile_opencl_kernel *k, const tess_tile_box *box, const void *in,
                         void *out, void *device, void *arg)
{
    tess_tile_opencl *dev = device;
    cl_kstate *s = NULL;
    int rc = kstate_of(dev, k, &s);
    if (rc != TESS_OK) return rc;
    cl_mem bufs[2] = {NULL, NULL};
    cl_int err = make_buffers(dev, k, in, (size_t)box_cells(box), bufs);
    if (err == CL_SUCCESS) err = run_tile(dev, k, s, box, out, arg, bufs, &rc);
    for (int i = 0; i < 2; i++)
        if (bufs[i]) clReleaseMemObject(bufs[i]);
    if (rc != TESS_OK) return rc;
    TESS_RETURN_IF(dev->ctx, err != CL_SUCCESS, TESS_ERR_KERNEL,
                   "opencl kernel '%s' failed on %s (OpenCL error %d)", k->name, dev->name,
                   (int)err);
    return TESS_OK;
}

#endif
