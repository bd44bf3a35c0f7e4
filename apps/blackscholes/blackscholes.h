/*
 * blackscholes.h — European option pricing with the Black-Scholes formula as
 * the CUDA SDK's sample computes it (single precision, the polynomial
 * approximation of the normal CDF), as a tiles-face job: one option per cell
 * of a 1-D area.  docs/tiles.md.
 */
#ifndef TESS_APPS_BLACKSCHOLES_H
#define TESS_APPS_BLACKSCHOLES_H

#include <stdint.h>
#include "tessera/tile.h"

#define BS_IN_BYTES 12 /* float32 stock price, strike, years */
#define BS_OUT_BYTES 8 /* float32 call, put */

typedef struct bs_params {
    float riskfree, volatility;
    int iterations;      /* each option is priced this many times (the CCR knob) */
    tess_ctx *ctx;       /* for kernel error messages */
    int in_fd;           /* --input read by region (streamed), else -1 */
    const char *in_path; /* its name, for messages */
} bs_params;

/* Price options [0, n) of `in` into `out`, each `iterations` times. */
void bs_price(const float *in, float *out, int64_t n, const bs_params *p);
/* The tiles-face kernels: CPU, and OpenCL where the build has it (else NULL). */
int bs_kernel_cpu(const tess_tile_box *box, const void *in, void *out, void *device, void *arg);
extern const tess_tile_kernel_fn bs_kernel_opencl;
extern const tess_tile_kernel_fn bs_kernel_cuda; /* NULL without CUDA in the build */
/* Option i generated from seed as the SDK does (price 5-30, strike 1-100,
 * years 0.25-10), independent of which rank generates it. */
void bs_generate(uint64_t seed, int64_t first, int64_t n, float *in);

#endif
