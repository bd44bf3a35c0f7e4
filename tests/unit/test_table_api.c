/*
 * test_table_api.c — public table calls that no application uses, in
 * embedded mode: tess_table_scan on hash and dense tables, batch updates on
 * the path without a per-thread combining array (hash tables, user
 * accumulators), and tess_task_instances.  A coverage run of the fast tier
 * found these never executed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "test_main.h"

#include "test_ctx.h"
#include "tessera/tessera.h"

static tess_table *new_table(tess_ctx *ctx, int dense, uint64_t key_count, int parts,
                             tess_accum acc, const char *user)
{
    tess_table_spec s;
    tess_table_spec_init(&s);
    s.key_size = 8;
    s.value_size = 8;
    s.dense = dense;
    s.key_count = key_count;
    s.partitions = parts;
    s.accum = acc;
    s.accumulator = user;
    if (acc == TESS_ACC_SUM) s.elem = TESS_F64;
    tess_table *t = NULL;
    assert_int_equal(tess_table_create(ctx, &s, &t), TESS_OK);
    return t;
}

/* ------------------------------------------------------------------ scan */

enum { SCAN_KEYS = 1000 };

typedef struct scan_seen {
    const tess_table *t;
    int partition;
    int visits[SCAN_KEYS];
    int count, stop_after, bad, ascending;
    uint64_t last;
} scan_seen;

static int note_key(const void *key, const void *value, size_t len, void *arg)
{
    scan_seen *s = arg;
    uint64_t k, v;
    memcpy(&k, key, sizeof k);
    memcpy(&v, value, sizeof v);
    if (len != sizeof v || k >= SCAN_KEYS || v != k * k + 1 ||
        tess_table_partition_of(s->t, &k) != s->partition)
        s->bad++;
    else s->visits[k]++;
    if (s->ascending && s->count > 0 && k <= s->last) s->bad += 1000;
    s->last = k;
    s->count++;
    return s->stop_after > 0 && s->count == s->stop_after ? 5 : 0;
}

/* Every present key visited once, in its own partition, with its value. */
static void scan_all(tess_table *t, int parts, int dense, const int *want)
{
    scan_seen *s = calloc(1, sizeof *s);
    assert_non_null(s);
    s->t = t;
    s->ascending = dense; /* a dense table's keys come in order */
    for (int p = 0; p < parts; p++) {
        s->partition = p;
        s->count = 0;
        assert_int_equal(tess_table_scan(t, p, note_key, s), TESS_OK);
    }
    assert_int_equal(s->bad, 0);
    for (int k = 0; k < SCAN_KEYS; k++) assert_int_equal(s->visits[k], want[k]);
    free(s);
}

static void test_scan(void **state)
{
    (void)state;
    tess_ctx *ctx = test_ctx(2);
    for (int dense = 0; dense <= 1; dense++) {
        tess_table *t = new_table(ctx, dense, SCAN_KEYS, 4, TESS_ACC_REPLACE, NULL);
        int want[SCAN_KEYS] = {0};
        for (uint64_t k = 0; k < SCAN_KEYS; k += 3) {
            uint64_t v = k * k + 1;
            assert_int_equal(tess_table_put(t, &k, &v, sizeof v), TESS_OK);
            want[k] = 1;
        }
        scan_all(t, 4, dense, want);

        /* fn's non-zero return stops the scan and is returned */
        scan_seen *s = calloc(1, sizeof *s);
        assert_non_null(s);
        s->t = t, s->partition = 1, s->stop_after = 3;
        assert_int_equal(tess_table_scan(t, 1, note_key, s), 5);
        assert_int_equal(s->count, 3);
        free(s);

        /* a partition that does not exist here */
        assert_int_equal(tess_table_scan(t, 4, note_key, NULL), TESS_ERR_INVAL);
        assert_int_equal(tess_table_scan(t, -1, note_key, NULL), TESS_ERR_INVAL);
    }
    tess_finalize(ctx);
}

/* A scan sees the updates still buffered in this thread (it flushes them). */
static void test_scan_sees_buffered_updates(void **state)
{
    (void)state;
    tess_ctx *ctx = test_ctx(1);
    int want[SCAN_KEYS] = {0};
    tess_table *u = new_table(ctx, 0, 0, 3, TESS_ACC_REPLACE, NULL);
    for (uint64_t k = 0; k < SCAN_KEYS; k += 7) {
        uint64_t v = k * k + 1;
        assert_int_equal(tess_table_update(u, &k, &v, sizeof v), TESS_OK);
        want[k] = 1;
    }
    scan_all(u, 3, 0, want);
    tess_finalize(ctx);
}

/* ------------------------------------------------------- batch, routed path */

static uint64_t lcg(uint64_t *x)
{
    *x = *x * 6364136223846793005ULL + 1442695040888963407ULL;
    return *x >> 33;
}

/* More updates than one routing chunk, many to the same keys: the sums are
 * those of one update at a time (small integers: exact in any order). */
static void test_batch_hash_sum(void **state)
{
    (void)state;
    enum { N = 10000, KEYS = 700 };
    tess_ctx *ctx = test_ctx(2);
    tess_table *t = new_table(ctx, 0, 0, 5, TESS_ACC_SUM, NULL);
    uint64_t *keys = malloc(N * sizeof *keys), x = 42;
    double *vals = malloc(N * sizeof *vals), want[KEYS] = {0};
    int hit[KEYS] = {0}, distinct = 0;
    assert_non_null(keys);
    assert_non_null(vals);
    for (int i = 0; i < N; i++) {
        keys[i] = lcg(&x) % KEYS * 1000003; /* spread over the hash */
        vals[i] = (double)(lcg(&x) % 9) - 4.0;
        want[keys[i] / 1000003] += vals[i];
        distinct += !hit[keys[i] / 1000003]++;
    }
    assert_int_equal(tess_table_update_batch(t, keys, vals, N), TESS_OK);
    assert_int_equal(tess_table_flush(t), TESS_OK);
    assert_int_equal(tess_table_size(t), distinct);
    for (uint64_t k = 0; k < KEYS; k++) {
        uint64_t key = k * 1000003;
        double got = 0;
        if (!hit[k]) {
            assert_int_equal(tess_table_contains(t, &key), 0);
            continue;
        }
        assert_int_equal(tess_table_get(t, &key, &got, sizeof got, NULL), TESS_OK);
        assert_true(got == want[k]);
    }
    free(keys);
    free(vals);
    tess_finalize(ctx);
}

/* Last write wins: within a batch the later entry for a key, and a single
 * update issued before the batch comes before it. */
static void test_batch_keeps_order(void **state)
{
    (void)state;
    tess_ctx *ctx = test_ctx(1);
    tess_table *t = new_table(ctx, 0, 0, 3, TESS_ACC_REPLACE, NULL);
    uint64_t k = 11, v = 1, got = 0;
    assert_int_equal(tess_table_update(t, &k, &v, sizeof v), TESS_OK);
    uint64_t keys[6] = {11, 12, 11, 13, 12, 14}, vals[6] = {2, 3, 4, 5, 6, 7};
    assert_int_equal(tess_table_update_batch(t, keys, vals, 6), TESS_OK);
    uint64_t want[4][2] = {{11, 4}, {12, 6}, {13, 5}, {14, 7}};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(tess_table_get(t, &want[i][0], &got, sizeof got, NULL), TESS_OK);
        assert_int_equal(got, want[i][1]);
    }
    /* the batch before a single update: the update wins */
    v = 99;
    assert_int_equal(tess_table_update_batch(t, keys, vals, 1), TESS_OK);
    assert_int_equal(tess_table_update(t, &k, &v, sizeof v), TESS_OK);
    assert_int_equal(tess_table_get(t, &k, &got, sizeof got, NULL), TESS_OK);
    assert_int_equal(got, 99);
    tess_finalize(ctx);
}

/* A user accumulator keeps the newest of (sequence, value) pairs packed in
 * 8 bytes: high 32 bits the sequence.  Order-sensitive only through ties. */
static void newest_init(void *v, size_t n) { memset(v, 0, n); }
static void newest_acc(void *v, const void *u, size_t n)
{
    uint64_t a, b;
    memcpy(&a, v, sizeof a);
    memcpy(&b, u, sizeof b);
    if ((b >> 32) >= (a >> 32)) memcpy(v, u, n);
}
static void newest_view(void *out, const void *v, size_t n) { memcpy(out, v, n); }

/* A dense table with a user accumulator has no combining array either. */
static void test_batch_dense_user(void **state)
{
    (void)state;
    tess_ctx *ctx = test_ctx(2);
    tess_accum_ops ops = {newest_init, newest_acc, newest_acc, newest_view};
    assert_int_equal(tess_register_accumulator(ctx, "newest", &ops), TESS_OK);
    tess_table *t = new_table(ctx, 1, 50, 4, TESS_ACC_USER, "newest");
    uint64_t keys[5] = {3, 40, 3, 49, 0};
    uint64_t vals[5] = {(5ULL << 32) | 1, (1ULL << 32) | 2, (4ULL << 32) | 3, (2ULL << 32) | 4,
                        (7ULL << 32) | 5};
    assert_int_equal(tess_table_update_batch(t, keys, vals, 5), TESS_OK);
    uint64_t got = 0;
    assert_int_equal(tess_table_get(t, &keys[0], &got, sizeof got, NULL), TESS_OK);
    assert_int_equal(got & 0xffffffffu, 1); /* sequence 5 beats the later 4 */
    assert_int_equal(tess_table_get(t, &keys[3], &got, sizeof got, NULL), TESS_OK);
    assert_int_equal(got & 0xffffffffu, 4);
    assert_int_equal(tess_table_size(t), 4);
    uint64_t bad[2] = {1, 50};
    assert_int_equal(tess_table_update_batch(t, bad, vals, 2), TESS_ERR_INVAL);
    assert_non_null(strstr(tess_last_error(ctx), "outside"));
    tess_finalize(ctx);
}

/* ------------------------------------------------------------ task accessors */

typedef struct count_app {
    _Atomic int runs, wrong;
} count_app;

static int check_instances(tess_task *task, const void *a, size_t l)
{
    (void)a, (void)l;
    count_app *app = tess_task_app(task);
    atomic_fetch_add(&app->runs, 1);
    if (tess_task_instances(task) != 13 || tess_task_instance(task) < 0 ||
        tess_task_instance(task) >= 13)
        atomic_fetch_add(&app->wrong, 1);
    return 0;
}

static int instances_control(tess_ctx *ctx, void *arg)
{
    (void)arg;
    int rc = tess_run(ctx, "check_instances", 13, NULL, NULL, 0);
    return rc == TESS_OK ? tess_barrier(ctx) : rc;
}

static void test_task_instances(void **state)
{
    (void)state;
    tess_ctx *ctx = test_ctx(3);
    count_app app = {0};
    assert_int_equal(tess_register_kernel(ctx, "check_instances", check_instances), TESS_OK);
    assert_int_equal(tess_main(ctx, instances_control, &app), TESS_OK);
    assert_int_equal(atomic_load(&app.runs), 13);
    assert_int_equal(atomic_load(&app.wrong), 0);
    tess_finalize(ctx);
}

TEST_MAIN(cmocka_unit_test(test_scan), cmocka_unit_test(test_scan_sees_buffered_updates),
          cmocka_unit_test(test_batch_hash_sum), cmocka_unit_test(test_batch_keeps_order),
          cmocka_unit_test(test_batch_dense_user), cmocka_unit_test(test_task_instances))
