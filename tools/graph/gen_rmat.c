/*
 * gen_rmat.c — R-MAT graphs with the Graph500 parameters a=0.57, b=0.19,
 * c=0.19, d=0.05 over 2^SCALE vertex ids.  Edge e descends SCALE levels of
 * the adjacency matrix; level l picks a quadrant with the uniform number
 * u = tess_rng_unit(seed, e, l):  u < a: top-left, < a+b: top-right (dst bit
 * set), < a+b+c: bottom-left (src bit set), else bottom-right (both).
 * Level 0 decides the most significant bit.  The ids are then passed
 * through a seeded bijection of [0, 2^SCALE) so that the high-degree
 * vertices are not all the smallest ids (Graph500 permutes vertices too).
 *
 * The three SplitMix rounds of tess_rng_u64 are hoisted: mix(seed) once per
 * graph, mix(.. ^ e) once per edge, one round per level.  The values are
 * exactly those of tess_rng_u64/tess_rng_unit.
 */
#include <math.h>

#include "generators_internal.h"
#include "tessera/rng.h"
#include "tessera/tessera.h"

#define RMAT_A 0.57
#define RMAT_B 0.19
#define RMAT_C 0.19

typedef struct scramble {
    uint64_t mask, mul1, mul2, add;
    unsigned shift;
} scramble;

/* Odd multipliers, an addition and xor-shifts are each invertible modulo
 * 2^SCALE, so their composition is a permutation of the ids. */
static scramble scramble_init(unsigned scale, uint64_t seed)
{
    scramble s;
    s.mask = scale >= 64 ? UINT64_MAX : (UINT64_C(1) << scale) - 1;
    s.mul1 = tess_rng_u64(seed, TG__STREAM_SCRAMBLE, 0) | 1;
    s.mul2 = tess_rng_u64(seed, TG__STREAM_SCRAMBLE, 1) | 1;
    s.add = tess_rng_u64(seed, TG__STREAM_SCRAMBLE, 2);
    s.shift = (scale + 1) / 2;
    return s;
}

static uint64_t scramble_id(const scramble *s, uint64_t x)
{
    x = (x * s->mul1) & s->mask;
    x ^= x >> s->shift;
    x = (x + s->add) & s->mask;
    x = (x * s->mul2) & s->mask;
    x ^= x >> s->shift;
    return x;
}

/* Thresholds on the top 53 bits: u < p  <=>  (r >> 11) < ceil(p * 2^53). */
static uint64_t threshold(double p) { return (uint64_t)ceil(p * 0x1.0p53); }

int tg__gen_rmat(unsigned scale, uint64_t edgefactor, uint64_t seed, tg__edges *out)
{
    uint64_t ne = edgefactor << scale;
    if (tg__edges_reserve(out, ne) != 0) return TESS_ERR_NOMEM;
    const uint64_t ta = threshold(RMAT_A), tab = threshold(RMAT_A + RMAT_B),
                   tabc = threshold(RMAT_A + RMAT_B + RMAT_C);
    const uint64_t mseed = tess_mix64(seed);
    const scramble sc = scramble_init(scale, seed);
    for (uint64_t e = 0; e < ne; e++) {
        const uint64_t h = tess_mix64(mseed ^ e);
        uint64_t s = 0, d = 0;
        for (unsigned l = 0; l < scale; l++) {
            /* Branch-free quadrant: the choice is random, so branches on it
             * would mispredict about half the time. */
            const uint64_t r = tess_mix64(h ^ l) >> 11;
            const unsigned shift = scale - 1 - l;
            s |= (uint64_t)(r >= tab) << shift;
            d |= (uint64_t)((r >= ta) ^ (r >= tab) ^ (r >= tabc)) << shift;
        }
        out->src[e] = scramble_id(&sc, s);
        out->dst[e] = scramble_id(&sc, d);
    }
    out->n = ne;
    return 0;
}
