/*
 * tile_api.c — the tiles face through its public API (tiles.sh runs it
 * embedded and under mpirun):
 *
 *   tile_api grid2d POLICY PROCS   a 2-D area cut into columns, input from a
 *                                  reader callback, output into an array
 *   tile_api rows POLICY PROCS     grid2d whose smallest tile is 3 whole rows
 *                                  (the kernels check every tile's bounds)
 *   tile_api grid3d POLICY PROCS   a 3-D area, input slabs spread over the
 *                                  ranks, output through a write callback
 *   tile_api badslab HOW           grid3d with the last rank's slab wrong
 *                                  (overlap, gap, outside): the run must fail
 *   tile_api fail PROCS            a kernel that fails on one cell
 *   tile_api clbuild               an OpenCL kernel whose source does not build
 *   tile_api clhelper PROCS        grid2d with an OpenCL kernel made with
 *                                  tess_tile_opencl_run (5 lines of OpenCL C)
 *   tile_api clparams              the helper with a params name it does not know
 *
 * Each output is checked against a direct computation; prints "ok".  Exit 0
 * on success, 1 on a wrong output, 3 when the run failed (the message on
 * stderr), 77 when OpenCL is not available (clbuild, clhelper, clparams).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tessera/tile.h"
#if __has_include(<CL/cl.h>)
#include "tessera/tile_opencl.h"
#define HAVE_CL_HEADERS 1
#endif

typedef struct job_arg {
    tess_ctx *ctx;
    const tess_tile_job *job;
    int64_t ny, nz;   /* extents after the first */
    uint8_t *written; /* grid3d: cells the write callback saw (rank 0) */
    float *sink;
} job_arg;

static uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    return z ^ (z >> 27);
}

/* ---- grid2d: reader input, array output ---- */
static int read2d(const tess_tile_box *b, void *buf, void *arg)
{
    job_arg *a = arg;
    uint64_t *out = buf;
    for (int64_t x = b->lo[0]; x < b->hi[0]; x++)
        for (int64_t y = b->lo[1]; y < b->hi[1]; y++) *out++ = (uint64_t)(x * a->ny + y);
    return TESS_OK;
}

/* Is b within the job's smallest and largest tile?  A column at the
 * area's edge may be narrower (the rest of the extent). */
static int in_bounds(const tess_tile_job *j, const tess_tile_box *b)
{
    for (int d = 0; d < b->ndims; d++) {
        int64_t w = b->hi[d] - b->lo[d];
        if (w > j->max_tile[d] || (w < j->min_tile[d] && b->hi[d] != j->extent[d])) return 0;
    }
    return 1;
}

static int kernel2d(const tess_tile_box *b, const void *in, void *out, void *dev, void *arg)
{
    (void)dev;
    job_arg *a = arg;
    if (!in_bounds(a->job, b))
        return tess_set_error(a->ctx, TESS_ERR_KERNEL,
                              "tile [%lld, %lld) x [%lld, %lld) is "
                              "outside the job's tile bounds",
                              (long long)b->lo[0], (long long)b->hi[0], (long long)b->lo[1],
                              (long long)b->hi[1]);
    const uint64_t *i = in;
    uint64_t *o = out;
    for (int64_t x = b->lo[0]; x < b->hi[0]; x++)
        for (int64_t y = b->lo[1]; y < b->hi[1]; y++) *o++ = mix(*i++) ^ (uint64_t)(x * 31 + y);
    return TESS_OK;
}

/* ---- grid3d: slab input, write callback output ---- */
static float cell3d(int64_t x, int64_t y, int64_t z) { return (float)(x * 10000 + y * 100 + z); }

static int kernel3d(const tess_tile_box *b, const void *in, void *out, void *dev, void *arg)
{
    (void)dev;
    (void)arg;
    const float *i = in;
    float *o = out;
    uint64_t n = 1;
    for (int d = 0; d < b->ndims; d++) n *= (uint64_t)(b->hi[d] - b->lo[d]);
    for (uint64_t k = 0; k < n; k++) o[k] = i[k] * 2.0f + 1.0f;
    return TESS_OK;
}

static int write3d(const tess_tile_box *b, const void *out, void *arg)
{
    job_arg *a = arg;
    const float *o = out;
    for (int64_t x = b->lo[0]; x < b->hi[0]; x++)
        for (int64_t y = b->lo[1]; y < b->hi[1]; y++)
            for (int64_t z = b->lo[2]; z < b->hi[2]; z++) {
                int64_t k = (x * a->ny + y) * a->nz + z;
                if (a->written[k]++)
                    return tess_set_error(a->ctx, TESS_ERR_INVAL, "cell %lld written twice",
                                          (long long)k);
                a->sink[k] = *o++;
            }
    return TESS_OK;
}

/* ---- fail ---- */
static int kernel_fail(const tess_tile_box *b, const void *in, void *out, void *dev, void *arg)
{
    job_arg *a = arg;
    (void)in;
    (void)dev;
    if (b->lo[0] <= 1234 && 1234 < b->hi[0])
        return tess_set_error(a->ctx, TESS_ERR_KERNEL, "cell 1234 is poisoned");
    memset(out, 0, (size_t)(b->hi[0] - b->lo[0]));
    return TESS_OK;
}

/* ---- clbuild ---- */
#ifdef HAVE_CL_HEADERS
static int kernel_clbuild(const tess_tile_box *b, const void *in, void *out, void *dev, void *arg)
{
    (void)b;
    (void)in;
    (void)out;
    (void)arg;
    cl_program p;
    return tess_tile_opencl_build(dev, "__kernel void k(__global float *x) { x[0] = y; }", NULL,
                                  &p);
}

/* ---- clhelper: grid2d's kernel in OpenCL C, through the helper ---- */
static const tess_tile_opencl_kernel grid2d_cl = {
    .source = "__kernel void g(__global const ulong *in, __global ulong *out, int n, long x0,\n"
              "                long y0, long y1) {\n"
              "  int i = get_global_id(0); if (i >= n) return;\n"
              "  long x = x0 + i / (y1 - y0), y = y0 + i % (y1 - y0);\n"
              "  ulong z = in[i]; z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9UL;\n"
              "  out[i] = (z ^ (z >> 27)) ^ (ulong)(x * 31 + y);\n"
              "}\n",
    .name = "g",
    .params = "in,out,cells,lo0,lo1,hi1",
    .in_bytes = 8,
    .out_bytes = 8};

static int kernel2d_cl(const tess_tile_box *b, const void *in, void *out, void *dev, void *arg)
{
    return tess_tile_opencl_run(&grid2d_cl, b, in, out, dev, arg);
}

static const tess_tile_opencl_kernel bad_params = {
    .source = "__kernel void g(__global ulong *out) { out[get_global_id(0)] = 0; }",
    .name = "g",
    .params = "out,width",
    .out_bytes = 8};

static int kernel_bad_params(const tess_tile_box *b, const void *in, void *out, void *dev,
                             void *arg)
{
    return tess_tile_opencl_run(&bad_params, b, in, out, dev, arg);
}
#endif

typedef struct run {
    tess_tile_job job;
    job_arg arg;
    const char *policy, *procs;
    int check; /* 2: grid2d, 3: grid3d */
    uint64_t *out2d;
    float *slab;
} run;

static int control(tess_ctx *ctx, void *p)
{
    run *r = p;
    tess_tile_options o = {.processors = r->procs, .policy = r->policy, .queue_ms = 20};
    tess_tile_stats st;
    int rc = tess_tile_run(ctx, &r->job, &o, &st);
    if (rc != TESS_OK) {
        fprintf(stderr, "tile_api: %s\n", tess_last_error(ctx));
        return 3;
    }
    int bad = 0;
    if (r->check == 2)
        for (int64_t x = 0; x < r->job.extent[0] && !bad; x++)
            for (int64_t y = 0; y < r->arg.ny && !bad; y++) {
                uint64_t k = (uint64_t)(x * r->arg.ny + y);
                bad = r->out2d[k] != (mix(k) ^ (uint64_t)(x * 31 + y));
                if (bad)
                    fprintf(stderr, "tile_api: cell (%lld, %lld) wrong\n", (long long)x,
                            (long long)y);
            }
    if (r->check == 3)
        for (int64_t x = 0; x < r->job.extent[0] && !bad; x++)
            for (int64_t y = 0; y < r->arg.ny && !bad; y++)
                for (int64_t z = 0; z < r->arg.nz && !bad; z++) {
                    int64_t k = (x * r->arg.ny + y) * r->arg.nz + z;
                    bad = r->arg.written[k] != 1 || r->arg.sink[k] != cell3d(x, y, z) * 2 + 1;
                    if (bad) fprintf(stderr, "tile_api: cell %lld wrong\n", (long long)k);
                }
    if (!bad && st.nranks > 1 && (r->check == 2 || r->check == 3)) {
        /* under mpirun on one machine the other ranks' outputs reach rank 0
         * through its node-shared image, unless TESS_NODE_SHARE=0 or
         * TESS_NODE_RANKS=1 (a node per rank) */
        const char *env = getenv("TESS_NODE_SHARE"), *node = getenv("TESS_NODE_RANKS");
        int off =
            (env != NULL && strcmp(env, "0") == 0) || (node != NULL && strcmp(node, "1") == 0);
        uint64_t shared = st.ranks[0].output_bytes_shared;
        bad = off ? shared != 0 : shared == 0;
        if (bad)
            fprintf(stderr, "tile_api: %llu output bytes shared\n", (unsigned long long)shared);
    }
    printf("%s: %llu cells in %llu tiles on %d processors, %.3f s\n", bad ? "WRONG" : "ok",
           (unsigned long long)st.cells, (unsigned long long)st.tiles, st.nprocs, st.seconds);
    tess_tile_stats_free(&st);
    return bad;
}

static void setup_grid2d(run *r, tess_ctx *ctx)
{
    tess_tile_job *j = &r->job;
    *j = (tess_tile_job){.name = "grid2d",
                         .ndims = 2,
                         .in_bytes = 8,
                         .out_bytes = 8,
                         .read = read2d,
                         .arg = &r->arg};
    j->extent[0] = 301, j->extent[1] = 257;
    j->min_tile[0] = 1, j->min_tile[1] = 4;
    j->max_tile[0] = 40, j->max_tile[1] = 32;
    j->kernel[TESS_TILE_CPU] = kernel2d;
    r->arg.ny = 257;
    r->arg.job = j;
    if (tess_rank(ctx) == 0) j->output = r->out2d = calloc(301 * 257, 8);
    r->check = 2;
}

static void setup_rows(run *r, tess_ctx *ctx)
{
    setup_grid2d(r, ctx);
    r->job.min_tile[0] = 3, r->job.min_tile[1] = 257;
    r->job.max_tile[1] = 257;
}

/* bad: NULL, or how the last rank's slab is wrong (overlap, gap, outside) */
static void setup_grid3d(run *r, tess_ctx *ctx, const char *bad)
{
    tess_tile_job *j = &r->job;
    int64_t nx = 50, ny = 20, nz = 13, rank = tess_rank(ctx), nr = tess_nranks(ctx);
    int64_t lo = nx * rank / nr, hi = nx * (rank + 1) / nr;
    if (bad && rank == nr - 1) {
        if (strcmp(bad, "overlap") == 0) lo -= 1;
        if (strcmp(bad, "gap") == 0) lo += 1;
        if (strcmp(bad, "outside") == 0) hi += 1;
    }
    r->slab = malloc((size_t)((hi - lo) * ny * nz + 1) * sizeof(float));
    for (int64_t x = lo; x < hi; x++)
        for (int64_t y = 0; y < ny; y++)
            for (int64_t z = 0; z < nz; z++)
                r->slab[((x - lo) * ny + y) * nz + z] = cell3d(x, y, z);
    *j = (tess_tile_job){.name = "grid3d",
                         .ndims = 3,
                         .in_bytes = 4,
                         .out_bytes = 4,
                         .input = r->slab,
                         .input_lo = lo,
                         .input_hi = hi,
                         .arg = &r->arg};
    int64_t ext[3] = {nx, ny, nz}, mn[3] = {1, 2, 1}, mx[3] = {7, 8, 5};
    memcpy(j->extent, ext, sizeof ext);
    memcpy(j->min_tile, mn, sizeof mn);
    memcpy(j->max_tile, mx, sizeof mx);
    j->kernel[TESS_TILE_CPU] = kernel3d;
    r->arg.ny = ny;
    r->arg.nz = nz;
    if (rank == 0) {
        j->write = write3d;
        r->arg.written = calloc((size_t)(nx * ny * nz), 1);
        r->arg.sink = calloc((size_t)(nx * ny * nz), sizeof(float));
    }
    r->check = 3;
}

static void setup_fail(run *r)
{
    tess_tile_job *j = &r->job;
    *j = (tess_tile_job){.name = "fail", .ndims = 1, .out_bytes = 1, .arg = &r->arg};
    j->extent[0] = 5000, j->min_tile[0] = 10, j->max_tile[0] = 5000;
    j->kernel[TESS_TILE_CPU] = kernel_fail;
    j->kernel[TESS_TILE_OPENCL] = kernel_fail;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr,
                "usage: tile_api grid2d|rows|grid3d POLICY PROCS | badslab HOW | fail PROCS | "
                "clbuild\n");
        return 2;
    }
    tess_config cfg;
    tess_config_init(&cfg);
    cfg.workers = 1;
    tess_ctx *ctx;
    if (tess_init(&cfg, &ctx) != TESS_OK) return 3;
    run r = {.arg = {.ctx = ctx}};
    if (strcmp(argv[1], "grid2d") == 0 && argc == 4) setup_grid2d(&r, ctx);
    else if (strcmp(argv[1], "rows") == 0 && argc == 4) setup_rows(&r, ctx);
    else if (strcmp(argv[1], "grid3d") == 0 && argc == 4) setup_grid3d(&r, ctx, NULL);
    else if (strcmp(argv[1], "badslab") == 0 && argc == 3) setup_grid3d(&r, ctx, argv[2]);
    else if (strcmp(argv[1], "fail") == 0 && argc == 3) setup_fail(&r);
#ifdef HAVE_CL_HEADERS
    else if (strcmp(argv[1], "clbuild") == 0) {
        setup_fail(&r);
        r.job.kernel[TESS_TILE_OPENCL] = kernel_clbuild;
        r.procs = "opencl";
    } else if (strcmp(argv[1], "clhelper") == 0 && argc == 3) {
        setup_grid2d(&r, ctx);
        r.job.kernel[TESS_TILE_OPENCL] = kernel2d_cl;
    } else if (strcmp(argv[1], "clparams") == 0) {
        setup_grid2d(&r, ctx);
        r.job.kernel[TESS_TILE_OPENCL] = kernel_bad_params;
        r.procs = "opencl";
        r.check = 0;
    }
#endif
    else {
        tess_finalize(ctx);
        return strncmp(argv[1], "cl", 2) == 0 ? 77 : 2;
    }
    if (argc == 4) r.policy = argv[2], r.procs = argv[3];
    if (argc == 3 && strcmp(argv[1], "badslab") != 0) r.procs = argv[2];
    int rc = tess_tile_register(ctx, &r.job);
    if (rc == TESS_OK) rc = tess_main(ctx, control, &r);
    else fprintf(stderr, "tile_api: %s\n", tess_last_error(ctx));
    tess_finalize(ctx);
    free(r.out2d);
    free(r.slab);
    free(r.arg.written);
    free(r.arg.sink);
    return rc == 0 ? 0 : rc == 1 ? 1 : 3;
}
