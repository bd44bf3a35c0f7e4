/*
 * tile_cuda.h — what a CUDA kernel of the tiles face receives as its
 * `device` (tile.h), and how it loads and launches device code.  No CUDA
 * header or library is needed to use it: tessera loads the CUDA driver
 * (libcuda.so.1) at run time, so a program built with CUDA kernels starts
 * and runs its CPU and OpenCL processors on machines without a driver or a
 * GPU; only a `cuda` processor then fails, with one line.
 *
 * A CUDA kernel of a tile job is called with `in` and `out` as DEVICE
 * addresses (the tile's input already copied there, its output copied back
 * by tessera) and must only enqueue work on `dev->stream`: tessera splits a
 * large tile into parts over several streams, so the copies of one part
 * overlap the kernel of another.  Device code is given as an image that
 * cuModuleLoadData accepts (a fat binary or PTX from nvcc --fatbin); see
 * docs/tiles.md for an example.
 */
#ifndef TESSERA_TILE_CUDA_H
#define TESSERA_TILE_CUDA_H

#include <stddef.h>
#include "tessera/tile.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tess_tile_cuda {
    tess_ctx *ctx;
    int ordinal;            /* cuda:N */
    char name[128];         /* the device's name */
    int cc_major, cc_minor; /* compute capability */
    void *context; /* CUcontext: the device's primary context, current when a kernel runs */
    void *stream;  /* CUstream: the part being processed; enqueue only here */
    /* The kernel's state for this device (device copies of constant data):
     * NULL at first; `release` (if set) is called with it when the run ends. */
    void *user;
    void (*release)(void *user);
    void *impl; /* tessera's own */
} tess_tile_cuda;

/* The function `name` (extern "C" __global__) of the device code `image`,
 * loaded once per device and image and kept until the run ends.  On failure
 * the reason is in tess_last_error() and TESS_ERR_KERNEL is returned. */
TESS_API int tess_tile_cuda_function(tess_tile_cuda *dev, const void *image, const char *name,
                                     void **function);

/* Launch `function` on dev->stream over n threads in blocks of 128 (the
 * grid rounded up, so the kernel must return at once for an index >= n);
 * args as cuLaunchKernel takes them (an array of pointers to each
 * argument).  TESS_OK, or TESS_ERR_KERNEL with the driver's reason. */
TESS_API int tess_tile_cuda_launch_1d(tess_tile_cuda *dev, void *function, size_t n, void **args);

/* Copy `bytes` of host memory to new device memory (*device_ptr), waiting
 * until it is there: for constant data a kernel keeps in dev->user.  Free
 * it with tess_tile_cuda_free. */
TESS_API int tess_tile_cuda_upload(tess_tile_cuda *dev, const void *host, size_t bytes,
                                   void **device_ptr);
TESS_API void tess_tile_cuda_free(tess_tile_cuda *dev, void *device_ptr);

/* One line per fact for `tessera info`: whether this build has CUDA
 * kernels support and which architectures, the driver version (or "no
 * driver" and why), the devices found.  Writes at most len bytes. */
TESS_API void tess_tile_cuda_info(char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif
