/*
 * tile_workers.c — what tile.h says about cfg.workers, checked: a tiles job
 * (docs/tiles.md's first program, smaller) gives the same output whatever
 * the worker count; the first worker of each rank is the controller and the
 * others stay idle.  Also the frees that accept NULL (tess_buf_free,
 * tess_tick_result_free, tess_tile_stats_free), and no barrier warning from
 * a tiles run however long it takes.  `tile_workers W` runs with
 * W workers per rank; under mpirun every rank runs it.  Prints one line per
 * check and "N passed, N failed".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tessera/tessera.h"
#include "tessera/tick.h"
#include "tessera/tile.h"

#include "checks.h"

enum { N = 1 << 16 };

static int square(const tess_tile_box *box, const void *in, void *out, void *device, void *arg)
{
    const float *x = in;
    float *y = out;
    (void)device, (void)arg;
    for (int64_t i = 0; i < box->hi[0] - box->lo[0]; i++) y[i] = x[i] * x[i];
    return TESS_OK;
}

static int control(tess_ctx *ctx, void *arg)
{
    tess_tile_job *job = arg;
    tess_tile_options opt = {.processors = "cpu*2"};
    tess_tile_stats st;
    int rc = tess_tile_run(ctx, job, &opt, &st);
    tess_tile_stats_free(&st);
    const float *x = job->input, *y = job->output;
    int ok = rc == TESS_OK;
    if (rc != TESS_OK) fprintf(stderr, "tile_workers: %s\n", tess_last_error(ctx));
    int bad = -1;
    for (int i = 0; ok && i < N; i++)
        if (!(ok = y[i] == x[i] * x[i])) bad = i;
    if (bad >= 0)
        fprintf(stderr, "tile_workers: cell %d is %g, not %g\n", bad, y[bad], x[bad] * x[bad]);
    check(ok, "the job's output, whatever the worker count");
    return rc;
}

int main(int argc, char **argv)
{
    tess_buf_free(NULL);
    tess_tick_result_free(NULL);
    tess_tile_stats_free(NULL);
    check(1, "tess_buf_free, tess_tick_result_free, tess_tile_stats_free accept NULL");
    float *x = malloc(N * sizeof *x), *y = calloc(N, sizeof *y);
    for (int i = 0; i < N; i++) x[i] = (float)(i % 4096);
    tess_tile_job job = {.name = "square",
                         .ndims = 1,
                         .extent = {N},
                         .min_tile = {256},
                         .max_tile = {N},
                         .in_bytes = 4,
                         .out_bytes = 4,
                         .input = x,
                         .input_lo = 0,
                         .input_hi = N,
                         .output = y};
    job.kernel[TESS_TILE_CPU] = square;
    tess_config cfg;
    tess_config_init(&cfg);
    cfg.workers = argc > 1 ? atoi(argv[1]) : 0; /* 0: one per core, the default */
    /* a tiles run is one barrier whose "has waited" warnings are off: even
     * this threshold must print none (tile_workers.sh looks) */
    cfg.barrier_warn_seconds = 1e-6;
    tess_ctx *ctx;
    int rc = tess_init(&cfg, &ctx);
    if (rc == TESS_OK) {
        /* ranks other than 0 pass an empty slab: rank 0 owns the input */
        if (tess_rank(ctx) != 0) job.input_lo = job.input_hi = 0;
        rc = tess_tile_register(ctx, &job);
        if (rc == TESS_OK) rc = tess_main(ctx, control, &job);
        tess_finalize(ctx);
    }
    free(x);
    free(y);
    return checks_report() || rc != TESS_OK;
}
