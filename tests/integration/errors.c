/*
 * errors.c — what a user reads when a call fails: "not found" from
 * tess_table_get names the table and the key (dense, 8-byte hash and
 * 16-byte hash keys, local and, under mpirun, remote); a tiles run started
 * from a kernel names tess_tile_run(), the call the user made, not the
 * tess_run() behind it.  Run embedded (`errors`) or under `mpirun -np 2
 * errors`.  Prints one line per check and "N passed, N failed".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tessera/tessera.h"
#include "tessera/tile.h"

#include "checks.h"

typedef struct app {
    tess_table *dense, *hash8, *hash16;
    tess_tile_job job, no_input;
    char tile_error[256];
    uint8_t out[1024];
} app;

static int says(tess_ctx *ctx, int rc, int want, const char *text)
{
    if (rc != want) return 0;
    if (strstr(tess_last_error(ctx), text) != NULL) return 1;
    printf("     last error: %s\n", tess_last_error(ctx));
    return 0;
}

static int zero(const tess_tile_box *box, const void *in, void *out, void *device, void *arg)
{
    (void)in, (void)device, (void)arg;
    memset(out, 0, (size_t)(box->hi[0] - box->lo[0]));
    return TESS_OK;
}

/* Starts a tiles run where none may start: from a kernel. */
static int k_tile_inside(tess_task *task, const void *args, size_t len)
{
    (void)args, (void)len;
    app *a = tess_task_app(task);
    tess_ctx *ctx = tess_task_ctx(task);
    tess_tile_stats st;
    int rc = tess_tile_run(ctx, &a->job, NULL, &st);
    snprintf(a->tile_error, sizeof a->tile_error, "%d %s", rc, tess_last_error(ctx));
    return TESS_OK;
}

/* in_bytes without input: one rank refuses the job as it registers it;
 * more ranks (any may own no rows) refuse it as the run starts. */
static void register_no_input(tess_ctx *ctx, app *a)
{
    a->no_input = a->job;
    a->no_input.name = "no_input";
    a->no_input.in_bytes = 4;
    a->no_input.output = NULL;
    int rc = tess_tile_register(ctx, &a->no_input);
    if (tess_nranks(ctx) == 1)
        check(says(ctx, rc, TESS_ERR_INVAL,
                   "tile job 'no_input': in_bytes is 4 but there is no input (input with "
                   "input_lo/input_hi, or read)"),
              "in_bytes without input: refused by tess_tile_register, naming the fields");
    else check(rc == TESS_OK, "in_bytes without input on one of several ranks: registered");
}

static void check_no_input_run(tess_ctx *ctx, app *a)
{
    if (tess_nranks(ctx) == 1) return;
    tess_tile_stats st;
    int rc = tess_tile_run(ctx, &a->no_input, NULL, &st);
    check(rc != TESS_OK &&
              strstr(tess_last_error(ctx), "in_bytes is 4 but no rank gave input") != NULL,
          "in_bytes without input on any rank: the run says so, naming the fields");
}

static int control(tess_ctx *ctx, void *arg)
{
    app *a = arg;
    uint64_t k = 7;
    double v;
    check(says(ctx, tess_table_get(a->dense, &k, &v, sizeof v, NULL), TESS_ERR_NOTFOUND,
               "table distances: key 7 not found"),
          "get: not found names the dense table and the key");
    uint64_t far = 12345678901ULL;
    check(says(ctx, tess_table_get(a->hash8, &far, &v, sizeof v, NULL), TESS_ERR_NOTFOUND,
               "table by_id: key 12345678901 not found"),
          "get: an 8-byte hash key, as a number");
    uint8_t key16[16];
    for (int i = 0; i < 16; i++) key16[i] = (uint8_t)(0xa0 + i);
    check(says(ctx, tess_table_get(a->hash16, key16, &v, sizeof v, NULL), TESS_ERR_NOTFOUND,
               "table by_name: key 0xa0a1a2a3a4a5a6a7a8a9aaabacadaeaf not found"),
          "get: a 16-byte key, in hex");
    /* every partition, so that under mpirun some keys are remote */
    int named = 1;
    for (uint64_t key = 100; key < 104; key++) {
        char want[64];
        snprintf(want, sizeof want, "table distances: key %llu not found", (unsigned long long)key);
        named &=
            says(ctx, tess_table_get(a->dense, &key, &v, sizeof v, NULL), TESS_ERR_NOTFOUND, want);
    }
    check(named, "get: remote keys name the table and key too");
    int rc = tess_run(ctx, "tile_inside", 1, NULL, NULL, 0);
    if (rc == TESS_OK) rc = tess_barrier(ctx);
    check(strstr(a->tile_error, "tess_tile_run() called from a kernel") != NULL &&
              strstr(a->tile_error, "tess_run()") == NULL,
          "tess_tile_run from a kernel names tess_tile_run(), not tess_run()");
    if (!strstr(a->tile_error, "tess_tile_run()")) printf("     said: %s\n", a->tile_error);
    check_no_input_run(ctx, a);
    return rc;
}

static int setup(tess_ctx *ctx, void *arg)
{
    app *a = arg;
    int rc = tess_register_kernel(ctx, "tile_inside", k_tile_inside);
    tess_table_spec s = checks_spec("distances", sizeof(double), 4, 1000);
    if (rc == TESS_OK) rc = tess_table_create(ctx, &s, &a->dense);
    s = checks_spec("by_id", sizeof(double), 4, 0);
    if (rc == TESS_OK) rc = tess_table_create(ctx, &s, &a->hash8);
    s.name = "by_name";
    s.key_size = 16;
    if (rc == TESS_OK) rc = tess_table_create(ctx, &s, &a->hash16);
    a->job = (tess_tile_job){.name = "zero",
                             .ndims = 1,
                             .extent = {1024},
                             .min_tile = {64},
                             .max_tile = {1024},
                             .out_bytes = 1};
    a->job.kernel[TESS_TILE_CPU] = zero;
    a->job.output = a->out;
    if (rc == TESS_OK) rc = tess_tile_register(ctx, &a->job);
    if (rc == TESS_OK) register_no_input(ctx, a);
    return rc;
}

int main(void)
{
    static app a;
    tess_config cfg;
    tess_config_init(&cfg);
    cfg.workers = 1;
    int rc = checks_run(&cfg, setup, control, &a);
    return checks_report() || rc != TESS_OK;
}
