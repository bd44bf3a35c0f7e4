/*
 * tile_pipeline.c — pipelines of tile jobs on the public API
 * (tessera/tile_pipe.h): three stages over a 2-D area, each on its own CPU
 * processor, connected by streams with a small window (back-pressure on
 * every stream), give the output of the three functions composed; a stage
 * that fails ends the whole pipeline with its own message, never a hang;
 * wrong pipelines are refused with one line.
 *
 *   tile_pipeline MODE    ok | fail1 | fail3 | refuse | mpi
 *
 * fail1 and fail3: stage 1 or 3 fails at block row 300 (the other stages
 * are then held by the window or wait for cells).  mpi: run under mpirun,
 * the pipeline is refused on every rank.  Prints one line per check and
 * "N passed, N failed".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tessera/tile_pipe.h"

#include "checks.h"

enum { H = 512, W = 256, FAIL_ROW = 300 };

static const char *mode;

static double f1(int64_t r, int64_t c) { return (double)(r * W + c) * 0.5 + 1.0; }
static double f2(double v) { return v * v - 3.0; }
static double f3(double v) { return v / 7.0 + 1.0; }

static int fails_here(const tess_tile_box *b, const char *which)
{
    return strcmp(mode, which) == 0 && b->lo[0] <= FAIL_ROW && FAIL_ROW < b->hi[0];
}

static int stage1(const tess_tile_box *b, const void *in, void *out, void *dev, void *arg)
{
    double *o = out;
    (void)in, (void)dev;
    if (fails_here(b, "fail1"))
        return tess_set_error(arg, TESS_ERR_IO, "stage one failed at row %d", FAIL_ROW);
    for (int64_t r = b->lo[0]; r < b->hi[0]; r++)
        for (int64_t c = b->lo[1]; c < b->hi[1]; c++) *o++ = f1(r, c);
    return TESS_OK;
}

static int stage2(const tess_tile_box *b, const void *in, void *out, void *dev, void *arg)
{
    const double *x = in;
    double *o = out;
    (void)dev, (void)arg;
    for (uint64_t i = 0; i < (uint64_t)((b->hi[0] - b->lo[0]) * (b->hi[1] - b->lo[1])); i++)
        o[i] = f2(x[i]);
    return TESS_OK;
}

static int stage3(const tess_tile_box *b, const void *in, void *out, void *dev, void *arg)
{
    const double *x = in;
    double *o = out;
    (void)dev;
    if (fails_here(b, "fail3"))
        return tess_set_error(arg, TESS_ERR_IO, "stage three failed at row %d", FAIL_ROW);
    for (uint64_t i = 0; i < (uint64_t)((b->hi[0] - b->lo[0]) * (b->hi[1] - b->lo[1])); i++)
        o[i] = f3(x[i]);
    return TESS_OK;
}

typedef struct program {
    tess_tile_job job[3], lone; /* lone: a stage-2 job without its stream */
    double *out;
} program;

static tess_tile_job stage_job(const char *name, tess_tile_kernel_fn k, size_t in_bytes)
{
    tess_tile_job j = {.name = name,
                       .ndims = 2,
                       .extent = {H, W},
                       .min_tile = {1, W},
                       .max_tile = {H, W},
                       .in_bytes = in_bytes,
                       .out_bytes = sizeof(double)};
    j.kernel[TESS_TILE_CPU] = k;
    return j;
}

static tess_tile_pipeline pipeline_of(program *p)
{
    tess_tile_pipeline pl = {.nstages = 3, .window_bytes = 16 << 10}; /* 8 rows */
    for (int k = 0; k < 3; k++) {
        pl.stage[k] = &p->job[k];
        pl.opt[k].processors = "cpu";
    }
    return pl;
}

static void check_output(const program *p)
{
    int64_t bad = -1;
    for (int64_t i = 0; i < (int64_t)H * W && bad < 0; i++)
        if (p->out[i] != f3(f2(f1(i / W, i % W)))) bad = i;
    if (bad >= 0) fprintf(stderr, "tile_pipeline: cell %lld is %g\n", (long long)bad, p->out[bad]);
    check(bad < 0, "three stages at once: the three functions composed, to the bit");
}

static void run_ok(tess_ctx *ctx, program *p)
{
    tess_tile_pipeline pl = pipeline_of(p);
    tess_tile_pipeline_stats st;
    int rc = tess_tile_pipeline_run(ctx, &pl, &st);
    if (rc != TESS_OK) fprintf(stderr, "tile_pipeline: %s\n", tess_last_error(ctx));
    check(rc == TESS_OK, "a three-stage pipeline runs");
    if (rc != TESS_OK) return;
    check_output(p);
    int cells = 1;
    for (int k = 0; k < 3; k++) cells &= st.stage[k].cells == (uint64_t)H * W;
    check(cells && st.nstages == 3, "every stage processed every cell");
    int held = 1;
    for (int k = 0; k < 2; k++) {
        printf("stream %d: peak %zu bytes of %zu, writer held %.3f s, reader waited %.3f s\n", k,
               st.stream[k].peak_bytes, st.stream[k].window_bytes, st.stream[k].write_wait,
               st.stream[k].read_wait);
        held &= st.stream[k].held_bytes == 0 && st.stream[k].cells_out == (uint64_t)H * W;
    }
    check(held, "every cell left the streams");
    int bounded = 1; /* a reader waiting for cells may let a writer past by a tile or two */
    for (int k = 0; k < 2; k++) bounded &= st.stream[k].peak_bytes <= 2 * st.stream[k].window_bytes;
    check(bounded, "the streams held at most about their window");
    tess_tile_pipeline_stats_free(&st);
}

static void run_fail(tess_ctx *ctx, program *p, const char *want)
{
    tess_tile_pipeline pl = pipeline_of(p);
    tess_tile_pipeline_stats st;
    int rc = tess_tile_pipeline_run(ctx, &pl, &st);
    char why[512];
    tess_last_error_copy(ctx, why, sizeof why);
    printf("error: %s\n", why);
    check(rc != TESS_OK, "a failing stage fails the pipeline");
    check(strstr(why, want) != NULL, "with the failing stage's message");
    check(st.nstages == 0 && st.stage[0].procs == NULL, "and no statistics");
}

static void refused(tess_ctx *ctx, int rc, const char *want, const char *what)
{
    char why[512];
    tess_last_error_copy(ctx, why, sizeof why);
    printf("refused: %s\n", why);
    check(rc != TESS_OK && strstr(why, want) != NULL, what);
}

static void run_refusals(tess_ctx *ctx, program *p)
{
    tess_tile_stats one;
    refused(ctx, tess_tile_run(ctx, &p->job[1], NULL, &one), "tess_tile_pipeline_run",
            "a stage alone is refused by tess_tile_run");
    tess_tile_pipeline pl = pipeline_of(p), st2;
    tess_tile_pipeline_stats st;
    pl.stage[1] = &p->lone;
    refused(ctx, tess_tile_pipeline_run(ctx, &pl, &st), "tess_tile_stream_read",
            "a stage without its stream is refused");
    st2 = pipeline_of(p);
    st2.nstages = 4;
    st2.stage[3] = &p->job[2];
    refused(ctx, tess_tile_pipeline_run(ctx, &st2, &st), "workers",
            "more stages than workers is refused");
    pl = pipeline_of(p);
    pl.opt[0].processors = "opencl:9";
    refused(ctx, tess_tile_pipeline_run(ctx, &pl, &st), "processor",
            "a stage's processors are checked");
    run_ok(ctx, p); /* the context still runs a pipeline after the refusals */
}

static int control(tess_ctx *ctx, void *arg)
{
    program *p = arg;
    if (strcmp(mode, "ok") == 0) run_ok(ctx, p);
    else if (strcmp(mode, "fail1") == 0) run_fail(ctx, p, "stage one failed at row");
    else if (strcmp(mode, "fail3") == 0) run_fail(ctx, p, "stage three failed at row");
    else if (strcmp(mode, "refuse") == 0) run_refusals(ctx, p);
    else if (strcmp(mode, "mpi") == 0) {
        tess_tile_pipeline pl = pipeline_of(p);
        tess_tile_pipeline_stats st;
        refused(ctx, tess_tile_pipeline_run(ctx, &pl, &st), "embedded mode only",
                "under mpirun a pipeline is refused");
    }
    return TESS_OK;
}

int main(int argc, char **argv)
{
    mode = argc > 1 ? argv[1] : "ok";
    program p = {.out = calloc((size_t)H * W, sizeof(double))};
    p.job[0] = stage_job("pipe-one", stage1, 0);
    p.job[0].write = tess_tile_stream_write;
    p.job[1] = stage_job("pipe-two", stage2, sizeof(double));
    p.job[1].read = tess_tile_stream_read;
    p.job[1].write = tess_tile_stream_write;
    p.job[2] = stage_job("pipe-three", stage3, sizeof(double));
    p.job[2].read = tess_tile_stream_read;
    p.job[2].output = p.out;
    p.lone = stage_job("pipe-lone", stage2, sizeof(double));
    p.lone.input = p.out; /* a slab: not the stream */
    p.lone.input_hi = H;
    p.lone.write = tess_tile_stream_write;
    tess_config cfg;
    tess_config_init(&cfg);
    cfg.workers = 3; /* a controller per stage */
    tess_ctx *ctx;
    if (tess_init(&cfg, &ctx) != TESS_OK) return 1;
    int rank = tess_rank(ctx);
    if (rank != 0) p.job[2].output = NULL;
    for (int k = 0; k < 3; k++) p.job[k].arg = ctx; /* for the failing kernels' messages */
    int rc = TESS_OK;
    for (int k = 0; k < 3 && rc == TESS_OK; k++) rc = tess_tile_register(ctx, &p.job[k]);
    if (rc == TESS_OK) rc = tess_tile_register(ctx, &p.lone);
    if (rc == TESS_OK) rc = tess_main(ctx, control, &p);
    else fprintf(stderr, "tile_pipeline: %s\n", tess_last_error(ctx));
    tess_finalize(ctx);
    free(p.out);
    if (rc != TESS_OK) return 1;
    return rank == 0 ? checks_report() : 0;
}
