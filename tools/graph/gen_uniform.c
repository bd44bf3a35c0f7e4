/*
 * gen_uniform.c — M edges with both endpoints uniform in [0, N): edge e's
 * source is tess_rng_u64(seed, e, 0) scaled to [0, N) by a 128-bit
 * multiply-high (floor(r * N / 2^64)), its destination the same with
 * counter 1.
 */
#include "generators_internal.h"
#include "tessera/rng.h"
#include "tessera/tessera.h"

static uint64_t scale_to(uint64_t r, uint64_t n)
{
    return (uint64_t)(((unsigned __int128)r * n) >> 64);
}

int tg__gen_uniform(uint64_t n, uint64_t m, uint64_t seed, tg__edges *out)
{
    if (tg__edges_reserve(out, m) != 0) return TESS_ERR_NOMEM;
    for (uint64_t e = 0; e < m; e++) {
        out->src[e] = scale_to(tess_rng_u64(seed, e, 0), n);
        out->dst[e] = scale_to(tess_rng_u64(seed, e, 1), n);
    }
    out->n = m;
    return 0;
}
