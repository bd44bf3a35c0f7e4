/*
 * rng.h — counter-based random numbers.  A value is a pure function of
 * (seed, stream, counter), so any rank or worker can produce the number for
 * "edge 1234" or "point 17, coordinate 3" without sharing generator state,
 * and results do not depend on the rank or worker count.
 * The mixing function is the finaliser of SplitMix64 applied in a chain.
 */
#ifndef TESSERA_RNG_H
#define TESSERA_RNG_H

#include <stdint.h>

static inline uint64_t tess_mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* 64 random bits for (seed, stream, counter). */
static inline uint64_t tess_rng_u64(uint64_t seed, uint64_t stream, uint64_t counter)
{
    return tess_mix64(tess_mix64(tess_mix64(seed) ^ stream) ^ counter);
}

/* Uniform double in [0, 1) with 53 random bits. */
static inline double tess_rng_unit(uint64_t seed, uint64_t stream, uint64_t counter)
{
    return (double)(tess_rng_u64(seed, stream, counter) >> 11) * 0x1.0p-53;
}

#endif
