/*
 * texture_cuda.cu — the texture-feature kernel for CUDA processors, from
 * the same formula as the CPU and OpenCL kernels (texture_features.h), one
 * thread per block, compiled without contraction and with IEEE division and
 * square root (cmake/TesseraCuda.cmake).  Device code only; texture_cuda.c
 * launches it.
 */
#define TEX_GLOBAL
#define tex_sqrt __dsqrt_rn
#include "texture_features.h"
/* The formula's two functions return void: make them device functions. */
#define void __device__ void
TEX_FORMULA(TEX_AS_C)
#undef void

extern "C" __global__ void tex(const unsigned char *in, float *out, int s, long by0, long bx0,
                               long tw, long n, long h, long w)
{
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const unsigned char *rec = in + i * (long)(s + 2) * (s + 2);
    float f[16];
    tex_glcm(rec, s, f);
    tex_lbp(rec, s, (by0 + i / tw) * s, (bx0 + i % tw) * s, h, w, f);
    for (int k = 0; k < 16; k++) out[16 * i + k] = f[k];
}
