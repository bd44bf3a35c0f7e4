/*
 * sar_cuda.cu — backprojection for CUDA processors: the operations of
 * sar_kernel.c in the same order, one thread per pixel, compiled without
 * contraction and with IEEE division and square root (--fmad=false
 * -prec-div=true -prec-sqrt=true, cmake/TesseraCuda.cmake).  The cosine and
 * sine are sar_trig.h's, not CUDA's (within 2 ulp, so not the C library's
 * bits), so the images are meant to equal the CPU's to the bit
 * (docs/tiles.md).  Device code only; sar_cuda.c launches it.
 */
typedef unsigned long long sar_u64;
typedef long long sar_i64;
__device__ static sar_u64 sar_bits(double x) { return (sar_u64)__double_as_longlong(x); }
#define SAR_TABLE static const

#include "sar_trig.h"
/* Every function and table of the formula is `static`: make each a device one. */
#define static static __device__
SAR_TRIG(SAR_AS_C)
#undef static

extern "C" __global__ void sar(const double *pos, const float *smp, unsigned pulses, unsigned bins,
                               double r0, double dr, double ku, double x0, double y0, double dx,
                               double dy, long ix0, long iy0, long tw, long n, float *out)
{
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double px = x0 + (double)(ix0 + i % tw) * dx, py = y0 + (double)(iy0 + i / tw) * dy;
    double last_bin = (double)(bins - 1);
    float re = 0.0f, im = 0.0f;
    for (unsigned p = 0; p < pulses; p++) {
        double ex = pos[3 * p] - px, ey = pos[3 * p + 1] - py, ez = pos[3 * p + 2];
        double r = __dsqrt_rn(ex * ex + ey * ey + ez * ez);
        double bin = (r - r0) / dr;
        if (!(bin >= 0.0 && bin < last_bin)) continue;
        unsigned b = (unsigned)bin;
        float w = (float)(bin - (double)b);
        const float *v = smp + 2 * ((unsigned long)p * bins + b);
        float sr = (1.0f - w) * v[0] + w * v[2];
        float si = (1.0f - w) * v[1] + w * v[3];
        double phase = 2.0 * ku * r;
        double cd, sd;
        sar_cos_sin(phase, &cd, &sd);
        float c = (float)cd, sn = (float)sd;
        re += sr * c - si * sn;
        im += sr * sn + si * c;
    }
    out[2 * i] = re;
    out[2 * i + 1] = im;
}
