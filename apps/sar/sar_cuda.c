/*
 * sar_cuda.c — launches the backprojection CUDA kernel (sar_cuda.cu,
 * embedded by the build) on a CUDA processor's stream, one thread per
 * pixel; the scene's positions and samples are copied to each device once
 * per run.  Without CUDA in the build the kernel is NULL.
 */
#include <stdint.h>
#include <stdlib.h>
#include "sar.h"

#if TESS_HAVE_CUDA
#include "tessera/tile_cuda.h"

extern const unsigned char sar_cuda_fatbin[];

typedef struct sar_cu {
    tess_tile_cuda *dev;
    void *fn, *pos, *smp;
} sar_cu;

static void sar_cu_release(void *user)
{
    sar_cu *u = user;
    tess_tile_cuda_free(u->dev, u->pos);
    tess_tile_cuda_free(u->dev, u->smp);
    free(u);
}

static int sar_cu_setup(tess_tile_cuda *dev, const sar_scene *s)
{
    sar_cu *u = calloc(1, sizeof *u);
    if (u == NULL) return tess_set_error(dev->ctx, TESS_ERR_NOMEM, "out of memory");
    u->dev = dev;
    dev->user = u;
    dev->release = sar_cu_release;
    int rc = tess_tile_cuda_function(dev, sar_cuda_fatbin, "sar", &u->fn);
    if (rc == TESS_OK)
        rc = tess_tile_cuda_upload(dev, s->pos, 3 * sizeof(double) * s->pulses, &u->pos);
    if (rc == TESS_OK)
        rc = tess_tile_cuda_upload(dev, s->samples, 2 * sizeof(float) * (size_t)s->pulses * s->bins,
                                   &u->smp);
    return rc;
}

static int sar_kernel_cu(const tess_tile_box *box, const void *in, void *out, void *device,
                         void *arg)
{
    (void)in;
    tess_tile_cuda *dev = device;
    const sar_scene *s = arg;
    if (dev->user == NULL) {
        int rc = sar_cu_setup(dev, s);
        if (rc != TESS_OK) return rc;
    }
    sar_cu *u = dev->user;
    unsigned pulses = s->pulses, bins = s->bins;
    double d[7] = {s->r0, s->dr, s->ku, s->x0, s->y0, s->dx, s->dy};
    long tw = (long)(box->hi[1] - box->lo[1]);
    long g[4] = {(long)box->lo[1], (long)box->lo[0], tw, tw * (long)(box->hi[0] - box->lo[0])};
    void *args[] = {&u->pos, &u->smp, &pulses, &bins, &d[0], &d[1], &d[2], &d[3],
                    &d[4],   &d[5],   &d[6],   &g[0], &g[1], &g[2], &g[3], &out};
    return tess_tile_cuda_launch_1d(dev, u->fn, (size_t)g[3], args);
}

const tess_tile_kernel_fn sar_kernel_cuda = sar_kernel_cu;
#else
const tess_tile_kernel_fn sar_kernel_cuda = NULL;
#endif
