/*
 * sar_kernel.c — backprojection of one pixel on the CPU: for every pulse,
 * the distance from the platform to the pixel and its phase in double
 * precision, the range-compressed sample interpolated linearly at that
 * distance and accumulated in complex float (the PERFECT suite's
 * formulation).  sar_opencl.c does the same operations in the same order.
 */
#include <math.h>
#include "sar.h"

void sar_pixel(const sar_scene *s, int64_t ix, int64_t iy, float out[2])
{
    double px = s->x0 + (double)ix * s->dx, py = s->y0 + (double)iy * s->dy;
    double last_bin = (double)(s->bins - 1);
    float re = 0.0f, im = 0.0f;
    for (uint32_t p = 0; p < s->pulses; p++) {
        const double *q = s->pos + 3 * (size_t)p;
        double ex = q[0] - px, ey = q[1] - py, ez = q[2];
        double r = sqrt(ex * ex + ey * ey + ez * ez);
        double bin = (r - s->r0) / s->dr;
        if (!(bin >= 0.0 && bin < last_bin)) continue;
        uint32_t b = (uint32_t)bin;
        float w = (float)(bin - (double)b);
        const float *v = s->samples + 2 * ((size_t)p * s->bins + b);
        float sr = (1.0f - w) * v[0] + w * v[2];
        float si = (1.0f - w) * v[1] + w * v[3];
        double phase = 2.0 * s->ku * r;
        float c = (float)cos(phase), sn = (float)sin(phase);
        re += sr * c - si * sn;
        im += sr * sn + si * c;
    }
    out[0] = re;
    out[1] = im;
}

int sar_kernel_cpu(const tess_tile_box *box, const void *in, void *out, void *device, void *arg)
{
    (void)in;
    (void)device;
    float *o = out;
    for (int64_t iy = box->lo[0]; iy < box->hi[0]; iy++)
        for (int64_t ix = box->lo[1]; ix < box->hi[1]; ix++, o += 2) sar_pixel(arg, ix, iy, o);
    return TESS_OK;
}
