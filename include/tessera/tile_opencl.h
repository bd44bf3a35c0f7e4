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

#ifdef __cplusplus
}
#endif

#endif
