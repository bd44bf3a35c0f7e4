/*
 * sar_kernel.c — backprojection of one pixel on the CPU: for every pulse,
 * the distance from the platform to the pixel and its phase in double
 * precision, the range-compressed sample interpolated linearly at that
 * distance and accumulated in complex float (the PERFECT suite's
 * formulation).  sar_opencl.c and sar_cuda.cu do the same operations in
 * the same order, with the same cosine and sine (sar_trig.h) instead of the
 * C library's, and the build contracts nothing into fused multiply-adds
 * (CMakeLists.txt), so their images equal this one to the bit.
 */
#include <math.h>
#include <string.h>
#include "sar.h"
#include "sar_trig.h"

typedef uint64_t sar_u64;
typedef int64_t sar_i64;

static sar_u64 sar_bits(double x)
{
    sar_u64 u;
    memcpy(&u, &x, sizeof u);
    return u;
}

#define SAR_TABLE static const
SAR_TRIG(SAR_AS_C)

void sar_phase_cos_sin(double phase, double *c, double *s) { sar_cos_sin(phase, c, s); }

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
        double cd, sd;
        sar_cos_sin(phase, &cd, &sd);
        float c = (float)cd, sn = (float)sd;
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
