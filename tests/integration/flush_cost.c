/*
 * flush_cost.c — what the timeout flush costs on the paths it touches: every
 * worker issues N single updates (tess_table_update) to keys spread over all
 * partitions (remote ones under mpirun) of a dense table (per-thread private
 * arrays) and of a hash table (local buffer and per-destination combiners),
 * each table once with the default timeout (5 ms) and once with
 * TESS_FLUSH_NEVER, in alternating rounds in one process so that a slow phase
 * of a shared machine hits both alike.  Prints per kind the median seconds
 * of each and the median of the rounds' ratios (timeout / none); checks only
 * that the sums are right.
 *
 *   flush_cost [--workers W] [--updates N] [--rounds R]
 *   mpirun -np 2 flush_cost --workers 1 --updates 2000000
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tessera/tessera.h"

#include "checks.h"

#define KEYS 65536
#define KINDS 2 /* dense, hash */

typedef struct app {
    tess_table *t[KINDS][2]; /* [kind][0: timeout, 1: none] */
    long updates, rounds;
} app;

typedef struct hammer_args {
    int table;
    long updates;
} hammer_args;

static int k_hammer(tess_task *task, const void *args, size_t len)
{
    hammer_args h;
    if (len != sizeof h) return -1;
    memcpy(&h, args, sizeof h);
    tess_table *t = tess_table_by_index(tess_task_ctx(task), h.table);
    uint64_t x = 0x9e3779b97f4a7c15ULL * (uint64_t)(tess_task_instance(task) + 1);
    int64_t one = 1;
    for (long i = 0; i < h.updates; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift: keys all over the table */
        uint64_t k = x % KEYS;
        int rc = tess_table_update(t, &k, &one, sizeof one);
        if (rc != TESS_OK) return rc;
    }
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, long n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double timed_run(tess_ctx *ctx, app *a, tess_table *t)
{
    hammer_args h = {tess_table_index(t), a->updates};
    double start = tess_now();
    int rc = tess_run(ctx, "hammer", TESS_EVERY_WORKER, NULL, &h, sizeof h);
    if (rc == TESS_OK) rc = tess_barrier(ctx);
    return rc == TESS_OK ? tess_now() - start : -1;
}

/* Sum of every key: all the updates issued, once each. */
static int64_t total(tess_table *t)
{
    int64_t sum = 0;
    for (uint64_t k = 0; k < KEYS; k++) {
        int64_t v = 0;
        if (tess_table_get(t, &k, &v, sizeof v, NULL) == TESS_OK) sum += v;
    }
    return sum;
}

static void bench_kind(tess_ctx *ctx, app *a, int kind)
{
    double *s[2], *ratio = malloc((size_t)a->rounds * sizeof *ratio);
    s[0] = malloc((size_t)a->rounds * sizeof *s[0]);
    s[1] = malloc((size_t)a->rounds * sizeof *s[1]);
    for (long r = 0; r < a->rounds; r++) {
        s[0][r] = timed_run(ctx, a, a->t[kind][0]);
        s[1][r] = timed_run(ctx, a, a->t[kind][1]);
        ratio[r] = s[0][r] / s[1][r];
    }
    int64_t want = (int64_t)a->rounds * a->updates * tess_workers_total(ctx);
    const char *name = kind == 0 ? "dense" : "hash";
    char what[128];
    snprintf(what, sizeof what, "%s: every update applied once, with and without the timeout",
             name);
    check(total(a->t[kind][0]) == want && total(a->t[kind][1]) == want, what);
    double m0 = median(s[0], a->rounds), m1 = median(s[1], a->rounds);
    printf("   %s: %ld updates x %d workers: timeout %.4f s, none %.4f s, median of round ratios "
           "%.4f (%ld rounds)\n",
           name, a->updates, tess_workers_total(ctx), m0, m1, median(ratio, a->rounds), a->rounds);
    free(s[0]);
    free(s[1]);
    free(ratio);
}

static int control(tess_ctx *ctx, void *p)
{
    for (int kind = 0; kind < KINDS; kind++) bench_kind(ctx, p, kind);
    return checks_report() ? TESS_ERR_KERNEL : TESS_OK;
}

static int make(tess_ctx *ctx, int dense, double flush_ms, tess_table **out)
{
    tess_table_spec s = checks_sum_spec(dense ? "dense" : "hash", 8, dense ? KEYS : 0);
    s.flush_ms = flush_ms;
    return tess_table_create(ctx, &s, out);
}

static int setup(tess_ctx *ctx, void *p)
{
    app *a = p;
    int rc = tess_register_kernel(ctx, "hammer", k_hammer);
    for (int kind = 0; kind < KINDS && rc == TESS_OK; kind++) {
        rc = make(ctx, kind == 0, 0, &a->t[kind][0]);
        if (rc == TESS_OK) rc = make(ctx, kind == 0, TESS_FLUSH_NEVER, &a->t[kind][1]);
    }
    return rc;
}

int main(int argc, char **argv)
{
    tess_config cfg;
    tess_config_init(&cfg);
    cfg.steal = 0;
    app a = {.updates = 1000000, .rounds = 5};
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--workers") == 0) cfg.workers = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--updates") == 0) a.updates = atol(argv[i + 1]);
        else if (strcmp(argv[i], "--rounds") == 0) a.rounds = atol(argv[i + 1]);
    }
    if (a.updates < 1 || a.rounds < 1) return 2;
    return checks_run(&cfg, setup, control, &a) == TESS_OK ? 0 : 1;
}
