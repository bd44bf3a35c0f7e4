/*
 * texture_cuda.c — launches the texture CUDA kernel (texture_cuda.cu,
 * embedded by the build) on a CUDA processor's stream: one thread per
 * block of the image.  Without CUDA in the build the kernel is NULL.
 */
#include <stdint.h>
#include "texture.h"

#if TESS_HAVE_CUDA
#include "tessera/tile_cuda.h"

extern const unsigned char texture_cuda_fatbin[];

static int tex_kernel_cu(const tess_tile_box *box, const void *in, void *out, void *device,
                         void *arg)
{
    tess_tile_cuda *dev = device;
    const tex_params *p = arg;
    if (dev->user == NULL) {
        int rc = tess_tile_cuda_function(dev, texture_cuda_fatbin, "tex", &dev->user);
        if (rc != TESS_OK) return rc;
    }
    long tw = (long)(box->hi[1] - box->lo[1]), n = tw * (long)(box->hi[0] - box->lo[0]);
    long by0 = (long)box->lo[0], bx0 = (long)box->lo[1], h = (long)p->height, w = (long)p->width;
    int s = p->block;
    void *args[] = {&in, &out, &s, &by0, &bx0, &tw, &n, &h, &w};
    return tess_tile_cuda_launch_1d(dev, dev->user, (size_t)n, args);
}

const tess_tile_kernel_fn tex_kernel_cuda = tex_kernel_cu;
#else
const tess_tile_kernel_fn tex_kernel_cuda = NULL;
#endif
