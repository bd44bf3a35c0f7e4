/*
 * replica.c — the pull-style table API end to end on a real runtime:
 * tess_table_put_range, replicated tables (spec.replicated) whose replicas
 * switch at barriers, tess_table_replicate and tess_table_scan_dense.  Run
 * embedded (`replica --workers 2`) or under `mpirun -np 3 replica`.
 *
 * Each epoch, instance i reads the replica of the previous epoch (keys of
 * every partition) and writes its partition of the next with one
 * put_range; the control function replays the same recurrence sequentially
 * and compares.  Every instance also checks its own rank's replica against
 * sums the control function passes in, so each rank's copy is checked.
 * Prints one line per check and "N passed, N failed"; exits non-zero on any
 * failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tessera/tessera.h"

#include "checks.h"

#define KEYS 1000
#define PARTS 7
#define EPOCHS 6
#define EPOCHS_DOUBLED 40 /* then epochs each followed by two more barriers */

typedef struct app {
    tess_table *vals, *plain, *lists, *bad;
} app;

/* Arguments of k_step: the epoch, which partitions write, and what the
 * replica must hold (the sum and the key-weighted sum of its values). */
typedef struct step_args {
    int32_t epoch, odd_too;
    double sum, weighted;
} step_args;

static uint64_t source_of(uint64_t k, int epoch) { return (k * 7 + (uint64_t)epoch) % KEYS; }

static void note_bad(app *a)
{
    uint64_t zero = 0;
    int64_t one = 1;
    tess_table_update(a->bad, &zero, &one, sizeof one);
}

/* Does this rank's replica of t hold the values whose sums are given? */
static int replica_matches(const tess_table *t, double sum, double weighted)
{
    uint64_t n = 0;
    const double *r = tess_table_replica(t, &n);
    if (r == NULL || n != KEYS) return 0;
    double s = 0, w = 0;
    for (uint64_t k = 0; k < n; k++) s += r[k], w += (double)k * r[k];
    return s == sum && w == weighted;
}

static int k_step(tess_task *task, const void *args, size_t len)
{
    app *a = tess_task_app(task);
    step_args sa;
    if (len != sizeof sa) return -1;
    memcpy(&sa, args, sizeof sa);
    int i = tess_task_instance(task);
    if (!replica_matches(a->vals, sa.sum, sa.weighted)) note_bad(a);
    if (i % 2 == 1 && !sa.odd_too) return 0;
    uint64_t first, count;
    tess_table_dense_range(a->vals, i, &first, &count);
    const double *r = tess_table_replica(a->vals, NULL);
    double next[KEYS];
    for (uint64_t k = 0; k < count; k++) next[k] = r[source_of(first + k, sa.epoch)] + 1.0;
    return tess_table_put_range(a->vals, first, count, next);
}

/* This rank's replica of the vals or the plain table against the sums of
 * the step arguments; a mismatch is counted in `bad`. */
static int check_replica(tess_task *task, const void *args, size_t len, int vals)
{
    app *a = tess_task_app(task);
    step_args sa;
    if (len != sizeof sa) return -1;
    memcpy(&sa, args, sizeof sa);
    if (!replica_matches(vals ? a->vals : a->plain, sa.sum, sa.weighted)) note_bad(a);
    return 0;
}

static int k_check_plain(tess_task *task, const void *args, size_t len)
{
    return check_replica(task, args, len, 0);
}

static int k_check_vals(tess_task *task, const void *args, size_t len)
{
    return check_replica(task, args, len, 1);
}

/* Arguments of every size reach every task whole: under mpirun the run
 * goes on rank 0's node-shared board when it fits there (2 KiB), else as a
 * message only.  Byte i of the arguments is (i * 31 + len) mod 251. */
static int k_args(tess_task *task, const void *args, size_t len)
{
    app *a = tess_task_app(task);
    const unsigned char *b = args;
    for (size_t i = 0; i < len; i++)
        if (b[i] != (unsigned char)((i * 31 + len) % 251)) {
            note_bad(a);
            break;
        }
    return 0;
}

/* tess_table_replicate from a kernel: refused (its ranges would travel at
 * rest, behind the barrier's back). */
static int k_replicate(tess_task *task, const void *args, size_t len)
{
    (void)args, (void)len;
    app *a = tess_task_app(task);
    if (tess_table_replicate(a->plain) != TESS_ERR_MISUSE) note_bad(a);
    return 0;
}

/* scan_dense over a var-length table: key k holds k % 5 bytes of value k,
 * keys divisible by 3 absent. */
typedef struct scan_seen {
    uint64_t keys, absent, bad;
} scan_seen;

static int scan_chunk(uint64_t first, size_t n, const void *const *values, const size_t *lens,
                      void *arg)
{
    scan_seen *s = arg;
    for (size_t i = 0; i < n; i++) {
        uint64_t k = first + i;
        s->keys++;
        if (k % 3 == 0) {
            s->absent += values[i] == NULL;
            s->bad += values[i] != NULL || lens[i] != 0;
            continue;
        }
        const unsigned char *v = values[i];
        s->bad += v == NULL || lens[i] != k % 5;
        for (size_t b = 0; v != NULL && b < lens[i]; b++) s->bad += v[b] != (unsigned char)k;
    }
    return 0;
}

static int k_scan(tess_task *task, const void *args, size_t len)
{
    (void)args, (void)len;
    app *a = tess_task_app(task);
    int i = tess_task_instance(task);
    uint64_t first, count;
    tess_table_dense_range(a->lists, i, &first, &count);
    scan_seen s = {0, 0, 0};
    int rc = tess_table_scan_dense(a->lists, i, scan_chunk, &s);
    uint64_t absent = 0;
    for (uint64_t k = first; k < first + count; k++) absent += k % 3 == 0;
    if (rc != 0 || s.keys != count || s.absent != absent || s.bad != 0) note_bad(a);
    return 0;
}

static int k_fill_lists(tess_task *task, const void *args, size_t len)
{
    (void)args, (void)len;
    app *a = tess_task_app(task);
    uint64_t first, count;
    tess_table_dense_range(a->lists, tess_task_instance(task), &first, &count);
    for (uint64_t k = first; k < first + count; k++) {
        if (k % 3 == 0) continue;
        unsigned char v[5];
        memset(v, (unsigned char)k, sizeof v);
        if (tess_table_put(a->lists, &k, v, k % 5) != TESS_OK) return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- control */

static void sums_of(const double *v, double *sum, double *weighted)
{
    *sum = *weighted = 0;
    for (uint64_t k = 0; k < KEYS; k++) *sum += v[k], *weighted += (double)k * v[k];
}

static int64_t bad_count(app *a)
{
    uint64_t zero = 0;
    int64_t n = 0;
    if (tess_table_get(a->bad, &zero, &n, sizeof n, NULL) != TESS_OK) return 0;
    return n;
}

/* Epochs of the recurrence, the odd partitions writing only in even epochs. */
static void check_epochs(tess_ctx *ctx, app *a)
{
    double expect[KEYS], next[KEYS];
    uint64_t first[PARTS + 1];
    for (int p = 0; p < PARTS; p++) {
        uint64_t n;
        tess_table_dense_range(a->vals, p, &first[p], &n);
        first[p + 1] = first[p] + n;
    }
    for (uint64_t k = 0; k < KEYS; k++) expect[k] = 0.0; /* the identity: nothing written yet */
    int all_ok = 1, workers_ok = 1, doubled_ok = 1;
    int64_t bad_before_doubled = 0;
    for (int e = 1; e <= EPOCHS + EPOCHS_DOUBLED; e++) {
        step_args sa = {.epoch = e, .odd_too = e % 2 == 0};
        sums_of(expect, &sa.sum, &sa.weighted);
        if (e == EPOCHS + 1) {
            workers_ok = bad_count(a) == 0;
            bad_before_doubled = bad_count(a);
        }
        tess_run(ctx, "k_step", PARTS, a->vals, &sa, sizeof sa);
        all_ok &= tess_barrier(ctx) == TESS_OK;
        /* Barriers with no run between them (a checkpoint barrier after an
         * iteration's): each switches the replicas again, with nothing
         * staged, and a fast rank's next ranges may reach a rank that has
         * not had both switches yet. */
        for (int x = 0; e > EPOCHS && x < 2; x++) doubled_ok &= tess_barrier(ctx) == TESS_OK;
        for (int p = 0; p < PARTS; p++)
            for (uint64_t k = first[p]; k < first[p + 1]; k++)
                next[k] = p % 2 == 1 && !sa.odd_too ? expect[k] : expect[source_of(k, e)] + 1.0;
        memcpy(expect, next, sizeof expect);
        const double *r = tess_table_replica(a->vals, NULL);
        all_ok &= r != NULL && memcmp(r, expect, sizeof expect) == 0;
        double v;
        uint64_t k = KEYS - 1;
        all_ok &= tess_table_get(a->vals, &k, &v, sizeof v, NULL) == TESS_OK && v == expect[k];
    }
    doubled_ok &= bad_count(a) == bad_before_doubled;
    check(all_ok, "replicated table: after each barrier the replica holds the epoch's writes "
                  "(whole epochs swapped, partial ones copied), the table the same values");
    check(workers_ok, "every rank's replica held the previous epoch while kernels ran");
    check(doubled_ok, "with two more barriers after each run, every rank's replica still held "
                      "the previous epoch while kernels ran");
}

/* A range the control function writes (under MPI, rank 0 lists it for the
 * ranks beside it, who copy it at their switch) is in every rank's replica
 * after the barrier, in two epochs running: the second write waits until
 * every rank has switched past the first. */
static void check_control_write(tess_ctx *ctx, app *a)
{
    double expect[KEYS], v[400];
    const double *r = tess_table_replica(a->vals, NULL);
    if (r == NULL) return;
    memcpy(expect, r, sizeof expect);
    int ok = 1;
    int64_t before = bad_count(a);
    for (int round = 1; round <= 2; round++) {
        for (int i = 0; i < 400; i++) v[i] = 0.5 * (double)(i + round * 7);
        memcpy(expect + 5, v, sizeof v);
        ok &= tess_table_put_range(a->vals, 5, 400, v) == TESS_OK;
        ok &= tess_barrier(ctx) == TESS_OK;
        step_args sa = {0};
        sums_of(expect, &sa.sum, &sa.weighted);
        tess_run(ctx, "k_check_vals", PARTS, a->vals, &sa, sizeof sa);
        ok &= tess_barrier(ctx) == TESS_OK;
        r = tess_table_replica(a->vals, NULL);
        ok &= r != NULL && memcmp(r, expect, sizeof expect) == 0;
    }
    check(ok && bad_count(a) == before,
          "ranges the control function writes reach every rank's replica at the barrier");
}

static void check_args(tess_ctx *ctx, app *a)
{
    static const size_t sizes[] = {0, 1, 1900, 2048, 5000, 70000};
    int ok = 1;
    int64_t before = bad_count(a);
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        size_t len = sizes[s];
        unsigned char *b = malloc(len ? len : 1);
        if (b == NULL) return;
        for (size_t i = 0; i < len; i++) b[i] = (unsigned char)((i * 31 + len) % 251);
        ok &= tess_run(ctx, "k_args", PARTS, a->vals, len ? b : NULL, len) == TESS_OK;
        ok &= tess_barrier(ctx) == TESS_OK;
        free(b);
    }
    check(ok && bad_count(a) == before,
          "kernel arguments of 0 B to 70 KB reach every task whole (board or message)");
}

/* A table without spec.replicated, written by update: tess_table_replicate. */
static void check_replicate(tess_ctx *ctx, app *a)
{
    check(tess_table_replica(a->plain, NULL) == NULL, "no replica before tess_table_replicate");
    double expect[KEYS];
    for (uint64_t k = 0; k < KEYS; k++) {
        expect[k] = k % 4 == 0 ? 0.0 : (double)(k * k);
        if (k % 4 != 0) tess_table_update(a->plain, &k, &expect[k], sizeof expect[k]);
    }
    int rc = tess_table_replicate(a->plain);
    if (rc == TESS_OK) rc = tess_barrier(ctx);
    const double *r = tess_table_replica(a->plain, NULL);
    check(rc == TESS_OK && r != NULL && memcmp(r, expect, sizeof expect) == 0,
          "tess_table_replicate: the replica holds every partition, absent keys as identity");
    step_args sa = {0, 0, 0, 0};
    sums_of(expect, &sa.sum, &sa.weighted);
    int64_t before = bad_count(a);
    tess_run(ctx, "k_check_plain", PARTS, a->plain, &sa, sizeof sa);
    check(tess_barrier(ctx) == TESS_OK && bad_count(a) == before,
          "tess_table_replicate: every rank's replica is complete");
}

static void check_scan(tess_ctx *ctx, app *a)
{
    int64_t before = bad_count(a);
    tess_run(ctx, "k_fill_lists", PARTS, a->lists, NULL, 0);
    int ok = tess_barrier(ctx) == TESS_OK;
    tess_run(ctx, "k_scan", PARTS, a->lists, NULL, 0);
    ok &= tess_barrier(ctx) == TESS_OK;
    check(ok && bad_count(a) == before,
          "tess_table_scan_dense: chunks cover the partition, absent keys NULL, values in place");
}

static void check_misuse(tess_ctx *ctx, app *a)
{
    int64_t before = bad_count(a);
    tess_run(ctx, "k_replicate", PARTS, NULL, NULL, 0);
    check(tess_barrier(ctx) == TESS_OK && bad_count(a) == before,
          "tess_table_replicate from a kernel is refused (TESS_ERR_MISUSE)");
    double v[2] = {1, 2};
    check(tess_table_put_range(a->vals, KEYS - 1, 2, v) == TESS_ERR_INVAL,
          "put_range past the last key is refused");
    check(tess_table_put_range(a->lists, 0, 1, v) == TESS_ERR_INVAL,
          "put_range on a variable-length table is refused");
    check(tess_table_replicate(a->lists) == TESS_ERR_INVAL,
          "tess_table_replicate of a variable-length table is refused");
}

/* Under mpirun on one machine, rank 0's ranges reach the others through its
 * node-shared segment, unless TESS_NODE_SHARE=0 keeps them to messages or
 * TESS_NODE_RANKS=1 puts every rank on a node of its own. */
static void check_sharing(tess_ctx *ctx)
{
    if (tess_nranks(ctx) < 2) return;
    const char *env = getenv("TESS_NODE_SHARE"), *node = getenv("TESS_NODE_RANKS");
    int off = (env != NULL && strcmp(env, "0") == 0) || (node != NULL && strcmp(node, "1") == 0);
    tess_stats st;
    tess_get_stats(ctx, &st);
    check(off ? st.replica_bytes_shared == 0 : st.replica_bytes_shared > 0,
          off ? "TESS_NODE_SHARE=0: ranges travel as messages only"
              : "ranks of one node copy ranges from the writer's shared segment");
}

static int control(tess_ctx *ctx, void *arg)
{
    app *a = arg;
    check_epochs(ctx, a);
    check_control_write(ctx, a);
    check_args(ctx, a);
    check_replicate(ctx, a);
    check_scan(ctx, a);
    check_misuse(ctx, a);
    check_sharing(ctx);
    return checks_report();
}

static int create(tess_ctx *ctx, void *arg)
{
    app *a = arg;
    static const uint64_t bounds[PARTS + 1] = {0, 10, 300, 310, 640, 641, 900, KEYS};
    tess_table_spec s;
    tess_table_spec_init(&s);
    s.key_size = 8, s.value_size = 8, s.dense = 1, s.key_count = KEYS, s.partitions = PARTS;
    s.range_bounds = bounds, s.name = "vals", s.replicated = 1;
    int rc = tess_table_create(ctx, &s, &a->vals);
    s.replicated = 0, s.name = "plain", s.accum = TESS_ACC_SUM, s.elem = TESS_F64;
    s.group_with = a->vals;
    if (rc == 0) rc = tess_table_create(ctx, &s, &a->plain);
    s.value_size = 0, s.accum = TESS_ACC_REPLACE, s.name = "lists";
    if (rc == 0) rc = tess_table_create(ctx, &s, &a->lists);
    tess_table_spec_init(&s);
    s.key_size = 8, s.value_size = 8, s.dense = 1, s.key_count = 1, s.name = "bad";
    s.accum = TESS_ACC_SUM, s.elem = TESS_I64;
    if (rc == 0) rc = tess_table_create(ctx, &s, &a->bad);
    tess_table_spec_init(&s);
    s.key_size = 8, s.value_size = 8, s.partitions = 2, s.replicated = 1, s.name = "hash";
    tess_table *hash = NULL;
    if (rc == 0 && tess_table_create(ctx, &s, &hash) != TESS_ERR_INVAL) {
        fprintf(stderr, "FAIL: a replicated hash table was accepted\n");
        rc = -1;
    }
    static const checks_kernel kernels[] = {
        CHECKS_KERNEL(k_step),     CHECKS_KERNEL(k_check_plain), CHECKS_KERNEL(k_check_vals),
        CHECKS_KERNEL(k_args),     CHECKS_KERNEL(k_fill_lists),  CHECKS_KERNEL(k_scan),
        CHECKS_KERNEL(k_replicate)};
    rc = checks_register(ctx, rc, kernels, (int)(sizeof kernels / sizeof *kernels));
    return rc;
}

int main(int argc, char **argv)
{
    tess_config cfg;
    checks_config(argc, argv, &cfg);
    app a = {0};
    return checks_run(&cfg, create, control, &a) != 0 ? 1 : 0;
}
