/*
 * sar_cuda.cu — backprojection for CUDA processors: the operations of
 * sar_kernel.c in the same order, one thread per pixel, compiled without
 * contraction and with IEEE division and square root.  Its double cos and
 * sin are CUDA's (within 2 ulp in double): rounded to float they agree with
 * the C library's except when the double lands within an ulp or two of a
 * float rounding boundary, so SAR images are compared within tolerance, as
 * on OpenCL (docs/tiles.md).  Device code only; sar_cuda.c launches it.
 */
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
        float c = (float)cos(phase), sn = (float)sin(phase);
        re += sr * c - si * sn;
        im += sr * sn + si * c;
    }
    out[2 * i] = re;
    out[2 * i + 1] = im;
}
