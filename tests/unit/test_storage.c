/*
 * test_storage.c — accumulators and partition storage (dense and hash,
 * fixed and variable-length values), checked against simple reference
 * arrays; and the per-thread combining path of the table layer.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "test_main.h"
#include "table/accum.h"
#include "table/partition.h"

static tess__accum acc(tess_accum kind, tess_elem elem, size_t vs)
{
    tess__accum a;
    tess__accum_setup(&a, kind, elem, vs, NULL);
    return a;
}

static void test_accum_builtins(void **state)
{
    (void)state;
    tess__accum a = acc(TESS_ACC_SUM, TESS_F64, 3 * sizeof(double));
    double v[3], u[3] = {1.5, -2, 4};
    tess__accum_identity(&a, v);
    assert_true(v[0] == 0 && v[1] == 0 && v[2] == 0);
    tess__accum_apply(&a, v, u);
    tess__accum_apply(&a, v, u);
    assert_true(v[0] == 3 && v[1] == -4 && v[2] == 8); /* element by element */
    a = acc(TESS_ACC_MIN, TESS_F32, sizeof(float));
    float f;
    tess__accum_identity(&a, &f);
    assert_true(isinf(f) && f > 0);
    float g = 2.5f;
    tess__accum_apply(&a, &f, &g);
    assert_true(f == 2.5f);
    a = acc(TESS_ACC_MAX, TESS_I32, sizeof(int32_t));
    int32_t i;
    tess__accum_identity(&a, &i);
    assert_int_equal(i, INT32_MIN);
    a = acc(TESS_ACC_SUM, TESS_I32, sizeof(int32_t));
    i = INT32_MAX;
    int32_t one = 1;
    tess__accum_apply(&a, &i, &one); /* wraps, no UB */
    assert_int_equal(i, INT32_MIN);
    a = acc(TESS_ACC_PRODUCT, TESS_I64, sizeof(int64_t));
    int64_t p, three = 3;
    tess__accum_identity(&a, &p);
    assert_int_equal(p, 1);
    tess__accum_apply(&a, &p, &three);
    tess__accum_merge(&a, &p, &three);
    assert_int_equal(p, 9);
    a = acc(TESS_ACC_REPLACE, TESS_ELEM_NONE, 8);
    int64_t r = 5, s = 7;
    tess__accum_merge(&a, &r, &s);
    assert_int_equal(r, 7); /* the later update wins */
}

static void test_accum_check(void **state)
{
    (void)state;
    const char *why = NULL;
    assert_int_equal(tess__accum_check(TESS_ACC_SUM, TESS_ELEM_NONE, 8, &why), TESS_ERR_INVAL);
    assert_non_null(why);
    assert_int_equal(tess__accum_check(TESS_ACC_SUM, TESS_F64, 12, &why), TESS_ERR_INVAL);
    assert_int_equal(tess__accum_check(TESS_ACC_SUM, TESS_F64, 0, &why), TESS_ERR_INVAL);
    assert_int_equal(tess__accum_check(TESS_ACC_USER, TESS_ELEM_NONE, 0, &why), TESS_ERR_INVAL);
    assert_int_equal(tess__accum_check(TESS_ACC_REPLACE, TESS_ELEM_NONE, 0, &why), TESS_OK);
    assert_int_equal(tess__accum_check(TESS_ACC_MAX, TESS_I64, 16, &why), TESS_OK);
}

/* A user accumulator: value = {sum, count}, viewed as the mean in field 0. */
typedef struct mean {
    double sum, count;
} mean;
static void mean_init(void *v, size_t n)
{
    (void)n;
    *(mean *)v = (mean){0, 0};
}
static void mean_acc(void *v, const void *u, size_t n)
{
    (void)n;
    ((mean *)v)->sum += ((const mean *)u)->sum;
    ((mean *)v)->count += ((const mean *)u)->count;
}
static void mean_view(void *out, const void *v, size_t n)
{
    (void)n;
    const mean *m = v;
    *(mean *)out = (mean){m->count ? m->sum / m->count : 0, m->count};
}

static void test_accum_user(void **state)
{
    (void)state;
    tess_accum_ops ops = {mean_init, mean_acc, mean_acc, mean_view};
    tess__accum a;
    tess__accum_setup(&a, TESS_ACC_USER, TESS_ELEM_NONE, sizeof(mean), &ops);
    mean v, u1 = {4, 1}, u2 = {8, 1}, out;
    tess__accum_identity(&a, &v);
    tess__accum_apply(&a, &v, &u1);
    tess__accum_merge(&a, &u1, &u2);
    assert_true(u1.sum == 12 && u1.count == 2);
    tess__accum_apply(&a, &v, &u2);
    tess__accum_view(&a, &out, &v);
    assert_true(out.sum == 6 && out.count == 2);
}

static void test_dense_fixed(void **state)
{
    (void)state;
    tess__accum a = acc(TESS_ACC_SUM, TESS_F64, 8);
    tess__partition *p = tess__partition_new_dense(100, 50, 8, &a);
    assert_non_null(p);
    double one = 1, got;
    uint64_t k = 120;
    const void *v;
    size_t len;
    assert_int_equal(tess__partition_get(p, &k, &v, &len), 0);
    assert_int_equal(tess__partition_update(p, &k, &one, 8), TESS_OK);
    assert_int_equal(tess__partition_update(p, &k, &one, 8), TESS_OK);
    assert_int_equal(tess__partition_get(p, &k, &v, &len), 1);
    memcpy(&got, v, 8);
    assert_true(got == 2);
    uint64_t keys[4] = {100, 149, 120, 100};
    double vals[4] = {1, 2, 3, 4};
    assert_int_equal(tess__partition_update_batch(p, keys, vals, 4), TESS_OK);
    assert_int_equal(tess__partition_size(p), 3);
    uint64_t bad = 150;
    assert_int_equal(tess__partition_update(p, &bad, &one, 8), TESS_ERR_INVAL);
    assert_int_equal(tess__partition_contains(p, &bad), 0);
    uint64_t count = 0;
    double *data = tess__partition_dense_data(p, &count);
    assert_int_equal(count, 50);
    assert_true(data[0] == 5 && data[20] == 5 && data[49] == 2 && data[1] == 0);
    tess__cursor c = {0, 0};
    const void *key;
    uint64_t seen[3], n = 0;
    while (tess__partition_next(p, &c, &key, &v, &len)) memcpy(&seen[n++], key, 8);
    assert_int_equal(n, 3);
    assert_true(seen[0] == 100 && seen[1] == 120 && seen[2] == 149); /* ascending */
    tess__partition_remove(p, &k);
    assert_int_equal(tess__partition_contains(p, &k), 0);
    assert_true(data[20] == 0); /* back to the identity */
    tess__partition_clear(p);
    assert_int_equal(tess__partition_size(p), 0);
    tess__partition_free(p);
    tess__partition_free(NULL);
}

/* Many overwrites of variable-length values force arena compaction. */
static void test_var_values(void **state, int dense)
{
    (void)state;
    tess__accum a = acc(TESS_ACC_REPLACE, TESS_ELEM_NONE, 0);
    tess__partition *p =
        dense ? tess__partition_new_dense(0, 64, 0, &a) : tess__partition_new_hash(8, 0, &a);
    char buf[128];
    for (int round = 0; round < 200; round++)
        for (uint64_t k = 0; k < 64; k++) {
            int n =
                snprintf(buf, sizeof buf, "key %llu round %d %.*s", (unsigned long long)k, round,
                         (int)(k % 50), "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
            assert_int_equal(tess__partition_put(p, &k, buf, (size_t)n), TESS_OK);
        }
    for (uint64_t k = 0; k < 64; k++) {
        const void *v;
        size_t len;
        int n = snprintf(buf, sizeof buf, "key %llu round %d %.*s", (unsigned long long)k, 199,
                         (int)(k % 50), "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
        assert_int_equal(tess__partition_get(p, &k, &v, &len), 1);
        assert_int_equal(len, (size_t)n);
        assert_memory_equal(v, buf, len);
    }
    assert_true(tess__partition_bytes(p) < 64 * 200 * 40); /* garbage was reclaimed */
    tess__partition_free(p);
}

static void test_dense_var(void **state) { test_var_values(state, 1); }
static void test_hash_var(void **state) { test_var_values(state, 0); }

/* 100k keys with interleaved removals, against a reference array. */
static void test_hash_growth(void **state)
{
    (void)state;
    enum { N = 100000 };
    tess__accum a = acc(TESS_ACC_SUM, TESS_I64, 8);
    tess__partition *p = tess__partition_new_hash(12, 8, &a);
    int64_t *ref = calloc(N, sizeof *ref);
    char *present = calloc(N, 1);
    uint64_t size = 0;
    for (uint64_t i = 0; i < 3 * N; i++) {
        uint64_t k = (i * 2654435761u) % N;
        uint8_t key[12] = {0};
        memcpy(key, &k, 8);
        key[11] = (uint8_t)(k * 7);
        int64_t one = (int64_t)(i % 5);
        if (i % 7 == 3) {
            tess__partition_remove(p, key);
            size -= present[k];
            present[k] = 0;
            ref[k] = 0;
        } else {
            assert_int_equal(tess__partition_update(p, key, &one, 8), TESS_OK);
            size += !present[k];
            present[k] = 1;
            ref[k] += one;
        }
    }
    assert_int_equal(tess__partition_size(p), size);
    for (uint64_t k = 0; k < N; k++) {
        uint8_t key[12] = {0};
        memcpy(key, &k, 8);
        key[11] = (uint8_t)(k * 7);
        const void *v;
        size_t len;
        int found = tess__partition_get(p, key, &v, &len);
        assert_int_equal(found, present[k]);
        if (found) assert_memory_equal(v, &ref[k], 8);
    }
    tess__cursor c = {0, 0};
    const void *key, *v;
    size_t len, n = 0;
    while (tess__partition_next(p, &c, &key, &v, &len)) n++;
    assert_int_equal(n, size);
    free(ref);
    free(present);
    tess__partition_free(p);
}

static void test_batch_equals_loop(void **state)
{
    (void)state;
    tess__accum a = acc(TESS_ACC_MAX, TESS_I64, 8);
    tess__partition *x = tess__partition_new_dense(0, 1000, 8, &a);
    tess__partition *y = tess__partition_new_dense(0, 1000, 8, &a);
    uint64_t keys[5000];
    int64_t vals[5000];
    for (int i = 0; i < 5000; i++) {
        keys[i] = (uint64_t)(i * 7919) % 1000;
        vals[i] = (i * 31) % 977 - 400;
        assert_int_equal(tess__partition_update(y, &keys[i], &vals[i], 8), TESS_OK);
    }
    assert_int_equal(tess__partition_update_batch(x, keys, vals, 5000), TESS_OK);
    uint64_t n1, n2;
    assert_memory_equal(tess__partition_dense_data(x, &n1), tess__partition_dense_data(y, &n2),
                        8000);
    assert_int_equal(tess__partition_size(x), tess__partition_size(y));
    tess__partition_free(x);
    tess__partition_free(y);
}

TEST_MAIN(cmocka_unit_test(test_accum_builtins), cmocka_unit_test(test_accum_check),
          cmocka_unit_test(test_accum_user), cmocka_unit_test(test_dense_fixed),
          cmocka_unit_test(test_dense_var), cmocka_unit_test(test_hash_var),
          cmocka_unit_test(test_hash_growth), cmocka_unit_test(test_batch_equals_loop))
