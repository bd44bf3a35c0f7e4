/*
 * tile_cl.h — what the OpenCL kernels of the tiles applications share
 * (blackscholes, sar, texture): the application's program and kernel built
 * on a device at its first tile and kept until the device closes, and one
 * tile run as input buffer in, kernel over one work item per cell, output
 * read back.  Only with TESS_HAVE_OPENCL.
 */
#ifndef TESS_APPS_TILE_CL_H
#define TESS_APPS_TILE_CL_H

#if TESS_HAVE_OPENCL
#include "tessera/tile_opencl.h"

/* An application's state on one device (tess_tile_opencl.user). */
typedef struct app_tile_cl {
    cl_program program;
    cl_kernel kernel;
    cl_mem keep[2]; /* buffers made once per device (sar's scene), or NULL */
} app_tile_cl;

/* Make c->keep from arg on a new device: TESS_OK or the error set on dev->ctx. */
typedef int (*app_tile_cl_setup_fn)(tess_tile_opencl *dev, app_tile_cl *c, const void *arg);
/* Set c->kernel's other arguments for a tile from the application's arg. */
typedef void (*app_tile_cl_args_fn)(const app_tile_cl *c, const tess_tile_box *box,
                                    const void *arg);

typedef struct app_tile_cl_kernel {
    const char *source, *options; /* the program, built once per device */
    const char *name;             /* its kernel */
    const char *what;             /* in messages: "opencl: WHAT failed on DEVICE" */
    cl_uint in_arg, out_arg;      /* the kernel's input and output buffer arguments */
    app_tile_cl_setup_fn setup;   /* optional */
    app_tile_cl_args_fn args;
} app_tile_cl_kernel;

/* Run k over n work items for a tile: in_len bytes of `in` to the device
 * (none when 0: in_arg is not set), out_len bytes back into `out`.  TESS_OK or the error set
 * on the device's context. */
int app_tile_cl_run(const app_tile_cl_kernel *k, tess_tile_opencl *dev, const tess_tile_box *box,
                    const void *arg, const void *in, size_t in_len, void *out, size_t out_len,
                    size_t n);
#endif

#endif
