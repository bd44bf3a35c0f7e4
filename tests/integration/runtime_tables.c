/*
 * runtime_tables.c — tables created and dropped by the control function
 * while the job runs (tess_table_create after tess_main, tess_table_drop).
 *
 *   runtime_tables [--workers W]
 *       a dense and a hash table made after a first run, written by kernels
 *       on every rank (which find them with tess_table_by_index), read back;
 *       a kernel placed by a run-time table; a drop, a later table's index;
 *       the refusals (between tess_run and tess_barrier, replicated, a
 *       dropped table used).
 *   runtime_tables --ckpt DIR write|restore [--workers W]
 *       write: makes run-time table "rt", fills it, takes a checkpoint, then
 *       changes it; restore: makes "rt" again and restores: the checkpoint's
 *       values come back.
 *
 * Prints one line per check and "N passed, N failed"; exits non-zero on any
 * failure.  Run embedded or under mpirun.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tessera/tessera.h"

#include "checks.h"

#define KEYS 100
#define WRITERS 4

typedef struct app {
    const char *ckpt_dir, *phase;
    tess_table *base;
} app;

typedef struct targets {
    int dense, hash; /* creation indexes */
} targets;

/* Every writer adds 1 to each dense key and its number + 1 to each hash key. */
static int k_write(tess_task *task, const void *args, size_t len)
{
    targets tg;
    if (len != sizeof tg) return -1;
    memcpy(&tg, args, sizeof tg);
    tess_ctx *ctx = tess_task_ctx(task);
    tess_table *dense = tess_table_by_index(ctx, tg.dense);
    tess_table *hash = tg.hash >= 0 ? tess_table_by_index(ctx, tg.hash) : NULL;
    int64_t one = 1, mine = tess_task_instance(task) + 1;
    int rc = dense ? TESS_OK : -1;
    for (uint64_t k = 0; k < KEYS && rc == TESS_OK; k++) {
        rc = tess_table_update(dense, &k, &one, sizeof one);
        uint64_t hk = k * 7919;
        if (rc == TESS_OK && hash) rc = tess_table_update(hash, &hk, &mine, sizeof mine);
    }
    return rc;
}

/* Instance i, placed by the dense table, reads its own partition. */
static int k_verify(tess_task *task, const void *args, size_t len)
{
    int index, i = tess_task_instance(task);
    if (len != sizeof index) return -1;
    memcpy(&index, args, sizeof index);
    tess_table *t = tess_table_by_index(tess_task_ctx(task), index);
    uint64_t first, count;
    if (t == NULL || !tess_table_is_local(t, i) || tess_table_dense_range(t, i, &first, &count))
        return -1;
    int64_t v[KEYS];
    if (tess_table_read_range(t, first, count, v) != TESS_OK) return -1;
    for (uint64_t k = 0; k < count; k++)
        if (v[k] != WRITERS) return -1;
    return 0;
}

static int make(tess_ctx *ctx, const char *name, int dense, int parts, int replicated,
                tess_table **out)
{
    tess_table_spec s = checks_sum_spec(name, parts, dense ? KEYS : 0);
    s.replicated = replicated;
    return tess_table_create(ctx, &s, out);
}

static int64_t value(tess_table *t, uint64_t k)
{
    int64_t v = -1;
    tess_table_get(t, &k, &v, sizeof v, NULL);
    return v;
}

/* Every key of t equals want(k). */
static int all_equal(tess_table *t, int64_t want, uint64_t stride)
{
    for (uint64_t k = 0; k < KEYS; k++)
        if (value(t, k * stride) != want) return 0;
    return 1;
}

static int run_and_wait(tess_ctx *ctx, const char *kernel, int n, tess_table *loc, const void *a,
                        size_t len)
{
    int rc = tess_run(ctx, kernel, n, loc, a, len);
    return rc == TESS_OK ? tess_barrier(ctx) : rc;
}

static void check_refusals(tess_ctx *ctx, tess_table *dense)
{
    tess_table *t = NULL;
    targets tg = {tess_table_index(dense), -1};
    int rc = tess_run(ctx, "write", WRITERS, NULL, &tg, sizeof tg);
    check(rc == TESS_OK && make(ctx, "early", 0, 2, 0, &t) == TESS_ERR_MISUSE,
          "a table created between tess_run and tess_barrier is refused");
    check(tess_table_drop(dense) == TESS_ERR_MISUSE, "so is a drop");
    check(tess_barrier(ctx) == TESS_OK, "the barrier after them");
    check(make(ctx, "replicated", 1, 2, 1, &t) == TESS_ERR_UNSUPPORTED,
          "a replicated table at run time is refused");
}

static int control_plain(tess_ctx *ctx, app *a)
{
    tess_table *dense = NULL, *hash = NULL, *later = NULL;
    int rc = run_and_wait(ctx, "write", WRITERS, NULL, &(targets){tess_table_index(a->base), -1},
                          sizeof(targets));
    check(rc == TESS_OK && make(ctx, "dense", 1, 3, 0, &dense) == TESS_OK &&
              make(ctx, "hash", 0, 5, 0, &hash) == TESS_OK,
          "tables created from the control function");
    if (dense == NULL || hash == NULL) return checks_report();
    targets tg = {tess_table_index(dense), tess_table_index(hash)};
    check(run_and_wait(ctx, "write", WRITERS, NULL, &tg, sizeof tg) == TESS_OK,
          "kernels on every rank wrote them");
    check(all_equal(dense, WRITERS, 1), "dense table: every key summed over the writers");
    check(all_equal(hash, WRITERS * (WRITERS + 1) / 2, 7919), "hash table: the same");
    int index = tess_table_index(dense);
    check(run_and_wait(ctx, "verify", 3, dense, &index, sizeof index) == TESS_OK,
          "kernels placed by the run-time table read their partitions");
    check(tess_table_drop(hash) == TESS_OK, "hash table dropped");
    uint64_t k = 0;
    int64_t v;
    check(tess_table_get(hash, &k, &v, sizeof v, NULL) == TESS_ERR_MISUSE,
          "a dropped table refuses operations");
    check(make(ctx, "later", 1, 2, 0, &later) == TESS_OK &&
              tess_table_index(later) == tess_table_index(hash) + 1,
          "a later table takes the next index (a dropped one's is not reused)");
    tg = (targets){tess_table_index(later), -1};
    check(later && run_and_wait(ctx, "write", WRITERS, NULL, &tg, sizeof tg) == TESS_OK &&
              all_equal(later, WRITERS, 1),
          "the later table works");
    check_refusals(ctx, dense);
    return checks_report();
}

/* write: rt[k] = k + 1 at the checkpoint, 2(k + 1) after; restore: k + 1. */
static int control_ckpt(tess_ctx *ctx, app *a)
{
    int restore = strcmp(a->phase, "restore") == 0;
    tess_table *rt = NULL, *gone = NULL;
    check(make(ctx, "gone", 0, 2, 0, &gone) == TESS_OK && tess_table_drop(gone) == TESS_OK &&
              make(ctx, "rt", 1, 3, 0, &rt) == TESS_OK,
          "run-time tables created (and one dropped) before the checkpoint");
    if (rt == NULL) return checks_report();
    if (restore) {
        void *user = NULL;
        size_t len = 0;
        int rc = tess_checkpoint_restore(ctx, &user, &len, NULL);
        free(user);
        check(rc == TESS_OK, "checkpoint restored");
        if (rc != TESS_OK) printf("      %s\n", tess_last_error(ctx));
        int ok = 1;
        for (uint64_t k = 0; k < KEYS; k++) ok &= value(rt, k) == (int64_t)(k + 1);
        check(ok, "the run-time table holds the checkpoint's values");
        check(all_equal(a->base, WRITERS, 1), "and so does the table made before tess_main");
        return checks_report();
    }
    targets tg = {tess_table_index(a->base), -1};
    int rc = run_and_wait(ctx, "write", WRITERS, NULL, &tg, sizeof tg);
    for (uint64_t k = 0; k < KEYS && rc == TESS_OK; k++) {
        int64_t v = (int64_t)(k + 1);
        rc = tess_table_put(rt, &k, &v, sizeof v);
    }
    if (rc == TESS_OK) rc = tess_checkpoint_barrier(ctx, NULL, 0);
    if (rc == TESS_OK) rc = tess_checkpoint_wait(ctx, NULL);
    check(rc == TESS_OK, "checkpoint of the run-time table taken");
    for (uint64_t k = 0; k < KEYS && rc == TESS_OK; k++) {
        int64_t v = (int64_t)(k + 1);
        rc = tess_table_update(rt, &k, &v, sizeof v);
    }
    check(rc == TESS_OK && tess_barrier(ctx) == TESS_OK && value(rt, 3) == 8,
          "changed after the checkpoint");
    return checks_report();
}

static int control(tess_ctx *ctx, void *p)
{
    app *a = p;
    int failed_any = a->ckpt_dir ? control_ckpt(ctx, a) : control_plain(ctx, a);
    return failed_any ? TESS_ERR_KERNEL : TESS_OK;
}

static int setup(tess_ctx *ctx, void *p)
{
    app *a = p;
    int rc = tess_register_kernel(ctx, "write", k_write);
    if (rc == TESS_OK) rc = tess_register_kernel(ctx, "verify", k_verify);
    if (rc == TESS_OK) rc = make(ctx, "base", 1, 4, 0, &a->base);
    if (rc == TESS_OK && a->ckpt_dir) rc = tess_checkpoint_enable(ctx, a->ckpt_dir, "rt-test", 2);
    return rc;
}

int main(int argc, char **argv)
{
    app a = {0};
    if (argc >= 4 && strcmp(argv[1], "--ckpt") == 0) {
        a.ckpt_dir = argv[2];
        a.phase = argv[3];
        argc -= 3;
        argv += 3;
    }
    tess_config cfg;
    checks_config(argc, argv, &cfg);
    return checks_run(&cfg, setup, control, &a) == TESS_OK ? 0 : 1;
}
