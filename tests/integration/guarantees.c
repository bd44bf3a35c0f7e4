/*
 * guarantees.c — the table guarantees of DESIGN §2, checked end to end on a
 * real runtime: run embedded (`guarantees --workers 4`) or under
 * `mpirun -np 3 guarantees`.  Prints one line per check and a closing
 * "N passed, N failed" line; exits non-zero on any failure.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "tessera/tessera.h"
#include "sched/report_wait.h" /* the barrier's wait, the one number this test shares */

#include "checks.h"

#define KEYS 97
#define REPS 2000
#define INSTANCES 12

typedef struct app {
    tess_table *sums, *order, *ran, *hash, *user, *sizes;
    _Atomic int failures; /* counted inside kernels, reported through `ran` */
} app;

/* ---- a user accumulator: keep the maximum and count the updates ---- */
typedef struct maxcount {
    int64_t max, count;
} maxcount;

static void mc_init(void *v, size_t n)
{
    (void)n;
    *(maxcount *)v = (maxcount){INT64_MIN, 0};
}
static void mc_acc(void *v, const void *u, size_t n)
{
    (void)n;
    maxcount *a = v;
    const maxcount *b = u;
    if (b->max > a->max) a->max = b->max;
    a->count += b->count;
}

/* Every instance adds 1 to each of KEYS keys REPS times (most keys remote). */
static int k_sum(tess_task *t, const void *args, size_t len)
{
    (void)args, (void)len;
    app *a = tess_task_app(t);
    int64_t one = 1;
    for (int r = 0; r < REPS; r++)
        for (uint64_t k = 0; k < KEYS; k++)
            if (tess_table_update(a->sums, &k, &one, sizeof one) != TESS_OK) return -1;
    uint64_t me = (uint64_t)tess_task_instance(t);
    int64_t local = tess_table_is_local(a->sums, tess_task_instance(t)) ? 1 : 0;
    return tess_table_update(a->ran, &me, &local, sizeof local);
}

/* Issue order: put, updates, get on the instance's own key (owned by some rank). */
static int k_order(tess_task *t, const void *args, size_t len)
{
    (void)args, (void)len;
    app *a = tess_task_app(t);
    uint64_t key = (uint64_t)(tess_task_instance(t) * 7 + 3) % KEYS;
    int64_t v = 100, one = 1, got = 0;
    int ok = tess_table_put(a->order, &key, &v, sizeof v) == TESS_OK;
    for (int i = 0; i < 10; i++) ok &= tess_table_update(a->order, &key, &one, sizeof one) == 0;
    ok &= tess_table_get(a->order, &key, &got, sizeof got, NULL) == TESS_OK && got == 110;
    ok &= tess_table_remove(a->order, &key) == TESS_OK;
    ok &= tess_table_contains(a->order, &key) == 0;
    ok &= tess_table_update(a->order, &key, &one, sizeof one) == TESS_OK;
    ok &= tess_table_flush(a->order) == TESS_OK;
    ok &= tess_table_get(a->order, &key, &got, sizeof got, NULL) == TESS_OK && got == 1;
    if (!ok) atomic_fetch_add(&a->failures, 1);
    return 0;
}

/* Hash table with string-ish keys and variable-length values; user accumulator. */
static int k_hash(tess_task *t, const void *args, size_t len)
{
    (void)args, (void)len;
    app *a = tess_task_app(t);
    int i = tess_task_instance(t);
    char key[16] = {0}, val[64];
    snprintf(key, sizeof key, "key-%d", i);
    int n = snprintf(val, sizeof val, "value of instance %d", i);
    int rc = tess_table_put(a->hash, key, val, (size_t)n + 1);
    maxcount u = {i, 1};
    uint64_t zero = 0;
    if (rc == TESS_OK) rc = tess_table_update(a->user, &zero, &u, sizeof u);
    return rc;
}

#define FLUSH_ROUNDS 20
#define FLUSH_KEYS 64

/* The control thread's puts of round r, after its tess_table_flush: every
 * instance must find each, also on a third rank whose get may overtake
 * the puts' own link. */
static int k_flushed(tess_task *t, const void *args, size_t len)
{
    int r = 0;
    if (len == sizeof r) memcpy(&r, args, sizeof r);
    app *a = tess_task_app(t);
    for (int i = 0; i < FLUSH_KEYS; i++) {
        char key[16] = {0};
        int got = -1;
        snprintf(key, sizeof key, "f%d-%d", r, i);
        if (tess_table_get(a->hash, key, &got, sizeof got, NULL) != TESS_OK || got != i)
            return tess_set_error(tess_task_ctx(t), TESS_ERR_KERNEL, "round %d: %s not there", r,
                                  key);
    }
    return 0;
}

static void check_flush(tess_ctx *ctx, app *a)
{
    int ok = 1;
    for (int r = 0; ok && r < FLUSH_ROUNDS; r++) {
        for (int i = 0; ok && i < FLUSH_KEYS; i++) {
            char key[16] = {0};
            snprintf(key, sizeof key, "f%d-%d", r, i);
            ok = tess_table_put(a->hash, key, &i, sizeof i) == TESS_OK;
        }
        ok = ok && tess_table_flush(a->hash) == TESS_OK &&
             tess_run(ctx, "k_flushed", INSTANCES, NULL, &r, sizeof r) == TESS_OK &&
             tess_barrier(ctx) == TESS_OK;
    }
    check(ok, "puts from the control thread, flushed, are there for kernels on every rank");
}

static int k_fail(tess_task *t, const void *args, size_t len)
{
    (void)args, (void)len;
    return tess_task_instance(t) == 3 ? TESS_ERR_FORMAT : 0;
}

/* Instance 1 sleeps past the barrier's warning time (set to 0.3 s in main). */
static int k_slow(tess_task *t, const void *args, size_t len)
{
    (void)args, (void)len;
    if (tess_task_instance(t) == 1) {
        struct timespec ts = {1, 0};
        nanosleep(&ts, NULL);
    }
    return 0;
}

/* Instance 0 writes every key after the others are done: the writes reach
 * ranks that have reported the run done already. */
static int k_late(tess_task *t, const void *args, size_t len)
{
    (void)args, (void)len;
    app *a = tess_task_app(t);
    if (tess_task_instance(t) != 0) return 0;
    struct timespec ts = {0, 2000000};
    nanosleep(&ts, NULL);
    int64_t one = 1;
    for (uint64_t k = 0; k < KEYS; k++)
        if (tess_table_update(a->sums, &k, &one, sizeof one) != TESS_OK) return -1;
    return 0;
}

/* Clearing a table while kernels write it would race: refused. */
static int k_clear(tess_task *t, const void *args, size_t len)
{
    (void)args, (void)len;
    app *a = tess_task_app(t);
    return tess_table_clear(a->sums) == TESS_ERR_MISUSE ? 0 : -1;
}

static int k_idle(tess_task *t, const void *args, size_t len)
{
    (void)t, (void)args, (void)len;
    return 0;
}

/* The kernels of the first run set no error: the context's last error is
 * the control function's own while they run. */
static void check_clear_refused(tess_ctx *ctx, app *a)
{
    int rc = tess_run(ctx, "k_idle", INSTANCES, NULL, NULL, 0);
    int early = tess_table_clear(a->sums);
    check(rc == TESS_OK && early == TESS_ERR_MISUSE &&
              strstr(tess_last_error(ctx), "while kernels may run") != NULL,
          "clear between tess_run and tess_barrier is refused, naming the table");
    check(tess_barrier(ctx) == TESS_OK, "(barrier)");
    rc = tess_run(ctx, "k_clear", INSTANCES, NULL, NULL, 0);
    check(rc == TESS_OK && tess_barrier(ctx) == TESS_OK,
          "clear from a kernel is refused (TESS_ERR_MISUSE)");
    check(tess_table_clear(a->sums) == TESS_OK, "clear after the barrier works");
}

static int64_t get_i64(tess_table *t, uint64_t key)
{
    int64_t v = -1;
    tess_table_get(t, &key, &v, sizeof v, NULL);
    return v;
}

#define LATE_ROUNDS 20

/* The barrier waits this long for the ranks' reports before it asks them. */
#define REPORT_WAIT TESS__REPORT_WAIT_SECONDS

/* The barrier ends on the counts the ranks report when done, and on those
 * they report when a write reaches them later; it asks the ranks only in a
 * run with a steal, or when the reports took longer than REPORT_WAIT (a
 * loaded machine: its fallback, not the rule).  Every late write must be
 * there when it returns. */
static void check_late_writes(tess_ctx *ctx, app *a)
{
    tess_stats before, after;
    tess_get_stats(ctx, &before);
    int all = 1;
    uint64_t slow = 0; /* barriers that waited long enough to ask */
    for (int64_t round = 1; round <= LATE_ROUNDS; round++) {
        int rc = tess_run(ctx, "k_late", INSTANCES, NULL, NULL, 0);
        double t = tess_now();
        if (rc == TESS_OK) rc = tess_barrier(ctx);
        slow += tess_now() - t >= REPORT_WAIT;
        all &= rc == TESS_OK;
        for (uint64_t k = 0; k < KEYS; k++) all &= get_i64(a->sums, k) == round;
    }
    check(all, "writes that reach ranks already done are applied when the barrier returns");
    tess_get_stats(ctx, &after);
    uint64_t asked = after.barriers_asked - before.barriers_asked;
    uint64_t steals = after.steals - before.steals;
    printf("late writes: %llu of %llu barriers asked the ranks, %llu steals, %llu barriers "
           "over %.0f ms\n",
           (unsigned long long)asked, (unsigned long long)(after.barriers - before.barriers),
           (unsigned long long)steals, (unsigned long long)slow, REPORT_WAIT * 1e3);
    check(asked <= steals + slow,
          "a barrier asks the ranks for their counts only in a run with a steal (or after "
          "waiting for their reports)");
}

static void check_sums(app *a)
{
    int all = 1;
    for (uint64_t k = 0; k < KEYS; k++) all &= get_i64(a->sums, k) == (int64_t)INSTANCES * REPS;
    check(all, "after a barrier every update of every instance is applied exactly once");
    int local = 1;
    for (uint64_t i = 0; i < INSTANCES; i++) local &= get_i64(a->ran, i) == 1;
    check(local, "instance i ran once, on the rank storing partition i of its locality table");
    check(tess_table_size(a->sums) == KEYS, "size counts the keys of all partitions");
}

static void check_iteration(app *a)
{
    int64_t seen = 0, total = 0;
    for (int p = 0; p < tess_table_partitions(a->sums); p++) {
        tess_iter *it = NULL;
        if (tess_table_iter(a->sums, p, &it) != TESS_OK) break;
        const void *k, *v;
        size_t len;
        while (tess_iter_next(it, &k, &v, &len) == 1) {
            int64_t x;
            memcpy(&x, v, sizeof x);
            total += x;
            seen++;
        }
        tess_iter_free(it);
    }
    check(seen == KEYS && total == (int64_t)KEYS * INSTANCES * REPS,
          "iterators over local and remote partitions see every entry");
}

static void check_hash(app *a)
{
    int ok = 1;
    for (int i = 0; i < INSTANCES; i++) {
        char key[16] = {0}, want[64], got[64] = "";
        snprintf(key, sizeof key, "key-%d", i);
        snprintf(want, sizeof want, "value of instance %d", i);
        size_t len = 0;
        ok &= tess_table_get(a->hash, key, got, sizeof got, &len) == TESS_OK &&
              len == strlen(want) + 1 && strcmp(got, want) == 0;
    }
    char missing[16] = "absent";
    ok &= tess_table_get(a->hash, missing, NULL, 0, NULL) == TESS_ERR_NOTFOUND;
    check(ok, "hash table with variable-length values: put/get across ranks");
    maxcount mc = {0, 0};
    uint64_t zero = 0;
    tess_table_get(a->user, &zero, &mc, sizeof mc, NULL);
    check(mc.max == INSTANCES - 1 && mc.count == INSTANCES,
          "a user accumulator combines concurrent updates");
}

/* Values above the message layer's 256 KiB "sent alone" size, on every
 * partition (so on other ranks too): a get copies them whole into a buffer
 * that fits, and into one a byte short copies nothing and says the length. */
static void check_large(app *a)
{
    enum { BIG = 600 * 1024 };
    unsigned char *want = malloc(BIG), *got = malloc(BIG);
    int ok = want && got;
    for (int i = 0; ok && i < 5; i++) {
        char key[16] = {0};
        snprintf(key, sizeof key, "big-%d", i);
        for (size_t j = 0; j < BIG; j++) want[j] = (unsigned char)(j * 31 + (size_t)i);
        size_t len = 0, n = BIG - (size_t)i * 4096; /* a length of each key's own */
        ok &= tess_table_put(a->hash, key, want, n) == TESS_OK;
        memset(got, 0xee, BIG);
        ok &= tess_table_get(a->hash, key, got, BIG, &len) == TESS_OK && len == n &&
              memcmp(got, want, n) == 0;
        memset(got, 0xee, BIG);
        len = 0;
        ok &= tess_table_get(a->hash, key, got, n - 1, &len) == TESS_ERR_INVAL && len == n &&
              got[0] == 0xee && got[n / 2] == 0xee;
        ok &= tess_table_remove(a->hash, key) == TESS_OK;
    }
    check(ok,
          "values of 600 KB across ranks: whole into a fitting buffer, nothing into a short one");
    free(want);
    free(got);
}

static int control(tess_ctx *ctx, void *arg)
{
    app *a = arg;
    int rc = tess_run(ctx, "k_sum", INSTANCES, a->sums, NULL, 0);
    check(rc == TESS_OK && tess_barrier(ctx) == TESS_OK, "run + barrier");
    check_sums(a);
    check_iteration(a);
    rc = tess_run(ctx, "k_order", INSTANCES, NULL, NULL, 0);
    check(rc == TESS_OK && tess_barrier(ctx) == TESS_OK, "second run + barrier");
    /* rank 0's instances are counted here; the other ranks' fail in main() */
    check(atomic_load(&a->failures) == 0,
          "one instance's put/update/get/remove on a key apply in issue order");
    tess_run(ctx, "k_hash", INSTANCES, NULL, NULL, 0);
    check(tess_barrier(ctx) == TESS_OK, "third run");
    check_hash(a);
    check_large(a);
    check_flush(ctx, a);
    check_clear_refused(ctx, a);
    check(tess_table_size(a->sums) == 0, "clear empties every partition on every rank");
    check_late_writes(ctx, a);
    tess_run(ctx, "k_fail", INSTANCES, NULL, NULL, 0);
    rc = tess_barrier(ctx);
    check(rc == TESS_ERR_KERNEL && strstr(tess_last_error(ctx), "k_fail instance 3") != NULL,
          "a failing kernel makes the barrier fail and names the instance");
    tess_run(ctx, "k_slow", 2, NULL, NULL, 0);
    check(tess_barrier(ctx) == TESS_OK, "a slow instance delays the barrier (stderr names it)");
    return checks_report();
}

static int create(tess_ctx *ctx, void *arg)
{
    app *a = arg;
    tess_accum_ops ops = {.initialize = mc_init, .accumulate = mc_acc, .merge = mc_acc};
    tess_table_spec s;
    tess_table_spec_init(&s);
    s.key_size = 8, s.value_size = 8, s.dense = 1, s.key_count = KEYS;
    s.partitions = INSTANCES, s.accum = TESS_ACC_SUM, s.elem = TESS_I64;
    int rc = tess_table_create(ctx, &s, &a->sums);
    s.name = "order";
    if (rc == 0) rc = tess_table_create(ctx, &s, &a->order);
    s.key_count = INSTANCES, s.name = "ran", s.group_with = a->sums;
    if (rc == 0) rc = tess_table_create(ctx, &s, &a->ran);
    tess_table_spec_init(&s);
    s.key_size = 16, s.value_size = 0, s.partitions = 5, s.name = "hash";
    if (rc == 0) rc = tess_table_create(ctx, &s, &a->hash);
    if (rc == 0) rc = tess_register_accumulator(ctx, "maxcount", &ops);
    tess_table_spec_init(&s);
    s.key_size = 8, s.value_size = sizeof(maxcount), s.accum = TESS_ACC_USER;
    s.accumulator = "maxcount", s.name = "user";
    if (rc == 0) rc = tess_table_create(ctx, &s, &a->user);
    static const checks_kernel kernels[] = {
        CHECKS_KERNEL(k_sum),  CHECKS_KERNEL(k_order),   CHECKS_KERNEL(k_hash),
        CHECKS_KERNEL(k_fail), CHECKS_KERNEL(k_flushed), CHECKS_KERNEL(k_slow),
        CHECKS_KERNEL(k_late), CHECKS_KERNEL(k_clear),   CHECKS_KERNEL(k_idle)};
    rc = checks_register(ctx, rc, kernels, (int)(sizeof kernels / sizeof *kernels));
    return rc;
}

int main(int argc, char **argv)
{
    tess_config cfg;
    checks_config(argc, argv, &cfg);
    cfg.barrier_warn_seconds = 0.3;
    app a = {0};
    int rc = checks_run(&cfg, create, control, &a);
    int remote_failures = atomic_load(&a.failures);
    if (remote_failures)
        fprintf(stderr, "FAIL: %d instances saw operations out of order\n", remote_failures);
    return rc != 0 || remote_failures ? 1 : 0;
}
