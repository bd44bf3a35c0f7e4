/*
 * bs_cuda.c — launches the Black-Scholes CUDA kernel (bs_cuda.cu, embedded
 * as a fat binary by the build) on a CUDA processor's stream: one thread
 * per option.  Without CUDA in the build the kernel is NULL.
 */
#include <stdint.h>
#include "blackscholes.h"

#if TESS_HAVE_CUDA
#include "tessera/tile_cuda.h"

extern const unsigned char bs_cuda_fatbin[];

static int bs_kernel_cu(const tess_tile_box *box, const void *in, void *out, void *device,
                        void *arg)
{
    tess_tile_cuda *dev = device;
    const bs_params *p = arg;
    if (dev->user == NULL) {
        int rc = tess_tile_cuda_function(dev, bs_cuda_fatbin, "bs", &dev->user);
        if (rc != TESS_OK) return rc;
    }
    int n = (int)(box->hi[0] - box->lo[0]), iters = p->iterations;
    float r = p->riskfree, v = p->volatility;
    void *args[] = {&in, &out, &r, &v, &iters, &n};
    return tess_tile_cuda_launch_1d(dev, dev->user, (size_t)n, args);
}

const tess_tile_kernel_fn bs_kernel_cuda = bs_kernel_cu;
#else
const tess_tile_kernel_fn bs_kernel_cuda = NULL;
#endif
