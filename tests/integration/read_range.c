/*
 * read_range.c — tess_table_read_range and tess_table_gather end to end:
 * an instance reading its own partition in one call, ranges across
 * partitions and ranks, absent keys as the identity, the caller's own
 * buffered updates seen, the errors; then (with --bench) the time of
 * reading every own partition key by key with tess_table_get against one
 * read_range per partition.  Run embedded (`read_range --workers 2`) or
 * under `mpirun -np 3 read_range`.  Prints one line per check and "N passed,
 * N failed"; exits non-zero on any failure.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "tessera/tessera.h"

#include "checks.h"

#define PARTS 4

typedef struct app {
    uint64_t keys;
    tess_table *vals, *hash, *bad;
    int bench;
} app;

static double value_of(uint64_t k) { return (double)(k % 1000) * 0.5 + 1.0; }

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void note_bad(app *a)
{
    uint64_t zero = 0;
    int64_t one = 1;
    tess_table_update(a->bad, &zero, &one, sizeof one);
}

/* Own partition, both ways, compared; `how` 0 = get per key, 1 = read_range. */
static int k_read(tess_task *task, const void *args, size_t len)
{
    app *a = tess_task_app(task);
    int how = len == sizeof how ? *(const int *)args : 1, i = tess_task_instance(task);
    uint64_t first, count;
    tess_table_dense_range(a->vals, i, &first, &count);
    double *d = malloc((count ? count : 1) * sizeof *d);
    if (d == NULL) return -1;
    int rc = TESS_OK;
    if (how == 1) rc = tess_table_read_range(a->vals, first, count, d);
    for (uint64_t k = 0; how == 0 && rc == TESS_OK && k < count; k++) {
        uint64_t key = first + k;
        rc = tess_table_get(a->vals, &key, &d[k], sizeof d[k], NULL);
    }
    for (uint64_t k = 0; rc == TESS_OK && k < count; k++)
        if (d[k] != value_of(first + k)) {
            note_bad(a);
            break;
        }
    free(d);
    return rc;
}

static int64_t bad_count(app *a)
{
    uint64_t zero = 0;
    int64_t n = 0;
    tess_table_get(a->bad, &zero, &n, sizeof n, NULL);
    return n;
}

static int load(app *a)
{
    double *v = malloc(a->keys * sizeof *v);
    if (v == NULL) return TESS_ERR_NOMEM;
    for (uint64_t k = 0; k < a->keys; k++) v[k] = value_of(k);
    int rc = tess_table_put_range(a->vals, 0, a->keys, v);
    free(v);
    return rc;
}

static void check_ranges(tess_ctx *ctx, app *a)
{
    double *all = malloc(a->keys * sizeof *all), part[10];
    int ok = all != NULL && tess_table_gather(a->vals, all, a->keys * sizeof *all) == TESS_OK;
    for (uint64_t k = 0; ok && k < a->keys; k++) ok = all[k] == value_of(k);
    check(ok, "gather: every partition, every rank");
    free(all);
    /* a range across the boundary of partitions 1 and 2 */
    uint64_t first, count;
    tess_table_dense_range(a->vals, 2, &first, &count);
    ok = tess_table_read_range(a->vals, first - 5, 10, part) == TESS_OK;
    for (int i = 0; ok && i < 10; i++) ok = part[i] == value_of(first - 5 + i);
    check(ok, "a range across two partitions");
    uint64_t k3 = first + 2;
    double up = 2.0;
    tess_table_remove(a->vals, &k3);
    tess_table_update(a->vals, &first, &up, sizeof up); /* buffered, SUM */
    ok = tess_table_read_range(a->vals, first, 3, part) == TESS_OK;
    check(ok && part[0] == value_of(first) + 2.0, "the caller's buffered update is read");
    check(ok && part[2] == 0.0, "an absent key reads as the identity");
    check(tess_table_read_range(a->vals, a->keys - 1, 2, part) == TESS_ERR_INVAL &&
              strstr(tess_last_error(ctx), "outside") != NULL,
          "a range past the last key: TESS_ERR_INVAL");
    check(tess_table_read_range(a->hash, 0, 1, part) == TESS_ERR_INVAL,
          "a hash table: TESS_ERR_INVAL");
    check(tess_table_gather(a->vals, part, sizeof part) == TESS_ERR_INVAL,
          "gather into too small a buffer: TESS_ERR_INVAL");
    tess_table_put(a->vals, &k3, &(double){value_of(k3)}, sizeof(double));
    tess_table_put(a->vals, &first, &(double){value_of(first)}, sizeof(double));
}

/* The whole table read by its instances one way: seconds. */
static double time_reads(tess_ctx *ctx, app *a, int how)
{
    double t0 = now();
    int rc = tess_run(ctx, "read", PARTS, a->vals, &how, sizeof how);
    if (rc == TESS_OK) rc = tess_barrier(ctx);
    return rc == TESS_OK ? now() - t0 : -1;
}

static int control(tess_ctx *ctx, void *arg)
{
    app *a = arg;
    int rc = load(a);
    if (rc == TESS_OK) rc = tess_barrier(ctx);
    if (rc != TESS_OK) return rc;
    check_ranges(ctx, a);
    rc = tess_barrier(ctx);
    double by_get = time_reads(ctx, a, 0), by_range = time_reads(ctx, a, 1);
    check(by_get >= 0 && by_range >= 0 && bad_count(a) == 0,
          "instances read their own partition: get per key and read_range agree");
    if (a->bench)
        printf("own partitions, %llu keys: tess_table_get per key %.4f s, "
               "tess_table_read_range %.4f s (%.0fx)\n",
               (unsigned long long)a->keys, by_get, by_range, by_get / by_range);
    return rc;
}

static int setup(tess_ctx *ctx, void *arg)
{
    app *a = arg;
    int rc = tess_register_kernel(ctx, "read", k_read);
    tess_table_spec s = checks_acc_spec("vals", PARTS, a->keys, TESS_ACC_SUM, TESS_F64);
    if (rc == TESS_OK) rc = tess_table_create(ctx, &s, &a->vals);
    s = checks_sum_spec("bad", 1, 1);
    if (rc == TESS_OK) rc = tess_table_create(ctx, &s, &a->bad);
    s = checks_spec("hash", sizeof(double), 1, 0);
    if (rc == TESS_OK) rc = tess_table_create(ctx, &s, &a->hash);
    return rc;
}

/* read_range [--workers W] [--bench KEYS] */
int main(int argc, char **argv)
{
    app a = {.keys = checks_arg_count(argc, argv, "--bench", 10000),
             .bench = checks_arg(argc, argv, "--bench") != NULL};
    tess_config cfg;
    checks_config(argc, argv, &cfg);
    return checks_exit("read_range", checks_run(&cfg, setup, control, &a));
}
