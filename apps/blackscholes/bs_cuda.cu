/*
 * bs_cuda.cu — the Black-Scholes kernel for CUDA processors, from the same
 * formula as the CPU and OpenCL kernels (bs_formula.h, with its own exp and
 * log).  Compiled by nvcc --fatbin with --fmad=false -prec-div=true
 * -prec-sqrt=true (cmake/TesseraCuda.cmake): no contraction, IEEE division
 * and square root, so the prices are meant to equal the CPU's to the bit.
 * Device code only; bs_cuda.c launches it.
 */
#include <math.h>

__device__ static unsigned bs_bits(float x) { return __float_as_uint(x); }
__device__ static float bs_float(unsigned u) { return __uint_as_float(u); }
#define bs_fabs fabsf
#define bs_sqrt __fsqrt_rn

#include "bs_formula.h"
/* Every function of the formula is `static`: make each a device function. */
#define static static __device__
BS_FORMULA(BS_AS_C)
#undef static

extern "C" __global__ void bs(const float *in, float *out, float r, float v, int iterations, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    volatile float vs = in[3 * i]; /* read anew each time: no merged iterations */
    float x = in[3 * i + 1], t = in[3 * i + 2], call = 0, put = 0;
    for (int k = 0; k < iterations; k++) bs_price_one(vs, x, t, r, v, &call, &put);
    out[2 * i] = call;
    out[2 * i + 1] = put;
}
