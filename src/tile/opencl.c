/*
 * opencl.c — OpenCL processors of the tiles face: "opencl:N" opens device N
 * (counted over every platform the ICD loader lists) with its own context
 * and in-order queue.  Built only where the OpenCL headers and loader are
 * (TESS_HAVE_OPENCL); elsewhere an opencl processor is a clear error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tile/proc.h"

#if TESS_HAVE_OPENCL
#include "tessera/tile_opencl.h"
#include "tile/opencl_cache.h"

#define MAX_CACHED 8

/* The device a kernel sees (pub, first: the kernel gets &pub) and the
 * programs it built through the cache, saved when it closes. */
typedef struct cl_dev {
    tess_tile_opencl pub;
    tess__cl_cached cached[MAX_CACHED];
    int ncached;
} cl_dev;

#define NO_PLATFORM_HINT                                                                         \
    "install an OpenCL driver (Debian: apt-get install pocl-opencl-icd for the CPU, or the GPU " \
    "vendor's ICD)"

/* Device n over every platform. */
static int find_device(tess_ctx *ctx, int n, cl_platform_id *pl_out, cl_device_id *dev_out)
{
    cl_platform_id pls[16];
    cl_uint npl = 0;
    if (clGetPlatformIDs(16, pls, &npl) != CL_SUCCESS || npl == 0)
        return tess_set_error(ctx, TESS_ERR_UNSUPPORTED, "opencl: no OpenCL platform found; %s",
                              NO_PLATFORM_HINT);
    int seen = 0;
    for (cl_uint p = 0; p < npl && p < 16; p++) {
        cl_device_id devs[16];
        cl_uint nd = 0;
        if (clGetDeviceIDs(pls[p], CL_DEVICE_TYPE_ALL, 16, devs, &nd) != CL_SUCCESS) continue;
        for (cl_uint d = 0; d < nd && d < 16; d++, seen++) {
            if (seen != n) continue;
            *pl_out = pls[p];
            *dev_out = devs[d];
            return TESS_OK;
        }
    }
    return tess_set_error(ctx, TESS_ERR_UNSUPPORTED,
                          "opencl:%d: there are only %d OpenCL devices on this machine", n, seen);
}

int tess__tile_opencl_open(tess_ctx *ctx, const tess__tile_proc_spec *spec, void **device)
{
    cl_dev *full = calloc(1, sizeof *full);
    TESS_RETURN_IF(ctx, full == NULL, TESS_ERR_NOMEM, "out of memory");
    tess_tile_opencl *d = &full->pub;
    d->ctx = ctx;
    int rc = find_device(ctx, spec->device, &d->platform, &d->device);
    cl_int err = CL_SUCCESS;
    if (rc == TESS_OK) d->context = clCreateContext(NULL, 1, &d->device, NULL, NULL, &err);
    if (rc == TESS_OK && err == CL_SUCCESS)
        d->queue = clCreateCommandQueue(d->context, d->device, 0, &err);
    if (rc == TESS_OK && err != CL_SUCCESS)
        rc = tess_set_error(ctx, TESS_ERR_UNSUPPORTED,
                            "opencl:%d: cannot create a context or queue (OpenCL error %d)",
                            spec->device, (int)err);
    if (rc != TESS_OK) {
        tess__tile_opencl_close(d);
        return rc;
    }
    clGetDeviceInfo(d->device, CL_DEVICE_NAME, sizeof d->name - 1, d->name, NULL);
    *device = d;
    return TESS_OK;
}

void tess__tile_opencl_close(void *device)
{
    cl_dev *full = device;
    tess_tile_opencl *d = device;
    if (d == NULL) return;
    for (int i = 0; i < full->ncached; i++) tess__cl_cache_save(d, &full->cached[i]);
    if (d->release && d->user) d->release(d->user);
    if (d->queue) clReleaseCommandQueue(d->queue);
    if (d->context) clReleaseContext(d->context);
    free(d);
}

int tess_tile_opencl_build(tess_tile_opencl *dev, const char *source, const char *options,
                           cl_program *program)
{
    cl_dev *full = (cl_dev *)dev;
    cl_program p = NULL;
    tess__cl_cached rec;
    cl_int err = tess__cl_cache_build(dev, source, options, &p, &rec);
    if (rec.program != NULL && full->ncached < MAX_CACHED) full->cached[full->ncached++] = rec;
    else if (rec.path != NULL) tess__cl_cache_save(dev, &rec); /* no room to keep it: saved now */
    if (err != CL_SUCCESS && p == NULL)
        return tess_set_error(dev->ctx, TESS_ERR_KERNEL, "opencl: cannot create a program (%d)",
                              (int)err);
    if (err != CL_SUCCESS) {
        char log[2048] = "";
        size_t len = 0;
        clGetProgramBuildInfo(p, dev->device, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, &len);
        if (len > sizeof log - 1) len = sizeof log - 1;
        log[len] = '\0';
        for (size_t i = 0; i + 1 < len; i++) /* one line, whatever the driver wrote */
            if (log[i] == '\n' || log[i] == '\0' || log[i] == '\r') log[i] = ' ';
        clReleaseProgram(p);
        return tess_set_error(dev->ctx, TESS_ERR_KERNEL,
                              "opencl: the kernel does not build on %s: %s", dev->name, log);
    }
    *program = p;
    return TESS_OK;
}

/* The work-group size: 64 work-items, or the kernel's limit on the device
 * if lower (a kernel that needs many registers can have a limit below the
 * device's). */
static size_t group_size(const tess_tile_opencl *dev, cl_kernel kernel)
{
    size_t most = 0;
    if (clGetKernelWorkGroupInfo(kernel, dev->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof most, &most,
                                 NULL) != CL_SUCCESS ||
        most == 0)
        return 1;
    return most < 64 ? most : 64;
}

cl_int tess_tile_opencl_enqueue_1d(tess_tile_opencl *dev, cl_kernel kernel, size_t n)
{
    size_t local = group_size(dev, kernel);
    size_t global = (n + local - 1) / local * local;
    if (global == 0) return CL_SUCCESS;
    return clEnqueueNDRangeKernel(dev->queue, kernel, 1, NULL, &global, &local, 0, NULL, NULL);
}

#else

int tess__tile_opencl_open(tess_ctx *ctx, const tess__tile_proc_spec *spec, void **device)
{
    (void)device;
    return tess_set_error(ctx, TESS_ERR_UNSUPPORTED,
                          "processor '%s': this build has no OpenCL (install ocl-icd-opencl-dev "
                          "and opencl-c-headers, and pocl-opencl-icd to run it on the CPU, then "
                          "rebuild)",
                          spec->text);
}

void tess__tile_opencl_close(void *device) { (void)device; }

#endif
