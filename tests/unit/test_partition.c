/*
 * test_partition.c — partition storage, dense and hash, fixed-size and
 * variable-length values, checked against plain reference arrays: the single
 * operations, iteration order and completeness, arena compaction under many
 * overwrites, hash growth with interleaved removals, and update_batch
 * against a loop of update.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_main.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "table/partition_impl.h"

static tess__accum make_accum(tess_accum kind, tess_elem elem, size_t value_size)
{
    tess__accum a;
    tess__accum_setup(&a, kind, elem, value_size, NULL);
    return a;
}

static uint64_t next_random(uint64_t *s)
{
    *s = *s * 6364136223846793005u + 1442695040888963407u;
    return *s >> 33;
}

static double get_f64(const tess__partition *p, uint64_t key)
{
    const void *v;
    size_t len;
    assert_int_equal(tess__partition_get(p, &key, &v, &len), 1);
    assert_int_equal(len, sizeof(double));
    double d;
    memcpy(&d, v, sizeof d);
    return d;
}

static void test_dense_single_ops(void **state)
{
    (void)state;
    tess__accum a = make_accum(TESS_ACC_SUM, TESS_F64, sizeof(double));
    tess__partition *p = tess__partition_new_dense(100, 50, sizeof(double), &a);
    assert_non_null(p);
    assert_int_equal(tess__partition_key_size(p), 8);
    assert_int_equal(tess__partition_value_size(p), 8);
    uint64_t k = 120, other = 121;
    double two = 2, three = 3;
    const void *v;
    size_t len;
    assert_int_equal(tess__partition_size(p), 0);
    assert_int_equal(tess__partition_get(p, &k, &v, &len), 0);
    assert_int_equal(tess__partition_update(p, &k, &two, sizeof two), TESS_OK);
    assert_int_equal(tess__partition_update(p, &k, &three, sizeof three), TESS_OK);
    assert_true(get_f64(p, k) == 5);
    assert_int_equal(tess__partition_contains(p, &k), 1);
    assert_int_equal(tess__partition_contains(p, &other), 0);
    assert_int_equal(tess__partition_put(p, &other, &three, sizeof three), TESS_OK);
    assert_int_equal(tess__partition_put(p, &k, &two, sizeof two), TESS_OK); /* overwrites */
    assert_true(get_f64(p, k) == 2);
    assert_int_equal(tess__partition_size(p), 2);
    assert_int_equal(tess__partition_put(p, &k, &two, 4), TESS_ERR_INVAL); /* wrong length */
    tess__partition_remove(p, &k);
    tess__partition_remove(p, &k); /* absent: no-op, size unchanged */
    assert_int_equal(tess__partition_size(p), 1);
    assert_int_equal(tess__partition_contains(p, &k), 0);
    assert_int_equal(tess__partition_update(p, &k, &three, sizeof three), TESS_OK);
    assert_true(get_f64(p, k) == 3); /* starts again from the identity */
    tess__partition_clear(p);
    assert_int_equal(tess__partition_size(p), 0);
    assert_int_equal(tess__partition_contains(p, &other), 0);
    assert_int_equal(tess__partition_update(p, &other, &two, sizeof two), TESS_OK);
    assert_true(get_f64(p, other) == 2);
    tess__partition_free(p);
    tess__partition_free(NULL);
}

static void test_dense_out_of_range(void **state)
{
    (void)state;
    tess__accum a = make_accum(TESS_ACC_SUM, TESS_I64, sizeof(int64_t));
    tess__partition *p = tess__partition_new_dense(10, 5, sizeof(int64_t), &a);
    int64_t one = 1;
    const void *v;
    size_t len;
    uint64_t bad[] = {9, 15, UINT64_MAX, 0};
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(tess__partition_put(p, &bad[i], &one, sizeof one), TESS_ERR_INVAL);
        assert_int_equal(tess__partition_update(p, &bad[i], &one, sizeof one), TESS_ERR_INVAL);
        assert_int_equal(tess__partition_get(p, &bad[i], &v, &len), 0);
        assert_int_equal(tess__partition_contains(p, &bad[i]), 0);
        tess__partition_remove(p, &bad[i]);
    }
    uint64_t batch[] = {10, 14, 15};
    int64_t ones[] = {1, 1, 1};
    assert_int_equal(tess__partition_update_batch(p, batch, ones, 3), TESS_ERR_INVAL);
    uint64_t edge[] = {10, 14};
    assert_int_equal(tess__partition_update_batch(p, edge, ones, 2), TESS_OK);
    assert_int_equal(tess__partition_contains(p, &edge[1]), 1);
    tess__partition_free(p);
}

/* Absent keys hold the identity in the flat array; present keys their value. */
static void test_dense_data(void **state)
{
    (void)state;
    tess__accum a = make_accum(TESS_ACC_MIN, TESS_I32, 2 * sizeof(int32_t));
    tess__partition *p = tess__partition_new_dense(7, 4, 2 * sizeof(int32_t), &a);
    uint64_t count = 0;
    int32_t *data = tess__partition_dense_data(p, &count);
    assert_non_null(data);
    assert_int_equal(count, 4);
    for (int i = 0; i < 8; i++) assert_int_equal(data[i], INT32_MAX);
    uint64_t k = 9;
    int32_t u[2] = {5, -7}, w[2] = {3, 0};
    tess__partition_update(p, &k, u, sizeof u);
    tess__partition_update(p, &k, w, sizeof w);
    data = tess__partition_dense_data(p, &count);
    assert_int_equal(data[4], 3);
    assert_int_equal(data[5], -7);
    assert_int_equal(data[0], INT32_MAX);
    /* A stray write into an absent slot does not leak into the next update. */
    data[2] = -100;
    uint64_t k8 = 8;
    tess__partition_update(p, &k8, u, sizeof u);
    assert_int_equal(data[2], 5);
    tess__partition_remove(p, &k);
    assert_int_equal(data[4], INT32_MAX);
    assert_int_equal(data[5], INT32_MAX);
    tess__partition_free(p);
    tess__accum r = make_accum(TESS_ACC_REPLACE, TESS_ELEM_NONE, 0);
    p = tess__partition_new_dense(0, 4, 0, &r);
    assert_null(tess__partition_dense_data(p, &count));
    tess__partition_free(p);
    p = tess__partition_new_hash(8, 8, &a);
    assert_null(tess__partition_dense_data(p, &count));
    tess__partition_free(p);
}

static void test_dense_iteration(void **state)
{
    (void)state;
    tess__accum a = make_accum(TESS_ACC_REPLACE, TESS_I64, sizeof(int64_t));
    tess__partition *p = tess__partition_new_dense(1000, 300, sizeof(int64_t), &a);
    uint8_t want[300] = {0};
    uint64_t rng = 7;
    for (int i = 0; i < 200; i++) {
        uint64_t k = 1000 + next_random(&rng) % 300;
        int64_t v = (int64_t)k * 3;
        tess__partition_put(p, &k, &v, sizeof v);
        want[k - 1000] = 1;
    }
    uint64_t k = 1000 + 299;
    int64_t last = 42;
    tess__partition_put(p, &k, &last, sizeof last);
    want[299] = 1;
    tess__cursor c = {0};
    const void *key, *val;
    size_t len, seen = 0;
    uint64_t prev = 0;
    while (tess__partition_next(p, &c, &key, &val, &len)) {
        uint64_t kk = *(const uint64_t *)key;
        int64_t vv;
        memcpy(&vv, val, sizeof vv);
        assert_true(seen == 0 || kk > prev); /* ascending */
        assert_true(want[kk - 1000]);
        assert_true(vv == (kk == 1299 ? 42 : (int64_t)kk * 3));
        assert_int_equal(len, sizeof(int64_t));
        prev = kk;
        seen++;
    }
    size_t present = 0;
    for (int i = 0; i < 300; i++) present += want[i];
    assert_int_equal(seen, present);
    assert_int_equal(tess__partition_size(p), present);
    assert_int_equal(tess__partition_next(p, &c, &key, &val, &len), 0); /* stays at end */
    tess__partition_free(p);
}

/* Reference for variable-length values: the bytes a key should hold. */
typedef struct var_ref {
    uint8_t bytes[64];
    size_t len;
    int present;
} var_ref;

static void fill_var(uint8_t *buf, size_t len, uint64_t seed)
{
    for (size_t i = 0; i < len; i++) buf[i] = (uint8_t)(seed * 31 + i * 7);
}

static void check_var(const tess__partition *p, const var_ref *ref, size_t nkeys,
                      void (*make_key)(uint64_t id, void *key))
{
    uint8_t key[16];
    uint64_t present = 0;
    for (uint64_t id = 0; id < nkeys; id++) {
        const void *v;
        size_t len;
        make_key(id, key);
        int found = tess__partition_get(p, key, &v, &len);
        assert_int_equal(found, ref[id].present);
        if (!found) continue;
        present++;
        assert_int_equal(len, ref[id].len);
        if (len) assert_memory_equal(v, ref[id].bytes, len);
    }
    assert_int_equal(tess__partition_size(p), present);
}

static void dense_key(uint64_t id, void *key) { *(uint64_t *)key = 500 + id; }
static void hash_key(uint64_t id, void *key)
{
    uint64_t lo = id * 0x9e3779b97f4a7c15u;
    uint32_t hi = (uint32_t)id ^ 0xabcdu;
    memcpy(key, &lo, 8);
    memcpy((uint8_t *)key + 8, &hi, 4);
}

/* Many overwrites force arena compaction; contents must survive it and the
 * arena must not grow without bound. */
static void run_var_values(tess__partition *p, void (*make_key)(uint64_t, void *))
{
    enum { NKEYS = 200, ROUNDS = 20000 };
    var_ref *ref = calloc(NKEYS, sizeof *ref);
    uint64_t rng = 99;
    uint8_t key[16];
    size_t peak = 0;
    for (int r = 0; r < ROUNDS; r++) {
        uint64_t id = next_random(&rng) % NKEYS, op = next_random(&rng) % 8;
        make_key(id, key);
        if (op == 0) {
            tess__partition_remove(p, key);
            ref[id].present = 0;
            continue;
        }
        size_t len = next_random(&rng) % 65; /* includes empty values */
        fill_var(ref[id].bytes, len, (uint64_t)r);
        ref[id].len = len;
        ref[id].present = 1;
        int rc = op == 1 ? tess__partition_update(p, key, ref[id].bytes, len)
                         : tess__partition_put(p, key, ref[id].bytes, len);
        assert_int_equal(rc, TESS_OK);
        if (r % 1000 == 0) check_var(p, ref, NKEYS, make_key);
        if (tess__partition_bytes(p) > peak) peak = tess__partition_bytes(p);
    }
    check_var(p, ref, NKEYS, make_key);
    /* 200 keys of <= 64 bytes live: far below the 20000 * 32 bytes written */
    assert_true(peak < 200 * 1024);
    tess__partition_clear(p);
    assert_int_equal(tess__partition_size(p), 0);
    make_key(3, key);
    assert_int_equal(tess__partition_put(p, key, "abc", 3), TESS_OK);
    const void *v;
    size_t len;
    assert_int_equal(tess__partition_get(p, key, &v, &len), 1);
    assert_int_equal(len, 3);
    assert_memory_equal(v, "abc", 3);
    free(ref);
}

static void test_dense_var_values(void **state)
{
    (void)state;
    tess__accum a = make_accum(TESS_ACC_REPLACE, TESS_ELEM_NONE, 0);
    tess__partition *p = tess__partition_new_dense(500, 200, 0, &a);
    assert_int_equal(tess__partition_value_size(p), 0);
    run_var_values(p, dense_key);
    tess__partition_free(p);
}

static void test_hash_var_values(void **state)
{
    (void)state;
    tess__accum a = make_accum(TESS_ACC_REPLACE, TESS_ELEM_NONE, 0);
    tess__partition *p = tess__partition_new_hash(12, 0, &a);
    assert_int_equal(tess__partition_key_size(p), 12);
    run_var_values(p, hash_key);
    tess__partition_free(p);
}

static void test_hash_single_ops(void **state)
{
    (void)state;
    tess__accum a = make_accum(TESS_ACC_MAX, TESS_F32, 3 * sizeof(float));
    tess__partition *p = tess__partition_new_hash(5, 3 * sizeof(float), &a);
    const char *k1 = "alpha", *k2 = "bravo";
    float u[3] = {1, -2, 3}, w[3] = {0, 5, -1};
    const void *v;
    size_t len;
    assert_int_equal(tess__partition_get(p, k1, &v, &len), 0);
    assert_int_equal(tess__partition_update(p, k1, u, sizeof u), TESS_OK);
    assert_int_equal(tess__partition_update(p, k1, w, sizeof w), TESS_OK);
    assert_int_equal(tess__partition_get(p, k1, &v, &len), 1);
    float got[3];
    memcpy(got, v, sizeof got);
    assert_true(got[0] == 1 && got[1] == 5 && got[2] == 3);
    assert_int_equal(tess__partition_update(p, k2, u, 4), TESS_ERR_INVAL);
    assert_int_equal(tess__partition_contains(p, k2), 0);
    assert_int_equal(tess__partition_put(p, k2, w, sizeof w), TESS_OK);
    assert_int_equal(tess__partition_size(p), 2);
    tess__partition_remove(p, k1);
    assert_int_equal(tess__partition_size(p), 1);
    assert_int_equal(tess__partition_contains(p, k1), 0);
    assert_int_equal(tess__partition_contains(p, k2), 1);
    float neg[3] = {-5, -6, -7};
    tess__partition_update(p, k1, neg, sizeof neg); /* from -inf, not the old value */
    assert_int_equal(tess__partition_get(p, k1, &v, &len), 1);
    assert_memory_equal(v, neg, sizeof neg);
    tess__partition_clear(p);
    assert_int_equal(tess__partition_size(p), 0);
    assert_int_equal(tess__partition_contains(p, k2), 0);
    tess__cursor c = {0};
    const void *key;
    assert_int_equal(tess__partition_next(p, &c, &key, &v, &len), 0);
    assert_int_equal(tess__partition_put(p, k2, w, sizeof w), TESS_OK);
    assert_int_equal(tess__partition_contains(p, k2), 1);
    tess__partition_free(p);
}

enum { GROW_IDS = 150000, GROW_OPS = 400000 };

/* Every present id seen exactly once with its value, nothing else. */
static void check_hash_iteration(const tess__partition *p, const uint8_t *present,
                                 const int64_t *value)
{
    uint8_t *seen = calloc(GROW_IDS, 1);
    tess__cursor c = {0};
    const void *key, *val;
    size_t len;
    uint64_t n = 0;
    while (tess__partition_next(p, &c, &key, &val, &len)) {
        uint64_t id;
        memcpy(&id, key, sizeof id);
        assert_true(id < GROW_IDS && present[id] && !seen[id]);
        int64_t v;
        memcpy(&v, val, sizeof v);
        assert_true(v == value[id]);
        seen[id] = 1;
        n++;
    }
    assert_int_equal(n, tess__partition_size(p));
    free(seen);
}

/* Growth to 100k+ keys with removals interleaved, against reference arrays. */
static void test_hash_growth(void **state)
{
    (void)state;
    tess__accum a = make_accum(TESS_ACC_SUM, TESS_I64, sizeof(int64_t));
    tess__partition *p = tess__partition_new_hash(8, sizeof(int64_t), &a);
    uint8_t *present = calloc(GROW_IDS, 1);
    int64_t *value = calloc(GROW_IDS, sizeof *value);
    uint64_t rng = 12345, count = 0;
    size_t small_bytes = tess__partition_bytes(p);
    for (uint64_t i = 0; i < GROW_OPS; i++) {
        uint64_t id = next_random(&rng) % GROW_IDS;
        int64_t u = (int64_t)(next_random(&rng) % 100) - 50;
        if (next_random(&rng) % 4 == 0) {
            tess__partition_remove(p, &id);
            count -= present[id];
            present[id] = 0;
            value[id] = 0;
        } else {
            assert_int_equal(tess__partition_update(p, &id, &u, sizeof u), TESS_OK);
            count += !present[id];
            present[id] = 1;
            value[id] += u;
        }
        if (i % 4096 == 0) assert_int_equal(tess__partition_size(p), count);
    }
    assert_true(count > 100000);
    assert_int_equal(tess__partition_size(p), count);
    for (uint64_t id = 0; id < GROW_IDS; id++) {
        const void *v;
        size_t len;
        assert_int_equal(tess__partition_contains(p, &id), present[id]);
        if (!tess__partition_get(p, &id, &v, &len)) continue;
        int64_t got;
        memcpy(&got, v, sizeof got);
        assert_true(got == value[id]);
    }
    check_hash_iteration(p, present, value);
    assert_true(tess__partition_bytes(p) > small_bytes + count * 16);
    free(present);
    free(value);
    tess__partition_free(p);
}

/* Removing and re-inserting over and over (tombstones) must not break
 * lookups nor grow the table without bound. */
static void test_hash_churn(void **state)
{
    (void)state;
    tess__accum a = make_accum(TESS_ACC_REPLACE, TESS_I64, sizeof(int64_t));
    tess__partition *p = tess__partition_new_hash(8, sizeof(int64_t), &a);
    for (uint64_t i = 0; i < 200000; i++) {
        uint64_t k = i, old = i - 100;
        int64_t v = (int64_t)i;
        tess__partition_put(p, &k, &v, sizeof v);
        if (i % 2) tess__partition_remove(p, &k);
        else if (i >= 100) tess__partition_remove(p, &old); /* ~50 keys alive */
    }
    assert_int_equal(tess__partition_size(p), 50);
    assert_true(tess__partition_bytes(p) < 64 * 1024); /* tombstones were reclaimed */
    uint64_t k = 199998;
    assert_int_equal(tess__partition_contains(p, &k), 1);
    k = 199999;
    assert_int_equal(tess__partition_contains(p, &k), 0);
    tess__partition_free(p);
}

/* update_batch must leave the same contents and sizes as a loop of update. */
static void compare_batch(tess__partition *batch, tess__partition *loop, const uint8_t *keys,
                          const uint8_t *upd, size_t n)
{
    size_t ks = tess__partition_key_size(loop), vs = tess__partition_value_size(loop);
    assert_int_equal(tess__partition_update_batch(batch, keys, upd, n), TESS_OK);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(tess__partition_update(loop, keys + i * ks, upd + i * vs, vs), TESS_OK);
    assert_int_equal(tess__partition_size(batch), tess__partition_size(loop));
    tess__cursor cb = {0}, cl = {0};
    const void *kb, *vb, *kl, *vl;
    size_t lb, ll;
    while (tess__partition_next(loop, &cl, &kl, &vl, &ll)) {
        assert_int_equal(tess__partition_next(batch, &cb, &kb, &vb, &lb), 1);
        assert_memory_equal(kb, kl, ks);
        assert_memory_equal(vb, vl, vs);
    }
    assert_int_equal(tess__partition_next(batch, &cb, &kb, &vb, &lb), 0);
}

static void run_batch_case(const tess__accum *a, int dense, size_t vs)
{
    enum { N = 3000, RANGE = 700, FIRST = 50 };
    tess__partition *b =
        dense ? tess__partition_new_dense(FIRST, RANGE, vs, a) : tess__partition_new_hash(8, vs, a);
    tess__partition *l =
        dense ? tess__partition_new_dense(FIRST, RANGE, vs, a) : tess__partition_new_hash(8, vs, a);
    uint64_t *keys = malloc(N * sizeof *keys), rng = vs * 3 + (uint64_t)dense;
    int64_t *upd = malloc(N * vs);
    for (int round = 0; round < 3; round++) {
        for (size_t i = 0; i < N; i++) keys[i] = FIRST + next_random(&rng) % (RANGE / 2);
        for (size_t i = 0; i < N * vs / 8; i++) upd[i] = (int64_t)(next_random(&rng) % 9) - 4;
        compare_batch(b, l, (const uint8_t *)keys, (const uint8_t *)upd, N);
        uint64_t gone = keys[0];
        tess__partition_remove(b, &gone); /* present counter and identity after removal */
        tess__partition_remove(l, &gone);
    }
    free(keys);
    free(upd);
    tess__partition_free(b);
    tess__partition_free(l);
}

typedef struct sum_count {
    int64_t sum, count;
} sum_count;

static void sc_init(void *v, size_t n)
{
    (void)n;
    *(sum_count *)v = (sum_count){100, 0};
}
static void sc_acc(void *v, const void *u, size_t n)
{
    (void)n;
    sum_count *s = v;
    const sum_count *d = u;
    s->sum += d->sum;
    s->count += 1;
}

static void test_batch_equals_loop(void **state)
{
    (void)state;
    tess__accum sum = make_accum(TESS_ACC_SUM, TESS_I64, 8);
    tess__accum min3 = make_accum(TESS_ACC_MIN, TESS_I64, 24);
    tess__accum repl = make_accum(TESS_ACC_REPLACE, TESS_ELEM_NONE, 16);
    tess_accum_ops ops = {sc_init, sc_acc, NULL, NULL};
    tess__accum user;
    tess__accum_setup(&user, TESS_ACC_USER, TESS_ELEM_NONE, sizeof(sum_count), &ops);
    for (int dense = 0; dense <= 1; dense++) {
        run_batch_case(&sum, dense, 8);
        run_batch_case(&min3, dense, 24);
        run_batch_case(&repl, dense, 16);
        run_batch_case(&user, dense, sizeof(sum_count));
    }
    tess__accum var = make_accum(TESS_ACC_REPLACE, TESS_ELEM_NONE, 0);
    tess__partition *p = tess__partition_new_hash(8, 0, &var);
    uint64_t k = 1;
    assert_int_equal(tess__partition_update_batch(p, &k, "x", 1), TESS_ERR_INVAL);
    tess__partition_free(p);
}

/* A user accumulator through the partition: initialize on first update, and
 * again after a removal. */
static void test_user_accumulator(void **state)
{
    (void)state;
    tess_accum_ops ops = {sc_init, sc_acc, NULL, NULL};
    tess__accum user;
    tess__accum_setup(&user, TESS_ACC_USER, TESS_ELEM_NONE, sizeof(sum_count), &ops);
    for (int dense = 0; dense <= 1; dense++) {
        tess__partition *p = dense ? tess__partition_new_dense(0, 10, sizeof(sum_count), &user)
                                   : tess__partition_new_hash(8, sizeof(sum_count), &user);
        uint64_t k = 4;
        sum_count u = {5, 0};
        const void *v;
        size_t len;
        tess__partition_update(p, &k, &u, sizeof u);
        tess__partition_update(p, &k, &u, sizeof u);
        assert_int_equal(tess__partition_get(p, &k, &v, &len), 1);
        assert_true(((const sum_count *)v)->sum == 110 && ((const sum_count *)v)->count == 2);
        tess__partition_remove(p, &k);
        tess__partition_update(p, &k, &u, sizeof u);
        assert_int_equal(tess__partition_get(p, &k, &v, &len), 1);
        assert_true(((const sum_count *)v)->sum == 105 && ((const sum_count *)v)->count == 1);
        tess__partition_free(p);
    }
}

static void test_bytes(void **state)
{
    (void)state;
    tess__accum a = make_accum(TESS_ACC_SUM, TESS_F64, sizeof(double));
    tess__partition *p = tess__partition_new_dense(0, 1 << 16, sizeof(double), &a);
    assert_true(tess__partition_bytes(p) >= (1u << 16) * sizeof(double));
    assert_true(tess__partition_bytes(p) < 2 * (1u << 16) * sizeof(double));
    tess__partition_free(p);
    p = tess__partition_new_dense(5, 0, sizeof(double), &a); /* empty range */
    uint64_t k = 5;
    double one = 1;
    assert_int_equal(tess__partition_update(p, &k, &one, sizeof one), TESS_ERR_INVAL);
    assert_int_equal(tess__partition_size(p), 0);
    tess__partition_free(p);
}

/* ---- chunks (tess__partition_chunk) ---- */

typedef struct chunk_seen {
    uint8_t *seen; /* times each key 0..n-1 was visited */
    uint64_t n, bad;
} chunk_seen;

static int count_key(const void *key, const void *value, size_t len, void *arg)
{
    chunk_seen *c = arg;
    uint64_t k;
    (void)value, (void)len;
    memcpy(&k, key, sizeof k);
    if (k < c->n) c->seen[k]++;
    else c->bad++;
    return 0;
}

/* Chunks of `budget` bytes from the start; between chunks, `churn` keys
 * of the upper half are removed and put back, and `grow` new ones (from
 * *next_new on, 4n at most: the table grows) put.  Returns the number of
 * chunks. */
static uint64_t walk_chunks(tess__partition *p, size_t budget, chunk_seen *c, uint64_t churn,
                            uint64_t grow, uint64_t *next_new)
{
    uint64_t from = 0, next = 0, chunks = 0, rng = 99;
    int more = 1;
    int64_t one = 1;
    while (more) {
        assert_int_equal(tess__partition_chunk(p, from, budget, count_key, c, &next, &more), 0);
        chunks++;
        assert_true(!more || chunks == 1 || next > from);
        from = next;
        for (uint64_t i = 0; i < churn; i++) {
            uint64_t k = c->n / 2 + next_random(&rng) % (c->n - c->n / 2); /* upper half only */
            tess__partition_remove(p, &k);
            assert_int_equal(tess__partition_put(p, &k, &one, sizeof one), TESS_OK);
        }
        for (uint64_t i = 0; i < grow && *next_new < 5 * c->n; i++, (*next_new)++)
            assert_int_equal(tess__partition_put(p, next_new, &one, sizeof one), TESS_OK);
    }
    return chunks;
}

/* Keys whose probe ran past the last slot to the first ones (their home, as
 * partition_hash.c computes it for 8-byte keys, is past their slot). */
static int wrapped_keys(const tess__partition *p)
{
    int n = 0;
    for (uint64_t s = 0; s < p->cap && p->state[s] != 0; s++) {
        uint64_t k;
        memcpy(&k, p->keys + s * 8, 8);
        uint64_t home = tess_mix64(8 ^ k) >> (64 - __builtin_ctzll(p->cap));
        n += p->state[s] == 1 && home > s;
    }
    return n;
}

/* Every key once, whatever the table's size and the chunk's budget, with
 * probe runs that wrap past the end among the cases; and while keys are
 * removed, put back and added between chunks (the table growing), the keys
 * present throughout still once and none twice. */
static void test_hash_chunks(void **state)
{
    (void)state;
    tess__accum a = make_accum(TESS_ACC_REPLACE, TESS_I64, sizeof(int64_t));
    int wrapped = 0;
    for (uint64_t n = 1; n < 3000; n = n * 9 / 8 + 1) {
        for (size_t budget = 1; budget < 100000; budget *= 17) {
            tess__partition *p = tess__partition_new_hash(8, sizeof(int64_t), &a);
            int64_t one = 1;
            for (uint64_t k = 0; k < n; k++) tess__partition_put(p, &k, &one, sizeof one);
            wrapped += wrapped_keys(p);
            chunk_seen c = {calloc(n, 1), n, 0};
            uint64_t chunks = walk_chunks(p, budget, &c, 0, 0, NULL);
            for (uint64_t k = 0; k < n; k++) assert_int_equal(c.seen[k], 1);
            assert_true(c.bad == 0 && (budget > 24 * n || chunks > 1));
            memset(c.seen, 0, n);
            uint64_t next_new = n;
            walk_chunks(p, budget, &c, 3, n / 8 + 1, &next_new);
            for (uint64_t k = 0; k < n; k++)
                assert_true(k >= n / 2 ? c.seen[k] <= 1 : c.seen[k] == 1);
            free(c.seen);
            tess__partition_free(p);
        }
    }
    assert_true(wrapped > 0);
}

static void test_dense_chunks(void **state)
{
    (void)state;
    tess__accum a = make_accum(TESS_ACC_REPLACE, TESS_I64, sizeof(int64_t));
    tess__partition *p = tess__partition_new_dense(0, 1000, sizeof(int64_t), &a);
    int64_t one = 1;
    for (uint64_t k = 0; k < 1000; k += 3) tess__partition_put(p, &k, &one, sizeof one);
    chunk_seen c = {calloc(1000, 1), 1000, 0};
    uint64_t chunks = walk_chunks(p, 100, &c, 0, 0, NULL);
    for (uint64_t k = 0; k < 1000; k++) assert_int_equal(c.seen[k], k % 3 == 0);
    assert_int_equal(chunks, (334 + 4) / 5); /* 24-byte records: 5 per 100 bytes */
    free(c.seen);
    tess__partition_free(p);
}

TEST_MAIN(cmocka_unit_test(test_dense_single_ops), cmocka_unit_test(test_dense_out_of_range),
          cmocka_unit_test(test_dense_data), cmocka_unit_test(test_dense_iteration),
          cmocka_unit_test(test_dense_var_values), cmocka_unit_test(test_hash_var_values),
          cmocka_unit_test(test_hash_single_ops), cmocka_unit_test(test_hash_growth),
          cmocka_unit_test(test_hash_churn), cmocka_unit_test(test_batch_equals_loop),
          cmocka_unit_test(test_user_accumulator), cmocka_unit_test(test_bytes),
          cmocka_unit_test(test_hash_chunks), cmocka_unit_test(test_dense_chunks))
