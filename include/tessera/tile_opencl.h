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

#ifdef __cplusplus
}
#endif

#endif
