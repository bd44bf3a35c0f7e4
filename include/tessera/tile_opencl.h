/*
 * tile_opencl.h — what an OpenCL kernel of the tiles face receives as its
 * `device` (tile.h): the processor's OpenCL context, queue and device, and
 * a place for the kernel's own per-device state (its built program).
 * Include only in code that is compiled against OpenCL (<CL/cl.h>, Debian's
 * opencl-c-headers); link with -lOpenCL (ocl-icd-opencl-dev).
 *
 * Output of an OpenCL kernel may differ from the CPU kernel's in the last
 * unit of the last place (the device's exp/log/sqrt); docs/tiles.md.
 */
#ifndef TESSERA_TILE_OPENCL_H
#define TESSERA_TILE_OPENCL_H

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include "tessera/tile.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tess_tile_opencl {
    tess_ctx *ctx;
    cl_platform_id platform;
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
    char name[128]; /* the device's name */
    /* The kernel's state for this device (a built program, buffers): NULL
     * at first; `release` (if set) is called with it when the run ends. */
    void *user;
    void (*release)(void *user);
} tess_tile_opencl;

/* Build `source` for the device into *program.  On failure the build log
 * is in tess_last_error() and TESS_ERR_KERNEL is returned. */
TESS_API int tess_tile_opencl_build(tess_tile_opencl *dev, const char *source, const char *options,
                                    cl_program *program);

/*
 * Enqueue `kernel` over n work-items in work-groups of one fixed size (64,
 * or the kernel's limit on the device if lower): the global size is n rounded up to a multiple of it, so the kernel must
 * return at once for get_global_id(0) >= n.  Use it rather than a NULL
 * local size: a driver left to choose derives the work-group size from the
 * global size, and PoCL compiles a kernel variant per work-group size, so
 * every new tile size cost a compile (measured: 0.2 s for a tile of 54,136
 * cells that runs in 15 ms).  Returns the OpenCL error code.
 */
TESS_API cl_int tess_tile_opencl_enqueue_1d(tess_tile_opencl *dev, cl_kernel kernel, size_t n);

/*
 * A tile kernel in a few lines: what a kernel of the form "one work-item
 * per cell, input cells in, output cells out" needs around its OpenCL C.
 * tess_tile_opencl_run builds `source` once per device (through the program
 * cache above) and keeps it in dev->user until the device closes, then for
 * each tile copies `in` to the device, sets the kernel's parameters, runs
 * one work-item per cell of the box (tess_tile_opencl_enqueue_1d: work-items
 * at or past `cells` must return) and reads the output back into `out`.
 *
 * `params` names the kernel's leading parameters in order, comma-separated:
 *   in      __global const T *: the tile's input  (in_bytes per cell)
 *   out     __global T *:       the tile's output (out_bytes per cell)
 *   cells   int:  the cells of the tile (the work-items that count)
 *   loD,hiD long: the tile's box in dimension D (lo0, hi0, lo1, ... hi3)
 * and `args` (optional) sets the ones after them, from index `next` on,
 * with clSetKernelArg (returning CL_SUCCESS or an OpenCL error).
 *
 *   static const tess_tile_opencl_kernel square = {
 *       .source = "__kernel void sq(__global const float *x, __global float *y, int n)"
 *                 "{ int i = get_global_id(0); if (i < n) y[i] = x[i] * x[i]; }",
 *       .name = "sq", .params = "in,out,cells", .in_bytes = 4, .out_bytes = 4};
 *   static int square_cl(const tess_tile_box *b, const void *in, void *out, void *dev,
 *                        void *arg)
 *   { return tess_tile_opencl_run(&square, b, in, out, dev, arg); }
 *
 * It owns dev->user (and dev->release) for one kernel: a kernel that keeps
 * state of its own there cannot use it.  TESS_OK, or TESS_ERR_KERNEL (the
 * build log, an OpenCL error) / TESS_ERR_INVAL (a bad params name) with
 * the message set on dev->ctx.  Called on the processor's thread.
 */
typedef struct tess_tile_opencl_kernel {
    const char *source;         /* OpenCL C */
    const char *options;        /* build options, or NULL */
    const char *name;           /* the __kernel function */
    const char *params;         /* its leading parameters (above) */
    size_t in_bytes, out_bytes; /* per cell, the job's */
    cl_int (*args)(cl_kernel kernel, cl_uint next, const tess_tile_box *box, void *arg);
} tess_tile_opencl_kernel;

TESS_API int tess_tile_opencl_run(const tess_tile_opencl_kernel *k, const tess_tile_box *box,
                                  const void *in, void *out, void *device, void *arg);

#ifdef __cplusplus
}
#endif

#endif
