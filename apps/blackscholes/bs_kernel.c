/*
 * bs_kernel.c — the Black-Scholes formula of the CUDA SDK sample (its
 * polynomial approximation of the cumulative normal distribution, in
 * single precision; bs_formula.h), on the CPU, and the generator of option
 * books.  Compiled without contracting a*b+c into fused multiply-adds
 * (CMakeLists.txt), as the OpenCL kernel is, so both agree to the bit.
 */
#include <math.h>
#include <string.h>
#include "blackscholes.h"
#include "bs_formula.h"
#include "tessera/rng.h"

static unsigned bs_bits(float x)
{
    unsigned u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static float bs_float(unsigned u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

#define bs_fabs fabsf
#define bs_sqrt sqrtf
BS_FORMULA(BS_AS_C)

void bs_price(const float *in, float *out, int64_t n, const bs_params *p)
{
    for (int64_t i = 0; i < n; i++) {
        float s = in[3 * i], x = in[3 * i + 1], t = in[3 * i + 2], call = 0, put = 0;
        for (int k = 0; k < p->iterations; k++) {
            /* The compiler must not see that every iteration is the same. */
            __asm__ volatile("" : "+m"(s), "+m"(x), "+m"(t));
            bs_price_one(s, x, t, p->riskfree, p->volatility, &call, &put);
        }
        out[2 * i] = call;
        out[2 * i + 1] = put;
    }
}

int bs_kernel_cpu(const tess_tile_box *box, const void *in, void *out, void *device, void *arg)
{
    (void)device;
    bs_price(in, out, box->hi[0] - box->lo[0], arg);
    return TESS_OK;
}

static float uniform(uint64_t seed, uint64_t stream, int64_t i, float lo, float hi)
{
    float t = (float)tess_rng_unit(seed, stream, (uint64_t)i);
    return (1.0f - t) * lo + t * hi;
}

void bs_generate(uint64_t seed, int64_t first, int64_t n, float *in)
{
    for (int64_t i = 0; i < n; i++) {
        in[3 * i] = uniform(seed, 1, first + i, 5.0f, 30.0f);
        in[3 * i + 1] = uniform(seed, 2, first + i, 1.0f, 100.0f);
        in[3 * i + 2] = uniform(seed, 3, first + i, 0.25f, 10.0f);
    }
}
